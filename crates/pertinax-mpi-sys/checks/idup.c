/* MPI_Comm_idup in Open MPI 5.0.11 with ULFM: does it fail as
   MPI_Comm_dup does when a member is dead, and do three of them started
   together cost less than three MPI_Comm_dup in a row?
   usage: mpirun --with-ft ulfm -n N ./a.out fail CALL MODE
          mpirun --with-ft ulfm -n N ./a.out time REPS
   fail: CALL dup3 (three MPI_Comm_dup in a row), idup3 (three
   MPI_Comm_idup, then MPI_Waitall) or idup1 (one MPI_Comm_idup, then
   MPI_Wait) of a duplicate of the world, with the
   last rank dead. MODE 0: it dies at once, the others start at once;
   1: the others wait 1 s (the death is known), then start;
   3: it dies 200 ms after the others started (it calls nothing: the
   others' idups wait for it).
   time: REPS rounds, alternating three MPI_Comm_dup in a row and three
   MPI_Comm_idup + MPI_Waitall (and MPIX_Comm_shrink alone, as a yardstick),
   each round after a barrier; prints rank 0's medians in microseconds. */
#include <mpi.h>
#include <mpi-ext.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof(double), cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int dup3(MPI_Comm base, MPI_Comm out[3]) {
    int rc = MPI_SUCCESS;
    for (int i = 0; i < 3; i++) {
        out[i] = MPI_COMM_NULL;
        if (rc == MPI_SUCCESS) rc = MPI_Comm_dup(base, &out[i]);
    }
    return rc;
}
static int idup3(MPI_Comm base, MPI_Comm out[3]) {
    MPI_Request req[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int rc = MPI_SUCCESS;
    for (int i = 0; i < 3; i++) {
        out[i] = MPI_COMM_NULL;
        if (rc == MPI_SUCCESS) rc = MPI_Comm_idup(base, &out[i], &req[i]);
    }
    int rc2 = MPI_SUCCESS;
    if (getenv("IDUP_WAIT_EACH") != NULL) {
        for (int i = 0; i < 3; i++) {
            int e = MPI_Wait(&req[i], MPI_STATUS_IGNORE);
            if (rc2 == MPI_SUCCESS) rc2 = e;
        }
    } else {
        rc2 = MPI_Waitall(3, req, MPI_STATUSES_IGNORE);
    }
    return rc ? rc : rc2;
}
/* One MPI_Comm_idup, then MPI_Wait. */
static int idup1(MPI_Comm base, MPI_Comm out[3]) {
    MPI_Request req = MPI_REQUEST_NULL;
    out[0] = out[1] = out[2] = MPI_COMM_NULL;
    int rc = MPI_Comm_idup(base, &out[0], &req);
    int rc2 = MPI_Wait(&req, MPI_STATUS_IGNORE);
    return rc ? rc : rc2;
}
static void free3(MPI_Comm c[3]) {
    for (int i = 0; i < 3; i++)
        if (c[i] != MPI_COMM_NULL) MPI_Comm_free(&c[i]);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm base;
    MPI_Comm_dup(MPI_COMM_WORLD, &base);
    MPI_Comm_set_errhandler(base, MPI_ERRORS_RETURN);
    if (argc >= 4 && !strcmp(argv[1], "fail")) {
        const char *call = argv[2];
        int mode = atoi(argv[3]);
        MPI_Barrier(MPI_COMM_WORLD);
        if (r == n - 1) {
            if (mode == 3) usleep(200000);
            raise(SIGKILL);
        }
        if (mode == 1) sleep(1);
        MPI_Comm c[3];
        int rc = !strcmp(call, "idup3")   ? idup3(base, c)
                 : !strcmp(call, "idup1") ? idup1(base, c)
                                          : dup3(base, c);
        char s[MPI_MAX_ERROR_STRING];
        int l = 0;
        s[0] = 0;
        if (rc) MPI_Error_string(rc, s, &l);
        int made = 0;
        for (int i = 0; i < 3; i++) made += c[i] != MPI_COMM_NULL;
        printf("rank %d %s mode %d rc=%d made=%d %s\n", r, call, mode, rc, made, s);
        fflush(stdout);
        free3(c);
        printf("rank %d freed\n", r);
        fflush(stdout);
    } else if (argc >= 3 && !strcmp(argv[1], "time")) {
        int reps = atoi(argv[2]);
        double *td = malloc(sizeof(double) * (size_t)reps);
        double *ti = malloc(sizeof(double) * (size_t)reps);
        double *ts = malloc(sizeof(double) * (size_t)reps);
        for (int k = 0; k < reps; k++) {
            MPI_Comm c[3], s;
            MPI_Barrier(base);
            double t0 = MPI_Wtime();
            dup3(base, c);
            td[k] = (MPI_Wtime() - t0) * 1e6;
            free3(c);
            MPI_Barrier(base);
            t0 = MPI_Wtime();
            idup3(base, c);
            ti[k] = (MPI_Wtime() - t0) * 1e6;
            free3(c);
            MPI_Barrier(base);
            t0 = MPI_Wtime();
            MPIX_Comm_shrink(base, &s);
            ts[k] = (MPI_Wtime() - t0) * 1e6;
            MPI_Comm_free(&s);
        }
        if (r == 0)
            printf("n=%d reps=%d median us: 3x dup %.1f, 3x idup+waitall %.1f, shrink %.1f\n",
                   n, reps, median(td, reps), median(ti, reps), median(ts, reps));
    } else if (r == 0) {
        fprintf(stderr, "usage: %s fail dup3|idup3 MODE | time REPS\n", argv[0]);
    }
    MPI_Comm_free(&base);
    MPI_Finalize();
    return 0;
}
