/* IMB-style PingPing between ranks 0 and 1 (Open MPI side of
 * `pertinax-bench pingping`; the anchors have no ping-ping program).
 *
 * usage: pingping [-s sizes] [-r reps] [-w warmup] [-b batches]
 *   sizes: comma-separated byte counts (default 0,8,1024,65536,1048576)
 *
 * Both ranks post MPI_Isend to each other, MPI_Recv, then MPI_Wait, so the
 * two messages cross.  Per size: `warmup` iterations, then `batches` timed
 * batches; t = batch_time / reps (one message each way per iteration),
 * matching the pertinax worker.  Sizes above 1 MiB use reps/4 (at least
 * 10), as the worker does.  Prints "PI size=... t_half_us_med=...
 * t_half_us_min=... bw_GBps=... reps=..." (the field names of pingpong.c;
 * here t_half is the time per crossing exchange).
 * Compiled with mpicc -I<anchors dir> (for common.h). */
#include "common.h"
#include <unistd.h>

#define MAXSIZES 64

int main(int argc, char **argv) {
    int reps = 1000, warmup = 100, batches = 7;
    long sizes[MAXSIZES] = {0, 8, 1024, 65536, 1048576};
    int nsizes = 5;
    int opt;
    while ((opt = getopt(argc, argv, "s:r:w:b:")) != -1) {
        switch (opt) {
        case 's': {
            nsizes = 0;
            for (char *p = strtok(optarg, ","); p && nsizes < MAXSIZES; p = strtok(NULL, ","))
                sizes[nsizes++] = atol(p);
            break;
        }
        case 'r': reps = atoi(optarg); break;
        case 'w': warmup = atoi(optarg); break;
        case 'b': batches = atoi(optarg); break;
        default: fprintf(stderr, "bad args\n"); return 2;
        }
    }
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0) fprintf(stderr, "need >= 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long max = 1;
    for (int i = 0; i < nsizes; i++) if (sizes[i] > max) max = sizes[i];
    char *sbuf = malloc(max), *rbuf = malloc(max);
    memset(sbuf, 1, max);
    memset(rbuf, 0, max);
    double *bt = malloc(sizeof(double) * batches);
    int errors = 0;
    if (rank == 0)
        printf("# impl=%s ranks=%d reps=%d warmup=%d batches=%d\n", IMPL_NAME, size, reps, warmup, batches);

    for (int si = 0; si < nsizes; si++) {
        int n = (int)sizes[si];
        int r = n > (1 << 20) ? (reps / 4 > 10 ? reps / 4 : 10) : reps;
        for (int b = -1; b < batches; b++) {
            int iters = (b < 0) ? warmup : r;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (rank < 2) {
                int peer = 1 - rank;
                for (int i = 0; i < iters; i++) {
                    MPI_Request q;
                    if (MPI_Isend(sbuf, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &q) != MPI_SUCCESS) errors++;
                    if (MPI_Recv(rbuf, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) errors++;
                    if (MPI_Wait(&q, MPI_STATUS_IGNORE) != MPI_SUCCESS) errors++;
                }
            }
            double t1 = MPI_Wtime();
            if (b >= 0) bt[b] = (t1 - t0) / iters * 1e6; /* us */
        }
        if (rank == 0) {
            double mn = 1e30;
            for (int b = 0; b < batches; b++) if (bt[b] < mn) mn = bt[b];
            double med = median(bt, batches);
            double bw = (n > 0) ? (double)n / (med * 1e-6) / 1e9 : 0.0;
            printf("PI size=%d t_half_us_med=%.3f t_half_us_min=%.3f bw_GBps=%.3f reps=%d\n", n, med, mn, bw, r);
            fflush(stdout);
        }
    }
    if (errors) fprintf(stderr, "rank %d: %d MPI errors\n", rank, errors);
    free(sbuf);
    free(rbuf);
    free(bt);
    MPI_Finalize();
    return 0;
}
