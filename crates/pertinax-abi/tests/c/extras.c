/* pertinax-abi: the calls mpi4py's suite needs beyond the others: the
 * large-count envelope and contents, MPI_Get_address, value-index pair
 * types, the F90 types, datatype attributes, the large-count scans and
 * reduce-scatters, the persistent v-collectives, scans and
 * reduce-scatters, Alloc_mem/Free_mem, Comm_dup_with_info,
 * Comm_idup_with_info, Comm_call_errhandler, the references of error
 * handlers (Errhandler_free) and the status conversions.
 * Prints "OK extras rank=R". */
#include <stddef.h>
#include <string.h>

#include "check.h"

static int deleted, handled, handled_code;

static int count_delete(MPI_Datatype t, int k, void *v, void *extra) {
    (void)t, (void)k, (void)extra;
    deleted += (int)(size_t)v;
    return MPI_SUCCESS;
}

static void record(MPI_Comm *c, int *code, ...) {
    (void)c;
    handled++;
    handled_code = *code;
}

/* Starts persistent request `r` twice, waiting for each. */
static void twice(MPI_Request *r, void (*before)(int round), void (*after)(int round)) {
    for (int round = 0; round < 2; round++) {
        before(round);
        MPI_Start(r);
        MPI_Wait(r, MPI_STATUS_IGNORE);
        CHECK(*r != MPI_REQUEST_NULL);
        after(round);
    }
    MPI_Request_free(r);
    CHECK(*r == MPI_REQUEST_NULL);
}

/* MPI_Errhandler_free frees the handle only: a handler set on a
 * communicator stays valid for it and its duplicates until the last is
 * freed; MPI_Comm_get_errhandler gives a handle of its own; a freed
 * handle is MPI_ERR_ERRHANDLER. */
static void errhandler_refs(void) {
    MPI_Comm a, b;
    MPI_Errhandler eh, copy, got;
    int x = 0;
    handled = 0;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    CHECK(MPI_Comm_create_errhandler(record, &eh) == MPI_SUCCESS);
    CHECK(MPI_Comm_set_errhandler(a, eh) == MPI_SUCCESS);
    copy = eh;
    CHECK(MPI_Errhandler_free(&eh) == MPI_SUCCESS && eh == MPI_ERRHANDLER_NULL);
    CHECK(MPI_Comm_call_errhandler(a, MPI_ERR_OTHER) == MPI_SUCCESS);
    CHECK(handled == 1 && handled_code == MPI_ERR_OTHER);
    /* A duplicate takes the handler; the original goes. */
    MPI_Comm_dup(a, &b);
    MPI_Comm_free(&a);
    CHECK(MPI_Comm_call_errhandler(b, MPI_ERR_ARG) == MPI_SUCCESS);
    CHECK(handled == 2 && handled_code == MPI_ERR_ARG);
    CHECK(MPI_Send(&x, 1, MPI_INT, size + 3, 0, b) == MPI_ERR_RANK);
    CHECK(handled == 3 && handled_code == MPI_ERR_RANK);
    /* The freed handle is invalid: set, or freed again. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, copy) == MPI_ERR_ERRHANDLER);
    got = copy;
    CHECK(MPI_Errhandler_free(&got) == MPI_ERR_ERRHANDLER);
    /* Get gives a new handle, which may be set, and is freed. */
    CHECK(MPI_Comm_get_errhandler(b, &got) == MPI_SUCCESS && got == copy);
    CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, got) == MPI_SUCCESS);
    CHECK(MPI_Errhandler_free(&got) == MPI_SUCCESS);
    MPI_Comm_free(&b);
    CHECK(MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_OTHER) == MPI_SUCCESS);
    CHECK(handled == 4);
    CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL) == MPI_SUCCESS);
    /* No handle and no communicator left: the handler is gone, and its
     * slot serves the next one (pertinax reuses slots). */
    got = copy;
    CHECK(MPI_Errhandler_free(&got) == MPI_ERR_ERRHANDLER);
    CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, copy) == MPI_ERR_ERRHANDLER);
    CHECK(MPI_Comm_create_errhandler(record, &eh) == MPI_SUCCESS && eh == copy);
    CHECK(MPI_Errhandler_free(&eh) == MPI_SUCCESS);
    /* A predefined handler's handle (as get gives it) is freed too. */
    CHECK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got) == MPI_SUCCESS);
    CHECK(got == MPI_ERRORS_RETURN);
    CHECK(MPI_Errhandler_free(&got) == MPI_SUCCESS && got == MPI_ERRHANDLER_NULL);
    CHECK(MPI_Errhandler_free(&got) == MPI_ERR_ERRHANDLER);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* The buffers of the persistent collectives (at most 4 ranks, 2 each). */
