/* pertinax-abi: an unchanged C ULFM program. Every round allreduces 1
 * over its communicator, then the members agree (MPIX_Comm_agree) on
 * whether it succeeded everywhere: ULFM reports a failure to some members
 * and not others, so the outcome is made uniform. When it failed somewhere
 * (MPIX_ERR_PROC_FAILED or MPIX_ERR_REVOKED), the survivors revoke,
 * shrink and redo the round. Prints "OK ulfm rank=R size=S sum=S
 * failed=F" at the end: the last sum must equal the survivors' count. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 8

/* Optional arguments R N: world rank R kills itself (raise(SIGKILL))
 * before its N-th round's allreduce. */
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int victim = argc > 2 ? atoi(argv[1]) : -1, at = argc > 2 ? atoi(argv[2]) : -1;
    MPI_Comm comm;
    /* A rank may die while the others still duplicate the world: then
     * the survivors' communicator is the world's shrink. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (MPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) {
        MPIX_Comm_revoke(MPI_COMM_WORLD);
        if (MPIX_Comm_shrink(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 8);
    }
    int world_rank, sum = 0, failed = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    int started = 0;
    for (int round = 0; round < ROUNDS; round++) {
        if (world_rank == victim && ++started == at) raise(SIGKILL);
        int one = 1;
        int rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
        int cls = MPI_SUCCESS;
        MPI_Error_class(rc, &cls);
        if (cls != MPI_SUCCESS && cls != MPIX_ERR_PROC_FAILED && cls != MPIX_ERR_REVOKED) {
            fprintf(stderr, "rank %d: unexpected error class %d\n", world_rank, cls);
            MPI_Abort(MPI_COMM_WORLD, 4);
        }
        /* The agreed flag is uniform even when agree reports a failure. */
        int ok = cls == MPI_SUCCESS;
        MPIX_Comm_agree(comm, &ok);
        if (ok) continue;
        MPIX_Comm_revoke(comm);
        MPI_Comm shrunk;
        if (MPIX_Comm_shrink(comm, &shrunk) != MPI_SUCCESS) {
            fprintf(stderr, "rank %d: shrink failed\n", world_rank);
            MPI_Abort(MPI_COMM_WORLD, 5);
        }
        MPI_Group fg;
        MPIX_Comm_get_failed(comm, &fg);
        MPI_Group_size(fg, &failed);
        MPI_Group_free(&fg);
        MPI_Comm_free(&comm);
        comm = shrunk;
        int flag = 1;
        rc = MPIX_Comm_agree(comm, &flag);
        if (rc != MPI_SUCCESS || flag != 1) {
            fprintf(stderr, "rank %d: agree gave %d, flag %d\n", world_rank, rc, flag);
            MPI_Abort(MPI_COMM_WORLD, 6);
        }
        round--;
    }
    int size;
    MPI_Comm_size(comm, &size);
    printf("OK ulfm rank=%d size=%d sum=%d failed=%d\n", world_rank, size, sum, failed);
    fflush(stdout);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return sum == size ? 0 : 7;
}
