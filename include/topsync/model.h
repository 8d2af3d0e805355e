/*
 * topsync model: a machine model and a simulator that runs topsync's own
 * barrier code on it in virtual time (docs/model.md).
 *
 * A machine is an hwloc topology plus a core-to-core latency table: the
 * nanoseconds one cache line takes from CPU i to CPU j through the
 * coherence protocol. The table is read from a CSV file in the format of
 * the core-to-core-latency tool (row i, column j, lower triangle, OS CPU
 * numbers; see topsync_model_options_t.c2c_path) or derived from the
 * topology with one latency per level the two CPUs share.
 *
 * The simulator runs n virtual participants through the real algorithm
 * code of src/barrier/algorithms/NAME.c, compiled a second time against a layer in which
 * every atomic load, store, exchange, compare-exchange and fetch-add of the
 * barrier's shared words is an event of a discrete-event simulation with a
 * cache-coherence cost model. It predicts the latency the benchmark would
 * measure, and it checks the barrier's invariant (nobody leaves an episode
 * before everybody entered it) in every simulated episode.
 *
 * Errors follow topsync's convention (common.h): 0 or a negative errno,
 * with a message in topsync_error_message().
 */
#ifndef TOPSYNC_MODEL_H
#define TOPSYNC_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <topsync/barrier.h>
#include <topsync/topology.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The closest level two distinct CPUs share, for derived tables. */
typedef enum topsync_model_level {
    TOPSYNC_MODEL_CORE,    /* two hardware threads of one core (SMT) */
    TOPSYNC_MODEL_L2,      /* two cores under one L2 cache */
    TOPSYNC_MODEL_L3,      /* ... under one L3 cache */
    TOPSYNC_MODEL_NUMA,    /* ... in one NUMA node */
    TOPSYNC_MODEL_PACKAGE, /* ... in one package */
    TOPSYNC_MODEL_MACHINE, /* in different packages */
    TOPSYNC_MODEL_NLEVELS
} topsync_model_level_t;

/* "core", "l2", "l3", "numa", "package", "machine"; NULL out of range. */
const char *topsync_model_level_name(topsync_model_level_t level);

/*
 * The default latency of each level in nanoseconds, for machines without a
 * table: medians of the measured tables shipped in data/c2c (docs/model.md
 * says which pairs of which table give each figure).
 */
double topsync_model_level_default_ns(topsync_model_level_t level);

/*
 * Default latency between packages when a table covers one package of a
 * multi-package machine (docs/model.md, "Cross-package latency"): the dual
 * Kunpeng 920's ACPI distances scaled onto its measured cross-die latency.
 */
#define TOPSYNC_MODEL_CROSS_PACKAGE_NS 150.5

typedef struct topsync_model_options {
    /*
     * Latency table, CSV: row i and column j (0-based OS CPU numbers) hold
     * the nanoseconds of one transfer from CPU i to CPU j; only the lower
     * triangle is read (j < i), the first row is empty. NULL: derive the
     * table from the topology and level_ns.
     *
     * The table covers either every PU of the topology (entry [i][j] is PU
     * OS index i to j), or, on a machine of several packages with equal PU
     * counts, one package: PU k of each package (in OS index order) is
     * table CPU k, and PUs of different packages are cross_package_ns apart.
     * Any other size is -EINVAL, naming both counts.
     */
    const char *c2c_path;
    /* The same table in memory instead: c2c_cpus x c2c_cpus ns, row i
     * column j (the diagonal ignored; entries below it are read). Used
     * when c2c_path is NULL and c2c_ns is not. */
    const double *c2c_ns;
    unsigned c2c_cpus;
    /* Latency across packages for a one-package table; 0: the default
     * TOPSYNC_MODEL_CROSS_PACKAGE_NS. Ignored otherwise. */
    double cross_package_ns;
    /* Per-level latencies of a derived table; 0 entries take the defaults
     * (topsync_model_level_default_ns). Ignored with a table. */
    double level_ns[TOPSYNC_MODEL_NLEVELS];
    /* Multiply every latency by this (0: 1); for what-if studies and the
     * model's metamorphic tests. */
    double scale;
    /*
     * Memory-level parallelism K (docs/model.md, "The cost model"): how
     * many misses to different lines one core keeps outstanding before it
     * stalls, 1 to TOPSYNC_MODEL_MAX_MLP; the vendor's figure for the core
     * (its L1D fill buffers or miss address buffers) when one is
     * documented. 0: not known (the default). A simulation then runs at
     * K = 1 unless topsync_sim_options_t.mlp names another, and auto
     * trusts a prediction only if it holds at every K of
     * TOPSYNC_MODEL_MLP_RANGE. K = 1 is the model before K existed.
     */
    unsigned mlp;
    /*
     * The home's service time (docs/model.md, "The cost model"): a line's
     * home (the NUMA node of its first toucher, else its package, else the
     * machine) serves the misses and exclusive requests for its lines one
     * at a time, each occupying it this many ns. 0: not modelled (every
     * home serves any number at once: the model before it existed). For
     * this machine, topsync-bench c2c --mlp measures an upper bound: the ns
     * per line of independent misses.
     */
    double home_service_ns;
    /*
     * Take every pair of a table as given. By default (false) a pair far
     * above the other pairs of its level (above Tukey's far-out fence,
     * Q3 + 3 (Q3 - Q1), over the table's pairs that share the same closest
     * place) is taken as measured during a disturbance and modelled at its
     * level's median (docs/model.md, "Disturbed pairs"). Pairs far below
     * are kept: a disturbance only adds time. Ignored without a table.
     */
    bool raw_table;
} topsync_model_options_t;

