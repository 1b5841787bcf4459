/* pertinax-abi: MPI 4 sessions. A session started before MPI_Init joins
 * the job (MPI_Initialized stays false); the psets mpi://WORLD and
 * mpi://SELF (names, lengths, truncation, info mpi_size), groups from
 * them and MPI_Comm_create_from_group (ranks, an allreduce, two tags, the
 * error handler given), the session's info, error handlers (one made
 * before any init, called with the session's handle), buffers (attach,
 * a second attach, Bsend on a communicator of the session bounded by the
 * session's buffer, flush, iflush, detach, MPI_BUFFER_AUTOMATIC), errors
 * of MPI_SESSION_NULL. Then, by default: MPI_Init after the session, a
 * second session, MPI_Finalize while that one lives (still usable), its
 * finalize last. With argument "only": no MPI_Init at all, the last
 * session's finalize leaves the job, and a later session fails with
 * MPI_ERR_OTHER (pertinax joins a job once). Prints "OK session rank=R". */
#include "check.h"
#include <string.h>

static int called;
static MPI_Session seen;
static int seen_code;

static void on_error(MPI_Session *s, int *code, ...) {
    called++;
    seen = *s;
    seen_code = *code;
}

/* A communicator of the session's pset `name`, with tag `tag`. */
static MPI_Comm comm_of(MPI_Session s, const char *name, const char *tag) {
    MPI_Group g;
    MPI_Comm c;
    CHECK(MPI_Group_from_session_pset(s, name, &g) == MPI_SUCCESS);
    CHECK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c) ==
          MPI_SUCCESS);
    CHECK(MPI_Group_free(&g) == MPI_SUCCESS);
    return c;
}

static void psets(MPI_Session s, int wsize) {
    int n = -1, len;
    char name[64], val[64];
    CHECK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n) == MPI_SUCCESS && n == 2);
    len = 0;
    CHECK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, NULL) == MPI_SUCCESS);
    CHECK(len == (int)strlen("mpi://WORLD") + 1);
    len = sizeof name;
    CHECK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 1, &len, name) == MPI_SUCCESS);
    CHECK(strcmp(name, "mpi://SELF") == 0 && len == 11);
    len = 4;
    CHECK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, name) == MPI_SUCCESS);
    CHECK(strcmp(name, "mpi") == 0 && len == 12);
    len = sizeof name;
    CHECK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 2, &len, name) == MPI_ERR_ARG);
    CHECK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, -1, &len, name) == MPI_ERR_ARG);

    const char *names[2] = {"mpi://WORLD", "mpi://SELF"};
    int sizes[2] = {wsize, 1};
    for (int i = 0; i < 2; i++) {
        MPI_Info info;
        int flag = 0;
        CHECK(MPI_Session_get_pset_info(s, names[i], &info) == MPI_SUCCESS);
        CHECK(MPI_Info_get(info, "mpi_size", sizeof val - 1, val, &flag) == MPI_SUCCESS);
        CHECK(flag && atoi(val) == sizes[i]);
        CHECK(MPI_Info_free(&info) == MPI_SUCCESS);
        MPI_Group g;
        int gs, gr;
        CHECK(MPI_Group_from_session_pset(s, names[i], &g) == MPI_SUCCESS);
        MPI_Group_size(g, &gs);
        MPI_Group_rank(g, &gr);
        CHECK(gs == sizes[i] && gr == (i == 0 ? rank : 0));
        MPI_Group_free(&g);
    }
    MPI_Info info;
    MPI_Group g;
    CHECK(MPI_Session_get_pset_info(s, "mpi://NOWHERE", &info) == MPI_ERR_ARG);
    CHECK(MPI_Group_from_session_pset(s, "mpi://world", &g) == MPI_ERR_ARG);

    int flag = 0;
    CHECK(MPI_Session_get_info(s, &info) == MPI_SUCCESS);
    CHECK(MPI_Info_get(info, "thread_level", sizeof val - 1, val, &flag) == MPI_SUCCESS);
    CHECK(flag && strcmp(val, "MPI_THREAD_FUNNELED") == 0);
    MPI_Info_free(&info);
}

