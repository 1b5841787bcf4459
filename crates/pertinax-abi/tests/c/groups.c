/* pertinax-abi: an unchanged C MPI program (built with MPICH's mpicc)
 * checking groups (incl, excl, ranges, set operations, compare,
 * MPI_GROUP_EMPTY, errors) and the communicators made from them
 * (Comm_create, Comm_create_group, Comm_split_type, Comm_idup), at any
 * size from 2. Prints "OK groups rank=R" when every check held. */
#include "check.h"

/* The error class of `rc`. */
static int class_of(int rc) {
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

static int gsize(MPI_Group g) {
    int n = -1;
    CHECK(MPI_Group_size(g, &n) == MPI_SUCCESS);
    return n;
}

static int grank(MPI_Group g) {
    int r = -2;
    CHECK(MPI_Group_rank(g, &r) == MPI_SUCCESS);
    return r;
}

static int gcompare(MPI_Group a, MPI_Group b) {
    int r = -1;
    CHECK(MPI_Group_compare(a, b, &r) == MPI_SUCCESS);
    return r;
}

/* `comm`'s size and rank are `n` and `r`, its group is `g` (IDENT), and an
 * allreduce over it sums the world ranks of `g`'s members. */
static void check_comm(MPI_Comm comm, int n, int r, MPI_Group g) {
    int cs = -1, cr = -1;
    MPI_Comm_size(comm, &cs);
    MPI_Comm_rank(comm, &cr);
    CHECK(cs == n && cr == r);
    MPI_Group cg;
    MPI_Comm_group(comm, &cg);
    CHECK(gcompare(cg, g) == MPI_IDENT);
    MPI_Group_free(&cg);
    int sum = -1, want = 0;
    MPI_Group wg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int i = 0; i < n; i++) {
        int w = -1;
        MPI_Group_translate_ranks(g, 1, &i, wg, &w);
        want += w;
    }
    MPI_Group_free(&wg);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm);
    CHECK(sum == want);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int nevens = (size + 1) / 2, nodds = size / 2;
    int mine = rank % 2; /* 0: even, 1: odd */

    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    CHECK(gsize(world) == size && grank(world) == rank);
    CHECK(gcompare(world, world) == MPI_IDENT);

    /* incl: the world reversed. */
    int *rev = malloc(size * sizeof(int));
    for (int i = 0; i < size; i++) rev[i] = size - 1 - i;
    MPI_Group reversed;
    CHECK(MPI_Group_incl(world, size, rev, &reversed) == MPI_SUCCESS);
    CHECK(gsize(reversed) == size && grank(reversed) == size - 1 - rank);
    CHECK(gcompare(world, reversed) == MPI_SIMILAR);
    int zero = 0, t = -1;
    MPI_Group_translate_ranks(reversed, 1, &zero, world, &t);
    CHECK(t == size - 1);

    /* incl of nothing, and MPI_GROUP_EMPTY. */
    MPI_Group none;
    CHECK(MPI_Group_incl(world, 0, NULL, &none) == MPI_SUCCESS);
    CHECK(none == MPI_GROUP_EMPTY);
    CHECK(gsize(MPI_GROUP_EMPTY) == 0 && grank(MPI_GROUP_EMPTY) == MPI_UNDEFINED);
    CHECK(gcompare(none, MPI_GROUP_EMPTY) == MPI_IDENT);
    CHECK(gcompare(world, MPI_GROUP_EMPTY) == MPI_UNEQUAL);

    /* excl: all but rank 0. */
    MPI_Group but0;
    CHECK(MPI_Group_excl(world, 1, &zero, &but0) == MPI_SUCCESS);
    CHECK(gsize(but0) == size - 1);
    CHECK(grank(but0) == (rank == 0 ? MPI_UNDEFINED : rank - 1));
    MPI_Group all;
    CHECK(MPI_Group_excl(world, 0, NULL, &all) == MPI_SUCCESS);
    CHECK(all != world && gcompare(all, world) == MPI_IDENT);

    /* Ranges: the evens, the odds, the world backwards. */
    int r_evens[1][3] = {{0, size - 1, 2}};
    int r_odds[1][3] = {{1, size - 1, 2}};
    int r_back[1][3] = {{size - 1, 0, -1}};
    MPI_Group evens, odds, evens2, back;
    CHECK(MPI_Group_range_incl(world, 1, r_evens, &evens) == MPI_SUCCESS);
    CHECK(gsize(evens) == nevens);
    CHECK(grank(evens) == (mine == 0 ? rank / 2 : MPI_UNDEFINED));
    CHECK(MPI_Group_range_incl(world, 1, r_odds, &odds) == MPI_SUCCESS);
    CHECK(gsize(odds) == nodds);
    CHECK(grank(odds) == (mine == 1 ? rank / 2 : MPI_UNDEFINED));
    CHECK(MPI_Group_range_excl(world, 1, r_odds, &evens2) == MPI_SUCCESS);
    CHECK(gcompare(evens, evens2) == MPI_IDENT);
    CHECK(MPI_Group_range_incl(world, 1, r_back, &back) == MPI_SUCCESS);
    CHECK(gcompare(back, reversed) == MPI_IDENT);
    /* Two triples: rank 0, then the last one down to 1. */
    int r_two[2][3] = {{0, 0, 1}, {size - 1, 1, -1}};
    MPI_Group two;
    CHECK(MPI_Group_range_incl(world, 2, r_two, &two) == MPI_SUCCESS);
    CHECK(gsize(two) == size);
    CHECK(grank(two) == (rank == 0 ? 0 : size - rank));
    MPI_Group rest;
    CHECK(MPI_Group_range_excl(world, 2, r_two, &rest) == MPI_SUCCESS);
    CHECK(rest == MPI_GROUP_EMPTY);

    /* Set operations. */
    MPI_Group u, in, d, u0;
    CHECK(MPI_Group_union(evens, odds, &u) == MPI_SUCCESS);
    CHECK(gsize(u) == size);
    CHECK(gcompare(u, world) == (size <= 2 ? MPI_IDENT : MPI_SIMILAR));
    CHECK(grank(u) == (mine == 0 ? rank / 2 : nevens + rank / 2));
    CHECK(MPI_Group_intersection(evens, odds, &in) == MPI_SUCCESS);
    CHECK(in == MPI_GROUP_EMPTY);
    CHECK(MPI_Group_difference(world, odds, &d) == MPI_SUCCESS);
    CHECK(gcompare(d, evens) == MPI_IDENT);
    CHECK(MPI_Group_union(MPI_GROUP_EMPTY, reversed, &u0) == MPI_SUCCESS);
    CHECK(gcompare(u0, reversed) == MPI_IDENT);
    MPI_Group i2;
    CHECK(MPI_Group_intersection(reversed, evens, &i2) == MPI_SUCCESS);
    CHECK(gsize(i2) == nevens && gcompare(i2, evens) == (nevens <= 1 ? MPI_IDENT : MPI_SIMILAR));
    MPI_Group_free(&i2);

    /* Errors (MPI_ERRORS_RETURN on the world). */
    MPI_Group bad = MPI_GROUP_NULL;
    int out_of_range = size, twice[2] = {0, 0}, n = -1;
    CHECK(class_of(MPI_Group_incl(world, 1, &out_of_range, &bad)) == MPI_ERR_RANK);
    CHECK(class_of(MPI_Group_incl(world, 2, twice, &bad)) == MPI_ERR_RANK);
    CHECK(class_of(MPI_Group_excl(world, 1, &out_of_range, &bad)) == MPI_ERR_RANK);
    int r_bad[1][3] = {{0, size, 1}}, r_zero[1][3] = {{0, 0, 0}};
    int r_dup[2][3] = {{0, 0, 1}, {0, 0, 1}};
    CHECK(class_of(MPI_Group_range_incl(world, 1, r_bad, &bad)) == MPI_ERR_RANK);
    CHECK(class_of(MPI_Group_range_incl(world, 1, r_zero, &bad)) == MPI_ERR_ARG);
    CHECK(class_of(MPI_Group_range_excl(world, 2, r_dup, &bad)) == MPI_ERR_RANK);
    CHECK(bad == MPI_GROUP_NULL);
    CHECK(class_of(MPI_Group_size(MPI_GROUP_NULL, &n)) == MPI_ERR_GROUP);
    CHECK(class_of(MPI_Group_union(MPI_GROUP_NULL, world, &bad)) == MPI_ERR_GROUP);
    CHECK(class_of(MPI_Group_compare(world, MPI_GROUP_NULL, &n)) == MPI_ERR_GROUP);
    CHECK(class_of(MPI_Group_incl(MPI_GROUP_NULL, 0, NULL, &bad)) == MPI_ERR_GROUP);
    MPI_Group gone = all;
    MPI_Group_free(&all);
    CHECK(all == MPI_GROUP_NULL);
    CHECK(class_of(MPI_Group_size(gone, &n)) == MPI_ERR_GROUP);

    /* Comm_create: one group, disjoint groups, no group, reordered. */
    MPI_Comm c;
    CHECK(MPI_Comm_create(MPI_COMM_WORLD, evens, &c) == MPI_SUCCESS);
    CHECK((c == MPI_COMM_NULL) == (mine == 1));
    if (c != MPI_COMM_NULL) {
        check_comm(c, nevens, rank / 2, evens);
        MPI_Comm_free(&c);
    }
    CHECK(MPI_Comm_create(MPI_COMM_WORLD, mine ? odds : evens, &c) == MPI_SUCCESS);
    CHECK(c != MPI_COMM_NULL);
    check_comm(c, mine ? nodds : nevens, rank / 2, mine ? odds : evens);
    MPI_Comm_free(&c);
    CHECK(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c) == MPI_SUCCESS);
    CHECK(c == MPI_COMM_NULL);
    CHECK(MPI_Comm_create(MPI_COMM_WORLD, reversed, &c) == MPI_SUCCESS);
    check_comm(c, size, size - 1 - rank, reversed);
    MPI_Comm_free(&c);

    /* Comm_create_group: only the group's members call it. */
    CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, mine ? odds : evens, 5 + mine, &c) ==
          MPI_SUCCESS);
    check_comm(c, mine ? nodds : nevens, rank / 2, mine ? odds : evens);
    MPI_Comm_free(&c);
    if (rank != 0) {
        CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, but0, 9, &c) == MPI_SUCCESS);
        check_comm(c, size - 1, rank - 1, but0);
        MPI_Comm_free(&c);
    } else {
        /* A caller outside the group gets MPI_COMM_NULL at once. */
        CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, but0, 9, &c) == MPI_SUCCESS);
        CHECK(c == MPI_COMM_NULL);
    }
    CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, reversed, 0, &c) == MPI_SUCCESS);
    check_comm(c, size, size - 1 - rank, reversed);
    /* Over a communicator made so, with the groups of its ranks. */
    MPI_Group cg, firsthalf;
    MPI_Comm_group(c, &cg);
    int r_half[1][3] = {{0, (size - 1) / 2, 1}};
    MPI_Group_range_incl(cg, 1, r_half, &firsthalf);
    int crank = size - 1 - rank, nhalf = (size - 1) / 2 + 1;
    if (crank < nhalf) {
        MPI_Comm h;
        CHECK(MPI_Comm_create_group(c, firsthalf, 3, &h) == MPI_SUCCESS);
        check_comm(h, nhalf, crank, firsthalf);
        MPI_Comm_free(&h);
    }
    MPI_Group_free(&firsthalf);
    MPI_Group_free(&cg);
    MPI_Comm_free(&c);
    CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, 1, &c) == MPI_SUCCESS);
    CHECK(c == MPI_COMM_NULL);
    CHECK(class_of(MPI_Comm_create_group(MPI_COMM_WORLD, world, -1, &c)) == MPI_ERR_TAG);
    CHECK(class_of(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_NULL, 1, &c)) ==
          MPI_ERR_GROUP);

    /* Comm_split_type. */
    CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -rank, MPI_INFO_NULL,
                              &c) == MPI_SUCCESS);
    check_comm(c, size, size - 1 - rank, reversed);
    MPI_Comm_free(&c);
    CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED,
                              0, MPI_INFO_NULL, &c) == MPI_SUCCESS);
    CHECK((c == MPI_COMM_NULL) == (rank == 0));
    if (c != MPI_COMM_NULL) {
        check_comm(c, size - 1, rank - 1, but0);
        MPI_Comm_free(&c);
    }
    CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &c) ==
          MPI_SUCCESS);
    CHECK(c == MPI_COMM_NULL);
    CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL,
                              &c) == MPI_SUCCESS);
    CHECK(c == MPI_COMM_NULL);
    CHECK(class_of(MPI_Comm_split_type(MPI_COMM_WORLD, 77, 0, MPI_INFO_NULL, &c)) ==
          MPI_ERR_ARG);

    /* Comm_idup: complete on return. */
    MPI_Request req = MPI_REQUEST_NULL;
    CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &c, &req) == MPI_SUCCESS);
    CHECK(req != MPI_REQUEST_NULL);
    int flag = 0;
    MPI_Status st;
    CHECK(MPI_Test(&req, &flag, &st) == MPI_SUCCESS);
    CHECK(flag && req == MPI_REQUEST_NULL);
    int cmp = -1;
    MPI_Comm_compare(c, MPI_COMM_WORLD, &cmp);
    CHECK(cmp == MPI_CONGRUENT);
    check_comm(c, size, rank, world);
    MPI_Comm d2;
    CHECK(MPI_Comm_idup(c, &d2, &req) == MPI_SUCCESS);
    CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS && req == MPI_REQUEST_NULL);
    check_comm(d2, size, rank, world);
    MPI_Comm_free(&d2);
    MPI_Comm_free(&c);

    MPI_Group *gs[] = {&reversed, &none, &but0, &evens, &odds, &evens2, &back, &two,
                       &rest, &u, &in, &d, &u0, &world};
    for (size_t i = 0; i < sizeof gs / sizeof gs[0]; i++) {
        CHECK(MPI_Group_free(gs[i]) == MPI_SUCCESS && *gs[i] == MPI_GROUP_NULL);
    }
    free(rev);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    printf("OK groups rank=%d\n", rank);
    return 0;
}
