/*
 * POSIX barrier conformance, written against <pthread.h> only: the same
 * binary runs on glibc's barrier, under LD_PRELOAD=libtopsync-pthread.so,
 * and linked with -ltopsync-pthread.
 *
 *   conformance [THREADS] [EPISODES]
 *
 * TOPSYNC_EXPECT=topsync|glibc says which implementation must be running
 * (asked through topsync_pthread_barrier_implementation, found with dlsym so
 * that the binary needs no topsync header); unset, either is accepted and
 * only POSIX behaviour is checked.
 *
 * Checked:
 *  - exactly one PTHREAD_BARRIER_SERIAL_THREAD per episode, the others 0,
 *    over EPISODES episodes (default 10^5);
 *  - memory ordering after every episode (validate style): each thread
 *    writes its slot of the episode before waiting and reads every slot
 *    after, with no other synchronization;
 *  - rotating thread pools: more threads than the count taking waits from
 *    shared work, and fresh threads each round, on one barrier;
 *  - several barriers at once, and one thread alternating between two;
 *  - destroy right after the serial thread's wait returns (others may still
 *    be leaving), 2000 times: 0, never a use after free;
 *  - PTHREAD_PROCESS_SHARED across fork;
 *  - count 0 is EINVAL; with topsync, destroy while a thread is blocked in
 *    an unfinished episode is EBUSY (glibc would wait forever: not run);
 *  - a thread held in a signal handler inside its wait, waiting for the
 *    others to get through, does not hold them (glibc passes; with topsync
 *    under auto, not under an algorithm named by TOPSYNC_BARRIER);
 *  - with topsync: a wait or destroy after destroy is EINVAL, and so is one
 *    on a barrier never initialized (zero); a barrier whose fields the
 *    program overwrote, or a copy of one, aborts with a message saying
 *    which; a count of 10^6 costs neither a page per participant nor its
 *    time; destroy racing a wait that is just entering, 4000 rounds: the
 *    wait gets EINVAL or destroy EBUSY, never a use after free.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../unit/check.h"

#ifdef TS_OLD_GLIBC_ABI
/* Bind to the versions a binary built on glibc < 2.34 references. */
__asm__(".symver pthread_barrier_init,pthread_barrier_init@GLIBC_2.2.5");
__asm__(".symver pthread_barrier_wait,pthread_barrier_wait@GLIBC_2.2.5");
__asm__(".symver pthread_barrier_destroy,pthread_barrier_destroy@GLIBC_2.2.5");
#endif

static const char *(*implementation)(pthread_barrier_t *);

static const char *impl_of(pthread_barrier_t *b)
{
    return implementation ? implementation(b) : "glibc";
}

/* ---- serial thread and memory ordering --------------------------------- */

struct ordering {
    pthread_barrier_t barrier;
    unsigned threads;
    unsigned long episodes;
    unsigned *slots; /* [2][threads], written plainly: the barrier orders them */
    atomic_ulong serial;
    atomic_ulong bad_reads;
    atomic_ulong bad_returns;
};

struct worker {
    struct ordering *o;
    unsigned id;
};

static void *ordering_worker(void *arg)
{
    struct worker *w = arg;
    struct ordering *o = w->o;
    unsigned long bad = 0, serial = 0;
    for (unsigned long e = 1; e <= o->episodes; e++) {
        unsigned *slot = o->slots + (e & 1) * o->threads;
        slot[w->id] = (unsigned)e;
        int rc = pthread_barrier_wait(&o->barrier);
        if (rc == PTHREAD_BARRIER_SERIAL_THREAD)
            serial++;
        else if (rc != 0)
            atomic_fetch_add(&o->bad_returns, 1);
        for (unsigned t = 0; t < o->threads; t++)
            bad += slot[t] != (unsigned)e;
        /* the next write to this slot (episode e + 2) is behind episode
         * e + 1's barrier, which every reader of episode e has passed */
    }
    atomic_fetch_add(&o->serial, serial);
    atomic_fetch_add(&o->bad_reads, bad);
    return NULL;
}

