/* pertinax-abi: an unchanged C MPI program checking
 * - MPI_Alltoallw, MPI_Ialltoallw, MPI_Alltoallw_init and MPI_Alltoallw_c
 *   with a datatype per peer (vector, indexed, MPI_INT), and with
 *   MPI_IN_PLACE;
 * - MPI_Neighbor_alltoallw, MPI_Ineighbor_alltoallw, MPI_Neighbor_alltoallw_init
 *   (and _c) with derived types per neighbour, and the persistent
 *   MPI_Neighbor_allgather_init, _allgatherv_init, _alltoall_init,
 *   _alltoallv_init, on a distributed graph (sources r-1, r-2; destinations
 *   r+1, r+2);
 * - MPI_Type_create_darray (and _c): block, cyclic, none, default and
 *   explicit dargs, C and Fortran order, against layouts computed by hand;
 * - MPI_Op_create_c: a commutative and a non-commutative user operation
 *   with the large-count callback;
 * - the large counts of a _c constructor past int in
 *   MPI_Type_get_envelope_c/_get_contents_c (a darray's and a subarray's
 *   split as MPI says), and the names of MPI_DATATYPE_NULL and of a
 *   renamed predefined type.
 * Exact values everywhere. Runs at any size; prints "OK wcoll rank=R". */
#include "check.h"
#include <string.h>

#define W 8 /* ints per peer block */

static MPI_Datatype vec2, idx2; /* 2 ints: at 0 and 2; at 0 and 3 */

/* Sender r's int k of its block for peer j. */
static int val(int r, int j, int k, int round) { return 100000 * round + 1000 * r + 10 * j + k; }

/* The arguments of an alltoallw: to peer j, vec2 at block j for even j,
 * 2 MPI_INTs from int 1 of block j for odd j; from peer i, 2 MPI_INTs at
 * block i for even i, idx2 at block i for odd i. */
static void w_args(int *sc, int *sd, MPI_Datatype *st, int *rc, int *rd, MPI_Datatype *rt) {
    for (int j = 0; j < size; j++) {
        int odd = j % 2;
        sc[j] = odd ? 2 : 1;
        sd[j] = (int)sizeof(int) * (W * j + odd);
        st[j] = odd ? MPI_INT : vec2;
        rc[j] = odd ? 1 : 2;
        rd[j] = (int)sizeof(int) * W * j;
        rt[j] = odd ? idx2 : MPI_INT;
    }
}

static void fill(int *s, int round) {
    for (int j = 0; j < size; j++)
        for (int k = 0; k < W; k++)
            s[W * j + k] = val(rank, j, k, round);
}

/* What an alltoallw with w_args leaves in rbuf (initially -1). */
static void check_w(const int *r, int round) {
    int me_odd = rank % 2;
    for (int i = 0; i < size; i++) {
        /* what source i sent: its block for me */
        int a = val(i, rank, me_odd ? 1 : 0, round), b = val(i, rank, 2, round);
        int want[W];
        for (int k = 0; k < W; k++)
            want[k] = -1;
        if (i % 2) {
            want[0] = a;
            want[3] = b;
        } else {
            want[0] = a;
            want[1] = b;
        }
        for (int k = 0; k < W; k++)
            CHECK(r[W * i + k] == want[k]);
    }
}

