/* Whether Open MPI 5.0.11's blocking MPIX_Comm_agree and MPIX_Comm_iagree
 * + MPI_Wait are one agreement when members mix them, and what each costs.
 *
 *   mpicc -O2 -o agree_mixed agree_mixed.c
 *   mpirun --with-ft ulfm -n 4 ./agree_mixed mix 2000
 *       each iteration, half the ranks (alternating) block in
 *       MPIX_Comm_agree and the others use MPIX_Comm_iagree + MPI_Wait;
 *       every rank checks the result is the AND of all contributions and
 *       prints how many were wrong.
 *   mpirun --with-ft ulfm -n 1 valgrind --tool=callgrind ./agree_mixed agree|iagree N
 *       N agreements of one form on a duplicate of the world, for the
 *       instructions per call (difference of two N).
 */
#include <mpi.h>
#include <mpi-ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void one(MPI_Comm c, int blocking, int *v) {
    if (blocking) {
        MPIX_Comm_agree(c, v);
    } else {
        MPI_Request q;
        MPIX_Comm_iagree(c, v, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc < 3) {
        fprintf(stderr, "usage: agree_mixed mix|agree|iagree N\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int iters = atoi(argv[2]);
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    int r, n;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    if (strcmp(argv[1], "mix") == 0) {
        int bad = 0;
        for (int i = 0; i < iters; i++) {
            int v = ~(1 << ((i + r) % 31));
            int expect = ~0;
            for (int k = 0; k < n; k++) expect &= ~(1 << ((i + k) % 31));
            one(c, ((r + i) & 1) == 0, &v);
            if (v != expect) bad++;
        }
        printf("rank %d: %d wrong of %d\n", r, bad, iters);
    } else {
        int blocking = strcmp(argv[1], "agree") == 0;
        for (int i = 0; i < iters; i++) {
            int v = 1;
            one(c, blocking, &v);
        }
    }
    MPI_Comm_free(&c);
    MPI_Finalize();
    return 0;
}
