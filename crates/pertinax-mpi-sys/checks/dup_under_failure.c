/* Open MPI 5.0.10/5.0.11's segmentation fault when a failure is noticed
   while a communicator is being created, and the guard against it
   (shim/pxm_revoke_fix.c). usage: mpirun --with-ft ulfm -n N ./a.out MS
   Every rank duplicates a communicator over and over for MS milliseconds
   (each round: MPI_Comm_dup, an MPIX_Comm_agree on whether it worked,
   MPI_Comm_free; a failed round revokes and shrinks). The last two ranks
   are killed by a timer at 30% and 60% of the time (plus up to 1 ms). Each survivor prints
   "ok ROUNDS SHRINKS LOANS" (LOANS: how often the guard lent a c_coll,
   each a crash avoided; "-" when built without it).
   Built with -DWITH_FIX ../shim/pxm_revoke_fix.c, the guard is armed after
   MPI_Init. */
#include <mpi.h>
#include <mpi-ext.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#ifdef WITH_FIX
int pxm_revoke_fix_arm(void);
uint64_t pxm_revoke_fix_loans(void);
#endif
static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
#ifdef WITH_FIX
    if (!pxm_revoke_fix_arm()) fprintf(stderr, "guard not armed (not Open MPI 5.0.10+ as known)\n");
#endif
    double ms = argc > 1 ? atof(argv[1]) : 2000;
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    double t0 = now_ms();
    /* A timer's SIGKILL lands anywhere in the loop: inside the dup, at
       times after the context-id agreement and before the activation. */
    double die = r == n - 1 ? 0.3 * ms : r == n - 2 ? 0.6 * ms : -1;
    if (die >= 0) {
        struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGKILL};
        timer_t timer;
        long ns = (long)(die * 1e6) + (long)(now_ms() * 1e3) % 1000 * 1000;
        struct itimerspec at = {.it_value = {ns / 1000000000L, ns % 1000000000L}};
        timer_create(CLOCK_MONOTONIC, &ev, &timer);
        timer_settime(timer, 0, &at, NULL);
    }
    long rounds = 0, shrinks = 0;
    while (now_ms() - t0 < ms) {
        MPI_Comm d = MPI_COMM_NULL;
        int ok = MPI_Comm_dup(comm, &d) == MPI_SUCCESS;
        int all = ok;
        int rc = MPIX_Comm_agree(comm, &all);
        if (ok) MPI_Comm_free(&d);
        if (rc != MPI_SUCCESS || !all) {
            MPI_Comm s;
            MPIX_Comm_revoke(comm);
            if (MPIX_Comm_shrink(comm, &s) != MPI_SUCCESS) {
                fprintf(stderr, "rank %d: shrink failed\n", r);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
            MPI_Comm_free(&comm);
            comm = s;
            MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
            shrinks++;
        }
        rounds++;
    }
#ifdef WITH_FIX
    printf("ok %ld %ld %llu\n", rounds, shrinks, (unsigned long long)pxm_revoke_fix_loans());
#else
    printf("ok %ld %ld -\n", rounds, shrinks);
#endif
    fflush(stdout);
    _exit(0); /* MPI_Finalize after a failure can hang in Open MPI 5.0 (ompi issue 11404) */
}