#define TOPSYNC_MODEL_MAX_MLP 64u
/* The Ks a core of unknown memory-level parallelism is simulated at. */
#define TOPSYNC_MODEL_MLP_RANGE \
    {                           \
        1u, 2u, 4u, 8u, 16u     \
    }
#define TOPSYNC_MODEL_MLP_RANGE_N 5u

typedef struct topsync_model topsync_model_t;

void topsync_model_options_init(topsync_model_options_t *options);

/*
 * Build a model of `topology`, which the model refers to: keep the topology
 * loaded until the model is destroyed. options may be NULL (a derived table
 * with the defaults).
 * -EINVAL for an unreadable or malformed table (the message names the file,
 * line and column), a table of the wrong size, or a negative latency.
 */
int topsync_model_create(topsync_model_t **out, const topsync_topology_t *topology,
                         const topsync_model_options_t *options);
void topsync_model_destroy(topsync_model_t *model);

/* Nanoseconds from PU os_a to PU os_b (0 for a == b); negative when either
 * is not a PU of the model's topology. */
double topsync_model_latency_ns(const topsync_model_t *model, unsigned os_a, unsigned os_b);

/* The level class of two distinct PUs (docs/model.md, "Levels of a pair"):
 * the closest place they share, named after the highest level with the
 * same cores; -1 when a == b or either is not a PU of the model. */
int topsync_model_pair_level(const topsync_model_t *model, unsigned os_a, unsigned os_b);

/* The model's memory-level parallelism K; 0 when it is not known. */
unsigned topsync_model_mlp(const topsync_model_t *model);

/* The model's home service time in ns; 0 when it is not modelled. */
double topsync_model_home_service_ns(const topsync_model_t *model);

/* One line on where the latencies come from, e.g. "c2c table FILE (64 CPUs,
 * per package; 152 ns across packages)" or "derived from levels (...)". */
const char *topsync_model_describe(const topsync_model_t *model);

/* ------------------------------------------------------------------------
 * Simulation.
 * ------------------------------------------------------------------------ */

/* Deliberate faults, for the tests of the invariant check. */
typedef enum topsync_sim_fault {
    TOPSYNC_SIM_FAULT_NONE = 0,
    /* Participant fault_rank's stores and read-modify-writes of the
     * barrier's words are lost: it never announces its arrival. A correct
     * check reports the others waiting forever. */
    TOPSYNC_SIM_FAULT_SKIP_ARRIVAL,
    /* Participant fault_rank does not wait: every wait of its returns at
     * once. A correct check reports it leaving before everybody arrived. */
    TOPSYNC_SIM_FAULT_SKIP_WAIT,
} topsync_sim_fault_t;

/* The OS scheduler the simulation's kernel runs (docs/model.md section 9,
 * "CFS"): how a CPU chooses its next task, how long it runs, and when a
 * woken task preempts the running one. */
