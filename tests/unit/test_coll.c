/*
 * The collectives (include/topsync/collectives.h): every op on every type
 * it takes, against a sequential reference computed here, for threads and
 * for processes, flat and on hierarchies of groups, every root, in place,
 * and after every call of a long run (validate-style). Argument errors
 * name what is wrong.
 */
#define _GNU_SOURCE
#include <complex.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <topsync.h>

#include "check.h"

/* The value participant `rank` contributes at element j: small integers
 * (exact in every floating type, so any order of combination gives the
 * same sum), zeros among them (for the logical ops), ties (for the
 * location ops). */
static long value_of(unsigned rank, size_t j, bool is_unsigned, topsync_op_t op)
{
    long v = (long)((rank * 7 + j * 3 + rank * j) % 11);
    if (op == TOPSYNC_OP_PROD) /* products of 16 stay below 2^24: exact in a float */
        v %= 3;
    return is_unsigned ? v : v - (op == TOPSYNC_OP_PROD ? 1 : 3);
}

static bool is_unsigned(topsync_datatype_t t)
{
    return t >= TOPSYNC_TYPE_UINT8 && t <= TOPSYNC_TYPE_UINT64;
}

struct pair_layout {
    size_t index_offset;
};

/* Write element j of `type` holding v (pairs: value v, index rank). */
static void put(topsync_datatype_t t, void *buf, size_t j, long v, int index)
{
    switch (t) {
    case TOPSYNC_TYPE_INT8: ((int8_t *)buf)[j] = (int8_t)v; break;
    case TOPSYNC_TYPE_INT16: ((int16_t *)buf)[j] = (int16_t)v; break;
    case TOPSYNC_TYPE_INT32: ((int32_t *)buf)[j] = (int32_t)v; break;
    case TOPSYNC_TYPE_INT64: ((int64_t *)buf)[j] = (int64_t)v; break;
    case TOPSYNC_TYPE_UINT8: ((uint8_t *)buf)[j] = (uint8_t)v; break;
    case TOPSYNC_TYPE_UINT16: ((uint16_t *)buf)[j] = (uint16_t)v; break;
    case TOPSYNC_TYPE_UINT32: ((uint32_t *)buf)[j] = (uint32_t)v; break;
    case TOPSYNC_TYPE_UINT64: ((uint64_t *)buf)[j] = (uint64_t)v; break;
    case TOPSYNC_TYPE_FLOAT: ((float *)buf)[j] = (float)v; break;
    case TOPSYNC_TYPE_DOUBLE: ((double *)buf)[j] = (double)v; break;
    case TOPSYNC_TYPE_LONG_DOUBLE: ((long double *)buf)[j] = (long double)v; break;
    case TOPSYNC_TYPE_BOOL: ((bool *)buf)[j] = v != 0; break;
    case TOPSYNC_TYPE_FLOAT_COMPLEX:
        ((float _Complex *)buf)[j] = (float)v + (float)(v % 2) * I;
        break;
    case TOPSYNC_TYPE_DOUBLE_COMPLEX:
        ((double _Complex *)buf)[j] = (double)v + (double)(v % 2) * I;
        break;
#define PAIR(T, S)          \
    do {                    \
        struct S {          \
            T value;        \
            int index;      \
        } *p = buf;         \
        p[j].value = (T)v;  \
        p[j].index = index; \
    } while (0)
    case TOPSYNC_TYPE_FLOAT_INT: PAIR(float, a); break;
    case TOPSYNC_TYPE_DOUBLE_INT: PAIR(double, b); break;
    case TOPSYNC_TYPE_LONG_INT: PAIR(long, c); break;
    case TOPSYNC_TYPE_2INT: PAIR(int, d); break;
    case TOPSYNC_TYPE_SHORT_INT: PAIR(short, e); break;
    case TOPSYNC_TYPE_LONG_DOUBLE_INT: PAIR(long double, f); break;
    default: break;
    }
}

/* The reference of element j: op over ranks 0..n-1 in rank order, in wide
 * arithmetic (exact for these values), then written as the type. */
