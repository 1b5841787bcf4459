/* pertinax-abi: ports and joins inside one MPI_COMM_WORLD. Rank 0 opens a
 * port and accepts on MPI_COMM_SELF while the other ranks connect as one
 * group (root 0 of theirs); then the other way round (rank 1 of the world
 * opens and its group accepts, rank 0 connects); each intercommunicator is
 * checked by its sizes and a bcast and an allreduce across it. A closed
 * port and a name that is no port are MPI_ERR_PORT. Then MPI_Comm_join
 * over a TCP connection on the loopback between world ranks 0 and 1.
 * At 2 ranks or more; prints "OK ports rank=R". */
#include "check.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int class_of(int rc) {
    int c = rc;
    MPI_Error_class(rc, &c);
    return c;
}

/* Checks intercommunicator ic: `lsize` local processes, `rsize` remote;
 * a bcast from the remote group's rank 0 (or to it from ours) and an
 * allreduce of world ranks. */
static void across(MPI_Comm ic, int lsize, int rsize, int single_side, int remote_ranks_sum) {
    int n = -1, flag = 0;
    CHECK(MPI_Comm_test_inter(ic, &flag) == MPI_SUCCESS && flag);
    CHECK(MPI_Comm_size(ic, &n) == MPI_SUCCESS && n == lsize);
    CHECK(MPI_Comm_remote_size(ic, &n) == MPI_SUCCESS && n == rsize);
    int v = single_side ? 4321 : -1;
    int root = single_side ? MPI_ROOT : 0;
    CHECK(MPI_Bcast(&v, 1, MPI_INT, root, ic) == MPI_SUCCESS);
    CHECK(v == 4321);
    int sum = -1;
    CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, ic) == MPI_SUCCESS);
    CHECK(sum == remote_ranks_sum);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int all = size * (size - 1) / 2;
    MPI_Comm rest; /* every rank but 0 */
    CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, rank, &rest) ==
          MPI_SUCCESS);
    char port[MPI_MAX_PORT_NAME];

    /* Rank 0 accepts, the others connect. */
    MPI_Comm ic;
    if (rank == 0) {
        CHECK(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS);
        CHECK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 1, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
        CHECK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic) == MPI_SUCCESS);
        across(ic, 1, size - 1, 1, all);
        CHECK(MPI_Close_port(port) == MPI_SUCCESS);
        CHECK(class_of(MPI_Close_port(port)) == MPI_ERR_PORT);
    } else {
        if (rank == 1)
            CHECK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 0, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE) == MPI_SUCCESS);
        CHECK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, rest, &ic) == MPI_SUCCESS);
        across(ic, size - 1, 1, 0, 0);
    }
    CHECK(MPI_Comm_free(&ic) == MPI_SUCCESS);

    /* World rank 1 opens, its group accepts; rank 0 connects. */
    if (rank == 0) {
        CHECK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 1, 1, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE) == MPI_SUCCESS);
        CHECK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic) == MPI_SUCCESS);
        across(ic, 1, size - 1, 1, all);
    } else {
        if (rank == 1) {
            CHECK(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS);
            CHECK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 1, MPI_COMM_WORLD) ==
                  MPI_SUCCESS);
        }
        CHECK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, rest, &ic) == MPI_SUCCESS);
        if (rank == 1)
            CHECK(MPI_Close_port(port) == MPI_SUCCESS);
        across(ic, size - 1, 1, 0, 0);
        CHECK(MPI_Comm_free(&rest) == MPI_SUCCESS);
    }
    CHECK(MPI_Comm_free(&ic) == MPI_SUCCESS);

    /* Not a port. */
    CHECK(class_of(MPI_Close_port("no such port")) == MPI_ERR_PORT);

    /* Join: ranks 0 and 1 over a TCP connection on the loopback. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank < 2) {
        int fd = -1, tcp = -1;
        struct sockaddr_in a;
        memset(&a, 0, sizeof a);
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (rank == 0) {
            int l = socket(AF_INET, SOCK_STREAM, 0);
            CHECK(l >= 0 && bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 1) == 0);
            CHECK(getsockname(l, (struct sockaddr *)&a, &len) == 0);
            tcp = ntohs(a.sin_port);
            CHECK(MPI_Send(&tcp, 1, MPI_INT, 1, 2, MPI_COMM_WORLD) == MPI_SUCCESS);
            fd = accept(l, NULL, NULL);
            close(l);
        } else {
            CHECK(MPI_Recv(&tcp, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE) ==
                  MPI_SUCCESS);
            a.sin_port = htons((unsigned short)tcp);
            fd = socket(AF_INET, SOCK_STREAM, 0);
            CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
        }
        CHECK(fd >= 0);
        MPI_Comm j;
        CHECK(MPI_Comm_join(fd, &j) == MPI_SUCCESS);
        close(fd);
        across(j, 1, 1, rank == 0, 1 - rank);
        CHECK(MPI_Comm_free(&j) == MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("OK ports rank=%d\n", rank);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
