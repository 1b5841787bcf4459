/* pertinax-abi: an unchanged C MPI program (built with MPICH's mpicc)
 * checking intercommunicators and dynamic processes: MPI_Intercomm_create
 * between the two halves of the world, test_inter, remote size and group,
 * point-to-point by remote rank (the status names the sender's rank in
 * its group), barrier, bcast, reduce, gather and scatter with MPI_ROOT
 * and MPI_PROC_NULL, allreduce, allgather and alltoall (the remote
 * group's data), the v- and w-forms and reduce-scatter, split_type,
 * dup, split (parts of one color joined), Intercomm_create_from_groups,
 * merge both ways, every collective again in its non-blocking and its
 * persistent form, a
 * creation the library lacks on an intercommunicator
 * (MPI_ERR_UNSUPPORTED_OPERATION); then MPI_Comm_spawn of this program
 * (the children see a parent from MPI_Comm_get_parent, merge with the
 * parents and check an allreduce and a bcast over the intercommunicator),
 * and spawns beyond the launcher's room failing with MPI_ERR_SPAWN. Needs
 * room for 2 spawned processes and no more than the number of ranks
 * (`pertinax run --max-spawn`, whose default is the number of ranks). At
 * any size from 2. Prints
 * "OK inter rank=R" per parent rank when every check held. */
#include "check.h"
#include <string.h>

/* The collectives checked three ways: blocking (nb 0), the non-blocking
 * form waited for at once (nb 1), and the persistent form started and
 * waited for (nb 2). */
static int nb;
static MPI_Request R;
static int waited(int rc) { return rc == MPI_SUCCESS ? MPI_Wait(&R, MPI_STATUS_IGNORE) : rc; }
static int started(int rc) {
    if (rc != MPI_SUCCESS)
        return rc;
    rc = MPI_Start(&R);
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&R, MPI_STATUS_IGNORE);
    MPI_Request_free(&R);
    return rc;
}
#define NB_BARRIER(c) \
    (nb == 2 ? started(MPI_Barrier_init(c, MPI_INFO_NULL, &R)) : nb ? waited(MPI_Ibarrier(c, &R)) : MPI_Barrier(c))
#define NB_BCAST(...) \
    (nb == 2 ? started(MPI_Bcast_init(__VA_ARGS__, MPI_INFO_NULL, &R)) \
     : nb   ? waited(MPI_Ibcast(__VA_ARGS__, &R)) \
            : MPI_Bcast(__VA_ARGS__))
#define NB_REDUCE(...) \
    (nb == 2 ? started(MPI_Reduce_init(__VA_ARGS__, MPI_INFO_NULL, &R)) \
     : nb   ? waited(MPI_Ireduce(__VA_ARGS__, &R)) \
            : MPI_Reduce(__VA_ARGS__))
#define NB_ALLREDUCE(...) \
    (nb == 2 ? started(MPI_Allreduce_init(__VA_ARGS__, MPI_INFO_NULL, &R)) \
     : nb   ? waited(MPI_Iallreduce(__VA_ARGS__, &R)) \
            : MPI_Allreduce(__VA_ARGS__))
#define NB_GATHER(...) \
    (nb == 2 ? started(MPI_Gather_init(__VA_ARGS__, MPI_INFO_NULL, &R)) \
     : nb   ? waited(MPI_Igather(__VA_ARGS__, &R)) \
            : MPI_Gather(__VA_ARGS__))
#define NB_GATHERV(...) \
    (nb == 2 ? started(MPI_Gatherv_init(__VA_ARGS__, MPI_INFO_NULL, &R)) \
     : nb   ? waited(MPI_Igatherv(__VA_ARGS__, &R)) \
            : MPI_Gatherv(__VA_ARGS__))
#define NB_SCATTER(...) \
    (nb == 2 ? started(MPI_Scatter_init(__VA_ARGS__, MPI_INFO_NULL, &R)) \
     : nb   ? waited(MPI_Iscatter(__VA_ARGS__, &R)) \
            : MPI_Scatter(__VA_ARGS__))
#define NB_SCATTERV(...) \
    (nb == 2 ? started(MPI_Scatterv_init(__VA_ARGS__, MPI_INFO_NULL, &R)) \
     : nb   ? waited(MPI_Iscatterv(__VA_ARGS__, &R)) \
            : MPI_Scatterv(__VA_ARGS__))