static void test_serial_and_ordering(unsigned threads, unsigned long episodes)
{
    struct ordering o = {.threads = threads, .episodes = episodes};
    o.slots = calloc(2 * threads, sizeof *o.slots);
    CHECK_EQ(pthread_barrier_init(&o.barrier, NULL, threads), 0);
    const char *impl = impl_of(&o.barrier);
    const char *expect = getenv("TOPSYNC_EXPECT");
    if (expect && *expect)
        CHECK(strncmp(impl, expect, strlen(expect)) == 0);
    pthread_t *tid = calloc(threads, sizeof *tid);
    struct worker *w = calloc(threads, sizeof *w);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned t = 0; t < threads; t++) {
        w[t] = (struct worker){&o, t};
        pthread_create(&tid[t], NULL, ordering_worker, &w[t]);
    }
    for (unsigned t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double us = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3 / episodes;
    printf("%u threads, %lu episodes on %s: %.2f us per episode\n", threads, episodes, impl, us);
    CHECK_EQ(atomic_load(&o.serial), episodes); /* exactly one per episode */
    CHECK_EQ(atomic_load(&o.bad_reads), 0);
    CHECK_EQ(atomic_load(&o.bad_returns), 0);
    CHECK_EQ(pthread_barrier_destroy(&o.barrier), 0);
    free(tid);
    free(w);
    free(o.slots);
}

/* ---- rotating pools ------------------------------------------------------ */

struct pool {
    pthread_barrier_t *barrier;
    atomic_ulong work; /* waits left to hand out: a multiple of the count */
    atomic_ulong serial;
    atomic_ulong per_thread_max;
};

/* Take one wait at a time from the shared work: exactly `work` waits happen
 * in all (whole episodes), by whichever threads take them, so that a pool
 * larger than the count ends with no thread left waiting alone. */
static void *pool_worker(void *arg)
{
    struct pool *p = arg;
    unsigned long mine = 0;
    for (;;) {
        unsigned long left = atomic_load(&p->work);
        if (left == 0)
            break;
        if (!atomic_compare_exchange_weak(&p->work, &left, left - 1))
            continue;
        mine++;
        if (pthread_barrier_wait(p->barrier) == PTHREAD_BARRIER_SERIAL_THREAD)
            atomic_fetch_add(&p->serial, 1);
    }
    unsigned long max = atomic_load(&p->per_thread_max);
    while (mine > max && !atomic_compare_exchange_weak(&p->per_thread_max, &max, mine))
        ;
    return NULL;
}

static void test_rotating_pools(void)
{
    pthread_barrier_t b;
    CHECK_EQ(pthread_barrier_init(&b, NULL, 4), 0);
    /* 12 threads on a barrier of 4: 900 episodes, any 4 threads in each */
    struct pool p = {.barrier = &b};
    atomic_init(&p.work, 3600);
    atomic_init(&p.serial, 0);
    atomic_init(&p.per_thread_max, 0);
    pthread_t tid[12];
    for (int t = 0; t < 12; t++)
        pthread_create(&tid[t], NULL, pool_worker, &p);
    for (int t = 0; t < 12; t++)
        pthread_join(tid[t], NULL);
    CHECK_EQ(atomic_load(&p.serial), 900);
    /* fresh threads each round: 20 rounds of 6 new threads sharing 200 waits */
    atomic_store(&p.serial, 0);
    for (int round = 0; round < 20; round++) {
        atomic_store(&p.work, 200);
        for (int t = 0; t < 6; t++)
            pthread_create(&tid[t], NULL, pool_worker, &p);
        for (int t = 0; t < 6; t++)
            pthread_join(tid[t], NULL);
    }
    CHECK_EQ(atomic_load(&p.serial), 20 * 50);
    CHECK_EQ(pthread_barrier_destroy(&b), 0);
}

/* ---- many barriers --------------------------------------------------------- */

struct pair_arg {
    pthread_barrier_t *a, *b;
    unsigned rounds;
    atomic_ulong *serial_a, *serial_b;
};

static void *alternating(void *arg)
{
    struct pair_arg *p = arg;
    for (unsigned k = 0; k < p->rounds; k++) {
        if (pthread_barrier_wait(p->a) == PTHREAD_BARRIER_SERIAL_THREAD)
            atomic_fetch_add(p->serial_a, 1);
        if (pthread_barrier_wait(p->b) == PTHREAD_BARRIER_SERIAL_THREAD)
            atomic_fetch_add(p->serial_b, 1);
    }
    return NULL;
}

