/* Whether a parent learns of a spawned child's death.
   usage: mpirun --with-ft ulfm -n 1 ./a.out connected|unconnected
   The parent spawns 2 children over MPI_COMM_SELF. With `connected`, the
   parent and each child first exchange one byte each way (what
   pertinax-mpi's spawn does since 2026-11-29: `pxm_connect_remote`); with
   `unconnected`, they exchange nothing. Child 1 then dies (SIGKILL) after
   200 ms. The parent polls MPI_Iprobe(MPI_ANY_SOURCE) on the
   intercommunicator for at most 5 s (MPIX_ERR_PROC_FAILED_PENDING or
   MPI_ERR_PROC_FAILED once it knows), and prints what it saw and when.
   Only then, if it learnt of the death, does it send to child 1 (a send
   to a child it has no connection to, started while the child dies, never
   returns: not tried). Exit 0 iff the death was reported. */
#include <mpi.h>
#include <mpi-ext.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int connected = argc > 1 && strcmp(argv[1], "connected") == 0;
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    int x = 1;
    if (parent == MPI_COMM_NULL) {
        MPI_Comm inter;
        int errs[2];
        char *args[] = {argv[1], NULL};
        MPI_Comm_spawn(argv[0], args, 2, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter, errs);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        if (connected) {
            for (int c = 0; c < 2; c++) MPI_Send(&x, 1, MPI_INT, c, 5, inter);
            for (int c = 0; c < 2; c++) MPI_Recv(&x, 1, MPI_INT, c, 6, inter, MPI_STATUS_IGNORE);
        }
        double t0 = now();
        int flag = 0, rc = MPI_SUCCESS;
        MPI_Status st;
        while (now() - t0 < 5.0) {
            rc = MPI_Iprobe(MPI_ANY_SOURCE, 7, inter, &flag, &st);
            if (rc != MPI_SUCCESS || flag) break;
            usleep(1000);
        }
        int ec = MPI_SUCCESS;
        if (rc != MPI_SUCCESS) MPI_Error_class(rc, &ec);
        printf("%s: any-source probe after %.3f s: %s\n", connected ? "connected" : "unconnected",
               now() - t0,
               ec == MPIX_ERR_PROC_FAILED_PENDING || ec == MPIX_ERR_PROC_FAILED
                   ? "the death reported"
                   : "nothing reported");
        if (rc != MPI_SUCCESS) {
            t0 = now();
            int src = MPI_Send(&x, 1, MPI_INT, 1, 2, inter);
            MPI_Error_class(src, &ec);
            printf("  then a send to the dead child: class %d after %.3f s\n", ec, now() - t0);
        }
        fflush(stdout);
        MPI_Send(&x, 1, MPI_INT, 0, 9, inter);
        MPI_Finalize();
        return rc != MPI_SUCCESS ? 0 : 1;
    }
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    if (connected) {
        MPI_Recv(&x, 1, MPI_INT, 0, 5, parent, MPI_STATUS_IGNORE);
        MPI_Send(&x, 1, MPI_INT, 0, 6, parent);
    }
    if (r == 1) {
        usleep(200000);
        raise(SIGKILL);
    }
    MPI_Recv(&x, 1, MPI_INT, 0, 9, parent, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