static void alltoallw(void) {
    int n = size;
    int *s = malloc(sizeof(int) * W * n), *r = malloc(sizeof(int) * W * n);
    int *sc = malloc(sizeof(int) * n), *sd = malloc(sizeof(int) * n);
    int *rc = malloc(sizeof(int) * n), *rd = malloc(sizeof(int) * n);
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * n), *rt = malloc(sizeof(MPI_Datatype) * n);
    w_args(sc, sd, st, rc, rd, rt);

    fill(s, 0);
    memset(r, 0xff, sizeof(int) * W * n);
    CHECK(MPI_Alltoallw(s, sc, sd, st, r, rc, rd, rt, MPI_COMM_WORLD) == MPI_SUCCESS);
    check_w(r, 0);

    MPI_Request q;
    fill(s, 1);
    memset(r, 0xff, sizeof(int) * W * n);
    CHECK(MPI_Ialltoallw(s, sc, sd, st, r, rc, rd, rt, MPI_COMM_WORLD, &q) == MPI_SUCCESS);
    CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    check_w(r, 1);

    /* Persistent: the arrays are the init's; two rounds. */
    int *sc2 = malloc(sizeof(int) * n);
    memcpy(sc2, sc, sizeof(int) * n);
    CHECK(MPI_Alltoallw_init(s, sc2, sd, st, r, rc, rd, rt, MPI_COMM_WORLD, MPI_INFO_NULL, &q) == MPI_SUCCESS);
    memset(sc2, 0, sizeof(int) * n);
    for (int round = 2; round < 4; round++) {
        fill(s, round);
        memset(r, 0xff, sizeof(int) * W * n);
        CHECK(MPI_Start(&q) == MPI_SUCCESS);
        CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        check_w(r, round);
    }
    CHECK(MPI_Request_free(&q) == MPI_SUCCESS);
    free(sc2);

    /* The large-count form. */
    MPI_Count *csc = malloc(sizeof(MPI_Count) * n), *crc = malloc(sizeof(MPI_Count) * n);
    MPI_Aint *csd = malloc(sizeof(MPI_Aint) * n), *crd = malloc(sizeof(MPI_Aint) * n);
    for (int j = 0; j < n; j++) {
        csc[j] = sc[j];
        crc[j] = rc[j];
        csd[j] = sd[j];
        crd[j] = rd[j];
    }
    fill(s, 4);
    memset(r, 0xff, sizeof(int) * W * n);
    CHECK(MPI_Alltoallw_c(s, csc, csd, st, r, crc, crd, rt, MPI_COMM_WORLD) == MPI_SUCCESS);
    check_w(r, 4);
    fill(s, 5);
    memset(r, 0xff, sizeof(int) * W * n);
    CHECK(MPI_Ialltoallw_c(s, csc, csd, st, r, crc, crd, rt, MPI_COMM_WORLD, &q) == MPI_SUCCESS);
    CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    check_w(r, 5);

    /* MPI_IN_PLACE: block i of the receive buffer, as vec2, goes to i
     * and is replaced by what i sends; ints 1, 3.. stay. */
    for (int j = 0; j < n; j++) {
        rc[j] = 1;
        rt[j] = vec2;
    }
    fill(r, 6);
    CHECK(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, r, rc, rd, rt, MPI_COMM_WORLD) == MPI_SUCCESS);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < W; k++) {
            int want = (k == 0 || k == 2) ? val(i, rank, k, 6) : val(rank, i, k, 6);
            CHECK(r[W * i + k] == want);
        }
    fill(r, 7);
    CHECK(MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, r, rc, rd, rt, MPI_COMM_WORLD, &q) == MPI_SUCCESS);
    CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < W; k++) {
            int want = (k == 0 || k == 2) ? val(i, rank, k, 7) : val(rank, i, k, 7);
            CHECK(r[W * i + k] == want);
        }

    /* Zero counts move nothing, whatever the type. */
    for (int j = 0; j < n; j++) {
        sc[j] = rc[j] = 0;
        st[j] = rt[j] = MPI_DATATYPE_NULL;
    }
    memset(r, 0xff, sizeof(int) * W * n);
    CHECK(MPI_Alltoallw(s, sc, sd, st, r, rc, rd, rt, MPI_COMM_WORLD) == MPI_SUCCESS);
    for (int k = 0; k < W * n; k++)
        CHECK(r[k] == -1);

    free(s), free(r), free(sc), free(sd), free(rc), free(rd), free(st), free(rt);
    free(csc), free(crc), free(csd), free(crd);
}

