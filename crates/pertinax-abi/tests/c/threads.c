/* pertinax-abi: threads. By default (any number of ranks):
 * MPI_Init_thread asking MPI_THREAD_MULTIPLE (even ranks) or
 * MPI_THREAD_SERIALIZED (odd ranks) gives MPI_THREAD_SERIALIZED, which
 * MPI_Query_thread, MPI_Is_thread_main and the info key thread_level
 * agree with. Then NT worker threads
 *  - take turns in a fixed order under a pthread mutex, making
 *    point-to-point (a ring) and collective calls (Allreduce with a
 *    predefined and a user op whose function calls MPI, Bcast, Allgather)
 *    on MPI_COMM_WORLD, each result checked against a value computed
 *    here;
 *  - each on its own duplicate of the world, in any order under the
 *    mutex, make non-blocking calls (a ring, Iallreduce) completed by
 *    MPI_Test polled with the mutex let go in between;
 *  - without the mutex (breaking MPI's promise: the library's lock makes
 *    them wait for each other), create and free info objects and
 *    datatypes;
 * and MPI_Is_thread_main is false on a worker.
 * With "funneled": MPI_Init gives MPI_THREAD_FUNNELED; a worker's
 * MPI_Comm_rank and MPI_Send return MPI_ERR_OTHER (under
 * MPI_ERRORS_RETURN), while the calls allowed from any thread answer
 * (MPI_Initialized, MPI_Query_thread, MPI_Is_thread_main, MPI_Wtime);
 * the main thread's calls then still work. Prints "OK threads rank=R". */
#include "check.h"
#include <pthread.h>
#include <sched.h>
#include <string.h>

#define NT 4
#define TURNS 8

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turned = PTHREAD_COND_INITIALIZER;
static int turn = 0;
static MPI_Op sum_op;
static MPI_Comm comms[NT];
static int op_inner_size = 0, op_calls = 0;

/* A user sum whose function calls MPI (nested in the reduction, on the
 * calling thread). */