static void expect(topsync_datatype_t t, topsync_op_t op, unsigned n, size_t j, void *out)
{
    bool u = is_unsigned(t);
    long acc = value_of(0, j, u, op), acc_imag = acc % 2;
    int index = 0;
    for (unsigned r = 1; r < n; r++) {
        long v = value_of(r, j, u, op), v_imag = v % 2;
        switch (op) {
        case TOPSYNC_OP_SUM:
            acc += v;
            acc_imag += v_imag;
            break;
        case TOPSYNC_OP_PROD: {
            if (t != TOPSYNC_TYPE_FLOAT_COMPLEX && t != TOPSYNC_TYPE_DOUBLE_COMPLEX) {
                acc *= v;
                break;
            }
            long re = acc * v - acc_imag * v_imag, im = acc * v_imag + acc_imag * v;
            acc = re;
            acc_imag = im;
            break;
        }
        case TOPSYNC_OP_MIN: acc = v < acc ? v : acc; break;
        case TOPSYNC_OP_MAX: acc = v > acc ? v : acc; break;
        case TOPSYNC_OP_LAND: acc = acc && v; break;
        case TOPSYNC_OP_LOR: acc = acc || v; break;
        case TOPSYNC_OP_LXOR: acc = !acc != !v; break;
        case TOPSYNC_OP_BAND: acc &= v; break;
        case TOPSYNC_OP_BOR: acc |= v; break;
        case TOPSYNC_OP_BXOR: acc ^= v; break;
        case TOPSYNC_OP_MINLOC:
            if (v < acc) {
                acc = v;
                index = (int)r;
            }
            break;
        case TOPSYNC_OP_MAXLOC:
            if (v > acc) {
                acc = v;
                index = (int)r;
            }
            break;
        default: break;
        }
    }
    if (t == TOPSYNC_TYPE_FLOAT_COMPLEX)
        ((float _Complex *)out)[j] = (float)acc + (float)acc_imag * I;
    else if (t == TOPSYNC_TYPE_DOUBLE_COMPLEX)
        ((double _Complex *)out)[j] = (double)acc + (double)acc_imag * I;
    else
        put(t, out, j, acc, index);
}

/* Element-wise equality by value (long double carries padding bytes). */
static bool same(topsync_datatype_t t, const void *a, const void *b, size_t count)
{
    size_t size = topsync_datatype_size(t);
    /* floating point by value: a product's zero may be -0 or +0 by the
     * order of the factors; long double carries padding bytes */
#define VALUE_SAME(T)                                   \
    do {                                                \
        for (size_t j = 0; j < count; j++)              \
            if (((const T *)a)[j] != ((const T *)b)[j]) \
                return false;                           \
        return true;                                    \
    } while (0)
    switch (t) {
    case TOPSYNC_TYPE_FLOAT: VALUE_SAME(float);
    case TOPSYNC_TYPE_DOUBLE: VALUE_SAME(double);
    case TOPSYNC_TYPE_LONG_DOUBLE: VALUE_SAME(long double);
    case TOPSYNC_TYPE_FLOAT_COMPLEX: VALUE_SAME(float _Complex);
    case TOPSYNC_TYPE_DOUBLE_COMPLEX: VALUE_SAME(double _Complex);
    default: break;
    }
#define PAIR_SAME(T)                                                  \
    do {                                                              \
        const struct {                                                \
            T value;                                                  \
            int index;                                                \
        } *p = a, *q = b;                                             \
        for (size_t j = 0; j < count; j++)                            \
            if (p[j].value != q[j].value || p[j].index != q[j].index) \
                return false;                                         \
        return true;                                                  \
    } while (0)
    switch (t) { /* padding between value and index */
    case TOPSYNC_TYPE_FLOAT_INT: PAIR_SAME(float);
    case TOPSYNC_TYPE_DOUBLE_INT: PAIR_SAME(double);
    case TOPSYNC_TYPE_LONG_INT: PAIR_SAME(long);
    case TOPSYNC_TYPE_SHORT_INT: PAIR_SAME(short);
    case TOPSYNC_TYPE_LONG_DOUBLE_INT: PAIR_SAME(long double);
    default: break;
    }
    return memcmp(a, b, count * size) == 0;
}

/* ---- a run: n participants, each doing `calls` operations ---------------- */

enum kind { ALLREDUCE, REDUCE, BCAST };

struct run {
    topsync_coll_t *coll;
    unsigned n;
    unsigned calls;
    size_t max_count; /* elements of the largest call */
    _Atomic int failures;
};

