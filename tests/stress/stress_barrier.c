/*
 * Validate-style stress test of every barrier algorithm, for threads and for
 * forked processes (after Concurrency Kit's regressions/ck_barrier/validate).
 *
 * After every episode k each participant checks two invariants:
 *  1. nobody left before everyone arrived: a shared arrival counter,
 *     incremented (relaxed) by every participant before entering the barrier,
 *     is >= k * n after it;
 *  2. writes before the barrier are visible after it: every participant
 *     writes k into slot[k % 2][rank] (a plain, non-atomic store) before the
 *     barrier and reads every slot[k % 2][*] == k after it. The slots are
 *     double-buffered: slot[k % 2] is written again only in episode k + 2,
 *     after barrier k + 1, which nobody passes before everyone finished
 *     reading, so there is no data race (ThreadSanitizer agrees).
 *
 * usage: stress_barrier --algorithm NAME [--threads 1,2,3] [--processes 2,4]
 *        [--episodes K] [--wait spin|yield|block] [--start EPISODE]
 *        [--topology SYNTH --map-by core|numa|socket]   (synthetic placement)
 *        [--bind-to core|numa|package --map-by ...]     (bound on this machine)
 *        [--kill RANK [--timeout S]] [--skip-wait RANK:EPISODE]
 * --bind-to binds every participant as mpirun would on the machine hwloc
 * detects (the emulated machines of tests/machine-vm) and gives the barrier
 * those cpusets. --kill: processes only; that rank dies by SIGKILL in the
 * middle of the run and every other one must get -ETIMEDOUT from
 * topsync_barrier_wait_checked within the timeout (default 3 s) plus 10 s,
 * with a message naming that rank as the one not arrived.
 * --skip-wait: the negative check of the checks themselves (a barrier that
 * lets a participant through an episode it did not wait in): that rank
 * does not wait in that episode; the run must fail, by an invariant or by
 * the others' timeout (--timeout, default 3 s), never pass.
 * Prints one line per configuration and "N passed, N failed".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <topsync.h>

#define MAX_PARTICIPANTS 256
#define LINE 128

struct shared {
    _Alignas(LINE) _Atomic uint64_t arrivals;
    _Alignas(LINE) _Atomic uint64_t timeouts_named; /* --kill: waits that named the victim */
    _Alignas(LINE) _Atomic uint64_t failures;
    _Alignas(LINE) char first_error[256];
    _Alignas(LINE) _Atomic int error_claimed;
    /* slot[parity][rank], each on its own line */
    _Alignas(LINE) struct {
        _Alignas(LINE) uint64_t v;
    } slot[2][MAX_PARTICIPANTS];
};

struct config {
    const char *algorithm;
    topsync_wait_policy_t wait;
    uint64_t episodes;
    uint64_t start;
    const char *synthetic;
    topsync_map_by_t map_by;
    int bind; /* bind on the detected machine */
    topsync_bind_to_t bind_to;
    int kill_rank; /* -1: none */
    double timeout;
    int skip_rank; /* --skip-wait; -1: none */
    uint64_t skip_episode;
};

struct run {
    topsync_barrier_t *barrier;
    struct shared *sh;
    unsigned n;
    uint64_t episodes;
    hwloc_bitmap_t *bind_sets; /* NULL: not bound */
    hwloc_topology_t hwloc;    /* the machine of bind_sets */
    int kill_rank;
    int skip_rank;
    uint64_t skip_episode;
};

struct participant {
    struct run *run;
    unsigned rank;
};

