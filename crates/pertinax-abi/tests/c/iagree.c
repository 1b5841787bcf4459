/* pertinax-abi: an unchanged C MPI program checking Open MPI 5's
 * non-blocking ULFM calls: MPIX_Comm_iagree (the AND of every member's
 * flag, written to the flag when the request completes; started by one
 * member while the others are still in a barrier, tested before they
 * join, so it must not block) and MPIX_Comm_ishrink (a communicator of
 * every member when nobody failed). At any size. Prints
 * "OK iagree rank=R" when every check held. */
#include "check.h"
#include <mpi-ext.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    /* Every member the same flag: it comes back unchanged. */
    for (int i = 0; i < 5; i++) {
        int f = i;
        MPI_Request r = MPI_REQUEST_NULL;
        CHECK(MPIX_Comm_iagree(comm, &f, &r) == MPI_SUCCESS && r != MPI_REQUEST_NULL);
        CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS && r == MPI_REQUEST_NULL);
        CHECK(f == i);
    }
    /* One member starts first and tests before the others contribute. */
    for (int root = 0; root < size; root++) {
        int flag;
        MPI_Request r;
        CHECK(MPI_Barrier(comm) == MPI_SUCCESS);
        if (rank == root) {
            flag = 0xB; /* 1011 */
            CHECK(MPIX_Comm_iagree(comm, &flag, &r) == MPI_SUCCESS);
            int done = -1;
            CHECK(MPI_Test(&r, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS);
            CHECK(size == 1 || (done == 0 && flag == 0xB));
            CHECK(MPI_Barrier(comm) == MPI_SUCCESS);
        } else {
            flag = 0xD; /* 1101 */
            CHECK(MPI_Barrier(comm) == MPI_SUCCESS);
            CHECK(flag == 0xD);
            CHECK(MPIX_Comm_iagree(comm, &flag, &r) == MPI_SUCCESS);
        }
        CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        CHECK(flag == (size == 1 ? 0xB : 0x9));
    }
    /* Waitall over several members' agreements on two communicators. */
    MPI_Comm other;
    CHECK(MPI_Comm_dup(comm, &other) == MPI_SUCCESS);
    int fa = rank == 0 ? 0x3 : 0x7, fb = 0x5;
    MPI_Request rs[2];
    CHECK(MPIX_Comm_iagree(comm, &fa, &rs[0]) == MPI_SUCCESS);
    CHECK(MPIX_Comm_iagree(other, &fb, &rs[1]) == MPI_SUCCESS);
    CHECK(MPI_Waitall(2, rs, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    CHECK(fa == 0x3 && fb == 0x5);
    /* A second agreement on a communicator with one pending is refused. */
    MPI_Request r1, r2;
    int g = 1, h = 1;
    CHECK(MPIX_Comm_iagree(other, &g, &r1) == MPI_SUCCESS);
    int class = -1;
    MPI_Error_class(MPIX_Comm_iagree(other, &h, &r2), &class);
    CHECK(class == MPI_ERR_ARG);
    CHECK(MPI_Wait(&r1, MPI_STATUS_IGNORE) == MPI_SUCCESS && g == 1);
    MPI_Comm_free(&other);
    /* Ishrink with nobody failed: the same members, the same order. */
    MPI_Comm s;
    MPI_Request rq;
    CHECK(MPIX_Comm_ishrink(comm, &s, &rq) == MPI_SUCCESS);
    CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    int sr = -1, ss = -1, sum = -1;
    MPI_Comm_rank(s, &sr);
    MPI_Comm_size(s, &ss);
    CHECK(sr == rank && ss == size);
    CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, s) == MPI_SUCCESS);
    CHECK(sum == size * (size - 1) / 2);
    MPI_Comm_free(&s);
    MPI_Comm_free(&comm);
    printf("OK iagree rank=%d\n", rank);
    MPI_Finalize();
    return 0;
}
