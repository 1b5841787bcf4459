/* Collective latency sweep: the Open MPI side of `pertinax-bench coll`.
 *
 * usage: coll_sweep [-o ops] [-s sizes] [-r max_reps] [-w warmup] [-b batches] [-t target_s]
 *   ops:   comma-separated, from barrier,bcast,reduce,allreduce,allgather,alltoall (default all)
 *   sizes: comma-separated byte counts (default 8,1024,65536,1048576); barrier runs once, bytes=0
 *
 * The method is that of the anchor coll.c, extended over ops and sizes:
 * per (op, size), `warmup` calls, then a calibration (10 calls after a
 * barrier) whose time per call is maxed over ranks, so that every rank uses
 * reps = clamp(target_s / t_call, 20, max_reps); then `batches` timed
 * batches, each after a barrier. Per batch each rank computes its mean time
 * per call; the batch value is the MAX over ranks (IMB's t_max). Rank 0
 * prints the median over batches (and the median of the mean over ranks):
 *
 *   COLL op=allreduce bytes=8 ranks=4 t_max_us_med=.. t_avg_us_med=.. reps=.. batches=..
 *
 * Sizes and types, as in the pertinax worker:
 *   bcast      `bytes` MPI_BYTEs from rank 0
 *   reduce     MPI_SUM to rank 0 of bytes/8 MPI_DOUBLEs (of `bytes` MPI_UNSIGNED_CHARs
 *              when bytes is not a multiple of 8)
 *   allreduce  the same, to every rank
 *   allgather  `bytes` per rank (receive buffer: ranks x bytes)
 *   alltoall   `bytes` per destination (both buffers: ranks x bytes)
 * After the batches one untimed call with rank-dependent data checks the
 * result on every rank; a wrong result aborts the job.
 *
 * Compiled with mpicc -O2 -I<anchors dir> (for common.h). */
#include "common.h"
#include <unistd.h>

#define MAXLIST 64

enum { OP_BARRIER, OP_BCAST, OP_REDUCE, OP_ALLREDUCE, OP_ALLGATHER, OP_ALLTOALL, NOPS };
static const char *opname[NOPS] = {"barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall"};

/* One (op, size) case with its buffers. */
struct kase {
    int op;
    long bytes;
    int count;             /* elements of `type` in the vector (bcast/reduce/allreduce) or block */
    MPI_Datatype type;
    void *sbuf, *rbuf;
};

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", n);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return p;
}

static void setup(struct kase *k, int op, long bytes, int n) {
    size_t ssize = (size_t)bytes, rsize = (size_t)bytes;
    k->op = op;
    k->bytes = bytes;
    k->type = MPI_BYTE;
    k->count = (int)bytes;
    if (op == OP_REDUCE || op == OP_ALLREDUCE) {
        if (bytes % 8 == 0) {
            k->type = MPI_DOUBLE;
            k->count = (int)(bytes / 8);
        } else {
            k->type = MPI_UNSIGNED_CHAR;
        }
    } else if (op == OP_ALLGATHER) {
        rsize = (size_t)n * bytes;
    } else if (op == OP_ALLTOALL) {
        ssize = rsize = (size_t)n * bytes;
    } else if (op == OP_BARRIER) {
        ssize = rsize = 0;
    }
    k->sbuf = xmalloc(ssize);
    k->rbuf = xmalloc(rsize);
    if (k->type == MPI_DOUBLE) {
        for (int i = 0; i < k->count; i++) ((double *)k->sbuf)[i] = 1.0;
    } else {
        memset(k->sbuf, 1, ssize);
    }
    memset(k->rbuf, 0, rsize);
}