static void record_failure(struct shared *sh, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void record_failure(struct shared *sh, const char *fmt, ...)
{
    atomic_fetch_add_explicit(&sh->failures, 1, memory_order_relaxed);
    if (atomic_exchange_explicit(&sh->error_claimed, 1, memory_order_relaxed) == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(sh->first_error, sizeof sh->first_error, fmt, ap);
        va_end(ap);
    }
}

/* Bind the calling thread (in a process: its only one) to its cpuset. */
static int bind_self(struct run *run, unsigned rank)
{
    return hwloc_set_cpubind(run->hwloc, run->bind_sets[rank], HWLOC_CPUBIND_THREAD);
}

/* --kill: the victim's wait never comes; everyone else must time out with
 * a message naming it. Returns 1 when this wait timed out as expected. */
static int timed_out_naming_victim(struct run *run, unsigned rank, uint64_t k, int rc)
{
    char expected[48];
    snprintf(expected, sizeof expected, "not arrived: %d", run->kill_rank);
    if (rc == -ETIMEDOUT && strstr(topsync_error_message(), expected)) {
        atomic_fetch_add_explicit(&run->sh->timeouts_named, 1, memory_order_relaxed);
        return 1;
    }
    record_failure(run->sh,
                   "rank %u in episode %" PRIu64 ": wait returned %d (%s), expected "
                   "-ETIMEDOUT naming participant %d",
                   rank, k, rc, rc ? topsync_error_message() : "", run->kill_rank);
    return 0;
}

static void participate(struct run *run, unsigned rank)
{
    struct shared *sh = run->sh;
    unsigned n = run->n;
    if (run->bind_sets && bind_self(run, rank) != 0) {
        record_failure(sh, "rank %u: hwloc_set_cpubind: %s", rank, strerror(errno));
        return;
    }
    uint64_t kill_episode = run->episodes / 2 + 1;
    for (uint64_t k = 1; k <= run->episodes; k++) {
        sh->slot[k % 2][rank].v = k;
        atomic_fetch_add_explicit(&sh->arrivals, 1, memory_order_relaxed);
        if (run->kill_rank >= 0) {
            if ((int)rank == run->kill_rank && k == kill_episode)
                raise(SIGKILL);
            int rc = topsync_barrier_wait_checked(run->barrier, rank);
            if (rc != 0 || k >= kill_episode) {
                timed_out_naming_victim(run, rank, k, rc);
                return;
            }
        } else if (run->skip_rank >= 0) {
            if ((int)rank != run->skip_rank || k != run->skip_episode) {
                int rc = topsync_barrier_wait_checked(run->barrier, rank);
                if (rc != 0) {
                    record_failure(sh, "rank %u in episode %" PRIu64 ": wait returned %d (%s)",
                                   rank, k, rc, topsync_error_message());
                    return;
                }
            }
        } else {
            topsync_barrier_wait(run->barrier, rank);
        }
        uint64_t seen = atomic_load_explicit(&sh->arrivals, memory_order_relaxed);
        if (seen < k * n) {
            record_failure(sh,
                           "rank %u left episode %" PRIu64 " with %" PRIu64
                           " arrivals counted, %" PRIu64 " expected",
                           rank, k, seen, k * n);
            return;
        }
        for (unsigned r = 0; r < n; r++) {
            if (sh->slot[k % 2][r].v != k) {
                record_failure(sh, "rank %u in episode %" PRIu64 " saw rank %u's slot = %" PRIu64,
                               rank, k, r, sh->slot[k % 2][r].v);
                return;
            }
        }
    }
}

static void *thread_main(void *arg)
{
    struct participant *p = arg;
    participate(p->run, p->rank);
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Returns 0 on success, 1 on a failed invariant, 2 on a setup error. */
static int run_one(const struct config *cfg, unsigned n, int processes)
{
    struct shared *sh =
        mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        perror("mmap");
        return 2;
    }
    topsync_barrier_options_t opts;
    topsync_barrier_options_init(&opts);
    opts.algorithm = cfg->algorithm;
    opts.wait = cfg->wait;
    opts.process_shared = processes;
    opts.start_episode = cfg->start;
    if (cfg->kill_rank >= 0 || cfg->skip_rank >= 0)
        opts.timeout_seconds = cfg->timeout;

    topsync_topology_t *topo = NULL;
    hwloc_bitmap_t sets[MAX_PARTICIPANTS];
    int have_sets = 0;
    if (cfg->synthetic || cfg->bind) {
        int rc = cfg->synthetic ? topsync_topology_load_synthetic(&topo, cfg->synthetic)
                                : topsync_topology_load(&topo);
        if (rc < 0 ||
            topsync_placement_compute(topo, n, cfg->map_by,
                                      cfg->bind ? cfg->bind_to : TOPSYNC_BIND_TO_CORE, sets) < 0) {
            fprintf(stderr, "setup: %s\n", topsync_error_message());
            return 2;
        }
        have_sets = 1;
        opts.topology = topo;
        opts.cpusets = (const hwloc_const_bitmap_t *)sets;
    }

    struct run run = {.sh = sh,
                      .n = n,
                      .episodes = cfg->episodes,
                      .bind_sets = cfg->bind ? sets : NULL,
                      .hwloc = cfg->bind ? topsync_topology_hwloc(topo) : NULL,
                      .kill_rank = processes ? cfg->kill_rank : -1,
                      .skip_rank = cfg->skip_rank,
                      .skip_episode = cfg->skip_episode};
    int rc = topsync_barrier_create(&run.barrier, n, &opts);
    if (rc < 0) {
        fprintf(stderr, "setup: topsync_barrier_create(%s, n=%u): %s\n", cfg->algorithm, n,
                topsync_error_message());
        return 2;
    }
    char groups_desc[64] = "";
    const topsync_groups_t *g = topsync_barrier_groups(run.barrier);
    if (g)
        snprintf(groups_desc, sizeof groups_desc, " groups=%u", topsync_groups_count(g));

    double t0 = now();
    if (processes) {
        pid_t pids[MAX_PARTICIPANTS];
        for (unsigned r = 0; r < n; r++) {
            pids[r] = fork();
            if (pids[r] == 0) {
                participate(&run, r);
                _exit(0);
            }
            if (pids[r] < 0) {
                perror("fork");
                return 2;
            }
        }
        for (unsigned r = 0; r < n; r++) {
            int status;
            waitpid(pids[r], &status, 0);
            if ((int)r == run.kill_rank) {
                if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
                    record_failure(sh, "rank %u was to die by SIGKILL (status %d)", r, status);
            } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                record_failure(sh, "process of rank %u ended abnormally (status %d)", r, status);
            }
        }
        if (run.kill_rank >= 0) {
            uint64_t named = atomic_load_explicit(&sh->timeouts_named, memory_order_relaxed);
            if (named != n - 1)
                record_failure(sh, "%" PRIu64 " of %u survivors timed out naming rank %d", named,
                               n - 1, run.kill_rank);
            if (now() - t0 > cfg->timeout + 10.0)
                record_failure(sh, "the survivors took %.1f s to time out (timeout %g s)",
                               now() - t0, cfg->timeout);
        }
    } else {
        pthread_t tids[MAX_PARTICIPANTS];
        struct participant parts[MAX_PARTICIPANTS];
        for (unsigned r = 0; r < n; r++) {
            parts[r] = (struct participant){&run, r};
            if (pthread_create(&tids[r], NULL, thread_main, &parts[r]) != 0) {
                perror("pthread_create");
                return 2;
            }
        }
        for (unsigned r = 0; r < n; r++)
            pthread_join(tids[r], NULL);
    }
    double dt = now() - t0;

    /* TOPSYNC_REACTIVE=every:N: participant 0 switched configuration at
     * every episode that is a multiple of N, and at no other */
    const char *reactive = getenv("TOPSYNC_REACTIVE");
    uint64_t switches = topsync_barrier_switches(run.barrier);
    if (reactive && !strncmp(reactive, "every:", 6) && run.kill_rank < 0 && cfg->skip_rank < 0) {
        uint32_t every = (uint32_t)strtoul(reactive + 6, NULL, 10), expected = 0;
        for (uint64_t k = 1; k <= cfg->episodes; k++)
            expected += ((uint32_t)(cfg->start + k) & (every - 1)) == 0;
        if (switches != expected)
            record_failure(sh, "%" PRIu64 " switches of configuration, %u expected (%s)", switches,
                           expected, reactive);
    }

    uint64_t failures = atomic_load(&sh->failures);
    char killed[64] = "";
    if (run.kill_rank >= 0)
        snprintf(killed, sizeof killed, " rank %d killed, the others timed out", run.kill_rank);
    printf("%s %-32s %-9s n=%-3u wait=%-5s episodes=%" PRIu64 " start=%" PRIu64
           "%s%s%s switches=%" PRIu64 " %.0f episodes/s%s%s\n",
           failures ? "FAIL" : "ok  ", topsync_barrier_algorithm(run.barrier),
           processes ? "processes" : "threads", n, topsync_barrier_wait_policy_name(run.barrier),
           cfg->episodes, cfg->start, groups_desc, cfg->bind ? " bound" : "", killed, switches,
           cfg->episodes / dt, failures ? ": " : "", failures ? sh->first_error : "");
    fflush(stdout);
    topsync_barrier_destroy(run.barrier);
    if (have_sets)
        for (unsigned r = 0; r < n; r++)
            hwloc_bitmap_free(sets[r]);
    topsync_topology_destroy(topo);
    munmap(sh, sizeof *sh);
    return failures ? 1 : 0;
}

