/* Error propagation with ULFM (Open MPI side of `pertinax-bench propagate`;
 * the counterpart of `propagate-ranks bench`, which guards a duplicate of
 * the world, signals an error from rank 0 and cleans up).
 *
 * usage: propagate [-r reps] [-p pingpong_round_trips] [-b pingpong_batches]
 * run under `mpirun --with-ft ulfm`.
 *
 * One repetition, on every rank:
 *   MPI_Barrier(world); t0
 *   MPI_Comm_dup(world, &d) (errors return on d); MPI_Barrier(world); t1
 *   rank 0: MPIX_Comm_revoke(d)
 *   every rank: MPI_Barrier(d), which the revocation interrupts
 *     (MPIX_ERR_REVOKED expected), then MPIX_Comm_agree(d) (allowed on a
 *     revoked communicator), so that every rank knows; t2
 *   MPI_Comm_free(&d); t3
 *   MPI_Allreduce(MAX) on world of (t2 - t1) "propagation", (t3 - t0)
 *     "whole cycle", (t1 - t0) "dup" (with the world barrier) and (t3 - t2)
 *     "free".
 * The world barrier before t1 mirrors the pertinax program: a revocation
 * must not catch a rank still inside the duplication.  Then a plain 8-byte
 * ping-pong between ranks 0 and 1 on a duplicate of the world (errors
 * return), `batches` batches of `rt` round trips; half round trip, median.
 *
 * Rank 0 prints the line of the pertinax program (median, 10th and 90th
 * percentile over the repetitions, of the slowest rank's time, us):
 *   PROPAGATE N= reps= total_med_us= p10= p90= propagate_med_us= p10= p90=
 *             pingpong_plain_us= impl=openmpi unexpected= dup_med_us= free_med_us=
 * unexpected = calls, summed over ranks, that returned something else than
 * expected (success, or MPIX_ERR_REVOKED for the interrupted barrier).
 * The line is flushed before MPI_Finalize, which may hang (RESULTS.md).
 * Compiled with mpicc -I<anchors dir> (for common.h). */
#include "common.h"
#include <unistd.h>

/* The value at quantile q of n sorted values (nearest rank, as the
 * pertinax program: index round((n - 1) q)). */
static double at(const double *v, int n, double q) {
    return v[(int)((double)(n - 1) * q + 0.5)];
}

int main(int argc, char **argv) {
    int reps = 1000, rt = 20000, batches = 7;
    int opt;
    while ((opt = getopt(argc, argv, "r:p:b:")) != -1) {
        switch (opt) {
        case 'r': reps = atoi(optarg); break;
        case 'p': rt = atoi(optarg); break;
        case 'b': batches = atoi(optarg); break;
        default: fprintf(stderr, "bad args\n"); return 2;
        }
    }
    if (reps < 1) reps = 1;
    if (rt < 1) rt = 1;
    if (batches < 1) batches = 1;
    MPI_Init(&argc, &argv);
    int rank, size, unexpected = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    double *total = malloc(sizeof(double) * reps);
    double *prop = malloc(sizeof(double) * reps);
    double *dup = malloc(sizeof(double) * reps);
    double *fre = malloc(sizeof(double) * reps);

    for (int i = 0; i < reps; i++) {
        MPI_Comm d;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (MPI_Comm_dup(MPI_COMM_WORLD, &d) != MPI_SUCCESS) {
            fprintf(stderr, "rank %d: MPI_Comm_dup failed\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
        MPI_Barrier(MPI_COMM_WORLD);
        double t1 = MPI_Wtime();
        if (rank == 0 && MPIX_Comm_revoke(d) != MPI_SUCCESS) unexpected++;
        int rc = MPI_Barrier(d);
        if (strcmp(err_class_name(rc), "REVOKED") != 0) unexpected++;
        int flag = 1;
        if (MPIX_Comm_agree(d, &flag) != MPI_SUCCESS) unexpected++;
        double t2 = MPI_Wtime();
        if (MPI_Comm_free(&d) != MPI_SUCCESS) unexpected++;
        double t3 = MPI_Wtime();
        double mine[4] = {(t3 - t0) * 1e6, (t2 - t1) * 1e6, (t1 - t0) * 1e6, (t3 - t2) * 1e6};
        double slowest[4];
        MPI_Allreduce(mine, slowest, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        total[i] = slowest[0];
        prop[i] = slowest[1];
        dup[i] = slowest[2];
        fre[i] = slowest[3];
    }

    /* The plain 8-byte ping-pong, for reference. */
    MPI_Comm pc;
    MPI_Comm_dup(MPI_COMM_WORLD, &pc);
    MPI_Comm_set_errhandler(pc, MPI_ERRORS_RETURN);
    double *bt = malloc(sizeof(double) * batches);
    char buf[8] = {0};
    for (int b = 0; b < batches; b++) {
        MPI_Barrier(pc);
        double t = MPI_Wtime();
        if (rank < 2 && size > 1) {
            for (int k = 0; k < rt; k++) {
                if (rank == 0) {
                    if (MPI_Send(buf, 8, MPI_BYTE, 1, 3, pc) != MPI_SUCCESS) unexpected++;
                    if (MPI_Recv(buf, 8, MPI_BYTE, 1, 3, pc, MPI_STATUS_IGNORE) != MPI_SUCCESS) unexpected++;
                } else {
                    if (MPI_Recv(buf, 8, MPI_BYTE, 0, 3, pc, MPI_STATUS_IGNORE) != MPI_SUCCESS) unexpected++;
                    if (MPI_Send(buf, 8, MPI_BYTE, 0, 3, pc) != MPI_SUCCESS) unexpected++;
                }
            }
        }
        bt[b] = (MPI_Wtime() - t) * 1e6 / (2.0 * rt);
    }
    MPI_Comm_free(&pc);
    /* Rank 0 takes part in the ping-pong, so its batches are the ones to report. */
    double pp = median(bt, batches);

    int bad = 0;
    MPI_Reduce(&unexpected, &bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        qsort(total, (size_t)reps, sizeof(double), cmp_double);
        qsort(prop, (size_t)reps, sizeof(double), cmp_double);
        printf("PROPAGATE N=%d reps=%d total_med_us=%.1f p10=%.1f p90=%.1f "
               "propagate_med_us=%.1f p10=%.1f p90=%.1f pingpong_plain_us=%.3f "
               "impl=%s unexpected=%d dup_med_us=%.1f free_med_us=%.1f\n",
               size, reps, at(total, reps, 0.5), at(total, reps, 0.1), at(total, reps, 0.9),
               at(prop, reps, 0.5), at(prop, reps, 0.1), at(prop, reps, 0.9), pp, IMPL_NAME,
               bad, median(dup, reps), median(fre, reps));
        fflush(stdout);
    }
    free(total);
    free(prop);
    free(dup);
    free(fre);
    free(bt);
    MPI_Finalize();
    return 0;
}
