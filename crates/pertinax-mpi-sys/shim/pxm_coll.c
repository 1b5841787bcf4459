/*
 * pertinax-mpi-sys: MPI's own collectives (blocking and non-blocking), the
 * datatypes and reduction operations they take, and user-defined
 * operations whose function is in Rust (see src/coll.rs).
 *
 * Same conventions as pxm.c: handles cross as intptr_t, every function
 * returns an MPI error code. One entry point, pxm_coll, starts any
 * collective: `kind` names it (the PXM_* values below, mirrored by
 * `coll::Kind` in Rust), `blocking` picks MPI_Xxx over MPI_Ixxx (then
 * `*req` is MPI_REQUEST_NULL). A NULL `sbuf` means MPI_IN_PLACE. Counts and
 * displacements are in elements of `dtype`.
 */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define COMM(h) ((MPI_Comm)(h))
#define DT(h) ((MPI_Datatype)(h))
#define OPH(h) ((MPI_Op)(h))

enum {
    PXM_BARRIER = 0,
    PXM_BCAST = 1,
    PXM_REDUCE = 2,
    PXM_ALLREDUCE = 3,
    PXM_SCAN = 4,
    PXM_EXSCAN = 5,
    PXM_REDUCE_SCATTER = 6,
    PXM_GATHER = 7,
    PXM_GATHERV = 8,
    PXM_SCATTER = 9,
    PXM_SCATTERV = 10,
    PXM_ALLGATHER = 11,
    PXM_ALLGATHERV = 12,
    PXM_ALLTOALL = 13,
    PXM_ALLTOALLV = 14,
};

/* The predefined datatypes, by the index `coll::Prim` uses. */
intptr_t pxm_datatype(int prim) {
    switch (prim) {
    case 0: return (intptr_t)MPI_BYTE;
    case 1: return (intptr_t)MPI_INT8_T;
    case 2: return (intptr_t)MPI_UINT8_T;
    case 3: return (intptr_t)MPI_INT16_T;
    case 4: return (intptr_t)MPI_UINT16_T;
    case 5: return (intptr_t)MPI_INT32_T;
    case 6: return (intptr_t)MPI_UINT32_T;
    case 7: return (intptr_t)MPI_INT64_T;
    case 8: return (intptr_t)MPI_UINT64_T;
    case 9: return (intptr_t)MPI_FLOAT;
    case 10: return (intptr_t)MPI_DOUBLE;
    default: return (intptr_t)MPI_DATATYPE_NULL;
    }
}

/* The predefined operations, by the index `coll::Builtin` uses. */
intptr_t pxm_op(int which) {
    switch (which) {
    case 0: return (intptr_t)MPI_SUM;
    case 1: return (intptr_t)MPI_PROD;
    case 2: return (intptr_t)MPI_MIN;
    case 3: return (intptr_t)MPI_MAX;
    case 4: return (intptr_t)MPI_BAND;
    case 5: return (intptr_t)MPI_BOR;
    case 6: return (intptr_t)MPI_BXOR;
    case 7: return (intptr_t)MPI_LAND;
    case 8: return (intptr_t)MPI_LOR;
    case 9: return (intptr_t)MPI_LXOR;
    default: return (intptr_t)MPI_OP_NULL;
    }
}

/* A contiguous datatype of `bytes` bytes (committed), for user operations
 * on elements MPI has no type for; also what names the operation to the
 * Rust side of the trampoline. */
int pxm_type_bytes(int bytes, intptr_t *out) {
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int rc = MPI_Type_contiguous(bytes, MPI_BYTE, &t);
    if (rc != MPI_SUCCESS) return rc;
    rc = MPI_Type_commit(&t);
    if (rc != MPI_SUCCESS) {
        MPI_Type_free(&t);
        return rc;
    }
    *out = (intptr_t)t;
    return MPI_SUCCESS;
}

int pxm_type_free(intptr_t *t) {
    MPI_Datatype d = DT(*t);
    int rc = MPI_Type_free(&d);
    *t = (intptr_t)d;
    return rc;
}

/* The Rust function behind every user operation: combines `len` elements
 * of the datatype `dtype` as inout[i] = in[i] (+) inout[i]. Set once by
 * pxm_user_op_create (a process has one). */
typedef void (*pxm_user_fn)(const void *in, void *inout, int len, intptr_t dtype);
static pxm_user_fn user_fn = NULL;

static void trampoline(void *in, void *inout, int *len, MPI_Datatype *dt) {
    if (user_fn != NULL && len != NULL && dt != NULL) user_fn(in, inout, *len, (intptr_t)*dt);
}

