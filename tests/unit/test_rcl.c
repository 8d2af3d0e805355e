/*
 * The RCL runtime: execute and its result, locks of one server excluding
 * each other, blocking critical sections, idle servers, every misuse,
 * RCLAwareMalloc's bookkeeping and page placement, worker pinning.
 * Hangs are failures: alarm() ends the program.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <topsync.h>

#include "check.h"

static topsync_rcl_runtime_t *new_runtime(void)
{
    topsync_rcl_runtime_t *rt = NULL;
    int rc = topsync_rcl_runtime_create(&rt, NULL);
    CHECK_EQ(rc, 0);
    if (rc)
        fprintf(stderr, "%s\n", topsync_error_message());
    return rt;
}

/* ---- execute returns fn's result, runs on the server's core ------------- */

static void *add_one(void *arg)
{
    return (void *)((uintptr_t)arg + 1);
}

static void *where_am_i(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)sched_getcpu();
}

static void test_execute_result(void)
{
    topsync_rcl_runtime_t *rt = new_runtime();
    topsync_rcl_server_t *s;
    topsync_rcl_lock_t *l;
    CHECK_EQ(topsync_rcl_server_start(rt, 0, &s), 0);
    CHECK_EQ(topsync_rcl_server_core(s), 0);
    CHECK_EQ(topsync_rcl_lock_create(s, &l), 0);
    for (uintptr_t i = 0; i < 1000; i++)
        CHECK_EQ((uintptr_t)topsync_rcl_execute(l, add_one, (void *)i), i + 1);
    /* the critical section runs on a PU of the server's core */
    hwloc_obj_t core = hwloc_get_obj_by_type(
        topsync_topology_hwloc(topsync_rcl_runtime_topology(rt)), HWLOC_OBJ_CORE, 0);
    int cpu = (int)(intptr_t)topsync_rcl_execute(l, where_am_i, NULL);
    hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(
        topsync_topology_hwloc(topsync_rcl_runtime_topology(rt)), (unsigned)cpu);
    CHECK(core && pu && hwloc_bitmap_isincluded(pu->cpuset, core->cpuset));
    CHECK_EQ(topsync_rcl_lock_destroy(l), 0);
    CHECK_EQ(topsync_rcl_server_stop(s), 0);
    CHECK_EQ(topsync_rcl_runtime_destroy(rt), 0);
}

/* ---- increments by many threads on several locks of one server ---------- */

struct counter {
    long value;
    int inside; /* plain: a second critical section inside would see 1 */
    int overlaps;
};

static void *increment(void *arg)
{
    struct counter *c = arg;
    if (c->inside)
        c->overlaps++;
    c->inside = 1;
    c->value++;
    c->inside = 0;
    return NULL;
}

struct worker_args {
    topsync_rcl_lock_t **locks;
    struct counter *counters;
    unsigned nlocks, ops, id;
};

static void *worker(void *p)
{
    struct worker_args *a = p;
    for (unsigned i = 0; i < a->ops; i++) {
        unsigned k = (i + a->id) % a->nlocks;
        topsync_rcl_execute(a->locks[k], increment, &a->counters[k]);
    }
    return NULL;
}