typedef enum topsync_sim_scheduler {
    /* EEVDF, Linux 6.6 and later (Debian 13, Ubuntu 24.04, RHEL 10; the
     * development VM's 6.18): the default */
    TOPSYNC_SIM_SCHED_EEVDF = 0,
    /* CFS, Linux before 6.6 (RHEL 8 and 9, Ubuntu 22.04, Debian 12, SLES
     * 15): its latency, minimum and wake-up granularities at their
     * defaults for the model's PU count */
    TOPSYNC_SIM_SCHED_CFS,
} topsync_sim_scheduler_t;

typedef struct topsync_sim_options {
    unsigned episodes;          /* timed episodes; 0: 1000 */
    unsigned warmup;            /* episodes before them; 0: episodes / 10, at least 1 */
    uint64_t seed;              /* orders simultaneous events; same seed, same result */
    topsync_wait_policy_t wait; /* DEFAULT: spin (waiters spin, one per CPU) */
    size_t line_size;           /* 0: the topology's largest line */
    topsync_sim_fault_t fault;
    unsigned fault_rank;
    /* Memory-level parallelism to simulate, 1 to TOPSYNC_MODEL_MAX_MLP;
     * 0: the model's (1 when the model's is not known). */
    unsigned mlp;
    /*
     * The OS scheduler (docs/model.md section 9). When none of noise,
     * unbound and a PU shared by two participants is asked for, there is
     * none: every participant always runs on a PU of its own (the idle
     * model, to the bit). Otherwise each PU runs one task at a time in time
     * slices, and a wait spins, yields or sleeps as its policy says.
     * noise: busy neighbour tasks that never sleep, one per PU in turn (OS
     * order). unbound: participant r starts on the r-th PU (in turn) and a
     * woken one moves to an idle PU, as an unbound thread does; otherwise
     * it runs on its cpuset's first PU, which it may share.
     */
    unsigned noise;
    bool unbound;
    /* The scheduler's costs in ns, each 0 for its default (docs/model.md
     * section 9): a task's time slice (Linux EEVDF's for the model's PU
     * count), a switch between two tasks of a PU, the waker's FUTEX_WAKE per
     * sleeper woken, the time from that call until the sleeper runs on an
     * idle PU and on a PU whose running task it preempts, and a sched_yield
     * that finds nothing else to run (the defaults measured by
     * topsync-bench-sched-costs on the development VM). */
    double slice_ns, switch_ns, wake_call_ns, wake_latency_ns, wake_latency_busy_ns, yield_ns;
    /* The CPU time one sleep costs the sleeper, its way into the futex
     * wait and back out (0: the default, measured as the others): charged
     * to its share of the CPU when it sleeps. */
    double sleep_cpu_ns;
    /* The time a program takes to create each of its threads (0: the
     * default, measured as the others): the participants start that far
     * apart, the first at a phase of the timer tick drawn from the seed. */
    double create_ns;
    /* 0: the run is `episodes` long. Otherwise each run lasts at least
     * this many milliseconds of virtual time, as topsync-bench barrier
     * --run-ms: episodes go on past `episodes` until the timed part spans
     * it, and the warm-up lasts at least a tenth of it as well as `warmup`
     * episodes (a busy node's episodes are decided by time slices and
     * ticks, which a run shorter than a few of them never meets; docs/
     * model.md section 9). At most 1e6 (16 minutes) and 10^7 episodes. */
    double run_ms;
    /* The waker's FUTEX_WAKE of a sleeper that wakes on the waker's own PU
     * (0: the default, measured as the others): it only queues the sleeper
     * there, with no interrupt to another PU, and the sleeper joins that
     * PU's run queue during the call, with no wake-up latency. */
    double wake_call_local_ns;
    /*
     * Where the busy neighbours and the unbound participants start, when
     * the machine's placement is known (traced: docs/model.md section 9,
     * "The start the kernel gives them"); NULL: in turn, as above.
     * noise_on[k] busy neighbours on the PU of OS index k, for k <
     * noise_on_count (their sum must be `noise`); start_on[r] the PU (OS
     * index) unbound participant r starts on, for each of the n
     * participants (start_on_count must be n, and unbound set).
     */
    const unsigned *noise_on;
    unsigned noise_on_count;
    const unsigned *start_on;
    unsigned start_on_count;
    /* The timer tick in ns (0: the default, 4 ms, CONFIG_HZ=250 as on the
     * development VM; else 1e5 to 1e8, e.g. 1e6 for CONFIG_HZ=1000, which
     * topsync-bench-sched-costs reports as tick_hz). A slice that ends
     * between two ticks runs on to the next one, and every CPU ticks at
     * once, so the tick decides how the participants' turns line up with
     * their busy neighbours' (docs/model.md section 9, "The tick"). */
    double tick_ns;
    /* The kernel's scheduler (default EEVDF). With CFS, slice_ns is its
     * minimum granularity (0: the default for the model's PUs, 0.75 ms
     * times 1 + log2 of at most 8), and its latency and wake-up
     * granularity are 8 and 4/3 of it, as the kernel's defaults are. */
    topsync_sim_scheduler_t scheduler;
    /* The cost of one pause of a spinning waiter in ns (0: the default, 23,
     * measured on the development VM as the library measures its own). The
     * library converts its spin bounds to pauses with the cost it measures
     * in each process; the simulation converts them with this, so that the
     * same options give the same prediction in every process. */
    double pause_ns;
} topsync_sim_options_t;

