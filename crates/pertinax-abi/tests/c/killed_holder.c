/* pertinax-abi: one-sided communication and files when a rank dies (run
 * by c_abi/ulfm.rs on 3 ranks with `--kill 1@mpi.Put#1`; not with the
 * other programs). Rank 1 takes rank 0's window lock (exclusive), says so
 * with a barrier (which may fail at the others once it is dead), and
 * dies inside its first MPI_Put, still holding it.
 * Rank 2 then asks for the same lock: it must get MPIX_ERR_PROC_FAILED,
 * not wait forever. Then the survivors open a file collectively on
 * MPI_COMM_WORLD, which holds the dead rank: MPI_File_open must fail with
 * MPIX_ERR_PROC_FAILED at both (not hang); on the world's shrink the same
 * open works, and each survivor writes its rank at its own offset and
 * reads the other's back. MPI_Win_free over the dead rank returns (any
 * class). Prints "OK killed_holder rank=R lock=L open=O" with the error
 * classes (L is -1 at rank 0, which asks for no lock). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static int class_of(int rc) {
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 3);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int data[4] = {0, 0, 0, 0}, one = 1;
    MPI_Win win;
    CHECK(MPI_Win_create(data, sizeof data, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win) ==
          MPI_SUCCESS);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    if (rank == 1) CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win) == MPI_SUCCESS);
    /* Rank 1 may leave the barrier and die before the others have: then
     * theirs fails, and rank 1 holds the lock all the same. */
    int rc = MPI_Barrier(MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS || class_of(rc) == MPIX_ERR_PROC_FAILED);
    if (rank == 1) {
        MPI_Put(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, win); /* killed here */
        printf("FAIL killed_holder rank=1: still alive\n");
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    int lock = -1;
    if (rank == 2) {
        int rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        lock = class_of(rc);
        if (rc == MPI_SUCCESS) MPI_Win_unlock(0, win);
    }
    /* A file on the world, which holds the dead rank. */
    char path[256];
    snprintf(path, sizeof path, "%s/pertinax-killed-holder-%d.dat",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getppid());
    MPI_File fh;
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    int open = class_of(rc);
    if (rc == MPI_SUCCESS) MPI_File_close(&fh);
    /* The same on the survivors' communicator. */
    MPI_Comm alive;
    CHECK(MPIX_Comm_shrink(MPI_COMM_WORLD, &alive) == MPI_SUCCESS);
    int me, n;
    MPI_Comm_rank(alive, &me);
    MPI_Comm_size(alive, &n);
    CHECK(n == 2);
    CHECK(MPI_File_open(alive, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                        MPI_INFO_NULL, &fh) == MPI_SUCCESS);
    CHECK(MPI_File_write_at_all(fh, me * (MPI_Offset)sizeof(int), &rank, 1, MPI_INT,
                                MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(MPI_File_sync(fh) == MPI_SUCCESS);
    CHECK(MPI_Barrier(alive) == MPI_SUCCESS);
    CHECK(MPI_File_sync(fh) == MPI_SUCCESS);
    int other = -1;
    CHECK(MPI_File_read_at_all(fh, (1 - me) * (MPI_Offset)sizeof(int), &other, 1, MPI_INT,
                               MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(other == (rank == 0 ? 2 : 0));
    CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
    MPI_Win_free(&win);
    MPI_Comm_free(&alive);
    if ((rank == 2 && lock != MPIX_ERR_PROC_FAILED) || open != MPIX_ERR_PROC_FAILED)
        printf("FAIL killed_holder rank=%d: lock=%d open=%d\n", rank, lock, open);
    else
        printf("OK killed_holder rank=%d lock=%d open=%d\n", rank, lock, open);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
