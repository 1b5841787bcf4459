"""pertinax-abi: the mpi4py wheel (its MPI.mpich build, unchanged) on
pertinax's libmpi.so.12. Prints "OK py rank=R" when every check held."""
from array import array

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
assert MPI.Get_library_version().startswith("pertinax"), MPI.Get_library_version()

# Python objects (pickled): every collective mpi4py builds on p2p and
# the blocking collectives.
assert comm.allreduce(rank) == size * (size - 1) // 2
assert comm.bcast({"root": 42} if rank == 0 else None, root=0) == {"root": 42}
assert comm.allgather(rank * 2) == [2 * r for r in range(size)]
assert comm.gather(rank, root=0) == (list(range(size)) if rank == 0 else None)
assert comm.scatter([r * 3 for r in range(size)] if rank == 0 else None, root=0) == rank * 3
assert comm.alltoall([rank * 10 + r for r in range(size)]) == [r * 10 + rank for r in range(size)]
nxt, prv = (rank + 1) % size, (rank - 1) % size
assert comm.sendrecv(("hello", rank), dest=nxt, source=prv) == ("hello", prv)
req = comm.isend(list(range(1000)), dest=nxt, tag=5)
assert comm.recv(source=prv, tag=5) == list(range(1000))
req.wait()

# Buffers.
x = array("d", [rank + 1.0] * 4)
y = array("d", [0.0] * 4)
comm.Allreduce(x, y, op=MPI.SUM)
assert list(y) == [size * (size + 1) / 2.0] * 4
big = bytearray(range(256)) * 4096
got = bytearray(len(big))
r = comm.Irecv(got, source=prv, tag=6)
comm.Send(big, dest=nxt, tag=6)
st = MPI.Status()
r.Wait(st)
assert got == big and st.Get_source() == prv and st.Get_count(MPI.BYTE) == len(big)

# Communicators and errors.
half = comm.Split(rank % 2, rank)
assert half.allreduce(1) == len(range(rank % 2, size, 2))
half.Free()
try:
    comm.Send(bytearray(4), dest=size + 3)
    raise AssertionError("a send to a rank past the size succeeded")
except MPI.Exception as e:
    assert e.Get_error_class() == MPI.ERR_RANK, e.Get_error_class()

comm.Barrier()
print(f"OK py rank={rank}", flush=True)