static void comms(MPI_Session s, int wsize) {
    MPI_Comm a = comm_of(s, "mpi://WORLD", "org.pertinax.test.a");
    MPI_Comm b = comm_of(s, "mpi://WORLD", "org.pertinax.test.b");
    MPI_Comm me = comm_of(s, "mpi://SELF", "org.pertinax.test.self");
    int r, n, sum = 0;
    MPI_Comm_rank(a, &r);
    MPI_Comm_size(a, &n);
    CHECK(r == rank && n == wsize);
    MPI_Comm_size(me, &n);
    CHECK(n == 1);
    CHECK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, a) == MPI_SUCCESS);
    CHECK(sum == wsize * (wsize - 1) / 2);
    CHECK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_MAX, b) == MPI_SUCCESS);
    CHECK(sum == wsize - 1);
    MPI_Errhandler eh;
    CHECK(MPI_Comm_get_errhandler(a, &eh) == MPI_SUCCESS && eh == MPI_ERRORS_RETURN);
    /* Ring on `a` and on `b` at once: separate contexts. */
    int next = (rank + 1) % wsize, prev = (rank + wsize - 1) % wsize, x = -1, y = -1;
    MPI_Request q[4];
    MPI_Irecv(&x, 1, MPI_INT, prev, 0, a, &q[0]);
    MPI_Irecv(&y, 1, MPI_INT, prev, 0, b, &q[1]);
    int ra = rank * 10, rb = rank * 10 + 1;
    MPI_Isend(&rb, 1, MPI_INT, next, 0, b, &q[2]);
    MPI_Isend(&ra, 1, MPI_INT, next, 0, a, &q[3]);
    CHECK(MPI_Waitall(4, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    CHECK(x == prev * 10 && y == prev * 10 + 1);
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    MPI_Comm_free(&me);
}

static void errhandlers(MPI_Session s, MPI_Errhandler mine) {
    MPI_Errhandler eh;
    CHECK(MPI_Session_get_errhandler(s, &eh) == MPI_SUCCESS && eh == MPI_ERRORS_RETURN);
    CHECK(MPI_Session_set_errhandler(s, mine) == MPI_SUCCESS);
    CHECK(MPI_Session_get_errhandler(s, &eh) == MPI_SUCCESS && eh == mine);
    called = 0;
    CHECK(MPI_Session_call_errhandler(s, MPI_ERR_OTHER) == MPI_SUCCESS);
    CHECK(called == 1 && seen == s && seen_code == MPI_ERR_OTHER);
    int n;
    CHECK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, NULL) == MPI_ERR_ARG);
    CHECK(called == 2 && seen == s && seen_code == MPI_ERR_ARG);
    CHECK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n) == MPI_SUCCESS && called == 2);
    CHECK(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN) == MPI_SUCCESS);
}

