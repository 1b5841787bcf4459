/* How Open MPI 5.0.11 creates a communicator when a process of the group
   is dead. usage: mpirun --with-ft ulfm -n 4 ./a.out CALL MODE
   CALL: from_group (MPI_Comm_create_from_group), group
   (MPI_Comm_create_group over the world), dup, split (over the world),
   intercomm (MPI_Intercomm_create between the two halves of the world,
   split before the death, leaders 0 and n/2, peer MPI_COMM_WORLD).
   MODE 0: the last rank dies at once, the others create at once;
   1: the others wait 1 s (the death is known), then create;
   2: as 1, over the group without the dead rank (from_group, group);
   3: the last rank dies 200 ms after the others started creating. */
#include <mpi.h>
#include <mpi-ext.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc < 3) {
        fprintf(stderr, "usage: %s from_group|group|dup|split|intercomm MODE\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *call = argv[1];
    int mode = atoi(argv[2]);
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, r >= n / 2, r, &half);
    MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    int victim = n - 1;
    if (r == victim) {
        if (mode == 3) usleep(200000);
        raise(SIGKILL);
    }
    if (mode == 1 || mode == 2) sleep(1);
    MPI_Group wg, g;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int ex[1] = {victim};
    if (mode == 2) MPI_Group_excl(wg, 1, ex, &g); else g = wg;
    MPI_Comm c = MPI_COMM_NULL;
    int rc;
    if (!strcmp(call, "from_group"))
        rc = MPI_Comm_create_from_group(g, "t", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    else if (!strcmp(call, "group"))
        rc = MPI_Comm_create_group(MPI_COMM_WORLD, g, 5, &c);
    else if (!strcmp(call, "dup"))
        rc = MPI_Comm_dup(MPI_COMM_WORLD, &c);
    else if (!strcmp(call, "intercomm"))
        rc = MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, r >= n / 2 ? 0 : n / 2, 9, &c);
    else
        rc = MPI_Comm_split(MPI_COMM_WORLD, r % 2, 0, &c);
    char s[MPI_MAX_ERROR_STRING];
    int l = 0;
    s[0] = 0;
    if (rc) MPI_Error_string(rc, s, &l);
    printf("rank %d %s mode %d rc=%d %s\n", r, call, mode, rc, s);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
