/* pertinax-abi: generalized requests (MPI_Grequest_start/_complete: each
 * callback called as MPI says, with its extra_state, the status the
 * query_fn fills, the callbacks' error codes, through Wait, Test, Waitall,
 * Waitany, Waitsome, Testall, Testany, Testsome, Request_get_status,
 * Request_free and Cancel), MPI 4.1's Request_get_status_all/_any/_some
 * (which free and deactivate nothing), the MPI 4.1 buffers (a
 * communicator's buffer before the process's, flushes, _c forms,
 * MPI_BUFFER_AUTOMATIC), and MPI_Abi_get_info, MPI_Abi_get_fortran_info,
 * MPI_Abi_get_version, MPI_Get_hw_resource_info. Prints
 * "OK grequest rank=R". */
#include "check.h"
#include <string.h>

typedef struct {
    int query, free, cancel, cancel_complete;
    int query_rc, free_rc;
    int tag;
    int inner_rank; /* MPI called from inside a callback */
} ctx_t;

static int query_fn(void *extra, MPI_Status *st) {
    ctx_t *c = extra;
    c->query++;
    MPI_Comm_rank(MPI_COMM_WORLD, &c->inner_rank);
    MPI_Status_set_source(st, 1000 + rank);
    MPI_Status_set_tag(st, c->tag);
    MPI_Status_set_elements(st, MPI_INT, 5);
    MPI_Status_set_cancelled(st, 0);
    return c->query_rc;
}

static int free_fn(void *extra) {
    ctx_t *c = extra;
    c->free++;
    return c->free_rc;
}

static int cancel_fn(void *extra, int complete) {
    ctx_t *c = extra;
    c->cancel++;
    c->cancel_complete = complete;
    return MPI_SUCCESS;
}

static MPI_Request start(ctx_t *c, int tag) {
    memset(c, 0, sizeof *c);
    c->tag = tag;
    c->inner_rank = -1;
    MPI_Request r = MPI_REQUEST_NULL;
    CHECK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, c, &r) == MPI_SUCCESS);
    CHECK(r != MPI_REQUEST_NULL);
    return r;
}

static void check_status(const MPI_Status *st, int tag) {
    int n = -1;
    CHECK(st->MPI_SOURCE == 1000 + rank && st->MPI_TAG == tag);
    MPI_Get_count(st, MPI_INT, &n);
    CHECK(n == 5);
}

static void grequest_single(void) {
    ctx_t c;
    MPI_Status st;
    int flag = -1;
    MPI_Request r = start(&c, 11);
    /* Not complete: Test and Request_get_status call nothing. */
    CHECK(MPI_Test(&r, &flag, &st) == MPI_SUCCESS && !flag && r != MPI_REQUEST_NULL);
    CHECK(MPI_Request_get_status(r, &flag, &st) == MPI_SUCCESS && !flag);
    CHECK(c.query == 0 && c.free == 0);
    /* Cancel before and after completion: cancel_fn each time. */
    CHECK(MPI_Cancel(&r) == MPI_SUCCESS && c.cancel == 1 && c.cancel_complete == 0);
    CHECK(MPI_Grequest_complete(r) == MPI_SUCCESS);
    CHECK(MPI_Cancel(&r) == MPI_SUCCESS && c.cancel == 2 && c.cancel_complete == 1);
    /* Request_get_status: query_fn only; the request stays. */
    memset(&st, 0, sizeof st);
    CHECK(MPI_Request_get_status(r, &flag, &st) == MPI_SUCCESS && flag);
    check_status(&st, 11);
    CHECK(c.query == 1 && c.free == 0 && r != MPI_REQUEST_NULL);
    CHECK(c.inner_rank == rank);
    /* Wait: query_fn then free_fn, once each; the handle is released. */
    memset(&st, 0, sizeof st);
    CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS && r == MPI_REQUEST_NULL);
    check_status(&st, 11);
    CHECK(c.query == 2 && c.free == 1 && c.cancel == 2);

    /* MPI_STATUS_IGNORE: query_fn still runs (on a status of MPI's). */
    r = start(&c, 12);
    MPI_Grequest_complete(r);
    CHECK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag);
    CHECK(r == MPI_REQUEST_NULL && c.query == 1 && c.free == 1);

    /* Request_free before completion: free_fn at MPI_Grequest_complete,
     * query_fn never. */
    r = start(&c, 13);
    MPI_Request keep = r;
    CHECK(MPI_Request_free(&r) == MPI_SUCCESS && r == MPI_REQUEST_NULL);
    CHECK(c.free == 0);
    CHECK(MPI_Grequest_complete(keep) == MPI_SUCCESS);
    CHECK(c.free == 1 && c.query == 0);

    /* Request_free after completion: free_fn at once. */
    r = start(&c, 14);
    MPI_Grequest_complete(r);
    CHECK(MPI_Request_free(&r) == MPI_SUCCESS && r == MPI_REQUEST_NULL);
    CHECK(c.free == 1 && c.query == 0);

    /* The callbacks' error codes are the call's (query_fn's first). */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    r = start(&c, 15);
    c.query_rc = MPI_ERR_BUFFER;
    c.free_rc = MPI_ERR_TAG;
    MPI_Grequest_complete(r);
    int rc = MPI_Wait(&r, &st);
    CHECK(rc == MPI_ERR_BUFFER && c.query == 1 && c.free == 1);
    r = start(&c, 16);
    c.free_rc = MPI_ERR_TAG;
    MPI_Grequest_complete(r);
    rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_ERR_TAG && c.query == 1 && c.free == 1);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* Null callbacks: a status of MPI_ANY_SOURCE, MPI_ANY_TAG. */
    CHECK(MPI_Grequest_start(NULL, NULL, NULL, NULL, &r) == MPI_SUCCESS);
    MPI_Grequest_complete(r);
    CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS && r == MPI_REQUEST_NULL);
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG);
}

