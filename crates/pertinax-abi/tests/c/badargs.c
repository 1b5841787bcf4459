/* pertinax-abi: bad input from C is an error, never a crash (issue 32).
 *
 * A seeded campaign: every case takes one implemented call with good
 * arguments, makes ONE of them bad (an invalid handle value, a freed
 * handle, a null handle, a negative count, a rank or root out of range, a
 * bad tag, an uncommitted datatype, a NULL buffer with a nonzero count, an
 * op that does not fit the type, ...), calls it under MPI_ERRORS_RETURN
 * and checks that the class it returns is the one that argument calls
 * for. Every rank draws the same cases from the same seed, so a
 * collective's bad argument is the same everywhere. Then the library must
 * still work: an allreduce, a ring and a barrier give the right answers.
 *
 * Seed: argv[1], else $BADARGS_SEED, else 1; rounds (every call once a
 * round): argv[2], else $BADARGS_ROUNDS, else 3. $BADARGS_VERBOSE=1 prints
 * each case before its call (to find a hang). Prints "OK badargs rank=R
 * cases=N seed=S" when every case held. */
#include "check.h"
#include <limits.h>
#include <stdint.h>
#include <string.h>

static uint64_t rng;
static uint64_t next64(void) {
    uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static int below(int n) { return (int)(next64() % (uint64_t)n); }

static unsigned long long seed;
static int expect;     /* the class the case's call must return */
static char what[200]; /* the bad argument, for the report */
static long cases, failures;
static int verbose;
static int tag_ub;
static int peer;       /* (rank + 1) % size */
static MPI_Comm scratch; /* a dup of the world for error-handler cases */
static MPI_Comm cart;    /* a 1-d Cartesian communicator */

#define BAD(cls, ...)                                   \
    do {                                                \
        expect = (cls);                                 \
        snprintf(what, sizeof what, __VA_ARGS__);       \
    } while (0)

static void ran(const char *name, int rc) {
    int cls = rc;
    if (rc != MPI_SUCCESS && MPI_Error_class(rc, &cls) != MPI_SUCCESS) cls = -1;
    if (cls != expect) {
        failures++;
        fprintf(stderr,
                "rank %d: seed %llu case %ld: %s with %s returned class %d, "
                "expected %d\n",
                rank, seed, cases, name, what, cls, expect);
    }
    cases++;
}

#define RUN(name, call)                                                   \
    do {                                                                  \
        if (verbose) {                                                    \
            fprintf(stderr, "rank %d case %ld: %s with %s\n", rank, cases, \
                    name, what);                                          \
            fflush(stderr);                                               \
        }                                                                 \
        ran(name, (call));                                                \
    } while (0)

/* Frees a request a call should not have made (it succeeded wrongly). */
static void drop(MPI_Request *r) {
    if (*r != MPI_REQUEST_NULL) MPI_Request_free(r);
    *r = MPI_REQUEST_NULL;
}

/* ---- bad values: each sets `expect` and `what` ---- */

/* A random int whose handle-kind bits (26..29) are not `kind`'s, or a
 * direct handle of the kind with an index never allocated. */
static int garbage(int kind_bits) {
    if (below(2)) {
        int v = (int)(uint32_t)next64();
        if ((v & 0x3c000000) == (kind_bits & 0x3c000000)) v ^= 0x20000000;
        return v;
    }
    return (int)(0x80000000u | (uint32_t)(kind_bits & 0x3c000000) |
                 (uint32_t)(0x100000 + below(0x100000)));
}

static MPI_Comm bad_comm(void) {
    switch (below(3)) {
    case 0:
        BAD(MPI_ERR_COMM, "comm MPI_COMM_NULL");
        return MPI_COMM_NULL;
    case 1: {
        MPI_Comm c, keep;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        keep = c;
        MPI_Comm_free(&c);
        BAD(MPI_ERR_COMM, "a freed comm 0x%x", (unsigned)keep);
        return keep;
    }
    default: {
        int v = garbage(MPI_COMM_WORLD);
        BAD(MPI_ERR_COMM, "comm 0x%x", (unsigned)v);
        return (MPI_Comm)v;
    }
    }
}

#define MAX_LEAKED 4096
static MPI_Datatype uncommitted[MAX_LEAKED];
static int n_uncommitted;

/* A bad datatype; `committed_only`: an uncommitted one counts as bad. */
static MPI_Datatype bad_type(int committed_only) {
    switch (below(committed_only ? 4 : 3)) {
    case 0:
        BAD(MPI_ERR_TYPE, "type MPI_DATATYPE_NULL");
        return MPI_DATATYPE_NULL;
    case 1: {
        MPI_Datatype t, keep;
        MPI_Type_contiguous(2, MPI_INT, &t);
        MPI_Type_commit(&t);
        keep = t;
        MPI_Type_free(&t);
        BAD(MPI_ERR_TYPE, "a freed type 0x%x", (unsigned)keep);
        return keep;
    }
    case 2: {
        int v = garbage(MPI_INT);
        BAD(MPI_ERR_TYPE, "type 0x%x", (unsigned)v);
        return (MPI_Datatype)v;
    }
    default: {
        MPI_Datatype t;
        MPI_Type_vector(2, 1, 2, MPI_INT, &t);
        if (n_uncommitted < MAX_LEAKED) uncommitted[n_uncommitted++] = t;
        BAD(MPI_ERR_TYPE, "an uncommitted type");
        return t;
    }
    }
}

static int bad_count(void) {
    int v = below(4) == 0 ? INT_MIN : -1 - below(1000);
    BAD(MPI_ERR_COUNT, "count %d", v);
    return v;
}

/* A destination: >= size, MPI_ANY_SOURCE, MPI_ROOT or below. */
static int bad_dest(void) {
    int v;
    switch (below(3)) {
    case 0: v = size + below(100); break;
    case 1: v = -2 - below(2); break; /* MPI_ANY_SOURCE, MPI_ROOT */
    default: v = -4 - below(100000); break;
    }
    BAD(MPI_ERR_RANK, "rank %d", v);
    return v;
}

/* A source: >= size, MPI_ROOT or below. */
static int bad_source(void) {
    int v;
    switch (below(3)) {
    case 0: v = size + below(100); break;
    case 1: v = -3; break;
    default: v = INT_MIN + below(1000); break;
    }
    BAD(MPI_ERR_RANK, "source %d", v);
    return v;
}

static int bad_root(void) {
    int v = below(2) ? size + below(10) : -1 - below(10);
    BAD(MPI_ERR_ROOT, "root %d", v);
    return v;
}

/* A send's tag: negative (MPI_ANY_TAG too) or above MPI_TAG_UB. */
static int bad_send_tag(void) {
    int v = (below(2) && tag_ub < INT_MAX) ? tag_ub + 1 + below(INT_MAX - tag_ub)
                                           : -1 - below(1000);
    BAD(MPI_ERR_TAG, "send tag %d", v);
    return v;
}

/* A receive's tag: negative but MPI_ANY_TAG, or above MPI_TAG_UB. */
static int bad_recv_tag(void) {
    int v = (below(2) && tag_ub < INT_MAX) ? tag_ub + 1 + below(INT_MAX - tag_ub)
                                           : -2 - below(1000);
    BAD(MPI_ERR_TAG, "receive tag %d", v);
    return v;
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *ty) {
    (void)ty;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

/* A bad op for MPI_INT data. */
static MPI_Op bad_op(void) {
    switch (below(4)) {
    case 0:
        BAD(MPI_ERR_OP, "op MPI_OP_NULL");
        return MPI_OP_NULL;
    case 1: {
        MPI_Op o, keep;
        MPI_Op_create(user_sum, 1, &o);
        keep = o;
        MPI_Op_free(&o);
        BAD(MPI_ERR_OP, "a freed op 0x%x", (unsigned)keep);
        return keep;
    }
    case 2: {
        int v = garbage(MPI_SUM);
        BAD(MPI_ERR_OP, "op 0x%x", (unsigned)v);
        return (MPI_Op)v;
    }
    default:
        BAD(MPI_ERR_OP, "MPI_MINLOC on MPI_INT");
        return MPI_MINLOC;
    }
}

static MPI_Request bad_request(void) {
    switch (below(2)) {
    case 0: {
        MPI_Request r, keep;
        int x = 0;
        MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r);
        keep = r;
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        BAD(MPI_ERR_REQUEST, "a completed request 0x%x", (unsigned)keep);
        return keep;
    }
    default: {
        int v = garbage(MPI_REQUEST_NULL);
        BAD(MPI_ERR_REQUEST, "request 0x%x", (unsigned)v);
        return (MPI_Request)v;
    }
    }
}

static MPI_Group bad_group(void) {
    switch (below(3)) {
    case 0:
        BAD(MPI_ERR_GROUP, "group MPI_GROUP_NULL");
        return MPI_GROUP_NULL;
    case 1: {
        MPI_Group g, keep;
        MPI_Comm_group(MPI_COMM_WORLD, &g);
        keep = g;
        MPI_Group_free(&g);
        BAD(MPI_ERR_GROUP, "a freed group 0x%x", (unsigned)keep);
        return keep;
    }
    default: {
        int v = garbage(MPI_GROUP_NULL);
        BAD(MPI_ERR_GROUP, "group 0x%x", (unsigned)v);
        return (MPI_Group)v;
    }
    }
}

/* A freed or invalid info (MPI_INFO_NULL is MPI_ERR_ARG, as MPICH). */
static MPI_Info bad_info(void) {
    if (below(2)) {
        MPI_Info i, keep;
        MPI_Info_create(&i);
        keep = i;
        MPI_Info_free(&i);
        BAD(MPI_ERR_INFO, "a freed info 0x%x", (unsigned)keep);
        return keep;
    }
    int v = garbage(MPI_INFO_NULL);
    BAD(MPI_ERR_INFO, "info 0x%x", (unsigned)v);
    return (MPI_Info)v;
}

static int bad_keyval(void) {
    if (below(2)) {
        int k, keep;
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k, NULL);
        keep = k;
        MPI_Comm_free_keyval(&k);
        BAD(MPI_ERR_KEYVAL, "a freed keyval 0x%x", (unsigned)keep);
        return keep;
    }
    int v = garbage(0x24000000);
    BAD(MPI_ERR_KEYVAL, "keyval 0x%x", (unsigned)v);
    return v;
}

