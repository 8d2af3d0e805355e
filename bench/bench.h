/* topsync-bench: shared definitions of the benchmark drivers and peers. */
#ifndef TOPSYNC_BENCH_H
#define TOPSYNC_BENCH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <topsync.h>

#include "base/clock.h" /* ts_monotonic_ns: the library's clock, the benchmarks' too */

#define BENCH_MAX_RUNS 32

/*
 * design.md section 4: of the runs' figures, drop the smallest and the largest and
 * average the others (plain mean with fewer than 3 runs). -1 for a bad count.
 */
double bench_protocol_summary(const double *runs, unsigned nruns);
/* What bench_protocol_summary reports for nruns runs, in words for a
 * table's header: "the mean of the 3 middle runs of 5 (smallest and
 * largest dropped)", or "the mean of 2 runs" below 3. */
const char *bench_protocol_words(unsigned nruns, char *buf, size_t len);
/* The median of the runs' figures; -1 for a bad count. */
double bench_median(const double *runs, unsigned nruns);
/* A long measurement's progress on stderr, one line rewritten in place,
 * only when stderr is a terminal (a log or a pipe gets nothing): `done`
 * of `total` steps, what runs now; bench_progress_end clears the line. */
void bench_progress(const char *tool, unsigned done, unsigned total, const char *what);
void bench_progress_end(void);
/* The median of any number of samples, sorting them in place; -1 for none. */
double bench_median_in_place(double *samples, unsigned n);
/*
 * This machine's topology, for a tool that measures it: 0; 1 when it
 * cannot be loaded; 2 when HWLOC_SYNTHETIC or HWLOC_XMLFILE names another
 * machine (a benchmark must bind to and measure the machine it runs on).
 * The message, prefixed by tool, is printed.
 */
int bench_topology_load(const char *tool, topsync_topology_t **out);
/*
 * The tuning file topsync-tune adds to: this machine's, or a new one in
 * place of a missing, damaged, foreign or other-version tuning file (said
 * on stderr). Anything else at the path (not a tuning file) is never
 * overwritten: NULL with *refused = 1 (NULL with 0: out of memory).
 */
topsync_tuning_t *bench_tuning_open(const topsync_topology_t *t, const char *path, int *refused);
/* A comma-separated LIST option: 0, or -1 after a message when it is empty
 * or has an empty element ("1,,2", ",x", "x,"). */
int bench_check_list(const char *option, const char *list);
/* A decimal count in [min, max] (no sign, nothing after it): 0, else -1. */
int bench_parse_u64(const char *s, uint64_t *out, uint64_t min, uint64_t max);
/*
 * A helper program of the tools (topsync-bench-mpi-IMPL,
 * topsync-bench-pthread-loop): beside this executable (the build tree),
 * else in ../libexec/topsync from it (an installed prefix, moved or not),
 * else in the configured libexec directory. Writes its path: 0, or -1 when
 * none is executable (path then holds the last place tried).
 */
int bench_find_helper(const char *name, char *path, size_t size);
/*
 * --mpi: this process was started by mpirun/mpiexec; the MPI benchmark built
 * for the MPI that started it (its handles are not ABI-compatible with the
 * other's) is the helper topsync-bench-mpi-IMPL (bench_find_helper). Writes its path
 * (size bytes at most) and IMPL: 0, or the exit status (2: not under a known
 * MPI or a bad TOPSYNC_BENCH_MPI; 1: no path) after a message prefixed by tool.
 */
/* The MPI benchmarks' usage, which --mpi --help prints outside mpirun too. */
void bench_mpi_usage(FILE *f);
int bench_mpi_sibling(const char *tool, char *path, size_t size, const char **impl);
/* The same for another helper family: BASE-IMPL (topsync-bench-coll-mpi). */
int bench_mpi_helper(const char *tool, const char *base, char *path, size_t size,
                     const char **impl);
/* topsync-tune's race (threads, processes, MPI): the indexes of the k
 * fastest of n latencies, fastest first, leaving out failed ones (<= 0);
 * returns how many (fewer than k when fewer succeeded). */
unsigned bench_fastest(const double *latency, unsigned n, unsigned *top, unsigned k);
/* Print "  fastest: A/W N ns, ..." (the three fastest of entry's case as the
 * tuning now holds it), without the newline. */
void bench_print_fastest(const topsync_tuning_t *tuning, const topsync_tuning_entry_t *entry);

/* A barrier under test, driven by the thread harness of barrier_bench.c. */
typedef struct bench_barrier {
    const char *name;                             /* "sense-reversing", "peer:pthread", ... */
    const char *wait;                             /* the wait policy it runs with */
    void *(*create)(unsigned n, const void *arg); /* NULL on failure */
    void (*wait_fn)(void *state, unsigned rank);
    void (*destroy)(void *state);
    const void *arg;
    int spin_only; /* never yields the CPU: cap its iterations when oversubscribed */
} bench_barrier;

/* Concurrency Kit peers (peer_ck.c); count returned, NULL-safe when CK is absent. */
int bench_ck_peers(const bench_barrier **out);

/*
 * GNU OpenMP peer (peer_omp.c): runs `runs` runs of `iterations` timed
 * barriers of a team of n threads (bound like the others through `bind`),
 * after `warmup` barriers, and stores each run's max over threads of the mean
 * latency in ns. Returns 0, or -1 when OpenMP is not available (or the
 * child failed). The team runs in a child process that exits after it:
 * libgomp's pool threads keep spinning for milliseconds after a parallel
 * region (GOMP_SPINCOUNT), a CPU hog for the row measured next (issue 35:
 * 2 unbound threads, the first two rows of each round after libgomp's took
 * 2-5 us per barrier, 0.11-0.15 us without libgomp's row).
 */
