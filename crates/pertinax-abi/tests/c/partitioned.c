/* pertinax-abi: partitioned point-to-point (MPI 4). A ring of
 * MPI_Psend_init / MPI_Precv_init restarted several times (Start and
 * Startall), partitions marked ready by MPI_Pready, MPI_Pready_range and
 * MPI_Pready_list in any order; a send is not done before its last
 * partition is ready, MPI_Parrived says no before the message can have
 * come and yes once it has, the data and status are the sender's, the
 * requests stay valid (inactive: Parrived says yes) until freed. Errors
 * under MPI_ERRORS_RETURN: a partition out of range or ready twice
 * (MPI_ERR_ARG), Pready on a receive and Parrived on a send
 * (MPI_ERR_REQUEST), a wait on a send with partitions not ready
 * (MPI_ERR_REQUEST), MPI_ANY_SOURCE / MPI_ANY_TAG (MPI_ERR_RANK,
 * MPI_ERR_TAG), no partitions (MPI_ERR_ARG). Prints
 * "OK partitioned rank=R". */
#include "check.h"
#include <string.h>

enum { PARTS = 4, COUNT = 3 };

static void ring(MPI_Comm comm) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int out[PARTS * COUNT] = {0}, in[PARTS * COUNT];
    MPI_Request s, r;
    CHECK(MPI_Psend_init(out, PARTS, COUNT, MPI_INT, next, 7, comm, MPI_INFO_NULL, &s) ==
          MPI_SUCCESS);
    CHECK(MPI_Precv_init(in, PARTS, COUNT, MPI_INT, prev, 7, comm, MPI_INFO_NULL, &r) ==
          MPI_SUCCESS);
    int flag = 0;
    /* Inactive: arrived. */
    CHECK(MPI_Parrived(r, 0, &flag) == MPI_SUCCESS && flag);
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < PARTS * COUNT; i++) in[i] = -1;
        if (round % 2) {
            MPI_Request both[2] = {r, s};
            CHECK(MPI_Startall(2, both) == MPI_SUCCESS);
        } else {
            CHECK(MPI_Start(&r) == MPI_SUCCESS);
        }
        for (int p = 0; p < PARTS; p++) {
            CHECK(MPI_Parrived(r, p, &flag) == MPI_SUCCESS && !flag);
        }
        MPI_Barrier(comm);
        /* Nobody marked a partition ready: nothing can have come. */
        for (int p = 0; p < PARTS; p++) {
            CHECK(MPI_Parrived(r, p, &flag) == MPI_SUCCESS && !flag);
        }
        MPI_Barrier(comm);
        if (round % 2 == 0) CHECK(MPI_Start(&s) == MPI_SUCCESS);
        /* Fill and mark the partitions in some order. */
        for (int i = 0; i < PARTS * COUNT; i++) out[i] = 1000 * round + 100 * rank + i;
        CHECK(MPI_Test(&s, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && !flag);
        switch (round % 3) {
        case 0:
            for (int p = PARTS - 1; p >= 0; p--) {
                CHECK(MPI_Pready(p, s) == MPI_SUCCESS);
                if (p > 0) {
                    CHECK(MPI_Test(&s, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && !flag);
                }
            }
            break;
        case 1:
            CHECK(MPI_Pready_range(1, PARTS - 1, s) == MPI_SUCCESS);
            CHECK(MPI_Test(&s, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && !flag);
            CHECK(MPI_Pready_range(0, 0, s) == MPI_SUCCESS);
            break;
        default: {
            int odd[] = {3, 1}, even[] = {2, 0};
            CHECK(MPI_Pready_list(2, odd, s) == MPI_SUCCESS);
            CHECK(MPI_Pready_list(0, NULL, s) == MPI_SUCCESS);
            CHECK(MPI_Pready_list(2, even, s) == MPI_SUCCESS);
        }
        }
        CHECK(MPI_Wait(&s, MPI_STATUS_IGNORE) == MPI_SUCCESS && s != MPI_REQUEST_NULL);
        for (int p = 0; p < PARTS; p++) {
            do {
                CHECK(MPI_Parrived(r, p, &flag) == MPI_SUCCESS);
            } while (!flag);
        }
        MPI_Status st;
        CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS && r != MPI_REQUEST_NULL);
        int n = -1;
        MPI_Get_count(&st, MPI_INT, &n);
        CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 7 && n == PARTS * COUNT);
        for (int i = 0; i < PARTS * COUNT; i++) CHECK(in[i] == 1000 * round + 100 * prev + i);
        CHECK(MPI_Parrived(r, PARTS - 1, &flag) == MPI_SUCCESS && flag);
    }

    /* Errors. */
    CHECK(MPI_Start(&s) == MPI_SUCCESS);
    CHECK(MPI_Start(&r) == MPI_SUCCESS);
    CHECK(MPI_Pready(PARTS, s) == MPI_ERR_ARG);
    CHECK(MPI_Pready(-1, s) == MPI_ERR_ARG);
    CHECK(MPI_Pready_range(2, 1, s) == MPI_ERR_ARG);
    CHECK(MPI_Pready(0, r) == MPI_ERR_REQUEST);
    CHECK(MPI_Parrived(s, 0, &flag) == MPI_ERR_REQUEST);
    CHECK(MPI_Parrived(r, PARTS, &flag) == MPI_ERR_ARG);
    CHECK(MPI_Wait(&s, MPI_STATUS_IGNORE) == MPI_ERR_REQUEST);
    CHECK(MPI_Pready(0, s) == MPI_SUCCESS);
    CHECK(MPI_Pready(0, s) == MPI_ERR_ARG);
    CHECK(MPI_Pready_range(1, PARTS - 1, s) == MPI_SUCCESS);
    /* Started: no partition may be marked again. */
    CHECK(MPI_Pready(1, s) == MPI_ERR_REQUEST);
    MPI_Request both[2] = {s, r};
    CHECK(MPI_Waitall(2, both, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    CHECK(both[0] == s && both[1] == r);
    CHECK(MPI_Request_free(&s) == MPI_SUCCESS && s == MPI_REQUEST_NULL);
    CHECK(MPI_Request_free(&r) == MPI_SUCCESS && r == MPI_REQUEST_NULL);

    MPI_Request x;
    CHECK(MPI_Precv_init(in, PARTS, COUNT, MPI_INT, MPI_ANY_SOURCE, 7, comm, MPI_INFO_NULL,
                         &x) == MPI_ERR_RANK);
    CHECK(MPI_Precv_init(in, PARTS, COUNT, MPI_INT, prev, MPI_ANY_TAG, comm, MPI_INFO_NULL,
                         &x) == MPI_ERR_TAG);
    CHECK(MPI_Psend_init(out, 0, COUNT, MPI_INT, next, 7, comm, MPI_INFO_NULL, &x) ==
          MPI_ERR_ARG);
    CHECK(MPI_Psend_init(out, PARTS, -1, MPI_INT, next, 7, comm, MPI_INFO_NULL, &x) ==
          MPI_ERR_COUNT);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    ring(comm);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    printf("OK partitioned rank=%d\n", rank);
    return 0;
}
