/*
 * A spawned process and a parent that dies inside an agreement
 * (2026-12-01, Open MPI 5.0.11): does MPIX_Comm_agree on the merge of
 * the spawn's intercommunicator return at every survivor, and does the
 * spawned process learn of the death?
 *
 * Four parents spawn one child and merge (child rank 4 of 5); they
 * exchange nothing but a barrier, so the child is not connected to every
 * parent. Rank 1 starts an MPIX_Comm_iagree and dies 1 ms later; the
 * others run MPIX_Comm_iagree and poll it. In mode `told`, a parent that
 * sees a failure in MPIX_Comm_get_failed tells the session of it with the
 * shim's pxm_tell_failed (shim/pxm_tell.c, compiled in); in `untold`,
 * nobody tells; `connected` is `untold` with one byte each way between
 * every parent and the child first (as the backend's spawn does). Each survivor prints what it knows after 3 s if the
 * agreement has not returned, and its result when it does.
 *
 *   /tmp/ompi/bin/mpicc -O2 -o /tmp/sad spawned_agree_death.c ../shim/pxm_tell.c
 *   for m in untold told connected; do for i in 1 2 3 4 5; do
 *       timeout -k 2 10 /tmp/ompi/bin/mpirun --allow-run-as-root --oversubscribe \
 *           --with-ft ulfm --mca coll ^han -n 4 /tmp/sad $m | grep '^rank 4'
 *   done; done
 */
#include <mpi.h>
#include <mpi-ext.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int pxm_tell_failed(const char *nspace, uint32_t rank);

enum { VICTIM = 1 };

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int told = argc > 1 && strcmp(argv[1], "told") == 0;
    int connect = argc > 1 && strcmp(argv[1], "connected") == 0;
    MPI_Comm parent, inter, merged;
    MPI_Comm_get_parent(&parent);
    if (parent == MPI_COMM_NULL) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_spawn(argv[0], argv + 1, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                       MPI_ERRCODES_IGNORE);
    } else {
        inter = parent;
    }
    if (connect) {
        int k;
        MPI_Comm_remote_size(inter, &k);
        for (int i = 0; i < k; i++) {
            char out = 1, in;
            MPI_Sendrecv(&out, 1, MPI_BYTE, i, 0, &in, 1, MPI_BYTE, i, 0, inter,
                         MPI_STATUS_IGNORE);
        }
    }
    MPI_Intercomm_merge(inter, parent != MPI_COMM_NULL, &merged);
    MPI_Comm_set_errhandler(merged, MPI_ERRORS_RETURN);
    int r, n;
    MPI_Comm_rank(merged, &r);
    MPI_Comm_size(merged, &n);
    MPI_Barrier(merged);
    int flag = 1;
    MPI_Request q;
    MPIX_Comm_iagree(merged, &flag, &q);
    if (r == VICTIM) {
        usleep(1000);
        raise(SIGKILL);
    }
    double t0 = MPI_Wtime();
    int done = 0, said = 0, rc = MPI_SUCCESS, known = 0;
    while (!done) {
        MPI_Status st;
        rc = MPI_Test(&q, &done, &st);
        MPI_Group g;
        MPIX_Comm_get_failed(merged, &g);
        MPI_Group_size(g, &known);
        MPI_Group_free(&g);
        /* A parent tells of the victim (its own job's rank VICTIM). */
        if (told && known > 0 && r < n - 1) {
            const char *ns = getenv("PMIX_NAMESPACE");
            int trc = pxm_tell_failed(ns ? ns : "", VICTIM);
            printf("rank %d told the session of rank %d's death: %d\n", r, VICTIM, trc);
            told = 0;
        }
        if (!said && MPI_Wtime() - t0 > 3) {
            printf("rank %d: agreement not over after 3 s, knows %d failed\n", r, known);
            fflush(stdout);
            said = 1;
        }
    }
    printf("rank %d: agreement over in %.3f s (rc %d), knows %d failed\n", r, MPI_Wtime() - t0,
           rc, known);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