/* The k-th call of a run, the same on every participant. */
static void call_of(unsigned k, unsigned n, enum kind *kind, topsync_datatype_t *t,
                    topsync_op_t *op, unsigned *root, size_t *count, size_t max_bytes)
{
    static const topsync_op_t ops[] = {TOPSYNC_OP_SUM,  TOPSYNC_OP_PROD,   TOPSYNC_OP_MIN,
                                       TOPSYNC_OP_MAX,  TOPSYNC_OP_LAND,   TOPSYNC_OP_LOR,
                                       TOPSYNC_OP_LXOR, TOPSYNC_OP_BAND,   TOPSYNC_OP_BOR,
                                       TOPSYNC_OP_BXOR, TOPSYNC_OP_MINLOC, TOPSYNC_OP_MAXLOC};
    unsigned combos = 0;
    for (;;) { /* the (k + combos)-th valid (type, op), cycling */
        unsigned x = (k + combos) % (TOPSYNC_TYPE_COUNT * 12);
        *t = (topsync_datatype_t)(x % TOPSYNC_TYPE_COUNT);
        *op = ops[x / TOPSYNC_TYPE_COUNT];
        if (topsync_op_check(*op, *t) == 0)
            break;
        combos++;
    }
    *kind = (enum kind)(k % 3);
    *root = (k / 3) % n;
    size_t most = max_bytes / topsync_datatype_size(*t);
    size_t counts[] = {1, 2, 3, most / 2 ? most / 2 : 1, most};
    *count = counts[(k / 7) % 5];
}

static void participant(struct run *run, unsigned rank)
{
    size_t max_bytes = topsync_coll_max_bytes(run->coll);
    unsigned char *send = malloc(max_bytes), *recv = malloc(max_bytes), *want = malloc(max_bytes);
    for (unsigned k = 0; k < run->calls; k++) {
        enum kind kind;
        topsync_datatype_t t;
        topsync_op_t op;
        unsigned root;
        size_t count;
        call_of(k, run->n, &kind, &t, &op, &root, &count, max_bytes);
        size_t bytes = count * topsync_datatype_size(t);
        bool in_place = k % 4 == 1;
        for (size_t j = 0; j < count; j++)
            put(t, send, j, value_of(rank, j, is_unsigned(t), kind == BCAST ? TOPSYNC_OP_SUM : op),
                (int)rank);
        memset(recv, 0xa5, max_bytes);
        if (in_place)
            memcpy(recv, send, bytes);
        int rc = 0;
        bool ok;
        if (kind == BCAST) {
            unsigned char *buf = rank == root ? send : recv;
            if (rank != root)
                memset(buf, 0x5a, bytes);
            rc = topsync_bcast(run->coll, rank, buf, bytes, root);
            for (size_t j = 0; j < count; j++)
                put(t, want, j, value_of(root, j, is_unsigned(t), TOPSYNC_OP_SUM), (int)root);
            ok = same(t, buf, want, count);
        } else {
            const void *src = in_place ? recv : send;
            if (kind == ALLREDUCE)
                rc = topsync_allreduce(run->coll, rank, src, recv, count, t, op);
            else
                rc = topsync_reduce(run->coll, rank, src, recv, count, t, op, root);
            for (size_t j = 0; j < count; j++)
                expect(t, op, run->n, j, want);
            if (kind == REDUCE && rank != root) {
                ok = true; /* recv untouched off the root: its input when in place */
                for (size_t j = 0; j < max_bytes; j++)
                    ok &= recv[j] == (in_place && j < bytes ? send[j] : 0xa5);
            } else {
                ok = same(t, recv, want, count);
            }
        }
        if (rc != 0 || !ok) {
            if (atomic_fetch_add_explicit(&run->failures, 1, memory_order_relaxed) < 5)
                fprintf(stderr, "rank %u call %u: %s %s %s root %u count %zu%s: rc %d, result %s\n",
                        rank, k,
                        kind == BCAST    ? "bcast"
                        : kind == REDUCE ? "reduce"
                                         : "allreduce",
                        topsync_op_name(op), topsync_datatype_name(t), root, count,
                        in_place ? " in place" : "", rc, ok ? "right" : "wrong");
        }
    }
    free(send);
    free(recv);
    free(want);
}

struct thread_arg {
    struct run *run;
    unsigned rank;
};

static void *thread_main(void *p)
{
    struct thread_arg *a = p;
    participant(a->run, a->rank);
    return NULL;
}

static int run_threads(topsync_coll_t *coll, unsigned n, unsigned calls)
{
    struct run run = {.coll = coll, .n = n, .calls = calls};
    pthread_t tid[64];
    struct thread_arg args[64];
    for (unsigned r = 0; r < n; r++) {
        args[r] = (struct thread_arg){&run, r};
        pthread_create(&tid[r], NULL, thread_main, &args[r]);
    }
    for (unsigned r = 0; r < n; r++)
        pthread_join(tid[r], NULL);
    return run.failures;
}