static void *null_buffer(const char *which) {
    BAD(MPI_ERR_BUFFER, "NULL %s", which);
    return NULL;
}

/* ---- the calls ---- */

#define N 4          /* elements per rank */
#define BIG 256      /* ints in every buffer */
static int sbuf[BIG], rbuf[BIG];
static int counts[64], displs[64], counts2[64], displs2[64];

static void good_arrays(void) {
    for (int i = 0; i < size; i++) {
        counts[i] = counts2[i] = N;
        displs[i] = displs2[i] = i * N;
    }
}

/* A good destination or source: the peer, or MPI_PROC_NULL. */
static int good_dest(void) { return below(2) ? peer : MPI_PROC_NULL; }
static int good_source(void) {
    int k = below(3);
    return k == 0 ? peer : k == 1 ? MPI_PROC_NULL : MPI_ANY_SOURCE;
}

typedef int (*send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int (*isend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm,
                        MPI_Request *);

static void t_sends(void) {
    static const send_fn blocking[] = {MPI_Send, MPI_Bsend, MPI_Ssend, MPI_Rsend};
    static const char *bnames[] = {"MPI_Send", "MPI_Bsend", "MPI_Ssend", "MPI_Rsend"};
    static const isend_fn nonblocking[] = {MPI_Isend, MPI_Issend, MPI_Send_init,
                                           MPI_Bsend_init, MPI_Ssend_init,
                                           MPI_Rsend_init};
    static const char *nnames[] = {"MPI_Isend", "MPI_Issend", "MPI_Send_init",
                                   "MPI_Bsend_init", "MPI_Ssend_init",
                                   "MPI_Rsend_init"};
    for (int f = 0; f < 10; f++) {
        const void *b = sbuf;
        int count = N, dest = good_dest(), tag = below(100);
        MPI_Datatype ty = MPI_INT;
        MPI_Comm comm = MPI_COMM_WORLD;
        switch (below(6)) {
        case 0: b = null_buffer("send buffer"); break;
        case 1: count = bad_count(); break;
        case 2: ty = bad_type(1); break;
        case 3: dest = bad_dest(); break;
        case 4: tag = bad_send_tag(); break;
        default: comm = bad_comm(); break;
        }
        if (f < 4) {
            RUN(bnames[f], blocking[f](b, count, ty, dest, tag, comm));
        } else {
            MPI_Request r = MPI_REQUEST_NULL;
            RUN(nnames[f - 4], nonblocking[f - 4](b, count, ty, dest, tag, comm, &r));
            drop(&r);
        }
    }
    /* The large-count forms. */
    {
        const void *b = sbuf;
        MPI_Count count = N;
        int dest = good_dest(), tag = 3;
        MPI_Datatype ty = MPI_INT;
        MPI_Comm comm = MPI_COMM_WORLD;
        switch (below(6)) {
        case 0: b = null_buffer("send buffer"); break;
        case 1: count = bad_count(); break;
        case 2: ty = bad_type(1); break;
        case 3: dest = bad_dest(); break;
        case 4: tag = bad_send_tag(); break;
        default: comm = bad_comm(); break;
        }
        if (below(2)) {
            RUN("MPI_Send_c", MPI_Send_c(b, count, ty, dest, tag, comm));
        } else {
            MPI_Request r = MPI_REQUEST_NULL;
            RUN("MPI_Isend_c", MPI_Isend_c(b, count, ty, dest, tag, comm, &r));
            drop(&r);
        }
    }
}

static void t_receives(void) {
    for (int f = 0; f < 4; f++) {
        void *b = rbuf;
        int count = N, src = good_source(), tag = below(2) ? MPI_ANY_TAG : 5;
        MPI_Datatype ty = MPI_INT;
        MPI_Comm comm = MPI_COMM_WORLD;
        switch (below(6)) {
        case 0: b = null_buffer("receive buffer"); break;
        case 1: count = bad_count(); break;
        case 2: ty = bad_type(1); break;
        case 3: src = bad_source(); break;
        case 4: tag = bad_recv_tag(); break;
        default: comm = bad_comm(); break;
        }
        MPI_Request r = MPI_REQUEST_NULL;
        switch (f) {
        case 0: RUN("MPI_Recv", MPI_Recv(b, count, ty, src, tag, comm, MPI_STATUS_IGNORE)); break;
        case 1: RUN("MPI_Irecv", MPI_Irecv(b, count, ty, src, tag, comm, &r)); break;
        case 2: RUN("MPI_Recv_init", MPI_Recv_init(b, count, ty, src, tag, comm, &r)); break;
        default: RUN("MPI_Recv_c", MPI_Recv_c(b, count, ty, src, tag, comm, MPI_STATUS_IGNORE)); break;
        }
        drop(&r);
    }
    /* Probes: source, tag, comm. */
    for (int f = 0; f < 4; f++) {
        int src = good_source(), tag = below(2) ? MPI_ANY_TAG : 5, flag = 0;
        MPI_Comm comm = MPI_COMM_WORLD;
        switch (below(3)) {
        case 0: src = bad_source(); break;
        case 1: tag = bad_recv_tag(); break;
        default: comm = bad_comm(); break;
        }
        MPI_Message m = MPI_MESSAGE_NULL;
        switch (f) {
        case 0: RUN("MPI_Probe", MPI_Probe(src, tag, comm, MPI_STATUS_IGNORE)); break;
        case 1: RUN("MPI_Iprobe", MPI_Iprobe(src, tag, comm, &flag, MPI_STATUS_IGNORE)); break;
        case 2: RUN("MPI_Mprobe", MPI_Mprobe(src, tag, comm, &m, MPI_STATUS_IGNORE)); break;
        default: RUN("MPI_Improbe", MPI_Improbe(src, tag, comm, &flag, &m, MPI_STATUS_IGNORE)); break;
        }
    }
    /* Matched receives: the message (a bad one is MPI_ERR_REQUEST), or
     * count, type, buffer with MPI_MESSAGE_NO_PROC. */
    for (int f = 0; f < 2; f++) {
        void *b = rbuf;
        int count = N;
        MPI_Datatype ty = MPI_INT;
        MPI_Message m = MPI_MESSAGE_NO_PROC;
        switch (below(4)) {
        case 0: b = null_buffer("receive buffer"); break;
        case 1: count = bad_count(); break;
        case 2: ty = bad_type(1); break;
        default:
            if (below(2)) {
                m = MPI_MESSAGE_NULL;
                BAD(MPI_ERR_REQUEST, "message MPI_MESSAGE_NULL");
            } else {
                m = (MPI_Message)garbage(MPI_MESSAGE_NULL);
                BAD(MPI_ERR_REQUEST, "message 0x%x", (unsigned)m);
            }
            break;
        }
        MPI_Request r = MPI_REQUEST_NULL;
        if (f == 0) RUN("MPI_Mrecv", MPI_Mrecv(b, count, ty, &m, MPI_STATUS_IGNORE));
        else RUN("MPI_Imrecv", MPI_Imrecv(b, count, ty, &m, &r));
        drop(&r);
    }
    /* Sendrecv: either half's argument. */
    {
        const void *sb = sbuf;
        void *rb = rbuf;
        int sc = N, rc = N, dest = good_dest(), src = good_source(), stag = 1,
            rtag = MPI_ANY_TAG;
        MPI_Datatype st = MPI_INT, rt = MPI_INT;
        MPI_Comm comm = MPI_COMM_WORLD;
        switch (below(11)) {
        case 0: sb = null_buffer("send buffer"); break;
        case 1: sc = bad_count(); break;
        case 2: st = bad_type(1); break;
        case 3: dest = bad_dest(); break;
        case 4: stag = bad_send_tag(); break;
        case 5: rb = null_buffer("receive buffer"); break;
        case 6: rc = bad_count(); break;
        case 7: rt = bad_type(1); break;
        case 8: src = bad_source(); break;
        case 9: rtag = bad_recv_tag(); break;
        default: comm = bad_comm(); break;
        }
        RUN("MPI_Sendrecv", MPI_Sendrecv(sb, sc, st, dest, stag, rb, rc, rt, src, rtag,
                                         comm, MPI_STATUS_IGNORE));
    }
    {
        void *b = rbuf;
        int count = N, dest = good_dest(), src = good_source(), stag = 1, rtag = 1;
        MPI_Datatype ty = MPI_INT;
        MPI_Comm comm = MPI_COMM_WORLD;
        switch (below(8)) {
        case 0: b = null_buffer("buffer"); break;
        case 1: count = bad_count(); break;
        case 2: ty = bad_type(1); break;
        case 3: dest = bad_dest(); break;
        case 4: stag = bad_send_tag(); break;
        case 5: src = bad_source(); break;
        case 6: rtag = bad_recv_tag(); break;
        default: comm = bad_comm(); break;
        }
        RUN("MPI_Sendrecv_replace", MPI_Sendrecv_replace(b, count, ty, dest, stag, src,
                                                         rtag, comm, MPI_STATUS_IGNORE));
    }
}

static void t_requests(void) {
    MPI_Status st;
    int flag, index, outcount, indices[2];
    for (int f = 0; f < 13; f++) {
        MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        int count = 2;
        /* The array forms: a bad handle, or a negative count. */
        if (f >= 6 && below(4) == 0) count = bad_count();
        else r[1] = bad_request();
        switch (f) {
        case 0: RUN("MPI_Wait", MPI_Wait(&r[1], &st)); break;
        case 1: RUN("MPI_Test", MPI_Test(&r[1], &flag, &st)); break;
        case 2: RUN("MPI_Request_free", MPI_Request_free(&r[1])); break;
        case 3: RUN("MPI_Request_get_status", MPI_Request_get_status(r[1], &flag, &st)); break;
        case 4: RUN("MPI_Cancel", MPI_Cancel(&r[1])); break;
        case 5: RUN("MPI_Start", MPI_Start(&r[1])); break;
        case 6: RUN("MPI_Waitall", MPI_Waitall(count, r, MPI_STATUSES_IGNORE)); break;
        case 7: RUN("MPI_Testall", MPI_Testall(count, r, &flag, MPI_STATUSES_IGNORE)); break;
        case 8: RUN("MPI_Waitany", MPI_Waitany(count, r, &index, &st)); break;
        case 9: RUN("MPI_Testany", MPI_Testany(count, r, &index, &flag, &st)); break;
        case 10: RUN("MPI_Waitsome", MPI_Waitsome(count, r, &outcount, indices, MPI_STATUSES_IGNORE)); break;
        case 11: RUN("MPI_Testsome", MPI_Testsome(count, r, &outcount, indices, MPI_STATUSES_IGNORE)); break;
        default: RUN("MPI_Startall", MPI_Startall(count == 2 ? 1 : count, &r[1])); break;
        }
    }
}

/* The persistent and non-blocking forms share the blocking one's slots:
 * form 0 blocking, 1 non-blocking, 2 persistent (if `persistent`). */
#define FORMS(persistent) below((persistent) ? 3 : 2)


static void t_collectives(void) {
    MPI_Request r = MPI_REQUEST_NULL;
    int rc, form;
    /* Barrier */
    {
        MPI_Comm comm = bad_comm();
        form = FORMS(1);
        if (form == 0) RUN("MPI_Barrier", rc = MPI_Barrier(comm));
        else if (form == 1) RUN("MPI_Ibarrier", rc = MPI_Ibarrier(comm, &r));
        else RUN("MPI_Barrier_init", rc = MPI_Barrier_init(comm, MPI_INFO_NULL, &r));
        drop(&r);
    }
    /* Bcast: buffer, count, type, root, comm */
    {
        void *b = rbuf;
        int count = N, root = below(size);
        MPI_Datatype ty = MPI_INT;
        MPI_Comm comm = MPI_COMM_WORLD;
        switch (below(5)) {
        case 0: b = null_buffer("buffer"); break;
        case 1: count = bad_count(); break;
        case 2: ty = bad_type(1); break;
        case 3: root = bad_root(); break;
        default: comm = bad_comm(); break;
        }
        form = below(4);
        if (form == 0) RUN("MPI_Bcast", MPI_Bcast(b, count, ty, root, comm));
        else if (form == 1) RUN("MPI_Ibcast", MPI_Ibcast(b, count, ty, root, comm, &r));
        else if (form == 2) RUN("MPI_Bcast_init", MPI_Bcast_init(b, count, ty, root, comm, MPI_INFO_NULL, &r));
        else RUN("MPI_Bcast_c", MPI_Bcast_c(b, count, ty, root, comm));
        drop(&r);
    }
    /* Reduce: sendbuf, count, type, op, root, comm */
    {
        const void *sb = sbuf;
        int count = N, root = below(size);
        MPI_Datatype ty = MPI_INT;
        MPI_Op op = MPI_SUM;
        MPI_Comm comm = MPI_COMM_WORLD;
        switch (below(6)) {
        case 0: sb = null_buffer("send buffer"); break;
        case 1: count = bad_count(); break;
        case 2: ty = bad_type(1); break;
        case 3: op = bad_op(); break;
        case 4: root = bad_root(); break;
        default: comm = bad_comm(); break;
        }
        form = FORMS(1);
        if (form == 0) RUN("MPI_Reduce", MPI_Reduce(sb, rbuf, count, ty, op, root, comm));
        else if (form == 1) RUN("MPI_Ireduce", MPI_Ireduce(sb, rbuf, count, ty, op, root, comm, &r));
        else RUN("MPI_Reduce_init", MPI_Reduce_init(sb, rbuf, count, ty, op, root, comm, MPI_INFO_NULL, &r));
        drop(&r);
    }
    /* Allreduce, Scan, Exscan, Reduce_scatter_block: sendbuf, recvbuf,
     * count, type, op, comm */
    for (int f = 0; f < 4; f++) {
        const void *sb = sbuf;
        void *rb = rbuf;
        int count = N;
        MPI_Datatype ty = MPI_INT;
        MPI_Op op = MPI_SUM;
        MPI_Comm comm = MPI_COMM_WORLD;
        /* Exscan's receive buffer means nothing at rank 0. */
        switch (below(f == 2 ? 5 : 6)) {
        case 0: sb = null_buffer("send buffer"); break;
        case 1: count = bad_count(); break;
        case 2: ty = bad_type(1); break;
        case 3: op = bad_op(); break;
        case 4: comm = bad_comm(); break;
        default: rb = null_buffer("receive buffer"); break;
        }
        form = FORMS(f == 0);
        switch (f * 3 + form) {
        case 0: RUN("MPI_Allreduce", MPI_Allreduce(sb, rb, count, ty, op, comm)); break;
        case 1: RUN("MPI_Iallreduce", MPI_Iallreduce(sb, rb, count, ty, op, comm, &r)); break;
        case 2: RUN("MPI_Allreduce_init", MPI_Allreduce_init(sb, rb, count, ty, op, comm, MPI_INFO_NULL, &r)); break;
        case 3: RUN("MPI_Scan", MPI_Scan(sb, rb, count, ty, op, comm)); break;
        case 4: RUN("MPI_Iscan", MPI_Iscan(sb, rb, count, ty, op, comm, &r)); break;
        case 6: RUN("MPI_Exscan", MPI_Exscan(sb, rb, count, ty, op, comm)); break;
        case 7: RUN("MPI_Iexscan", MPI_Iexscan(sb, rb, count, ty, op, comm, &r)); break;
        case 9: RUN("MPI_Reduce_scatter_block", MPI_Reduce_scatter_block(sb, rb, count, ty, op, comm)); break;
        default: RUN("MPI_Ireduce_scatter_block", MPI_Ireduce_scatter_block(sb, rb, count, ty, op, comm, &r)); break;
        }
        drop(&r);
    }
    /* Allreduce_c */
    {
        MPI_Count count = N;
        MPI_Op op = MPI_SUM;
        MPI_Comm comm = MPI_COMM_WORLD;
        switch (below(3)) {
        case 0: count = bad_count(); break;
        case 1: op = bad_op(); break;
        default: comm = bad_comm(); break;
        }
        RUN("MPI_Allreduce_c", MPI_Allreduce_c(sbuf, rbuf, count, MPI_INT, op, comm));
    }
    /* Reduce_scatter: a negative count in recvcounts */
    {
        const void *sb = sbuf;
        void *rb = rbuf;
        MPI_Datatype ty = MPI_INT;
        MPI_Op op = MPI_SUM;
        MPI_Comm comm = MPI_COMM_WORLD;
        good_arrays();
        switch (below(6)) {
        case 0: sb = null_buffer("send buffer"); break;
        case 1: rb = null_buffer("receive buffer"); break;
        case 2: counts[below(size)] = bad_count(); break;
        case 3: ty = bad_type(1); break;
        case 4: op = bad_op(); break;
        default: comm = bad_comm(); break;
        }
        if (below(2)) RUN("MPI_Reduce_scatter", MPI_Reduce_scatter(sb, rb, counts, ty, op, comm));
        else RUN("MPI_Ireduce_scatter", MPI_Ireduce_scatter(sb, rb, counts, ty, op, comm, &r));
        drop(&r);
        good_arrays();
    }
    /* Reduce_local: inbuf, inoutbuf, count, type, op */
    {
        const void *in = sbuf;
        void *inout = rbuf;
        int count = N;
        MPI_Datatype ty = MPI_INT;
        MPI_Op op = MPI_SUM;
        switch (below(5)) {
        case 0: in = null_buffer("input buffer"); break;
        case 1: inout = null_buffer("inout buffer"); break;
        case 2: count = bad_count(); break;
        case 3: ty = bad_type(1); break;
        default: op = bad_op(); break;
        }
        RUN("MPI_Reduce_local", MPI_Reduce_local(in, inout, count, ty, op));
    }
    /* Gather (send side: significant everywhere), Gatherv */
    for (int f = 0; f < 2; f++) {
        const void *sb = sbuf;
        int sc = N, root = below(size);
        MPI_Datatype st = MPI_INT;
        MPI_Comm comm = MPI_COMM_WORLD;
        good_arrays();
        switch (below(5)) {
        case 0: sb = null_buffer("send buffer"); break;
        case 1: sc = bad_count(); break;
        case 2: st = bad_type(1); break;
        case 3: root = bad_root(); break;
        default: comm = bad_comm(); break;
        }
        form = FORMS(f == 0);
        switch (f * 3 + form) {
        case 0: RUN("MPI_Gather", MPI_Gather(sb, sc, st, rbuf, N, MPI_INT, root, comm)); break;
        case 1: RUN("MPI_Igather", MPI_Igather(sb, sc, st, rbuf, N, MPI_INT, root, comm, &r)); break;
        case 2: RUN("MPI_Gather_init", MPI_Gather_init(sb, sc, st, rbuf, N, MPI_INT, root, comm, MPI_INFO_NULL, &r)); break;
        case 3: RUN("MPI_Gatherv", MPI_Gatherv(sb, sc, st, rbuf, counts, displs, MPI_INT, root, comm)); break;
        default: RUN("MPI_Igatherv", MPI_Igatherv(sb, sc, st, rbuf, counts, displs, MPI_INT, root, comm, &r)); break;
        }
        drop(&r);
    }
    /* Scatter (receive side: significant everywhere), Scatterv */
    for (int f = 0; f < 2; f++) {
        void *rb = rbuf;
        int rc2 = N, root = below(size);
        MPI_Datatype rt = MPI_INT;
        MPI_Comm comm = MPI_COMM_WORLD;
        good_arrays();
        switch (below(5)) {
        case 0: rb = null_buffer("receive buffer"); break;
        case 1: rc2 = bad_count(); break;
        case 2: rt = bad_type(1); break;
        case 3: root = bad_root(); break;
        default: comm = bad_comm(); break;
        }
        form = FORMS(f == 0);
        switch (f * 3 + form) {
        case 0: RUN("MPI_Scatter", MPI_Scatter(sbuf, N, MPI_INT, rb, rc2, rt, root, comm)); break;
        case 1: RUN("MPI_Iscatter", MPI_Iscatter(sbuf, N, MPI_INT, rb, rc2, rt, root, comm, &r)); break;
        case 2: RUN("MPI_Scatter_init", MPI_Scatter_init(sbuf, N, MPI_INT, rb, rc2, rt, root, comm, MPI_INFO_NULL, &r)); break;
        case 3: RUN("MPI_Scatterv", MPI_Scatterv(sbuf, counts, displs, MPI_INT, rb, rc2, rt, root, comm)); break;
        default: RUN("MPI_Iscatterv", MPI_Iscatterv(sbuf, counts, displs, MPI_INT, rb, rc2, rt, root, comm, &r)); break;
        }
        drop(&r);
    }
    /* Allgather, Alltoall: both sides */
    for (int f = 0; f < 2; f++) {
        const void *sb = sbuf;
        void *rb = rbuf;
        int sc = N, rc2 = N;
        MPI_Datatype st = MPI_INT, rt = MPI_INT;
        MPI_Comm comm = MPI_COMM_WORLD;
        switch (below(7)) {
        case 0: sb = null_buffer("send buffer"); break;
        case 1: sc = bad_count(); break;
        case 2: st = bad_type(1); break;
        case 3: rb = null_buffer("receive buffer"); break;
        case 4: rc2 = bad_count(); break;
        case 5: rt = bad_type(1); break;
        default: comm = bad_comm(); break;
        }
        form = FORMS(1);
        switch (f * 3 + form) {
        case 0: RUN("MPI_Allgather", MPI_Allgather(sb, sc, st, rb, rc2, rt, comm)); break;
        case 1: RUN("MPI_Iallgather", MPI_Iallgather(sb, sc, st, rb, rc2, rt, comm, &r)); break;
        case 2: RUN("MPI_Allgather_init", MPI_Allgather_init(sb, sc, st, rb, rc2, rt, comm, MPI_INFO_NULL, &r)); break;
        case 3: RUN("MPI_Alltoall", MPI_Alltoall(sb, sc, st, rb, rc2, rt, comm)); break;
        case 4: RUN("MPI_Ialltoall", MPI_Ialltoall(sb, sc, st, rb, rc2, rt, comm, &r)); break;
        default: RUN("MPI_Alltoall_init", MPI_Alltoall_init(sb, sc, st, rb, rc2, rt, comm, MPI_INFO_NULL, &r)); break;
        }
        drop(&r);
    }
    /* Allgatherv: a negative count in recvcounts */
    {
        const void *sb = sbuf;
        void *rb = rbuf;
        int sc = N;
        MPI_Datatype st = MPI_INT, rt = MPI_INT;
        MPI_Comm comm = MPI_COMM_WORLD;
        good_arrays();
        switch (below(7)) {
        case 0: sb = null_buffer("send buffer"); break;
        case 1: sc = bad_count(); break;
        case 2: st = bad_type(1); break;
        case 3: rb = null_buffer("receive buffer"); break;
        case 4: counts[below(size)] = bad_count(); break;
        case 5: rt = bad_type(1); break;
        default: comm = bad_comm(); break;
        }
        if (below(2)) RUN("MPI_Allgatherv", MPI_Allgatherv(sb, sc, st, rb, counts, displs, rt, comm));
        else RUN("MPI_Iallgatherv", MPI_Iallgatherv(sb, sc, st, rb, counts, displs, rt, comm, &r));
        drop(&r);
        good_arrays();
    }
    /* Alltoallv: negative counts on either side */
    {
        const void *sb = sbuf;
        void *rb = rbuf;
        MPI_Datatype st = MPI_INT, rt = MPI_INT;
        MPI_Comm comm = MPI_COMM_WORLD;
        good_arrays();
        switch (below(7)) {
        case 0: sb = null_buffer("send buffer"); break;
        case 1: counts[below(size)] = bad_count(); break;
        case 2: st = bad_type(1); break;
        case 3: rb = null_buffer("receive buffer"); break;
        case 4: counts2[below(size)] = bad_count(); break;
        case 5: rt = bad_type(1); break;
        default: comm = bad_comm(); break;
        }
        if (below(2)) RUN("MPI_Alltoallv", MPI_Alltoallv(sb, counts, displs, st, rb, counts2, displs2, rt, comm));
        else RUN("MPI_Ialltoallv", MPI_Ialltoallv(sb, counts, displs, st, rb, counts2, displs2, rt, comm, &r));
        drop(&r);
        good_arrays();
    }
    (void)rc;
}

static void t_comms(void) {
    int x, flag;
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Group g = MPI_GROUP_NULL;
    MPI_Comm nc = MPI_COMM_NULL;
    MPI_Info info = MPI_INFO_NULL;
    MPI_Errhandler eh;
    void *v;
    /* Local calls on a bad comm. */
    for (int f = 0; f < 19; f++) {
        MPI_Comm c = bad_comm();
        switch (f) {
        case 0: RUN("MPI_Comm_rank", MPI_Comm_rank(c, &x)); break;
        case 1: RUN("MPI_Comm_size", MPI_Comm_size(c, &x)); break;
        case 2: RUN("MPI_Comm_compare", below(2) ? MPI_Comm_compare(c, MPI_COMM_WORLD, &x)
                                                 : MPI_Comm_compare(MPI_COMM_WORLD, c, &x)); break;
        case 3: RUN("MPI_Comm_group", MPI_Comm_group(c, &g)); break;
        case 4: RUN("MPI_Comm_test_inter", MPI_Comm_test_inter(c, &flag)); break;
        case 5: RUN("MPI_Comm_remote_size", MPI_Comm_remote_size(c, &x)); break;
        case 6: RUN("MPI_Comm_set_name", MPI_Comm_set_name(c, "x")); break;
        case 7:
            /* MPI 4.1: MPI_COMM_NULL's name is "MPI_COMM_NULL". */
            while (c == MPI_COMM_NULL) c = bad_comm();
            RUN("MPI_Comm_get_name", MPI_Comm_get_name(c, name, &x));
            break;
        case 8: RUN("MPI_Comm_get_attr", MPI_Comm_get_attr(c, MPI_TAG_UB, &v, &flag)); break;
        case 9: RUN("MPI_Comm_get_info", MPI_Comm_get_info(c, &info)); break;
        case 10: RUN("MPI_Comm_get_errhandler", MPI_Comm_get_errhandler(c, &eh)); break;
        case 11: RUN("MPI_Comm_set_errhandler", MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN)); break;
        case 12: RUN("MPI_Comm_free", MPI_Comm_free(&c)); break;
        case 13: RUN("MPI_Topo_test", MPI_Topo_test(c, &x)); break;
        case 14: RUN("MPI_Cartdim_get", MPI_Cartdim_get(c, &x)); break;
        case 15: RUN("MPI_Comm_set_info", MPI_Comm_set_info(c, MPI_INFO_ENV)); break;
        case 16: RUN("MPI_Pack_size", MPI_Pack_size(1, MPI_INT, c, &x)); break;
        case 17: RUN("MPIX_Comm_failure_ack", MPIX_Comm_failure_ack(c)); break;
        default: RUN("MPIX_Comm_failure_get_acked", MPIX_Comm_failure_get_acked(c, &g)); break;
        }
    }
    /* Collective creations on a bad comm (every rank passes it). */
    for (int f = 0; f < 8; f++) {
        MPI_Comm c = bad_comm();
        MPI_Request r = MPI_REQUEST_NULL;
        switch (f) {
        case 0: RUN("MPI_Comm_dup", MPI_Comm_dup(c, &nc)); break;
        case 1: RUN("MPI_Comm_split", MPI_Comm_split(c, 0, rank, &nc)); break;
        case 2: RUN("MPI_Comm_split_type", MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &nc)); break;
        case 3: RUN("MPI_Comm_idup", MPI_Comm_idup(c, &nc, &r)); break;
        case 4: {
            MPI_Group w;
            MPI_Comm_group(MPI_COMM_WORLD, &w);
            RUN("MPI_Comm_create", MPI_Comm_create(c, w, &nc));
            MPI_Group_free(&w);
            break;
        }
        case 5: RUN("MPIX_Comm_agree", (flag = 1, MPIX_Comm_agree(c, &flag))); break;
        case 6: RUN("MPIX_Comm_shrink", MPIX_Comm_shrink(c, &nc)); break;
        default: RUN("MPIX_Comm_revoke", MPIX_Comm_revoke(c)); break;
        }
        drop(&r);
    }
    /* Comm_create / Comm_create_group with a bad group. */
    {
        MPI_Group bg = bad_group();
        if (below(2)) RUN("MPI_Comm_create", MPI_Comm_create(MPI_COMM_WORLD, bg, &nc));
        else RUN("MPI_Comm_create_group", MPI_Comm_create_group(MPI_COMM_WORLD, bg, 0, &nc));
    }
    /* Error handlers: a bad one (on `scratch`, so a wrong accept does not
     * make the world's errors fatal). */
    {
        MPI_Errhandler bad = below(2) ? MPI_ERRHANDLER_NULL : (MPI_Errhandler)garbage(MPI_ERRHANDLER_NULL);
        BAD(MPI_ERR_ERRHANDLER, "errhandler 0x%x", (unsigned)bad);
        RUN("MPI_Comm_set_errhandler", MPI_Comm_set_errhandler(scratch, bad));
        MPI_Comm_set_errhandler(scratch, MPI_ERRORS_RETURN);
    }
    /* Keyvals. */
    for (int f = 0; f < 4; f++) {
        int k = bad_keyval();
        switch (f) {
        case 0: RUN("MPI_Comm_set_attr", MPI_Comm_set_attr(MPI_COMM_WORLD, k, &x)); break;
        case 1: RUN("MPI_Comm_get_attr", MPI_Comm_get_attr(MPI_COMM_WORLD, k, &v, &flag)); break;
        case 2: RUN("MPI_Comm_delete_attr", MPI_Comm_delete_attr(MPI_COMM_WORLD, k)); break;
        default: RUN("MPI_Comm_free_keyval", MPI_Comm_free_keyval(&k)); break;
        }
    }
    /* Info objects. */
    for (int f = 0; f < 9; f++) {
        MPI_Info i = bad_info();
        char val[64];
        switch (f) {
        case 0: RUN("MPI_Info_set", MPI_Info_set(i, "k", "v")); break;
        case 1: RUN("MPI_Info_get", MPI_Info_get(i, "k", 63, val, &flag)); break;
        case 2: RUN("MPI_Info_get_nkeys", MPI_Info_get_nkeys(i, &x)); break;
        case 3: RUN("MPI_Info_get_nthkey", MPI_Info_get_nthkey(i, 0, val)); break;
        case 4: RUN("MPI_Info_delete", MPI_Info_delete(i, "k")); break;
        case 5: RUN("MPI_Info_dup", MPI_Info_dup(i, &info)); break;
        case 6: RUN("MPI_Info_free", MPI_Info_free(&i)); break;
        case 7: RUN("MPI_Info_get_valuelen", MPI_Info_get_valuelen(i, "k", &x, &flag)); break;
        default: RUN("MPI_Comm_set_info", MPI_Comm_set_info(MPI_COMM_WORLD, i)); break;
        }
    }
    /* Ops. */
    {
        MPI_Op o = bad_op();
        if (expect == MPI_ERR_OP && o == MPI_MINLOC) {
            /* A predefined op cannot be freed. */
            BAD(MPI_ERR_OP, "predefined op MPI_MINLOC");
            RUN("MPI_Op_free", MPI_Op_free(&o));
        } else if (below(2)) {
            RUN("MPI_Op_free", MPI_Op_free(&o));
        } else {
            RUN("MPI_Op_commutative", MPI_Op_commutative(o, &flag));
        }
    }
}

