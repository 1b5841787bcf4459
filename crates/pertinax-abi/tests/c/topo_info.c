/* pertinax-abi: an unchanged C MPI program (built with MPICH's mpicc)
 * checking info objects (set, get in both forms, valuelen, nthkey,
 * delete, dup, free, MPI_INFO_ENV, Info_create_env before MPI_Init, the
 * error classes), communicators' hints and names, MPI_Dims_create
 * (MPICH's answers) and Cartesian topologies (create, get, rank, coords,
 * shift with data moved along it, sub, map, Topo_test, a grid smaller
 * than the world, zero dimensions, errors, and a freed Cartesian
 * communicator's handle reused without its grid, name or hints), at any
 * size from 2. Prints "OK topo_info rank=R" when every check held. */
#include "check.h"
#include <string.h>
#include <unistd.h>

/* The error class of `rc`. */
static int class_of(int rc) {
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

/* Whether `info` holds `key` with `value`. */
static int has(MPI_Info info, const char *key, const char *value) {
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    CHECK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS);
    return flag && strcmp(v, value) == 0;
}

static int nkeys(MPI_Info info) {
    int n = -1;
    CHECK(MPI_Info_get_nkeys(info, &n) == MPI_SUCCESS);
    return n;
}

static int topo(MPI_Comm c) {
    int t = -5;
    CHECK(MPI_Topo_test(c, &t) == MPI_SUCCESS);
    return t;
}

static void name_is(MPI_Comm c, const char *want) {
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    CHECK(MPI_Comm_get_name(c, name, &len) == MPI_SUCCESS);
    CHECK(strcmp(name, want) == 0 && len == (int)strlen(want));
}