/* n participants on groups of a two-level table: pairs, then quads. */
static topsync_groups_t *two_levels(unsigned n)
{
    int *loc = malloc(2 * n * sizeof *loc);
    for (unsigned i = 0; i < n; i++) {
        loc[i] = (int)(i / 2);
        loc[n + i] = (int)(i / 4);
    }
    topsync_level_t ids[2] = {TOPSYNC_LEVEL_L2, TOPSYNC_LEVEL_NUMA};
    topsync_groups_t *g = NULL;
    topsync_groups_build_table(&g, n, 2, ids, loc);
    free(loc);
    return g;
}

static void test_threads(void)
{
    unsigned sizes[] = {1, 2, 3, 5, 8};
    for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        unsigned n = sizes[s];
        for (int shape = 0; shape < 3; shape++) {
            topsync_coll_options_t o;
            topsync_coll_options_init(&o);
            topsync_groups_t *g = shape ? two_levels(n) : NULL;
            o.barrier.groups = g;
            o.barrier.algorithm = shape == 2 ? "topo/tree" : NULL;
            o.max_bytes = 256;
            topsync_coll_t *c = NULL;
            CHECK_EQ(topsync_coll_create(&c, n, &o), 0);
            topsync_groups_destroy(g);
            if (!c)
                continue;
            int failures = run_threads(c, n, 600);
            if (failures)
                fprintf(stderr, "threads n=%u shape %d: %d failures\n", n, shape, failures);
            CHECK_EQ(failures, 0);
            CHECK_EQ(topsync_coll_destroy(c), 0);
        }
    }
}

