/*
 * pertinax-mpi-sys: the shim's part for groups, intercommunicators and
 * dynamic processes (MPI_Comm_spawn, MPI_Comm_get_parent), with the same
 * conventions as pxm.c: handles cross as intptr_t, every function returns
 * an MPI error code (MPI_SUCCESS = 0).
 */
#include <mpi.h>
#include <stdlib.h>
#include <stddef.h>
#include <stdint.h>

#define COMM(h) ((MPI_Comm)(h))
#define GROUP(h) ((MPI_Group)(h))

intptr_t pxm_group_null(void) { return (intptr_t)MPI_GROUP_NULL; }
int pxm_root(void) { return MPI_ROOT; }

/* The local (remote = 0) or remote group of `comm`. */
int pxm_comm_group_of(intptr_t comm, int remote, intptr_t *out) {
    MPI_Group g = MPI_GROUP_NULL;
    int rc = remote ? MPI_Comm_remote_group(COMM(comm), &g) : MPI_Comm_group(COMM(comm), &g);
    *out = (intptr_t)g;
    return rc;
}

int pxm_group_free(intptr_t *g) {
    MPI_Group h = GROUP(*g);
    int rc = MPI_Group_free(&h);
    *g = (intptr_t)h;
    return rc;
}

/* The group of the processes rank ranks[i] of groups[i], i < n, in that
 * order (one MPI_Group_incl per process, joined by MPI_Group_union, which
 * keeps the first operand's order and appends the second's new members). */
int pxm_group_build(int n, const intptr_t *groups, const int *ranks, intptr_t *out) {
    MPI_Group acc = MPI_GROUP_EMPTY;
    *out = (intptr_t)MPI_GROUP_NULL;
    for (int i = 0; i < n; i++) {
        MPI_Group one, joined;
        int rc = MPI_Group_incl(GROUP(groups[i]), 1, &ranks[i], &one);
        if (rc != MPI_SUCCESS) {
            if (acc != MPI_GROUP_EMPTY) MPI_Group_free(&acc);
            return rc;
        }
        rc = MPI_Group_union(acc, one, &joined);
        MPI_Group_free(&one);
        if (acc != MPI_GROUP_EMPTY) MPI_Group_free(&acc);
        if (rc != MPI_SUCCESS) return rc;
        acc = joined;
    }
    *out = (intptr_t)acc;
    return MPI_SUCCESS;
}

int pxm_group_size(intptr_t g, int *n) { return MPI_Group_size(GROUP(g), n); }

/* A communicator of `group` without a parent (collective over the group
 * only), with MPI_ERRORS_RETURN. */