static void run_increments(topsync_rcl_lock_t **locks, struct counter *counters, unsigned nlocks,
                           unsigned threads, unsigned ops)
{
    pthread_t t[64];
    struct worker_args a[64];
    for (unsigned i = 0; i < threads; i++) {
        a[i] = (struct worker_args){locks, counters, nlocks, ops, i};
        CHECK_EQ(pthread_create(&t[i], NULL, worker, &a[i]), 0);
    }
    for (unsigned i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
}

static void test_increments_and_cycles(void)
{
    topsync_rcl_runtime_t *rt = new_runtime();
    for (unsigned cycle = 0; cycle < 5; cycle++) {
        topsync_rcl_server_t *s[2];
        topsync_rcl_lock_t *locks[4];
        struct counter counters[4] = {{0}};
        CHECK_EQ(topsync_rcl_server_start(rt, TOPSYNC_RCL_CORE_AUTO, &s[0]), 0);
        CHECK_EQ(topsync_rcl_server_start(rt, TOPSYNC_RCL_CORE_AUTO, &s[1]), 0);
        for (unsigned k = 0; k < 4; k++)
            CHECK_EQ(topsync_rcl_lock_create(s[k % 2], &locks[k]), 0);
        unsigned threads = 1 + cycle * 3, ops = 2000;
        run_increments(locks, counters, 4, threads, ops);
        long total = 0;
        for (unsigned k = 0; k < 4; k++) {
            total += counters[k].value;
            CHECK_EQ(counters[k].overlaps, 0);
            CHECK_EQ(topsync_rcl_lock_destroy(locks[k]), 0);
        }
        CHECK_EQ(total, (long)threads * ops);
        CHECK_EQ(topsync_rcl_server_stop(s[0]), 0);
        CHECK_EQ(topsync_rcl_server_stop(s[1]), 0);
    }
    CHECK_EQ(topsync_rcl_runtime_destroy(rt), 0);
}

/* ---- a blocking critical section does not wedge the other locks --------- */

struct blocker {
    sem_t entered, release;
    struct counter count;
};

static void *block_in_cs(void *arg)
{
    struct blocker *b = arg;
    sem_post(&b->entered);
    sem_wait(&b->release); /* sleeps inside the critical section */
    increment(&b->count);
    return NULL;
}

struct blocked_call {
    topsync_rcl_lock_t *lock;
    struct blocker *b;
};

static void *call_blocking(void *p)
{
    struct blocked_call *c = p;
    topsync_rcl_execute(c->lock, block_in_cs, c->b);
    return NULL;
}

static void *call_increment(void *p)
{
    struct blocked_call *c = p;
    topsync_rcl_execute(c->lock, increment, &c->b->count);
    return NULL;
}

static void test_blocking_cs(void)
{
    topsync_rcl_options_t o;
    topsync_rcl_options_init(&o);
    o.takeover_us = 2000;
    topsync_rcl_runtime_t *rt = NULL;
    CHECK_EQ(topsync_rcl_runtime_create(&rt, &o), 0);
    topsync_rcl_server_t *s;
    topsync_rcl_lock_t *a, *b, *c;
    CHECK_EQ(topsync_rcl_server_start(rt, 0, &s), 0);
    CHECK_EQ(topsync_rcl_lock_create(s, &a), 0);
    CHECK_EQ(topsync_rcl_lock_create(s, &b), 0);
    CHECK_EQ(topsync_rcl_lock_create(s, &c), 0);
    struct blocker ba = {.count = {0}}, bb = {.count = {0}};
    sem_init(&ba.entered, 0, 0);
    sem_init(&ba.release, 0, 0);
    sem_init(&bb.entered, 0, 0);
    sem_init(&bb.release, 0, 0);

    /* A blocks; B must keep being served meanwhile. */
    pthread_t ta, tb, ta2;
    struct blocked_call ca = {a, &ba}, cb = {b, &bb};
    pthread_create(&ta, NULL, call_blocking, &ca);
    sem_wait(&ba.entered);
    struct counter cc = {0};
    for (int i = 0; i < 200; i++)
        topsync_rcl_execute(c, increment, &cc);
    CHECK_EQ(cc.value, 200);

    /* A second request on A waits for A's blocked critical section. */
    struct blocked_call ca2 = {a, &ba};
    pthread_create(&ta2, NULL, call_increment, &ca2);
    usleep(20000);
    CHECK_EQ(ba.count.value, 0); /* neither A's first nor second ran to its end */
    CHECK_EQ(topsync_rcl_lock_destroy(a), -EBUSY);
    CHECK_MSG("pending or running");

    /* B blocks too: C is still served (a new standby took over). */
    pthread_create(&tb, NULL, call_blocking, &cb);
    sem_wait(&bb.entered);
    for (int i = 0; i < 200; i++)
        topsync_rcl_execute(c, increment, &cc);
    CHECK_EQ(cc.value, 400);
    CHECK_EQ(cc.overlaps, 0);
    topsync_rcl_server_stats_t st;
    CHECK_EQ(topsync_rcl_server_stats(s, &st), 0);
    CHECK(st.takeovers >= 2);
    CHECK(st.threads >= 4); /* two blocked, one serving, one standby */

    sem_post(&ba.release);
    sem_post(&bb.release);
    pthread_join(ta, NULL);
    pthread_join(ta2, NULL);
    pthread_join(tb, NULL);
    CHECK_EQ(ba.count.value, 2);
    CHECK_EQ(ba.count.overlaps, 0); /* A's blocked section, then A's increment */
    CHECK_EQ(bb.count.value, 1);
    for (int i = 0; i < 100; i++)
        topsync_rcl_execute(a, increment, &cc);
    CHECK_EQ(cc.value, 500);
    CHECK_EQ(topsync_rcl_lock_destroy(a), 0);
    CHECK_EQ(topsync_rcl_lock_destroy(b), 0);
    CHECK_EQ(topsync_rcl_lock_destroy(c), 0);
    CHECK_EQ(topsync_rcl_server_stop(s), 0);
    CHECK_EQ(topsync_rcl_runtime_destroy(rt), 0);
    sem_destroy(&ba.entered);
    sem_destroy(&ba.release);
    sem_destroy(&bb.entered);
    sem_destroy(&bb.release);
}

/* A critical section that executes on another lock of the same server. */
struct nested {
    topsync_rcl_lock_t *inner;
    struct counter *counter;
};

static void *nested_cs(void *p)
{
    struct nested *n = p;
    topsync_rcl_execute(n->inner, increment, n->counter);
    return (void *)42;
}

static void *same_lock_cs(void *p)
{
    struct nested *n = p;
    void *r;
    int rc = topsync_rcl_execute_checked(n->inner, increment, n->counter, &r);
    return (void *)(intptr_t)rc;
}

static void test_nested(void)
{
    topsync_rcl_runtime_t *rt = new_runtime();
    topsync_rcl_server_t *s;
    topsync_rcl_lock_t *outer, *inner;
    CHECK_EQ(topsync_rcl_server_start(rt, 1, &s), 0);
    CHECK_EQ(topsync_rcl_lock_create(s, &outer), 0);
    CHECK_EQ(topsync_rcl_lock_create(s, &inner), 0);
    struct counter c = {0};
    struct nested n = {inner, &c};
    for (int i = 0; i < 3; i++)
        CHECK_EQ((intptr_t)topsync_rcl_execute(outer, nested_cs, &n), 42);
    CHECK_EQ(c.value, 3);
    /* on its own lock: an error instead of waiting for itself */
    struct nested self = {outer, &c};
    CHECK_EQ((intptr_t)topsync_rcl_execute(outer, same_lock_cs, &self), -EDEADLK);
    CHECK_EQ(c.value, 3);
    CHECK_EQ(topsync_rcl_lock_destroy(outer), 0);
    CHECK_EQ(topsync_rcl_lock_destroy(inner), 0);
    CHECK_EQ(topsync_rcl_server_stop(s), 0);
    CHECK_EQ(topsync_rcl_runtime_destroy(rt), 0);
}

/* ---- an idle server sleeps ------------------------------------------------ */

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_idle_server_sleeps(void)
{
    topsync_rcl_runtime_t *rt = new_runtime();
    topsync_rcl_server_t *s;
    topsync_rcl_lock_t *l;
    CHECK_EQ(topsync_rcl_server_start(rt, 1, &s), 0);
    CHECK_EQ(topsync_rcl_lock_create(s, &l), 0);
    topsync_rcl_execute(l, add_one, NULL);
    usleep(100000); /* past the idle spin and yields */
    double before = cpu_seconds();
    usleep(500000);
    double used = cpu_seconds() - before;
    /* a spinning server would use the whole 0.5 s of its core */
    CHECK(used < 0.1);
    if (used >= 0.1)
        fprintf(stderr, "idle server used %.3f s of CPU in 0.5 s\n", used);
    /* and the next request wakes it */
    CHECK_EQ((uintptr_t)topsync_rcl_execute(l, add_one, (void *)6), 7);
    CHECK_EQ(topsync_rcl_lock_destroy(l), 0);
    CHECK_EQ(topsync_rcl_server_stop(s), 0);
    CHECK_EQ(topsync_rcl_runtime_destroy(rt), 0);
}

/* ---- misuse ----------------------------------------------------------------- */

static void *exec_on(void *p)
{
    topsync_rcl_lock_t *l = p;
    void *r;
    return (void *)(intptr_t)topsync_rcl_execute_checked(l, add_one, NULL, &r);
}

/* Runs fn in a child with stderr captured; the child's status, and what it
 * printed (up to size - 1 bytes) in out. */
static int child_status(void (*fn)(void), char *out, size_t size)
{
    char path[] = "/tmp/topsync-test-rcl-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    unlink(path);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd, 2);
        fn();
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ssize_t n = pread(fd, out, size - 1, 0);
    out[n > 0 ? n : 0] = '\0';
    close(fd);
    return status;
}

static topsync_rcl_lock_t *destroyed_lock;
static void execute_destroyed_lock(void)
{
    topsync_rcl_execute(destroyed_lock, add_one, NULL);
}

static void test_misuse(void)
{
    topsync_rcl_runtime_t *rt = new_runtime();
    topsync_rcl_server_t *s;
    topsync_rcl_lock_t *l;
    void *r;
    CHECK_EQ(topsync_rcl_server_start(rt, 99, &s), -EINVAL);
    CHECK_MSG("out of range");
    CHECK_EQ(topsync_rcl_server_start(rt, -7, &s), -EINVAL);
    CHECK_EQ(topsync_rcl_server_start(rt, 0, &s), 0);
    CHECK_EQ(topsync_rcl_lock_create(s, &l), 0);
    CHECK_EQ(topsync_rcl_execute_checked(l, NULL, NULL, &r), -EINVAL);
    CHECK_MSG("fn is NULL");
    CHECK_EQ(topsync_rcl_execute_checked(NULL, add_one, NULL, &r), -EINVAL);
    CHECK_EQ(topsync_rcl_server_stop(s), -EBUSY);
    CHECK_MSG("lock(s) still attached");
    CHECK_EQ(topsync_rcl_runtime_destroy(rt), -EBUSY);
    CHECK_MSG("still running");
    CHECK_EQ(topsync_rcl_lock_destroy(l), 0);
    CHECK_EQ(topsync_rcl_lock_destroy(l), -EINVAL);
    CHECK_MSG("already destroyed");
    CHECK_EQ(topsync_rcl_execute_checked(l, add_one, NULL, &r), -EINVAL);
    CHECK_MSG("was destroyed");

    /* the unchecked call aborts with the message */
    destroyed_lock = l;
    char out[512];
    int status = child_status(execute_destroyed_lock, out, sizeof out);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    CHECK(strstr(out, "was destroyed") != NULL);
    CHECK_EQ(topsync_rcl_server_stop(s), 0);

    /* more client threads than max_clients */
    topsync_rcl_options_t o;
    topsync_rcl_options_init(&o);
    o.max_clients = 2;
    topsync_rcl_runtime_t *small;
    CHECK_EQ(topsync_rcl_runtime_create(&small, &o), 0);
    CHECK_EQ(topsync_rcl_server_start(small, 0, &s), 0);
    CHECK_EQ(topsync_rcl_lock_create(s, &l), 0);
    CHECK_EQ(topsync_rcl_execute_checked(l, add_one, NULL, &r), 0); /* main: slot 1 */
    /* slots are released when threads exit: many short-lived threads fit */
    for (int i = 0; i < 10; i++) {
        pthread_t t;
        void *rc;
        pthread_create(&t, NULL, exec_on, l);
        pthread_join(t, &rc);
        CHECK_EQ((intptr_t)rc, 0);
    }
    /* two live threads beside main: the third client gets -ENOSPC */
    struct blocker b = {.count = {0}};
    sem_init(&b.entered, 0, 0);
    sem_init(&b.release, 0, 0);
    topsync_rcl_lock_t *l2;
    CHECK_EQ(topsync_rcl_lock_create(s, &l2), 0);
    struct blocked_call bc = {l2, &b};
    pthread_t holder, extra;
    pthread_create(&holder, NULL, call_blocking, &bc); /* slot 2, held while blocked */
    sem_wait(&b.entered);
    void *rc;
    pthread_create(&extra, NULL, exec_on, l);
    pthread_join(extra, &rc);
    CHECK_EQ((intptr_t)rc, -ENOSPC);
    sem_post(&b.release);
    pthread_join(holder, NULL);
    sem_destroy(&b.entered);
    sem_destroy(&b.release);
    CHECK_EQ(topsync_rcl_lock_destroy(l), 0);
    CHECK_EQ(topsync_rcl_lock_destroy(l2), 0);
    CHECK_EQ(topsync_rcl_server_stop(s), 0);
    CHECK_EQ(topsync_rcl_runtime_destroy(small), 0);

    /* live blocks keep the runtime */
    void *block = topsync_rcl_malloc(rt, 100);
    CHECK(block != NULL);
    CHECK_EQ(topsync_rcl_runtime_destroy(rt), -EBUSY);
    CHECK_MSG("not freed yet");
    topsync_rcl_free(rt, block);
    CHECK_EQ(topsync_rcl_runtime_destroy(rt), 0);

    /* every entry point refuses NULL with a message */
    rt = new_runtime();
    topsync_rcl_server_stats_t sst;
    topsync_rcl_alloc_stats_t ast;
    unsigned core;
    pthread_t tid;
    CHECK_EQ(topsync_rcl_runtime_create(NULL, NULL), -EINVAL);
    CHECK_MSG("out is NULL");
    CHECK_EQ(topsync_rcl_runtime_destroy(NULL), 0);
    CHECK_EQ(topsync_rcl_server_start(NULL, 0, &s), -EINVAL);
    CHECK_EQ(topsync_rcl_server_start(rt, 0, NULL), -EINVAL);
    CHECK_EQ(topsync_rcl_server_stop(NULL), -EINVAL);
    CHECK_EQ(topsync_rcl_server_core(NULL), -EINVAL);
    CHECK_EQ(topsync_rcl_server_stats(NULL, &sst), -EINVAL);
    CHECK_EQ(topsync_rcl_lock_create(NULL, &l), -EINVAL);
    CHECK_EQ(topsync_rcl_lock_destroy(NULL), -EINVAL);
    CHECK_EQ(topsync_rcl_alloc_stats(NULL, &ast), -EINVAL);
    CHECK_EQ(topsync_rcl_alloc_stats(rt, NULL), -EINVAL);
    CHECK_EQ(topsync_rcl_worker_pin(NULL, &core), -EINVAL);
    CHECK_EQ(topsync_rcl_worker_pin(rt, NULL), -EINVAL);
    CHECK_EQ(topsync_rcl_worker_unpin(NULL, 0), -EINVAL);
    CHECK_EQ(topsync_rcl_worker_unpin(rt, 0), -EINVAL); /* nobody pinned there */
    CHECK_MSG("nothing to remove");
    CHECK_EQ(topsync_rcl_thread_create(NULL, &tid, NULL, add_one, NULL), -EINVAL);
    CHECK_EQ(topsync_rcl_thread_create(rt, &tid, NULL, add_one, NULL), -EAGAIN); /* no server */
    CHECK(topsync_rcl_malloc(NULL, 10) == NULL && errno == EINVAL);
    CHECK(topsync_rcl_runtime_topology(NULL) == NULL);
    topsync_rcl_options_init(NULL); /* accepted, does nothing */
    o.max_clients = 1u << 30;
    CHECK_EQ(topsync_rcl_runtime_create(&small, &o), -EINVAL);
    CHECK_MSG("max_clients");
    topsync_rcl_options_init(&o);
    o.wait = (topsync_wait_policy_t)42;
    CHECK_EQ(topsync_rcl_runtime_create(&small, &o), -EINVAL);
    CHECK_MSG("valid: spin, yield, block");
    topsync_rcl_options_init(&o);
    o.placement = (topsync_rcl_policy_t)42;
    CHECK_EQ(topsync_rcl_runtime_create(&small, &o), -EINVAL);
    CHECK_MSG("valid: pack, spread, default");
    CHECK_EQ(topsync_rcl_runtime_destroy(rt), 0);

    /* configuration */
    setenv("TOPSYNC_RCL_PLACEMENT", "nearest", 1);
    CHECK_EQ(topsync_rcl_runtime_create(&rt, NULL), -EINVAL);
    CHECK_MSG("valid: pack, spread, default");
    setenv("TOPSYNC_RCL_PLACEMENT", "spread", 1);
    setenv("TOPSYNC_WAIT", "nap", 1);
    CHECK_EQ(topsync_rcl_runtime_create(&rt, NULL), -EINVAL);
    CHECK_MSG("valid: spin, yield, block");
    unsetenv("TOPSYNC_WAIT");
    CHECK_EQ(topsync_rcl_runtime_create(&rt, NULL), 0);
    CHECK_EQ(topsync_rcl_runtime_destroy(rt), 0);
    unsetenv("TOPSYNC_RCL_PLACEMENT");
}

/* A server on a core outside the process's cpuset. */
static void test_outside_cpuset(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        topsync_topology_t *t;
        if (topsync_topology_load(&t))
            _exit(2);
        hwloc_topology_t h = topsync_topology_hwloc(t);
        hwloc_obj_t core0 = hwloc_get_obj_by_type(h, HWLOC_OBJ_CORE, 0);
        unsigned ncores = topsync_topology_ncores(t);
        if (ncores < 2 || hwloc_set_cpubind(h, core0->cpuset, HWLOC_CPUBIND_PROCESS) < 0)
            _exit(3);
        topsync_topology_destroy(t);
        topsync_rcl_runtime_t *rt;
        topsync_rcl_server_t *s;
        if (topsync_rcl_runtime_create(&rt, NULL))
            _exit(4);
        int rc = topsync_rcl_server_start(rt, 1, &s);
        int ok = rc == -EINVAL && strstr(topsync_error_message(), "outside the process's cpuset");
        if (ok && topsync_rcl_server_start(rt, 0, &s) == 0) /* its own core is fine */
            ok = topsync_rcl_server_stop(s) == 0;
        else
            ok = 0;
        topsync_rcl_runtime_destroy(rt);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* ---- RCLAwareMalloc -------------------------------------------------------- */

static int on_server_node(topsync_rcl_runtime_t *rt, void *p, size_t size)
{
    hwloc_topology_t h = topsync_topology_hwloc(topsync_rcl_runtime_topology(rt));
    hwloc_nodeset_t where = hwloc_bitmap_alloc(), node = hwloc_bitmap_alloc();
    topsync_rcl_alloc_stats_t st;
    topsync_rcl_alloc_stats(rt, &st);
    hwloc_obj_t numa = hwloc_get_obj_by_type(h, HWLOC_OBJ_NUMANODE, (unsigned)st.memory_node);
    int ok = numa && hwloc_get_area_memlocation(h, p, size, where, HWLOC_MEMBIND_BYNODESET) == 0 &&
             !hwloc_bitmap_iszero(where) && hwloc_bitmap_isincluded(where, numa->nodeset);
    hwloc_bitmap_free(where);
    hwloc_bitmap_free(node);
    return ok;
}

static void test_alloc(void)
{
    topsync_rcl_runtime_t *rt = new_runtime();
    size_t big = 1u << 22;
    topsync_rcl_alloc_stats_t st;
    char *early = topsync_rcl_malloc(rt, big);
    int *small = topsync_rcl_calloc(rt, 10, sizeof(int));
    char *gone = topsync_rcl_malloc(rt, 1000);
    CHECK(early && small && gone);
    CHECK(((uintptr_t)early % 64) == 0);
    memset(early, 7, big);
    for (int i = 0; i < 10; i++)
        CHECK_EQ(small[i], 0);
    topsync_rcl_free(rt, gone);
    CHECK_EQ(topsync_rcl_alloc_stats(rt, &st), 0);
    CHECK_EQ(st.recorded_blocks, 2);
    CHECK_EQ(st.migrated_blocks, 0);
    CHECK_EQ(st.memory_node, -1);

    topsync_rcl_server_t *s, *s2;
    CHECK_EQ(topsync_rcl_server_start(rt, TOPSYNC_RCL_CORE_AUTO, &s), 0);
    topsync_rcl_alloc_stats(rt, &st);
    CHECK_EQ(st.recorded_blocks, 0);
    CHECK_EQ(st.migrated_blocks, 2);
    CHECK(st.migrated_bytes >= big - 8192); /* whole pages of the big block */
    CHECK(st.memory_node >= 0);
    CHECK(on_server_node(rt, early, big));
    CHECK_EQ(early[big - 1], 7); /* migration keeps the contents */

    char *late = topsync_rcl_malloc(rt, big);
    memset(late, 1, big);
    char *late_small = topsync_rcl_malloc(rt, 16);
    topsync_rcl_alloc_stats(rt, &st);
    CHECK_EQ(st.bound_blocks, 1);
    CHECK_EQ(st.default_blocks, 1);
    CHECK(on_server_node(rt, late, big));
    late = topsync_rcl_realloc(rt, late, 2 * big);
    CHECK(late && late[big - 1] == 1);

    /* a second server on the same node keeps binding */
    CHECK_EQ(topsync_rcl_server_start(rt, TOPSYNC_RCL_CORE_AUTO, &s2), 0);
    topsync_rcl_alloc_stats(rt, &st);
    unsigned nodes = (unsigned)hwloc_get_nbobjs_by_type(
        topsync_topology_hwloc(topsync_rcl_runtime_topology(rt)), HWLOC_OBJ_NUMANODE);
    if (nodes == 1)
        CHECK(st.memory_node >= 0);
    CHECK_EQ(topsync_rcl_server_stop(s2), 0);
    CHECK_EQ(topsync_rcl_server_stop(s), 0);
    topsync_rcl_alloc_stats(rt, &st);
    CHECK_EQ(st.memory_node, -1);

    /* no server again: new blocks are recorded again */
    void *again = topsync_rcl_malloc(rt, 64);
    topsync_rcl_alloc_stats(rt, &st);
    CHECK_EQ(st.recorded_blocks, 1);
    topsync_rcl_free(rt, again);
    topsync_rcl_free(rt, early);
    topsync_rcl_free(rt, small);
    topsync_rcl_free(rt, late);
    topsync_rcl_free(rt, late_small);
    CHECK(topsync_rcl_calloc(rt, SIZE_MAX / 2, 4) == NULL);
    CHECK_EQ(errno, ENOMEM);
    void *zero = topsync_rcl_realloc(rt, NULL, 0); /* as malloc(0) */
    CHECK(zero != NULL);
    CHECK(topsync_rcl_realloc(rt, zero, 0) == NULL); /* as free */
    CHECK_EQ(topsync_rcl_runtime_destroy(rt), 0);
}

/* ---- RCLHierarchicalAffinity on this machine ------------------------------ */

struct pinned {
    topsync_rcl_runtime_t *rt;
    hwloc_bitmap_t binding;
};

static void *report_binding(void *p)
{
    struct pinned *w = p;
    hwloc_get_cpubind(topsync_topology_hwloc(topsync_rcl_runtime_topology(w->rt)), w->binding,
                      HWLOC_CPUBIND_THREAD);
    return NULL;
}

static void test_affinity(void)
{
    topsync_rcl_runtime_t *rt = new_runtime();
    unsigned core;
    CHECK_EQ(topsync_rcl_worker_pin(rt, &core), -EAGAIN);
    topsync_rcl_server_t *s;
    CHECK_EQ(topsync_rcl_server_start(rt, 1, &s), 0);
    hwloc_topology_t h = topsync_topology_hwloc(topsync_rcl_runtime_topology(rt));
    unsigned ncores = topsync_topology_ncores(topsync_rcl_runtime_topology(rt));
    struct pinned w = {rt, hwloc_bitmap_alloc()};
    pthread_t t;
    CHECK_EQ(topsync_rcl_thread_create(rt, &t, NULL, report_binding, &w), 0);
    pthread_join(t, NULL);
    if (ncores >= 2) {
        /* the nearest core to the server's (core 1) that hosts no server */
        hwloc_obj_t c0 = hwloc_get_obj_by_type(h, HWLOC_OBJ_CORE, 0);
        CHECK(hwloc_bitmap_isincluded(w.binding, c0->cpuset));
    }
    hwloc_bitmap_free(w.binding);
    CHECK_EQ(topsync_rcl_server_stop(s), 0);
    CHECK_EQ(topsync_rcl_runtime_destroy(rt), 0);
}

static void timed(const char *name, void (*test)(void))
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    test();
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%-26s %.2f s\n", name, (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9);
}

#define RUN(test) timed(#test, test)

static void free_other_runtimes_block(void)
{
    topsync_rcl_runtime_t *a = new_runtime(), *b = new_runtime();
    void *p = topsync_rcl_malloc(a, 100);
    topsync_rcl_free(b, p); /* must abort, naming both runtimes */
}

/* Handles of stopped servers and destroyed runtimes are refused (issue 13
 * item 1), as are blocks of another runtime (item 2). */
static void test_stale_handles(void)
{
    topsync_rcl_runtime_t *rt = new_runtime();
    topsync_rcl_server_t *s;
    topsync_rcl_lock_t *l;
    topsync_rcl_server_stats_t st;
    CHECK_EQ(topsync_rcl_server_start(rt, 0, &s), 0);
    CHECK_EQ(topsync_rcl_server_stop(s), 0);
    CHECK_EQ(topsync_rcl_lock_create(s, &l), -EINVAL);
    CHECK_MSG("was stopped");
    CHECK_EQ(topsync_rcl_server_stop(s), -EINVAL);
    CHECK_MSG("was stopped");
    CHECK_EQ(topsync_rcl_server_stats(s, &st), -EINVAL);
    CHECK_EQ(topsync_rcl_server_core(s), -EINVAL);
    CHECK_EQ(topsync_rcl_lock_create((topsync_rcl_server_t *)&st, &l), -EINVAL);
    CHECK_MSG("not an RCL server");

    CHECK_EQ(topsync_rcl_runtime_destroy(rt), 0);
    CHECK_EQ(topsync_rcl_runtime_destroy(rt), -EINVAL);
    CHECK_MSG("destroyed already");
    CHECK_EQ(topsync_rcl_server_start(rt, 0, &s), -EINVAL);
    CHECK_MSG("was destroyed");
    errno = 0;
    CHECK(topsync_rcl_malloc(rt, 8) == NULL && errno == EINVAL);
    CHECK_MSG("destroyed");
    CHECK(topsync_rcl_runtime_topology(rt) == NULL);

    rt = new_runtime();
    errno = 0;
    CHECK(topsync_rcl_malloc(rt, SIZE_MAX) == NULL && errno == ENOMEM);
    CHECK_MSG("more than any allocation can hold");
    CHECK(topsync_rcl_calloc(rt, SIZE_MAX / 2, 4) == NULL && errno == ENOMEM);
    CHECK_MSG("overflows");
    CHECK_EQ(topsync_rcl_runtime_destroy(rt), 0);

    char out[512];
    int status = child_status(free_other_runtimes_block, out, sizeof out);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    CHECK(strstr(out, "belongs to runtime") != NULL);
}

int main(void)
{
    alarm(120);
    RUN(test_execute_result);
    RUN(test_increments_and_cycles);
    RUN(test_blocking_cs);
    RUN(test_nested);
    RUN(test_idle_server_sleeps);
    RUN(test_misuse);
    RUN(test_stale_handles);
    RUN(test_outside_cpuset);
    RUN(test_alloc);
    RUN(test_affinity);
    return check_summary();
}
