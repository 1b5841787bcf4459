/* pertinax-abi: one-sided communication. Fence epochs with put, get and
 * accumulate on contiguous and derived (vector) types, checked against
 * computed values; passive target (exclusive and shared locks, lock_all,
 * flush) with concurrent accumulates from every rank to rank 0 (the sum
 * must be exact); fetch_and_op tickets (all distinct) and a
 * compare_and_swap race (one winner); get_accumulate and the
 * request-based forms; PSCW around a ring; allocate_shared with
 * shared_query and direct loads and stores; a dynamic window with attach;
 * the predefined attributes, a user attribute, names; error classes (a
 * bad target rank, a displacement out of the window, an access outside
 * any epoch, a bad lock type). Prints "OK rma rank=R". */
#include <string.h>

#include "check.h"

#define N 16
#define K 50

static int class_of(int rc) {
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

static int deleted;
static int del_fn(MPI_Win w, int k, void *v, void *extra) {
    (void)w; (void)k; (void)extra;
    deleted += *(int *)v;
    return MPI_SUCCESS;
}

static void fence_epochs(void) {
    int buf[2 * N], src[2 * N];
    for (int i = 0; i < 2 * N; i++) buf[i] = -1;
    MPI_Win win;
    CHECK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win) == MPI_SUCCESS);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    /* put: my values into the right neighbour's first N ints */
    for (int i = 0; i < N; i++) src[i] = rank * 1000 + i;
    MPI_Win_fence(0, win);
    MPI_Put(src, N, MPI_INT, right, 0, N, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++) CHECK(buf[i] == left * 1000 + i);
    /* get: the left neighbour's first N ints (its left's values) */
    int got[N];
    MPI_Get(got, N, MPI_INT, left, 0, N, MPI_INT, win);
    MPI_Win_fence(0, win);
    int ll = (left + size - 1) % size;
    for (int i = 0; i < N; i++) CHECK(got[i] == ll * 1000 + i);
    /* derived target type: every other int of the upper half */
    MPI_Datatype vec;
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    for (int i = 0; i < N / 2; i++) src[i] = 7000 + rank * 10 + i;
    MPI_Put(src, N / 2, MPI_INT, right, N, 1, vec, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++) {
        int want = i % 2 == 0 ? 7000 + left * 10 + i / 2 : -1;
        CHECK(buf[N + i] == want);
    }
    /* derived origin type: get the strided ints back into a vector */
    int strided[N];
    for (int i = 0; i < N; i++) strided[i] = -5;
    MPI_Get(strided, 1, vec, right, N, 1, vec, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++) CHECK(strided[i] == (i % 2 == 0 ? 7000 + rank * 10 + i / 2 : -5));
    /* accumulate from everyone to rank 0, then a vector MAX */
    for (int i = 0; i < N; i++) buf[i] = 0;
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++) src[i] = rank + i;
    MPI_Accumulate(src, N, MPI_INT, 0, 0, N, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    if (rank == 0)
        for (int i = 0; i < N; i++) CHECK(buf[i] == size * (size - 1) / 2 + size * i);
    MPI_Accumulate(src, N / 2, MPI_INT, 0, 0, 1, vec, MPI_MAX, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    if (rank == 0)
        for (int i = 0; i < N; i++) {
            int sum = size * (size - 1) / 2 + size * i;
            int want = i % 2 == 0 ? (sum > size - 1 + i / 2 ? sum : size - 1 + i / 2) : sum;
            CHECK(buf[i] == want);
        }
    /* outside any epoch */
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    CHECK(class_of(MPI_Put(src, 1, MPI_INT, right, 0, 1, MPI_INT, win)) == MPI_ERR_RMA_SYNC);
    MPI_Type_free(&vec);
    CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
    CHECK(win == MPI_WIN_NULL);
}

static void passive(void) {
    long *ctr;
    MPI_Win win;
    MPI_Aint n = rank == 0 ? 4 * sizeof(long) : 0;
    CHECK(MPI_Win_allocate(n, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &ctr, &win) == MPI_SUCCESS);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        for (int i = 0; i < 4; i++) ctr[i] = 0;
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long one = 1, two[2] = {2, 2};
    for (int k = 0; k < K; k++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win);
        MPI_Win_unlock(0, win);
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Accumulate(two, 2, MPI_LONG, 0, 1, 2, MPI_LONG, MPI_SUM, win);
        MPI_Win_unlock(0, win);
    }
    MPI_Win_lock_all(0, win);
    long ticket[K];
    for (int k = 0; k < K; k++) {
        MPI_Fetch_and_op(&one, &ticket[k], MPI_LONG, 0, 3, MPI_SUM, win);
        MPI_Win_flush(0, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        CHECK(ctr[0] == (long)size * K);
        CHECK(ctr[1] == 2L * size * K);
        CHECK(ctr[2] == 2L * size * K);
        CHECK(ctr[3] == (long)size * K);
        MPI_Win_unlock(0, win);
    }
    /* the tickets: every value 0..size*K-1 once */
    long *all = malloc(sizeof(long) * K * size);
    MPI_Allgather(ticket, K, MPI_LONG, all, K, MPI_LONG, MPI_COMM_WORLD);
    char *seen = calloc(K * size, 1);
    for (int i = 0; i < K * size; i++) {
        CHECK(all[i] >= 0 && all[i] < K * size);
        CHECK(!seen[all[i]]);
        seen[all[i]] = 1;
    }
    free(all);
    free(seen);
    /* compare and swap: one winner */
    MPI_Barrier(MPI_COMM_WORLD);
    long minus = -1, mine = rank, old = 0;
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        ctr[0] = -1;
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Compare_and_swap(&mine, &minus, &old, MPI_LONG, 0, 0, win);
    MPI_Win_unlock(0, win);
    int won = old == -1, winners = 0;
    MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(winners == 1);
    long final = -2;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Get(&final, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
    MPI_Win_unlock(0, win);
    int winner = won ? rank : -1, who = -1;
    MPI_Allreduce(&winner, &who, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(final == who);
    /* get_accumulate and the request forms */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    long add = 10, before = -7;
    MPI_Request req[3];
    CHECK(MPI_Rget_accumulate(&add, 1, MPI_LONG, &before, 1, MPI_LONG, 0, 1, 1, MPI_LONG, MPI_SUM, win, &req[0]) == MPI_SUCCESS);
    CHECK(MPI_Raccumulate(&add, 1, MPI_LONG, 0, 2, 1, MPI_LONG, MPI_SUM, win, &req[1]) == MPI_SUCCESS);
    long peek = -1;
    CHECK(MPI_Rget(&peek, 1, MPI_LONG, 0, 3, 1, MPI_LONG, win, &req[2]) == MPI_SUCCESS);
    MPI_Waitall(3, req, MPI_STATUSES_IGNORE);
    CHECK(before >= 2L * size * K && before < 2L * size * K + 10L * size);
    CHECK((before - 2L * size * K) % 10 == 0);
    CHECK(peek == (long)size * K);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        CHECK(ctr[1] == 2L * size * K + 10L * size && ctr[2] == ctr[1]);
        MPI_Win_unlock(0, win);
    }
    /* errors */
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    CHECK(class_of(MPI_Win_lock(12345, 0, 0, win)) == MPI_ERR_LOCKTYPE);
    MPI_Win_lock_all(0, win);
    CHECK(class_of(MPI_Put(&one, 1, MPI_LONG, size, 0, 1, MPI_LONG, win)) == MPI_ERR_RANK);
    CHECK(class_of(MPI_Put(&one, 1, MPI_LONG, 0, 4, 1, MPI_LONG, win)) == MPI_ERR_RMA_RANGE);
    CHECK(class_of(MPI_Get(two, 2, MPI_LONG, 0, 3, 2, MPI_LONG, win)) == MPI_ERR_RMA_RANGE);
    CHECK(class_of(MPI_Accumulate(&one, 1, MPI_LONG, 0, -1, 1, MPI_LONG, MPI_SUM, win)) == MPI_ERR_RMA_RANGE);
    CHECK(MPI_Put(&one, 1, MPI_LONG, MPI_PROC_NULL, 99, 1, MPI_LONG, win) == MPI_SUCCESS);
    CHECK(class_of(MPI_Win_lock_all(0, win)) == MPI_ERR_RMA_SYNC);
    MPI_Win_unlock_all(win);
    CHECK(class_of(MPI_Win_unlock(0, win)) == MPI_ERR_RMA_SYNC);
    MPI_Win_free(&win);
}

static void pscw(void) {
    int buf[N], src[N];
    for (int i = 0; i < N; i++) buf[i] = -1, src[i] = rank * 100 + i;
    MPI_Win win;
    MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Group world, to, from;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Group_incl(world, 1, &right, &to);
    MPI_Group_incl(world, 1, &left, &from);
    for (int round = 0; round < 3; round++) {
        MPI_Win_post(from, 0, win);
        MPI_Win_start(to, 0, win);
        MPI_Put(src, N, MPI_INT, right, 0, N, MPI_INT, win);
        MPI_Win_complete(win);
        if (round == 2) {
            int flag = 0;
            while (!flag) MPI_Win_test(win, &flag);
        } else {
            MPI_Win_wait(win);
        }
        for (int i = 0; i < N; i++) CHECK(buf[i] == left * 100 + i + round);
        for (int i = 0; i < N; i++) src[i]++;
    }
    MPI_Group_free(&to);
    MPI_Group_free(&from);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
}

static void shared(void) {
    int *mine;
    MPI_Win win;
    MPI_Aint n = (rank + 1) * sizeof(int);
    CHECK(MPI_Win_allocate_shared(n, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win) == MPI_SUCCESS);
    MPI_Win_lock_all(0, win);
    for (int i = 0; i <= rank; i++) mine[i] = rank * 10 + i;
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    for (int r = 0; r < size; r++) {
        MPI_Aint sz;
        int du;
        int *p;
        CHECK(MPI_Win_shared_query(win, r, &sz, &du, &p) == MPI_SUCCESS);
        CHECK(sz == (r + 1) * (MPI_Aint)sizeof(int) && du == sizeof(int));
        for (int i = 0; i <= r; i++) CHECK(p[i] == r * 10 + i);
        if (r > 0) {
            int *q;
            MPI_Win_shared_query(win, r - 1, &sz, &du, &q);
            CHECK(q + r == p); /* contiguous */
        }
    }
    /* an RMA put into the shared memory, seen by a load */
    MPI_Barrier(MPI_COMM_WORLD);
    int v = 4242;
    MPI_Put(&v, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, win);
    MPI_Win_flush_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    CHECK(mine[0] == 4242);
    MPI_Win_unlock_all(win);
    int flavor_ok = 0, *fl;
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fl, &flavor_ok);
    CHECK(flavor_ok && *fl == MPI_WIN_FLAVOR_SHARED);
    MPI_Win_free(&win);
}

static void dynamic(void) {
    MPI_Win win;
    CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win) == MPI_SUCCESS);
    int *mem = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) mem[i] = -1;
    CHECK(MPI_Win_attach(win, mem, N * sizeof(int)) == MPI_SUCCESS);
    MPI_Aint addr, *addrs = malloc(sizeof(MPI_Aint) * size);
    MPI_Get_address(mem, &addr);
    MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int src[N];
    for (int i = 0; i < N; i++) src[i] = rank + 3 * i;
    MPI_Win_fence(0, win);
    MPI_Put(src, N, MPI_INT, right, addrs[right], N, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++) CHECK(mem[i] == left + 3 * i);
    int *fl, flag;
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fl, &flag);
    CHECK(flag && *fl == MPI_WIN_FLAVOR_DYNAMIC);
    CHECK(MPI_Win_detach(win, mem) == MPI_SUCCESS);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    CHECK(class_of(MPI_Win_detach(win, mem)) == MPI_ERR_RMA_ATTACH);
    MPI_Win_free(&win);
    free(mem);
    free(addrs);
}

