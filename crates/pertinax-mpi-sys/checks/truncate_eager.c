/*
 * Is a truncated receive of a short (eager) message safe and told whole?
 * Rank 0 sends messages of 9, 1024 and 1025 B; rank 1 receives each with
 * MPI_Recv into a buffer of 0, 8 and 1024 bytes (never the whole message)
 * followed by 64 guard bytes, and prints the return code, the status's
 * error and MPI_Get_count (the sent length, or the bytes received?), and
 * how many guard bytes were overwritten.
 *
 *   /tmp/ompi/bin/mpicc -O2 -o truncate_eager truncate_eager.c
 *   timeout 20 /tmp/ompi/bin/mpirun --allow-run-as-root --with-ft ulfm -n 2 ./truncate_eager
 *   timeout 20 /tmp/ompi/bin/mpirun --allow-run-as-root --with-ft ulfm \
 *       --mca btl tcp,self -n 2 ./truncate_eager
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
    const int sizes[] = {9, 1024, 1025};
    const int caps[] = {0, 8, 1023};
    int tag = 0;
    for (int k = 0; k < 3; k++) {
        for (int c = 0; c < 3; c++, tag++) {
            int n = sizes[k], cap = caps[c];
            if (cap >= n) continue;
            if (rank == 0) {
                char *b = malloc(n);
                for (int i = 0; i < n; i++) b[i] = (char)(i + 1);
                MPI_Send(b, n, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
                free(b);
            } else if (rank == 1) {
                int count = -1, over = 0, wrong = 0;
                unsigned char *b = malloc(cap + 64);
                memset(b, 0x55, cap + 64);
                MPI_Status st;
                st.MPI_ERROR = -1;
                int rc = MPI_Recv(b, cap, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st);
                MPI_Get_count(&st, MPI_BYTE, &count);
                for (int i = cap; i < cap + 64; i++) over += b[i] != 0x55;
                for (int i = 0; i < cap; i++) wrong += b[i] != (unsigned char)(i + 1);
                printf("%4d B into %4d: rc %d, status error %d, count %d, source %d, tag %d, "
                       "prefix wrong %d, guard bytes overwritten %d\n",
                       n, cap, rc, st.MPI_ERROR, count, st.MPI_SOURCE, st.MPI_TAG == tag, wrong, over);
                fflush(stdout);
                free(b);
            }
        }
    }
    /* The next message after a truncated one arrives whole. */
    if (rank == 0) {
        int x = 42;
        MPI_Send(&x, 1, MPI_INT, 1, 99, MPI_COMM_WORLD);
    } else if (rank == 1) {
        int x = 0;
        MPI_Recv(&x, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("next message: %d\n", x);
    }
    MPI_Finalize();
    return 0;
}
