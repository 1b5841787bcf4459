/* pertinax-abi: synchronous sends (Ssend, Issend: not complete before the
 * receiver posts its receive, complete after), persistent requests
 * (Send/Bsend/Ssend/Rsend/Recv_init restarted many times, Start, Startall,
 * inactive requests in Wait/Test/Waitany/Testany/Waitsome/Testall,
 * Request_get_status, Request_free), persistent collectives, and the
 * non-blocking gather/scatter, v-forms, scans and reduce-scatter with and
 * without MPI_IN_PLACE, Ibsend, Irsend, Isendrecv(_replace), each against
 * results computed here. Prints
 * "OK requests rank=R". */
#include "check.h"
#include <string.h>

static void ssend_order(void) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    /* Rank 0 issends to rank 1, which posts its receive only after a
     * barrier: before it, no Test may say done. */
    for (int len = 0; len <= 20000; len += len ? 19999 : 1) {
        char *buf = malloc(len + 1);
        for (int i = 0; i < len; i++) buf[i] = (char)(i * 7 + len);
        if (rank == 0) {
            MPI_Request r;
            MPI_Issend(buf, len, MPI_CHAR, 1, 5, MPI_COMM_WORLD, &r);
            int flag = 0;
            for (int i = 0; i < 50; i++) {
                MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
                CHECK(!flag);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            CHECK(r == MPI_REQUEST_NULL);
        } else if (rank == 1) {
            MPI_Barrier(MPI_COMM_WORLD);
            char *got = malloc(len + 1);
            MPI_Status st;
            MPI_Recv(got, len, MPI_CHAR, 0, 5, MPI_COMM_WORLD, &st);
            int n;
            MPI_Get_count(&st, MPI_CHAR, &n);
            CHECK(n == len && memcmp(got, buf, len) == 0);
            free(got);
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        free(buf);
    }
    /* A blocking Ssend around the ring (receives posted first). */
    int v = rank * 3, got = -1;
    MPI_Request r;
    MPI_Irecv(&got, 1, MPI_INT, prev, 6, MPI_COMM_WORLD, &r);
    MPI_Ssend(&v, 1, MPI_INT, next, 6, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(got == prev * 3);
    /* To MPI_PROC_NULL: done at once. */
    CHECK(MPI_Ssend(&v, 1, MPI_INT, MPI_PROC_NULL, 6, MPI_COMM_WORLD) == MPI_SUCCESS);
}

static void persistent_p2p(void) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int out[4], in[4] = {0}, bout = 0, bin = 0, sout = 0, sin = 0;
    char bsendbuf[1024];
    MPI_Buffer_attach(bsendbuf, sizeof bsendbuf);
    MPI_Request r[8];
    MPI_Recv_init(in, 4, MPI_INT, prev, 10, MPI_COMM_WORLD, &r[0]);
    MPI_Send_init(out, 4, MPI_INT, next, 10, MPI_COMM_WORLD, &r[1]);
    MPI_Recv_init(&bin, 1, MPI_INT, prev, 11, MPI_COMM_WORLD, &r[2]);
    MPI_Bsend_init(&bout, 1, MPI_INT, next, 11, MPI_COMM_WORLD, &r[3]);
    MPI_Recv_init(&sin, 1, MPI_INT, prev, 12, MPI_COMM_WORLD, &r[4]);
    MPI_Ssend_init(&sout, 1, MPI_INT, next, 12, MPI_COMM_WORLD, &r[5]);
    int rin = -1, rout = 0;
    MPI_Recv_init(&rin, 1, MPI_INT, MPI_ANY_SOURCE, 13, MPI_COMM_WORLD, &r[6]);
    MPI_Rsend_init(&rout, 1, MPI_INT, next, 13, MPI_COMM_WORLD, &r[7]);

    /* Inactive requests complete at once with MPI's empty status
     * (MPI_ANY_SOURCE, MPI_ANY_TAG), stay valid, count as null. */
    int flag = 0, idx = 7, outc = 5, ind[8];
    MPI_Status st;
    MPI_Wait(&r[0], &st);
    CHECK(r[0] != MPI_REQUEST_NULL && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG);
    MPI_Test(&r[1], &flag, MPI_STATUS_IGNORE);
    CHECK(flag && r[1] != MPI_REQUEST_NULL);
    MPI_Waitany(8, r, &idx, MPI_STATUS_IGNORE);
    CHECK(idx == MPI_UNDEFINED);
    MPI_Testany(8, r, &idx, &flag, MPI_STATUS_IGNORE);
    CHECK(flag && idx == MPI_UNDEFINED);
    MPI_Waitsome(8, r, &outc, ind, MPI_STATUSES_IGNORE);
    CHECK(outc == MPI_UNDEFINED);
    MPI_Testall(8, r, &flag, MPI_STATUSES_IGNORE);
    CHECK(flag);
    MPI_Request_get_status(r[2], &flag, MPI_STATUS_IGNORE);
    CHECK(flag);
    /* Starting an active request is an error. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    for (int it = 0; it < 200; it++) {
        for (int i = 0; i < 4; i++) out[i] = rank * 1000 + it * 4 + i;
        bout = it + rank;
        sout = it * 2 + rank;
        rout = it * 3 + rank;
        /* The ready-mode receive is posted before anyone sends to it. */
        MPI_Start(&r[6]);
        MPI_Barrier(MPI_COMM_WORLD);
        if (it == 0) CHECK(MPI_Start(&r[6]) == MPI_ERR_REQUEST);
        MPI_Startall(4, r);
        MPI_Start(&r[4]);
        MPI_Start(&r[5]);
        MPI_Start(&r[7]);
        if (it % 2) {
            MPI_Waitall(8, r, MPI_STATUSES_IGNORE);
        } else {
            int left = 8;
            while (left > 0) {
                int n;
                MPI_Waitsome(8, r, &n, ind, MPI_STATUSES_IGNORE);
                CHECK(n != MPI_UNDEFINED);
                left -= n;
            }
        }
        for (int i = 0; i < 8; i++) CHECK(r[i] != MPI_REQUEST_NULL);
        for (int i = 0; i < 4; i++) CHECK(in[i] == prev * 1000 + it * 4 + i);
        CHECK(bin == it + prev && sin == it * 2 + prev && rin == it * 3 + prev);
    }
    for (int i = 0; i < 8; i++) {
        MPI_Request_free(&r[i]);
        CHECK(r[i] == MPI_REQUEST_NULL);
    }
    void *b;
    int bs;
    MPI_Buffer_detach(&b, &bs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void persistent_coll(void) {
    int root = size - 1;
    int bc[3], sum = 0, x = 0, red = 0;
    int *ga = malloc(size * sizeof(int)), *aa = malloc(size * sizeof(int));
    int *to = malloc(size * sizeof(int)), *from = malloc(size * sizeof(int));
    int *sc = malloc(size * sizeof(int));
    int mine = -1, gx = 0, scx = -1;
    MPI_Request r[8];
    MPI_Bcast_init(bc, 3, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    MPI_Allreduce_init(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    MPI_Reduce_init(&x, &red, 1, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]);
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]);
    MPI_Allgather_init(&x, 1, MPI_INT, aa, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r[4]);
    MPI_Gather_init(&gx, 1, MPI_INT, ga, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[5]);
    MPI_Scatter_init(sc, 1, MPI_INT, &scx, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[6]);
    MPI_Alltoall_init(to, 1, MPI_INT, from, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r[7]);
    (void)mine;
    for (int it = 0; it < 50; it++) {
        if (rank == root)
            for (int i = 0; i < 3; i++) bc[i] = it * 10 + i;
        x = rank + it;
        gx = rank * it;
        for (int i = 0; i < size; i++) {
            to[i] = rank * 100 + i + it;
            sc[i] = i * 5 + it;
        }
        MPI_Startall(8, r);
        MPI_Waitall(8, r, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 3; i++) CHECK(bc[i] == it * 10 + i);
        CHECK(sum == size * (size - 1) / 2 + size * it);
        if (rank == root) CHECK(red == size - 1 + it);
        for (int i = 0; i < size; i++) {
            CHECK(aa[i] == i + it);
            CHECK(from[i] == i * 100 + rank + it);
            if (rank == 0) CHECK(ga[i] == i * it);
        }
        CHECK(scx == rank * 5 + it);
    }
    for (int i = 0; i < 8; i++) MPI_Request_free(&r[i]);
    free(ga);
    free(aa);
    free(to);
    free(from);
    free(sc);
}

/* Rank i contributes i + 1 elements. */
static void vcolls(int inplace) {
    int root = size > 1 ? 1 : 0;
    int *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
    int total = 0;
    for (int i = 0; i < size; i++) {
        counts[i] = i + 1;
        displs[i] = total + i; /* a gap of i elements before each part */
        total += i + 1;
    }
    int span = displs[size - 1] + counts[size - 1];
    int *all = malloc(span * sizeof(int)), *mine = malloc((rank + 1) * sizeof(int));
    for (int i = 0; i <= rank; i++) mine[i] = rank * 100 + i;
    MPI_Request r;

    /* Igatherv at the root. */
    for (int i = 0; i < span; i++) all[i] = -7;
    if (rank == root && inplace) {
        for (int i = 0; i <= rank; i++) all[displs[rank] + i] = mine[i];
        MPI_Igatherv(MPI_IN_PLACE, 0, MPI_INT, all, counts, displs, MPI_INT, root, MPI_COMM_WORLD, &r);
    } else {
        MPI_Igatherv(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, root, MPI_COMM_WORLD, &r);
    }
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (rank == root)
        for (int j = 0; j < size; j++) {
            for (int i = 0; i < counts[j]; i++) CHECK(all[displs[j] + i] == j * 100 + i);
            if (j > 0) CHECK(all[displs[j] - 1] == -7);
        }

    /* Iscatterv from the root. */
    for (int j = 0; j < size; j++)
        for (int i = 0; i < counts[j]; i++) all[displs[j] + i] = j * 7 + i;
    int *part = malloc((rank + 1) * sizeof(int));
    for (int i = 0; i <= rank; i++) part[i] = -1;
    if (rank == root && inplace)
        MPI_Iscatterv(all, counts, displs, MPI_INT, MPI_IN_PLACE, 0, MPI_INT, root, MPI_COMM_WORLD, &r);
    else
        MPI_Iscatterv(all, counts, displs, MPI_INT, part, rank + 1, MPI_INT, root, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (!(rank == root && inplace))
        for (int i = 0; i <= rank; i++) CHECK(part[i] == rank * 7 + i);
    else
        for (int i = 0; i <= rank; i++) CHECK(part[i] == -1);

    /* Iallgatherv. */
    for (int i = 0; i < span; i++) all[i] = -7;
    if (inplace) {
        for (int i = 0; i <= rank; i++) all[displs[rank] + i] = mine[i];
        MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD, &r);
    } else {
        MPI_Iallgatherv(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD, &r);
    }
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int j = 0; j < size; j++)
        for (int i = 0; i < counts[j]; i++) CHECK(all[displs[j] + i] == j * 100 + i);

    /* Ialltoallv: rank i sends j + 1 elements to rank j (in place: the
     * same layout both ways, so every rank gets j + 1... use the receive
     * layout: block from rank j holds rank + 1 elements). */
    int *sc = malloc(size * sizeof(int)), *sd = malloc(size * sizeof(int));
    int *rc = malloc(size * sizeof(int)), *rd = malloc(size * sizeof(int));
    int st = 0, rt = 0;
    for (int j = 0; j < size; j++) {
        sc[j] = inplace ? rank + 1 : j + 1;
        sd[j] = st;
        st += sc[j];
        rc[j] = rank + 1;
        rd[j] = rt;
        rt += rc[j];
    }
    int *sb = malloc((st + 1) * sizeof(int)), *rb = malloc((rt + 2 * size + 1) * sizeof(int));
    for (int j = 0; j < size; j++)
        for (int i = 0; i < sc[j]; i++) sb[sd[j] + i] = rank * 1000 + j * 10 + i;
    if (inplace) {
        /* Only valid in place when every count pair matches: all ranks
         * then send rank + 1 to everyone, so use equal sizes. */
        for (int j = 0; j < size; j++) rc[j] = sc[j] = 2, rd[j] = sd[j] = 2 * j;
        for (int j = 0; j < size; j++)
            for (int i = 0; i < 2; i++) rb[2 * j + i] = rank * 1000 + j * 10 + i;
        MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        for (int j = 0; j < size; j++)
            for (int i = 0; i < 2; i++) CHECK(rb[2 * j + i] == j * 1000 + rank * 10 + i);
    } else {
        MPI_Ialltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        for (int j = 0; j < size; j++)
            for (int i = 0; i < rc[j]; i++) CHECK(rb[rd[j] + i] == j * 1000 + rank * 10 + i);
    }

    /* Igather / Iscatter (equal parts). */
    int g[2] = {rank, rank * 2}, *ga = malloc(2 * size * sizeof(int)), s2[2] = {-1, -1};
    if (rank == root && inplace) {
        ga[2 * root] = rank;
        ga[2 * root + 1] = rank * 2;
        MPI_Igather(MPI_IN_PLACE, 2, MPI_INT, ga, 2, MPI_INT, root, MPI_COMM_WORLD, &r);
    } else {
        MPI_Igather(g, 2, MPI_INT, ga, 2, MPI_INT, root, MPI_COMM_WORLD, &r);
    }
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (rank == root)
        for (int j = 0; j < size; j++) CHECK(ga[2 * j] == j && ga[2 * j + 1] == 2 * j);
    for (int j = 0; j < 2 * size; j++) ga[j] = j * 3;
    if (rank == root && inplace)
        MPI_Iscatter(ga, 2, MPI_INT, MPI_IN_PLACE, 2, MPI_INT, root, MPI_COMM_WORLD, &r);
    else
        MPI_Iscatter(ga, 2, MPI_INT, s2, 2, MPI_INT, root, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (!(rank == root && inplace)) CHECK(s2[0] == rank * 6 && s2[1] == rank * 6 + 3);

    /* Iscan, Iexscan. */
    long v[3], out[3];
    for (int i = 0; i < 3; i++) v[i] = rank + i, out[i] = -5;
    MPI_Request q[2];
    long ex[3] = {-5, -5, -5};
    if (inplace) {
        for (int i = 0; i < 3; i++) out[i] = v[i], ex[i] = v[i];
        MPI_Iscan(MPI_IN_PLACE, out, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &q[0]);
        MPI_Iexscan(MPI_IN_PLACE, ex, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &q[1]);
    } else {
        MPI_Iscan(v, out, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &q[0]);
        MPI_Iexscan(v, ex, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &q[1]);
    }
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 3; i++) {
        long incl = 0;
        for (int j = 0; j <= rank; j++) incl += j + i;
        CHECK(out[i] == incl);
        if (rank > 0) CHECK(ex[i] == incl - (rank + i));
        else CHECK(ex[i] == (inplace ? v[i] : -5));
    }

    /* Ireduce_scatter (rank i gets i + 1 elements) and _block (2 each). */
    int *rs = malloc(total * sizeof(int)), *rr = malloc(total * sizeof(int));
    for (int i = 0; i < total; i++) rs[i] = rank * i;
    int off = 0;
    for (int j = 0; j < rank; j++) off += counts[j];
    if (inplace) {
        memcpy(rr, rs, total * sizeof(int));
        MPI_Ireduce_scatter(MPI_IN_PLACE, rr, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
    } else {
        MPI_Ireduce_scatter(rs, rr, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
    }
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    int ranks = size * (size - 1) / 2;
    for (int i = 0; i <= rank; i++) CHECK(rr[i] == ranks * (off + i));
    int *bs = malloc(2 * size * sizeof(int)), br[2 * 64];
    for (int i = 0; i < 2 * size; i++) bs[i] = rank + i;
    if (inplace) {
        memcpy(br, bs, 2 * size * sizeof(int));
        MPI_Ireduce_scatter_block(MPI_IN_PLACE, br, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &r);
    } else {
        MPI_Ireduce_scatter_block(bs, br, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &r);
    }
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(br[0] == size - 1 + 2 * rank && br[1] == size + 2 * rank);

    free(counts);
    free(displs);
    free(all);
    free(mine);
    free(part);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(sb);
    free(rb);
    free(ga);
    free(rs);
    free(rr);
    free(bs);
}

/* Ibsend, Irsend, Isendrecv, Isendrecv_replace around a ring (a vector
 * type on the replace, so a non-contiguous buffer goes both ways). */
static void more_modes(void) {
    int nxt = (rank + 1) % size, prv = (rank + size - 1) % size;
    int out[4], in[4], buf[8], bsize = 4 * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
    void *attached = malloc(bsize), *back;
    MPI_Request r[2];
    MPI_Status st;
    MPI_Datatype every_other;
    for (int i = 0; i < 4; i++) out[i] = 100 * rank + i;
    MPI_Buffer_attach(attached, bsize);
    CHECK(MPI_Ibsend(out, 4, MPI_INT, nxt, 7, MPI_COMM_WORLD, &r[0]) == MPI_SUCCESS);
    CHECK(MPI_Irecv(in, 4, MPI_INT, prv, 7, MPI_COMM_WORLD, &r[1]) == MPI_SUCCESS);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 4; i++) CHECK(in[i] == 100 * prv + i);
    MPI_Buffer_detach(&back, &bsize);
    CHECK(back == attached);
    free(attached);
    /* Irsend: the receive is posted before the barrier, the send after. */
    CHECK(MPI_Irecv(in, 4, MPI_INT, prv, 8, MPI_COMM_WORLD, &r[1]) == MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_Irsend(out, 4, MPI_INT, nxt, 8, MPI_COMM_WORLD, &r[0]) == MPI_SUCCESS);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 4; i++) CHECK(in[i] == 100 * prv + i);
    /* Isendrecv both ways around the ring. */
    CHECK(MPI_Isendrecv(out, 4, MPI_INT, nxt, 9, in, 4, MPI_INT, prv, 9, MPI_COMM_WORLD, &r[0]) == MPI_SUCCESS);
    MPI_Wait(&r[0], &st);
    CHECK(st.MPI_SOURCE == prv && st.MPI_TAG == 9);
    for (int i = 0; i < 4; i++) CHECK(in[i] == 100 * prv + i);
    /* Isendrecv_replace on every other int of 8. */
    MPI_Type_vector(4, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    for (int i = 0; i < 8; i++) buf[i] = i % 2 ? -1 : 10 * rank + i;
    CHECK(MPI_Isendrecv_replace(buf, 1, every_other, nxt, 10, prv, 10, MPI_COMM_WORLD, &r[0]) == MPI_SUCCESS);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    for (int i = 0; i < 8; i++) CHECK(buf[i] == (i % 2 ? -1 : 10 * prv + i));
    MPI_Type_free(&every_other);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 64);
    if (size > 1) ssend_order();
    persistent_p2p();
    persistent_coll();
    vcolls(0);
    vcolls(1);
    more_modes();
    MPI_Finalize();
    printf("OK requests rank=%d\n", rank);
    return 0;
}
