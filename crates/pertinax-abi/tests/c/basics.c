/* pertinax-abi: an unchanged C MPI program (built with MPICH's mpicc)
 * checking point-to-point, requests, collectives, communicators, groups,
 * errors and attributes. Prints "OK basics rank=R" when every check held. */
#include "check.h"
#include <string.h>

int main(int argc, char **argv) {
    int provided = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    CHECK(provided == MPI_THREAD_SERIALIZED);
    int flag = 0;
    MPI_Initialized(&flag);
    CHECK(flag);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2);
    int v, sv;
    MPI_Get_version(&v, &sv);
    CHECK(v == MPI_VERSION);

    /* A ring: blocking send and receive, with the status. */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    long token = 1000 + rank, got = -1;
    MPI_Status st;
    MPI_Sendrecv(&token, 1, MPI_LONG, next, 7, &got, 1, MPI_LONG, prev, 7,
                 MPI_COMM_WORLD, &st);
    CHECK(got == 1000 + prev && st.MPI_SOURCE == prev && st.MPI_TAG == 7);
    int count = -1;
    MPI_Get_count(&st, MPI_LONG, &count);
    CHECK(count == 1);

    /* Non-blocking, every size class, any source. */
    for (int n = 1; n <= 1 << 20; n *= 32) {
        double *out = malloc(n * sizeof(double)), *in = malloc(n * sizeof(double));
        for (int i = 0; i < n; i++) out[i] = rank * 1e6 + i;
        MPI_Request r[2];
        MPI_Irecv(in, n, MPI_DOUBLE, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(out, n, MPI_DOUBLE, next, 9, MPI_COMM_WORLD, &r[1]);
        MPI_Status sts[2];
        MPI_Waitall(2, r, sts);
        CHECK(r[0] == MPI_REQUEST_NULL && sts[0].MPI_SOURCE == prev);
        for (int i = 0; i < n; i++) CHECK(in[i] == prev * 1e6 + i);
        free(out);
        free(in);
    }

    /* A probe sizes an unknown message. */
    if (rank == 0) {
        int msg[5] = {1, 2, 3, 4, 5};
        MPI_Send(msg, 5, MPI_INT, 1, 11, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Probe(0, 11, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(count == 5);
        int msg[5];
        MPI_Recv(msg, count, MPI_INT, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(msg[4] == 5);
    }

    /* Truncation is an error the program can see, and consumes the message. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rank == 0) {
        int msg[4] = {1, 2, 3, 4};
        MPI_Send(msg, 4, MPI_INT, 1, 12, MPI_COMM_WORLD);
        MPI_Send(msg, 1, MPI_INT, 1, 12, MPI_COMM_WORLD);
    } else if (rank == 1) {
        int small[2];
        int rc = MPI_Recv(small, 2, MPI_INT, 0, 12, MPI_COMM_WORLD, &st);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE);
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        CHECK(len > 0 && strlen(text) == (size_t)len);
        rc = MPI_Recv(small, 2, MPI_INT, 0, 12, MPI_COMM_WORLD, &st);
        CHECK(rc == MPI_SUCCESS && small[0] == 1);
    }
    /* Bad arguments are errors, not crashes. */
    CHECK(MPI_Send(&v, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD) == MPI_ERR_RANK);
    CHECK(MPI_Send(&v, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD) == MPI_ERR_TYPE);
    CHECK(MPI_Barrier(MPI_COMM_NULL) != MPI_SUCCESS);
    /* What is not implemented says so. */
    MPIX_Stream stream;
    CHECK(MPIX_Stream_create(MPI_INFO_NULL, &stream) == MPI_ERR_UNSUPPORTED_OPERATION);

    /* Collectives. */
    MPI_Barrier(MPI_COMM_WORLD);
    int root_val = rank == 0 ? 42 : 0;
    MPI_Bcast(&root_val, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(root_val == 42);
    double x = rank + 1, sum = 0;
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size * (size + 1) / 2.0);
    long mx = rank;
    MPI_Allreduce(MPI_IN_PLACE, &mx, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    CHECK(mx == size - 1);
    int pair[2] = {rank == 1 ? -5 : rank, rank}, res[2];
    MPI_Allreduce(pair, res, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
    CHECK(res[0] == -5 && res[1] == 1);
    int prod = 0;
    MPI_Reduce(&rank, &prod, 1, MPI_INT, MPI_BOR, size - 1, MPI_COMM_WORLD);
    if (rank == size - 1) {
        int want = 0;
        for (int i = 0; i < size; i++) want |= i;
        CHECK(prod == want);
    }
    int *all = malloc(size * sizeof(int));
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++) CHECK(all[i] == i);
    int *to = malloc(size * sizeof(int)), *from = malloc(size * sizeof(int));
    for (int i = 0; i < size; i++) to[i] = rank * 100 + i;
    MPI_Alltoall(to, 1, MPI_INT, from, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++) CHECK(from[i] == i * 100 + rank);
    int mine = -1;
    MPI_Scatter(to, 1, MPI_INT, &mine, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(mine == rank);
    MPI_Gather(&mine, 1, MPI_INT, all, 1, MPI_INT, 1, MPI_COMM_WORLD);
    if (rank == 1)
        for (int i = 0; i < size; i++) CHECK(all[i] == i);

    /* Communicators and groups. */
    MPI_Comm half, dup;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    int hr, hs;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    CHECK(hs == (size + 1 - rank % 2) / 2);
    int hsum = 0;
    MPI_Allreduce(&rank, &hsum, 1, MPI_INT, MPI_SUM, half);
    int want = 0;
    for (int i = rank % 2; i < size; i += 2) want += i;
    CHECK(hsum == want);
    MPI_Comm_dup(half, &dup);
    int cmp = -1;
    MPI_Comm_compare(half, dup, &cmp);
    CHECK(cmp == MPI_CONGRUENT);
    MPI_Group wg, hg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(half, &hg);
    int zero = 0, in_world = -1;
    MPI_Group_translate_ranks(hg, 1, &zero, wg, &in_world);
    CHECK(in_world >= 0 && in_world % 2 == rank % 2);
    MPI_Group_free(&wg);
    MPI_Group_free(&hg);
    CHECK(hg == MPI_GROUP_NULL);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
    CHECK(half == MPI_COMM_NULL);
    int undef_color;
    MPI_Comm none;
    undef_color = rank == 0 ? MPI_UNDEFINED : 1;
    MPI_Comm_split(MPI_COMM_WORLD, undef_color, 0, &none);
    CHECK((rank == 0) == (none == MPI_COMM_NULL));
    if (none != MPI_COMM_NULL) MPI_Comm_free(&none);

    /* Attributes. */
    int *ub = NULL;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    CHECK(flag && *ub >= 32767);
    double t0 = MPI_Wtime();
    CHECK(MPI_Wtime() >= t0 && MPI_Wtick() > 0);

    free(all);
    free(to);
    free(from);
    MPI_Finalize();
    MPI_Finalized(&flag);
    CHECK(flag);
    printf("OK basics rank=%d\n", rank);
    return 0;
}