static void test_many_barriers(void)
{
    /* three groups of 2, 3 and 4 threads, each alternating between two
     * barriers of its own count: six barriers in use at once */
    enum { NG = 3, ROUNDS = 400 };
    pthread_barrier_t bars[2 * NG];
    atomic_ulong serial[2 * NG];
    pthread_t tid[9];
    struct pair_arg args[9];
    unsigned nt = 0;
    for (unsigned g = 0; g < NG; g++) {
        for (int k = 0; k < 2; k++) {
            CHECK_EQ(pthread_barrier_init(&bars[2 * g + k], NULL, 2 + g), 0);
            atomic_init(&serial[2 * g + k], 0);
        }
        for (unsigned t = 0; t < 2 + g; t++, nt++) {
            args[nt] = (struct pair_arg){&bars[2 * g], &bars[2 * g + 1], ROUNDS, &serial[2 * g],
                                         &serial[2 * g + 1]};
            pthread_create(&tid[nt], NULL, alternating, &args[nt]);
        }
    }
    for (unsigned t = 0; t < nt; t++)
        pthread_join(tid[t], NULL);
    for (int i = 0; i < 2 * NG; i++) {
        CHECK_EQ(atomic_load(&serial[i]), ROUNDS);
        CHECK_EQ(pthread_barrier_destroy(&bars[i]), 0);
    }
}

/* ---- destroy while others leave ----------------------------------------- */

static void *wait_once(void *arg)
{
    pthread_barrier_wait(arg);
    return NULL;
}

static void test_destroy_while_leaving(void)
{
    int bad = 0;
    for (int k = 0; k < 2000; k++) {
        pthread_barrier_t *b = malloc(sizeof *b); /* freed at once: ASan sees any late use */
        pthread_t tid[3];
        if (pthread_barrier_init(b, NULL, 4) != 0) {
            bad++;
            free(b);
            continue;
        }
        for (int t = 0; t < 3; t++)
            pthread_create(&tid[t], NULL, wait_once, b);
        pthread_barrier_wait(b);
        bad += pthread_barrier_destroy(b) != 0; /* others may still be inside */
        for (int t = 0; t < 3; t++)
            pthread_join(tid[t], NULL);
        free(b);
    }
    CHECK_EQ(bad, 0);
}

/* ---- process-shared across fork ---------------------------------------- */

static void test_process_shared(void)
{
    pthread_barrier_t *b =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(b != MAP_FAILED);
    if (b == MAP_FAILED)
        return;
    atomic_ulong *serial = (atomic_ulong *)(b + 1);
    pthread_barrierattr_t attr;
    pthread_barrierattr_init(&attr);
    CHECK_EQ(pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED), 0);
    CHECK_EQ(pthread_barrier_init(b, &attr, 2), 0);
    pthread_barrierattr_destroy(&attr);
    CHECK_STR(impl_of(b), "glibc"); /* a pointer means nothing in another process */
    enum { EPISODES = 2000 };
    pid_t pid = fork();
    if (pid == 0) {
        for (int e = 0; e < EPISODES; e++)
            if (pthread_barrier_wait(b) == PTHREAD_BARRIER_SERIAL_THREAD)
                atomic_fetch_add(serial, 1);
        _exit(0);
    }
    for (int e = 0; e < EPISODES; e++)
        if (pthread_barrier_wait(b) == PTHREAD_BARRIER_SERIAL_THREAD)
            atomic_fetch_add(serial, 1);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_EQ(atomic_load(serial), EPISODES);
    CHECK_EQ(pthread_barrier_destroy(b), 0);
    munmap(b, 4096);
}

/* ---- invalid arguments --------------------------------------------------- */

static void *wait_blocked(void *arg)
{
    pthread_barrier_wait(arg);
    return NULL;
}

