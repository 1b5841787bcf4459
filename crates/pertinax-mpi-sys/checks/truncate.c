/*
 * Does a truncated receive stay inside its buffer? Rank 0 sends messages
 * of 16 B, 12 KiB, 100 KB and 1 MiB; rank 1 receives each with MPI_Recv
 * into a buffer of half the size followed by 64 guard bytes, and prints the
 * error code, MPI_Get_count and how many guard bytes were overwritten.
 *
 *   /tmp/ompi/bin/mpicc -O2 -o truncate truncate.c
 *   timeout 20 /tmp/ompi/bin/mpirun --allow-run-as-root --with-ft ulfm -n 2 ./truncate
 *   timeout 20 /tmp/ompi/bin/mpirun --allow-run-as-root --with-ft ulfm \
 *       --mca smsc ^cma -n 2 ./truncate
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int sizes[] = {16, 12293, 100000, 1 << 20};
    for (int k = 0; k < 4; k++) {
        int n = sizes[k];
        if (rank == 0) {
            char *b = malloc(n);
            memset(b, 1, n);
            MPI_Send(b, n, MPI_BYTE, 1, k, MPI_COMM_WORLD);
            free(b);
        } else if (rank == 1) {
            int cap = n / 2, count = 0, over = 0;
            unsigned char *b = malloc(cap + 64);
            memset(b, 0x55, cap + 64);
            MPI_Status st;
            int rc = MPI_Recv(b, cap, MPI_BYTE, 0, k, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            for (int i = cap; i < cap + 64; i++) over += b[i] != 0x55;
            printf("%d B into %d: rc %d, count %d, guard bytes overwritten %d\n", n, cap, rc,
                   count, over);
            fflush(stdout);
            free(b);
        }
    }
    MPI_Finalize();
    return 0;
}
