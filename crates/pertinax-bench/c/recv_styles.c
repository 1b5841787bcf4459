/* Half round trip of 8 B ping-pong, three receive styles, alternated in
   rounds in one run: 0 MPI_Recv, 1 MPI_Mprobe+MPI_Mrecv, 2 MPI_Recv plus
   MPIX_Comm_is_revoked before every call (what pertinax's live check adds). */
#include <mpi.h>
#include <mpi-ext.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int r; MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm c; MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    int iters = 20000, rounds = 15;
    double best[3] = {1e9, 1e9, 1e9}, sum[3] = {0};
    double med[3][64];
    char buf[8] = {0};
    for (int k = 0; k < rounds; k++) {
        for (int mode = 0; mode < 3; mode++) {
            MPI_Barrier(c);
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++) {
                int rev;
                if (r == 0) {
                    if (mode == 2) MPIX_Comm_is_revoked(c, &rev);
                    MPI_Send(buf, 8, MPI_BYTE, 1, 5, c);
                    if (mode == 2) MPIX_Comm_is_revoked(c, &rev);
                    if (mode == 1) { MPI_Message m; MPI_Status st; MPI_Mprobe(1, 5, c, &m, &st); MPI_Mrecv(buf, 8, MPI_BYTE, &m, MPI_STATUS_IGNORE); }
                    else MPI_Recv(buf, 8, MPI_BYTE, 1, 5, c, MPI_STATUS_IGNORE);
                } else {
                    if (mode == 2) MPIX_Comm_is_revoked(c, &rev);
                    if (mode == 1) { MPI_Message m; MPI_Status st; MPI_Mprobe(0, 5, c, &m, &st); MPI_Mrecv(buf, 8, MPI_BYTE, &m, MPI_STATUS_IGNORE); }
                    else MPI_Recv(buf, 8, MPI_BYTE, 0, 5, c, MPI_STATUS_IGNORE);
                    if (mode == 2) MPIX_Comm_is_revoked(c, &rev);
                    MPI_Send(buf, 8, MPI_BYTE, 0, 5, c);
                }
            }
            double us = (MPI_Wtime() - t0) / iters / 2 * 1e6;
            med[mode][k] = us;
            if (us < best[mode]) best[mode] = us;
        }
    }
    if (r == 0) {
        for (int mode = 0; mode < 3; mode++) {
            /* median by insertion sort */
            for (int i = 1; i < rounds; i++) for (int j = i; j > 0 && med[mode][j-1] > med[mode][j]; j--) { double t = med[mode][j]; med[mode][j] = med[mode][j-1]; med[mode][j-1] = t; }
        }
        printf("recv median %.3f min %.3f | mprobe+mrecv median %.3f min %.3f | recv+is_revoked median %.3f min %.3f (us, half round trip)\n",
            med[0][rounds/2], best[0], med[1][rounds/2], best[1], med[2][rounds/2], best[2]);
    }
    MPI_Finalize();
    return 0;
}