static void info_objects(void) {
    MPI_Info info;
    CHECK(MPI_Info_create(&info) == MPI_SUCCESS && info != MPI_INFO_NULL);
    CHECK(nkeys(info) == 0);
    CHECK(MPI_Info_set(info, "alpha", "first") == MPI_SUCCESS);
    CHECK(MPI_Info_set(info, "beta", "second value") == MPI_SUCCESS);
    CHECK(MPI_Info_set(info, " gamma ", "") == MPI_SUCCESS); /* kept as given */
    CHECK(nkeys(info) == 3);
    /* Setting again replaces in place: the numbering stays. */
    CHECK(MPI_Info_set(info, "alpha", "again") == MPI_SUCCESS);
    char key[MPI_MAX_INFO_KEY + 1];
    const char *order[] = {"alpha", "beta", " gamma "};
    for (int i = 0; i < 3; i++) {
        CHECK(MPI_Info_get_nthkey(info, i, key) == MPI_SUCCESS);
        CHECK(strcmp(key, order[i]) == 0);
    }
    CHECK(has(info, "alpha", "again") && has(info, " gamma ", ""));
    CHECK(!has(info, "gamma", ""));

    /* MPI_Info_get: at most valuelen bytes and a NUL. */
    char buf[32];
    int flag = -1;
    memset(buf, '#', sizeof buf);
    CHECK(MPI_Info_get(info, "beta", 3, buf, &flag) == MPI_SUCCESS);
    CHECK(flag == 1 && strcmp(buf, "sec") == 0);
    memset(buf, '#', sizeof buf);
    CHECK(MPI_Info_get(info, "missing", 10, buf, &flag) == MPI_SUCCESS);
    CHECK(flag == 0 && buf[0] == '#');
    int len = -1;
    CHECK(MPI_Info_get_valuelen(info, "beta", &len, &flag) == MPI_SUCCESS);
    CHECK(flag == 1 && len == 12);
    CHECK(MPI_Info_get_valuelen(info, "missing", &len, &flag) == MPI_SUCCESS);
    CHECK(flag == 0 && len == 12);

    /* MPI_Info_get_string: buflen in, the length with the NUL out. */
    int buflen = 0;
    CHECK(MPI_Info_get_string(info, "beta", &buflen, NULL, &flag) == MPI_SUCCESS);
    CHECK(flag == 1 && buflen == 13);
    buflen = 4;
    memset(buf, '#', sizeof buf);
    CHECK(MPI_Info_get_string(info, "beta", &buflen, buf, &flag) == MPI_SUCCESS);
    CHECK(flag == 1 && buflen == 13 && strcmp(buf, "sec") == 0);
    buflen = sizeof buf;
    CHECK(MPI_Info_get_string(info, "beta", &buflen, buf, &flag) == MPI_SUCCESS);
    CHECK(flag == 1 && buflen == 13 && strcmp(buf, "second value") == 0);
    buflen = 77;
    CHECK(MPI_Info_get_string(info, "missing", &buflen, buf, &flag) == MPI_SUCCESS);
    CHECK(flag == 0 && buflen == 77);

    /* Limits and errors. */
    char longkey[MPI_MAX_INFO_KEY + 2];
    memset(longkey, 'k', sizeof longkey);
    longkey[MPI_MAX_INFO_KEY] = 0;
    CHECK(MPI_Info_set(info, longkey, "v") == MPI_SUCCESS);
    longkey[MPI_MAX_INFO_KEY] = 'k';
    longkey[MPI_MAX_INFO_KEY + 1] = 0;
    CHECK(class_of(MPI_Info_set(info, longkey, "v")) == MPI_ERR_INFO_KEY);
    CHECK(class_of(MPI_Info_set(info, "", "v")) == MPI_ERR_INFO_KEY);
    char *longval = malloc(MPI_MAX_INFO_VAL + 2);
    memset(longval, 'v', MPI_MAX_INFO_VAL + 1);
    longval[MPI_MAX_INFO_VAL] = 0;
    CHECK(MPI_Info_set(info, "long", longval) == MPI_SUCCESS);
    longval[MPI_MAX_INFO_VAL] = 'v';
    longval[MPI_MAX_INFO_VAL + 1] = 0;
    CHECK(class_of(MPI_Info_set(info, "longer", longval)) == MPI_ERR_INFO_VALUE);
    free(longval);
    CHECK(nkeys(info) == 5);
    CHECK(class_of(MPI_Info_get_nthkey(info, 5, key)) == MPI_ERR_ARG);
    CHECK(class_of(MPI_Info_get_nthkey(info, -1, key)) == MPI_ERR_ARG);
    CHECK(class_of(MPI_Info_get(info, "alpha", -1, buf, &flag)) == MPI_ERR_ARG);
    CHECK(class_of(MPI_Info_delete(info, "missing")) == MPI_ERR_INFO_NOKEY);
    CHECK(MPI_Info_delete(info, "beta") == MPI_SUCCESS);
    CHECK(nkeys(info) == 4 && !has(info, "beta", "second value"));
    CHECK(MPI_Info_get_nthkey(info, 1, key) == MPI_SUCCESS && strcmp(key, " gamma ") == 0);

    /* A dup is its own object. */
    MPI_Info copy;
    CHECK(MPI_Info_dup(info, &copy) == MPI_SUCCESS && copy != info);
    CHECK(MPI_Info_set(copy, "alpha", "in the copy") == MPI_SUCCESS);
    CHECK(has(info, "alpha", "again") && has(copy, "alpha", "in the copy"));
    CHECK(nkeys(copy) == 4);
    CHECK(MPI_Info_free(&copy) == MPI_SUCCESS && copy == MPI_INFO_NULL);
    MPI_Info stale = info;
    CHECK(MPI_Info_free(&info) == MPI_SUCCESS && info == MPI_INFO_NULL);
    CHECK(class_of(MPI_Info_get_nkeys(stale, &len)) == MPI_ERR_INFO);
    CHECK(class_of(MPI_Info_set(stale, "a", "b")) == MPI_ERR_INFO);
    CHECK(class_of(MPI_Info_free(&stale)) == MPI_ERR_INFO);
    CHECK(class_of(MPI_Info_set(MPI_INFO_NULL, "a", "b")) == MPI_ERR_ARG);
    CHECK(class_of(MPI_Info_dup(MPI_INFO_NULL, &copy)) == MPI_ERR_ARG);
}

