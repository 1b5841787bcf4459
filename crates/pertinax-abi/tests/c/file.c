/* pertinax-abi: MPI-IO (MPI_File_*) on one shared file, in a temporary
 * directory rank 0 makes: independent and collective accesses at explicit
 * offsets, individual pointers (seek, position), non-blocking and split
 * forms, the shared pointer (write_shared, ordered: exact contents), a
 * view with a derived filetype interleaving the ranks' blocks (read back
 * through the view and as plain bytes) and a derived memory type,
 * set_size/preallocate/get_size, DELETE_ON_CLOSE, the error classes (EXCL
 * on an existing file, no such file, a bad amode, writing a RDONLY file,
 * reading a WRONLY one, an unknown datarep), file error handlers (a
 * file's, the default set on MPI_FILE_NULL, call_errhandler), atomicity,
 * amode, group, info and the handle conversions.
 * Prints "OK file rank=R". */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define N 16

static char dir[256];
static int handled, handled_class;
static MPI_File handled_file;

static void record(MPI_File *f, int *code, ...) {
    int c;
    MPI_Error_class(*code, &c);
    handled++;
    handled_class = c;
    handled_file = *f;
}

static void path(char *out, const char *name) {
    snprintf(out, 512, "%s/%s", dir, name);
}

static int class_of(int rc) {
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

/* Explicit offsets, individual pointers, non-blocking and split forms. */
static void offsets(void) {
    char p[512];
    path(p, "a");
    MPI_File fh;
    CHECK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) == MPI_SUCCESS);
    CHECK(fh != MPI_FILE_NULL);
    int buf[N], got[N];
    MPI_Status st;
    int n;
    for (int i = 0; i < N; i++) buf[i] = rank * 100 + i;
    CHECK(MPI_File_write_at(fh, (MPI_Offset)rank * N * 4, buf, N, MPI_INT, &st) == MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == N);
    CHECK(MPI_File_sync(fh) == MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_File_sync(fh) == MPI_SUCCESS);
    for (int r = 0; r < size; r++) {
        CHECK(MPI_File_read_at(fh, (MPI_Offset)r * N * 4, got, N, MPI_INT, &st) == MPI_SUCCESS);
        MPI_Get_count(&st, MPI_INT, &n);
        CHECK(n == N);
        for (int i = 0; i < N; i++) CHECK(got[i] == r * 100 + i);
    }
    MPI_Offset sz;
    CHECK(MPI_File_get_size(fh, &sz) == MPI_SUCCESS && sz == (MPI_Offset)size * N * 4);
    /* Reading past the end: a short count. */
    CHECK(MPI_File_read_at(fh, sz - 8, got, N, MPI_INT, &st) == MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == 2);

    /* Collective, at explicit offsets: each writes its right neighbour's
     * block (once every rank read it). */
    MPI_Barrier(MPI_COMM_WORLD);
    int right = (rank + 1) % size;
    for (int i = 0; i < N; i++) buf[i] = 5000 + right * 10 + i;
    CHECK(MPI_File_write_at_all(fh, (MPI_Offset)right * N * 4, buf, N, MPI_INT, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(MPI_File_sync(fh) == MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_File_sync(fh) == MPI_SUCCESS);
    CHECK(MPI_File_read_at_all(fh, (MPI_Offset)rank * N * 4, got, N, MPI_INT, &st) == MPI_SUCCESS);
    for (int i = 0; i < N; i++) CHECK(got[i] == 5000 + rank * 10 + i);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Individual pointers. */
    CHECK(MPI_File_seek(fh, (MPI_Offset)rank * N * 4, MPI_SEEK_SET) == MPI_SUCCESS);
    for (int i = 0; i < N; i++) buf[i] = -rank - i;
    CHECK(MPI_File_write(fh, buf, N, MPI_INT, &st) == MPI_SUCCESS);
    MPI_Offset pos;
    CHECK(MPI_File_get_position(fh, &pos) == MPI_SUCCESS && pos == (MPI_Offset)(rank + 1) * N * 4);
    CHECK(MPI_File_seek(fh, -N * 4, MPI_SEEK_CUR) == MPI_SUCCESS);
    memset(got, 0, sizeof got);
    CHECK(MPI_File_read_all(fh, got, N, MPI_INT, &st) == MPI_SUCCESS);
    for (int i = 0; i < N; i++) CHECK(got[i] == -rank - i);
    CHECK(MPI_File_seek(fh, 0, MPI_SEEK_END) == MPI_SUCCESS);
    CHECK(MPI_File_get_position(fh, &pos) == MPI_SUCCESS && pos == (MPI_Offset)size * N * 4);
    CHECK(class_of(MPI_File_seek(fh, -1, MPI_SEEK_SET)) == MPI_ERR_ARG);
    MPI_Offset where;
    CHECK(MPI_File_get_byte_offset(fh, 12, &where) == MPI_SUCCESS && where == 12);

    /* Non-blocking: complete at once, counts in the status. */
    MPI_Request rq;
    for (int i = 0; i < N; i++) buf[i] = 7000 + rank * 10 + i;
    CHECK(MPI_File_iwrite_at(fh, (MPI_Offset)rank * N * 4, buf, N, MPI_INT, &rq) == MPI_SUCCESS);
    CHECK(MPI_Wait(&rq, &st) == MPI_SUCCESS && rq == MPI_REQUEST_NULL);
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == N);
    memset(got, 0, sizeof got);
    CHECK(MPI_File_iread_at_all(fh, (MPI_Offset)rank * N * 4, got, N, MPI_INT, &rq) == MPI_SUCCESS);
    CHECK(MPI_Wait(&rq, &st) == MPI_SUCCESS);
    for (int i = 0; i < N; i++) CHECK(got[i] == 7000 + rank * 10 + i);
    /* Split collective. */
    memset(got, 0, sizeof got);
    CHECK(MPI_File_read_at_all_begin(fh, (MPI_Offset)rank * N * 4, got, N, MPI_INT) == MPI_SUCCESS);
    CHECK(MPI_File_read_at_all_end(fh, got, &st) == MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == N && got[N - 1] == 7000 + rank * 10 + N - 1);
    CHECK(class_of(MPI_File_read_all_end(fh, got, &st)) == MPI_ERR_OTHER);

    /* Large-count forms. */
    CHECK(MPI_File_read_at_c(fh, (MPI_Offset)rank * N * 4, got, (MPI_Count)N, MPI_INT, &st) == MPI_SUCCESS);
    MPI_Count nc;
    MPI_Get_count_c(&st, MPI_INT, &nc);
    CHECK(nc == N);

    /* Size. */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_File_set_size(fh, 0) == MPI_SUCCESS);
    CHECK(MPI_File_get_size(fh, &sz) == MPI_SUCCESS && sz == 0);
    CHECK(MPI_File_set_size(fh, 100) == MPI_SUCCESS);
    CHECK(MPI_File_get_size(fh, &sz) == MPI_SUCCESS && sz == 100);
    CHECK(MPI_File_preallocate(fh, 50) == MPI_SUCCESS);
    CHECK(MPI_File_get_size(fh, &sz) == MPI_SUCCESS && sz == 100);
    CHECK(MPI_File_preallocate(fh, 200) == MPI_SUCCESS);
    CHECK(MPI_File_get_size(fh, &sz) == MPI_SUCCESS && sz == 200);

    /* Queries. */
    int amode, flag;
    CHECK(MPI_File_get_amode(fh, &amode) == MPI_SUCCESS && amode == (MPI_MODE_CREATE | MPI_MODE_RDWR));
    MPI_Group g, wg;
    CHECK(MPI_File_get_group(fh, &g) == MPI_SUCCESS);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int cmp;
    MPI_Group_compare(g, wg, &cmp);
    CHECK(cmp == MPI_IDENT);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    CHECK(MPI_File_get_atomicity(fh, &flag) == MPI_SUCCESS && flag == 0);
    CHECK(MPI_File_set_atomicity(fh, 1) == MPI_SUCCESS);
    CHECK(MPI_File_get_atomicity(fh, &flag) == MPI_SUCCESS && flag == 1);
    CHECK(MPI_File_write_at(fh, (MPI_Offset)rank * 4, &rank, 1, MPI_INT, &st) == MPI_SUCCESS);
    CHECK(MPI_File_read_at(fh, (MPI_Offset)rank * 4, &n, 1, MPI_INT, &st) == MPI_SUCCESS && n == rank);
    CHECK(MPI_File_set_atomicity(fh, 0) == MPI_SUCCESS);
    MPI_Info info, used;
    MPI_Info_create(&info);
    MPI_Info_set(info, "access_style", "read_mostly");
    CHECK(MPI_File_set_info(fh, info) == MPI_SUCCESS);
    CHECK(MPI_File_get_info(fh, &used) == MPI_SUCCESS);
    char v[64];
    MPI_Info_get(used, "access_style", 63, v, &flag);
    CHECK(flag && strcmp(v, "read_mostly") == 0);
    MPI_Info_free(&info);
    MPI_Info_free(&used);
    MPI_Fint f = MPI_File_c2f(fh);
    CHECK(f != 0 && MPI_File_f2c(f) == fh);
    CHECK(MPI_File_c2f(MPI_FILE_NULL) == 0 && MPI_File_f2c(0) == MPI_FILE_NULL);
    CHECK(MPI_File_close(&fh) == MPI_SUCCESS && fh == MPI_FILE_NULL);
}