static int call(struct kase *k, MPI_Comm comm) {
    switch (k->op) {
    case OP_BARRIER: return MPI_Barrier(comm);
    case OP_BCAST: return MPI_Bcast(k->sbuf, k->count, MPI_BYTE, 0, comm);
    case OP_REDUCE: return MPI_Reduce(k->sbuf, k->rbuf, k->count, k->type, MPI_SUM, 0, comm);
    case OP_ALLREDUCE: return MPI_Allreduce(k->sbuf, k->rbuf, k->count, k->type, MPI_SUM, comm);
    case OP_ALLGATHER: return MPI_Allgather(k->sbuf, k->count, MPI_BYTE, k->rbuf, k->count, MPI_BYTE, comm);
    case OP_ALLTOALL: return MPI_Alltoall(k->sbuf, k->count, MPI_BYTE, k->rbuf, k->count, MPI_BYTE, comm);
    }
    return MPI_ERR_ARG;
}

/* Byte i that rank r contributes (or sends in block j): as the worker. */
static unsigned char pat(long r, long j, long i) { return (unsigned char)(r * 31 + j * 7 + i); }

/* One untimed call with rank-dependent data; 1 if this rank's result is right. */
static int check(struct kase *k, int me, int n, MPI_Comm comm) {
    long b = k->bytes;
    unsigned char *s = k->sbuf, *r = k->rbuf;
    int ok = 1;
    switch (k->op) {
    case OP_BARRIER: return call(k, comm) == MPI_SUCCESS;
    case OP_BCAST:
        for (long i = 0; i < b; i++) s[i] = me == 0 ? pat(0, 0, i) : 0;
        if (call(k, comm) != MPI_SUCCESS) return 0;
        for (long i = 0; i < b; i++) ok &= s[i] == pat(0, 0, i);
        return ok;
    case OP_REDUCE:
    case OP_ALLREDUCE: {
        int must = k->op == OP_ALLREDUCE || me == 0;
        if (k->type == MPI_DOUBLE) {
            double *sd = k->sbuf, *rd = k->rbuf, total = (double)n * (n + 1) / 2;
            for (int i = 0; i < k->count; i++) sd[i] = (me + 1) * (double)(i % 5 + 1), rd[i] = 0;
            if (call(k, comm) != MPI_SUCCESS) return 0;
            if (must)
                for (int i = 0; i < k->count; i++) ok &= rd[i] == total * (i % 5 + 1);
        } else {
            for (long i = 0; i < b; i++) s[i] = pat(me, 0, i), r[i] = 0;
            if (call(k, comm) != MPI_SUCCESS) return 0;
            if (must)
                for (long i = 0; i < b; i++) {
                    unsigned char e = 0;
                    for (int q = 0; q < n; q++) e = (unsigned char)(e + pat(q, 0, i));
                    ok &= r[i] == e;
                }
        }
        return ok;
    }
    case OP_ALLGATHER:
        for (long i = 0; i < b; i++) s[i] = pat(me, 0, i);
        memset(r, 0, (size_t)n * b);
        if (call(k, comm) != MPI_SUCCESS) return 0;
        for (long j = 0; j < n; j++)
            for (long i = 0; i < b; i++) ok &= r[j * b + i] == pat(j, 0, i);
        return ok;
    case OP_ALLTOALL:
        for (long j = 0; j < n; j++)
            for (long i = 0; i < b; i++) s[j * b + i] = pat(me, j, i);
        memset(r, 0, (size_t)n * b);
        if (call(k, comm) != MPI_SUCCESS) return 0;
        for (long j = 0; j < n; j++)
            for (long i = 0; i < b; i++) ok &= r[j * b + i] == pat(j, me, i);
        return ok;
    }
    return 0;
}