static void info_env(const char *argv0, MPI_Info before_init) {
    char v[MPI_MAX_INFO_VAL + 1], cwd[4096];
    CHECK(has(MPI_INFO_ENV, "command", argv0));
    CHECK(getcwd(cwd, sizeof cwd) != NULL && has(MPI_INFO_ENV, "wdir", cwd));
    snprintf(v, sizeof v, "%d", size);
    CHECK(has(MPI_INFO_ENV, "maxprocs", v));
    CHECK(has(MPI_INFO_ENV, "thread_level", "MPI_THREAD_FUNNELED"));
    int flag = 0, len = 0;
    CHECK(MPI_Info_get_valuelen(MPI_INFO_ENV, "arch", &len, &flag) == MPI_SUCCESS);
    CHECK(flag && len > 0);
    CHECK(MPI_Info_get_valuelen(MPI_INFO_ENV, "host", &len, &flag) == MPI_SUCCESS);
    CHECK(flag && len > 0);
    int n = nkeys(MPI_INFO_ENV);
    CHECK(n >= 6);
    for (int i = 0; i < n; i++) {
        char key[MPI_MAX_INFO_KEY + 1];
        CHECK(MPI_Info_get_nthkey(MPI_INFO_ENV, i, key) == MPI_SUCCESS);
        CHECK(MPI_Info_get_valuelen(MPI_INFO_ENV, key, &len, &flag) == MPI_SUCCESS && flag);
    }
    /* Read-only, and not freeable; a dup is an ordinary object. */
    CHECK(class_of(MPI_Info_set(MPI_INFO_ENV, "a", "b")) == MPI_ERR_INFO);
    CHECK(class_of(MPI_Info_delete(MPI_INFO_ENV, "command")) == MPI_ERR_INFO);
    MPI_Info env = MPI_INFO_ENV;
    CHECK(class_of(MPI_Info_free(&env)) == MPI_ERR_INFO && env == MPI_INFO_ENV);
    CHECK(MPI_Info_dup(MPI_INFO_ENV, &env) == MPI_SUCCESS && env != MPI_INFO_ENV);
    CHECK(nkeys(env) == n && MPI_Info_set(env, "a", "b") == MPI_SUCCESS);
    CHECK(MPI_Info_free(&env) == MPI_SUCCESS);
    /* Info_create_env after MPI_Init, and the one made before it (no
     * world to count then). */
    CHECK(MPI_Info_create_env(0, NULL, &env) == MPI_SUCCESS);
    CHECK(nkeys(env) == n && has(env, "command", argv0) && has(env, "maxprocs", v));
    CHECK(MPI_Info_free(&env) == MPI_SUCCESS);
    CHECK(has(before_init, "command", argv0) && has(before_init, "wdir", cwd));
    CHECK(MPI_Info_get_valuelen(before_init, "maxprocs", &len, &flag) == MPI_SUCCESS);
    CHECK(!flag);
    CHECK(MPI_Info_free(&before_init) == MPI_SUCCESS);
}