static void buffers(MPI_Session s) {
    enum { ROOM = 1000 };
    static char buf[ROOM + MPI_BSEND_OVERHEAD], big[2 * ROOM], in[2 * ROOM];
    MPI_Comm c = comm_of(s, "mpi://SELF", "org.pertinax.test.bsend");
    void *addr;
    int n;
    MPI_Count cn;
    CHECK(MPI_Session_detach_buffer(s, &addr, &n) == MPI_ERR_BUFFER);
    CHECK(MPI_Session_attach_buffer(s, buf, sizeof buf) == MPI_SUCCESS);
    CHECK(MPI_Session_attach_buffer(s, buf, sizeof buf) == MPI_ERR_BUFFER);
    memset(big, 7, sizeof big);
    CHECK(MPI_Bsend(big, ROOM, MPI_CHAR, 0, 1, c) == MPI_SUCCESS);
    CHECK(MPI_Recv(in, ROOM, MPI_CHAR, 0, 1, c, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(in[0] == 7 && in[ROOM - 1] == 7);
    CHECK(MPI_Bsend(big, ROOM + 1, MPI_CHAR, 0, 1, c) == MPI_ERR_BUFFER);
    CHECK(MPI_Session_flush_buffer(s) == MPI_SUCCESS);
    MPI_Request r = MPI_REQUEST_NULL;
    CHECK(MPI_Session_iflush_buffer(s, &r) == MPI_SUCCESS && r != MPI_REQUEST_NULL);
    CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS && r == MPI_REQUEST_NULL);
    CHECK(MPI_Session_detach_buffer(s, &addr, &n) == MPI_SUCCESS);
    CHECK(addr == buf && n == (int)sizeof buf);
    /* Detached: the process has no buffer either. */
    CHECK(MPI_Bsend(big, 1, MPI_CHAR, 0, 1, c) == MPI_ERR_BUFFER);
    CHECK(MPI_Session_attach_buffer_c(s, MPI_BUFFER_AUTOMATIC, 0) == MPI_SUCCESS);
    CHECK(MPI_Bsend(big, 2 * ROOM, MPI_CHAR, 0, 2, c) == MPI_SUCCESS);
    CHECK(MPI_Recv(in, 2 * ROOM, MPI_CHAR, 0, 2, c, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(MPI_Session_detach_buffer_c(s, &addr, &cn) == MPI_SUCCESS);
    CHECK(addr == MPI_BUFFER_AUTOMATIC && cn == 0);
    CHECK(MPI_Session_attach_buffer(s, buf, -1) == MPI_ERR_BUFFER);
    MPI_Comm_free(&c);
}

/* Errors of MPI_SESSION_NULL: MPI_ERR_SESSION through MPI_COMM_SELF's
 * handler. */
static void null_session(void) {
    MPI_Session s = MPI_SESSION_NULL;
    MPI_Errhandler eh;
    MPI_Info info;
    MPI_Group g;
    int n, len = 0;
    CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN) == MPI_SUCCESS);
    CHECK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n) == MPI_ERR_SESSION);
    CHECK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, NULL) == MPI_ERR_SESSION);
    CHECK(MPI_Session_get_info(s, &info) == MPI_ERR_SESSION);
    CHECK(MPI_Session_get_pset_info(s, "mpi://SELF", &info) == MPI_ERR_SESSION);
    CHECK(MPI_Group_from_session_pset(s, "mpi://SELF", &g) == MPI_ERR_SESSION);
    CHECK(MPI_Session_get_errhandler(s, &eh) == MPI_ERR_SESSION);
    CHECK(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN) == MPI_ERR_SESSION);
    CHECK(MPI_Session_finalize(&s) == MPI_ERR_SESSION);
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, NULL) == MPI_ERR_ARG);
}

static void all(MPI_Session s, int wsize, MPI_Errhandler mine) {
    psets(s, wsize);
    comms(s, wsize);
    errhandlers(s, mine);
    buffers(s);
}

int main(int argc, char **argv) {
    int only = argc > 1 && strcmp(argv[1], "only") == 0;
    int flag = -1;
    MPI_Errhandler mine;
    /* Before any init: an error handler for sessions. */
    CHECK(MPI_Session_create_errhandler(on_error, &mine) == MPI_SUCCESS);
    MPI_Session s = MPI_SESSION_NULL, s2 = MPI_SESSION_NULL;
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS);
    CHECK(s != MPI_SESSION_NULL);
    MPI_Initialized(&flag);
    CHECK(flag == 0);
    MPI_Comm c = comm_of(s, "mpi://WORLD", "org.pertinax.test.world");
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    int wsize = size;
    all(s, wsize, mine);
    if (!only) {
        int wr, ws;
        CHECK(MPI_Init(&argc, &argv) == MPI_SUCCESS);
        MPI_Initialized(&flag);
        CHECK(flag == 1);
        MPI_Comm_rank(MPI_COMM_WORLD, &wr);
        MPI_Comm_size(MPI_COMM_WORLD, &ws);
        CHECK(wr == rank && ws == size);
        null_session();
        CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2) == MPI_SUCCESS);
        CHECK(s2 != s);
        all(s2, wsize, mine);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Comm_free(&c);
    CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS && s == MPI_SESSION_NULL);
    if (!only) {
        int n;
        CHECK(MPI_Finalize() == MPI_SUCCESS);
        MPI_Finalized(&flag);
        CHECK(flag == 1);
        /* The second session outlives the World model. */
        CHECK(MPI_Session_get_num_psets(s2, MPI_INFO_NULL, &n) == MPI_SUCCESS && n == 2);
        MPI_Comm c2 = comm_of(s2, "mpi://WORLD", "org.pertinax.test.after");
        int sum = 0;
        CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c2) == MPI_SUCCESS);
        CHECK(sum == size * (size - 1) / 2);
        MPI_Comm_free(&c2);
        CHECK(MPI_Session_finalize(&s2) == MPI_SUCCESS);
    } else {
        MPI_Finalized(&flag);
        CHECK(flag == 0);
        /* The process left its job: it does not join again. */
        CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2) == MPI_ERR_OTHER);
    }
    printf("OK session rank=%d\n", rank);
    return 0;
}