#define NB_ALLGATHER(...) \
    (nb == 2 ? started(MPI_Allgather_init(__VA_ARGS__, MPI_INFO_NULL, &R)) \
     : nb   ? waited(MPI_Iallgather(__VA_ARGS__, &R)) \
            : MPI_Allgather(__VA_ARGS__))
#define NB_ALLGATHERV(...) \
    (nb == 2 ? started(MPI_Allgatherv_init(__VA_ARGS__, MPI_INFO_NULL, &R)) \
     : nb   ? waited(MPI_Iallgatherv(__VA_ARGS__, &R)) \
            : MPI_Allgatherv(__VA_ARGS__))
#define NB_ALLTOALL(...) \
    (nb == 2 ? started(MPI_Alltoall_init(__VA_ARGS__, MPI_INFO_NULL, &R)) \
     : nb   ? waited(MPI_Ialltoall(__VA_ARGS__, &R)) \
            : MPI_Alltoall(__VA_ARGS__))
#define NB_ALLTOALLV(...) \
    (nb == 2 ? started(MPI_Alltoallv_init(__VA_ARGS__, MPI_INFO_NULL, &R)) \
     : nb   ? waited(MPI_Ialltoallv(__VA_ARGS__, &R)) \
            : MPI_Alltoallv(__VA_ARGS__))
#define NB_ALLTOALLW(...) \
    (nb == 2 ? started(MPI_Alltoallw_init(__VA_ARGS__, MPI_INFO_NULL, &R)) \
     : nb   ? waited(MPI_Ialltoallw(__VA_ARGS__, &R)) \
            : MPI_Alltoallw(__VA_ARGS__))
#define NB_REDUCE_SCATTER(...) \
    (nb == 2 ? started(MPI_Reduce_scatter_init(__VA_ARGS__, MPI_INFO_NULL, &R)) \
     : nb   ? waited(MPI_Ireduce_scatter(__VA_ARGS__, &R)) \
            : MPI_Reduce_scatter(__VA_ARGS__))
#define NB_REDUCE_SCATTER_BLOCK(...) \
    (nb == 2 ? started(MPI_Reduce_scatter_block_init(__VA_ARGS__, MPI_INFO_NULL, &R)) \
     : nb   ? waited(MPI_Ireduce_scatter_block(__VA_ARGS__, &R)) \
            : MPI_Reduce_scatter_block(__VA_ARGS__))

#define CHILDREN 2

static int class_of(int rc) {
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

/* A spawned process: merge with the parents, check, leave. */
static int child(MPI_Comm parent) {
    MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
    int flag = 0, psize = -1, wsize = -1;
    CHECK(MPI_Comm_test_inter(parent, &flag) == MPI_SUCCESS && flag);
    CHECK(MPI_Comm_remote_size(parent, &psize) == MPI_SUCCESS && psize >= 2);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize == CHILDREN);
    /* The parents' rank 0 sends each child its number. */
    int got = -1;
    MPI_Status st;
    CHECK(MPI_Recv(&got, 1, MPI_INT, 0, 5, parent, &st) == MPI_SUCCESS);
    CHECK(got == 1000 + rank && st.MPI_SOURCE == 0);
    /* Bcast from the parents' rank 0, then one from child 0 to them. */
    int v = -1;
    CHECK(MPI_Bcast(&v, 1, MPI_INT, 0, parent) == MPI_SUCCESS && v == 77);
    v = 88;
    CHECK(MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, parent) ==
          MPI_SUCCESS);
    MPI_Comm all;
    CHECK(MPI_Intercomm_merge(parent, 1, &all) == MPI_SUCCESS);
    int ar = -1, as = -1;
    MPI_Comm_rank(all, &ar);
    MPI_Comm_size(all, &as);
    CHECK(as == psize + CHILDREN && ar == psize + rank);
    int sum = -1, one = ar;
    CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, all) == MPI_SUCCESS);
    CHECK(sum == as * (as - 1) / 2);
    MPI_Comm_free(&all);
    CHECK(MPI_Comm_disconnect(&parent) == MPI_SUCCESS && parent == MPI_COMM_NULL);
    MPI_Comm again;
    CHECK(MPI_Comm_get_parent(&again) == MPI_SUCCESS && again == MPI_COMM_NULL);
    MPI_Finalize();
    return 0;
}