static void attributes(void) {
    char buf[64];
    MPI_Win win;
    MPI_Win_create(buf, sizeof buf, 2, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    void *base;
    MPI_Aint *sz;
    int *du, *model, flag;
    MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
    CHECK(flag && base == buf);
    MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag);
    CHECK(flag && *sz == sizeof buf);
    MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &flag);
    CHECK(flag && *du == 2);
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
    CHECK(flag && *model == MPI_WIN_UNIFIED);
    int kv, val = 5, *got;
    MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &kv, NULL);
    MPI_Win_set_attr(win, kv, &val);
    MPI_Win_get_attr(win, kv, &got, &flag);
    CHECK(flag && got == &val);
    MPI_Win_free_keyval(&kv);
    CHECK(kv == MPI_KEYVAL_INVALID);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Win_set_name(win, "ring");
    MPI_Win_get_name(win, name, &len);
    CHECK(len == 4 && strcmp(name, "ring") == 0);
    MPI_Group g, wg;
    int cmp;
    MPI_Win_get_group(win, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &cmp);
    CHECK(cmp == MPI_IDENT);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    MPI_Errhandler eh;
    MPI_Win_get_errhandler(win, &eh);
    CHECK(eh == MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&eh);
    CHECK(MPI_Win_c2f(win) == MPI_Win_c2f(MPI_Win_f2c(MPI_Win_c2f(win))));
    MPI_Win_free(&win);
    CHECK(deleted == 5);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    fence_epochs();
    passive();
    pscw();
    shared();
    dynamic();
    attributes();
    printf("OK rma rank=%d\n", rank);
    MPI_Finalize();
    return 0;
}