/* The shared pointer: write_shared (any order), ordered (rank order). */
static void shared(void) {
    char p[512];
    path(p, "s");
    MPI_File fh;
    CHECK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) == MPI_SUCCESS);
    int buf[4];
    for (int j = 0; j < 4; j++) buf[j] = rank * 1000 + j;
    CHECK(MPI_File_write_shared(fh, buf, 4, MPI_INT, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset pos, sz;
    CHECK(MPI_File_get_position_shared(fh, &pos) == MPI_SUCCESS && pos == (MPI_Offset)size * 16);
    CHECK(MPI_File_get_size(fh, &sz) == MPI_SUCCESS && sz == (MPI_Offset)size * 16);
    int *all = malloc(sizeof(int) * 4 * size);
    CHECK(MPI_File_read_at(fh, 0, all, 4 * size, MPI_INT, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    int *seen = calloc(size, sizeof(int));
    for (int b = 0; b < size; b++) {
        int r = all[4 * b] / 1000;
        CHECK(r >= 0 && r < size && !seen[r]);
        seen[r] = 1;
        for (int j = 0; j < 4; j++) CHECK(all[4 * b + j] == r * 1000 + j);
    }
    free(seen);
    free(all);

    /* Ordered: rank r writes r + 1 bytes 'A' + r, after what is there. */
    CHECK(MPI_File_seek_shared(fh, 0, MPI_SEEK_END) == MPI_SUCCESS);
    char mine[8];
    memset(mine, 'A' + rank, sizeof mine);
    CHECK(MPI_File_write_ordered(fh, mine, rank + 1, MPI_CHAR, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    int total = size * (size + 1) / 2;
    CHECK(MPI_File_get_position_shared(fh, &pos) == MPI_SUCCESS && pos == (MPI_Offset)size * 16 + total);
    char text[64], want[64];
    int k = 0;
    for (int r = 0; r < size; r++)
        for (int j = 0; j <= r; j++) want[k++] = 'A' + r;
    CHECK(MPI_File_sync(fh) == MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_File_sync(fh) == MPI_SUCCESS);
    CHECK(MPI_File_read_at_all(fh, (MPI_Offset)size * 16, text, total, MPI_CHAR, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(memcmp(text, want, total) == 0);
    CHECK(MPI_File_get_size(fh, &sz) == MPI_SUCCESS && sz == (MPI_Offset)size * 16 + total);
    /* Read back in order, through the split form. */
    CHECK(MPI_File_seek_shared(fh, (MPI_Offset)size * 16, MPI_SEEK_SET) == MPI_SUCCESS);
    memset(text, 0, sizeof text);
    MPI_Status st;
    int n;
    CHECK(MPI_File_read_ordered_begin(fh, text, rank + 1, MPI_CHAR) == MPI_SUCCESS);
    CHECK(MPI_File_read_ordered_end(fh, text, &st) == MPI_SUCCESS);
    MPI_Get_count(&st, MPI_CHAR, &n);
    CHECK(n == rank + 1);
    for (int j = 0; j <= rank; j++) CHECK(text[j] == 'A' + rank);
    CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) CHECK(MPI_File_delete(p, MPI_INFO_NULL) == MPI_SUCCESS);
}

/* A view whose filetype interleaves the ranks' blocks of B ints. */
#define B 2
#define T 3
static void views(void) {
    char p[512];
    path(p, "v");
    MPI_File fh;
    CHECK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh) == MPI_SUCCESS);
    MPI_Datatype block, ftype;
    MPI_Type_contiguous(B, MPI_INT, &block);
    MPI_Type_create_resized(block, 0, (MPI_Aint)size * B * 4, &ftype);
    MPI_Type_commit(&ftype);
    CHECK(MPI_File_set_view(fh, (MPI_Offset)rank * B * 4, MPI_INT, ftype, "native", MPI_INFO_NULL) == MPI_SUCCESS);
    MPI_Offset disp;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    CHECK(MPI_File_get_view(fh, &disp, &et, &ft, rep) == MPI_SUCCESS);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(ft, &lb, &ext);
    CHECK(disp == (MPI_Offset)rank * B * 4 && et == MPI_INT && ext == (MPI_Aint)size * B * 4 && strcmp(rep, "native") == 0);
    MPI_Type_free(&ft);
    /* The memory side derived too: every other int of `src`. */
    int src[2 * B * T], vals[B * T], got[B * T];
    MPI_Datatype strided;
    MPI_Type_vector(B * T, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    for (int i = 0; i < B * T; i++) {
        vals[i] = rank * 100 + i;
        src[2 * i] = vals[i];
        src[2 * i + 1] = -1;
    }
    CHECK(MPI_File_write_all(fh, src, 1, strided, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    MPI_Offset pos, where;
    CHECK(MPI_File_get_position(fh, &pos) == MPI_SUCCESS && pos == B * T);
    CHECK(MPI_File_get_byte_offset(fh, B, &where) == MPI_SUCCESS);
    CHECK(where == (MPI_Offset)rank * B * 4 + (MPI_Offset)size * B * 4);
    CHECK(MPI_File_sync(fh) == MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_File_sync(fh) == MPI_SUCCESS);
    /* Through the view. */
    memset(got, 0, sizeof got);
    CHECK(MPI_File_read_at_all(fh, 0, got, B * T, MPI_INT, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    for (int i = 0; i < B * T; i++) CHECK(got[i] == vals[i]);
    /* As plain ints: tile t, rank r, j-th int. */
    CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL) == MPI_SUCCESS);
    int *all = malloc(sizeof(int) * B * T * size);
    CHECK(MPI_File_read_at(fh, 0, all, B * T * size, MPI_INT, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    for (int t = 0; t < T; t++)
        for (int r = 0; r < size; r++)
            for (int j = 0; j < B; j++) CHECK(all[(t * size + r) * B + j] == r * 100 + t * B + j);
    free(all);
    /* Into a derived memory type from the file. */
    memset(src, 0, sizeof src);
    CHECK(MPI_File_read_at(fh, (MPI_Offset)rank * B * 4, src, 1, strided, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    for (int i = 0; i < B; i++) CHECK(src[2 * i] == vals[i] && src[2 * i + 1] == 0);
    CHECK(class_of(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL)) == MPI_ERR_UNSUPPORTED_DATAREP);
    MPI_Type_free(&strided);
    MPI_Type_free(&block);
    MPI_Type_free(&ftype);
    CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(access(p, F_OK) != 0);
}

/* Error classes and error handlers. */
static void errors(void) {
    char a[512], none[512], w[512];
    path(a, "a");
    path(none, "none");
    path(w, "w");
    MPI_File fh = MPI_FILE_NULL;
    MPI_Errhandler eh;
    CHECK(MPI_File_get_errhandler(MPI_FILE_NULL, &eh) == MPI_SUCCESS && eh == MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);
    CHECK(class_of(MPI_File_open(MPI_COMM_WORLD, a, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, MPI_INFO_NULL, &fh)) == MPI_ERR_FILE_EXISTS);
    CHECK(fh == MPI_FILE_NULL);
    CHECK(class_of(MPI_File_open(MPI_COMM_WORLD, none, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)) == MPI_ERR_NO_SUCH_FILE);
    CHECK(class_of(MPI_File_open(MPI_COMM_WORLD, a, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh)) == MPI_ERR_AMODE);
    CHECK(class_of(MPI_File_open(MPI_COMM_WORLD, a, MPI_MODE_RDONLY | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh)) == MPI_ERR_AMODE);
    CHECK(class_of(MPI_File_delete(none, MPI_INFO_NULL)) == MPI_ERR_NO_SUCH_FILE);
    CHECK(class_of(MPI_File_close(&fh)) == MPI_ERR_FILE);

    CHECK(MPI_File_open(MPI_COMM_WORLD, a, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) == MPI_SUCCESS);
    int x = 1, got[4];
    CHECK(class_of(MPI_File_write_at(fh, 0, &x, 1, MPI_INT, MPI_STATUS_IGNORE)) == MPI_ERR_READ_ONLY);
    CHECK(MPI_File_read_at(fh, 0, got, 4, MPI_INT, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(class_of(MPI_File_read_at(fh, 0, got, -1, MPI_INT, MPI_STATUS_IGNORE)) == MPI_ERR_COUNT);
    CHECK(class_of(MPI_File_read_at(fh, 0, got, 1, MPI_DATATYPE_NULL, MPI_STATUS_IGNORE)) == MPI_ERR_TYPE);
    /* A file's own handler. */
    CHECK(MPI_File_create_errhandler(record, &eh) == MPI_SUCCESS);
    CHECK(MPI_File_set_errhandler(fh, eh) == MPI_SUCCESS);
    handled = 0;
    CHECK(class_of(MPI_File_write_at(fh, 0, &x, 1, MPI_INT, MPI_STATUS_IGNORE)) == MPI_ERR_READ_ONLY);
    CHECK(handled == 1 && handled_class == MPI_ERR_READ_ONLY && handled_file == fh);
    CHECK(MPI_File_call_errhandler(fh, MPI_ERR_OTHER) == MPI_SUCCESS);
    CHECK(handled == 2 && handled_class == MPI_ERR_OTHER);
    MPI_Errhandler got_eh;
    CHECK(MPI_File_get_errhandler(fh, &got_eh) == MPI_SUCCESS && got_eh == eh);
    MPI_Errhandler_free(&got_eh);
    CHECK(MPI_File_close(&fh) == MPI_SUCCESS);

    /* The default for opens, set on MPI_FILE_NULL. */
    CHECK(MPI_File_set_errhandler(MPI_FILE_NULL, eh) == MPI_SUCCESS);
    MPI_Errhandler_free(&eh);
    handled = 0;
    CHECK(class_of(MPI_File_open(MPI_COMM_WORLD, none, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)) == MPI_ERR_NO_SUCH_FILE);
    CHECK(handled == 1 && handled_class == MPI_ERR_NO_SUCH_FILE && handled_file == MPI_FILE_NULL);
    CHECK(MPI_File_open(MPI_COMM_WORLD, w, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh) == MPI_SUCCESS);
    CHECK(class_of(MPI_File_read(fh, got, 1, MPI_INT, MPI_STATUS_IGNORE)) == MPI_ERR_ACCESS);
    CHECK(handled == 2 && handled_class == MPI_ERR_ACCESS && handled_file == fh);
    CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
    CHECK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN) == MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(access(w, F_OK) != 0);
    if (rank == 0) CHECK(MPI_File_delete(a, MPI_INFO_NULL) == MPI_SUCCESS);
}

/* Each rank's own file on MPI_COMM_SELF: APPEND starts at the end. */
static void self_files(void) {
    char p[512], name[32];
    snprintf(name, sizeof name, "self-%d", rank);
    path(p, name);
    MPI_File fh;
    CHECK(MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) == MPI_SUCCESS);
    CHECK(MPI_File_write(fh, "abc", 3, MPI_CHAR, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
    CHECK(MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &fh) == MPI_SUCCESS);
    MPI_Offset pos;
    CHECK(MPI_File_get_position(fh, &pos) == MPI_SUCCESS && pos == 3);
    CHECK(MPI_File_write_shared(fh, "de", 2, MPI_CHAR, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
    CHECK(MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh) == MPI_SUCCESS);
    char text[8] = {0};
    MPI_Status st;
    int n;
    CHECK(MPI_File_read(fh, text, 8, MPI_CHAR, &st) == MPI_SUCCESS);
    MPI_Get_count(&st, MPI_CHAR, &n);
    CHECK(n == 5 && memcmp(text, "abcde", 5) == 0);
    CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
    CHECK(access(p, F_OK) != 0);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        snprintf(dir, sizeof dir, "/tmp/pertinax-file-XXXXXX");
        CHECK(mkdtemp(dir) != NULL);
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    offsets();
    shared();
    views();
    errors();
    self_files();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) CHECK(rmdir(dir) == 0);
    printf("OK file rank=%d\n", rank);
    MPI_Finalize();
    return 0;
}