static void test_invalid(void)
{
    pthread_barrier_t b;
    CHECK_EQ(pthread_barrier_init(&b, NULL, 0), EINVAL);
    CHECK_EQ(pthread_barrier_init(&b, NULL, 1), 0);
    CHECK_EQ(pthread_barrier_wait(&b), PTHREAD_BARRIER_SERIAL_THREAD); /* count 1 */
    CHECK_EQ(pthread_barrier_wait(&b), PTHREAD_BARRIER_SERIAL_THREAD);
    CHECK_EQ(pthread_barrier_destroy(&b), 0);
    if (!implementation)
        return;
    /* topsync only: a thread blocked in an unfinished episode makes destroy
     * EBUSY (glibc would wait forever) and the barrier stays usable */
    CHECK_EQ(pthread_barrier_init(&b, NULL, 2), 0);
    if (strncmp(impl_of(&b), "topsync", 7) == 0) {
        pthread_t t;
        pthread_create(&t, NULL, wait_blocked, &b);
        usleep(20000);
        CHECK_EQ(pthread_barrier_destroy(&b), EBUSY);
        pthread_barrier_wait(&b);
        pthread_join(t, NULL);
    }
    CHECK_EQ(pthread_barrier_destroy(&b), 0);
}

/* ---- a signal handler inside a wait --------------------------------------- */

static pthread_barrier_t signal_barrier;
static atomic_uint signal_released; /* threads past the barrier */
static atomic_int signal_saw_release, signal_in_handler;

/* The handler of the thread that arrived first: it waits (5 s at most) for
 * the other two threads to get through the barrier it is blocked in. */
static void wait_for_the_others(int sig)
{
    (void)sig;
    atomic_store(&signal_in_handler, 1);
    for (int i = 0; i < 5000 && atomic_load(&signal_released) < 2; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    atomic_store(&signal_saw_release, atomic_load(&signal_released) >= 2);
}

static void *signal_first(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&signal_barrier);
    return NULL;
}

static void *signal_later(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&signal_barrier);
    atomic_fetch_add(&signal_released, 1);
    return NULL;
}

static void test_signal_handler_in_wait(void)
{
    const char *named = getenv("TOPSYNC_BARRIER");
    if (implementation && named && *named && strcmp(named, "auto") != 0)
        return; /* a named algorithm may give the first arrival a duty (README) */
    struct sigaction sa = {.sa_handler = wait_for_the_others};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    for (int round = 0; round < 3; round++) {
        atomic_store(&signal_released, 0);
        atomic_store(&signal_saw_release, 0);
        atomic_store(&signal_in_handler, 0);
        CHECK_EQ(pthread_barrier_init(&signal_barrier, NULL, 3), 0);
        pthread_t first, second;
        pthread_create(&first, NULL, signal_first, NULL);
        usleep(20000); /* it arrives first: under topsync it draws rank 0 */
        pthread_kill(first, SIGUSR1);
        while (!atomic_load(&signal_in_handler))
            usleep(1000);
        pthread_create(&second, NULL, signal_later, NULL);
        signal_later(NULL);
        pthread_join(second, NULL);
        pthread_join(first, NULL);
        CHECK(atomic_load(&signal_saw_release));
        CHECK_EQ(pthread_barrier_destroy(&signal_barrier), 0);
    }
    signal(SIGUSR1, SIG_DFL);
}

/* ---- topsync's handles: after destroy, overwritten, huge counts ---------- */

/* Runs fn in a child with stderr on a pipe; its exit status, and what it
 * wrote in msg. */
