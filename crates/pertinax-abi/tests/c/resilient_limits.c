/* pertinax-abi: the limits of `pertinax run --resilient` for unchanged
 * programs (run by c_abi/resilient.rs with --resilient only). On the resilient
 * MPI_COMM_WORLD (and a duplicate) the calls without a resilient form
 * return MPI_ERR_UNSUPPORTED_OPERATION through the error handler (never
 * a plain operation): MPI_Comm_group, persistent requests
 * (MPI_Send_init), windows (MPI_Win_create; one on MPI_COMM_SELF works). MPI_Scan, which pertinax-resilient repairs, works; so
 * do MPI_Isend and MPI_Irecv, and MPI_Iallreduce, MPI_Ibcast and
 * MPI_Iallgatherv (waited for in another order than started).
 * MPI_COMM_SELF stays plain and works; so do the calls that only read the
 * communicator's entry (attributes, names, error handlers). Prints
 * "OK resilient_limits rank=R" when all held. */
#include <mpi.h>
#include <stdio.h>

static int bad = 0, rank = -1;

static void unsupported(const char *what, int rc) {
    int cls = -1;
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_UNSUPPORTED_OPERATION) {
        printf("FAIL resilient_limits rank=%d: %s gave class %d\n", rank, what, cls);
        bad = 1;
    }
}

static void works(const char *what, int rc) {
    if (rc != MPI_SUCCESS) {
        printf("FAIL resilient_limits rank=%d: %s gave %d\n", rank, what, rc);
        bad = 1;
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int size = 0, x = rank, y = 0, *ub = NULL, flag = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup;
    works("MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Comm comms[2] = {MPI_COMM_WORLD, dup};
    for (int i = 0; i < 2; i++) {
        MPI_Comm c = comms[i];
        MPI_Request rq[2];
        y = -1;
        works("MPI_Irecv", MPI_Irecv(&y, 1, MPI_INT, (rank + size - 1) % size, 0, c, &rq[0]));
        works("MPI_Isend", MPI_Isend(&x, 1, MPI_INT, (rank + 1) % size, 0, c, &rq[1]));
        works("MPI_Waitall", MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        if (y != (rank + size - 1) % size) {
            printf("FAIL resilient_limits rank=%d: ring %d\n", rank, y);
            bad = 1;
        }
        int counts[8], displs[8], all[8];
        for (int k = 0; k < size && k < 8; k++) {
            counts[k] = 1;
            displs[k] = k;
        }
        /* Non-blocking collectives (they have a resilient form), waited
         * for in another order than started. */
        MPI_Request three[3];
        int sum = -1, b = rank == 0 ? 42 : -1, ok = 1;
        works("MPI_Iallreduce", MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c, &three[0]));
        works("MPI_Ibcast", MPI_Ibcast(&b, 1, MPI_INT, 0, c, &three[1]));
        works("MPI_Iallgatherv",
              MPI_Iallgatherv(&x, 1, MPI_INT, all, counts, displs, MPI_INT, c, &three[2]));
        works("MPI_Wait", MPI_Wait(&three[1], MPI_STATUS_IGNORE));
        works("MPI_Waitall", MPI_Waitall(3, three, MPI_STATUSES_IGNORE));
        for (int k = 0; k < size && k < 8; k++) ok &= all[k] == k;
        if (sum != size * (size - 1) / 2 || b != 42 || !ok) {
            printf("FAIL resilient_limits rank=%d: iallreduce %d ibcast %d iallgatherv %d\n", rank,
                   sum, b, ok);
            bad = 1;
        }
        unsupported("MPI_Send_init", MPI_Send_init(&x, 1, MPI_INT, (rank + 1) % size, 0, c, &req));
        works("MPI_Scan", MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, c));
        if (y != rank * (rank + 1) / 2) {
            printf("FAIL resilient_limits rank=%d: scan %d\n", rank, y);
            bad = 1;
        }
        MPI_Group g;
        unsupported("MPI_Comm_group", MPI_Comm_group(c, &g));
        MPI_Win w = MPI_WIN_NULL;
        unsupported("MPI_Win_create", MPI_Win_create(&x, sizeof x, 1, MPI_INFO_NULL, c, &w));
        if (w != MPI_WIN_NULL) {
            printf("FAIL resilient_limits rank=%d: a window was made\n", rank);
            bad = 1;
        }
        works("MPI_Comm_get_attr", MPI_Comm_get_attr(c, MPI_TAG_UB, &ub, &flag));
        works("MPI_Allreduce", MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, c));
        if (y != size * (size - 1) / 2) {
            printf("FAIL resilient_limits rank=%d: allreduce %d\n", rank, y);
            bad = 1;
        }
    }
    if (req != MPI_REQUEST_NULL || !flag || *ub < 32767) {
        printf("FAIL resilient_limits rank=%d: req %d flag %d\n", rank, req, flag);
        bad = 1;
    }
    works("MPI_Allreduce on MPI_COMM_SELF", MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF));
    MPI_Win sw;
    int v = 0, one = 7;
    works("MPI_Win_create on MPI_COMM_SELF", MPI_Win_create(&v, sizeof v, sizeof v, MPI_INFO_NULL, MPI_COMM_SELF, &sw));
    works("MPI_Win_fence", MPI_Win_fence(0, sw));
    works("MPI_Put", MPI_Put(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, sw));
    works("MPI_Win_fence", MPI_Win_fence(0, sw));
    works("MPI_Win_free", MPI_Win_free(&sw));
    if (v != 7) {
        printf("FAIL resilient_limits rank=%d: self window %d\n", rank, v);
        bad = 1;
    }
    works("MPI_Comm_free", MPI_Comm_free(&dup));
    if (!bad) printf("OK resilient_limits rank=%d\n", rank);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
