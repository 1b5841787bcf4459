/* pertinax-abi: an unchanged C MPI program (built with MPICH's mpicc)
 * checking graph and distributed-graph topologies (create, the queries,
 * map, Topo_test, MPI_Dist_graph_create's gathering of edges, weights,
 * a dup keeping the topology)
 * and the neighbourhood collectives (allgather, allgatherv, alltoall,
 * alltoallv, alltoallw, blocking and non-blocking, a _c form) on a
 * periodic ring, a non-periodic 2-D grid, a graph and a distributed
 * graph, against neighbour lists computed here independently (MPI's
 * order; a process that is a neighbour twice gets its blocks in order,
 * as MPICH does; MPI_PROC_NULL leaves its block untouched), at any size
 * from 2. Prints "OK neighbor rank=R" when every check held. */
#include "check.h"
#include <string.h>

#define MAXN 16

/* A topology and how to list any rank's neighbours. */
enum kind { RING, GRID, GRAPH, DIST };
static int gdims[2];

/* The sources (`in`) or destinations of `r`; their number. */
static int nbrs(enum kind k, int r, int in, int *out) {
    int n = 0;
    switch (k) {
    case RING: /* periodic 1-D over every rank */
        out[n++] = (r - 1 + size) % size;
        out[n++] = (r + 1) % size;
        break;
    case GRID: { /* non-periodic gdims[0] x gdims[1], row-major */
        int x = r / gdims[1], y = r % gdims[1];
        out[n++] = x > 0 ? r - gdims[1] : MPI_PROC_NULL;
        out[n++] = x < gdims[0] - 1 ? r + gdims[1] : MPI_PROC_NULL;
        out[n++] = y > 0 ? r - 1 : MPI_PROC_NULL;
        out[n++] = y < gdims[1] - 1 ? r + 1 : MPI_PROC_NULL;
        break;
    }
    case GRAPH: /* symmetric: 0 with every node, r with r-1 and r+1 */
        if (r == 0) {
            for (int i = 1; i < size; i++)
                out[n++] = i;
        } else {
            out[n++] = 0;
            if (r > 1)
                out[n++] = r - 1;
            if (r < size - 1)
                out[n++] = r + 1;
        }
        break;
    case DIST: /* r -> r+1 and r -> r+2 */
        if (in) {
            out[n++] = (r - 1 + size) % size;
            out[n++] = (r - 2 + 2 * size) % size;
        } else {
            out[n++] = (r + 1) % size;
            out[n++] = (r + 2) % size;
        }
        break;
    }
    return n;
}

/* The value of element `e` of the block `p` sends to destination index k. */
static int val(int p, int k, int e) { return 100000 * (p + 1) + 100 * k + e; }

/* Which block of `p`'s sends lands in my receive slot j from p: the m-th
 * block p sends to me, m the number of my earlier slots from p. */
static int block_from(enum kind k, int j, const int *srcs) {
    int p = srcs[j], m = 0;
    for (int i = 0; i < j; i++)
        m += srcs[i] == p;
    int d[2 * MAXN];
    int nd = nbrs(k, p, 0, d);
    for (int i = 0; i < nd; i++)
        if (d[i] == rank && m-- == 0)
            return i;
    CHECK(0);
    return -1;
}

