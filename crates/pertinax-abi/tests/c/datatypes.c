/* pertinax-abi: derived datatypes. Every constructor with its size and
 * bounds computed by hand, envelopes and contents, names, Pack/Unpack
 * (and external32), sends and receives of vector, indexed, struct and
 * subarray types (blocking and not, derived to contiguous and back,
 * short messages with Get_count/Get_elements, probes and matched
 * receives), collectives with derived types on both sides, reductions on
 * derived types and MINLOC/MAXLOC on every pair type, and the error
 * classes of uncommitted and freed types. Prints "OK datatypes rank=R". */
#include "check.h"
#include <stddef.h>
#include <string.h>

static void extent_is(MPI_Datatype t, int size_, MPI_Aint lb, MPI_Aint ext, MPI_Aint tlb,
                      MPI_Aint text, int line) {
    int s = -1;
    MPI_Aint l = -99, e = -99, tl = -99, te = -99;
    MPI_Type_size(t, &s);
    MPI_Type_get_extent(t, &l, &e);
    MPI_Type_get_true_extent(t, &tl, &te);
    if (s != size_ || l != lb || e != ext || tl != tlb || te != text) {
        fprintf(stderr, "line %d: size %d lb %ld extent %ld true %ld %ld\n", line, s, (long)l,
                (long)e, (long)tl, (long)te);
    }
    CHECK(s == size_ && l == lb && e == ext && tl == tlb && te == text);
}
#define EXTENT(t, s, lb, e, tlb, te) extent_is(t, s, lb, e, tlb, te, __LINE__)