int main(int argc, char **argv) {
    int max_reps = 1000, warmup = 20, batches = 5;
    double target = 0.3;
    int ops[NOPS], nops = 0;
    long sizes[MAXLIST] = {8, 1024, 65536, 1048576};
    int nsizes = 4;
    int opt;
    while ((opt = getopt(argc, argv, "o:s:r:w:b:t:")) != -1) {
        switch (opt) {
        case 'o':
            for (char *p = strtok(optarg, ","); p; p = strtok(NULL, ",")) {
                int found = -1;
                for (int o = 0; o < NOPS; o++)
                    if (strcmp(p, opname[o]) == 0) found = o;
                if (found < 0) {
                    fprintf(stderr, "unknown op %s\n", p);
                    return 2;
                }
                int dup = 0;
                for (int i = 0; i < nops; i++) dup |= ops[i] == found;
                if (!dup) ops[nops++] = found;
            }
            break;
        case 's':
            nsizes = 0;
            for (char *p = strtok(optarg, ","); p && nsizes < MAXLIST; p = strtok(NULL, ","))
                sizes[nsizes++] = atol(p);
            break;
        case 'r': max_reps = atoi(optarg); break;
        case 'w': warmup = atoi(optarg); break;
        case 'b': batches = atoi(optarg); break;
        case 't': target = atof(optarg); break;
        default: fprintf(stderr, "bad args\n"); return 2;
        }
    }
    if (nops == 0)
        for (int o = 0; o < NOPS; o++) ops[nops++] = o;
    if (batches < 1) batches = 1;

    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm comm = MPI_COMM_WORLD;
    double *bmax = xmalloc(sizeof(double) * batches), *bavg = xmalloc(sizeof(double) * batches);
    int errors = 0;
    if (me == 0)
        printf("# impl=%s ranks=%d cores=%ld warmup=%d batches=%d max_reps=%d target_s=%.3f\n", IMPL_NAME, n,
               sysconf(_SC_NPROCESSORS_ONLN), warmup, batches, max_reps, target);

    for (int oi = 0; oi < nops; oi++) {
        int op = ops[oi];
        for (int si = 0; si < (op == OP_BARRIER ? 1 : nsizes); si++) {
            long bytes = op == OP_BARRIER ? 0 : sizes[si];
            int dup = 0; /* a size listed twice is measured once, as in the worker */
            for (int sj = 0; sj < si; sj++) dup |= sizes[sj] == bytes;
            if (dup) continue;
            struct kase k;
            setup(&k, op, bytes, n);
            for (int i = 0; i < warmup; i++) errors += call(&k, comm) != MPI_SUCCESS;
            /* calibration */
            MPI_Barrier(comm);
            double t0 = MPI_Wtime();
            for (int i = 0; i < 10; i++) errors += call(&k, comm) != MPI_SUCCESS;
            double tc = (MPI_Wtime() - t0) / 10, tcmax;
            MPI_Allreduce(&tc, &tcmax, 1, MPI_DOUBLE, MPI_MAX, comm);
            double raw = target / (tcmax > 1e-9 ? tcmax : 1e-9);
            int reps = raw > (double)max_reps ? max_reps : (int)raw;
            if (reps < 20) reps = 20;
            for (int b = 0; b < batches; b++) {
                MPI_Barrier(comm);
                double s = MPI_Wtime();
                for (int i = 0; i < reps; i++) errors += call(&k, comm) != MPI_SUCCESS;
                double t = (MPI_Wtime() - s) / reps * 1e6, tmax, tsum;
                MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm);
                MPI_Allreduce(&t, &tsum, 1, MPI_DOUBLE, MPI_SUM, comm);
                bmax[b] = tmax;
                bavg[b] = tsum / n;
            }
            int ok = check(&k, me, n, comm), allok;
            MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, comm);
            if (!allok) {
                fprintf(stderr, "rank %d: COLL op=%s bytes=%ld: %s got a wrong result\n", me, opname[op], bytes,
                        ok ? "another rank" : "this rank");
                MPI_Abort(comm, 4);
            }
            if (me == 0) {
                printf("COLL op=%s bytes=%ld ranks=%d t_max_us_med=%.3f t_avg_us_med=%.3f reps=%d batches=%d\n",
                       opname[op], bytes, n, median(bmax, batches), median(bavg, batches), reps, batches);
                fflush(stdout);
            }
            free(k.sbuf);
            free(k.rbuf);
        }
    }
    if (errors) fprintf(stderr, "rank %d: %d MPI errors\n", me, errors);
    free(bmax);
    free(bavg);
    MPI_Finalize();
    return errors != 0;
}