static void collectives(MPI_Comm c, enum kind k) {
    int srcs[2 * MAXN], dsts[2 * MAXN];
    int ni = nbrs(k, rank, 1, srcs), no = nbrs(k, rank, 0, dsts);
    int sbuf[4 * MAXN * 8], rbuf[4 * MAXN * 8];
    for (int nb = 0; nb < 2; nb++) {
        /* allgather of 2 ints */
        int mine[2] = {val(rank, 0, 0), val(rank, 0, 1)};
        for (int i = 0; i < 2 * ni; i++)
            rbuf[i] = -1;
        if (nb) {
            MPI_Request r;
            CHECK(MPI_Ineighbor_allgather(mine, 2, MPI_INT, rbuf, 2, MPI_INT, c, &r) == MPI_SUCCESS);
            CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        } else {
            CHECK(MPI_Neighbor_allgather(mine, 2, MPI_INT, rbuf, 2, MPI_INT, c) == MPI_SUCCESS);
        }
        for (int j = 0; j < ni; j++)
            for (int e = 0; e < 2; e++)
                CHECK(rbuf[2 * j + e] == (srcs[j] == MPI_PROC_NULL ? -1 : val(srcs[j], 0, e)));

        /* alltoall of 3 ints */
        for (int i = 0; i < no; i++)
            for (int e = 0; e < 3; e++)
                sbuf[3 * i + e] = val(rank, i, e);
        for (int i = 0; i < 3 * ni; i++)
            rbuf[i] = -1;
        if (nb) {
            MPI_Request r;
            CHECK(MPI_Ineighbor_alltoall(sbuf, 3, MPI_INT, rbuf, 3, MPI_INT, c, &r) == MPI_SUCCESS);
            CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        } else {
            CHECK(MPI_Neighbor_alltoall(sbuf, 3, MPI_INT, rbuf, 3, MPI_INT, c) == MPI_SUCCESS);
        }
        for (int j = 0; j < ni; j++)
            for (int e = 0; e < 3; e++)
                CHECK(rbuf[3 * j + e] ==
                      (srcs[j] == MPI_PROC_NULL ? -1 : val(srcs[j], block_from(k, j, srcs), e)));

        /* alltoallv: block i holds i+1 ints, one int of gap between */
        int sc[2 * MAXN], sd[2 * MAXN], rc[2 * MAXN], rd[2 * MAXN], at = 0;
        for (int i = 0; i < no; i++) {
            sc[i] = i + 1;
            sd[i] = at;
            for (int e = 0; e <= i; e++)
                sbuf[at + e] = val(rank, i, e);
            at += i + 2;
        }
        at = 0;
        for (int j = 0; j < ni; j++) {
            rc[j] = srcs[j] == MPI_PROC_NULL ? 0 : block_from(k, j, srcs) + 1;
            rd[j] = at;
            at += rc[j] + 1;
        }
        for (int i = 0; i < at; i++)
            rbuf[i] = -1;
        if (nb) {
            MPI_Request r;
            CHECK(MPI_Ineighbor_alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, c, &r) == MPI_SUCCESS);
            CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        } else {
            CHECK(MPI_Neighbor_alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, c) == MPI_SUCCESS);
        }
        for (int j = 0; j < ni; j++) {
            for (int e = 0; e < rc[j]; e++)
                CHECK(rbuf[rd[j] + e] == val(srcs[j], block_from(k, j, srcs), e));
            CHECK(rbuf[rd[j] + rc[j]] == -1); /* the gap */
        }
    }

    /* allgatherv into reversed slots, with the _c allgather beside it */
    int mine = val(rank, 0, 0), rc[2 * MAXN], rd[2 * MAXN];
    for (int j = 0; j < ni; j++) {
        rc[j] = 1;
        rd[j] = ni - 1 - j;
        rbuf[j] = -1;
    }
    CHECK(MPI_Neighbor_allgatherv(&mine, 1, MPI_INT, rbuf, rc, rd, MPI_INT, c) == MPI_SUCCESS);
    for (int j = 0; j < ni; j++)
        CHECK(rbuf[ni - 1 - j] == (srcs[j] == MPI_PROC_NULL ? -1 : val(srcs[j], 0, 0)));
    for (int j = 0; j < ni; j++)
        rbuf[j] = -1;
    CHECK(MPI_Neighbor_allgather_c(&mine, 1, MPI_INT, rbuf, 1, MPI_INT, c) == MPI_SUCCESS);
    for (int j = 0; j < ni; j++)
        CHECK(rbuf[j] == (srcs[j] == MPI_PROC_NULL ? -1 : val(srcs[j], 0, 0)));

    /* alltoallw: one MPI_INT per neighbour at byte displacements 8 apart */
    int scw[2 * MAXN], rcw[2 * MAXN];
    MPI_Aint sdw[2 * MAXN], rdw[2 * MAXN];
    MPI_Datatype st[2 * MAXN], rt[2 * MAXN];
    for (int i = 0; i < no; i++) {
        scw[i] = 1;
        sdw[i] = 8 * i;
        st[i] = MPI_INT;
        sbuf[2 * i] = val(rank, i, 0);
    }
    for (int j = 0; j < ni; j++) {
        rcw[j] = 1;
        rdw[j] = 8 * j;
        rt[j] = MPI_INT;
        rbuf[2 * j] = -1;
    }
    CHECK(MPI_Neighbor_alltoallw(sbuf, scw, sdw, st, rbuf, rcw, rdw, rt, c) == MPI_SUCCESS);
    for (int j = 0; j < ni; j++)
        CHECK(rbuf[2 * j] == (srcs[j] == MPI_PROC_NULL ? -1 : val(srcs[j], block_from(k, j, srcs), 0)));
}