/* Neighbourhood: sources r-1, r-2, destinations r+1, r+2 (mod size):
 * block k sent to destination k is block k received from source k. */
static void neighbours(void) {
    int src[2] = {(rank - 1 + size) % size, (rank - 2 + 2 * size) % size};
    int dst[2] = {(rank + 1) % size, (rank + 2) % size};
    MPI_Comm g;
    CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst,
                                         MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g) == MPI_SUCCESS);
    /* Send block 0: vec2 at block 0; block 1: 2 ints from int 1 of block
     * 1. Receive block 0: idx2 at block 0; block 1: 2 ints at block 1. */
    int sc[2] = {1, 2}, rc[2] = {1, 2};
    MPI_Aint sd[2] = {0, sizeof(int) * (W + 1)}, rd[2] = {0, sizeof(int) * W};
    MPI_Datatype st[2] = {vec2, MPI_INT}, rt[2] = {idx2, MPI_INT};
    MPI_Count csc[2] = {1, 2}, crc[2] = {1, 2};
    int s[2 * W], r[2 * W];
    MPI_Request q;
    for (int round = 0; round < 6; round++) {
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < W; k++)
                s[W * j + k] = val(rank, j, k, round);
        memset(r, 0xff, sizeof r);
        switch (round) {
        case 0:
            CHECK(MPI_Neighbor_alltoallw(s, sc, sd, st, r, rc, rd, rt, g) == MPI_SUCCESS);
            break;
        case 1:
            CHECK(MPI_Ineighbor_alltoallw(s, sc, sd, st, r, rc, rd, rt, g, &q) == MPI_SUCCESS);
            CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS);
            break;
        case 2:
            CHECK(MPI_Neighbor_alltoallw_c(s, csc, sd, st, r, crc, rd, rt, g) == MPI_SUCCESS);
            break;
        case 3:
            CHECK(MPI_Neighbor_alltoallw_init(s, sc, sd, st, r, rc, rd, rt, g, MPI_INFO_NULL, &q) == MPI_SUCCESS);
            /* fall through: start it in this round and the next */
        case 4:
            CHECK(MPI_Start(&q) == MPI_SUCCESS);
            CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS);
            if (round == 4)
                CHECK(MPI_Request_free(&q) == MPI_SUCCESS);
            break;
        case 5:
            CHECK(MPI_Neighbor_alltoallw_init_c(s, csc, sd, st, r, crc, rd, rt, g, MPI_INFO_NULL, &q) == MPI_SUCCESS);
            CHECK(MPI_Start(&q) == MPI_SUCCESS);
            CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS);
            CHECK(MPI_Request_free(&q) == MPI_SUCCESS);
            break;
        }
        for (int k = 0; k < 2 * W; k++) {
            int want = -1;
            if (k == 0)
                want = val(src[0], 0, 0, round);
            if (k == 3)
                want = val(src[0], 0, 2, round);
            if (k == W)
                want = val(src[1], 1, 1, round);
            if (k == W + 1)
                want = val(src[1], 1, 2, round);
            CHECK(r[k] == want);
        }
    }

    /* The persistent forms of the other four, two starts each. */
    int one, two[2], got[4];
    int counts[2] = {1, 1}, displs[2] = {1, 0}; /* allgatherv: reversed */
    int vsc[2] = {1, 1}, vsd[2] = {1, 0}, vrc[2] = {1, 1}, vrd[2] = {0, 1};
    MPI_Request p[4];
    CHECK(MPI_Neighbor_allgather_init(&one, 1, MPI_INT, got, 1, MPI_INT, g, MPI_INFO_NULL, &p[0]) == MPI_SUCCESS);
    CHECK(MPI_Neighbor_allgatherv_init(&one, 1, MPI_INT, got, counts, displs, MPI_INT, g, MPI_INFO_NULL, &p[1]) == MPI_SUCCESS);
    CHECK(MPI_Neighbor_alltoall_init(two, 1, MPI_INT, got, 1, MPI_INT, g, MPI_INFO_NULL, &p[2]) == MPI_SUCCESS);
    CHECK(MPI_Neighbor_alltoallv_init(two, vsc, vsd, MPI_INT, got, vrc, vrd, MPI_INT, g, MPI_INFO_NULL, &p[3]) == MPI_SUCCESS);
    counts[0] = displs[0] = vsc[0] = vsd[0] = -7; /* copied at init */
    for (int round = 0; round < 2; round++)
        for (int which = 0; which < 4; which++) {
            one = 10 * rank + round;
            two[0] = 100 * rank + 10 * round;
            two[1] = 100 * rank + 10 * round + 1;
            memset(got, 0xff, sizeof got);
            CHECK(MPI_Start(&p[which]) == MPI_SUCCESS);
            CHECK(MPI_Wait(&p[which], MPI_STATUS_IGNORE) == MPI_SUCCESS);
            switch (which) {
            case 0:
                CHECK(got[0] == 10 * src[0] + round && got[1] == 10 * src[1] + round);
                break;
            case 1:
                CHECK(got[1] == 10 * src[0] + round && got[0] == 10 * src[1] + round);
                break;
            case 2: /* block k of source k: its int k */
                CHECK(got[0] == 100 * src[0] + 10 * round && got[1] == 100 * src[1] + 10 * round + 1);
                break;
            case 3: /* destination 0 gets int 1, destination 1 int 0 */
                CHECK(got[0] == 100 * src[0] + 10 * round + 1 && got[1] == 100 * src[1] + 10 * round);
                break;
            }
            CHECK(got[2] == -1);
        }
    for (int i = 0; i < 4; i++)
        CHECK(MPI_Request_free(&p[i]) == MPI_SUCCESS);
    CHECK(MPI_Comm_free(&g) == MPI_SUCCESS);
}