static void hints_and_names(void) {
    name_is(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    name_is(MPI_COMM_SELF, "MPI_COMM_SELF");
    MPI_Comm dup;
    CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup) == MPI_SUCCESS);
    name_is(dup, "");
    CHECK(MPI_Comm_set_name(dup, "my comm") == MPI_SUCCESS);
    name_is(dup, "my comm");
    name_is(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    char longname[300];
    memset(longname, 'n', sizeof longname);
    longname[sizeof longname - 1] = 0;
    CHECK(MPI_Comm_set_name(dup, longname) == MPI_SUCCESS);
    longname[MPI_MAX_OBJECT_NAME - 1] = 0;
    name_is(dup, longname);
    CHECK(MPI_Comm_set_name(MPI_COMM_WORLD, "the world") == MPI_SUCCESS);
    name_is(MPI_COMM_WORLD, "the world");
    CHECK(MPI_Comm_set_name(MPI_COMM_WORLD, "MPI_COMM_WORLD") == MPI_SUCCESS);
    /* MPI 4.1: a null handle's name is the handle's. */
    name_is(MPI_COMM_NULL, "MPI_COMM_NULL");
    CHECK(class_of(MPI_Comm_set_name(MPI_COMM_NULL, "x")) == MPI_ERR_COMM);

    /* Hints: what was set, merged over calls. */
    MPI_Info got, set;
    CHECK(MPI_Comm_get_info(dup, &got) == MPI_SUCCESS && nkeys(got) == 0);
    CHECK(MPI_Info_free(&got) == MPI_SUCCESS);
    CHECK(MPI_Info_create(&set) == MPI_SUCCESS);
    CHECK(MPI_Info_set(set, "mpi_assert_no_any_tag", "true") == MPI_SUCCESS);
    CHECK(MPI_Info_set(set, "h2", "v2") == MPI_SUCCESS);
    CHECK(MPI_Comm_set_info(dup, set) == MPI_SUCCESS);
    CHECK(MPI_Info_free(&set) == MPI_SUCCESS);
    CHECK(MPI_Info_create(&set) == MPI_SUCCESS);
    CHECK(MPI_Info_set(set, "h2", "changed") == MPI_SUCCESS);
    CHECK(MPI_Info_set(set, "h3", "v3") == MPI_SUCCESS);
    CHECK(MPI_Comm_set_info(dup, set) == MPI_SUCCESS);
    CHECK(MPI_Info_free(&set) == MPI_SUCCESS);
    CHECK(MPI_Comm_get_info(dup, &got) == MPI_SUCCESS);
    CHECK(nkeys(got) == 3 && has(got, "mpi_assert_no_any_tag", "true"));
    CHECK(has(got, "h2", "changed") && has(got, "h3", "v3"));
    /* A new object each time, the program's to change and free. */
    CHECK(MPI_Info_set(got, "h4", "v4") == MPI_SUCCESS);
    CHECK(MPI_Info_free(&got) == MPI_SUCCESS);
    CHECK(MPI_Comm_get_info(dup, &got) == MPI_SUCCESS && nkeys(got) == 3);
    CHECK(MPI_Info_free(&got) == MPI_SUCCESS);
    CHECK(MPI_Comm_get_info(MPI_COMM_WORLD, &got) == MPI_SUCCESS && nkeys(got) == 0);
    CHECK(MPI_Info_free(&got) == MPI_SUCCESS);
    CHECK(class_of(MPI_Comm_set_info(dup, MPI_INFO_NULL)) == MPI_ERR_ARG);
    CHECK(class_of(MPI_Comm_get_info(MPI_COMM_NULL, &got)) == MPI_ERR_COMM);
    CHECK(MPI_Comm_free(&dup) == MPI_SUCCESS);
}

static void dims(int nnodes, int ndims, const int *in, const int *want) {
    int d[8];
    memcpy(d, in, ndims * sizeof *d);
    CHECK(MPI_Dims_create(nnodes, ndims, d) == MPI_SUCCESS);
    for (int i = 0; i < ndims; i++) CHECK(d[i] == want[i]);
}

static void dims_create(void) {
    dims(12, 2, (int[]){0, 0}, (int[]){4, 3});
    dims(16, 3, (int[]){0, 0, 0}, (int[]){4, 2, 2});
    dims(24, 3, (int[]){0, 3, 0}, (int[]){4, 3, 2});
    dims(24, 3, (int[]){0, 0, 3}, (int[]){4, 2, 3});
    dims(7, 2, (int[]){0, 0}, (int[]){7, 1});
    dims(1, 3, (int[]){0, 0, 0}, (int[]){1, 1, 1});
    dims(360, 3, (int[]){0, 0, 0}, (int[]){10, 6, 6});
    dims(100, 5, (int[]){0, 0, 0, 0, 0}, (int[]){5, 5, 2, 2, 1});
    dims(24, 3, (int[]){2, 3, 4}, (int[]){2, 3, 4});
    int d[3] = {2, 0, 0};
    CHECK(class_of(MPI_Dims_create(7, 2, d)) == MPI_ERR_DIMS);
    d[0] = -1;
    CHECK(class_of(MPI_Dims_create(6, 2, d)) == MPI_ERR_DIMS);
    d[0] = 0;
    CHECK(class_of(MPI_Dims_create(6, -1, d)) == MPI_ERR_ARG);
    CHECK(class_of(MPI_Dims_create(-6, 2, d)) == MPI_ERR_ARG);
    d[0] = d[1] = 0;
    CHECK(MPI_Dims_create(size, 2, d) == MPI_SUCCESS);
    CHECK(d[0] * d[1] == size && d[0] >= d[1]);
}