static void t_groups(void) {
    MPI_Group world, out = MPI_GROUP_NULL;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int x, ranks[4] = {0, 0, 0, 0}, ranks2[4];
    /* Bad group handles. */
    for (int f = 0; f < 11; f++) {
        MPI_Group g = bad_group();
        int range[1][3] = {{0, 0, 1}};
        switch (f) {
        case 0: RUN("MPI_Group_size", MPI_Group_size(g, &x)); break;
        case 1: RUN("MPI_Group_rank", MPI_Group_rank(g, &x)); break;
        case 2: RUN("MPI_Group_free", MPI_Group_free(&g)); break;
        case 3: RUN("MPI_Group_compare", below(2) ? MPI_Group_compare(g, world, &x) : MPI_Group_compare(world, g, &x)); break;
        case 4: RUN("MPI_Group_union", below(2) ? MPI_Group_union(g, world, &out) : MPI_Group_union(world, g, &out)); break;
        case 5: RUN("MPI_Group_intersection", MPI_Group_intersection(world, g, &out)); break;
        case 6: RUN("MPI_Group_difference", MPI_Group_difference(g, world, &out)); break;
        case 7: RUN("MPI_Group_incl", MPI_Group_incl(g, 1, ranks, &out)); break;
        case 8: RUN("MPI_Group_excl", MPI_Group_excl(g, 1, ranks, &out)); break;
        case 9: RUN("MPI_Group_range_incl", MPI_Group_range_incl(g, 1, range, &out)); break;
        default: RUN("MPI_Group_translate_ranks", MPI_Group_translate_ranks(g, 1, ranks, world, ranks2)); break;
        }
    }
    /* Ranks out of range. */
    {
        ranks[0] = bad_dest();
        if (ranks[0] == MPI_PROC_NULL) ranks[0] = size;
        switch (below(3)) {
        case 0: RUN("MPI_Group_incl", MPI_Group_incl(world, 1, ranks, &out)); break;
        case 1: RUN("MPI_Group_excl", MPI_Group_excl(world, 1, ranks, &out)); break;
        default: RUN("MPI_Group_translate_ranks", MPI_Group_translate_ranks(world, 1, ranks, world, ranks2)); break;
        }
        if (out != MPI_GROUP_NULL) MPI_Group_free(&out);
    }
    MPI_Group_free(&world);
}