static int topo(MPI_Comm c) {
    int t = -5;
    CHECK(MPI_Topo_test(c, &t) == MPI_SUCCESS);
    return t;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= MAXN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int ec;

    /* Not a topology: the neighbourhood collectives refuse it. */
    int x = 0, y[4];
    ec = MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Error_class(ec, &ec);
    CHECK(ec == MPI_ERR_TOPOLOGY);

    /* Ring. */
    MPI_Comm ring;
    int dims1[1] = {size}, per1[1] = {1};
    CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims1, per1, 0, &ring) == MPI_SUCCESS);
    collectives(ring, RING);
    /* A dup keeps the topology. */
    MPI_Comm rdup;
    CHECK(MPI_Comm_dup(ring, &rdup) == MPI_SUCCESS && topo(rdup) == MPI_CART);
    MPI_Comm_free(&ring);
    collectives(rdup, RING);
    MPI_Comm_free(&rdup);

    /* Non-periodic grid. */
    MPI_Comm grid;
    int per2[2] = {0, 0};
    gdims[0] = gdims[1] = 0;
    CHECK(MPI_Dims_create(size, 2, gdims) == MPI_SUCCESS);
    CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, gdims, per2, 0, &grid) == MPI_SUCCESS);
    collectives(grid, GRID);
    MPI_Comm_free(&grid);

    /* Graph: every node's list from nbrs(GRAPH). */
    int index[MAXN], edges[MAXN * MAXN], ne = 0;
    for (int r = 0; r < size; r++) {
        ne += nbrs(GRAPH, r, 0, edges + ne);
        index[r] = ne;
    }
    MPI_Comm g;
    CHECK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 1, &g) == MPI_SUCCESS);
    CHECK(topo(g) == MPI_GRAPH);
    int nn = -1, nedges = -1;
    CHECK(MPI_Graphdims_get(g, &nn, &nedges) == MPI_SUCCESS);
    CHECK(nn == size && nedges == ne);
    int gi[MAXN], ge[MAXN * MAXN];
    CHECK(MPI_Graph_get(g, size, ne, gi, ge) == MPI_SUCCESS);
    CHECK(memcmp(gi, index, size * sizeof(int)) == 0 && memcmp(ge, edges, ne * sizeof(int)) == 0);
    for (int r = 0; r < size; r++) {
        int want[MAXN], got[MAXN], cnt = -1;
        int n = nbrs(GRAPH, r, 0, want);
        CHECK(MPI_Graph_neighbors_count(g, r, &cnt) == MPI_SUCCESS && cnt == n);
        CHECK(MPI_Graph_neighbors(g, r, MAXN, got) == MPI_SUCCESS);
        CHECK(memcmp(got, want, n * sizeof(int)) == 0);
    }
    int nr = -5;
    CHECK(MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &nr) == MPI_SUCCESS && nr == rank);
    collectives(g, GRAPH);
    ec = MPI_Dist_graph_neighbors_count(g, &nn, &nn, &nn);
    MPI_Error_class(ec, &ec);
    CHECK(ec == MPI_ERR_TOPOLOGY);
    MPI_Comm_free(&g);

    /* A graph of the first size-1 ranks: the last one is left out. */
    index[0] = 0;
    for (int r = 1; r < size - 1; r++)
        index[r] = 0;
    CHECK(MPI_Graph_map(MPI_COMM_WORLD, size - 1, index, edges, &nr) == MPI_SUCCESS);
    CHECK(nr == (rank < size - 1 ? rank : MPI_UNDEFINED));
    CHECK(MPI_Graph_create(MPI_COMM_WORLD, size - 1, index, edges, 0, &g) == MPI_SUCCESS);
    CHECK((g == MPI_COMM_NULL) == (rank == size - 1));
    if (g != MPI_COMM_NULL) {
        int s = -1;
        MPI_Comm_size(g, &s);
        CHECK(s == size - 1 && topo(g) == MPI_GRAPH);
        /* No neighbours: nothing moves, the call still completes. */
        CHECK(MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, g) == MPI_SUCCESS);
        MPI_Comm_free(&g);
    }

    /* Distributed graph, adjacent, weighted. */
    int s[2], d[2], sw[2], dw[2];
    nbrs(DIST, rank, 1, s);
    nbrs(DIST, rank, 0, d);
    for (int i = 0; i < 2; i++) {
        sw[i] = 10 * s[i] + rank;
        dw[i] = 10 * rank + d[i];
    }
    MPI_Comm dg;
    CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, s, sw, 2, d, dw, MPI_INFO_NULL, 0,
                                         &dg) == MPI_SUCCESS);
    CHECK(topo(dg) == MPI_DIST_GRAPH);
    int indeg = -1, outdeg = -1, weighted = -1;
    CHECK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted) == MPI_SUCCESS);
    CHECK(indeg == 2 && outdeg == 2 && weighted == 1);
    int gs[2], gsw[2], gd[2], gdw[2];
    CHECK(MPI_Dist_graph_neighbors(dg, 2, gs, gsw, 2, gd, gdw) == MPI_SUCCESS);
    CHECK(memcmp(gs, s, sizeof s) == 0 && memcmp(gd, d, sizeof d) == 0);
    CHECK(memcmp(gsw, sw, sizeof sw) == 0 && memcmp(gdw, dw, sizeof dw) == 0);
    collectives(dg, DIST);
    MPI_Comm ddup;
    CHECK(MPI_Comm_dup(dg, &ddup) == MPI_SUCCESS && topo(ddup) == MPI_DIST_GRAPH);
    CHECK(MPI_Dist_graph_neighbors(ddup, 2, gs, gsw, 2, gd, gdw) == MPI_SUCCESS);
    CHECK(memcmp(gs, s, sizeof s) == 0 && memcmp(gdw, dw, sizeof dw) == 0);
    MPI_Comm_free(&ddup);
    MPI_Comm_free(&dg);

    /* Distributed graph from edges all named by rank 0 (r -> r+1, r -> r+2,
     * weight 100 r + destination); the others name none. */
    int srcs[MAXN], degs[MAXN], dsts[2 * MAXN], wts[2 * MAXN], n0 = 0;
    if (rank == 0) {
        for (int r = 0; r < size; r++) {
            srcs[r] = r;
            degs[r] = 2;
            nbrs(DIST, r, 0, dsts + 2 * r);
            wts[2 * r] = 100 * r + dsts[2 * r];
            wts[2 * r + 1] = 100 * r + dsts[2 * r + 1];
        }
        n0 = size;
    }
    CHECK(MPI_Dist_graph_create(MPI_COMM_WORLD, n0, srcs, degs, dsts, wts, MPI_INFO_NULL, 0,
                                &dg) == MPI_SUCCESS);
    CHECK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted) == MPI_SUCCESS);
    CHECK(indeg == 2 && outdeg == 2 && weighted == 1);
    CHECK(MPI_Dist_graph_neighbors(dg, 2, gs, gsw, 2, gd, gdw) == MPI_SUCCESS);
    /* Gathered in the order rank 0 named them: by source rank. */
    for (int i = 0; i < 2; i++) {
        CHECK(gd[i] == d[i] && gdw[i] == 100 * rank + d[i]);
        CHECK(gsw[i] == 100 * gs[i] + rank);
        CHECK(gs[i] == s[0] || gs[i] == s[1]);
    }
    CHECK(gs[0] <= gs[1]);
    MPI_Comm_free(&dg);

    /* Unweighted, each rank naming its own out-edges. */
    CHECK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, (int[]){2}, d, MPI_UNWEIGHTED,
                                MPI_INFO_NULL, 0, &dg) == MPI_SUCCESS);
    CHECK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted) == MPI_SUCCESS);
    CHECK(indeg == 2 && outdeg == 2 && weighted == 0);
    CHECK(MPI_Dist_graph_neighbors(dg, 2, gs, MPI_UNWEIGHTED, 2, gd, MPI_UNWEIGHTED) ==
          MPI_SUCCESS);
    CHECK(memcmp(gd, d, sizeof d) == 0);
    CHECK(gs[0] <= gs[1] && (gs[0] == s[0] || gs[0] == s[1]));
    MPI_Comm_free(&dg);

    MPI_Barrier(MPI_COMM_WORLD);
    printf("OK neighbor rank=%d\n", rank);
    MPI_Finalize();
    return 0;
}
