/* How long MPI_Finalize takes after a failure, and what mpirun's exit code
   is, with and without `--mca async_mpi_finalize 1` (ompi issue 11404).
   usage: mpirun --with-ft ulfm -n 4 ./a.out MODE
   MODE kill: the last rank dies (SIGKILL) after a barrier; the survivors
     notice it (a second barrier fails), call MPI_Finalize and exit 1.
   kill-unnoticed: as kill, without the second barrier.
   early: rank 0 calls MPI_Finalize after the barrier and exits 1 (an early
     leaver); the others wait in MPI_Recv from it (it is reported failed
     once gone), then call MPI_Finalize and exit 0.
   Every rank prints the value of the cvar async_mpi_finalize and the time
   its MPI_Finalize took. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int async_finalize(void) {
    int idx, v = 0;
    if (MPI_T_cvar_get_index("async_mpi_finalize", &idx) != MPI_SUCCESS) return -1;
    MPI_T_cvar_handle h;
    int count;
    if (MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS) return -1;
    MPI_T_cvar_read(h, &v);
    MPI_T_cvar_handle_free(&h);
    return v;
}

static int finalize_and_exit(int r, int code) {
    double t0 = MPI_Wtime();
    fprintf(stderr, "rank %d: MPI_Finalize\n", r);
    MPI_Finalize();
    /* MPI_Wtime is allowed after MPI_Finalize. */
    fprintf(stderr, "rank %d: MPI_Finalize took %.2f s, exit %d\n", r, MPI_Wtime() - t0, code);
    return code;
}

int main(int argc, char **argv) {
    int provided;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "kill";
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (r == 0) fprintf(stderr, "mode %s, async_mpi_finalize %d\n", mode, async_finalize());
    MPI_Barrier(MPI_COMM_WORLD);
    if (!strcmp(mode, "early")) {
        if (r == 0) return finalize_and_exit(r, 1);
        int x, rc = MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        fprintf(stderr, "rank %d: MPI_Recv from the leaver returned %d\n", r, rc);
        return finalize_and_exit(r, 0);
    }
    if (r == n - 1) raise(SIGKILL);
    if (strcmp(mode, "kill-unnoticed")) {
        int rc = MPI_Barrier(MPI_COMM_WORLD);
        fprintf(stderr, "rank %d: barrier after the kill returned %d\n", r, rc);
    }
    return finalize_and_exit(r, 1);
}
