/* pertinax-abi: an unchanged C Monte Carlo program, the kind Legio's
 * resilience is for (run by c_abi/resilient.rs under `pertinax run --resilient`,
 * with ranks killed, and without it). Each rank draws SAMPLES points per
 * round from a generator seeded by (rank, round) (splitmix64, integers
 * only: the test recomputes every draw); one MPI_Allreduce per round, on
 * a duplicate of MPI_COMM_WORLD, sums the hits inside the quarter circle
 * and the number of ranks that contributed. Then a ring of MPI_Sendrecv
 * (each rank sends its rank to the right, receives from the left) and an
 * MPI_Allreduce of the ranks over MPI_Comm_split by parity.
 *
 * With the argument "nb" the rounds and the ring go through the
 * non-blocking calls: per round an MPI_Iallreduce then an MPI_Ibarrier,
 * waited for in the other order; the ring's MPI_Irecv and MPI_Isend and
 * their MPI_Waits (a failed right neighbour's send may report
 * MPIX_ERR_PROC_FAILED; the ring's value is the receive's).
 *
 * Prints, per rank that ends: "OK montecarlo rank=R size=S
 * total=T contrib=C0,C1,.. ring=V split=X": V is the left neighbour's
 * rank, or -1 when the receive reported MPIX_ERR_PROC_FAILED, or -2 when
 * it was skipped (status source MPI_PROC_NULL). Then "KNOWN montecarlo
 * rank=R failed=K": the size of MPIX_Comm_get_failed's group of
 * MPI_COMM_WORLD at the end (under --resilient, the failed original ranks).
 * "FAIL ..." when a call returned an unexpected error or the size
 * changed. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 8
#define SAMPLES 2000

static uint64_t next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int64_t hits(int rank, int round) {
    uint64_t s = ((uint64_t)rank << 32) | (uint64_t)round;
    int64_t h = 0;
    for (int i = 0; i < SAMPLES; i++) {
        uint64_t x = next(&s) >> 33, y = next(&s) >> 33;
        if (x * x + y * y < (1ULL << 62)) h++;
    }
    return h;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank, size, bad = 0, nb = argc > 1 && strcmp(argv[1], "nb") == 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = ROUNDS;
    MPI_Bcast(&rounds, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Comm comm;
    if (MPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) {
        printf("FAIL montecarlo rank=%d: MPI_Comm_dup\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    int64_t total = 0;
    char contrib[256];
    int at = 0;
    contrib[0] = 0;
    for (int round = 0; round < rounds; round++) {
        int64_t mine[2] = {hits(rank, round), 1}, sum[2] = {0, 0};
        int rc;
        if (nb) {
            MPI_Request r[2];
            rc = MPI_Iallreduce(mine, sum, 2, MPI_INT64_T, MPI_SUM, comm, &r[0]);
            if (rc == MPI_SUCCESS) rc = MPI_Ibarrier(comm, &r[1]);
            if (rc == MPI_SUCCESS) rc = MPI_Wait(&r[1], MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS) rc = MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        } else {
            rc = MPI_Allreduce(mine, sum, 2, MPI_INT64_T, MPI_SUM, comm);
        }
        if (rc != MPI_SUCCESS) {
            printf("FAIL montecarlo rank=%d: MPI_Allreduce of round %d: %d\n", rank, round, rc);
            bad = 1;
        }
        total += sum[0];
        at += snprintf(contrib + at, sizeof contrib - (size_t)at, "%s%lld", round ? "," : "",
                       (long long)sum[1]);
    }
    /* The ring: each rank's own rank to the right. */
    int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -3;
    MPI_Status st;
    int rc;
    if (nb) {
        MPI_Request rr, sr;
        rc = MPI_Irecv(&got, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &rr);
        int sc = MPI_Isend(&rank, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &sr);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&rr, &st);
        if (sc == MPI_SUCCESS)
            sc = MPI_Wait(&sr, MPI_STATUS_IGNORE);
        int scls = MPI_SUCCESS;
        MPI_Error_class(sc, &scls);
        if (scls != MPI_SUCCESS && scls != MPIX_ERR_PROC_FAILED) {
            printf("FAIL montecarlo rank=%d: the ring's send: %d\n", rank, sc);
            bad = 1;
        }
    } else {
        rc = MPI_Sendrecv(&rank, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &st);
    }
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    int ring;
    if (rc == MPI_SUCCESS && st.MPI_SOURCE == MPI_PROC_NULL) {
        ring = -2;
    } else if (rc == MPI_SUCCESS) {
        ring = got;
    } else if (cls == MPIX_ERR_PROC_FAILED) {
        ring = -1;
    } else {
        printf("FAIL montecarlo rank=%d: MPI_Sendrecv: %d\n", rank, rc);
        ring = -3;
        bad = 1;
    }
    /* The survivors of each parity. */
    MPI_Comm half;
    int split = -1;
    if (MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half) != MPI_SUCCESS ||
        MPI_Allreduce(&rank, &split, 1, MPI_INT, MPI_SUM, half) != MPI_SUCCESS) {
        printf("FAIL montecarlo rank=%d: split\n", rank);
        bad = 1;
    } else {
        MPI_Comm_free(&half);
    }
    MPI_Group failed;
    int nfailed = -1;
    if (MPIX_Comm_get_failed(MPI_COMM_WORLD, &failed) == MPI_SUCCESS) {
        MPI_Group_size(failed, &nfailed);
        MPI_Group_free(&failed);
    }
    printf("KNOWN montecarlo rank=%d failed=%d\n", rank, nfailed);
    int now = -1;
    MPI_Comm_size(comm, &now);
    if (now != size) {
        printf("FAIL montecarlo rank=%d: size %d then %d\n", rank, size, now);
        bad = 1;
    }
    MPI_Comm_free(&comm);
    if (!bad)
        printf("OK montecarlo rank=%d size=%d total=%lld contrib=%s ring=%d split=%d\n", rank, size,
               (long long)total, contrib, ring, split);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
