/* Half round trip of a ping-pong in C, four styles alternated in rounds in
   one launch (BENCHMARKS.md, run M6): 0 MPI_Send/MPI_Recv on
   MPI_COMM_WORLD into the buffer it sends from (the anchor pingpong.c);
   1 the same on an MPI_Comm_dup with MPI_ERRORS_RETURN, receiving into a
   second buffer (what pertinax-bench's worker did before it used one
   buffer); 2 MPI_Isend+MPI_Wait / MPI_Mprobe+MPI_Mrecv on the dup into the
   second buffer (pertinax's MPI path); 3 MPI_Send / MPI_Mprobe+MPI_Mrecv on
   the dup into the second buffer. Printed: the median and minimum over
   rounds, rank 0's clock.
   usage: pingpong_buffers BYTES ITERS_PER_ROUND */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    int n = argc > 1 ? atoi(argv[1]) : 1 << 20, iters = argc > 2 ? atoi(argv[2]) : 200;
    int rounds = 7;
    char *b = malloc(n), *rb = malloc(n);
    memset(b, 1, n);
    memset(rb, 0, n);
    double t[4][16];
    for (int k = 0; k < rounds; k++)
        for (int m = 0; m < 4; m++) {
            MPI_Comm c = m == 0 ? MPI_COMM_WORLD : d;
            char *into = m == 0 ? b : rb;
            MPI_Barrier(c);
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters && r < 2; i++)
                for (int step = 0; step < 2; step++) {
                    int peer = 1 - r, sending = (step == 0) == (r == 0);
                    if (sending) {
                        if (m == 2) {
                            MPI_Request q;
                            MPI_Isend(b, n, MPI_BYTE, peer, 5, c, &q);
                            MPI_Wait(&q, MPI_STATUS_IGNORE);
                        } else {
                            MPI_Send(b, n, MPI_BYTE, peer, 5, c);
                        }
                    } else if (m >= 2) {
                        MPI_Message msg;
                        MPI_Status st;
                        MPI_Mprobe(peer, 5, c, &msg, &st);
                        MPI_Mrecv(into, n, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
                    } else {
                        MPI_Recv(into, n, MPI_BYTE, peer, 5, c, MPI_STATUS_IGNORE);
                    }
                }
            t[m][k] = (MPI_Wtime() - t0) / iters / 2 * 1e6;
        }
    if (r == 0) {
        for (int m = 0; m < 4; m++) {
            for (int i = 1; i < rounds; i++)
                for (int j = i; j > 0 && t[m][j - 1] > t[m][j]; j--) {
                    double x = t[m][j]; t[m][j] = t[m][j - 1]; t[m][j - 1] = x;
                }
            printf("PB bytes=%d style=%d t_half_us_med=%.2f t_half_us_min=%.2f\n", n, m, t[m][rounds / 2], t[m][0]);
        }
    }
    free(b);
    free(rb);
    MPI_Finalize();
    return 0;
}