/* A 2-D grid of the whole world, periodic in dimension 0. */
static void cart_2d(void) {
    int d[2] = {0, 0}, periods[2] = {1, 0};
    CHECK(MPI_Dims_create(size, 2, d) == MPI_SUCCESS);
    MPI_Comm cart;
    CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, d, periods, 1, &cart) == MPI_SUCCESS);
    CHECK(cart != MPI_COMM_NULL);
    int n = -1, r = -1;
    MPI_Comm_size(cart, &n);
    MPI_Comm_rank(cart, &r);
    CHECK(n == size && r == rank);
    CHECK(topo(cart) == MPI_CART);
    name_is(cart, "");
    CHECK(MPI_Cartdim_get(cart, &n) == MPI_SUCCESS && n == 2);
    int gd[2], gp[2], me[2];
    CHECK(MPI_Cart_get(cart, 2, gd, gp, me) == MPI_SUCCESS);
    CHECK(gd[0] == d[0] && gd[1] == d[1] && gp[0] == 1 && gp[1] == 0);
    CHECK(me[0] == rank / d[1] && me[1] == rank % d[1]); /* row-major */
    for (int q = 0; q < size; q++) {
        int c[2], back = -1;
        CHECK(MPI_Cart_coords(cart, q, 2, c) == MPI_SUCCESS);
        CHECK(MPI_Cart_rank(cart, c, &back) == MPI_SUCCESS && back == q);
    }
    /* Periodic dimension 0 wraps; dimension 1 does not. */
    int c[2] = {me[0] + d[0], me[1]}, back = -1;
    CHECK(MPI_Cart_rank(cart, c, &back) == MPI_SUCCESS && back == rank);
    c[0] = me[0] - 3 * d[0];
    CHECK(MPI_Cart_rank(cart, c, &back) == MPI_SUCCESS && back == rank);
    c[0] = me[0];
    c[1] = d[1];
    CHECK(class_of(MPI_Cart_rank(cart, c, &back)) == MPI_ERR_ARG);
    c[1] = -1;
    CHECK(class_of(MPI_Cart_rank(cart, c, &back)) == MPI_ERR_ARG);

    /* Shifts, and data moved along them. */
    int src = -5, dst = -5;
    CHECK(MPI_Cart_shift(cart, 0, 1, &src, &dst) == MPI_SUCCESS);
    int up = ((me[0] + d[0] - 1) % d[0]) * d[1] + me[1];
    int down = ((me[0] + 1) % d[0]) * d[1] + me[1];
    CHECK(src == up && dst == down);
    int got = -1;
    CHECK(MPI_Sendrecv(&rank, 1, MPI_INT, dst, 5, &got, 1, MPI_INT, src, 5, cart,
                       MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(got == src);
    CHECK(MPI_Cart_shift(cart, 0, 0, &src, &dst) == MPI_SUCCESS);
    CHECK(src == rank && dst == rank);
    CHECK(MPI_Cart_shift(cart, 0, -d[0] - 1, &src, &dst) == MPI_SUCCESS);
    CHECK(src == down && dst == up);
    CHECK(MPI_Cart_shift(cart, 1, 1, &src, &dst) == MPI_SUCCESS);
    CHECK(src == (me[1] == 0 ? MPI_PROC_NULL : rank - 1));
    CHECK(dst == (me[1] == d[1] - 1 ? MPI_PROC_NULL : rank + 1));
    got = -1;
    CHECK(MPI_Sendrecv(&rank, 1, MPI_INT, dst, 6, &got, 1, MPI_INT, src, 6, cart,
                       MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(got == (src == MPI_PROC_NULL ? -1 : src));
    CHECK(MPI_Cart_shift(cart, 1, d[1], &src, &dst) == MPI_SUCCESS);
    CHECK(src == MPI_PROC_NULL && dst == MPI_PROC_NULL);
    CHECK(class_of(MPI_Cart_shift(cart, 2, 1, &src, &dst)) == MPI_ERR_ARG);
    CHECK(class_of(MPI_Cart_shift(cart, -1, 1, &src, &dst)) == MPI_ERR_ARG);
    CHECK(class_of(MPI_Cart_coords(cart, size, 2, c)) == MPI_ERR_RANK);
    CHECK(class_of(MPI_Cart_coords(cart, 0, 1, c)) == MPI_ERR_ARG);

    /* Sub-grids: the columns of dimension 0 (rows keep dimension 1). */
    int keep[2] = {1, 0};
    MPI_Comm col;
    CHECK(MPI_Cart_sub(cart, keep, &col) == MPI_SUCCESS);
    MPI_Comm_size(col, &n);
    MPI_Comm_rank(col, &r);
    CHECK(n == d[0] && r == me[0]);
    CHECK(topo(col) == MPI_CART);
    CHECK(MPI_Cart_get(col, 1, gd, gp, c) == MPI_SUCCESS);
    CHECK(gd[0] == d[0] && gp[0] == 1 && c[0] == me[0]);
    int sum = 0;
    CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, col) == MPI_SUCCESS);
    CHECK(sum == d[0] * me[1] + d[1] * d[0] * (d[0] - 1) / 2);
    keep[0] = 0;
    keep[1] = 1;
    MPI_Comm row;
    CHECK(MPI_Cart_sub(cart, keep, &row) == MPI_SUCCESS);
    MPI_Comm_size(row, &n);
    MPI_Comm_rank(row, &r);
    CHECK(n == d[1] && r == me[1]);
    CHECK(MPI_Cart_get(row, 1, gd, gp, c) == MPI_SUCCESS && gd[0] == d[1] && gp[0] == 0);
    keep[1] = 0;
    MPI_Comm alone;
    CHECK(MPI_Cart_sub(cart, keep, &alone) == MPI_SUCCESS);
    MPI_Comm_size(alone, &n);
    CHECK(n == 1 && topo(alone) == MPI_CART);
    CHECK(MPI_Cartdim_get(alone, &n) == MPI_SUCCESS && n == 0);
    CHECK(class_of(MPI_Cart_shift(alone, 0, 1, &src, &dst)) == MPI_ERR_TOPOLOGY);
    CHECK(MPI_Comm_free(&alone) == MPI_SUCCESS);
    CHECK(MPI_Comm_free(&row) == MPI_SUCCESS);
    CHECK(MPI_Comm_free(&col) == MPI_SUCCESS);

    /* A freed grid's handle, given again, has no grid, name or hints. */
    MPI_Info set;
    CHECK(MPI_Info_create(&set) == MPI_SUCCESS);
    CHECK(MPI_Info_set(set, "hint", "on the grid") == MPI_SUCCESS);
    CHECK(MPI_Comm_set_info(cart, set) == MPI_SUCCESS);
    CHECK(MPI_Info_free(&set) == MPI_SUCCESS);
    CHECK(MPI_Comm_set_name(cart, "grid") == MPI_SUCCESS);
    MPI_Comm old = cart;
    CHECK(MPI_Comm_free(&cart) == MPI_SUCCESS && cart == MPI_COMM_NULL);
    CHECK(class_of(MPI_Topo_test(old, &n)) == MPI_ERR_COMM);
    MPI_Comm again;
    CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &again) == MPI_SUCCESS);
    CHECK(again == old); /* the first free slot */
    CHECK(topo(again) == MPI_UNDEFINED);
    CHECK(class_of(MPI_Cartdim_get(again, &n)) == MPI_ERR_TOPOLOGY);
    name_is(again, "");
    MPI_Info got_info;
    CHECK(MPI_Comm_get_info(again, &got_info) == MPI_SUCCESS && nkeys(got_info) == 0);
    CHECK(MPI_Info_free(&got_info) == MPI_SUCCESS);
    CHECK(MPI_Comm_free(&again) == MPI_SUCCESS);
}