static void grequest_many(void) {
    ctx_t c[3];
    MPI_Request rs[4];
    MPI_Status sts[4];
    int flag = -1, index = -1, out = -1, idx[4];
    rs[0] = start(&c[0], 20);
    rs[1] = MPI_REQUEST_NULL;
    rs[2] = start(&c[1], 21);
    rs[3] = start(&c[2], 22);

    /* Testall, Testany, Testsome with none done: nothing called. */
    CHECK(MPI_Testall(4, rs, &flag, sts) == MPI_SUCCESS && !flag);
    CHECK(MPI_Testany(4, rs, &index, &flag, sts) == MPI_SUCCESS && !flag);
    CHECK(MPI_Testsome(4, rs, &out, idx, sts) == MPI_SUCCESS && out == 0);
    for (int i = 0; i < 3; i++) CHECK(c[i].query == 0 && c[i].free == 0);

    /* Waitany: the one done. */
    MPI_Grequest_complete(rs[2]);
    CHECK(MPI_Waitany(4, rs, &index, &sts[0]) == MPI_SUCCESS && index == 2);
    CHECK(rs[2] == MPI_REQUEST_NULL && c[1].query == 1 && c[1].free == 1);
    check_status(&sts[0], 21);

    /* Waitsome: the one done. */
    MPI_Grequest_complete(rs[3]);
    CHECK(MPI_Waitsome(4, rs, &out, idx, sts) == MPI_SUCCESS && out == 1 && idx[0] == 3);
    check_status(&sts[0], 22);
    CHECK(rs[3] == MPI_REQUEST_NULL && c[2].free == 1);

    /* Waitall with a query_fn failing: MPI_ERR_IN_STATUS, its status
     * says which. */
    rs[1] = start(&c[1], 23);
    c[1].query_rc = MPI_ERR_BUFFER;
    MPI_Grequest_complete(rs[0]);
    MPI_Grequest_complete(rs[1]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Waitall(4, rs, sts);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    CHECK(rc == MPI_ERR_IN_STATUS);
    CHECK(sts[0].MPI_ERROR == MPI_SUCCESS && sts[1].MPI_ERROR == MPI_ERR_BUFFER);
    check_status(&sts[0], 20);
    for (int i = 0; i < 4; i++) CHECK(rs[i] == MPI_REQUEST_NULL);
    CHECK(c[0].query == 1 && c[0].free == 1 && c[1].query == 1 && c[1].free == 1);
}

static void get_status_forms(void) {
    ctx_t c[2];
    MPI_Request rs[5], copy[5];
    MPI_Status sts[5];
    int flag = -1, index = -1, out = -1, idx[5], dummy = 0;
    rs[0] = start(&c[0], 30);
    CHECK(MPI_Irecv(&dummy, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rs[1]) == MPI_SUCCESS);
    rs[2] = MPI_REQUEST_NULL;
    rs[3] = start(&c[1], 31);
    CHECK(MPI_Recv_init(&dummy, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rs[4]) == MPI_SUCCESS);
    memcpy(copy, rs, sizeof rs);

    /* _all: not all done; nothing freed, no query_fn. */
    CHECK(MPI_Request_get_status_all(5, rs, &flag, sts) == MPI_SUCCESS && !flag);
    CHECK(c[0].query == 0 && c[1].query == 0);
    /* _any: the PROC_NULL receive (the inactive persistent one is as null). */
    CHECK(MPI_Request_get_status_any(5, rs, &index, &flag, &sts[0]) == MPI_SUCCESS);
    CHECK(flag && index == 1 && sts[0].MPI_SOURCE == MPI_PROC_NULL);
    /* _some after one generalized request is done. */
    MPI_Grequest_complete(rs[3]);
    CHECK(MPI_Request_get_status_some(5, rs, &out, idx, sts) == MPI_SUCCESS);
    CHECK(out == 2 && idx[0] == 1 && idx[1] == 3);
    check_status(&sts[1], 31);
    CHECK(c[1].query == 1 && c[1].free == 0);
    /* _all once every one is done: the null and inactive ones have empty
     * statuses. */
    MPI_Grequest_complete(rs[0]);
    CHECK(MPI_Request_get_status_all(5, rs, &flag, sts) == MPI_SUCCESS && flag);
    check_status(&sts[0], 30);
    check_status(&sts[3], 31);
    CHECK(sts[1].MPI_SOURCE == MPI_PROC_NULL);
    CHECK(sts[2].MPI_SOURCE == MPI_ANY_SOURCE && sts[2].MPI_TAG == MPI_ANY_TAG);
    CHECK(sts[4].MPI_SOURCE == MPI_ANY_SOURCE && sts[4].MPI_TAG == MPI_ANY_TAG);
    CHECK(c[0].free == 0 && c[1].free == 0);
    CHECK(MPI_Request_get_status_all(5, rs, &flag, MPI_STATUSES_IGNORE) == MPI_SUCCESS && flag);
    /* Nothing was freed or changed. */
    CHECK(memcmp(copy, rs, sizeof rs) == 0);
    /* A started persistent request stays active through get_status. */
    CHECK(MPI_Start(&rs[4]) == MPI_SUCCESS);
    CHECK(MPI_Request_get_status_any(1, &rs[4], &index, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(flag && index == 0);
    CHECK(MPI_Request_get_status_any(1, &rs[4], &index, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(flag && index == 0);
    CHECK(MPI_Waitall(5, rs, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    CHECK(c[0].free == 1 && c[1].free == 1 && rs[4] == copy[4]);
    /* Now inactive: as null. */
    CHECK(MPI_Request_get_status_any(5, rs, &index, &flag, &sts[0]) == MPI_SUCCESS);
    CHECK(flag && index == MPI_UNDEFINED && sts[0].MPI_SOURCE == MPI_ANY_SOURCE);
    CHECK(MPI_Request_get_status_some(5, rs, &out, idx, sts) == MPI_SUCCESS && out == MPI_UNDEFINED);
    MPI_Request_free(&rs[4]);
}

static void buffers(void) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    static char small[100 + MPI_BSEND_OVERHEAD], big[4096 + MPI_BSEND_OVERHEAD];
    char msg[4096], got[4096];
    void *addr;
    int n;
    MPI_Count nc;
    MPI_Request r;
    MPI_Comm dup;
    memset(msg, rank + 1, sizeof msg);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);

    /* No buffer anywhere. */
    CHECK(MPI_Bsend(msg, 1, MPI_CHAR, next, 1, dup) == MPI_ERR_BUFFER);
    CHECK(MPI_Comm_detach_buffer(dup, &addr, &n) == MPI_ERR_BUFFER);
    CHECK(MPI_Buffer_detach(&addr, &n) == MPI_ERR_BUFFER);

    /* The communicator's buffer bounds its buffered sends only. */
    CHECK(MPI_Comm_attach_buffer(dup, small, sizeof small) == MPI_SUCCESS);
    CHECK(MPI_Comm_attach_buffer(dup, small, sizeof small) == MPI_ERR_BUFFER);
    CHECK(MPI_Bsend(msg, 100, MPI_CHAR, next, 2, dup) == MPI_SUCCESS);
    CHECK(MPI_Recv(got, 100, MPI_CHAR, prev, 2, dup, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(got[0] == (char)(prev + 1) && got[99] == (char)(prev + 1));
    CHECK(MPI_Bsend(msg, 101, MPI_CHAR, next, 3, dup) == MPI_ERR_BUFFER);
    CHECK(MPI_Bsend(msg, 10, MPI_CHAR, next, 3, MPI_COMM_WORLD) == MPI_ERR_BUFFER);

    /* The process's buffer: the world's sends use it, the duplicate's
     * still its own. */
    CHECK(MPI_Buffer_attach(big, sizeof big) == MPI_SUCCESS);
    CHECK(MPI_Buffer_attach(big, sizeof big) == MPI_ERR_BUFFER);
    CHECK(MPI_Bsend(msg, 4096, MPI_CHAR, next, 4, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(MPI_Recv(got, 4096, MPI_CHAR, prev, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(got[4095] == (char)(prev + 1));
    CHECK(MPI_Bsend(msg, 101, MPI_CHAR, next, 5, dup) == MPI_ERR_BUFFER);

    /* Flushes. */
    CHECK(MPI_Buffer_flush() == MPI_SUCCESS);
    CHECK(MPI_Comm_flush_buffer(dup) == MPI_SUCCESS);
    CHECK(MPI_Buffer_iflush(&r) == MPI_SUCCESS && MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(MPI_Comm_iflush_buffer(dup, &r) == MPI_SUCCESS && MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(r == MPI_REQUEST_NULL);

    /* Detaching the communicator's: its sends fall back on the process's. */
    CHECK(MPI_Comm_detach_buffer(dup, &addr, &n) == MPI_SUCCESS);
    CHECK(addr == small && n == (int)sizeof small);
    CHECK(MPI_Comm_detach_buffer(dup, &addr, &n) == MPI_ERR_BUFFER);
    CHECK(MPI_Bsend(msg, 4096, MPI_CHAR, next, 6, dup) == MPI_SUCCESS);
    CHECK(MPI_Recv(got, 4096, MPI_CHAR, prev, 6, dup, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(MPI_Buffer_detach_c(&addr, &nc) == MPI_SUCCESS);
    CHECK(addr == big && nc == (MPI_Count)sizeof big);

    /* MPI_BUFFER_AUTOMATIC: no bound; detached as itself, size 0. */
    CHECK(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0) == MPI_SUCCESS);
    CHECK(MPI_Bsend(msg, 4096, MPI_CHAR, next, 7, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(MPI_Recv(got, 4096, MPI_CHAR, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(MPI_Buffer_detach(&addr, &n) == MPI_SUCCESS);
    CHECK(addr == MPI_BUFFER_AUTOMATIC && n == 0);
    CHECK(MPI_Comm_attach_buffer_c(dup, MPI_BUFFER_AUTOMATIC, 0) == MPI_SUCCESS);
    CHECK(MPI_Ibsend(msg, 4096, MPI_CHAR, next, 8, dup, &r) == MPI_SUCCESS);
    CHECK(MPI_Recv(got, 4096, MPI_CHAR, prev, 8, dup, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(MPI_Comm_detach_buffer_c(dup, &addr, &nc) == MPI_SUCCESS);
    CHECK(addr == MPI_BUFFER_AUTOMATIC && nc == 0);

    /* A communicator's buffer goes with it. */
    CHECK(MPI_Comm_attach_buffer(dup, small, sizeof small) == MPI_SUCCESS);
    MPI_Comm_free(&dup);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    CHECK(MPI_Comm_detach_buffer(dup, &addr, &n) == MPI_ERR_BUFFER);
    CHECK(MPI_Comm_attach_buffer(MPI_COMM_NULL, small, sizeof small) == MPI_ERR_COMM);
    MPI_Comm_free(&dup);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void abi_info(void) {
    MPI_Info info;
    char v[64];
    int flag = 0, n = -1, major = 0, minor = 0;
    CHECK(MPI_Abi_get_info(&info) == MPI_SUCCESS && info != MPI_INFO_NULL);
    const char *keys[] = {"mpi_aint_size", "mpi_count_size", "mpi_offset_size"};
    const int sizes[] = {(int)sizeof(MPI_Aint), (int)sizeof(MPI_Count), (int)sizeof(MPI_Offset)};
    for (int i = 0; i < 3; i++) {
        CHECK(MPI_Info_get(info, keys[i], sizeof v - 1, v, &flag) == MPI_SUCCESS && flag);
        CHECK(atoi(v) == sizes[i]);
    }
    MPI_Info_free(&info);
    CHECK(MPI_Abi_get_fortran_info(&info) == MPI_SUCCESS && info == MPI_INFO_NULL);
    CHECK(MPI_Abi_get_version(&major, &minor) == MPI_SUCCESS && major == -1 && minor == -1);
    CHECK(MPI_Get_hw_resource_info(&info) == MPI_SUCCESS && info != MPI_INFO_NULL);
    CHECK(MPI_Info_get_nkeys(info, &n) == MPI_SUCCESS && n == 0);
    CHECK(MPI_Info_free(&info) == MPI_SUCCESS && info == MPI_INFO_NULL);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    grequest_single();
    grequest_many();
    get_status_forms();
    buffers();
    abi_info();
    MPI_Finalize();
    printf("OK grequest rank=%d\n", rank);
    return 0;
}
