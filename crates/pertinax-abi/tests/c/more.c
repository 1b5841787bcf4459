/* pertinax-abi: request calls (Testall, Testany, Testsome, Waitsome,
 * Cancel, Request_get_status), send modes (Bsend with an attached buffer,
 * Rsend, Sendrecv_replace), scans and reduce-scatter, Reduce_local and
 * user operations (commutative or not), user error classes, codes and
 * strings. Prints "OK more rank=R". */
#include "check.h"

/* a op b = a: associative, not commutative (the leftmost wins). */
static void first(void *in, void *inout, int *len, MPI_Datatype *ty) {
    (void)ty;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] = ((int *)in)[i];
}
/* a op b = a + b, commutative. */
static void add(void *in, void *inout, int *len, MPI_Datatype *ty) {
    (void)ty;
    for (int i = 0; i < *len; i++) ((long *)inout)[i] += ((long *)in)[i];
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    /* Testany / Testsome / Testall / Waitsome over a ring. */
    int out[3] = {rank, rank + 10, rank + 20}, in[3] = {-1, -1, -1};
    MPI_Request r[6];
    for (int i = 0; i < 3; i++) {
        MPI_Irecv(&in[i], 1, MPI_INT, prev, i, MPI_COMM_WORLD, &r[i]);
        MPI_Isend(&out[i], 1, MPI_INT, next, i, MPI_COMM_WORLD, &r[3 + i]);
    }
    int flag = 0, idx = -1, outcount = 0, indices[6], done = 0;
    MPI_Status sts[6];
    while (!flag) MPI_Testany(6, r, &idx, &flag, MPI_STATUS_IGNORE);
    CHECK(idx >= 0 && idx < 6 && r[idx] == MPI_REQUEST_NULL);
    done = 1;
    while (done < 6) {
        MPI_Waitsome(6, r, &outcount, indices, sts);
        CHECK(outcount != MPI_UNDEFINED && outcount >= 1);
        done += outcount;
    }
    for (int i = 0; i < 3; i++) CHECK(in[i] == prev + 10 * i);
    MPI_Testsome(6, r, &outcount, indices, sts);
    CHECK(outcount == MPI_UNDEFINED);
    flag = 0;
    MPI_Testall(6, r, &flag, MPI_STATUSES_IGNORE);
    CHECK(flag);

    /* Request_get_status leaves the request to its wait. */
    int v = rank, w = -1;
    MPI_Request rr, rs;
    MPI_Irecv(&w, 1, MPI_INT, prev, 50, MPI_COMM_WORLD, &rr);
    MPI_Isend(&v, 1, MPI_INT, next, 50, MPI_COMM_WORLD, &rs);
    MPI_Status st;
    flag = 0;
    while (!flag) MPI_Request_get_status(rr, &flag, &st);
    CHECK(rr != MPI_REQUEST_NULL && st.MPI_SOURCE == prev);
    MPI_Wait(&rr, &st);
    CHECK(rr == MPI_REQUEST_NULL && w == prev && st.MPI_SOURCE == prev);
    MPI_Wait(&rs, MPI_STATUS_IGNORE);

    /* Cancel a receive nobody matches. */
    MPI_Irecv(&w, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &rr);
    MPI_Cancel(&rr);
    MPI_Wait(&rr, &st);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    CHECK(cancelled);

    /* Buffered, ready, sendrecv_replace. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(MPI_Bsend(&v, 1, MPI_INT, next, 60, MPI_COMM_WORLD) == MPI_ERR_BUFFER);
    int bsize = 4 * (sizeof(double) * 1000 + MPI_BSEND_OVERHEAD);
    void *bbuf = malloc(bsize);
    MPI_Buffer_attach(bbuf, bsize);
    double big[1000];
    for (int i = 0; i < 1000; i++) big[i] = rank + i;
    MPI_Bsend(big, 1000, MPI_DOUBLE, next, 61, MPI_COMM_WORLD);
    double got[1000];
    MPI_Recv(got, 1000, MPI_DOUBLE, prev, 61, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 1000; i++) CHECK(got[i] == prev + i);
    void *back;
    int bs;
    MPI_Buffer_detach(&back, &bs);
    CHECK(back == bbuf && bs == bsize);
    free(bbuf);
    MPI_Irecv(&w, 1, MPI_INT, prev, 62, MPI_COMM_WORLD, &rr);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Rsend(&v, 1, MPI_INT, next, 62, MPI_COMM_WORLD);
    MPI_Wait(&rr, MPI_STATUS_IGNORE);
    CHECK(w == prev);
    int x = rank;
    MPI_Sendrecv_replace(&x, 1, MPI_INT, next, 63, prev, 63, MPI_COMM_WORLD, &st);
    CHECK(x == prev && st.MPI_SOURCE == prev);

    /* Scans and reduce-scatter. */
    long one = rank + 1, scan = 0, ex = -7;
    MPI_Scan(&one, &scan, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(scan == (long)(rank + 1) * (rank + 2) / 2);
    MPI_Exscan(&one, &ex, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank > 0) CHECK(ex == (long)rank * (rank + 1) / 2);
    int *parts = malloc(2 * size * sizeof(int)), mine[2];
    for (int i = 0; i < 2 * size; i++) parts[i] = i;
    MPI_Reduce_scatter_block(parts, mine, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(mine[0] == 2 * rank * size && mine[1] == (2 * rank + 1) * size);
    int *counts = malloc(size * sizeof(int));
    int total = 0;
    for (int i = 0; i < size; i++) total += counts[i] = i + 1;
    int *all = malloc(total * sizeof(int)), *part = malloc((rank + 1) * sizeof(int));
    for (int i = 0; i < total; i++) all[i] = 1;
    MPI_Reduce_scatter(all, part, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i <= rank; i++) CHECK(part[i] == size);

    /* User operations. */
    MPI_Op op_first, op_add;
    MPI_Op_create(first, 0, &op_first);
    MPI_Op_create(add, 1, &op_add);
    int commute = -1;
    MPI_Op_commutative(op_first, &commute);
    CHECK(commute == 0);
    int me = 100 + rank, r0 = -1, sc = -1;
    MPI_Allreduce(&me, &r0, 1, MPI_INT, op_first, MPI_COMM_WORLD);
    CHECK(r0 == 100);
    MPI_Scan(&me, &sc, 1, MPI_INT, op_first, MPI_COMM_WORLD);
    CHECK(sc == 100);
    long lv[2] = {rank, 2 * rank}, ls[2];
    MPI_Allreduce(lv, ls, 2, MPI_LONG, op_add, MPI_COMM_WORLD);
    CHECK(ls[0] == (long)size * (size - 1) / 2 && ls[1] == 2 * ls[0]);
    int a[2] = {1, 2}, b[2] = {10, 20};
    MPI_Reduce_local(a, b, 2, MPI_INT, MPI_SUM);
    CHECK(b[0] == 11 && b[1] == 22);
    MPI_Reduce_local(a, b, 2, MPI_INT, op_first);
    CHECK(b[0] == 1 && b[1] == 2);
    MPI_Op_free(&op_first);
    MPI_Op_free(&op_add);
    CHECK(op_first == MPI_OP_NULL);

    free(parts);
    free(counts);
    free(all);
    free(part);

    /* User error classes, codes and strings. */
    {
        int cls, code, code2, c, len, flag, *last;
        char text[MPI_MAX_ERROR_STRING];
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        CHECK(MPI_Add_error_class(&cls) == MPI_SUCCESS);
        CHECK(cls > MPI_ERR_LASTCODE);
        CHECK(MPI_Add_error_code(cls, &code) == MPI_SUCCESS);
        CHECK(MPI_Add_error_code(MPI_ERR_TAG, &code2) == MPI_SUCCESS);
        CHECK(code != cls && code2 != code && code2 != cls);
        CHECK(MPI_Error_class(code, &c) == MPI_SUCCESS && c == cls);
        CHECK(MPI_Error_class(cls, &c) == MPI_SUCCESS && c == cls);
        CHECK(MPI_Error_class(code2, &c) == MPI_SUCCESS && c == MPI_ERR_TAG);
        CHECK(MPI_Add_error_code(cls + 1000, &c) == MPI_ERR_ARG); /* not a class */
        CHECK(MPI_Add_error_string(code, "pertinax test code") == MPI_SUCCESS);
        CHECK(MPI_Error_string(code, text, &len) == MPI_SUCCESS);
        CHECK(len == 18 && text[0] == 'p' && text[17] == 'e' && text[18] == 0);
        CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag) == MPI_SUCCESS);
        CHECK(flag && *last >= code2 && *last >= code && *last >= cls);
        /* Removal: a code with a string, a class with codes: erroneous. */
        CHECK(MPI_Remove_error_code(code) == MPI_ERR_ARG);
        CHECK(MPI_Remove_error_class(cls) == MPI_ERR_ARG);
        CHECK(MPI_Remove_error_string(code) == MPI_SUCCESS);
        CHECK(MPI_Remove_error_code(code) == MPI_SUCCESS);
        CHECK(MPI_Error_class(code, &c) == MPI_ERR_ARG);
        CHECK(MPI_Remove_error_class(cls) == MPI_SUCCESS);
        CHECK(MPI_Remove_error_code(code2) == MPI_SUCCESS);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }
    MPI_Finalize();
    printf("OK more rank=%d\n", rank);
    return 0;
}