/* Grids smaller than the world, zero dimensions, Cart_map, errors. */
static void cart_edges(void) {
    CHECK(topo(MPI_COMM_WORLD) == MPI_UNDEFINED);
    int n;
    CHECK(class_of(MPI_Cartdim_get(MPI_COMM_WORLD, &n)) == MPI_ERR_TOPOLOGY);
    int ring = size - 1, periodic = 1;
    MPI_Comm c;
    CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, &ring, &periodic, 0, &c) == MPI_SUCCESS);
    CHECK((rank == size - 1) == (c == MPI_COMM_NULL));
    if (c != MPI_COMM_NULL) {
        int r, src, dst;
        MPI_Comm_size(c, &n);
        MPI_Comm_rank(c, &r);
        CHECK(n == size - 1 && r == rank);
        CHECK(MPI_Cart_shift(c, 0, 1, &src, &dst) == MPI_SUCCESS);
        CHECK(src == (rank + ring - 1) % ring && dst == (rank + 1) % ring);
        CHECK(MPI_Barrier(c) == MPI_SUCCESS);
        CHECK(MPI_Comm_free(&c) == MPI_SUCCESS);
    }
    int newrank = -5;
    CHECK(MPI_Cart_map(MPI_COMM_WORLD, 1, &ring, &periodic, &newrank) == MPI_SUCCESS);
    CHECK(newrank == (rank < ring ? rank : MPI_UNDEFINED));
    CHECK(MPI_Cart_map(MPI_COMM_WORLD, 1, &size, &periodic, &newrank) == MPI_SUCCESS);
    CHECK(newrank == rank);
    int big = size + 1, zero = 0;
    CHECK(class_of(MPI_Cart_map(MPI_COMM_WORLD, 1, &big, &periodic, &newrank)) ==
          MPI_ERR_DIMS);
    CHECK(class_of(MPI_Cart_create(MPI_COMM_WORLD, 1, &big, &periodic, 0, &c)) ==
          MPI_ERR_ARG);
    CHECK(class_of(MPI_Cart_create(MPI_COMM_WORLD, 1, &zero, &periodic, 0, &c)) ==
          MPI_ERR_DIMS);
    CHECK(class_of(MPI_Cart_create(MPI_COMM_WORLD, -1, &ring, &periodic, 0, &c)) ==
          MPI_ERR_ARG);
    CHECK(class_of(MPI_Cart_create(MPI_COMM_NULL, 1, &ring, &periodic, 0, &c)) ==
          MPI_ERR_COMM);
    /* Zero dimensions: one process. */
    CHECK(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &c) == MPI_SUCCESS);
    CHECK((rank == 0) == (c != MPI_COMM_NULL));
    if (c != MPI_COMM_NULL) {
        int r = -1;
        MPI_Comm_size(c, &n);
        CHECK(n == 1 && topo(c) == MPI_CART);
        CHECK(MPI_Cartdim_get(c, &n) == MPI_SUCCESS && n == 0);
        CHECK(MPI_Cart_rank(c, NULL, &r) == MPI_SUCCESS && r == 0);
        CHECK(MPI_Comm_free(&c) == MPI_SUCCESS);
    }
    /* A grid of a grid's sub-communicator... of a dup of the world. */
    MPI_Comm dup, cart3;
    CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup) == MPI_SUCCESS);
    int d3[3] = {0, 0, 0}, p3[3] = {0, 1, 0};
    CHECK(MPI_Dims_create(size, 3, d3) == MPI_SUCCESS);
    CHECK(MPI_Cart_create(dup, 3, d3, p3, 0, &cart3) == MPI_SUCCESS);
    int coords[3], back = -1;
    CHECK(MPI_Cart_coords(cart3, rank, 3, coords) == MPI_SUCCESS);
    CHECK(coords[2] == rank % d3[2] && coords[0] == rank / (d3[1] * d3[2]));
    CHECK(MPI_Cart_rank(cart3, coords, &back) == MPI_SUCCESS && back == rank);
    CHECK(MPI_Comm_free(&cart3) == MPI_SUCCESS);
    CHECK(MPI_Comm_free(&dup) == MPI_SUCCESS);
}

int main(int argc, char **argv) {
    /* MPI-4: Info_create_env may come before MPI_Init. */
    MPI_Info before_init = MPI_INFO_NULL;
    CHECK(MPI_Info_create_env(argc, argv, &before_init) == MPI_SUCCESS);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    info_objects();
    info_env(argv[0], before_init);
    hints_and_names();
    dims_create();
    cart_2d();
    cart_edges();

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    printf("OK topo_info rank=%d\n", rank);
    return 0;
}