static void t_types(void) {
    MPI_Datatype nt = MPI_DATATYPE_NULL;
    int x, bl[2] = {1, 1}, dis[2] = {0, 2}, flag;
    MPI_Aint lb, ext, adis[2] = {0, 8};
    MPI_Count cx;
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Status st;
    /* Calls on a bad type (an uncommitted one is fine for them). */
    for (int f = 0; f < 13; f++) {
        MPI_Datatype t = bad_type(0);
        switch (f) {
        case 0: RUN("MPI_Type_commit", MPI_Type_commit(&t)); break;
        case 1: RUN("MPI_Type_free", MPI_Type_free(&t)); break;
        case 2: RUN("MPI_Type_size", MPI_Type_size(t, &x)); break;
        case 3: RUN("MPI_Type_get_extent", MPI_Type_get_extent(t, &lb, &ext)); break;
        case 4: RUN("MPI_Type_get_true_extent", MPI_Type_get_true_extent(t, &lb, &ext)); break;
        case 5: RUN("MPI_Type_dup", MPI_Type_dup(t, &nt)); break;
        case 6: RUN("MPI_Type_contiguous", MPI_Type_contiguous(2, t, &nt)); break;
        case 7: RUN("MPI_Type_vector", MPI_Type_vector(2, 1, 2, t, &nt)); break;
        case 8: RUN("MPI_Type_create_resized", MPI_Type_create_resized(t, 0, 16, &nt)); break;
        case 9: RUN("MPI_Type_set_name", MPI_Type_set_name(t, "x")); break;
        case 10:
            /* MPICH names MPI_DATATYPE_NULL (mpi4py checks it). */
            if (t == MPI_DATATYPE_NULL) BAD(MPI_SUCCESS, "type MPI_DATATYPE_NULL, named");
            RUN("MPI_Type_get_name", MPI_Type_get_name(t, name, &x));
            break;
        case 11: RUN("MPI_Type_size_x", MPI_Type_size_x(t, &cx)); break;
        default: {
            MPI_Datatype ts[2] = {MPI_INT, t};
            RUN("MPI_Type_create_struct", MPI_Type_create_struct(2, bl, adis, ts, &nt));
            break;
        }
        }
    }
    /* Freeing a predefined type. */
    {
        MPI_Datatype t = MPI_INT;
        BAD(MPI_ERR_TYPE, "predefined type MPI_INT");
        RUN("MPI_Type_free", MPI_Type_free(&t));
    }
    /* Constructors with a negative count. */
    for (int f = 0; f < 7; f++) {
        int c = bad_count();
        MPI_Datatype ts[2] = {MPI_INT, MPI_INT};
        switch (f) {
        case 0: RUN("MPI_Type_contiguous", MPI_Type_contiguous(c, MPI_INT, &nt)); break;
        case 1: RUN("MPI_Type_vector", MPI_Type_vector(c, 1, 2, MPI_INT, &nt)); break;
        case 2: RUN("MPI_Type_create_hvector", MPI_Type_create_hvector(c, 1, 8, MPI_INT, &nt)); break;
        case 3: RUN("MPI_Type_indexed", MPI_Type_indexed(c, bl, dis, MPI_INT, &nt)); break;
        case 4: RUN("MPI_Type_create_hindexed", MPI_Type_create_hindexed(c, bl, adis, MPI_INT, &nt)); break;
        case 5: RUN("MPI_Type_create_indexed_block", MPI_Type_create_indexed_block(c, 1, dis, MPI_INT, &nt)); break;
        default: RUN("MPI_Type_create_struct", MPI_Type_create_struct(c, bl, adis, ts, &nt)); break;
        }
    }
    /* Queries with a bad type. */
    {
        MPI_Datatype t = bad_type(0);
        MPI_Status s;
        MPI_Sendrecv(sbuf, 1, MPI_INT, MPI_PROC_NULL, 0, rbuf, 1, MPI_INT, MPI_PROC_NULL, 0,
                     MPI_COMM_WORLD, &s);
        if (below(2)) RUN("MPI_Get_count", MPI_Get_count(&s, t, &x));
        else RUN("MPI_Get_elements", MPI_Get_elements(&s, t, &x));
        (void)st;
    }
    /* Pack and Unpack. */
    {
        char packed[64];
        int pos = 0, pack_size = 0;
        MPI_Pack_size(N, MPI_INT, MPI_COMM_WORLD, &pack_size);
        const void *in = sbuf;
        int incount = N, outsize = (int)sizeof packed;
        MPI_Datatype t = MPI_INT;
        MPI_Comm comm = MPI_COMM_WORLD;
        switch (below(5)) {
        case 0: in = null_buffer("input buffer"); break;
        case 1: incount = bad_count(); break;
        case 2: t = bad_type(1); break;
        case 3: comm = bad_comm(); break;
        default:
            outsize = below(pack_size);
            BAD(MPI_ERR_TRUNCATE, "outsize %d for %d bytes", outsize, pack_size);
            break;
        }
        RUN("MPI_Pack", MPI_Pack(in, incount, t, packed, outsize, &pos, comm));
    }
    {
        char packed[64];
        int pos = 0, pack_size = 0;
        MPI_Pack_size(N, MPI_INT, MPI_COMM_WORLD, &pack_size);
        memset(packed, 0, sizeof packed);
        void *out = rbuf;
        int outcount = N, insize = pack_size;
        MPI_Datatype t = MPI_INT;
        MPI_Comm comm = MPI_COMM_WORLD;
        switch (below(5)) {
        case 0: out = null_buffer("output buffer"); break;
        case 1: outcount = bad_count(); break;
        case 2: t = bad_type(1); break;
        case 3: comm = bad_comm(); break;
        default:
            insize = below(pack_size);
            BAD(MPI_ERR_TRUNCATE, "insize %d for %d bytes", insize, pack_size);
            break;
        }
        RUN("MPI_Unpack", MPI_Unpack(packed, insize, &pos, out, outcount, t, comm));
    }
    (void)flag;
}