/* The largest crowd of participants on one PU that
 * topsync_sim_result_t.crowd_share tells apart. */
#define TOPSYNC_SIM_CROWD_MAX 64

typedef struct topsync_sim_result {
    /* Mean latency of the slowest participant: the largest over
     * participants of (time leaving the last episode - time entering the
     * first) / episodes, as topsync-bench barrier measures it. */
    double latency_ns;
    double fastest_ns; /* the same figure of the fastest participant */
    uint64_t events;   /* simulated memory operations */
    uint64_t episodes; /* timed episodes run */
    char resolved[96]; /* the algorithm as resolved ("topo:numa,socket/global") */
    char wait[8];      /* the wait policy simulated */
    unsigned mlp;      /* the memory-level parallelism simulated */
    /* With a scheduler: the participants' futex sleeps and wake-ups, the
     * PUs' switches between tasks, and moves of woken participants. */
    uint64_t sleeps, wakeups, switches, migrations;
    /* With a scheduler: the participants' mean wait on their run queue
     * each time one was given its CPU, from when it became runnable (its
     * wake-up's arrival, or being preempted), as Linux's schedstat counts
     * a task's run delay and timeslices; 0 without a scheduler. */
    double runqueue_wait_ns;
    /* With a scheduler: the share of the time, from the last
     * participant's creation to the first one's return, during which the
     * most participants on one PU was i (crowd_share[n]: all n on one,
     * crowd_share[1]: each on its own), as scripts/sched_placement.sh
     * measures a traced run's threads; a crowd over TOPSYNC_SIM_CROWD_MAX
     * counts as TOPSYNC_SIM_CROWD_MAX. All 0 without a scheduler. */
    double crowd_share[TOPSYNC_SIM_CROWD_MAX + 1];
} topsync_sim_result_t;

void topsync_sim_options_init(topsync_sim_options_t *options);

/* The algorithm name of glibc's pthread_barrier as a peer: one arrival
 * counter, waiters that sleep on the futex at once, the last arriver wakes
 * them all; simulated with the scheduler always (docs/model.md section 9). */
#define TOPSYNC_SIM_PEER_GLIBC "peer:glibc"

/*
 * Simulate n participants bound to cpusets[0..n-1] (each to one PU or a
 * set of PUs: the first PU of each set is where it runs; two participants
 * on one PU share it through the scheduler, see options) through the
 * barrier `algorithm` (any name topsync_barrier_create accepts, or
 * TOPSYNC_SIM_PEER_GLIBC).
 *
 * Returns 0 with *result filled; -EPROTO when the invariant broke (a
 * participant left an episode before every participant entered it; the
 * message names both and the virtual time); -EDEADLK when every
 * participant waits and none can go on (the message names the episode and
 * who never arrived); -EINVAL / -ENOMEM as usual. Single-threaded and
 * reentrant: concurrent simulations in different threads are fine.
 */
int topsync_sim_barrier(const topsync_model_t *model, unsigned n,
                        const hwloc_const_bitmap_t *cpusets, const char *algorithm,
                        const topsync_sim_options_t *options, topsync_sim_result_t *result);

#ifdef __cplusplus
}
#endif

#endif /* TOPSYNC_MODEL_H */