static int parse_list(const char *s, unsigned *out, int max)
{
    int count = 0;
    char *copy = strdup(s), *save, *tok;
    for (tok = strtok_r(copy, ",", &save); tok && count < max; tok = strtok_r(NULL, ",", &save)) {
        long v = strtol(tok, NULL, 10);
        if (v < 1 || v > MAX_PARTICIPANTS) {
            free(copy);
            return -1;
        }
        out[count++] = (unsigned)v;
    }
    free(copy);
    return count;
}

int main(int argc, char **argv)
{
    struct config cfg = {.algorithm = NULL,
                         .wait = TOPSYNC_WAIT_DEFAULT,
                         .episodes = 2000,
                         .kill_rank = -1,
                         .timeout = 3.0,
                         .skip_rank = -1};
    unsigned threads[16], procs[16];
    int nthreads = 0, nprocs = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "option %s needs a value\n", a);
            return 2;
        }
        i++;
        if (!strcmp(a, "--algorithm"))
            cfg.algorithm = v;
        else if (!strcmp(a, "--threads"))
            nthreads = parse_list(v, threads, 16);
        else if (!strcmp(a, "--processes"))
            nprocs = parse_list(v, procs, 16);
        else if (!strcmp(a, "--episodes"))
            cfg.episodes = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--start"))
            cfg.start = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--topology"))
            cfg.synthetic = v;
        else if (!strcmp(a, "--map-by")) {
            if (topsync_map_by_parse(v, &cfg.map_by) < 0) {
                fprintf(stderr, "%s\n", topsync_error_message());
                return 2;
            }
        } else if (!strcmp(a, "--bind-to")) {
            cfg.bind = 1;
            if (topsync_bind_to_parse(v, &cfg.bind_to) < 0) {
                fprintf(stderr, "%s\n", topsync_error_message());
                return 2;
            }
        } else if (!strcmp(a, "--kill")) {
            char *end;
            long r = strtol(v, &end, 10);
            if (*end || end == v || r < 0 || r >= MAX_PARTICIPANTS) {
                fprintf(stderr, "--kill %s: give a rank, 0 to %d\n", v, MAX_PARTICIPANTS - 1);
                return 2;
            }
            cfg.kill_rank = (int)r;
        } else if (!strcmp(a, "--timeout")) {
            char *end;
            cfg.timeout = strtod(v, &end);
            if (*end || end == v || !(cfg.timeout > 0 && cfg.timeout <= 3600)) {
                fprintf(stderr, "--timeout %s: give seconds, more than 0 and at most 3600\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--skip-wait")) {
            char *colon, *end;
            long r = strtol(v, &colon, 10);
            unsigned long long k = *colon == ':' ? strtoull(colon + 1, &end, 10) : 0;
            if (colon == v || *colon != ':' || *end || end == colon + 1 || r < 0 ||
                r >= MAX_PARTICIPANTS || k < 1) {
                fprintf(stderr, "--skip-wait %s: give RANK:EPISODE (episodes from 1)\n", v);
                return 2;
            }
            cfg.skip_rank = (int)r;
            cfg.skip_episode = k;
        } else if (!strcmp(a, "--wait")) {
            if (topsync_wait_policy_parse(v, &cfg.wait) < 0) {
                fprintf(stderr, "%s\n", topsync_error_message());
                return 2;
            }
        } else {
            fprintf(stderr, "unknown option %s\n", a);
            return 2;
        }
        if (nthreads < 0 || nprocs < 0) {
            fprintf(stderr, "participant counts must be in 1..%d\n", MAX_PARTICIPANTS);
            return 2;
        }
    }
    if (cfg.bind && cfg.synthetic) {
        fprintf(stderr, "--bind-to binds on this machine; --topology places on another\n");
        return 2;
    }
    if (cfg.kill_rank >= 0 && (nthreads || cfg.timeout <= 0)) {
        fprintf(stderr, "--kill takes --processes only and a positive --timeout\n");
        return 2;
    }
    for (int i = 0; i < nprocs; i++)
        if (cfg.kill_rank >= (int)procs[i]) {
            fprintf(stderr, "--kill %d: no such rank among %u\n", cfg.kill_rank, procs[i]);
            return 2;
        }
    if (nthreads == 0 && nprocs == 0) {
        fprintf(stderr, "give --threads and/or --processes\n");
        return 2;
    }
    int passed = 0, failed = 0;
    for (int i = 0; i < nthreads; i++) {
        int rc = run_one(&cfg, threads[i], 0);
        rc == 0 ? passed++ : failed++;
    }
    for (int i = 0; i < nprocs; i++) {
        int rc = run_one(&cfg, procs[i], 1);
        rc == 0 ? passed++ : failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