static void t_topologies(void) {
    int dims[3], periods[3] = {0, 0, 0}, coords[3], x, y;
    MPI_Comm nc = MPI_COMM_NULL;
    /* Cart_create: a bad comm, a dimension below 1, a negative ndims, a
     * grid larger than the comm (every rank the same). */
    {
        MPI_Comm comm = MPI_COMM_WORLD;
        int ndims = 1;
        dims[0] = size;
        switch (below(4)) {
        case 0: comm = bad_comm(); break;
        case 1: dims[0] = -below(3); BAD(MPI_ERR_DIMS, "dims[0] %d", dims[0]); break;
        case 2: ndims = -1 - below(5); BAD(MPI_ERR_ARG, "ndims %d", ndims); break;
        default: dims[0] = size + 1 + below(4); BAD(MPI_ERR_ARG, "dims[0] %d > size", dims[0]); break;
        }
        RUN("MPI_Cart_create", MPI_Cart_create(comm, ndims, dims, periods, 0, &nc));
        if (nc != MPI_COMM_NULL) MPI_Comm_free(&nc);
    }
    /* Dims_create. */
    {
        int nnodes = 12, ndims = 2;
        dims[0] = dims[1] = 0;
        switch (below(3)) {
        case 0: dims[0] = 5; BAD(MPI_ERR_DIMS, "dims[0] 5 for 12 nodes"); break;
        case 1: dims[below(2)] = -1 - below(5); BAD(MPI_ERR_DIMS, "a negative dims entry"); break;
        default: ndims = -1 - below(5); BAD(MPI_ERR_ARG, "ndims %d", ndims); break;
        }
        RUN("MPI_Dims_create", MPI_Dims_create(nnodes, ndims, dims));
    }
    /* Cartesian queries on a comm without a topology. */
    for (int f = 0; f < 4; f++) {
        BAD(MPI_ERR_TOPOLOGY, "MPI_COMM_WORLD (no topology)");
        int keep[1] = {1};
        switch (f) {
        case 0: RUN("MPI_Cart_shift", MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &x, &y)); break;
        case 1: RUN("MPI_Cart_get", MPI_Cart_get(MPI_COMM_WORLD, 1, dims, periods, coords)); break;
        case 2: RUN("MPI_Cart_coords", MPI_Cart_coords(MPI_COMM_WORLD, 0, 1, coords)); break;
        default: RUN("MPI_Cart_sub", MPI_Cart_sub(MPI_COMM_WORLD, keep, &nc)); break;
        }
    }
    /* Out of the grid. */
    {
        int r = below(2) ? size + below(5) : -1 - below(5);
        BAD(MPI_ERR_RANK, "rank %d", r);
        RUN("MPI_Cart_coords", MPI_Cart_coords(cart, r, 1, coords));
        coords[0] = below(2) ? size + below(5) : -1 - below(5);
        BAD(MPI_ERR_ARG, "coordinate %d (not periodic)", coords[0]);
        RUN("MPI_Cart_rank", MPI_Cart_rank(cart, coords, &x));
    }
}

