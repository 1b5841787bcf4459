/* pertinax-abi: MPI_Comm_spawn_multiple of one program (two entries of
 * this program with the same arguments, 1 process each): one
 * intercommunicator to 2 children whose MPI_COMM_WORLD holds both, error
 * codes at every parent (as many as its counts say); commands and
 * arguments read at the root only (the others pass none); bad arguments the same error at every parent: different programs
 * MPI_ERR_UNSUPPORTED_OPERATION, a count of 0 MPI_ERR_ARG, and nothing is
 * started. Needs room for 2 spawned processes (`pertinax run
 * --max-spawn`, default the number of ranks: run at 2 ranks or more).
 * Prints "OK spawn_multiple rank=R" at each parent. */
#include "check.h"
#include <string.h>

static int child(void) {
    MPI_Comm parent;
    int n, r, wsize, sum = 0;
    MPI_Comm_get_parent(&parent);
    CHECK(parent != MPI_COMM_NULL);
    MPI_Comm_remote_size(parent, &n);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    CHECK(wsize == 2);
    MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == 1);
    /* Tell the parents' root who we are. */
    MPI_Send(&r, 1, MPI_INT, 0, 9, parent);
    MPI_Barrier(parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc > 1 && strcmp(argv[1], "child") == 0) return child();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    char *args[] = {"child", NULL};
    char *cmds[2] = {argv[0], argv[0]};
    char **argvs[2] = {args, args};
    int maxprocs[2] = {1, 1};
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    int codes[2] = {-1, -1};
    MPI_Comm kids = MPI_COMM_NULL;
    int rc;
    if (rank == 0) {
        rc = MPI_Comm_spawn_multiple(2, cmds, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, &kids,
                                     codes);
    } else {
        /* No commands here: only the counts, for the error codes' room. */
        rc = MPI_Comm_spawn_multiple(2, NULL, NULL, maxprocs, NULL, 0, MPI_COMM_WORLD, &kids,
                                     codes);
    }
    CHECK(rc == MPI_SUCCESS && kids != MPI_COMM_NULL);
    CHECK(codes[0] == MPI_SUCCESS && codes[1] == MPI_SUCCESS);
    int n = 0, inter = 0;
    MPI_Comm_test_inter(kids, &inter);
    MPI_Comm_remote_size(kids, &n);
    CHECK(inter && n == 2);
    if (rank == 0) {
        int got[2] = {-1, -1};
        MPI_Comm_set_errhandler(kids, MPI_ERRORS_RETURN);
        for (int i = 0; i < 2; i++) {
            MPI_Status st;
            int r;
            CHECK(MPI_Recv(&r, 1, MPI_INT, MPI_ANY_SOURCE, 9, kids, &st) == MPI_SUCCESS);
            CHECK(r == st.MPI_SOURCE && got[r] == -1);
            got[r] = r;
        }
    }
    MPI_Barrier(kids);
    MPI_Comm_disconnect(&kids);

    /* Different programs: refused at every parent, nothing started. */
    char *other[2] = {argv[0], "/bin/true"};
    codes[0] = codes[1] = -1;
    kids = MPI_COMM_WORLD;
    rc = MPI_Comm_spawn_multiple(2, other, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, &kids,
                                 rank == 0 ? codes : MPI_ERRCODES_IGNORE);
    CHECK(rc == MPI_ERR_UNSUPPORTED_OPERATION && kids == MPI_COMM_NULL);
    if (rank == 0) CHECK(codes[0] == rc && codes[1] == rc);
    /* A count of 0 at the root. */
    int zero[2] = {0, 1};
    kids = MPI_COMM_WORLD;
    rc = MPI_Comm_spawn_multiple(2, cmds, argvs, zero, infos, 0, MPI_COMM_WORLD, &kids,
                                 MPI_ERRCODES_IGNORE);
    CHECK(rc == MPI_ERR_ARG && kids == MPI_COMM_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    printf("OK spawn_multiple rank=%d\n", rank);
    return 0;
}
