#include <mpi.h>
#include <mpi-ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <unistd.h>
/* mode 0: victim dies right away, others create at once over all;
   mode 1: others wait 1 s (death known), then create over all;
   mode 2: others wait 1 s, create over survivors only;
   mode 3: victim dies in the middle: it calls create then dies after a delay (others already inside) */
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int mode = atoi(argv[1]);
    int r, n; MPI_Comm_rank(MPI_COMM_WORLD, &r); MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    int victim = n - 1;
    if (r == victim && mode != 3 && mode != 5) raise(SIGKILL);
    if (r == victim && (mode == 3 || mode == 5)) { usleep(200000); raise(SIGKILL); }
    if (mode == 1 || mode == 2 || mode == 4) sleep(1);
    MPI_Group wg, g; MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int ex[1] = {victim};
    if (mode == 2) MPI_Group_excl(wg, 1, ex, &g); else g = wg;
    MPI_Comm c = MPI_COMM_NULL;
    int rc = (mode >= 4) ? MPI_Comm_dup(MPI_COMM_WORLD, &c) : MPI_Comm_create_group(MPI_COMM_WORLD, g, 5, &c);
    char s[MPI_MAX_ERROR_STRING]; int l = 0; s[0] = 0;
    if (rc) MPI_Error_string(rc, s, &l);
    printf("rank %d mode %d rc=%d %s\n", r, mode, rc, s);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