typedef void (*tester)(void);
static const tester testers[] = {t_sends, t_receives, t_requests, t_collectives,
                                 t_comms, t_groups, t_types, t_topologies};

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const char *s = argc > 1 ? argv[1] : getenv("BADARGS_SEED");
    seed = s ? strtoull(s, NULL, 10) : 1;
    const char *rs = argc > 2 ? argv[2] : getenv("BADARGS_ROUNDS");
    int rounds = rs ? atoi(rs) : 3;
    verbose = getenv("BADARGS_VERBOSE") != NULL;
    rng = seed;
    peer = (rank + 1) % size;
    int *ub, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    CHECK(flag);
    tag_ub = *ub;
    for (int i = 0; i < BIG; i++) sbuf[i] = rank + i;
    good_arrays();
    static char bsend_space[1 << 16];
    MPI_Buffer_attach(bsend_space, sizeof bsend_space);
    MPI_Comm_dup(MPI_COMM_WORLD, &scratch);
    int d = size, p = 0;
    MPI_Cart_create(MPI_COMM_WORLD, 1, &d, &p, 0, &cart);
    CHECK(cart != MPI_COMM_NULL);

    for (int round = 0; round < rounds; round++) {
        /* Every tester once, in a seeded order (the same at every rank). */
        int order[sizeof testers / sizeof *testers];
        int n = (int)(sizeof testers / sizeof *testers);
        for (int i = 0; i < n; i++) order[i] = i;
        for (int i = n - 1; i > 0; i--) {
            int j = below(i + 1), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int i = 0; i < n; i++) testers[order[i]]();
    }

    /* The library still works. */
    for (int i = 0; i < n_uncommitted; i++) CHECK(MPI_Type_free(&uncommitted[i]) == MPI_SUCCESS);
    int one = rank + 1, sum = 0;
    CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(sum == size * (size + 1) / 2);
    /* MPI_INT's index in a predefined type's handle with another size
     * (8) is not MPI_INT: once MPI_INT's sum is made, the reduction is
     * still refused, as before it (the fast path's table of reductions is
     * keyed by the index). */
    {
        long long a = 1, b = 0;
        int cls = -1;
        int rc = MPI_Allreduce(&a, &b, 1, (MPI_Datatype)0x4c000805, MPI_SUM, MPI_COMM_WORLD);
        CHECK(rc != MPI_SUCCESS && MPI_Error_class(rc, &cls) == MPI_SUCCESS);
        CHECK(cls == MPI_ERR_TYPE || cls == MPI_ERR_OP);
        CHECK(b == 0);
    }
    int token = 100 + rank, got = -1, prev = (rank + size - 1) % size;
    CHECK(MPI_Sendrecv(&token, 1, MPI_INT, peer, 77, &got, 1, MPI_INT, prev, 77,
                       MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(got == 100 + prev);
    CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
    /* No message a bad call sent anyway is left over. */
    int left = 0;
    for (int i = 0; i < 50 && !left; i++)
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &left, MPI_STATUS_IGNORE);
    CHECK(!left);
    CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
    void *bb;
    int bsz;
    MPI_Buffer_detach(&bb, &bsz);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&scratch);
    if (failures == 0) printf("OK badargs rank=%d cases=%ld seed=%llu\n", rank, cases, seed);
    else fprintf(stderr, "rank %d: %ld of %ld cases returned the wrong class\n", rank, failures, cases);
    MPI_Finalize();
    return failures == 0 ? 0 : 1;
}