int bench_omp_runs(unsigned n, uint64_t warmup, uint64_t iterations, unsigned runs,
                   void (*bind)(unsigned rank, void *ctx), void *ctx, double *latency_ns);

/*
 * The drop-in (pthread_dropin.c): `runs` alternating processes of the same
 * pthread program, as it is (glibc_ns[]) and with libtopsync-pthread
 * preloaded (preload_ns[]), its threads bound round robin or (unbound) not; impl gets what the preloaded one ran
 * ("topsync:ALGORITHM/WAIT"). Returns 0, or -1 with a message (the helper or
 * the library not found, a run failed).
 */
int bench_pthread_dropin_runs(unsigned threads, uint64_t iterations, unsigned runs, int unbound,
                              double *glibc_ns, double *preload_ns, char *impl, size_t impl_len);

/*
 * --noise N: N busy neighbour processes (each an endless loop of arithmetic,
 * unbound, as other work on a shared node), started before the measurement
 * and killed by bench_noise_stop (or by the kernel when the benchmark dies).
 * Returns 0, or -1 with a message.
 */
int bench_noise_start(unsigned n);
void bench_noise_stop(void);

/* Where participants run: their binding sets on a topology (NULL sets:
 * unbound). */
typedef struct bench_binding {
    topsync_topology_t *topo;
    hwloc_bitmap_t *sets; /* per rank, or NULL */
    unsigned n;
} bench_binding;

/* A topsync barrier under test: the algorithm and policy, and where its
 * participants run. */
typedef struct bench_topsync_arg {
    const char *algorithm;
    topsync_wait_policy_t wait;
    bench_binding *binding;
} bench_topsync_arg;

/* Its options (topology and bindings included), and the bench_barrier
 * functions that make, wait on and destroy it (arg: a bench_topsync_arg). */
void bench_topsync_options(const bench_topsync_arg *arg, topsync_barrier_options_t *options);
void *bench_topsync_create(unsigned n, const void *arg);
void bench_topsync_wait(void *state, unsigned rank);
void bench_topsync_destroy(void *state);
/* The switches of configuration (topsync_barrier_switches) of every topsync
 * barrier the harness destroyed so far, threads and processes: a row's
 * count is the difference across its runs (one row runs at a time). */
extern _Atomic uint64_t bench_topsync_switches;

/* Bind the calling thread as rank `rank` of ctx (a bench_binding). */
void bench_bind_rank(unsigned rank, void *ctx);

/*
 * One run (harness.c): n threads through bb, each bound by binding (may be
 * NULL), `warmup` barriers then `iterations` timed ones; the maximum over
 * threads of the mean ns, or a negative value when the barrier could not
 * be made.
 */
double bench_thread_run(const bench_barrier *bb, unsigned n, uint64_t warmup, uint64_t iterations,
                        bench_binding *binding);

/*
 * The same with n forked processes through a process-shared topsync
 * barrier made with `options` (process_shared is set here); `resolved` gets
 * the algorithm it resolved to. -1 on failure (a message on stderr).
 */
double bench_process_run(const topsync_barrier_options_t *options, unsigned n, uint64_t warmup,
                         uint64_t iterations, bench_binding *binding, char *resolved,
                         size_t resolved_len);
/* The peer of that: glibc's pthread_barrier_t, process-shared, in shared
 * memory, n forked processes. -1 on failure. */
double bench_pthread_process_run(unsigned n, uint64_t warmup, uint64_t iterations,
                                 bench_binding *binding);

/* This machine's core-to-core table (c2c.c): n x n ns (symmetric, 0 on the
 * diagonal), K round trips per measurement, the median of R; 0 or -1 after
 * a message. */
int bench_c2c_table(topsync_topology_t *topology, uint64_t iterations, unsigned runs,
                    double **table, unsigned *n);

/* A table's disturbed pairs (docs/model.md, "Disturbed pairs": far above
 * the other pairs of their level on `topology`) measured again with
 * measure(arg, i, j) (ns, <= 0: failed), each keeping the lower of its two
 * figures (a disturbance only adds time). Returns how many were measured
 * again, or -1 after a message. bench_c2c_table does it for its own. */
int bench_c2c_remeasure(const topsync_topology_t *topology, double *table, unsigned n,
                        double (*measure)(void *arg, unsigned i, unsigned j), void *arg);

/* The memory-level parallelism of cross-core misses (c2c.c, issue 36): a
 * reader CPU fetching `lines` lines just written by another CPU, as a
 * chain of dependent loads and as independent loads; ns per line, the
 * median over rounds of each. mlp = dependent / independent: how many such
 * misses the reader's core keeps in flight (docs/model.md, section 4). */
typedef struct bench_mlp {
    unsigned reader, writer; /* OS CPU numbers */
    unsigned lines, rounds;
    double dependent_ns, independent_ns;
    double mlp;
} bench_mlp;

/* 0, or -1 after a message. */
int bench_c2c_mlp(topsync_topology_t *topology, unsigned lines, unsigned rounds, bench_mlp *out);

/* topsync-bench c2c (c2c.c): this machine's core-to-core latency table. */
int bench_c2c(int argc, char **argv);

#endif
