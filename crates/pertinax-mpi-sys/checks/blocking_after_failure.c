/*
 * Does a blocking collective report a failure it knows of? Rank 0 kills
 * itself after a barrier; one second later each survivor runs the blocking
 * collective numbered argv[1] (0 barrier ... 14 scatterv) on a duplicate of
 * the world with MPI_ERRORS_RETURN, and prints its code, class and the
 * first element of its output (-1: untouched).
 *
 *   /tmp/ompi/bin/mpicc -O2 -o blocking_after_failure blocking_after_failure.c
 *   for k in $(seq 0 14); do
 *       timeout 20 /tmp/ompi/bin/mpirun --allow-run-as-root --oversubscribe \
 *           --with-ft ulfm --mca async_mpi_finalize 1 --mca coll ^han -n 5 \
 *           ./blocking_after_failure $k
 *   done
 */
#include <mpi.h>
#include <mpi-ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int rank, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Barrier(c);
    if (rank == 0) raise(SIGKILL);
    sleep(1);
    int k = atoi(argv[1]);
    long s[8], r[8];
    int cnt[8], dsp[8];
    for (int i = 0; i < 8; i++) { s[i] = 100 + rank; r[i] = -1; cnt[i] = 1; dsp[i] = i; }
    int rc = 0;
    const char *name = "?";
    switch (k) {
    case 0: name = "barrier"; rc = MPI_Barrier(c); break;
    case 1: name = "bcast(root 1)"; r[0] = rank == 1 ? 7 : -1; rc = MPI_Bcast(r, 1, MPI_LONG, 1, c); break;
    case 2: name = "allreduce"; rc = MPI_Allreduce(s, r, 1, MPI_LONG, MPI_SUM, c); break;
    case 3: name = "reduce(root 1)"; rc = MPI_Reduce(s, r, 1, MPI_LONG, MPI_SUM, 1, c); break;
    case 4: name = "allgather"; rc = MPI_Allgather(s, 1, MPI_LONG, r, 1, MPI_LONG, c); break;
    case 5: name = "allgatherv"; rc = MPI_Allgatherv(s, 1, MPI_LONG, r, cnt, dsp, MPI_LONG, c); break;
    case 6: name = "gather(root 1)"; rc = MPI_Gather(s, 1, MPI_LONG, r, 1, MPI_LONG, 1, c); break;
    case 7: name = "gatherv(root 1)"; rc = MPI_Gatherv(s, 1, MPI_LONG, r, cnt, dsp, MPI_LONG, 1, c); break;
    case 8: name = "scatter(root 1)"; rc = MPI_Scatter(s, 1, MPI_LONG, r, 1, MPI_LONG, 1, c); break;
    case 9: name = "alltoall"; rc = MPI_Alltoall(s, 1, MPI_LONG, r, 1, MPI_LONG, c); break;
    case 10: name = "alltoallv"; rc = MPI_Alltoallv(s, cnt, dsp, MPI_LONG, r, cnt, dsp, MPI_LONG, c); break;
    case 11: name = "scan"; rc = MPI_Scan(s, r, 1, MPI_LONG, MPI_SUM, c); break;
    case 12: name = "exscan"; rc = MPI_Exscan(s, r, 1, MPI_LONG, MPI_SUM, c); break;
    case 13: name = "reduce_scatter"; rc = MPI_Reduce_scatter(s, r, cnt, MPI_LONG, MPI_SUM, c); break;
    case 14: name = "scatterv(root 1)"; rc = MPI_Scatterv(s, cnt, dsp, MPI_LONG, r, 1, MPI_LONG, 1, c); break;
    }
    int cls = 0;
    MPI_Error_class(rc, &cls);
    printf("%s rank %d rc=%d class=%d r0=%ld\n", name, rank, rc, cls, r[0]);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
