/*
 * pertinax-mpi-sys: the blocking fast paths of the MPI backend (see
 * src/fast.rs). Same conventions as pxm.c: C scalars, pointers and
 * intptr_t handles only; every function returns an MPI error code.
 */
#include <mpi.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define COMM(h) ((MPI_Comm)(h))

/* The same layout as pxm.c's pxm_status (and src/ffi.rs's Status). */
typedef struct {
    int source;
    int tag;
    int error;
    int cancelled;
    int64_t bytes;
} pxm_fast_status;

/*
 * A blocking receive that never consumes a message it refuses:
 * MPI_Mprobe(src, tag) takes the first matching message out of MPI's queue
 * (MPI's order: non-overtaking); if it fits in `cap` bytes and is a whole
 * number of `elem`-byte elements it is received into `buf` with MPI_Mrecv
 * (*taken = 1, out = the receive's status). Otherwise it is NOT received:
 * *taken = 0, *msg = its matched handle and out = the probe's status, so
 * the caller holds it for a later receive (MPI_Recv would fail with
 * MPI_ERR_TRUNCATE and drop it). A failed probe (ULFM: the source failed,
 * the communicator was revoked) returns its code.
 */
int pxm_mprobe_recv(void *buf, size_t cap, size_t elem, int src, int tag, intptr_t comm,
                    int *taken, intptr_t *msg, pxm_fast_status *out) {
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Status st;
    int count = 0;
    *taken = 0;
    if (cap > (size_t)INT_MAX) return MPI_ERR_COUNT;
    int rc = MPI_Mprobe(src, tag, COMM(comm), &m, &st);
    if (rc != MPI_SUCCESS) return rc;
    if (MPI_Get_count(&st, MPI_BYTE, &count) != MPI_SUCCESS || count == MPI_UNDEFINED)
        count = -1;
    out->source = st.MPI_SOURCE;
    out->tag = st.MPI_TAG;
    out->error = 0;
    out->cancelled = 0;
    out->bytes = count;
    if (count < 0 || (size_t)count > cap || (elem > 1 && (size_t)count % elem != 0)) {
        *msg = (intptr_t)m;
        return MPI_SUCCESS;
    }
    *taken = 1;
    rc = MPI_Mrecv(buf, count, MPI_BYTE, &m, &st);
    out->error = rc;
    return MPI_SUCCESS;
}