int pxm_user_op_create(pxm_user_fn f, int commute, intptr_t *out) {
    user_fn = f;
    MPI_Op op = MPI_OP_NULL;
    int rc = MPI_Op_create(trampoline, commute, &op);
    if (rc == MPI_SUCCESS) *out = (intptr_t)op;
    return rc;
}

int pxm_op_free(intptr_t *op) {
    MPI_Op o = OPH(*op);
    int rc = MPI_Op_free(&o);
    *op = (intptr_t)o;
    return rc;
}

int pxm_coll(int kind, int blocking, const void *sbuf, void *rbuf, int count,
             const int *scounts, const int *sdispls, const int *rcounts, const int *rdispls,
             intptr_t dtype, intptr_t op, int root, intptr_t comm, intptr_t *req) {
    MPI_Comm c = COMM(comm);
    MPI_Datatype t = DT(dtype);
    MPI_Op o = OPH(op);
    MPI_Request r = MPI_REQUEST_NULL;
    const void *s = sbuf == NULL ? MPI_IN_PLACE : sbuf;
    int rc;
    *req = (intptr_t)MPI_REQUEST_NULL;
    switch (kind) {
    case PXM_BARRIER:
        rc = blocking ? MPI_Barrier(c) : MPI_Ibarrier(c, &r);
        break;
    case PXM_BCAST:
        rc = blocking ? MPI_Bcast(rbuf, count, t, root, c) : MPI_Ibcast(rbuf, count, t, root, c, &r);
        break;
    case PXM_REDUCE:
        rc = blocking ? MPI_Reduce(s, rbuf, count, t, o, root, c)
                      : MPI_Ireduce(s, rbuf, count, t, o, root, c, &r);
        break;
    case PXM_ALLREDUCE:
        rc = blocking ? MPI_Allreduce(s, rbuf, count, t, o, c)
                      : MPI_Iallreduce(s, rbuf, count, t, o, c, &r);
        break;
    case PXM_SCAN:
        rc = blocking ? MPI_Scan(s, rbuf, count, t, o, c) : MPI_Iscan(s, rbuf, count, t, o, c, &r);
        break;
    case PXM_EXSCAN:
        rc = blocking ? MPI_Exscan(s, rbuf, count, t, o, c)
                      : MPI_Iexscan(s, rbuf, count, t, o, c, &r);
        break;
    case PXM_REDUCE_SCATTER:
        rc = blocking ? MPI_Reduce_scatter(s, rbuf, rcounts, t, o, c)
                      : MPI_Ireduce_scatter(s, rbuf, rcounts, t, o, c, &r);
        break;
    case PXM_GATHER:
        rc = blocking ? MPI_Gather(s, count, t, rbuf, count, t, root, c)
                      : MPI_Igather(s, count, t, rbuf, count, t, root, c, &r);
        break;
    case PXM_GATHERV:
        rc = blocking ? MPI_Gatherv(s, count, t, rbuf, rcounts, rdispls, t, root, c)
                      : MPI_Igatherv(s, count, t, rbuf, rcounts, rdispls, t, root, c, &r);
        break;
    case PXM_SCATTER:
        rc = blocking ? MPI_Scatter(s, count, t, rbuf, count, t, root, c)
                      : MPI_Iscatter(s, count, t, rbuf, count, t, root, c, &r);
        break;
    case PXM_SCATTERV:
        rc = blocking ? MPI_Scatterv(s, scounts, sdispls, t, rbuf, count, t, root, c)
                      : MPI_Iscatterv(s, scounts, sdispls, t, rbuf, count, t, root, c, &r);
        break;
    case PXM_ALLGATHER:
        rc = blocking ? MPI_Allgather(s, count, t, rbuf, count, t, c)
                      : MPI_Iallgather(s, count, t, rbuf, count, t, c, &r);
        break;
    case PXM_ALLGATHERV:
        rc = blocking ? MPI_Allgatherv(s, count, t, rbuf, rcounts, rdispls, t, c)
                      : MPI_Iallgatherv(s, count, t, rbuf, rcounts, rdispls, t, c, &r);
        break;
    case PXM_ALLTOALL:
        rc = blocking ? MPI_Alltoall(s, count, t, rbuf, count, t, c)
                      : MPI_Ialltoall(s, count, t, rbuf, count, t, c, &r);
        break;
    case PXM_ALLTOALLV:
        rc = blocking ? MPI_Alltoallv(s, scounts, sdispls, t, rbuf, rcounts, rdispls, t, c)
                      : MPI_Ialltoallv(s, scounts, sdispls, t, rbuf, rcounts, rdispls, t, c, &r);
        break;
    default:
        return MPI_ERR_ARG;
    }
    *req = (intptr_t)r;
    return rc;
}
