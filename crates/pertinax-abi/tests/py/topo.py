"""pertinax-abi: the mpi4py wheel (its MPI.mpich build, unchanged) with
topologies, neighbourhood collectives (mpi4py calls the `_c` forms) and
intercommunicators. Prints "OK py rank=R" when every check held."""
from array import array

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
prv, nxt = (rank - 1) % size, (rank + 1) % size

# A periodic ring: objects and buffers from both neighbours.
ring = comm.Create_cart([size], periods=[True])
assert ring.topology == MPI.CART
assert ring.Get_topo() == ([size], [True], [rank]), ring.Get_topo()
assert ring.neighbor_allgather(rank) == [prv, nxt]
got = array("i", [-1, -1])
ring.Neighbor_allgather(array("i", [rank]), got)
assert list(got) == [prv, nxt], got
got = array("i", [-1, -1])
req = ring.Ineighbor_alltoall(array("i", [10 * rank, 10 * rank + 1]), got)
req.Wait()
if size > 2:
    # From the previous rank its block for its destination, and back.
    assert list(got) == [10 * prv + 1, 10 * nxt], got

# A distributed graph: rank -> rank + 1.
dg = comm.Create_dist_graph_adjacent([prv], [nxt])
assert dg.topology == MPI.DIST_GRAPH
assert dg.Get_dist_neighbors_count() == (1, 1, False)
assert dg.Get_dist_neighbors()[:2] == ([prv], [nxt])
assert dg.neighbor_alltoall([("to", nxt)]) == [("to", rank)]

# A graph: everyone's neighbours are the others (not at 1 rank, where
# mpi4py reads the index [0] as a graph of no node).
if size >= 2:
    index, edges = [], []
    for r in range(size):
        edges += [q for q in range(size) if q != r]
        index.append(len(edges))
    g = comm.Create_graph(index, edges)
    assert g.topology == MPI.GRAPH
    assert g.Get_topo() == (index, edges), g.Get_topo()
    assert sorted(g.neighbor_allgather(rank)) == [q for q in range(size) if q != rank]

# Intercommunicators between the even and the odd ranks.
if size >= 2:
    half = comm.Split(rank % 2, rank)
    ic = half.Create_intercomm(0, comm, 1 - rank % 2, 5)
    assert ic.Is_inter() and ic.Get_remote_size() == size // 2 + (size % 2 if rank % 2 else 0)
    others = [r for r in range(size) if r % 2 != rank % 2]
    assert ic.allreduce(rank) == sum(others)
    buf = array("i", [-1] * len(others))
    ic.Allgather(array("i", [rank]), buf)
    assert list(buf) == others, buf
    merged = ic.Merge(rank % 2 == 1)
    assert merged.Get_size() == size
    merged.Free()
    ic.Free()
    half.Free()

comm.Barrier()
print(f"OK py rank={rank}", flush=True)
