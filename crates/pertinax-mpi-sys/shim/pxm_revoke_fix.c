/*
 * A guard against Open MPI 5.0.10/5.0.11's segmentation fault when a
 * failure is noticed while a communicator is being created.
 *
 * The defect (read in Open MPI's v5.0.x sources): when a process is first
 * noticed failed, ompi_errhandler_proc_failed_internal() walks every
 * communicator in the table and calls ompi_comm_set_rank_failed(), which
 * calls ompi_comm_revoke_local(comm, true), which since 5.0.10 (the
 * backport of ompi PR #13420) ends with
 *
 *     comm->c_coll->coll_revoke_local(comm);
 *
 * A communicator under creation is in the table from the end of its
 * context-id agreement (comm_cid.c) until its collectives are selected
 * (mca_coll_base_comm_select in ompi_comm_activate), and its c_coll is
 * NULL all that time; the activation's allreduce progresses MPI, which
 * delivers the failure event, and the process dies. Any creation can meet
 * it (MPI_Comm_dup, split, shrink, a spawn's merge), and recovery creates
 * communicators exactly when failures happen.
 *
 * The guard defines ompi_comm_revoke_local in the program, which the
 * dynamic linker binds ahead of libmpi's own (every call to it inside
 * libmpi goes through the PLT). When the communicator has no c_coll yet,
 * it lends it one whose coll_revoke_local does nothing (a communicator
 * without selected collectives has no collective sub-communicators to
 * revoke, which is all that call does), runs libmpi's function (which
 * marks the communicator's collectives revoked in the PML and wakes the
 * waiters, as for any other communicator) and takes the loan back. Every
 * other call goes straight to libmpi's.
 *
 * The guard reaches into two of Open MPI's private structures, so it is
 * armed only after MPI_Init, and only where their layout is the one read
 * from 5.0.10's and 5.0.11's code (c_coll at 0x158 of the communicator,
 * coll_revoke_local at 0x450 of c_coll) and checked on MPI_COMM_WORLD:
 * its c_coll's coll_revoke_local must be libmpi's
 * mca_coll_base_revoke_local. Anywhere else (5.0.9, which has no such
 * call; MPICH; another layout) it stays unarmed and changes nothing.
 * Single-threaded MPI (pertinax asks for no more) delivers failure events
 * on the thread that runs progress, so nothing else touches the
 * communicator while the loan lasts.
 *
 * Shown by crates/pertinax-mpi-sys/checks/dup_under_failure.c.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(OPEN_MPI) && OPEN_MPI

#define C_COLL_AT 0x158
#define REVOKE_LOCAL_AT 0x450

typedef bool (*revoke_local_fn)(void *comm, bool coll_only);

static int armed;
static uint64_t loans;

static int no_sub_communicators(void *comm) {
    (void)comm;
    return 0;
}

/* The stand-in c_coll: zero but for coll_revoke_local. */
static union {
    unsigned char bytes[REVOKE_LOCAL_AT + sizeof(void *)];
    void *align;
} stand_in;

static void **c_coll_of(void *comm) { return (void **)((char *)comm + C_COLL_AT); }

bool ompi_comm_revoke_local(void *comm, bool coll_only) {
    static revoke_local_fn real;
    if (real == NULL) real = (revoke_local_fn)dlsym(RTLD_NEXT, "ompi_comm_revoke_local");
    if (real == NULL) return false; /* not Open MPI: never called */
    void **c_coll = c_coll_of(comm);
    if (!armed || *c_coll != NULL) return real(comm, coll_only);
    *c_coll = stand_in.bytes;
    bool r = real(comm, coll_only);
    if (*c_coll == stand_in.bytes) *c_coll = NULL;
    loans++;
    return r;
}

/* Arms the guard if this MPI is the one it knows; returns whether it is
   armed. Call after MPI_Init. */
int pxm_revoke_fix_arm(void) {
    armed = 0;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(version, &len) != MPI_SUCCESS) return 0;
    if (strncmp(version, "Open MPI v5.0.1", strlen("Open MPI v5.0.1")) != 0) return 0;
    void *base_revoke = dlsym(RTLD_DEFAULT, "mca_coll_base_revoke_local");
    if (base_revoke == NULL || dlsym(RTLD_NEXT, "ompi_comm_revoke_local") == NULL) return 0;
    void *world_coll = *c_coll_of((void *)MPI_COMM_WORLD);
    if (world_coll == NULL) return 0;
    void *slot;
    memcpy(&slot, (char *)world_coll + REVOKE_LOCAL_AT, sizeof slot);
    if (slot != base_revoke) return 0;
    void *fn = (void *)no_sub_communicators;
    memcpy(stand_in.bytes + REVOKE_LOCAL_AT, &fn, sizeof fn);
    armed = 1;
    return 1;
}

/* How many times the guard lent a c_coll (each one a crash avoided). */
uint64_t pxm_revoke_fix_loans(void) { return loans; }

#else /* not Open MPI: nothing to guard */

int pxm_revoke_fix_arm(void) { return 0; }
uint64_t pxm_revoke_fix_loans(void) { return 0; }

#endif
