/* 8-byte ping-pong between ranks 0 and 1, N round trips; and at 1 rank,
 * N send-to-self/receive pairs (no waiting). usage: pp N */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    int provided; if (getenv("PP_SERIAL")) MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided); else MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char buf[8] = {0};
    MPI_Barrier(MPI_COMM_WORLD);
    if (size == 1) {
        for (long i = 0; i < n; i++) {
            MPI_Send(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else if (rank == 0) {
        for (long i = 0; i < n; i++) {
            MPI_Send(buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else if (rank == 1) {
        for (long i = 0; i < n; i++) {
            MPI_Recv(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}