/* Processes: fork()ed participants on a segment of the caller's. */
static void test_processes(void)
{
    unsigned n = 4;
    topsync_coll_options_t o;
    topsync_coll_options_init(&o);
    topsync_groups_t *g = two_levels(n);
    o.barrier.groups = g;
    o.max_bytes = 128;
    size_t size = 0;
    CHECK_EQ(topsync_coll_segment_size(n, &o, &size), 0);
    void *seg = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(seg != MAP_FAILED);
    /* everyone attaches before anyone's first call: a pipe per child says
     * "attached", the parent then lets them all go */
    int ready[2], go[2];
    CHECK_EQ(pipe(ready), 0);
    CHECK_EQ(pipe(go), 0);
    pid_t pids[4];
    for (unsigned r = 0; r < n; r++) {
        pids[r] = fork();
        if (pids[r] == 0) {
            topsync_coll_t *c = NULL;
            int rc = topsync_coll_attach(&c, n, &o, seg, size, r);
            char byte = rc == 0 ? 'y' : 'n';
            if (write(ready[1], &byte, 1) != 1 || read(go[0], &byte, 1) != 1 || rc != 0)
                _exit(2);
            struct run run = {.coll = c, .n = n, .calls = 400};
            participant(&run, r);
            topsync_coll_destroy(c);
            _exit(run.failures ? 1 : 0);
        }
    }
    bool all_attached = true;
    for (unsigned r = 0; r < n; r++) {
        char byte = 'n';
        all_attached &= read(ready[0], &byte, 1) == 1 && byte == 'y';
    }
    CHECK(all_attached);
    for (unsigned r = 0; r < n; r++)
        CHECK_EQ(write(go[1], "g", 1), 1);
    for (unsigned r = 0; r < n; r++) {
        int status = -1;
        waitpid(pids[r], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    /* a process with another limit is refused on the same segment */
    topsync_coll_t *c = NULL;
    o.max_bytes = 64;
    CHECK_EQ(topsync_coll_attach(&c, n, &o, seg, size, 1), -EINVAL);
    CHECK_MSG("max_bytes 64");
    munmap(seg, size);
    topsync_groups_destroy(g);
}

/* Floating point: the same bits on every participant, at every call and
 * in every run, though the sum depends on the order of the additions:
 * 1e16 + 1 rounds back to 1e16 (the spacing of doubles there is 2), so
 * ones added one by one to 1e16 vanish where two added first survive. */
struct order_arg {
    topsync_coll_t *c;
    unsigned rank;
    double out;
    int changed; /* calls whose result differed from the first */
};

static double order_value(unsigned rank)
{
    return rank % 4 ? 1.0 : 1e16;
}

static void *order_main(void *p)
{
    struct order_arg *a = p;
    double mine = order_value(a->rank), out = 0, first = 0;
    for (int k = 0; k < 50; k++) {
        topsync_allreduce(a->c, a->rank, &mine, &out, 1, TOPSYNC_TYPE_DOUBLE, TOPSYNC_OP_SUM);
        if (k == 0)
            first = out;
        a->changed += memcmp(&out, &first, sizeof out) != 0;
    }
    a->out = out;
    return NULL;
}

static void test_fixed_order(void)
{
    unsigned n = 8;
    topsync_groups_t *g = two_levels(n);
    topsync_coll_options_t o;
    topsync_coll_options_init(&o);
    o.barrier.groups = g;
    double first = 0;
    for (int round = 0; round < 3; round++) {
        topsync_coll_t *c = NULL;
        CHECK_EQ(topsync_coll_create(&c, n, &o), 0);
        struct order_arg args[8];
        pthread_t tid[8];
        for (unsigned r = 0; r < n; r++) {
            args[r] = (struct order_arg){c, r, 0, 0};
            pthread_create(&tid[r], NULL, order_main, &args[r]);
        }
        for (unsigned r = 0; r < n; r++)
            pthread_join(tid[r], NULL);
        if (round == 0)
            first = args[0].out;
        for (unsigned r = 0; r < n; r++) {
            CHECK(memcmp(&args[r].out, &first, sizeof first) == 0);
            CHECK_EQ(args[r].changed, 0);
        }
        /* under TOPSYNC_REACTIVE=every:N, the calls ran on both
         * configurations (the robust one's last arriver combined) */
        const char *reactive = getenv("TOPSYNC_REACTIVE");
        if (reactive && !strncmp(reactive, "every:", 6))
            CHECK(topsync_barrier_switches(topsync_coll_barrier(c)) > 0);
        topsync_coll_destroy(c);
    }
    /* the groups' order: (a0 + a1) + (a2 + a3), then the quads, which
     * keeps the ones that rank order (((a0 + a1) + a2) + a3) ... loses */
    double a[8], pairs[4], quads[2], in_rank_order = 0;
    for (unsigned r = 0; r < n; r++) {
        a[r] = order_value(r);
        in_rank_order += a[r];
    }
    for (unsigned i = 0; i < 4; i++)
        pairs[i] = a[2 * i] + a[2 * i + 1];
    for (unsigned i = 0; i < 2; i++)
        quads[i] = pairs[2 * i] + pairs[2 * i + 1];
    double want = quads[0] + quads[1];
    CHECK(memcmp(&want, &in_rank_order, sizeof want) != 0); /* the check can fail */
    CHECK(memcmp(&want, &first, sizeof want) == 0);
    topsync_groups_destroy(g);
}

static void *wrap_main(void *p)
{
    struct {
        topsync_coll_t *c;
        unsigned rank;
        uint16_t u16;
        int64_t i64;
    } *a = p;
    uint16_t u = 65535;
    int64_t v = a->rank ? 1 : INT64_MAX;
    topsync_allreduce(a->c, a->rank, &u, &a->u16, 1, TOPSYNC_TYPE_UINT16, TOPSYNC_OP_PROD);
    topsync_allreduce(a->c, a->rank, &v, &a->i64, 1, TOPSYNC_TYPE_INT64, TOPSYNC_OP_SUM);
    return NULL;
}

/* Wrapping arithmetic at the edges of each width (what UBSan would call
 * a signed overflow if the library did it in a promoted signed type). */
static void test_wrap(void)
{
    topsync_coll_t *c = NULL;
    CHECK_EQ(topsync_coll_create(&c, 1, NULL), 0);
    int16_t a[2] = {INT16_MAX, -300}, r16[2];
    CHECK_EQ(topsync_allreduce(c, 0, a, r16, 2, TOPSYNC_TYPE_INT16, TOPSYNC_OP_PROD), 0);
    CHECK(r16[0] == INT16_MAX && r16[1] == -300); /* one participant: its own */
    topsync_coll_destroy(c);
    /* two participants, in one thread each: products that overflow int */
    CHECK_EQ(topsync_coll_create(&c, 2, NULL), 0);
    struct wrap_arg {
        topsync_coll_t *c;
        unsigned rank;
        uint16_t u16;
        int64_t i64;
    } args[2] = {{c, 0, 0, 0}, {c, 1, 0, 0}};
    pthread_t t;
    void *(*fn)(void *) = wrap_main;
    pthread_create(&t, NULL, fn, &args[1]);
    fn(&args[0]);
    pthread_join(t, NULL);
    CHECK_EQ(args[0].u16, (uint16_t)(65535u * 65535u));
    CHECK_EQ(args[0].i64, INT64_MIN); /* INT64_MAX + 1 wraps */
    topsync_coll_destroy(c);
}

static void test_errors(void)
{
    topsync_coll_t *c = NULL;
    topsync_coll_options_t o;
    topsync_coll_options_init(&o);
    o.barrier.algorithm = "dissemination";
    CHECK_EQ(topsync_coll_create(&c, 2, &o), -EINVAL);
    CHECK_MSG("'dissemination' cannot carry data");
    o.barrier.algorithm = "topology";
    CHECK_EQ(topsync_coll_create(&c, 2, &o), -EINVAL);
    o.barrier.algorithm = "topo:bogus";
    CHECK_EQ(topsync_coll_create(&c, 2, &o), -EINVAL);
    o.barrier.algorithm = NULL;
    o.max_bytes = TOPSYNC_COLL_MAX_BYTES_LIMIT + 1;
    CHECK_EQ(topsync_coll_create(&c, 2, &o), -EINVAL);
    CHECK_MSG("max_bytes");
    CHECK_EQ(topsync_coll_create(&c, 0, NULL), -EINVAL);
    CHECK_EQ(topsync_coll_create(NULL, 2, NULL), -EINVAL);
    /* a count the API accepts whose slots no machine has: refused before
     * the barrier under it is built (that took seconds and gigabytes) */
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    CHECK_EQ(topsync_coll_create(&c, 1u << 24, NULL), -ENOMEM);
    CHECK_MSG("16777216 participants with max_bytes 4096 need");
    CHECK_MSG("more than this machine's memory");
    size_t bytes = 0;
    CHECK_EQ(topsync_coll_segment_size(1u << 24, NULL, &bytes), -ENOMEM);
    CHECK_MSG("more than this machine's memory");
    getrusage(RUSAGE_SELF, &after);
    CHECK(after.ru_maxrss - before.ru_maxrss < 64 * 1024); /* KiB: nothing built */

    setenv("TOPSYNC_COLL_MAX_BYTES", "4k", 1);
    CHECK_EQ(topsync_coll_create(&c, 2, NULL), -EINVAL);
    CHECK_MSG("TOPSYNC_COLL_MAX_BYTES='4k' is not valid");
    setenv("TOPSYNC_COLL_MAX_BYTES", "0", 1);
    CHECK_EQ(topsync_coll_create(&c, 2, NULL), -EINVAL);
    setenv("TOPSYNC_COLL_MAX_BYTES", "64", 1);
    CHECK_EQ(topsync_coll_create(&c, 1, NULL), 0);
    CHECK_EQ(topsync_coll_max_bytes(c), 64);
    unsetenv("TOPSYNC_COLL_MAX_BYTES");
    CHECK(topsync_coll_barrier(c) != NULL);
    CHECK_STR(topsync_barrier_algorithm(topsync_coll_barrier(c)), "topo:unbound/global");

    int v[32] = {0}, w[32];
    CHECK_EQ(topsync_allreduce(c, 0, v, w, 17, TOPSYNC_TYPE_INT32, TOPSYNC_OP_SUM), -EMSGSIZE);
    CHECK_MSG("exceed the limit of 64 bytes");
    CHECK_EQ(topsync_allreduce(c, 0, v, w, 16, TOPSYNC_TYPE_INT32, TOPSYNC_OP_SUM), 0);
    CHECK_EQ(topsync_allreduce(c, 1, v, w, 1, TOPSYNC_TYPE_INT32, TOPSYNC_OP_SUM), -EINVAL);
    CHECK_MSG("rank 1 out of range");
    CHECK_EQ(topsync_reduce(c, 0, v, w, 1, TOPSYNC_TYPE_INT32, TOPSYNC_OP_SUM, 1), -EINVAL);
    CHECK_MSG("root 1 out of range");
    CHECK_EQ(topsync_allreduce(c, 0, v, w, 1, TOPSYNC_TYPE_DOUBLE, TOPSYNC_OP_BXOR), -EINVAL);
    CHECK_MSG("op bxor does not apply to double (it takes integer types)");
    CHECK_EQ(topsync_allreduce(c, 0, v, w, 1, TOPSYNC_TYPE_INT32, TOPSYNC_OP_MINLOC), -EINVAL);
    CHECK_EQ(topsync_allreduce(c, 0, v, w, 1, (topsync_datatype_t)99, TOPSYNC_OP_SUM), -EINVAL);
    CHECK_MSG("unknown datatype 99");
    CHECK_EQ(topsync_allreduce(c, 0, v, w, 1, TOPSYNC_TYPE_INT32, (topsync_op_t)-1), -EINVAL);
    CHECK_EQ(topsync_allreduce(c, 0, NULL, w, 1, TOPSYNC_TYPE_INT32, TOPSYNC_OP_SUM), -EINVAL);
    CHECK_EQ(topsync_allreduce(c, 0, NULL, NULL, 0, TOPSYNC_TYPE_INT32, TOPSYNC_OP_SUM), 0);
    CHECK_EQ(topsync_bcast(c, 0, v, 65, 0), -EMSGSIZE);
    CHECK_EQ(topsync_bcast(NULL, 0, v, 4, 0), -EINVAL);
    CHECK_EQ(topsync_coll_destroy(c), 0);
    CHECK_EQ(topsync_coll_destroy(NULL), 0);

    CHECK_EQ(topsync_datatype_size(TOPSYNC_TYPE_DOUBLE_INT), 16);
    CHECK_EQ(topsync_datatype_size(TOPSYNC_TYPE_COUNT), 0);
    CHECK_STR(topsync_op_name(TOPSYNC_OP_MAXLOC), "maxloc");
    CHECK_STR(topsync_datatype_name(TOPSYNC_TYPE_2INT), "2int");
}

/* Oversubscribed: more threads than CPUs, the default wait policy,
 * every call checked. */
static void test_oversubscribed(void)
{
    unsigned n = 16;
    topsync_coll_options_t o;
    topsync_coll_options_init(&o);
    o.max_bytes = 64;
    topsync_coll_t *c = NULL;
    CHECK_EQ(topsync_coll_create(&c, n, &o), 0);
    if (!c)
        return;
    CHECK_EQ(run_threads(c, n, 300), 0);
    topsync_coll_destroy(c);
}

/* One-way calls in a stream: the root of a broadcast and the non-roots of
 * a reduce do not wait for the others, so the flow control (a slot is
 * reused only when everybody is done with the call two earlier) is all
 * that keeps a fast root from overwriting data a slow reader still reads. */
struct stream_arg {
    topsync_coll_t *c;
    unsigned rank, n;
    int bad;
};

static void *stream_main(void *p)
{
    struct stream_arg *a = p;
    for (int k = 1; k <= 3000; k++) {
        unsigned root = (unsigned)(k / 500) % a->n;
        int64_t v[5] = {0};
        if (a->rank == root)
            for (int j = 0; j < 5; j++)
                v[j] = k * 10 + j;
        size_t bytes = k % 2 ? sizeof v[0] : sizeof v; /* on the line, and in the slots */
        if (topsync_bcast(a->c, a->rank, v, bytes, root) != 0 || v[0] != k * 10 ||
            (bytes == sizeof v && v[4] != k * 10 + 4))
            a->bad++;
        int64_t mine[5] = {k, a->rank, 1, 2, 3}, sum[5] = {0};
        if (topsync_reduce(a->c, a->rank, mine, sum, k % 2 ? 1 : 5, TOPSYNC_TYPE_INT64,
                           TOPSYNC_OP_SUM, root) != 0 ||
            (a->rank == root && (sum[0] != (int64_t)a->n * k ||
                                 (k % 2 == 0 && sum[1] != (int64_t)(a->n * (a->n - 1) / 2)))))
            a->bad++;
    }
    return NULL;
}

static void test_one_way_stream(void)
{
    for (unsigned n = 2; n <= 6; n += 4) {
        topsync_coll_options_t o;
        topsync_coll_options_init(&o);
        o.max_bytes = 64;
        topsync_coll_t *c = NULL;
        CHECK_EQ(topsync_coll_create(&c, n, &o), 0);
        struct stream_arg args[6];
        pthread_t tid[6];
        for (unsigned r = 0; r < n; r++) {
            args[r] = (struct stream_arg){c, r, n, 0};
            pthread_create(&tid[r], NULL, stream_main, &args[r]);
        }
        int bad = 0;
        for (unsigned r = 0; r < n; r++) {
            pthread_join(tid[r], NULL);
            bad += args[r].bad;
        }
        CHECK_EQ(bad, 0);
        topsync_coll_destroy(c);
    }
}

/* A participant that never comes: the one-way calls time out naming it. */
struct late_arg {
    topsync_coll_t *c;
    unsigned rank;
    int bcast_rc, reduce_rc;
};

static void *late_main(void *p)
{
    struct late_arg *a = p;
    int v = 0;
    a->bcast_rc = topsync_bcast(a->c, a->rank, &v, sizeof v, 2); /* 2 never comes */
    if (a->rank == 1)
        CHECK_MSG("participant(s) not arrived: 2");
    return NULL;
}

static void test_one_way_timeout(void)
{
    topsync_coll_options_t o;
    topsync_coll_options_init(&o);
    o.barrier.timeout_seconds = 0.2;
    topsync_coll_t *c = NULL;
    CHECK_EQ(topsync_coll_create(&c, 3, &o), 0);
    struct late_arg a = {c, 1, 0, 0};
    pthread_t t;
    pthread_create(&t, NULL, late_main, &a);
    pthread_join(t, NULL);
    CHECK_EQ(a.bcast_rc, -ETIMEDOUT);
    int v = 1, sum = 0;
    CHECK_EQ(topsync_reduce(c, 0, &v, &sum, 1, TOPSYNC_TYPE_INT32, TOPSYNC_OP_SUM, 0), -ETIMEDOUT);
    CHECK_MSG("participant(s) not arrived: 1, 2");
    topsync_coll_destroy(c);
}

/*
 * Reactive collectives (docs/design.md section 10.5): their topo reacts
 * under TOPSYNC_REACTIVE, with the robust configuration beside it, whose
 * last arriver combines as topo's leaders would. Forced switches
 * (every:N) run the tests of values, order and processes again: the
 * results are right at every call and have topo's bits (test_fixed_order
 * computes them by hand from the groups' order, which a combination in
 * rank order misses).
 */
static bool explains_reactive(unsigned n, const char *mode)
{
    setenv("TOPSYNC_REACTIVE", mode, 1);
    topsync_coll_t *c = NULL;
    CHECK_EQ(topsync_coll_create(&c, n, NULL), 0);
    bool reacts = c && strstr(topsync_barrier_explain(topsync_coll_barrier(c)), "reactive");
    topsync_coll_destroy(c);
    return reacts;
}

static void test_reactive(void)
{
    CHECK(explains_reactive(2, "on"));
    CHECK(explains_reactive(8, "on"));
    CHECK(!explains_reactive(1, "on"));
    CHECK(!explains_reactive(8, "off"));
    CHECK(explains_reactive(1, "every:1"));

    /* the plan's page and the robust part follow in a segment */
    topsync_coll_options_t o;
    topsync_coll_options_init(&o);
    size_t fixed = 0, reacting = 0;
    setenv("TOPSYNC_REACTIVE", "off", 1);
    CHECK_EQ(topsync_coll_segment_size(4, &o, &fixed), 0);
    setenv("TOPSYNC_REACTIVE", "every:2", 1);
    CHECK_EQ(topsync_coll_segment_size(4, &o, &reacting), 0);
    CHECK(reacting > fixed);

    /* a process that would not switch where the others do is refused */
    void *seg = mmap(NULL, reacting, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(seg != MAP_FAILED);
    topsync_coll_t *first = NULL, *other = NULL;
    CHECK_EQ(topsync_coll_attach(&first, 4, &o, seg, reacting, 0), 0);
    setenv("TOPSYNC_REACTIVE", "off", 1);
    CHECK_EQ(topsync_coll_attach(&other, 4, &o, seg, reacting, 1), -EINVAL);
    CHECK_MSG("different");
    topsync_coll_destroy(first);
    munmap(seg, reacting);

    static const char *const forced[] = {"every:1", "every:4"};
    for (unsigned i = 0; i < 2; i++) {
        setenv("TOPSYNC_REACTIVE", forced[i], 1);
        test_threads();
        test_fixed_order();
        test_processes();
        test_oversubscribed();
    }
    unsetenv("TOPSYNC_REACTIVE");
}

int main(void)
{
    test_errors();
    test_wrap();
    test_threads();
    test_fixed_order();
    test_processes();
    test_oversubscribed();
    test_one_way_stream();
    test_one_way_timeout();
    test_reactive();
    return check_summary();
}