/* The ints a darray type picks from an array of 0, 1, 2, ... (packed),
 * against `want`; and its bounds. */
static void check_darray(MPI_Datatype t, int total, const int *want, int n) {
    int sz;
    MPI_Aint lb, ext;
    CHECK(MPI_Type_commit(&t) == MPI_SUCCESS);
    CHECK(MPI_Type_size(t, &sz) == MPI_SUCCESS && sz == n * (int)sizeof(int));
    CHECK(MPI_Type_get_extent(t, &lb, &ext) == MPI_SUCCESS);
    CHECK(lb == 0 && ext == (MPI_Aint)(total * sizeof(int)));
    int ni, na, nd, comb;
    CHECK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb) == MPI_SUCCESS);
    CHECK(comb == MPI_COMBINER_DARRAY && nd == 1);
    int *all = malloc(sizeof(int) * total), out[64], back[64];
    for (int i = 0; i < total; i++)
        all[i] = i;
    int pos = 0;
    CHECK(MPI_Pack(all, 1, t, out, sizeof out, &pos, MPI_COMM_SELF) == MPI_SUCCESS);
    CHECK(pos == n * (int)sizeof(int));
    for (int i = 0; i < n; i++)
        CHECK(out[i] == want[i]);
    /* And through a message to self: the picked ints land in place. */
    for (int i = 0; i < total; i++)
        back[i] = -1;
    CHECK(MPI_Sendrecv(all, 1, t, 0, 5, back, 1, t, 0, 5, MPI_COMM_SELF, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    for (int i = 0, k = 0; i < total; i++) {
        int picked = k < n && want[k] == i;
        CHECK(back[i] == (picked ? i : -1));
        k += picked;
    }
    free(all);
    CHECK(MPI_Type_free(&t) == MPI_SUCCESS);
}

static void darrays(void) {
    MPI_Datatype t;
    /* 6 x 5, rows BLOCK (default: 3), columns CYCLIC(2), on a 2 x 2 grid.
     * Process (p, q) = (r / 2, r % 2): rows 3p..3p+2; columns {0,1,4}
     * for q = 0, {2,3} for q = 1. */
    int g[2] = {6, 5}, d[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int a[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, p[2] = {2, 2};
    static const int c_order[4][9] = {
        {0, 1, 4, 5, 6, 9, 10, 11, 14},
        {2, 3, 7, 8, 12, 13},
        {15, 16, 19, 20, 21, 24, 25, 26, 29},
        {17, 18, 22, 23, 27, 28},
    };
    /* Fortran order: element (i, j) is int i + 6 j. */
    static const int f_order[4][9] = {
        {0, 1, 2, 6, 7, 8, 24, 25, 26},
        {12, 13, 14, 18, 19, 20},
        {3, 4, 5, 9, 10, 11, 27, 28, 29},
        {15, 16, 17, 21, 22, 23},
    };
    for (int r = 0; r < 4; r++) {
        int n = r % 2 ? 6 : 9;
        CHECK(MPI_Type_create_darray(4, r, 2, g, d, a, p, MPI_ORDER_C, MPI_INT, &t) == MPI_SUCCESS);
        check_darray(t, 30, c_order[r], n);
        CHECK(MPI_Type_create_darray(4, r, 2, g, d, a, p, MPI_ORDER_FORTRAN, MPI_INT, &t) == MPI_SUCCESS);
        check_darray(t, 30, f_order[r], n);
        MPI_Count cg[2] = {6, 5};
        CHECK(MPI_Type_create_darray_c(4, r, 2, cg, d, a, p, MPI_ORDER_C, MPI_INT, &t) == MPI_SUCCESS);
        check_darray(t, 30, c_order[r], n);
    }
    /* 2 x 3 x 4: NONE, BLOCK (default 2), CYCLIC (default 1) on 1 x 2 x 2:
     * element (i, j, k) is int 12 i + 4 j + k. */
    int g3[3] = {2, 3, 4}, d3[3] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int a3[3] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG};
    int p3[3] = {1, 2, 2};
    static const int three[4][8] = {
        {0, 2, 4, 6, 12, 14, 16, 18},
        {1, 3, 5, 7, 13, 15, 17, 19},
        {8, 10, 20, 22},
        {9, 11, 21, 23},
    };
    for (int r = 0; r < 4; r++) {
        CHECK(MPI_Type_create_darray(4, r, 3, g3, d3, a3, p3, MPI_ORDER_C, MPI_INT, &t) == MPI_SUCCESS);
        check_darray(t, 24, three[r], r < 2 ? 8 : 4);
    }
    /* BLOCK with an explicit darg: 5 in blocks of 4 over 2: {0..3}, {4}. */
    int g1 = 5, d1 = MPI_DISTRIBUTE_BLOCK, a1 = 4, p1 = 2;
    static const int one[2][4] = {{0, 1, 2, 3}, {4}};
    for (int r = 0; r < 2; r++) {
        CHECK(MPI_Type_create_darray(2, r, 1, &g1, &d1, &a1, &p1, MPI_ORDER_C, MPI_INT, &t) == MPI_SUCCESS);
        check_darray(t, 5, one[r], r ? 1 : 4);
    }
    /* Errors: blocks too small to cover the dimension, a grid that is
     * not `size`. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    a1 = 2;
    CHECK(MPI_Type_create_darray(2, 0, 1, &g1, &d1, &a1, &p1, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS);
    a1 = 4;
    CHECK(MPI_Type_create_darray(3, 0, 1, &g1, &d1, &a1, &p1, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* A commutative user op with the large-count callback:
 * inout = in + inout + 1, on ints. */
static MPI_Count seen_len;
static void plus1(void *in, void *inout, MPI_Count *len, MPI_Datatype *t) {
    CHECK(*t == MPI_INT);
    seen_len = *len;
    for (MPI_Count i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i] + 1;
}

/* A non-commutative one on (value, scale) pairs of long longs:
 * (v1, p1) o (v2, p2) = (v1 p2 + v2, p1 p2): the digits in rank order. */
static MPI_Datatype pair;
static void concat(void *in, void *inout, MPI_Count *len, MPI_Datatype *t) {
    CHECK(*t == pair);
    long long *a = in, *b = inout;
    for (MPI_Count i = 0; i < *len; i++) {
        b[2 * i] = a[2 * i] * b[2 * i + 1] + b[2 * i];
        b[2 * i + 1] *= a[2 * i + 1];
    }
}

static void ops(void) {
    MPI_Op op;
    int c;
    CHECK(MPI_Op_create_c(plus1, 1, &op) == MPI_SUCCESS);
    CHECK(MPI_Op_commutative(op, &c) == MPI_SUCCESS && c == 1);
    int x[3] = {rank, 2 * rank, 0}, y[3];
    CHECK(MPI_Allreduce(x, y, 3, MPI_INT, op, MPI_COMM_WORLD) == MPI_SUCCESS);
    int sum = size * (size - 1) / 2;
    CHECK(y[0] == sum + size - 1 && y[1] == 2 * sum + size - 1 && y[2] == size - 1);
    CHECK(seen_len >= 0 && seen_len <= 3); /* a rank may only receive */
    int in[2] = {5, 6}, io[2] = {1, 2};
    CHECK(MPI_Reduce_local(in, io, 2, MPI_INT, op) == MPI_SUCCESS);
    CHECK(io[0] == 7 && io[1] == 9 && seen_len == 2);
    CHECK(MPI_Op_free(&op) == MPI_SUCCESS && op == MPI_OP_NULL);

    CHECK(MPI_Type_contiguous(2, MPI_LONG_LONG, &pair) == MPI_SUCCESS);
    CHECK(MPI_Type_commit(&pair) == MPI_SUCCESS);
    CHECK(MPI_Op_create_c(concat, 0, &op) == MPI_SUCCESS);
    CHECK(MPI_Op_commutative(op, &c) == MPI_SUCCESS && c == 0);
    long long v[2] = {rank % 9 + 1, 10}, out[2] = {0, 0};
    long long want = 0, scale = 1;
    for (int r = 0; r < size; r++) {
        want = want * 10 + r % 9 + 1;
        scale *= 10;
    }
    CHECK(MPI_Reduce(v, out, 1, pair, op, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
    if (rank == 0)
        CHECK(out[0] == want && out[1] == scale);
    CHECK(MPI_Allreduce(v, out, 1, pair, op, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(out[0] == want && out[1] == scale);
    CHECK(MPI_Op_free(&op) == MPI_SUCCESS);
    CHECK(MPI_Type_free(&pair) == MPI_SUCCESS);
}

static void large_contents(void) {
    MPI_Datatype t, old;
    MPI_Count big = 2149580798LL, ni, na, nl, nd;
    int comb, ints[16];
    MPI_Aint addrs[4];
    MPI_Count large[16];
    CHECK(MPI_Type_contiguous_c(big, MPI_BYTE, &t) == MPI_SUCCESS);
    CHECK(MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &comb) == MPI_SUCCESS);
    CHECK(ni == 0 && na == 0 && nl == 1 && nd == 1 && comb == MPI_COMBINER_CONTIGUOUS);
    CHECK(MPI_Type_get_contents_c(t, 0, 0, 1, 1, ints, addrs, large, &old) == MPI_SUCCESS);
    CHECK(large[0] == big && old == MPI_BYTE);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int i, a, d;
    CHECK(MPI_Type_get_envelope(t, &i, &a, &d, &comb) != MPI_SUCCESS);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    CHECK(MPI_Type_free(&t) == MPI_SUCCESS);
    /* Counts that fit: int contents, even from a _c constructor. */
    CHECK(MPI_Type_contiguous_c(7, MPI_INT, &t) == MPI_SUCCESS);
    CHECK(MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &comb) == MPI_SUCCESS);
    CHECK(ni == 1 && nl == 0);
    CHECK(MPI_Type_free(&t) == MPI_SUCCESS);
    /* A subarray: ndims and order are ints, the rest large counts. */
    MPI_Count sz[2] = {big, 4}, sub[2] = {1, 2}, st[2] = {5, 1};
    CHECK(MPI_Type_create_subarray_c(2, sz, sub, st, MPI_ORDER_C, MPI_BYTE, &t) == MPI_SUCCESS);
    CHECK(MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &comb) == MPI_SUCCESS);
    CHECK(ni == 2 && na == 0 && nl == 6 && comb == MPI_COMBINER_SUBARRAY);
    CHECK(MPI_Type_get_contents_c(t, 2, 0, 6, 1, ints, addrs, large, &old) == MPI_SUCCESS);
    CHECK(ints[0] == 2 && ints[1] == MPI_ORDER_C);
    CHECK(large[0] == big && large[1] == 4 && large[2] == 1 && large[3] == 2 && large[4] == 5 && large[5] == 1);
    CHECK(MPI_Type_free(&t) == MPI_SUCCESS);
    /* A darray: only gsizes are large counts. */
    MPI_Count gs[1] = {big};
    int dist = MPI_DISTRIBUTE_BLOCK, darg = MPI_DISTRIBUTE_DFLT_DARG, ps = 2;
    CHECK(MPI_Type_create_darray_c(2, 1, 1, gs, &dist, &darg, &ps, MPI_ORDER_C, MPI_BYTE, &t) == MPI_SUCCESS);
    CHECK(MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &comb) == MPI_SUCCESS);
    CHECK(ni == 7 && nl == 1 && comb == MPI_COMBINER_DARRAY);
    CHECK(MPI_Type_get_contents_c(t, 7, 0, 1, 1, ints, addrs, large, &old) == MPI_SUCCESS);
    CHECK(ints[0] == 2 && ints[1] == 1 && ints[2] == 1 && ints[3] == dist && ints[4] == darg);
    CHECK(ints[5] == 2 && ints[6] == MPI_ORDER_C && large[0] == big);
    MPI_Count csz;
    CHECK(MPI_Type_size_c(t, &csz) == MPI_SUCCESS && csz == big - (big + 1) / 2);
    CHECK(MPI_Type_free(&t) == MPI_SUCCESS);

    char name[MPI_MAX_OBJECT_NAME];
    int len;
    CHECK(MPI_Type_get_name(MPI_DATATYPE_NULL, name, &len) == MPI_SUCCESS);
    CHECK(strcmp(name, "MPI_DATATYPE_NULL") == 0 && len == 17);
    CHECK(MPI_Type_get_name(MPI_INT, name, &len) == MPI_SUCCESS && strcmp(name, "MPI_INT") == 0);
    CHECK(MPI_Type_set_name(MPI_SHORT, "short one") == MPI_SUCCESS);
    CHECK(MPI_Type_get_name(MPI_SHORT, name, &len) == MPI_SUCCESS && strcmp(name, "short one") == 0);
    CHECK(MPI_Type_set_name(MPI_SHORT, "MPI_SHORT") == MPI_SUCCESS);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int bl[2] = {1, 1}, dsp[2] = {0, 3};
    CHECK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec2) == MPI_SUCCESS);
    CHECK(MPI_Type_commit(&vec2) == MPI_SUCCESS);
    CHECK(MPI_Type_indexed(2, bl, dsp, MPI_INT, &idx2) == MPI_SUCCESS);
    CHECK(MPI_Type_commit(&idx2) == MPI_SUCCESS);
    alltoallw();
    neighbours();
    darrays();
    ops();
    large_contents();
    MPI_Type_free(&vec2);
    MPI_Type_free(&idx2);
    printf("OK wcoll rank=%d\n", rank);
    MPI_Finalize();
    return 0;
}
