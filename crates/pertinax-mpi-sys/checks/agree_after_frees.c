/*
 * Does an agreement cost more once communicators that ran one have been
 * freed? Open MPI's agreement (coll/ftagree, ERA) keeps the last
 * agreement of every freed communicator in a table
 * (`era_passed_agreements`) that it walks at the start of every new
 * agreement. Times MPIX_Comm_agree on the world (2,000 calls, the slowest
 * rank's mean), then dups K communicators, agrees once on each and frees
 * it, then times the world's agreement again.
 *
 *   /tmp/ompi/bin/mpicc -O2 -o agree_after_frees agree_after_frees.c
 *   for k in 0 200; do
 *       timeout 300 /tmp/ompi/bin/mpirun --allow-run-as-root --oversubscribe \
 *           --with-ft ulfm -n 4 ./agree_after_frees $k
 *   done
 *
 * Under `valgrind --tool=callgrind` the instruction counts say it without
 * the host's noise (checks/README.md).
 */
#include <mpi.h>
#include <mpi-ext.h>
#include <stdio.h>
#include <stdlib.h>

static double timed(MPI_Comm c, int reps) {
    int flag = 1;
    for (int i = 0; i < 5; i++) {
        flag = 1;
        MPIX_Comm_agree(c, &flag);
    }
    MPI_Barrier(c);
    double t0 = MPI_Wtime();
    for (int i = 0; i < reps; i++) {
        flag = 1;
        MPIX_Comm_agree(c, &flag);
    }
    double t = (MPI_Wtime() - t0) / reps * 1e6, m = 0;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, c);
    return m;
}

int main(int argc, char **argv) {
    int rank, k = argc > 1 ? atoi(argv[1]) : 200, reps = 2000;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double before = timed(MPI_COMM_WORLD, reps);
    for (int i = 0; i < k; i++) {
        MPI_Comm d;
        int flag = 1;
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        MPIX_Comm_agree(d, &flag);
        MPI_Comm_free(&d);
    }
    double after = timed(MPI_COMM_WORLD, reps);
    if (rank == 0)
        printf("k=%d agree before %.2f us after %.2f us ratio %.3f\n", k, before, after,
               after / before);
    MPI_Finalize();
    return 0;
}
