/*
 * What an 8-byte ping-pong costs on Open MPI with the receive forms the MPI
 * backend could use: `recv` (MPI_Recv), `mprobe` (MPI_Mprobe + MPI_Mrecv),
 * and `after-nbc` (MPI_Recv after one MPI_Ibarrier + MPI_Wait at the
 * start: a finished non-blocking collective leaves libnbc's progress
 * function registered, so every later progress call runs it).
 * Prints the median half round trip of 7 batches of 20,000.
 *
 *   /tmp/ompi/bin/mpicc -O2 -o recv_cost recv_cost.c
 *   for m in recv mprobe after-nbc; do
 *       timeout 60 /tmp/ompi/bin/mpirun --allow-run-as-root --with-ft ulfm -n 2 ./recv_cost $m
 *   done
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void recv8(char *buf, int peer, int mprobe) {
    if (mprobe) {
        MPI_Message m;
        MPI_Status st;
        MPI_Mprobe(peer, 0, MPI_COMM_WORLD, &m, &st);
        MPI_Mrecv(buf, 8, MPI_BYTE, &m, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

int main(int argc, char **argv) {
    int rank, reps = 20000;
    char buf[8] = {0};
    double t[7];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *mode = argc > 1 ? argv[1] : "recv";
    int mprobe = strcmp(mode, "mprobe") == 0;
    if (strcmp(mode, "after-nbc") == 0) {
        MPI_Request r;
        MPI_Ibarrier(MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    for (int b = 0; b < 7; b++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < reps; i++) {
            if (rank == 0) {
                MPI_Send(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                recv8(buf, 1, mprobe);
            } else if (rank == 1) {
                recv8(buf, 0, mprobe);
                MPI_Send(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        t[b] = (MPI_Wtime() - t0) / reps / 2 * 1e6;
    }
    qsort(t, 7, sizeof t[0], cmp);
    if (rank == 0) printf("%-9s 8 B half round trip, median of 7 batches: %.3f us\n", mode, t[3]);
    MPI_Finalize();
    return 0;
}
