#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    char buf[8] = {0};
    long s = 0; int x = 1, y = 0;
    for (int i = 0; i < n; i++) {
        MPI_Bcast(buf, 8, MPI_BYTE, 0, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        s += y;
    }
    printf("%ld\n", s);
    MPI_Finalize();
    return 0;
}
