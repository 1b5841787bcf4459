"""pertinax-abi: montecarlo.c in Python through the mpi4py wheel, run by
c_abi/resilient.rs under `pertinax run --resilient` with ranks killed: the same
draws (splitmix64 seeded by (rank, round), integers only), one
Allreduce per round on a duplicate of COMM_WORLD, the ring of Sendrecv
and an Allreduce over Split by parity, and the same line per rank that
ends: "OK montecarlo rank=R size=S total=T contrib=C0,.. ring=V split=X"
(V: the left neighbour's rank, -1 for MPIX_ERR_PROC_FAILED, -2 for a
receive skipped by the policy)."""
from array import array

from mpi4py import MPI

ROUNDS, SAMPLES = 8, 2000
M = (1 << 64) - 1


def hits(rank, rnd):
    s = (rank << 32) | rnd
    h = 0
    for _ in range(SAMPLES):
        xy = []
        for _ in range(2):
            s = (s + 0x9E3779B97F4A7C15) & M
            z = s
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
            xy.append((z ^ (z >> 31)) >> 33)
        if xy[0] * xy[0] + xy[1] * xy[1] < 1 << 62:
            h += 1
    return h


comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
rounds = array("i", [ROUNDS])
comm.Bcast([rounds, MPI.INT], root=0)
dup = comm.Dup()
total, contrib = 0, []
for rnd in range(rounds[0]):
    mine, out = array("q", [hits(rank, rnd), 1]), array("q", [0, 0])
    dup.Allreduce([mine, MPI.INT64_T], [out, MPI.INT64_T], op=MPI.SUM)
    total += out[0]
    contrib.append(str(out[1]))
right, left = (rank + 1) % size, (rank + size - 1) % size
got, st = array("i", [-3]), MPI.Status()
try:
    comm.Sendrecv([array("i", [rank]), MPI.INT], right, 7, [got, MPI.INT], left, 7, st)
    ring = -2 if st.Get_source() == MPI.PROC_NULL else got[0]
except MPI.Exception as e:
    # MPIX_ERR_PROC_FAILED in MPICH's ABI (mpi4py's MPI.ERR_PROC_FAILED
    # is a stand-in there).
    if e.Get_error_class() != 101:
        raise
    ring = -1
half = comm.Split(rank % 2, rank)
split = array("i", [0])
half.Allreduce([array("i", [rank]), MPI.INT], [split, MPI.INT], op=MPI.SUM)
half.Free()
assert dup.Get_size() == size
dup.Free()
print(
    f"OK montecarlo rank={rank} size={size} total={total} "
    f"contrib={','.join(contrib)} ring={ring} split={split[0]}",
    flush=True,
)
