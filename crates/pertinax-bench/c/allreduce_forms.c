/* 8-byte allreduce (one double, MPI_SUM) in C, the blocking and the
   non-blocking form alternated in rounds in one launch, on one
   MPI_Comm_dup with MPI_ERRORS_RETURN (as pertinax's communicators):
   0 MPI_Allreduce (what the anchor coll.c measures), 1 MPI_Iallreduce +
   MPI_Wait (what pertinax's MPI backend calls for a blocking allreduce,
   see backend/mpi/coll.rs). Per round, the slowest rank's time per call;
   printed: the median and minimum over rounds.
   usage: allreduce_forms [reps per round] [rounds] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void sort(double *v, int n) {
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) { double t = v[j]; v[j] = v[j - 1]; v[j - 1] = t; }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int r, n;
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    int reps = argc > 1 ? atoi(argv[1]) : 2000, rounds = argc > 2 ? atoi(argv[2]) : 15;
    if (rounds > 64) rounds = 64;
    double t[2][64], a = r, b = 0;
    int errors = 0;
    for (int k = 0; k < rounds; k++) {
        for (int form = 0; form < 2; form++) {
            MPI_Barrier(c);
            double t0 = MPI_Wtime();
            for (int i = 0; i < reps; i++) {
                if (form == 0) {
                    errors += MPI_Allreduce(&a, &b, 1, MPI_DOUBLE, MPI_SUM, c) != MPI_SUCCESS;
                } else {
                    MPI_Request q;
                    errors += MPI_Iallreduce(&a, &b, 1, MPI_DOUBLE, MPI_SUM, c, &q) != MPI_SUCCESS;
                    errors += MPI_Wait(&q, MPI_STATUS_IGNORE) != MPI_SUCCESS;
                }
            }
            double us = (MPI_Wtime() - t0) / reps * 1e6, mx;
            MPI_Allreduce(&us, &mx, 1, MPI_DOUBLE, MPI_MAX, c);
            t[form][k] = mx;
        }
    }
    if (r == 0) {
        sort(t[0], rounds);
        sort(t[1], rounds);
        printf("AR ranks=%d allreduce_us_med=%.3f allreduce_us_min=%.3f iallreduce_wait_us_med=%.3f "
               "iallreduce_wait_us_min=%.3f ratio=%.3f\n",
               n, t[0][rounds / 2], t[0][0], t[1][rounds / 2], t[1][0], t[1][rounds / 2] / t[0][rounds / 2]);
    }
    if (errors) fprintf(stderr, "rank %d: %d MPI errors\n", r, errors);
    MPI_Finalize();
    return errors != 0;
}
