/* Whether a message that arrived before its sender died can be received.
   usage: mpirun --with-ft ulfm -n 2 ./a.out
   Rank 1 sends 16 bytes to rank 0 (tag 5, eager) and dies (SIGKILL).
   Rank 0 waits until MPIX_Comm_get_failed lists it, acknowledges it, then
   three times: MPI_Iprobe(MPI_ANY_SOURCE, 5) and MPI_Recv from the source
   it reported; then MPI_Irecv + MPI_Wait from it. Prints each result and
   whether the bytes are the ones sent. Exit 0 iff the message was
   received one way or the other. */
#include <mpi.h>
#include <mpi-ext.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char sent[16] = "from rank one..";

static const char *name(int rc) {
    static char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (rc == MPI_SUCCESS) return "MPI_SUCCESS";
    MPI_Error_string(rc, s, &len);
    return s;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 1) {
        MPI_Send(sent, 16, MPI_BYTE, 0, 5, MPI_COMM_WORLD);
        raise(SIGKILL);
    }
    if (r != 0) {
        MPI_Finalize();
        return 0;
    }
    /* Wait until the failure is known (a probe progresses MPI). */
    for (int i = 0; i < 10000; i++) {
        int flag, n = 0;
        MPI_Group failed;
        MPI_Iprobe(1, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        MPIX_Comm_get_failed(MPI_COMM_WORLD, &failed);
        MPI_Group_size(failed, &n);
        MPI_Group_free(&failed);
        if (n > 0) break;
        usleep(1000);
    }
    int acked = 0;
    MPIX_Comm_ack_failed(MPI_COMM_WORLD, 2, &acked);
    printf("failures acknowledged: %d\n", acked);
    char got[16];
    int ok = 0;
    for (int t = 0; t < 3 && !ok; t++) {
        int flag = 0;
        MPI_Status st;
        int rc = MPI_Iprobe(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &flag, &st);
        printf("try %d: MPI_Iprobe(any) %s, flag %d, source %d\n", t, name(rc), flag,
               flag ? st.MPI_SOURCE : -1);
        if (rc != MPI_SUCCESS || !flag) continue;
        memset(got, 0, sizeof got);
        rc = MPI_Recv(got, 16, MPI_BYTE, st.MPI_SOURCE, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        ok = rc == MPI_SUCCESS && !memcmp(got, sent, 16);
        printf("try %d: MPI_Recv from %d: %s, data %s\n", t, st.MPI_SOURCE, name(rc),
               ok ? "as sent" : "-");
    }
    if (!ok) {
        MPI_Request q;
        memset(got, 0, sizeof got);
        int rc = MPI_Irecv(got, 16, MPI_BYTE, 1, 5, MPI_COMM_WORLD, &q);
        if (rc == MPI_SUCCESS) rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
        ok = rc == MPI_SUCCESS && !memcmp(got, sent, 16);
        printf("MPI_Irecv + MPI_Wait from 1: %s, data %s\n", name(rc), ok ? "as sent" : "-");
    }
    MPI_Finalize();
    return ok ? 0 : 1;
}