static int sbuf[32], rbuf[32], counts[4], displs[4], rcounts[4], rdispls[4];

static void fill(int round) {
    for (int i = 0; i < 32; i++) {
        sbuf[i] = 1000 * round + 100 * rank + i;
        rbuf[i] = -1;
    }
}
/* Gatherv to root 1 % size: rank r sends r + 1 values, placed at 2r. */
static void gatherv_after(int round) {
    if (rank != 1 % size) return;
    for (int r = 0; r < size; r++)
        for (int i = 0; i < 4; i++)
            CHECK(rbuf[4 * r + i] == (i < r + 1 ? 1000 * round + 100 * r + i : -1));
}
/* Scatterv from root 0: rank r gets r + 1 values from 4r. */
static void scatterv_after(int round) {
    for (int i = 0; i < 4; i++)
        CHECK(rbuf[i] == (i < rank + 1 ? 1000 * round + 4 * rank + i : -1));
}
/* Allgatherv: as gatherv, everywhere. */
static void allgatherv_after(int round) {
    for (int r = 0; r < size; r++)
        for (int i = 0; i < 4; i++)
            CHECK(rbuf[4 * r + i] == (i < r + 1 ? 1000 * round + 100 * r + i : -1));
}
/* Alltoallv: rank r sends rank d the value at 4d (one value). */
static void alltoallv_after(int round) {
    for (int s = 0; s < size; s++)
        CHECK(rbuf[2 * s] == 1000 * round + 100 * s + 4 * rank);
}
/* Scan of 2 values: the sums over ranks 0..rank. */
static void scan_after(int round) {
    for (int i = 0; i < 2; i++) {
        int want = 0;
        for (int r = 0; r <= rank; r++) want += 1000 * round + 100 * r + i;
        CHECK(rbuf[i] == want);
    }
}
static void exscan_after(int round) {
    if (rank == 0) return;
    for (int i = 0; i < 2; i++) {
        int want = 0;
        for (int r = 0; r < rank; r++) want += 1000 * round + 100 * r + i;
        CHECK(rbuf[i] == want);
    }
}
/* Reduce_scatter: rank r gets r + 1 sums, from the offset of its part. */
static void reduce_scatter_after(int round) {
    int off = rank * (rank + 1) / 2;
    for (int i = 0; i < 4; i++) {
        int want = 0;
        for (int r = 0; r < size; r++) want += 1000 * round + 100 * r + off + i;
        CHECK(rbuf[i] == (i < rank + 1 ? want : -1));
    }
}
/* Reduce_scatter_block of 2 each. */
static void reduce_scatter_block_after(int round) {
    for (int i = 0; i < 2; i++) {
        int want = 0;
        for (int r = 0; r < size; r++) want += 1000 * round + 100 * r + 2 * rank + i;
        CHECK(rbuf[i] == want);
    }
    CHECK(rbuf[2] == -1);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 4);

    /* The large-count envelope and contents of a vector. */
    MPI_Datatype vec, got;
    MPI_Type_vector(3, 2, 4, MPI_INT, &vec);
    MPI_Count ni = -1, na = -1, nl = -1, nd = -1;
    int combiner = -1;
    MPI_Type_get_envelope_c(vec, &ni, &na, &nl, &nd, &combiner);
    CHECK(ni == 3 && na == 0 && nl == 0 && nd == 1 && combiner == MPI_COMBINER_VECTOR);
    int ints[3] = {0, 0, 0};
    MPI_Aint addrs[1];
    MPI_Count larges[1];
    MPI_Type_get_contents_c(vec, 3, 0, 0, 1, ints, addrs, larges, &got);
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 4 && got == MPI_INT);

    /* Addresses: a struct's fields as C lays them out. */
    struct {
        char c;
        double d[2];
    } s;
    MPI_Aint a0, a1, a2;
    MPI_Get_address(&s, &a0);
    MPI_Get_address(&s.d[1], &a1);
    CHECK(a1 - a0 == (MPI_Aint)(offsetof(__typeof__(s), d) + sizeof(double)));
    CHECK(MPI_Aint_diff(a1, a0) == a1 - a0);
    MPI_Address(&s.c, &a2);
    CHECK(a2 == a0);

    /* Value-index pairs. */
    MPI_Datatype pair;
    MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &pair);
    CHECK(pair == MPI_DOUBLE_INT);
    MPI_Type_get_value_index(MPI_INT, MPI_INT, &pair);
    CHECK(pair == MPI_2INT);
    MPI_Type_get_value_index(MPI_SHORT, MPI_INT, &pair);
    CHECK(pair == MPI_SHORT_INT);
    MPI_Type_get_value_index(MPI_INT, MPI_FLOAT, &pair);
    CHECK(pair == MPI_DATATYPE_NULL);

    /* F90 types: the Fortran type of the range and precision. */
    MPI_Datatype f;
    int sz = 0, nint, naddr, ntypes;
    MPI_Type_create_f90_integer(9, &f);
    MPI_Type_size(f, &sz);
    CHECK(sz == 4);
    MPI_Type_get_envelope(f, &nint, &naddr, &ntypes, &combiner);
    CHECK(combiner == MPI_COMBINER_F90_INTEGER && nint == 1 && naddr == 0 && ntypes == 0);
    MPI_Type_get_contents(f, 1, 0, 0, ints, addrs, &got);
    CHECK(ints[0] == 9);
    MPI_Datatype f2;
    MPI_Type_create_f90_integer(9, &f2);
    CHECK(f2 == f);
    MPI_Type_create_f90_integer(3, &f);
    MPI_Type_size(f, &sz);
    CHECK(sz == 2);
    MPI_Type_create_f90_real(15, 300, &f);
    MPI_Type_size(f, &sz);
    CHECK(sz == 8);
    MPI_Type_get_envelope(f, &nint, &naddr, &ntypes, &combiner);
    CHECK(combiner == MPI_COMBINER_F90_REAL && nint == 2);
    MPI_Type_create_f90_complex(6, MPI_UNDEFINED, &f);
    MPI_Type_size(f, &sz);
    CHECK(sz == 8);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Type_create_f90_integer(40, &f), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* Datatype attributes: copied by dup (MPI_TYPE_DUP_FN), deleted by
     * free and delete_attr. */
    int key, flag = 0;
    void *val = NULL;
    MPI_Type_create_keyval(MPI_TYPE_DUP_FN, count_delete, &key, NULL);
    MPI_Datatype t, t2;
    MPI_Type_contiguous(2, MPI_INT, &t);
    MPI_Type_get_attr(t, key, &val, &flag);
    CHECK(!flag);
    MPI_Type_set_attr(t, key, (void *)(size_t)5);
    MPI_Type_get_attr(t, key, &val, &flag);
    CHECK(flag && val == (void *)(size_t)5);
    MPI_Type_set_attr(t, key, (void *)(size_t)7); /* deletes the 5 */
    CHECK(deleted == 5);
    MPI_Type_dup(t, &t2);
    MPI_Type_get_attr(t2, key, &val, &flag);
    CHECK(flag && val == (void *)(size_t)7);
    MPI_Type_free(&t);
    CHECK(deleted == 12);
    MPI_Type_delete_attr(t2, key);
    CHECK(deleted == 19);
    MPI_Type_get_attr(t2, key, &val, &flag);
    CHECK(!flag);
    MPI_Type_free(&t2);
    CHECK(deleted == 19);
    MPI_Type_free_keyval(&key);
    CHECK(key == MPI_KEYVAL_INVALID);

    /* The large-count scans and reduce-scatters, against sums computed
     * here. */
    long x[2] = {rank + 1, 10 * (rank + 1)}, y[2] = {-1, -1};
    MPI_Scan_c(x, y, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(y[0] == (rank + 1) * (rank + 2) / 2 && y[1] == 10 * y[0]);
    y[0] = y[1] = -1;
    MPI_Exscan_c(x, y, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank > 0) CHECK(y[0] == rank * (rank + 1) / 2 && y[1] == 10 * y[0]);
    long in[8], out[4];
    for (int i = 0; i < 2 * size; i++) in[i] = rank + i;
    MPI_Reduce_scatter_block_c(in, out, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < 2; i++)
        CHECK(out[i] == (long)size * (2 * rank + i) + (long)size * (size - 1) / 2);
    MPI_Count cc[4];
    int total = 0;
    for (int r = 0; r < size; r++) total += (int)(cc[r] = r % 2 + 1);
    for (int i = 0; i < total; i++) in[i] = 2 * rank + i;
    int off = 0;
    for (int r = 0; r < rank; r++) off += (int)cc[r];
    MPI_Reduce_scatter_c(in, out, cc, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < (int)cc[rank]; i++)
        CHECK(out[i] == (long)size * (off + i) + (long)size * (size - 1));
    long lin[2] = {3, 4}, lio[2] = {10, 20};
    MPI_Reduce_local_c(lin, lio, 2, MPI_LONG, MPI_PROD);
    CHECK(lio[0] == 30 && lio[1] == 80);

    /* Persistent collectives: each started twice, with new data. */
    MPI_Request r;
    for (int i = 0; i < size; i++) {
        counts[i] = i + 1;
        displs[i] = 4 * i;
    }
    MPI_Gatherv_init(sbuf, rank + 1, MPI_INT, rbuf, counts, displs, MPI_INT, 1 % size,
                     MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    twice(&r, fill, gatherv_after);
    MPI_Scatterv_init(sbuf, counts, displs, MPI_INT, rbuf, rank + 1, MPI_INT, 0, MPI_COMM_WORLD,
                      MPI_INFO_NULL, &r);
    /* Root 0's values are 1000 * round + i: what scatterv_after expects. */
    twice(&r, fill, scatterv_after);
    MPI_Allgatherv_init(sbuf, rank + 1, MPI_INT, rbuf, counts, displs, MPI_INT, MPI_COMM_WORLD,
                        MPI_INFO_NULL, &r);
    /* The arrays are the init's: changing them after does not matter. */
    counts[0] = 99;
    twice(&r, fill, allgatherv_after);
    MPI_Count ccounts[4], cc1[4];
    MPI_Aint cdispls[4], cd1[4];
    for (int i = 0; i < size; i++) {
        ccounts[i] = i + 1;
        cdispls[i] = 4 * i;
    }
    MPI_Allgatherv_init_c(sbuf, rank + 1, MPI_INT, rbuf, ccounts, cdispls, MPI_INT,
                          MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    twice(&r, fill, allgatherv_after);
    for (int i = 0; i < size; i++) {
        counts[i] = 1;
        displs[i] = 4 * i;
        rcounts[i] = 1;
        rdispls[i] = 2 * i;
        cc1[i] = 1;
        cd1[i] = 2 * i;
    }
    MPI_Alltoallv_init(sbuf, counts, displs, MPI_INT, rbuf, rcounts, rdispls, MPI_INT,
                       MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    twice(&r, fill, alltoallv_after);
    for (int i = 0; i < size; i++) cd1[i] = 4 * i;
    MPI_Count cr1[4];
    MPI_Aint crd[4];
    for (int i = 0; i < size; i++) {
        cr1[i] = 1;
        crd[i] = 2 * i;
    }
    MPI_Alltoallv_init_c(sbuf, cc1, cd1, MPI_INT, rbuf, cr1, crd, MPI_INT, MPI_COMM_WORLD,
                         MPI_INFO_NULL, &r);
    twice(&r, fill, alltoallv_after);
    MPI_Scan_init(sbuf, rbuf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    twice(&r, fill, scan_after);
    MPI_Scan_init_c(sbuf, rbuf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    twice(&r, fill, scan_after);
    MPI_Exscan_init(sbuf, rbuf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    twice(&r, fill, exscan_after);
    for (int i = 0; i < size; i++) counts[i] = i + 1;
    MPI_Reduce_scatter_init(sbuf, rbuf, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &r);
    twice(&r, fill, reduce_scatter_after);
    MPI_Reduce_scatter_block_init(sbuf, rbuf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                  &r);
    twice(&r, fill, reduce_scatter_block_after);
    MPI_Reduce_scatter_block_init_c(sbuf, rbuf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                    MPI_INFO_NULL, &r);
    twice(&r, fill, reduce_scatter_block_after);

    /* Alloc_mem / Free_mem. */
    double *mem = NULL;
    MPI_Alloc_mem(64 * sizeof(double), MPI_INFO_NULL, &mem);
    CHECK(mem != NULL);
    for (int i = 0; i < 64; i++) mem[i] = i * 0.5;
    double sum = 0;
    for (int i = 0; i < 64; i++) sum += mem[i];
    CHECK(sum == 63 * 64 / 4.0);
    MPI_Free_mem(mem);

    /* Comm_dup_with_info / Comm_idup_with_info: the dup, with the hints. */
    MPI_Info info, used;
    MPI_Info_create(&info);
    MPI_Info_set(info, "pertinax_hint", "yes");
    MPI_Comm d1, d2;
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &d1);
    int cmp = -1;
    MPI_Comm_compare(MPI_COMM_WORLD, d1, &cmp);
    CHECK(cmp == MPI_CONGRUENT);
    MPI_Comm_get_info(d1, &used);
    char value[16] = "";
    flag = 0;
    MPI_Info_get_string(used, "pertinax_hint", &(int){16}, value, &flag);
    CHECK(flag && strcmp(value, "yes") == 0);
    MPI_Info_free(&used);
    MPI_Request q;
    MPI_Comm_idup_with_info(d1, info, &d2, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    MPI_Comm_compare(d1, d2, &cmp);
    CHECK(cmp == MPI_CONGRUENT);
    int v = rank, vsum = 0;
    MPI_Allreduce(&v, &vsum, 1, MPI_INT, MPI_SUM, d2);
    CHECK(vsum == size * (size - 1) / 2);
    MPI_Info_free(&info);

    /* Comm_call_errhandler: the communicator's handler gets the code. */
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(record, &eh);
    MPI_Comm_set_errhandler(d2, eh);
    CHECK(MPI_Comm_call_errhandler(d2, MPI_ERR_OTHER) == MPI_SUCCESS);
    CHECK(handled == 1 && handled_code == MPI_ERR_OTHER);
    MPI_Comm_set_errhandler(d1, MPI_ERRORS_RETURN);
    CHECK(MPI_Comm_call_errhandler(d1, MPI_ERR_ARG) == MPI_SUCCESS);
    CHECK(handled == 1);
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&d2);
    MPI_Comm_free(&d1);

    /* Status conversions: the same five integers there and back. */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    double sent[3] = {1, 2, 3}, recvd[5];
    MPI_Status st, back;
    MPI_Sendrecv(sent, 3, MPI_DOUBLE, next, 7, recvd, 5, MPI_DOUBLE, prev, 7, MPI_COMM_WORLD, &st);
    MPI_Fint fst[MPI_F_STATUS_SIZE];
    MPI_Status_c2f(&st, fst);
    memset(&back, 0, sizeof back);
    MPI_Status_f2c(fst, &back);
    int n = -1;
    MPI_Get_count(&back, MPI_DOUBLE, &n);
    CHECK(n == 3 && back.MPI_SOURCE == prev && back.MPI_TAG == 7);
    MPI_F08_status f08;
    MPI_Status_c2f08(&st, &f08);
    memset(&back, 0, sizeof back);
    MPI_Status_f082c(&f08, &back);
    MPI_Get_count(&back, MPI_DOUBLE, &n);
    CHECK(n == 3 && back.MPI_SOURCE == prev && back.MPI_TAG == 7);

    errhandler_refs();

    MPI_Type_free(&vec);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("OK extras rank=%d\n", rank);
    MPI_Finalize();
    return 0;
}
