/* pertinax-abi: non-blocking collectives (Ibarrier, Ibcast, Ireduce,
 * Iallreduce with MPI_IN_PLACE, Iallgather, Ialltoall), overlapping with
 * point-to-point that must progress meanwhile, completed by Wait, Test
 * loops and Waitall. Prints "OK icoll rank=R". */
#include "check.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    /* A barrier started, then a ring that needs everyone to progress. */
    MPI_Request b;
    MPI_Ibarrier(MPI_COMM_WORLD, &b);
    int tok = rank, got = -1;
    MPI_Sendrecv(&tok, 1, MPI_INT, next, 1, &got, 1, MPI_INT, prev, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    CHECK(got == prev);
    int flag = 0;
    while (!flag) MPI_Test(&b, &flag, MPI_STATUS_IGNORE);

    /* Several at once, completed together. */
    MPI_Request r[5];
    double v[1000];
    for (int i = 0; i < 1000; i++) v[i] = rank == 0 ? i : -1;
    MPI_Ibcast(v, 1000, MPI_DOUBLE, 0, MPI_COMM_WORLD, &r[0]);
    long x = rank + 1, sum = 0;
    MPI_Iallreduce(&x, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &r[1]);
    int mx = rank;
    MPI_Iallreduce(MPI_IN_PLACE, &mx, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &r[2]);
    int *all = malloc(size * sizeof(int));
    MPI_Iallgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD, &r[3]);
    int *to = malloc(size * sizeof(int)), *from = malloc(size * sizeof(int));
    for (int i = 0; i < size; i++) to[i] = rank * 100 + i;
    MPI_Ialltoall(to, 1, MPI_INT, from, 1, MPI_INT, MPI_COMM_WORLD, &r[4]);
    MPI_Waitall(5, r, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 1000; i++) CHECK(v[i] == i);
    CHECK(sum == (long)size * (size + 1) / 2);
    CHECK(mx == size - 1);
    for (int i = 0; i < size; i++) CHECK(all[i] == i && from[i] == i * 100 + rank);

    /* Ireduce at a root other than 0, with MPI_IN_PLACE there. */
    int root = size - 1, red = rank;
    MPI_Request q;
    if (rank == root)
        MPI_Ireduce(MPI_IN_PLACE, &red, 1, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &q);
    else
        MPI_Ireduce(&red, NULL, 1, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    if (rank == root) CHECK(red == size * (size - 1) / 2);

    free(all);
    free(to);
    free(from);
    MPI_Finalize();
    printf("OK icoll rank=%d\n", rank);
    return 0;
}
