#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    char buf[8] = {0};
    MPI_Status st;
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        MPI_Send(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        MPI_Recv(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &st);
    }
    double t1 = MPI_Wtime();
    long s = 0; int x = 1;
    for (int i = 0; i < n; i++) { MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); s += x; }
    double t2 = MPI_Wtime();
    printf("SELF sendrecv_ns=%.1f allreduce_ns=%.1f %ld\n", (t1-t0)/n*1e9, (t2-t1)/n*1e9, s);
    MPI_Finalize();
    return 0;
}