static int class_of(int rc) {
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

struct fi { float v; int i; };
struct di { double v; int i; };
struct li { long v; int i; };
struct si { short v; int i; };
struct ii { int v; int i; };
struct rec { double d; int i; char c; };

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    /* ---- constructors, sizes and bounds ---- */
    MPI_Datatype contig3, vec, hvec, idx, hidx, iblk, hblk, st, st2, res, sub, subf, dup;
    MPI_Type_contiguous(3, MPI_INT, &contig3);
    EXTENT(contig3, 12, 0, 12, 0, 12);
    MPI_Type_vector(3, 2, 4, MPI_INT, &vec);
    EXTENT(vec, 24, 0, 40, 0, 40);
    MPI_Type_create_hvector(2, 1, 16, MPI_DOUBLE, &hvec);
    EXTENT(hvec, 16, 0, 24, 0, 24);
    int bl[2] = {2, 1}, dp[2] = {1, 5};
    MPI_Type_indexed(2, bl, dp, MPI_INT, &idx);
    EXTENT(idx, 12, 4, 20, 4, 20);
    int hbl[2] = {1, 2};
    MPI_Aint hdp[2] = {0, 12};
    MPI_Type_create_hindexed(2, hbl, hdp, MPI_INT, &hidx);
    EXTENT(hidx, 12, 0, 20, 0, 20);
    int bd[3] = {0, 2, 4};
    MPI_Type_create_indexed_block(3, 1, bd, MPI_INT, &iblk);
    EXTENT(iblk, 12, 0, 20, 0, 20);
    MPI_Aint hbd[2] = {0, 16};
    MPI_Type_create_hindexed_block(2, 2, hbd, MPI_INT, &hblk);
    EXTENT(hblk, 16, 0, 24, 0, 24);
    {
        int b[3] = {1, 1, 1};
        MPI_Aint d[3] = {offsetof(struct rec, d), offsetof(struct rec, i), offsetof(struct rec, c)};
        MPI_Datatype t[3] = {MPI_DOUBLE, MPI_INT, MPI_CHAR};
        MPI_Type_create_struct(3, b, d, t, &st);
        EXTENT(st, 13, 0, (MPI_Aint)sizeof(struct rec), 0, 13);
        MPI_Aint d2[2] = {0, 8};
        MPI_Datatype t2[2] = {MPI_CHAR, MPI_DOUBLE};
        MPI_Type_create_struct(2, b, d2, t2, &st2);
        EXTENT(st2, 9, 0, 16, 0, 16);
    }
    MPI_Type_create_resized(MPI_INT, -4, 12, &res);
    EXTENT(res, 4, -4, 12, 0, 4);
    {
        int sz[2] = {4, 5}, ss[2] = {2, 3}, s0[2] = {1, 1};
        MPI_Type_create_subarray(2, sz, ss, s0, MPI_ORDER_C, MPI_INT, &sub);
        EXTENT(sub, 24, 0, 80, 24, 32);
        MPI_Type_create_subarray(2, sz, ss, s0, MPI_ORDER_FORTRAN, MPI_INT, &subf);
        EXTENT(subf, 24, 0, 80, 20, 40);
    }
    EXTENT(MPI_DOUBLE_INT, 12, 0, 16, 0, 12);
    EXTENT(MPI_SHORT_INT, 6, 0, 8, 0, 8);
    EXTENT(MPI_FLOAT_INT, 8, 0, 8, 0, 8);
    EXTENT(MPI_LONG_INT, 12, 0, 16, 0, 12);
    EXTENT(MPI_2INT, 8, 0, 8, 0, 8);
    EXTENT(MPI_LONG_DOUBLE_INT, 20, 0, 32, 0, 20);
    MPI_Type_dup(vec, &dup);
    EXTENT(dup, 24, 0, 40, 0, 40);
    {
        MPI_Count s = 0, lb = -1, e = -1;
        MPI_Type_size_x(vec, &s);
        MPI_Type_get_extent_x(vec, &lb, &e);
        CHECK(s == 24 && lb == 0 && e == 40);
        MPI_Aint x = 0;
        MPI_Type_extent(res, &x);
        CHECK(x == 12);
        MPI_Type_lb(res, &x);
        CHECK(x == -4);
        MPI_Type_ub(res, &x);
        CHECK(x == 8);
    }

    /* envelopes and contents */
    {
        int ni, na, nd, comb;
        MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb);
        CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0);
        MPI_Type_get_envelope(vec, &ni, &na, &nd, &comb);
        CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nd == 1);
        int ints[8];
        MPI_Aint addrs[8];
        MPI_Datatype types[8];
        MPI_Type_get_contents(vec, 8, 8, 8, ints, addrs, types);
        CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 4 && types[0] == MPI_INT);
        MPI_Type_get_envelope(st, &ni, &na, &nd, &comb);
        CHECK(comb == MPI_COMBINER_STRUCT && ni == 4 && na == 3 && nd == 3);
        MPI_Type_get_contents(st, 8, 8, 8, ints, addrs, types);
        CHECK(ints[0] == 3 && addrs[1] == offsetof(struct rec, i) && types[2] == MPI_CHAR);
        MPI_Type_get_envelope(dup, &ni, &na, &nd, &comb);
        CHECK(comb == MPI_COMBINER_DUP && nd == 1);
        MPI_Type_get_envelope(sub, &ni, &na, &nd, &comb);
        CHECK(comb == MPI_COMBINER_SUBARRAY && ni == 8 && nd == 1);
        MPI_Type_get_envelope(res, &ni, &na, &nd, &comb);
        CHECK(comb == MPI_COMBINER_RESIZED && na == 2);
        /* a derived type among the contents comes back as a new handle */
        MPI_Datatype vv, got;
        MPI_Type_vector(2, 1, 2, contig3, &vv);
        MPI_Type_get_contents(vv, 8, 8, 8, ints, addrs, &got);
        int s = 0;
        MPI_Type_size(got, &s);
        CHECK(s == 12 && got != contig3);
        MPI_Type_free(&got);
        MPI_Type_free(&vv);
    }
    /* names, match_size */
    {
        char name[MPI_MAX_OBJECT_NAME];
        int len = -1;
        MPI_Type_get_name(MPI_INT, name, &len);
        CHECK(strcmp(name, "MPI_INT") == 0 && len == 7);
        MPI_Type_get_name(vec, name, &len);
        CHECK(len == 0 && name[0] == 0);
        MPI_Type_set_name(vec, "column");
        MPI_Type_get_name(vec, name, &len);
        CHECK(strcmp(name, "column") == 0 && len == 6);
        MPI_Datatype m;
        int s = 0;
        MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m);
        MPI_Type_size(m, &s);
        CHECK(s == 8);
        MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &m);
        MPI_Type_size(m, &s);
        CHECK(s == 4);
    }
    MPI_Datatype all[] = {contig3, vec, hvec, idx, hidx, iblk, hblk, st, st2, res, sub, subf, dup};
    for (int i = 0; i < (int)(sizeof all / sizeof all[0]); i++) MPI_Type_commit(&all[i]);

    /* ---- Pack / Unpack ---- */
    {
        int a[12];
        for (int i = 0; i < 12; i++) a[i] = i;
        double x = 2.5;
        char buf[256];
        int pos = 0, ps = 0;
        MPI_Pack_size(1, vec, MPI_COMM_WORLD, &ps);
        CHECK(ps == 24);
        MPI_Pack(a, 1, vec, buf, sizeof buf, &pos, MPI_COMM_WORLD);
        CHECK(pos == 24);
        MPI_Pack(&x, 1, MPI_DOUBLE, buf, sizeof buf, &pos, MPI_COMM_WORLD);
        CHECK(pos == 32);
        int b[6];
        double y = 0;
        pos = 0;
        MPI_Unpack(buf, 32, &pos, b, 6, MPI_INT, MPI_COMM_WORLD);
        MPI_Unpack(buf, 32, &pos, &y, 1, MPI_DOUBLE, MPI_COMM_WORLD);
        CHECK(pos == 32 && y == 2.5);
        int want[6] = {0, 1, 4, 5, 8, 9};
        for (int i = 0; i < 6; i++) CHECK(b[i] == want[i]);
        /* and back into the vector's places */
        int c[12];
        for (int i = 0; i < 12; i++) c[i] = -1;
        pos = 0;
        MPI_Unpack(buf, 32, &pos, c, 1, vec, MPI_COMM_WORLD);
        for (int i = 0; i < 10; i++) CHECK(c[i] == ((i % 4) < 2 ? i : -1));
        /* external32 is big-endian */
        int v = 0x01020304;
        MPI_Aint ep = 0, es = 0;
        unsigned char e[8];
        MPI_Pack_external_size("external32", 1, MPI_INT, &es);
        CHECK(es == 4);
        MPI_Pack_external("external32", &v, 1, MPI_INT, e, 8, &ep);
        CHECK(ep == 4 && e[0] == 1 && e[1] == 2 && e[2] == 3 && e[3] == 4);
        int w = 0;
        ep = 0;
        MPI_Unpack_external("external32", e, 4, &ep, &w, 1, MPI_INT);
        CHECK(w == v);
    }

    /* ---- point-to-point with derived types ---- */
    int m[4][4], col[4];
    MPI_Datatype column;
    MPI_Type_vector(4, 1, 4, MPI_INT, &column);
    MPI_Type_commit(&column);
    {
        /* a column out, four contiguous ints in */
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) m[i][j] = 100 * rank + 10 * i + j;
        MPI_Request r;
        MPI_Isend(&m[0][1], 1, column, next, 1, MPI_COMM_WORLD, &r);
        MPI_Recv(col, 4, MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        for (int i = 0; i < 4; i++) CHECK(col[i] == 100 * prev + 10 * i + 1);
        /* four contiguous ints out, into a column (non-blocking receive) */
        int out[4] = {rank, rank + 1, rank + 2, rank + 3};
        int in[4][4];
        memset(in, 0xff, sizeof in);
        MPI_Request rr[2];
        MPI_Irecv(&in[0][2], 1, column, prev, 2, MPI_COMM_WORLD, &rr[0]);
        MPI_Isend(out, 4, MPI_INT, next, 2, MPI_COMM_WORLD, &rr[1]);
        MPI_Waitall(2, rr, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) CHECK(in[i][j] == (j == 2 ? prev + i : -1));
        /* the same with Test polling */
        memset(in, 0xff, sizeof in);
        MPI_Irecv(&in[0][3], 1, column, prev, 3, MPI_COMM_WORLD, &rr[0]);
        MPI_Isend(out, 4, MPI_INT, next, 3, MPI_COMM_WORLD, &rr[1]);
        int flag = 0;
        while (!flag) MPI_Test(&rr[0], &flag, MPI_STATUS_IGNORE);
        MPI_Wait(&rr[1], MPI_STATUS_IGNORE);
        for (int i = 0; i < 4; i++) CHECK(in[i][3] == prev + i && in[i][0] == -1);
        /* a freed send of a packed column still goes out */
        MPI_Isend(&m[0][3], 1, column, next, 14, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
        CHECK(r == MPI_REQUEST_NULL);
        MPI_Recv(col, 4, MPI_INT, prev, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 4; i++) CHECK(col[i] == 100 * prev + 10 * i + 3);
    }
    {
        /* indexed both ways, through Sendrecv */
        int a[8], b[8];
        for (int i = 0; i < 8; i++) {
            a[i] = 10 * rank + i;
            b[i] = -1;
        }
        MPI_Sendrecv(a, 1, idx, next, 4, b, 1, idx, prev, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 8; i++) CHECK(b[i] == ((i == 1 || i == 2 || i == 5) ? 10 * prev + i : -1));
    }
    {
        /* an array of structs */
        struct rec a[3], b[3];
        memset(b, 0, sizeof b);
        for (int i = 0; i < 3; i++) {
            a[i].d = rank + 0.5 * i;
            a[i].i = rank * 10 + i;
            a[i].c = (char)('a' + i);
        }
        MPI_Sendrecv(a, 3, st, next, 5, b, 3, st, prev, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 3; i++)
            CHECK(b[i].d == prev + 0.5 * i && b[i].i == prev * 10 + i && b[i].c == 'a' + i);
    }
    {
        /* a subarray out, contiguous in, and back */
        int g[4][5], h[6], k[4][5];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 5; j++) {
                g[i][j] = 1000 * rank + 10 * i + j;
                k[i][j] = -1;
            }
        MPI_Sendrecv(g, 1, sub, next, 6, h, 6, MPI_INT, prev, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int w[6] = {11, 12, 13, 21, 22, 23};
        for (int i = 0; i < 6; i++) CHECK(h[i] == 1000 * prev + w[i]);
        MPI_Sendrecv(h, 6, MPI_INT, next, 7, k, 1, sub, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int pp = (prev + size - 1) % size;
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 5; j++) {
                int in = i >= 1 && i <= 2 && j >= 1 && j <= 3;
                CHECK(k[i][j] == (in ? 1000 * pp + 10 * i + j : -1));
            }
    }
    {
        /* a short message: 5 ints into 2 of contiguous(3) */
        int a[5] = {1, 2, 3, 4, 5}, b[6] = {-1, -1, -1, -1, -1, -1};
        MPI_Status s;
        MPI_Request r;
        MPI_Isend(a, 5, MPI_INT, next, 8, MPI_COMM_WORLD, &r);
        MPI_Recv(b, 2, contig3, prev, 8, MPI_COMM_WORLD, &s);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        int n = 0;
        MPI_Get_count(&s, contig3, &n);
        CHECK(n == MPI_UNDEFINED);
        MPI_Get_elements(&s, contig3, &n);
        CHECK(n == 5);
        MPI_Count nx = 0;
        MPI_Get_elements_x(&s, contig3, &nx);
        CHECK(nx == 5);
        MPI_Get_count(&s, MPI_INT, &n);
        CHECK(n == 5);
        for (int i = 0; i < 6; i++) CHECK(b[i] == (i < 5 ? i + 1 : -1));
        /* into a vector: only what arrived is written */
        int c[12];
        for (int i = 0; i < 12; i++) c[i] = -1;
        MPI_Request q;
        MPI_Isend(a, 3, MPI_INT, next, 9, MPI_COMM_WORLD, &r);
        MPI_Irecv(c, 1, vec, prev, 9, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, &s);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Get_elements(&s, vec, &n);
        CHECK(n == 3);
        MPI_Get_count(&s, vec, &n);
        CHECK(n == MPI_UNDEFINED);
        int wc[12] = {1, 2, -1, -1, 3, -1, -1, -1, -1, -1, -1, -1};
        for (int i = 0; i < 12; i++) CHECK(c[i] == wc[i]);
        /* a struct's elements: a double and an int of the second */
        struct rec x[2];
        char raw[24];
        memset(raw, 0, sizeof raw);
        MPI_Isend(raw, 13 + 12, MPI_BYTE, next, 10, MPI_COMM_WORLD, &r);
        MPI_Recv(x, 2, st, prev, 10, MPI_COMM_WORLD, &s);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Get_elements(&s, st, &n);
        CHECK(n == 5);
        MPI_Get_count(&s, st, &n);
        CHECK(n == MPI_UNDEFINED);
    }
    {
        /* probe + Get_count, matched probe into a derived type */
        int a[6] = {1, 2, 3, 4, 5, 6}, c[12];
        MPI_Status s;
        MPI_Request r;
        MPI_Isend(a, 6, MPI_INT, next, 11, MPI_COMM_WORLD, &r);
        MPI_Probe(prev, 11, MPI_COMM_WORLD, &s);
        int n = 0;
        MPI_Get_count(&s, contig3, &n);
        CHECK(n == 2);
        MPI_Message msg;
        MPI_Mprobe(prev, 11, MPI_COMM_WORLD, &msg, &s);
        for (int i = 0; i < 12; i++) c[i] = -1;
        MPI_Mrecv(c, 1, vec, &msg, &s);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        int wc[12] = {1, 2, -1, -1, 3, 4, -1, -1, 5, 6, -1, -1};
        for (int i = 0; i < 12; i++) CHECK(c[i] == wc[i]);
    }
    {
        /* Sendrecv_replace and Bsend with a column */
        int mm[4][4];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) mm[i][j] = 10 * rank + i;
        MPI_Sendrecv_replace(&mm[0][0], 1, column, next, 12, prev, 12, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
        for (int i = 0; i < 4; i++) CHECK(mm[i][0] == 10 * prev + i && mm[i][1] == 10 * rank + i);
        static char bbuf[4096];
        MPI_Buffer_attach(bbuf, sizeof bbuf);
        MPI_Bsend(&mm[0][1], 1, column, next, 13, MPI_COMM_WORLD);
        int in[4];
        MPI_Recv(in, 4, MPI_INT, prev, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 4; i++) CHECK(in[i] == 10 * prev + i);
        void *b;
        int bs;
        MPI_Buffer_detach(&b, &bs);
    }

    /* ---- collectives ---- */
    MPI_Datatype every2; /* an int every 8 bytes */
    MPI_Type_create_resized(MPI_INT, 0, 8, &every2);
    MPI_Type_commit(&every2);
    MPI_Datatype vec2; /* ints 0 and 2 */
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec2);
    MPI_Type_commit(&vec2);
    {
        /* bcast of a column */
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) m[i][j] = rank == 0 ? 10 * i + j : -1;
        MPI_Bcast(&m[0][2], 1, column, 0, MPI_COMM_WORLD);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) CHECK(m[i][j] == (rank == 0 || j == 2 ? 10 * i + j : -1));
        /* bcast of structs */
        struct rec x[2];
        for (int i = 0; i < 2; i++) {
            x[i].d = rank == 1 ? 1.5 + i : 0;
            x[i].i = rank == 1 ? 7 + i : 0;
            x[i].c = rank == 1 ? 'x' : 0;
        }
        MPI_Bcast(x, 2, st, 1, MPI_COMM_WORLD);
        for (int i = 0; i < 2; i++) CHECK(x[i].d == 1.5 + i && x[i].i == 7 + i && x[i].c == 'x');
    }
    int *big = malloc(sizeof(int) * 4 * size), *big2 = malloc(sizeof(int) * 4 * size);
    {
        /* gather: strided send, contiguous receive */
        int s[3] = {rank, -5, rank + 100};
        MPI_Gather(s, 1, vec2, big, 2, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank == 0)
            for (int i = 0; i < size; i++) CHECK(big[2 * i] == i && big[2 * i + 1] == i + 100);
        /* gather into every other int */
        for (int i = 0; i < 2 * size; i++) big[i] = -1;
        MPI_Gather(&rank, 1, MPI_INT, big, 1, every2, size - 1, MPI_COMM_WORLD);
        if (rank == size - 1)
            for (int i = 0; i < size; i++) CHECK(big[2 * i] == i && big[2 * i + 1] == -1);
        /* scatter from every other int */
        for (int i = 0; i < 2 * size; i++) big[i] = i;
        int got = -1;
        MPI_Scatter(big, 1, every2, &got, 1, MPI_INT, 0, MPI_COMM_WORLD);
        CHECK(got == 2 * rank);
        /* allgather into every other int */
        for (int i = 0; i < 2 * size; i++) big[i] = -1;
        int mine = rank * 3;
        MPI_Allgather(&mine, 1, MPI_INT, big, 1, every2, MPI_COMM_WORLD);
        for (int i = 0; i < size; i++) CHECK(big[2 * i] == 3 * i && big[2 * i + 1] == -1);
        /* alltoall: strided out, contiguous in */
        for (int i = 0; i < 2 * size; i++) big[i] = (i % 2) ? -7 : 100 * rank + i / 2;
        MPI_Alltoall(big, 1, every2, big2, 1, MPI_INT, MPI_COMM_WORLD);
        for (int i = 0; i < size; i++) CHECK(big2[i] == 100 * i + rank);
        /* gatherv into every other int, in reverse order */
        int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
        for (int i = 0; i < size; i++) {
            counts[i] = 1;
            displs[i] = size - 1 - i;
        }
        for (int i = 0; i < 2 * size; i++) big[i] = -1;
        MPI_Gatherv(&rank, 1, MPI_INT, big, counts, displs, every2, 0, MPI_COMM_WORLD);
        if (rank == 0)
            for (int i = 0; i < size; i++)
                CHECK(big[2 * (size - 1 - i)] == i && big[2 * (size - 1 - i) + 1] == -1);
        /* allgatherv of two ints each with a strided send */
        for (int i = 0; i < size; i++) {
            counts[i] = 2;
            displs[i] = 2 * i;
        }
        int s2[3] = {rank, -1, -rank};
        MPI_Allgatherv(s2, 1, vec2, big, counts, displs, MPI_INT, MPI_COMM_WORLD);
        for (int i = 0; i < size; i++) CHECK(big[2 * i] == i && big[2 * i + 1] == -i);
        /* scatterv from every other int, alltoallv strided to contiguous */
        int *sc = malloc(sizeof(int) * size), *sd = malloc(sizeof(int) * size);
        int *rc = malloc(sizeof(int) * size), *rd = malloc(sizeof(int) * size);
        for (int i = 0; i < size; i++) {
            sc[i] = 1;
            sd[i] = size - 1 - i;
            rc[i] = 1;
            rd[i] = i;
        }
        for (int i = 0; i < 2 * size; i++) big[i] = i;
        int one = -1;
        MPI_Scatterv(big, sc, sd, every2, &one, 1, MPI_INT, 0, MPI_COMM_WORLD);
        CHECK(one == 2 * (size - 1 - rank));
        for (int i = 0; i < 2 * size; i++) big[i] = (i % 2) ? -7 : 100 * rank + i / 2;
        for (int i = 0; i < size; i++) sd[i] = i;
        MPI_Alltoallv(big, sc, sd, every2, big2, rc, rd, MPI_INT, MPI_COMM_WORLD);
        for (int i = 0; i < size; i++) CHECK(big2[i] == 100 * i + rank);
        /* and contiguous out, strided in */
        for (int i = 0; i < size; i++) big2[i] = 10 * rank + i;
        for (int i = 0; i < 2 * size; i++) big[i] = -1;
        MPI_Alltoallv(big2, rc, rd, MPI_INT, big, sc, sd, every2, MPI_COMM_WORLD);
        for (int i = 0; i < size; i++) CHECK(big[2 * i] == 10 * i + rank && big[2 * i + 1] == -1);
        free(sc);
        free(sd);
        free(rc);
        free(rd);
        free(counts);
        free(displs);
    }
    {
        /* reductions on derived types of one base type */
        int a[4] = {rank, 1, 2 * rank, 3}, b[4] = {0, 0, 0, 0};
        MPI_Datatype c2;
        MPI_Type_contiguous(2, MPI_INT, &c2);
        MPI_Type_commit(&c2);
        MPI_Allreduce(a, b, 2, c2, MPI_SUM, MPI_COMM_WORLD);
        int tri = size * (size - 1) / 2;
        CHECK(b[0] == tri && b[1] == size && b[2] == 2 * tri && b[3] == 3 * size);
        int c[3] = {rank, -9, 1}, d[3] = {-1, -1, -1};
        MPI_Allreduce(c, d, 1, vec2, MPI_MAX, MPI_COMM_WORLD);
        CHECK(d[0] == size - 1 && d[1] == -1 && d[2] == 1);
        MPI_Reduce(c, d, 1, vec2, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) CHECK(d[0] == tri && d[2] == size);
        /* in place */
        int e[3] = {rank, -9, 2};
        MPI_Allreduce(MPI_IN_PLACE, e, 1, vec2, MPI_SUM, MPI_COMM_WORLD);
        CHECK(e[0] == tri && e[1] == -9 && e[2] == 2 * size);
        /* scan, reduce_scatter_block and Reduce_local on the strided type */
        int f[3] = {rank, -9, 1}, g[3] = {-1, -1, -1};
        MPI_Scan(f, g, 1, vec2, MPI_SUM, MPI_COMM_WORLD);
        CHECK(g[0] == rank * (rank + 1) / 2 && g[1] == -1 && g[2] == rank + 1);
        int *h = malloc(sizeof(int) * 4 * size), k[3] = {-1, -1, -1};
        for (int i = 0; i < 4 * size; i++) h[i] = i / 3 + rank; /* extent: 3 ints */
        MPI_Reduce_scatter_block(h, k, 1, vec2, MPI_SUM, MPI_COMM_WORLD);
        CHECK(k[0] == size * rank + tri && k[1] == -1 && k[2] == size * rank + tri);
        free(h);
        int l1[3] = {5, 0, 6}, l2[3] = {1, -3, 2};
        MPI_Reduce_local(l1, l2, 1, vec2, MPI_PROD);
        CHECK(l2[0] == 5 && l2[1] == -3 && l2[2] == 12);
        /* a type of mixed elements: no predefined operation */
        struct rec x = {1.0, 1, 'a'}, y;
        int rc = MPI_Allreduce(&x, &y, 1, st, MPI_SUM, MPI_COMM_WORLD);
        CHECK(class_of(rc) == MPI_ERR_OP);
        MPI_Type_free(&c2);
    }
    {
        /* MINLOC / MAXLOC on every pair type */
        int lo = size - 1; /* the rank holding the smallest value */
        struct fi f = {(float)(size - rank), rank}, fo;
        MPI_Allreduce(&f, &fo, 1, MPI_FLOAT_INT, MPI_MINLOC, MPI_COMM_WORLD);
        CHECK(fo.v == 1.0f && fo.i == lo);
        struct di dd[2] = {{(double)(size - rank), rank}, {(double)rank, rank}}, dout[2];
        MPI_Allreduce(dd, dout, 2, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
        CHECK(dout[0].v == 1.0 && dout[0].i == lo && dout[1].v == 0.0 && dout[1].i == 0);
        MPI_Allreduce(dd, dout, 2, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
        CHECK(dout[0].v == size && dout[0].i == 0 && dout[1].v == size - 1 && dout[1].i == lo);
        struct li l = {1000L * rank, rank}, lout;
        MPI_Allreduce(&l, &lout, 1, MPI_LONG_INT, MPI_MAXLOC, MPI_COMM_WORLD);
        CHECK(lout.v == 1000L * (size - 1) && lout.i == size - 1);
        struct si s[2] = {{(short)(rank % 2), rank}, {(short)-rank, rank}}, sout[2];
        MPI_Allreduce(s, sout, 2, MPI_SHORT_INT, MPI_MAXLOC, MPI_COMM_WORLD);
        CHECK(sout[0].v == 1 && sout[0].i == 1 && sout[1].v == 0 && sout[1].i == 0);
        struct ii t = {rank % 2, rank}, tout;
        MPI_Allreduce(&t, &tout, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
        CHECK(tout.v == 0 && tout.i == 0);
        MPI_Reduce(&t, &tout, 1, MPI_2INT, MPI_MAXLOC, 0, MPI_COMM_WORLD);
        if (rank == 0) CHECK(tout.v == 1 && tout.i == 1);
        /* long double has no reduction here */
        struct { long double v; int i; } ld = {1.0L, rank}, ldo;
        int rc = MPI_Allreduce(&ld, &ldo, 1, MPI_LONG_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
        CHECK(class_of(rc) == MPI_ERR_OP);
    }
    {
        /* non-blocking collectives with derived types */
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) m[i][j] = rank == 0 ? 10 * i + j : -1;
        MPI_Request r;
        MPI_Ibcast(&m[0][1], 1, column, 0, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        for (int i = 0; i < 4; i++) CHECK(m[i][1] == 10 * i + 1 && (rank == 0 || m[i][0] == -1));
        int c[3] = {rank, -9, 1}, d[3] = {-1, -1, -1};
        MPI_Iallreduce(c, d, 1, vec2, MPI_SUM, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        CHECK(d[0] == size * (size - 1) / 2 && d[1] == -1 && d[2] == size);
        for (int i = 0; i < 2 * size; i++) big[i] = -1;
        int mine = rank + 1;
        MPI_Iallgather(&mine, 1, MPI_INT, big, 1, every2, MPI_COMM_WORLD, &r);
        int flag = 0;
        while (!flag) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        for (int i = 0; i < size; i++) CHECK(big[2 * i] == i + 1 && big[2 * i + 1] == -1);
        for (int i = 0; i < 2 * size; i++) big[i] = (i % 2) ? -7 : 100 * rank + i / 2;
        MPI_Ialltoall(big, 1, every2, big2, 1, MPI_INT, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        for (int i = 0; i < size; i++) CHECK(big2[i] == 100 * i + rank);
    }
    free(big);
    free(big2);

    /* ---- errors ---- */
    {
        MPI_Datatype u;
        MPI_Type_contiguous(2, MPI_INT, &u);
        int a[2] = {0, 0};
        int rc = MPI_Send(a, 1, u, next, 20, MPI_COMM_WORLD);
        CHECK(class_of(rc) == MPI_ERR_TYPE);
        MPI_Request r;
        rc = MPI_Irecv(a, 1, u, prev, 20, MPI_COMM_WORLD, &r);
        CHECK(class_of(rc) == MPI_ERR_TYPE);
        rc = MPI_Bcast(a, 1, u, 0, MPI_COMM_WORLD);
        CHECK(class_of(rc) == MPI_ERR_TYPE);
        MPI_Type_commit(&u);
        MPI_Datatype saved = u;
        MPI_Type_free(&u);
        CHECK(u == MPI_DATATYPE_NULL);
        rc = MPI_Send(a, 1, saved, next, 20, MPI_COMM_WORLD);
        CHECK(class_of(rc) == MPI_ERR_TYPE);
        int s = 0;
        rc = MPI_Type_size(saved, &s);
        CHECK(class_of(rc) == MPI_ERR_TYPE);
        MPI_Datatype i = MPI_INT;
        rc = MPI_Type_free(&i);
        CHECK(class_of(rc) == MPI_ERR_TYPE && i == MPI_INT);
        rc = MPI_Send(a, 1, MPI_DATATYPE_NULL, next, 20, MPI_COMM_WORLD);
        CHECK(class_of(rc) == MPI_ERR_TYPE);
    }

    for (int i = 0; i < (int)(sizeof all / sizeof all[0]); i++) MPI_Type_free(&all[i]);
    MPI_Type_free(&column);
    MPI_Type_free(&every2);
    MPI_Type_free(&vec2);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("OK datatypes rank=%d\n", rank);
    MPI_Finalize();
    return 0;
}