static void intercomms(void) {
    /* Halves: low = ranks below size/2, high = the others. */
    int low = rank < size / 2, lsize = low ? size / 2 : size - size / 2;
    int rsize_want = size - lsize;
    MPI_Comm half, ic;
    CHECK(MPI_Comm_split(MPI_COMM_WORLD, !low, rank, &half) == MPI_SUCCESS);
    int hr = -1;
    MPI_Comm_rank(half, &hr);
    CHECK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? size / 2 : 0, 7, &ic) ==
          MPI_SUCCESS);
    int flag = -1, n = -1;
    CHECK(MPI_Comm_test_inter(ic, &flag) == MPI_SUCCESS && flag == 1);
    CHECK(MPI_Comm_test_inter(half, &flag) == MPI_SUCCESS && flag == 0);
    CHECK(MPI_Comm_size(ic, &n) == MPI_SUCCESS && n == lsize);
    CHECK(MPI_Comm_rank(ic, &n) == MPI_SUCCESS && n == hr);
    CHECK(MPI_Comm_remote_size(ic, &n) == MPI_SUCCESS && n == rsize_want);
    CHECK(class_of(MPI_Comm_remote_size(half, &n)) == MPI_ERR_COMM);
    /* The remote group, translated to the world's. */
    MPI_Group rg, wg;
    CHECK(MPI_Comm_remote_group(ic, &rg) == MPI_SUCCESS);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int gs = -1, ranks[64], wr[64];
    CHECK(MPI_Group_size(rg, &gs) == MPI_SUCCESS && gs == rsize_want);
    for (int i = 0; i < gs; i++)
        ranks[i] = i;
    CHECK(MPI_Group_translate_ranks(rg, gs, ranks, wg, wr) == MPI_SUCCESS);
    int first = low ? size / 2 : 0;
    for (int i = 0; i < gs; i++)
        CHECK(wr[i] == first + i);
    MPI_Group_free(&rg);
    MPI_Group_free(&wg);

    /* Point to point: each sends its world rank to every remote rank. */
    MPI_Request reqs[64];
    for (int q = 0; q < rsize_want; q++)
        CHECK(MPI_Isend(&rank, 1, MPI_INT, q, 3, ic, &reqs[q]) == MPI_SUCCESS);
    int seen[64] = {0};
    for (int q = 0; q < rsize_want; q++) {
        int v = -1;
        MPI_Status st;
        CHECK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 3, ic, &st) == MPI_SUCCESS);
        CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize_want && v == first + st.MPI_SOURCE);
        CHECK(!seen[st.MPI_SOURCE]);
        seen[st.MPI_SOURCE] = 1;
    }
    CHECK(MPI_Waitall(rsize_want, reqs, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    /* A receive by remote rank, and MPI_PROC_NULL. */
    if (hr == 0) {
        int v = 100 + rank, got = -1;
        MPI_Status st;
        CHECK(MPI_Sendrecv(&v, 1, MPI_INT, 0, 4, &got, 1, MPI_INT, 0, 4, ic, &st) ==
              MPI_SUCCESS);
        CHECK(got == 100 + first && st.MPI_SOURCE == 0);
        CHECK(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 4, ic) == MPI_SUCCESS);
    }

    /* The collectives, blocking (nb 0), non-blocking (nb 1), persistent
     * (nb 2). */
    for (nb = 0; nb < 3; nb++) {
        CHECK(NB_BARRIER(ic) == MPI_SUCCESS);

        /* Bcast from the low group's rank 0, then from the high group's last. */
        int v = low && hr == 0 ? 4242 : -1;
        int root = low ? (hr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        CHECK(NB_BCAST(&v, 1, MPI_INT, root, ic) == MPI_SUCCESS);
        CHECK(v == (low && hr != 0 ? -1 : 4242));
        double d[3] = {-1, -1, -1};
        if (!low && hr == lsize - 1) {
            d[0] = 1.5, d[1] = 2.5, d[2] = 3.5;
        }
        root = !low ? (hr == lsize - 1 ? MPI_ROOT : MPI_PROC_NULL) : rsize_want - 1;
        CHECK(NB_BCAST(d, 3, MPI_DOUBLE, root, ic) == MPI_SUCCESS);
        if (low || hr == lsize - 1)
            CHECK(d[0] == 1.5 && d[1] == 2.5 && d[2] == 3.5);
        else
            CHECK(d[0] == -1);
        CHECK(class_of(NB_BCAST(d, 1, MPI_DOUBLE, rsize_want, ic)) == MPI_ERR_ROOT);

        /* Allreduce: the sum of the remote group's (world rank + 1), and max. */
        long mine[2] = {rank + 1, rank}, got[2] = {-1, -1};
        CHECK(NB_ALLREDUCE(mine, got, 2, MPI_LONG, MPI_SUM, ic) == MPI_SUCCESS);
        long want = 0, wmax = 0;
        for (int q = 0; q < rsize_want; q++)
            want += first + q + 1, wmax += first + q;
        CHECK(got[0] == want && got[1] == wmax);
        int mx = -1;
        CHECK(NB_ALLREDUCE(&rank, &mx, 1, MPI_INT, MPI_MAX, ic) == MPI_SUCCESS);
        CHECK(mx == first + rsize_want - 1);

        /* Allgather: the remote group's parts in its rank order. */
        int part[2] = {10 * rank, 10 * rank + 1}, all[128];
        CHECK(NB_ALLGATHER(part, 2, MPI_INT, all, 2, MPI_INT, ic) == MPI_SUCCESS);
        for (int q = 0; q < rsize_want; q++)
            CHECK(all[2 * q] == 10 * (first + q) && all[2 * q + 1] == 10 * (first + q) + 1);

        /* Reduce to the high group's rank 0 (the low group's data), then to
         * the low group's last rank (the high group's data). */
        long red[2] = {-1, -1};
        root = low ? 0 : (hr == 0 ? MPI_ROOT : MPI_PROC_NULL);
        CHECK(NB_REDUCE(mine, red, 2, MPI_LONG, MPI_SUM, root, ic) == MPI_SUCCESS);
        if (!low && hr == 0)
            CHECK(red[0] == want && red[1] == wmax);
        else
            CHECK(red[0] == -1 && red[1] == -1);
        root = !low ? rsize_want - 1 : (hr == lsize - 1 ? MPI_ROOT : MPI_PROC_NULL);
        CHECK(NB_REDUCE(&rank, &mx, 1, MPI_INT, MPI_MIN, root, ic) == MPI_SUCCESS);
        if (low && hr == lsize - 1)
            CHECK(mx == first);

        /* Gather to the low group's rank 0, scatter back from it. */
        for (int i = 0; i < 128; i++)
            all[i] = -1;
        root = low ? (hr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        CHECK(NB_GATHER(part, 2, MPI_INT, all, 2, MPI_INT, root, ic) == MPI_SUCCESS);
        for (int q = 0; q < rsize_want; q++)
            if (low && hr == 0)
                CHECK(all[2 * q] == 10 * (first + q) && all[2 * q + 1] == 10 * (first + q) + 1);
            else
                CHECK(all[2 * q] == -1);
        int back[2] = {-1, -1};
        if (low && hr == 0)
            for (int q = 0; q < rsize_want; q++)
                all[2 * q] = 7 * q, all[2 * q + 1] = 7 * q + 1;
        CHECK(NB_SCATTER(all, 2, MPI_INT, back, 2, MPI_INT, root, ic) == MPI_SUCCESS);
        if (!low)
            CHECK(back[0] == 7 * hr && back[1] == 7 * hr + 1);
        else
            CHECK(back[0] == -1);

        /* Alltoall: block q to remote rank q. */
        int blocks[64], from[64];
        for (int q = 0; q < rsize_want; q++)
            blocks[q] = 1000 * rank + first + q, from[q] = -1;
        CHECK(NB_ALLTOALL(blocks, 1, MPI_INT, from, 1, MPI_INT, ic) == MPI_SUCCESS);
        for (int q = 0; q < rsize_want; q++)
            CHECK(from[q] == 1000 * (first + q) + rank);

        /* The v-forms: remote rank q's part is q + 1 ints, placed in
         * reverse order with a gap of one. */
        int counts[64], displs[64], vbuf[4096], vpart[80];
        int at = 0;
        for (int q = rsize_want - 1; q >= 0; q--)
            counts[q] = q + 1, displs[q] = at, at += q + 2;
        for (int i = 0; i < hr + 1; i++)
            vpart[i] = 100 * rank + i;
        for (int i = 0; i < 4096; i++)
            vbuf[i] = -1;
        /* Gatherv to the low group's rank 0, from every high rank. */
        root = low ? (hr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        CHECK(NB_GATHERV(vpart, hr + 1, MPI_INT, vbuf, counts, displs, MPI_INT, root, ic) ==
              MPI_SUCCESS);
        if (low && hr == 0)
            for (int q = 0; q < rsize_want; q++) {
                for (int i = 0; i < q + 1; i++)
                    CHECK(vbuf[displs[q] + i] == 100 * (first + q) + i);
                CHECK(vbuf[displs[q] + q + 1] == -1);
            }
        /* Scatterv back: high rank q gets q + 1 ints. */
        if (low && hr == 0)
            for (int q = 0; q < rsize_want; q++)
                for (int i = 0; i < q + 1; i++)
                    vbuf[displs[q] + i] = 5000 + 10 * q + i;
        for (int i = 0; i < 80; i++)
            vpart[i] = -1;
        CHECK(NB_SCATTERV(vbuf, counts, displs, MPI_INT, vpart, hr + 1, MPI_INT, root, ic) ==
              MPI_SUCCESS);
        if (!low) {
            for (int i = 0; i < hr + 1; i++)
                CHECK(vpart[i] == 5000 + 10 * hr + i);
            CHECK(vpart[hr + 1] == -1);
        }
        /* Allgatherv: every remote rank's part. */
        for (int i = 0; i < hr + 1; i++)
            vpart[i] = 100 * rank + i;
        for (int i = 0; i < 4096; i++)
            vbuf[i] = -1;
        CHECK(NB_ALLGATHERV(vpart, hr + 1, MPI_INT, vbuf, counts, displs, MPI_INT, ic) ==
              MPI_SUCCESS);
        for (int q = 0; q < rsize_want; q++) {
            for (int i = 0; i < q + 1; i++)
                CHECK(vbuf[displs[q] + i] == 100 * (first + q) + i);
            CHECK(vbuf[displs[q] + q + 1] == -1);
        }
        /* Alltoallv: to remote rank q, q + 1 ints; from it, hr + 1. */
        int sc[64], sd[64], rc[64], rd[64], sbuf[4096];
        int sat = 0, rat = 0;
        for (int q = 0; q < rsize_want; q++) {
            sc[q] = q + 1, sd[q] = sat, rc[q] = hr + 1, rd[q] = rat;
            for (int i = 0; i < q + 1; i++)
                sbuf[sat + i] = 10000 * rank + 100 * q + i;
            sat += q + 1, rat += hr + 1;
        }
        for (int i = 0; i < 4096; i++)
            vbuf[i] = -1;
        CHECK(NB_ALLTOALLV(sbuf, sc, sd, MPI_INT, vbuf, rc, rd, MPI_INT, ic) == MPI_SUCCESS);
        for (int q = 0; q < rsize_want; q++)
            for (int i = 0; i < hr + 1; i++)
                CHECK(vbuf[rd[q] + i] == 10000 * (first + q) + 100 * hr + i);
        /* Alltoallw: as the Alltoallv above, with byte displacements and a
         * type per part (MPI_INT, or MPI_BYTE counts for odd q). */
        {
            int wsc[64], wsd[64], wrc[64], wrd[64];
            MPI_Datatype wst[64], wrt[64];
            for (int q = 0; q < rsize_want; q++) {
                int odd = q % 2;
                wsc[q] = odd ? 4 * sc[q] : sc[q], wsd[q] = 4 * sd[q], wst[q] = odd ? MPI_BYTE : MPI_INT;
                wrc[q] = rc[q], wrd[q] = 4 * rd[q], wrt[q] = MPI_INT;
            }
            for (int i = 0; i < 4096; i++)
                vbuf[i] = -1;
            CHECK(NB_ALLTOALLW(sbuf, wsc, wsd, wst, vbuf, wrc, wrd, wrt, ic) == MPI_SUCCESS);
            for (int q = 0; q < rsize_want; q++)
                for (int i = 0; i < hr + 1; i++)
                    CHECK(vbuf[rd[q] + i] == 10000 * (first + q) + 100 * hr + i);
        }
        /* Reduce_scatter: the remote group's sum, block i (i + 1 longs... as
         * ints) to local rank i; both groups' totals agree (lsize and
         * rsize_want halves: the counts are spread to make them so). */
        {
            int total = 2 * size, rcounts[64], mysum = 0;
            for (int i = 0; i < lsize; i++)
                rcounts[i] = total / lsize + (i < total % lsize);
            int vec[256], outv[256], off = 0;
            for (int i = 0; i < total; i++)
                vec[i] = rank * 1000 + i;
            for (int i = 0; i < hr; i++)
                off += rcounts[i];
            for (int i = 0; i < 256; i++)
                outv[i] = -1;
            CHECK(NB_REDUCE_SCATTER(vec, outv, rcounts, MPI_INT, MPI_SUM, ic) == MPI_SUCCESS);
            for (int q = 0; q < rsize_want; q++)
                mysum += (first + q) * 1000;
            for (int i = 0; i < rcounts[hr]; i++)
                CHECK(outv[i] == mysum + rsize_want * (off + i));
            CHECK(outv[rcounts[hr]] == -1);
            int blk = 3;
            if ((lsize * blk) == (rsize_want * blk)) {
                CHECK(NB_REDUCE_SCATTER_BLOCK(vec, outv, blk, MPI_INT, MPI_SUM, ic) == MPI_SUCCESS);
                for (int i = 0; i < blk; i++)
                    CHECK(outv[i] == mysum + rsize_want * (hr * blk + i));
            }
        }
    }

    /* Non-blocking collectives outstanding together, completed by one
     * MPI_Waitall: an allreduce, a bcast from the low group's rank 0 and
     * an alltoall. */
    {
        MPI_Request rq[3];
        long s1 = rank + 1, g1 = -1, want1 = 0;
        int b1 = low && hr == 0 ? 99 : -1, t1[64], f1[64];
        int r1 = low ? (hr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        for (int q = 0; q < rsize_want; q++)
            t1[q] = 100 * rank + q, f1[q] = -1, want1 += first + q + 1;
        CHECK(MPI_Iallreduce(&s1, &g1, 1, MPI_LONG, MPI_SUM, ic, &rq[0]) == MPI_SUCCESS);
        CHECK(MPI_Ibcast(&b1, 1, MPI_INT, r1, ic, &rq[1]) == MPI_SUCCESS);
        CHECK(MPI_Ialltoall(t1, 1, MPI_INT, f1, 1, MPI_INT, ic, &rq[2]) == MPI_SUCCESS);
        CHECK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
        CHECK(g1 == want1);
        CHECK(b1 == (low && hr != 0 ? -1 : 99));
        for (int q = 0; q < rsize_want; q++)
            CHECK(f1[q] == 100 * (first + q) + hr);
    }

    /* Split_type: shared memory joins everyone; MPI_UNDEFINED gives
     * MPI_COMM_NULL. */
    {
        MPI_Comm st;
        CHECK(MPI_Comm_split_type(ic, MPI_COMM_TYPE_SHARED, hr, MPI_INFO_NULL, &st) == MPI_SUCCESS);
        CHECK(st != MPI_COMM_NULL);
        CHECK(MPI_Comm_test_inter(st, &flag) == MPI_SUCCESS && flag == 1);
        CHECK(MPI_Comm_remote_size(st, &n) == MPI_SUCCESS && n == rsize_want);
        CHECK(MPI_Comm_free(&st) == MPI_SUCCESS);
        CHECK(MPI_Comm_split_type(ic, MPI_UNDEFINED, 0, MPI_INFO_NULL, &st) == MPI_SUCCESS &&
              st == MPI_COMM_NULL);
    }

    /* What is not implemented on an intercommunicator says so. */
    {
        MPI_Group lg;
        MPI_Comm made;
        CHECK(MPI_Comm_group(ic, &lg) == MPI_SUCCESS);
        CHECK(class_of(MPI_Comm_create(ic, lg, &made)) == MPI_ERR_UNSUPPORTED_OPERATION);
        MPI_Group_free(&lg);
    }

    /* Split by parity of the local rank, in reverse order: the parts of
     * the same parity in both groups are joined (none where the other
     * group has no such rank). */
    MPI_Comm sp;
    int color = hr % 2;
    CHECK(MPI_Comm_split(ic, color, -hr, &sp) == MPI_SUCCESS);
    int lcount = 0, rcount = 0, rtop = -1, mypos = 0;
    for (int i = 0; i < lsize; i++)
        if (i % 2 == color) {
            lcount++;
            if (i > hr)
                mypos++;
        }
    for (int q = 0; q < rsize_want; q++)
        if (q % 2 == color)
            rcount++, rtop = q;
    if (rcount == 0) {
        CHECK(sp == MPI_COMM_NULL);
    } else {
        CHECK(sp != MPI_COMM_NULL);
        CHECK(MPI_Comm_test_inter(sp, &flag) == MPI_SUCCESS && flag == 1);
        CHECK(MPI_Comm_size(sp, &n) == MPI_SUCCESS && n == lcount);
        CHECK(MPI_Comm_rank(sp, &n) == MPI_SUCCESS && n == mypos);
        CHECK(MPI_Comm_remote_size(sp, &n) == MPI_SUCCESS && n == rcount);
        /* Each part's rank 0 (its highest local rank) tells the other's. */
        if (mypos == 0) {
            int got = -1;
            CHECK(MPI_Sendrecv(&rank, 1, MPI_INT, 0, 6, &got, 1, MPI_INT, 0, 6, sp,
                               MPI_STATUS_IGNORE) == MPI_SUCCESS);
            CHECK(got == first + rtop);
        }
        int top = -1;
        CHECK(MPI_Allreduce(&rank, &top, 1, MPI_INT, MPI_MAX, sp) == MPI_SUCCESS);
        CHECK(top == first + rtop);
        CHECK(MPI_Comm_free(&sp) == MPI_SUCCESS);
    }
    CHECK(MPI_Comm_split(ic, MPI_UNDEFINED, 0, &sp) == MPI_SUCCESS && sp == MPI_COMM_NULL);

    /* Dup: the same groups, its own context. */
    MPI_Comm dup;
    CHECK(MPI_Comm_dup(ic, &dup) == MPI_SUCCESS);
    CHECK(MPI_Comm_test_inter(dup, &flag) == MPI_SUCCESS && flag == 1);
    CHECK(MPI_Comm_remote_size(dup, &n) == MPI_SUCCESS && n == rsize_want);
    int x = -1;
    if (hr == 0) {
        /* A message on ic must not be received on dup. */
        CHECK(MPI_Send(&rank, 1, MPI_INT, 0, 9, ic) == MPI_SUCCESS);
        CHECK(MPI_Send(&hr, 1, MPI_INT, 0, 9, dup) == MPI_SUCCESS);
        CHECK(MPI_Recv(&x, 1, MPI_INT, 0, 9, dup, MPI_STATUS_IGNORE) == MPI_SUCCESS && x == 0);
        CHECK(MPI_Recv(&x, 1, MPI_INT, 0, 9, ic, MPI_STATUS_IGNORE) == MPI_SUCCESS && x == first);
    }
    int top = -1;
    CHECK(MPI_Allreduce(&rank, &top, 1, MPI_INT, MPI_MAX, dup) == MPI_SUCCESS);
    CHECK(top == first + rsize_want - 1);
    CHECK(MPI_Comm_free(&dup) == MPI_SUCCESS);

    /* Merge: low first, then high first. */
    MPI_Comm m;
    int mr = -1, ms = -1;
    CHECK(MPI_Intercomm_merge(ic, !low, &m) == MPI_SUCCESS);
    MPI_Comm_rank(m, &mr);
    MPI_Comm_size(m, &ms);
    CHECK(ms == size && mr == rank);
    MPI_Comm_free(&m);
    CHECK(MPI_Intercomm_merge(ic, low, &m) == MPI_SUCCESS);
    MPI_Comm_rank(m, &mr);
    CHECK(mr == (low ? rsize_want + hr : hr));
    int s = -1;
    CHECK(MPI_Allreduce(&rank, &s, 1, MPI_INT, MPI_SUM, m) == MPI_SUCCESS);
    CHECK(s == size * (size - 1) / 2);
    MPI_Comm_free(&m);
    CHECK(class_of(MPI_Intercomm_merge(half, 0, &m)) == MPI_ERR_COMM);

    CHECK(MPI_Comm_free(&ic) == MPI_SUCCESS && ic == MPI_COMM_NULL);
    MPI_Comm_free(&half);

    /* The same halves from groups alone (MPI 4): the high half's last
     * rank leads it. */
    {
        MPI_Group world_g, lo_g, hi_g;
        MPI_Comm_group(MPI_COMM_WORLD, &world_g);
        int lo_r[1][3] = {{0, size / 2 - 1, 1}}, hi_r[1][3] = {{size / 2, size - 1, 1}};
        MPI_Group_range_incl(world_g, 1, lo_r, &lo_g);
        MPI_Group_range_incl(world_g, 1, hi_r, &hi_g);
        MPI_Comm fg;
        CHECK(MPI_Intercomm_create_from_groups(low ? lo_g : hi_g, low ? 0 : lsize - 1,
                                               low ? hi_g : lo_g, low ? rsize_want - 1 : 0,
                                               "pertinax-inter", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                               &fg) == MPI_SUCCESS);
        CHECK(MPI_Comm_test_inter(fg, &flag) == MPI_SUCCESS && flag == 1);
        CHECK(MPI_Comm_size(fg, &n) == MPI_SUCCESS && n == lsize);
        CHECK(MPI_Comm_remote_size(fg, &n) == MPI_SUCCESS && n == rsize_want);
        int top = -1;
        CHECK(MPI_Allreduce(&rank, &top, 1, MPI_INT, MPI_MAX, fg) == MPI_SUCCESS);
        CHECK(top == first + rsize_want - 1);
        MPI_Comm_free(&fg);
        MPI_Group_free(&lo_g);
        MPI_Group_free(&hi_g);
        MPI_Group_free(&world_g);
    }
}

static void spawn(const char *self) {
    MPI_Comm parent;
    CHECK(MPI_Comm_get_parent(&parent) == MPI_SUCCESS && parent == MPI_COMM_NULL);
    MPI_Comm kids;
    int codes[CHILDREN] = {-1, -1};
    char *args[] = {"child", NULL};
    CHECK(MPI_Comm_spawn(self, args, CHILDREN, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &kids, codes) ==
          MPI_SUCCESS);
    if (rank == 0)
        CHECK(codes[0] == MPI_SUCCESS && codes[1] == MPI_SUCCESS);
    int flag = 0, n = -1;
    CHECK(MPI_Comm_test_inter(kids, &flag) == MPI_SUCCESS && flag);
    CHECK(MPI_Comm_remote_size(kids, &n) == MPI_SUCCESS && n == CHILDREN);
    MPI_Comm_set_errhandler(kids, MPI_ERRORS_RETURN);
    if (rank == 0)
        for (int c = 0; c < CHILDREN; c++) {
            int v = 1000 + c;
            CHECK(MPI_Send(&v, 1, MPI_INT, c, 5, kids) == MPI_SUCCESS);
        }
    int v = 77;
    CHECK(MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, kids) == MPI_SUCCESS);
    v = -1;
    CHECK(MPI_Bcast(&v, 1, MPI_INT, 0, kids) == MPI_SUCCESS && v == 88);
    MPI_Comm all;
    CHECK(MPI_Intercomm_merge(kids, 0, &all) == MPI_SUCCESS);
    int ar = -1, as = -1;
    MPI_Comm_rank(all, &ar);
    MPI_Comm_size(all, &as);
    CHECK(as == size + CHILDREN && ar == rank);
    int sum = -1;
    CHECK(MPI_Allreduce(&ar, &sum, 1, MPI_INT, MPI_SUM, all) == MPI_SUCCESS);
    CHECK(sum == as * (as - 1) / 2);
    MPI_Comm_free(&all);
    CHECK(MPI_Comm_disconnect(&kids) == MPI_SUCCESS && kids == MPI_COMM_NULL);

    /* More than the room left (the default room is the number of ranks,
     * 2 of which are used): MPI_ERR_SPAWN everywhere, nothing started. */
    MPI_Comm extra = MPI_COMM_WORLD;
    char *idle[] = {"idle", NULL};
    int rc = MPI_Comm_spawn(self, idle, size - 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &extra,
                            MPI_ERRCODES_IGNORE);
    CHECK(class_of(rc) == MPI_ERR_SPAWN && extra == MPI_COMM_NULL);

    /* More than the launcher may ever start: MPI_ERR_SPAWN everywhere,
     * with the error codes, and no communicator. */
    int many[64];
    for (int i = 0; i < 64; i++)
        many[i] = -1;
    MPI_Comm none = MPI_COMM_WORLD;
    rc = MPI_Comm_spawn(self, args, 64, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &none, many);
    CHECK(class_of(rc) == MPI_ERR_SPAWN && none == MPI_COMM_NULL);
    if (rank == 0)
        CHECK(class_of(many[0]) == MPI_ERR_SPAWN && class_of(many[63]) == MPI_ERR_SPAWN);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm parent;
    CHECK(MPI_Comm_get_parent(&parent) == MPI_SUCCESS);
    if (parent != MPI_COMM_NULL && argc == 2 && strcmp(argv[1], "idle") == 0) {
        /* Started by a spawn that should have failed: say so. */
        printf("FAIL inter: an idle child was started\n");
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    if (parent != MPI_COMM_NULL) {
        CHECK(argc == 2 && strcmp(argv[1], "child") == 0);
        MPI_Comm again;
        CHECK(MPI_Comm_get_parent(&again) == MPI_SUCCESS && again == parent);
        return child(parent);
    }
    CHECK(size >= 2 && size <= 64);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    intercomms();
    spawn(argv[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("OK inter rank=%d\n", rank);
    MPI_Finalize();
    return 0;
}