static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt) {
    int sz = 0;
    MPI_Type_size(*dt, &sz);
    op_inner_size = sz;
    op_calls++;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

/* Turn t of thread `me` (global turn number t = round * NT + me). */
static void one_turn(int me, int t) {
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[2] = {rank * 1000 + t, me}, in[2] = {-1, -1};
    CHECK(MPI_Sendrecv(out, 2, MPI_INT, right, t, in, 2, MPI_INT, left, t, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(in[0] == left * 1000 + t && in[1] == me);
    int v = (rank + 1) * (t + 1), s = 0, u = 0;
    CHECK(MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(s == (t + 1) * size * (size + 1) / 2);
    op_inner_size = 0;
    CHECK(MPI_Allreduce(&v, &u, 1, MPI_INT, sum_op, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(u == s);
    CHECK(op_inner_size == 0 || op_inner_size == (int)sizeof(int));
    int root = t % size, b = rank == root ? 7 * t + me : -1;
    CHECK(MPI_Bcast(&b, 1, MPI_INT, root, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(b == 7 * t + me);
    int all[64];
    CHECK(size <= 64);
    int mine = rank * rank + t;
    CHECK(MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS);
    for (int r = 0; r < size; r++) CHECK(all[r] == r * r + t);
}

/* Polls `req` to completion, letting go of the mutex between tests. */
static void poll(MPI_Request *reqs, int n) {
    for (;;) {
        int done = 0;
        pthread_mutex_lock(&mu);
        CHECK(MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
        pthread_mutex_unlock(&mu);
        if (done) return;
        sched_yield();
    }
}

static void *worker(void *arg) {
    int me = (int)(long)arg;
    int flag = -1;
    CHECK(MPI_Is_thread_main(&flag) == MPI_SUCCESS && flag == 0);
    int provided = -1;
    CHECK(MPI_Query_thread(&provided) == MPI_SUCCESS && provided == MPI_THREAD_SERIALIZED);

    /* 1. Turns in a fixed order, blocking calls on the world. */
    for (int round = 0; round < TURNS; round++) {
        int t = round * NT + me;
        pthread_mutex_lock(&mu);
        while (turn != t) pthread_cond_wait(&turned, &mu);
        one_turn(me, t);
        turn++;
        pthread_cond_broadcast(&turned);
        pthread_mutex_unlock(&mu);
    }

    /* 2. Any order, non-blocking calls on this thread's communicator. */
    MPI_Comm c = comms[me];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < 20; i++) {
        int out = rank * 100 + me * 10 + i % 10, in = -1, v = rank + me + i, s = -1;
        MPI_Request reqs[3];
        pthread_mutex_lock(&mu);
        CHECK(MPI_Irecv(&in, 1, MPI_INT, left, i, c, &reqs[0]) == MPI_SUCCESS);
        CHECK(MPI_Isend(&out, 1, MPI_INT, right, i, c, &reqs[1]) == MPI_SUCCESS);
        CHECK(MPI_Iallreduce(&v, &s, 1, MPI_INT, MPI_SUM, c, &reqs[2]) == MPI_SUCCESS);
        pthread_mutex_unlock(&mu);
        poll(reqs, 3);
        CHECK(in == left * 100 + me * 10 + i % 10);
        CHECK(s == size * (size - 1) / 2 + size * (me + i));
    }

    /* 3. No mutex: the library's lock keeps the calls apart. */
    for (int i = 0; i < 300; i++) {
        MPI_Info info;
        char key[32], val[32], got[32];
        snprintf(key, sizeof key, "k%d", me);
        snprintf(val, sizeof val, "v%d-%d", me, i);
        CHECK(MPI_Info_create(&info) == MPI_SUCCESS);
        CHECK(MPI_Info_set(info, key, val) == MPI_SUCCESS);
        int len = sizeof got, found = 0;
        CHECK(MPI_Info_get_string(info, key, &len, got, &found) == MPI_SUCCESS);
        CHECK(found && strcmp(got, val) == 0);
        CHECK(MPI_Info_free(&info) == MPI_SUCCESS);
        MPI_Datatype ty;
        int sz = 0;
        CHECK(MPI_Type_contiguous(me + i % 7 + 1, MPI_DOUBLE, &ty) == MPI_SUCCESS);
        CHECK(MPI_Type_commit(&ty) == MPI_SUCCESS);
        CHECK(MPI_Type_size(ty, &sz) == MPI_SUCCESS);
        CHECK(sz == (me + i % 7 + 1) * (int)sizeof(double));
        CHECK(MPI_Type_free(&ty) == MPI_SUCCESS);
        int r = -1;
        CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &r) == MPI_SUCCESS && r == rank);
    }
    return NULL;
}

static void serialized(int *argc, char ***argv) {
    int asked = MPI_THREAD_MULTIPLE, provided = -1;
    /* Odd ranks ask SERIALIZED (the rank is known after Init only: the
     * launcher's variable says it). */
    const char *r = getenv("PERTINAX_RANK");
    if (r && atoi(r) % 2 == 1) asked = MPI_THREAD_SERIALIZED;
    CHECK(MPI_Init_thread(argc, argv, asked, &provided) == MPI_SUCCESS);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(provided == MPI_THREAD_SERIALIZED);
    int q = -1, flag = -1;
    CHECK(MPI_Query_thread(&q) == MPI_SUCCESS && q == MPI_THREAD_SERIALIZED);
    CHECK(MPI_Is_thread_main(&flag) == MPI_SUCCESS && flag == 1);
    char level[64];
    int len = sizeof level, found = 0;
    CHECK(MPI_Info_get_string(MPI_INFO_ENV, "thread_level", &len, level, &found) == MPI_SUCCESS);
    CHECK(found && strcmp(level, "MPI_THREAD_SERIALIZED") == 0);

    CHECK(MPI_Op_create(user_sum, 1, &sum_op) == MPI_SUCCESS);
    for (int i = 0; i < NT; i++) CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]) == MPI_SUCCESS);
    pthread_t th[NT];
    for (int i = 0; i < NT; i++) CHECK(pthread_create(&th[i], NULL, worker, (void *)(long)i) == 0);
    for (int i = 0; i < NT; i++) CHECK(pthread_join(th[i], NULL) == 0);
    CHECK(turn == NT * TURNS);
    for (int i = 0; i < NT; i++) CHECK(MPI_Comm_free(&comms[i]) == MPI_SUCCESS);
    CHECK(MPI_Op_free(&sum_op) == MPI_SUCCESS);
    /* Some rank combined with the user function (not every one does). */
    int calls = 0;
    CHECK(MPI_Allreduce(&op_calls, &calls, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(size == 1 || calls > 0);
    int one = 1, n = 0;
    CHECK(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS && n == size);
}

static int refused_rank, refused_send, any_initialized, any_main, any_level;
static double any_time;

static void *funneled_worker(void *arg) {
    (void)arg;
    int r = -1, x = 1;
    refused_rank = MPI_Comm_rank(MPI_COMM_WORLD, &r);
    refused_send = MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    MPI_Initialized(&any_initialized);
    any_main = -1;
    MPI_Is_thread_main(&any_main);
    MPI_Query_thread(&any_level);
    any_time = MPI_Wtime();
    return NULL;
}

static void funneled(int *argc, char ***argv) {
    CHECK(MPI_Init(argc, argv) == MPI_SUCCESS);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN) == MPI_SUCCESS);
    int q = -1;
    CHECK(MPI_Query_thread(&q) == MPI_SUCCESS && q == MPI_THREAD_FUNNELED);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, funneled_worker, NULL) == 0);
    CHECK(pthread_join(th, NULL) == 0);
    int cls = -1;
    CHECK(MPI_Error_class(refused_rank, &cls) == MPI_SUCCESS && cls == MPI_ERR_OTHER);
    CHECK(MPI_Error_class(refused_send, &cls) == MPI_SUCCESS && cls == MPI_ERR_OTHER);
    CHECK(any_initialized == 1 && any_main == 0 && any_level == MPI_THREAD_FUNNELED);
    CHECK(any_time >= 0.0);
    int v = rank + 1, s = 0;
    CHECK(MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(s == size * (size + 1) / 2);
    CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "funneled") == 0)
        funneled(&argc, &argv);
    else
        serialized(&argc, &argv);
    printf("OK threads rank=%d\n", rank);
    MPI_Finalize();
    return 0;
}