int pxm_comm_from_group(intptr_t group, const char *tag, intptr_t *out) {
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Comm_create_from_group(GROUP(group), tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    *out = (intptr_t)c;
    return rc;
}

/* MPI_Intercomm_create: `local` with its leader `local_leader`, the
 * remote leader `remote_leader` in `peer`. (Not
 * MPI_Intercomm_create_from_groups: ULFM's MPIX_Comm_revoke does not reach
 * every member of the communicators it makes, Open MPI 5.0.11.) */
int pxm_intercomm_create(intptr_t local, int local_leader, intptr_t peer, int remote_leader,
                         int tag, intptr_t *out) {
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Intercomm_create(COMM(local), local_leader, COMM(peer), remote_leader, tag, &c);
    *out = (intptr_t)c;
    return rc;
}

int pxm_intercomm_merge(intptr_t inter, int high, intptr_t *out) {
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Intercomm_merge(COMM(inter), high, &c);
    *out = (intptr_t)c;
    return rc;
}

int pxm_comm_remote_size(intptr_t comm, int *n) { return MPI_Comm_remote_size(COMM(comm), n); }

int pxm_comm_get_parent(intptr_t *out) {
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Comm_get_parent(&c);
    *out = (intptr_t)c;
    return rc;
}

/* MPI_Comm_spawn of `cmd argv...` (argv NULL-terminated; read at the root
 * only) over `comm`; errcodes holds maxprocs ints. */
int pxm_comm_spawn(const char *cmd, char **argv, int maxprocs, int root, intptr_t comm,
                   intptr_t *inter, int *errcodes) {
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Comm_spawn(cmd, argv, maxprocs, MPI_INFO_NULL, root, COMM(comm), &c, errcodes);
    *inter = (intptr_t)c;
    return rc;
}

/* MPI_Comm_disconnect (collective over both groups of an intercommunicator). */
int pxm_comm_disconnect(intptr_t *comm) {
    MPI_Comm c = COMM(*comm);
    int rc = MPI_Comm_disconnect(&c);
    *comm = (intptr_t)c;
    return rc;
}

/* Blocking MPI_Bcast of `len` bytes (intercommunicator roots: MPI_ROOT,
 * MPI_PROC_NULL). */
int pxm_bcast(void *buf, int len, int root, intptr_t comm) {
    return MPI_Bcast(buf, len, MPI_BYTE, root, COMM(comm));
}

/* Blocking MPI_Allgather of one unsigned 32-bit value per process (on an
 * intercommunicator: `out` gets the remote group's values). */
int pxm_allgather_u32(uint32_t mine, uint32_t *out, intptr_t comm) {
    return MPI_Allgather(&mine, 1, MPI_UINT32_T, out, 1, MPI_UINT32_T, COMM(comm));
}

/* One byte to and from every process of the remote group of intercommunicator
 * `inter` (collective over both groups). Open MPI carries messages between
 * two jobs (a spawn's parents and children) over TCP, connected at the first
 * message, and tells a process of another job's death only through that
 * connection: a process never told it waits forever on a peer that died
 * before their first message was through, and a send started while the peer
 * dies in the connection's handshake never completes
 * (checks/spawned_death.c). So a spawn connects every pair across its two
 * groups while all are alive. */
int pxm_connect_remote(intptr_t inter) {
    int n = 0, rc = MPI_Comm_remote_size(COMM(inter), &n);
    if (rc != MPI_SUCCESS || n <= 0) {
        return rc;
    }
    MPI_Request reqs[2 * 64];
    MPI_Status sts[2 * 64];
    unsigned char out = 1, in[64];
    /* In batches of 64 peers: requests on the stack. */
    for (int first = 0; first < n; first += 64) {
        int k = n - first < 64 ? n - first : 64;
        for (int i = 0; i < k; i++) {
            rc = MPI_Irecv(&in[i], 1, MPI_BYTE, first + i, 0, COMM(inter), &reqs[i]);
            if (rc == MPI_SUCCESS) {
                rc = MPI_Isend(&out, 1, MPI_BYTE, first + i, 0, COMM(inter), &reqs[k + i]);
            }
            if (rc != MPI_SUCCESS) {
                /* The requests posted so far are left to the communicator's
                 * end: the caller gives the spawn up. */
                return rc;
            }
        }
        rc = MPI_Waitall(2 * k, reqs, sts);
        if (rc == MPI_ERR_IN_STATUS) {
            /* The first request's own error (a peer's failure), not the
             * summary code. */
            for (int i = 0; i < 2 * k; i++) {
                if (sts[i].MPI_ERROR != MPI_SUCCESS && sts[i].MPI_ERROR != MPI_ERR_PENDING) {
                    return sts[i].MPI_ERROR;
                }
            }
        }
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    return MPI_SUCCESS;
}

/* A one-byte message with `tag` to every process of the intercommunicator's
 * remote group, waited for at most `bound` seconds. A spawn's parents send
 * it when they give the spawn up: Open MPI drops a revoke that reaches a
 * process before its communicator exists (comm_ft_reliable_bcast.c:
 * "Could not find the communicator"), and a new process still in MPI_Init
 * would then never learn of it, while a message for a communicator it does
 * not have yet is kept until it has (ob1's
 * non_existing_communicator_pending). The caller revokes the communicator
 * next, which ends sends not yet out (a first message to another job's
 * process waits for the connection): so they are waited for first, but
 * bounded, since a send to a process that died before its connection
 * never completes. */
int pxm_notify_remote(intptr_t inter, int tag, double bound) {
    static const unsigned char one = 1;
    int n = 0, rc = MPI_Comm_remote_size(COMM(inter), &n);
    if (rc != MPI_SUCCESS || n <= 0) {
        return rc;
    }
    MPI_Request *reqs = malloc((size_t)n * sizeof *reqs);
    if (reqs == NULL) {
        return MPI_ERR_NO_MEM;
    }
    int k = 0;
    for (; rc == MPI_SUCCESS && k < n; k++) {
        rc = MPI_Isend(&one, 1, MPI_BYTE, k, tag, COMM(inter), &reqs[k]);
    }
    if (rc != MPI_SUCCESS) {
        k--;
    }
    int done = 0;
    double end = MPI_Wtime() + bound;
    while (!done && MPI_Testall(k, reqs, &done, MPI_STATUSES_IGNORE) == MPI_SUCCESS
           && MPI_Wtime() < end) {
    }
    if (!done) {
        for (int i = 0; i < k; i++) {
            if (reqs[i] != MPI_REQUEST_NULL) {
                MPI_Request_free(&reqs[i]);
            }
        }
    }
    free(reqs);
    return rc;
}