static int run_child(void (*fn)(void), char *msg, size_t size)
{
    int pipefd[2];
    CHECK_EQ(pipe(pipefd), 0);
    fflush(stdout); /* the child must not print the parent's buffer again */
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipefd[1], 2);
        fn();
        _exit(0);
    }
    close(pipefd[1]);
    size_t got = 0;
    ssize_t n;
    while (got < size - 1 && (n = read(pipefd[0], msg + got, size - 1 - got)) > 0)
        got += (size_t)n;
    msg[got] = '\0';
    close(pipefd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

/* fn must abort, with a message that names the drop-in and holds needle. */
static void expect_abort(void (*fn)(void), const char *needle)
{
    char msg[512];
    int status = run_child(fn, msg, sizeof msg);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    CHECK(strstr(msg, "libtopsync-pthread") && strstr(msg, needle));
    if (!strstr(msg, needle))
        fprintf(stderr, "expected \"%s\" in: %s\n", needle, msg);
}

/* A count the named algorithm cannot set up (sense-reversing-gr's state
 * grows as the square of the count): glibc runs it, and says so. */
static void init_huge(void)
{
    pthread_barrier_t b;
    if (pthread_barrier_init(&b, NULL, 100000) == 0)
        fprintf(stderr, "runs on %s\n", impl_of(&b));
}

static void overwrite_first_bytes(void)
{
    pthread_barrier_t b;
    pthread_barrier_init(&b, NULL, 2);
    memset(&b, 0x5a, 8);
    pthread_barrier_wait(&b);
}

static void zero_check_word(void)
{
    pthread_barrier_t b;
    pthread_barrier_init(&b, NULL, 2);
    memset((unsigned char *)&b + 24, 0, 8); /* glibc's barrier works on */
    pthread_barrier_wait(&b);
}

static void wait_on_copy(void)
{
    pthread_barrier_t b, copy;
    pthread_barrier_init(&b, NULL, 1);
    memcpy(&copy, &b, sizeof b);
    pthread_barrier_wait(&copy);
}

static void wait_on_copy_after_destroy(void)
{
    pthread_barrier_t b, copy;
    pthread_barrier_init(&b, NULL, 1);
    memcpy(&copy, &b, sizeof b);
    pthread_barrier_destroy(&b);
    pthread_barrier_wait(&copy);
}

/*
 * Destroy racing a wait that is just entering (issue 37.15: the waiter had
 * read the state pointer, destroy freed the state, the waiter's ticket then
 * hit freed memory). A helper thread waits on a fresh barrier of count 2
 * each round while the main thread destroys it after a varying delay:
 * destroy returns 0 (the wait came too late and must get EINVAL) or EBUSY
 * (the helper is inside: the main thread's own wait releases it, then
 * destroy returns 0). The old code faulted within 2000 rounds in 6 runs of
 * 6 (the late waiter entered an instance barrier whose segment destroy had
 * unmapped).
 */
static pthread_barrier_t race_barrier;
static _Atomic unsigned race_round, race_entering, race_done;
static _Atomic int race_rc;

static void *race_helper(void *arg)
{
    unsigned rounds = (unsigned)(uintptr_t)arg;
    for (unsigned r = 1; r <= rounds; r++) {
        while (atomic_load(&race_round) != r)
            sched_yield();
        atomic_store(&race_entering, r);
        atomic_store(&race_rc, pthread_barrier_wait(&race_barrier));
        atomic_store(&race_done, r);
    }
    return NULL;
}

static void test_destroy_racing_wait(unsigned rounds)
{
    pthread_t helper;
    CHECK_EQ(pthread_create(&helper, NULL, race_helper, (void *)(uintptr_t)rounds), 0);
    unsigned early = 0, busy = 0, bad = 0;
    unsigned long seed = 12345;
    for (unsigned r = 1; r <= rounds; r++) {
        CHECK_EQ(pthread_barrier_init(&race_barrier, NULL, 2), 0);
        atomic_store(&race_round, r);
        /* every other round from the helper's last step before its wait:
         * on a loaded machine destroy would otherwise always come first */
        while (r % 2 && atomic_load(&race_entering) != r)
            sched_yield();
        seed = seed * 6364136223846793005ul + 1442695040888963407ul;
        for (volatile unsigned spin = (unsigned)(seed >> 33) % (r % 2 ? 64 : 4096); spin; spin--)
            ;
        int rc = pthread_barrier_destroy(&race_barrier);
        if (rc == EBUSY) {
            busy++;
            int mine = pthread_barrier_wait(&race_barrier);
            bad += mine != 0 && mine != PTHREAD_BARRIER_SERIAL_THREAD;
            while (atomic_load(&race_done) != r)
                sched_yield();
            int theirs = atomic_load(&race_rc);
            bad += theirs != 0 && theirs != PTHREAD_BARRIER_SERIAL_THREAD;
            bad += (mine == PTHREAD_BARRIER_SERIAL_THREAD) ==
                   (theirs == PTHREAD_BARRIER_SERIAL_THREAD);
            bad += pthread_barrier_destroy(&race_barrier) != 0;
        } else {
            early += rc == 0;
            bad += rc != 0;
            while (atomic_load(&race_done) != r)
                sched_yield();
            bad += atomic_load(&race_rc) != EINVAL; /* its wait came after destroy */
        }
    }
    pthread_join(helper, NULL);
    CHECK_EQ(bad, 0);
    CHECK_EQ(early + busy, rounds);
    printf("destroy racing wait: %u rounds, destroy first %u, wait first %u\n", rounds, early,
           busy);
}

static void test_topsync_handles(void)
{
    pthread_barrier_t b;
    CHECK_EQ(pthread_barrier_init(&b, NULL, 2), 0);
    int ours = strncmp(impl_of(&b), "topsync", 7) == 0;
    CHECK_EQ(pthread_barrier_destroy(&b), 0);
    if (!ours)
        return; /* glibc: undefined behaviour, not run */
    /* a late wait or a second destroy: EINVAL, not a crash */
    CHECK_EQ(pthread_barrier_wait(&b), EINVAL);
    CHECK_EQ(pthread_barrier_destroy(&b), EINVAL);
    /* re-initialised after destroy, it works again */
    CHECK_EQ(pthread_barrier_init(&b, NULL, 1), 0);
    CHECK_EQ(pthread_barrier_wait(&b), PTHREAD_BARRIER_SERIAL_THREAD);
    CHECK_EQ(pthread_barrier_destroy(&b), 0);

    CHECK_STR(impl_of(&b), "invalid");

    /* the program writes into the barrier's first bytes (glibc's private
     * fields), or zeroes topsync's check word (bytes 24..31, which glibc's
     * own barrier never uses), or copies the barrier and waits on the copy,
     * before or after destroying the original: the next wait aborts with a
     * message that says which */
    expect_abort(overwrite_first_bytes, "corrupted: its state pointer");
    expect_abort(zero_check_word, "bytes 24..31");
    expect_abort(wait_on_copy, "is a copy of the barrier initialized at");
    expect_abort(wait_on_copy_after_destroy, "is a copy of the barrier initialized at");

    /* never initialized (static storage, zero): EINVAL, not SIGFPE */
    static pthread_barrier_t never_initialized;
    CHECK_EQ(pthread_barrier_wait(&never_initialized), EINVAL);
    CHECK_EQ(pthread_barrier_destroy(&never_initialized), EINVAL);
    CHECK_STR(impl_of(&never_initialized), "invalid");

    char said[1024];
    int status = run_child(init_huge, said, sizeof said);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (strstr(said, "runs on glibc"))
        CHECK(strstr(said, "libtopsync-pthread: pthread_barrier_init(count 100000): ") &&
              strstr(said, "runs on glibc's implementation"));
    else
        CHECK(strstr(said, "runs on topsync") && !strstr(said, "libtopsync-pthread"));

    /* a count sized by an upper bound: no page per participant up front
     * (that was 800 MB for 10^5; the algorithms' own state is at most about
     * a kilobyte per participant: tournament and dissemination, log n lines) */
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    CHECK_EQ(pthread_barrier_init(&b, NULL, 100000), 0);
    getrusage(RUSAGE_SELF, &after);
    CHECK(after.ru_maxrss - before.ru_maxrss < 160 * 1024); /* KiB: under 160 MiB */
    CHECK_EQ(pthread_barrier_destroy(&b), 0);
}

int main(int argc, char **argv)
{
    implementation = (const char *(*)(pthread_barrier_t *))dlsym(
        RTLD_DEFAULT, "topsync_pthread_barrier_implementation");
    unsigned threads = argc > 1 ? (unsigned)atoi(argv[1]) : 4;
    unsigned long episodes = argc > 2 ? strtoul(argv[2], NULL, 10) : 100000;
    /* "ordering": only the test whose thread count is THREADS, for waits
     * that spin forever (the others run up to 12 threads, which pure
     * spinning on 2 cores turns into a time slice per waiter) */
    int only_ordering = argc > 3 && strcmp(argv[3], "ordering") == 0;
    if (threads == 0 || episodes == 0 || (argc > 3 && !only_ordering)) {
        fprintf(stderr, "usage: conformance [THREADS] [EPISODES] [ordering]\n");
        return 2;
    }
    test_serial_and_ordering(threads, episodes);
    if (only_ordering)
        return check_summary();
    test_rotating_pools();
    test_many_barriers();
    test_destroy_while_leaving();
    test_process_shared();
    test_invalid();
    test_signal_handler_in_wait();
    test_topsync_handles();
    pthread_barrier_t probe;
    CHECK_EQ(pthread_barrier_init(&probe, NULL, 2), 0);
    int ours = strncmp(impl_of(&probe), "topsync", 7) == 0;
    CHECK_EQ(pthread_barrier_destroy(&probe), 0);
    if (ours) /* glibc: undefined behaviour, not run */
        test_destroy_racing_wait(4000);
    return check_summary();
}
