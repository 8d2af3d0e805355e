/*
 * topsync-sim: predict topsync's barriers on a machine you do not have
 * (docs/model.md).
 * The why: docs/design.md section 8.23.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <topsync.h>

#include "cli_output.h"

#define MAX_ALGORITHMS 64
#define MAX_NP 8192u

/* --os-ns NAME=NS: the scheduler's costs by name, in the order of
 * parse_os_ns's fields; the help and the error message list them from
 * here */
static const char *const os_cost_names[] = {
    "slice", "switch",    "wake-call", "wake-latency",    "wake-latency-busy",
    "yield", "sleep-cpu", "create",    "wake-call-local", "tick",
    "pause"};
#define NOS_COSTS (sizeof os_cost_names / sizeof *os_cost_names)

/* --scheduler's names, in topsync_sim_scheduler_t's order: as given on the
 * command line and in JSON, and as the header line prints it. */
static const struct {
    const char *option, *title;
} scheduler_names[] = {
    [TOPSYNC_SIM_SCHED_EEVDF] = {"eevdf", "EEVDF"},
    [TOPSYNC_SIM_SCHED_CFS] = {"cfs", "CFS"},
};

/* "slice, switch, ..., create" into buf; with `indent`, the list follows
 * a "(" at that column, and a name that would end past column 79 starts a
 * line of its own, indented as much */
static const char *os_cost_list(char *buf, size_t len, int indent)
{
    size_t used = 0;
    int column = indent + 1;
    buf[0] = '\0';
    for (size_t i = 0; i < NOS_COSTS && used < len; i++) {
        const char *sep = i ? ", " : "";
        int width = (int)strlen(os_cost_names[i]);
        if (indent && i && column + 2 + width > 79) {
            used += (size_t)snprintf(buf + used, len - used, ",\n%*s", indent, "");
            sep = "";
            column = indent;
        }
        if (used < len)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", sep, os_cost_names[i]);
        column += (int)strlen(sep) + width;
    }
    return buf;
}

static void usage(FILE *f)
{
    char costs[200];
    fprintf(
        f,
        "usage: topsync-sim barrier [MACHINE] --np N [--map-by core|numa|socket]\n"
        "                   --algorithm NAME|all [--algorithm NAME ...] [--episodes E]\n"
        "                   [--warmup W] [--run-ms MS] [--seed S] [--wait spin|yield|block]\n"
        "                   [--noise K] [--noise-on LIST] [--start-on LIST]\n"
        "                   [--bind core|none] [--os-ns LIST] [--scheduler eevdf|cfs]\n"
        "                   [--json] [--output FILE.json]\n"
        "       topsync-sim levels [MACHINE] [--json]\n"
        "       topsync-sim table [MACHINE]\n"
        "\n"
        "MACHINE (docs/model.md):\n"
        "  --topology STRING     hwloc synthetic topology, e.g. 'pack:2 numa:2 l3:1 core:32 pu:1'\n"
        "  --xml FILE            hwloc XML topology (default for both: this machine)\n"
        "  --c2c FILE            core-to-core latency table, CSV (lower triangle, ns); without\n"
        "                        it the table is derived from the levels\n"
        "  --cross-package-ns NS latency between packages when the table covers one package\n"
        "                        (default %.0f, see docs/model.md)\n"
        "  --level-ns LIST       per-level latencies of a derived table, e.g. l3=30,machine=150\n"
        "                        (levels: core, l2, l3, numa, package, machine)\n"
        "  --scale X             multiply every latency by X\n"
        "  --mlp K               misses a core keeps outstanding at once, 1 to %u (default:\n"
        "                        not known, simulated as 1; docs/model.md section 4)\n"
        "  --home-service-ns NS  a line's home (its NUMA node) serves one miss or exclusive\n"
        "                        request at a time, each taking NS (default 0: not modelled)\n"
        "  --raw-table           take every pair of the table as given (default: a pair far\n"
        "                        above its level is modelled at the level's median;\n"
        "                        docs/model.md, \"Disturbed pairs\")\n"
        "\n"
        "barrier:\n"
        "  --np N                virtual participants, 1 to %u (more than the cores share\n"
        "                        them through the scheduler)\n"
        "  --map-by WHAT         placement, as topsync-info and mpirun (default core)\n"
        "  --algorithm NAME      a barrier algorithm (topsync-info --list-algorithms, with\n"
        "                        topo:LEVELS and /tree), peer:glibc (glibc's barrier, under\n"
        "                        the scheduler), or all; may be repeated\n"
        "  --episodes E          timed episodes (default 1000), after W warm-up ones\n"
        "                        (default E/10)\n"
        "  --run-ms MS           each run at least MS ms of virtual time, as topsync-bench\n"
        "                        --run-ms: episodes go on past E until then, and the warm-up\n"
        "                        lasts MS/10 at least (a busy node: runs that span many time\n"
        "                        slices; default 0, E decides)\n"
        "  --seed S              orders simultaneous events (default 1)\n"
        "  --wait POLICY         wait policy of the simulated barrier (default spin)\n"
        "  --noise K             K busy neighbour tasks, one per PU in turn (docs/model.md\n"
        "                        section 9: the OS scheduler then runs; default 0)\n"
        "  --noise-on LIST       where the busy neighbours run, instead: N,N,... per PU in OS\n"
        "                        order (e.g. 3,1: three on PU 0, one on PU 1), as traced on\n"
        "                        the machine (docs/model.md section 9)\n"
        "  --start-on LIST       with --bind none: the PU each participant starts on, one\n"
        "                        per participant (e.g. 0,0,0,0), instead of in turn\n"
        "  --bind WHAT           core: each participant on its PU (default); none: unbound,\n"
        "                        a woken participant moves to an idle PU (scheduler on)\n"
        "  --os-ns LIST          the scheduler's costs, timer tick and pause, e.g.\n"
        "                        slice=3000000,tick=1000000 (HZ=1000; default 4 ms,\n"
        "                        HZ=250),pause=40 (a spinning waiter's pause; default 23)\n"
        "                        (%s;\n"
        "                        0: the default)\n"
        "  --scheduler NAME      the kernel's: eevdf (Linux 6.6 and later, default) or cfs\n"
        "                        (before 6.6: RHEL 8 and 9, Ubuntu 22.04, Debian 12)\n"
        "  --fault KIND:RANK     break the barrier on purpose (skip-arrival, skip-wait),\n"
        "                        to see the simulator's invariant check catch it\n"
        "  --json, --output FILE JSON records as topsync-bench barrier --json writes them\n"
        "\n"
        "levels prints, for each level two CPUs can share, how many pairs of the table\n"
        "share it and their latencies; table writes the model's table as CSV.\n"
        "Exit status: 0, 1 when a simulation fails (its message says why), 2 on bad input.\n",
        TOPSYNC_MODEL_CROSS_PACKAGE_NS, TOPSYNC_MODEL_MAX_MLP, MAX_NP,
        os_cost_list(costs, sizeof costs, 24));
}

static int parse_double(const char *s, double *out, double min, double max)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || s[0] == ' ' || !isfinite(v) || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* NAME=NS,... into fields[i] for names[i] (each NS from min to 1e9);
 * -1 on anything else. */
static int parse_named_ns(const char *list, const char *const *names, double *const *fields,
                          size_t n, double min)
{
    char buf[256];
    if (strlen(list) >= sizeof buf || !*list)
        return -1;
    strcpy(buf, list);
    for (char *save, *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq)
            return -1;
        *eq = '\0';
        size_t k = 0;
        while (k < n && strcmp(item, names[k]))
            k++;
        if (k == n || parse_double(eq + 1, fields[k], min, 1e9))
            return -1;
    }
    return 0;
}

/* --os-ns NAME=NS,... with NAME of os_cost_names (0: the default); no
 * empty item */
static int parse_os_ns(const char *arg, topsync_sim_options_t *so)
{
    double *const fields[NOS_COSTS] = {&so->slice_ns,
                                       &so->switch_ns,
                                       &so->wake_call_ns,
                                       &so->wake_latency_ns,
                                       &so->wake_latency_busy_ns,
                                       &so->yield_ns,
                                       &so->sleep_cpu_ns,
                                       &so->create_ns,
                                       &so->wake_call_local_ns,
                                       &so->tick_ns,
                                       &so->pause_ns};
    size_t len = strlen(arg);
    if (len && (arg[0] == ',' || arg[len - 1] == ',' || strstr(arg, ",,")))
        return -1;
    return parse_named_ns(arg, os_cost_names, fields, NOS_COSTS, 0);
}

static int parse_u64(const char *s, unsigned long long *out, unsigned long long min,
                     unsigned long long max);

/* "3,1" into out[], at most `most` items each at most `max`; no empty
 * item. */
static int parse_uint_list(const char *arg, unsigned *out, unsigned most, unsigned max,
                           unsigned *count)
{
    char item[24];
    unsigned n = 0;
    for (const char *at = arg;; n++) {
        const char *comma = strchr(at, ',');
        size_t len = comma ? (size_t)(comma - at) : strlen(at);
        unsigned long long v;
        if (n == most || !len || len >= sizeof item)
            return -1;
        memcpy(item, at, len);
        item[len] = 0;
        if (parse_u64(item, &v, 0, max))
            return -1;
        out[n] = (unsigned)v;
        if (!comma)
            break;
        at = comma + 1;
    }
    *count = n + 1;
    return 0;
}

static int parse_u64(const char *s, unsigned long long *out, unsigned long long min,
                     unsigned long long max)
{
    char *end;
    errno = 0;
    if (!*s || s[0] == '-' || s[0] == ' ' || s[0] == '+')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* "l3=30,machine=150" into level_ns. */
static int parse_level_ns(const char *list, double *level_ns)
{
    const char *names[TOPSYNC_MODEL_NLEVELS];
    double *fields[TOPSYNC_MODEL_NLEVELS];
    for (int l = 0; l < TOPSYNC_MODEL_NLEVELS; l++) {
        names[l] = topsync_model_level_name((topsync_model_level_t)l);
        fields[l] = &level_ns[l];
    }
    return parse_named_ns(list, names, fields, TOPSYNC_MODEL_NLEVELS, 0.001);
}

struct machine {
    const char *synthetic, *xml, *c2c;
    topsync_model_options_t options;
    topsync_topology_t *topology;
    topsync_model_t *model;
};

static int load_machine(struct machine *m)
{
    int rc = m->xml         ? topsync_topology_load_xml(&m->topology, m->xml)
             : m->synthetic ? topsync_topology_load_synthetic(&m->topology, m->synthetic)
                            : topsync_topology_load(&m->topology);
    if (rc == 0) {
        m->options.c2c_path = m->c2c;
        rc = topsync_model_create(&m->model, m->topology, &m->options);
    }
    if (rc < 0) {
        fprintf(stderr, "topsync-sim: %s\n", topsync_error_message());
        topsync_topology_destroy(m->topology);
        m->topology = NULL;
        return rc == -ENOMEM ? 1 : 2;
    }
    return 0;
}

static void free_machine(struct machine *m)
{
    topsync_model_destroy(m->model);
    topsync_topology_destroy(m->topology);
}

/* ---------------------------------------------------------------------- */

/* ", \"KEY\": [v, ...]", or null when v is NULL */
static void print_json_list(FILE *f, const char *key, const unsigned *v, unsigned n)
{
    fprintf(f, ", \"%s\": %s", key, v ? "[" : "null");
    for (unsigned i = 0; v && i < n; i++)
        fprintf(f, "%s%u", i ? ", " : "", v[i]);
    fprintf(f, "%s", v ? "]" : "");
}

struct record {
    const char *algorithm;
    topsync_sim_result_t result;
    double seconds;
};

static void print_json(FILE *f, const struct record *recs, size_t nrec, unsigned np,
                       const char *map_by, unsigned long long seed, const struct machine *m,
                       const topsync_sim_options_t *so)
{
    fprintf(f, "[\n");
    for (size_t i = 0; i < nrec; i++) {
        const topsync_sim_result_t *r = &recs[i].result;
        fprintf(f,
                "  {\"algorithm\": \"%s\", \"participants\": %u, \"wait\": \"%s\", "
                "\"latency_ns\": %.1f, \"iterations\": %llu, \"runs_ns\": [%.1f], "
                "\"resolved\": \"%s\", \"map_by\": \"%s\", \"fastest_ns\": %.1f, "
                "\"events\": %llu, \"seed\": %llu, \"sim_seconds\": %.3f, "
                "\"mlp\": %u, \"bind\": \"%s\", \"noise\": %u, \"sleeps\": %llu, "
                "\"wakeups\": %llu, \"switches\": %llu, \"migrations\": %llu, "
                "\"runqueue_wait_ns\": %.1f, \"scheduler\": \"%s\"",
                recs[i].algorithm, np, r->wait, r->latency_ns, (unsigned long long)r->episodes,
                r->latency_ns, r->resolved, map_by, r->fastest_ns, (unsigned long long)r->events,
                seed, recs[i].seconds, r->mlp, so->unbound ? "none" : "core", so->noise,
                (unsigned long long)r->sleeps, (unsigned long long)r->wakeups,
                (unsigned long long)r->switches, (unsigned long long)r->migrations,
                r->runqueue_wait_ns, scheduler_names[so->scheduler].option);
        print_json_list(f, "noise_on", so->noise_on, so->noise_on_count);
        print_json_list(f, "start_on", so->start_on, so->start_on_count);
        /* the crowds that occurred, largest first, as
         * scripts/sched_placement.sh lists a traced run's */
        fprintf(f, ", \"crowd_share\": {");
        const char *sep = "";
        for (unsigned c = TOPSYNC_SIM_CROWD_MAX + 1; c-- > 0;)
            if (r->crowd_share[c] > 0) {
                fprintf(f, "%s\"%u\": %.4f", sep, c, r->crowd_share[c]);
                sep = ", ";
            }
        fprintf(f, "}, \"model\": \"");
        for (const char *c = topsync_model_describe(m->model); *c; c++)
            fprintf(f, *c == '"' || *c == '\\' ? "\\%c" : "%c", *c);
        fprintf(f, "\"}%s\n", i + 1 < nrec ? "," : "");
    }
    fprintf(f, "]\n");
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *const all_algorithms[] = {"auto",
                                             "sense-reversing",
                                             "sense-reversing-counter",
                                             "sense-reversing-gr",
                                             "combining-tree",
                                             "mcs",
                                             "tournament",
                                             "dissemination",
                                             "topo",
                                             "topo/tree"};

/* --bind none: every participant's set is the whole machine, as an
 * unbound thread's is (the barrier's wait policy then resolves as for
 * unbound threads; the scheduler places them, docs/model.md section 9). */
static int unbind(const struct machine *m, unsigned np, hwloc_bitmap_t *sets)
{
    hwloc_const_cpuset_t all =
        hwloc_topology_get_allowed_cpuset(topsync_topology_hwloc(m->topology));
    for (unsigned r = 0; r < np; r++)
        if (hwloc_bitmap_copy(sets[r], all) < 0)
            return -1;
    return 0;
}

static int cmd_barrier(struct machine *m, unsigned np, const char *map_arg, const char **names,
                       size_t nnames, topsync_sim_options_t *so, int json, const char *output)
{
    topsync_map_by_t map_by;
    if (topsync_map_by_parse(map_arg, &map_by) < 0) {
        fprintf(stderr, "topsync-sim: --map-by: %s\n", topsync_error_message());
        return 2;
    }
    int rc = load_machine(m);
    if (rc)
        return rc;
    /* "all" expands in place; glibc's barrier beside them where the
     * scheduler runs (busy neighbours, unbound participants, or more
     * participants than cores) */
    bool scheduled = so->noise || so->unbound || np > topsync_topology_ncores(m->topology);
    const char *list[MAX_ALGORITHMS];
    size_t n = 0;
    for (size_t i = 0; i < nnames; i++) {
        if (!strcmp(names[i], "all")) {
            for (size_t k = 0; k < sizeof all_algorithms / sizeof *all_algorithms; k++)
                if (n < MAX_ALGORITHMS)
                    list[n++] = all_algorithms[k];
            if (scheduled && n < MAX_ALGORITHMS)
                list[n++] = TOPSYNC_SIM_PEER_GLIBC;
        } else if (n < MAX_ALGORITHMS) {
            list[n++] = names[i];
        }
    }
    /* more participants than cores share them, through the scheduler
     * (mapped round robin, as topsync-bench --bind core does) */
    hwloc_bitmap_t *sets = calloc(np, sizeof *sets);
    struct record *recs = calloc(n, sizeof *recs);
    if (!sets || !recs ||
        topsync_placement_compute(m->topology, np, map_by, TOPSYNC_BIND_TO_CORE, sets) < 0 ||
        (so->unbound && unbind(m, np, sets) < 0)) {
        fprintf(stderr, "topsync-sim: %s\n",
                sets && recs ? topsync_error_message() : "out of memory");
        free(sets);
        free(recs);
        free_machine(m);
        return 1;
    }
    if (output && cli_output_check("topsync-sim", output, CLI_OUTPUT_JSON, NULL)) {
        free(sets);
        free(recs);
        free_machine(m);
        return 1;
    }
    int status = 0;
    size_t done = 0;
    for (size_t i = 0; i < n; i++) {
        recs[done].algorithm = list[i];
        double t0 = now_seconds();
        rc = topsync_sim_barrier(m->model, np, (const hwloc_const_bitmap_t *)sets, list[i], so,
                                 &recs[done].result);
        recs[done].seconds = now_seconds() - t0;
        if (rc < 0) {
            fprintf(stderr, "topsync-sim: %s: %s\n", list[i], topsync_error_message());
            status = rc == -EINVAL ? 2 : 1;
            continue;
        }
        done++;
    }
    if (output) {
        cli_output_t out;
        if (cli_output_open(&out, "topsync-sim", output, CLI_OUTPUT_JSON, NULL)) {
            status = 1;
        } else {
            print_json(out.f, recs, done, np, map_arg, (unsigned long long)so->seed, m, so);
            if (cli_output_close(&out))
                status = 1;
        }
    }
    if (json) {
        print_json(stdout, recs, done, np, map_arg, (unsigned long long)so->seed, m, so);
    } else {
        char length[64];
        if (so->run_ms > 0)
            snprintf(length, sizeof length, "runs of %g ms", so->run_ms);
        else
            snprintf(length, sizeof length, "%u episodes", so->episodes ? so->episodes : 1000);
        printf("predicted barrier latency, %u participants, map-by %s, %s, seed %llu\n"
               "machine: %s\nmodel: %s%s\n\n",
               np, map_arg, length, (unsigned long long)so->seed,
               topsync_topology_source(m->topology), topsync_model_describe(m->model),
               topsync_model_mlp(m->model) ? ""
                                           : " (outstanding misses per core not known: "
                                             "simulated as 1; see --mlp)");
        bool sched = so->noise || so->unbound || np > topsync_topology_ncores(m->topology);
        if (sched)
            printf("scheduler: %s, %u busy neighbour task%s%s, participants %s%s (docs/model.md "
                   "section 9)\n\n",
                   scheduler_names[so->scheduler].title, so->noise, so->noise == 1 ? "" : "s",
                   so->noise_on ? " where --noise-on puts them" : "",
                   so->unbound ? "unbound" : "bound to their PUs",
                   so->start_on ? ", starting where --start-on puts them" : "");
        printf("  %-24s %-28s %-6s %12s %12s %10s %8s%s\n", "algorithm", "resolved", "wait",
               "latency ns", "fastest ns", "events", "sim s",
               sched ? "   sleeps wake-ups switches" : "");
        for (size_t i = 0; i < done; i++) {
            printf("  %-24s %-28s %-6s %12.1f %12.1f %10llu %8.2f", recs[i].algorithm,
                   recs[i].result.resolved, recs[i].result.wait, recs[i].result.latency_ns,
                   recs[i].result.fastest_ns, (unsigned long long)recs[i].result.events,
                   recs[i].seconds);
            if (sched)
                printf(" %8llu %8llu %8llu", (unsigned long long)recs[i].result.sleeps,
                       (unsigned long long)recs[i].result.wakeups,
                       (unsigned long long)recs[i].result.switches);
            printf("\n");
        }
    }
    for (unsigned r = 0; r < np; r++)
        hwloc_bitmap_free(sets[r]);
    free(sets);
    free(recs);
    free_machine(m);
    return status;
}

/* ---------------------------------------------------------------------- */

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Every PU of the model, ascending OS index. */
static unsigned model_pus(const struct machine *m, unsigned **out)
{
    hwloc_const_cpuset_t all =
        hwloc_topology_get_allowed_cpuset(topsync_topology_hwloc(m->topology));
    unsigned n = 0, *pus = malloc(((size_t)hwloc_bitmap_weight(all) + 1) * sizeof *pus);
    int pu;
    if (pus)
        hwloc_bitmap_foreach_begin(
            pu, all) if (topsync_model_latency_ns(m->model, (unsigned)pu, (unsigned)pu) == 0)
            pus[n++] = (unsigned)pu;
    hwloc_bitmap_foreach_end();
    *out = pus;
    return pus ? n : 0;
}

static int cmd_levels(struct machine *m, int json)
{
    int rc = load_machine(m);
    if (rc)
        return rc;
    unsigned *pus, n = model_pus(m, &pus);
    size_t pairs = (size_t)n * (n ? n - 1 : 0) / 2;
    double *by_level[TOPSYNC_MODEL_NLEVELS];
    size_t count[TOPSYNC_MODEL_NLEVELS] = {0};
    for (int l = 0; l < TOPSYNC_MODEL_NLEVELS; l++)
        by_level[l] = malloc((pairs ? pairs : 1) * sizeof(double));
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < i; j++) {
            int l = topsync_model_pair_level(m->model, pus[i], pus[j]);
            if (l >= 0 && by_level[l])
                by_level[l][count[l]++] = topsync_model_latency_ns(m->model, pus[i], pus[j]);
        }
    if (json)
        printf("{\"machine\": \"%s\", \"levels\": [", topsync_topology_source(m->topology));
    else
        printf("machine: %s\nmodel: %s\n\n  %-8s %8s %10s %10s %10s %10s\n",
               topsync_topology_source(m->topology), topsync_model_describe(m->model), "level",
               "pairs", "median ns", "mean ns", "min ns", "max ns");
    int first = 1;
    for (int l = 0; l < TOPSYNC_MODEL_NLEVELS; l++) {
        if (!count[l] || !by_level[l])
            continue;
        qsort(by_level[l], count[l], sizeof(double), by_double);
        double sum = 0;
        for (size_t k = 0; k < count[l]; k++)
            sum += by_level[l][k];
        size_t c = count[l];
        double median =
            c % 2 ? by_level[l][c / 2] : (by_level[l][c / 2 - 1] + by_level[l][c / 2]) / 2;
        const char *name = topsync_model_level_name((topsync_model_level_t)l);
        if (json)
            printf("%s{\"level\": \"%s\", \"pairs\": %zu, \"median_ns\": %.3f, \"mean_ns\": %.3f, "
                   "\"min_ns\": %.3f, \"max_ns\": %.3f}",
                   first ? "" : ", ", name, c, median, sum / (double)c, by_level[l][0],
                   by_level[l][c - 1]);
        else
            printf("  %-8s %8zu %10.1f %10.1f %10.1f %10.1f\n", name, c, median, sum / (double)c,
                   by_level[l][0], by_level[l][c - 1]);
        first = 0;
    }
    if (json) {
        printf("], \"defaults\": {");
        for (int l = 0; l < TOPSYNC_MODEL_NLEVELS; l++)
            printf("%s\"%s\": %.3f", l ? ", " : "",
                   topsync_model_level_name((topsync_model_level_t)l),
                   topsync_model_level_default_ns((topsync_model_level_t)l));
        printf("}}\n");
    }
    for (int l = 0; l < TOPSYNC_MODEL_NLEVELS; l++)
        free(by_level[l]);
    free(pus);
    free_machine(m);
    return 0;
}

static int cmd_table(struct machine *m)
{
    int rc = load_machine(m);
    if (rc)
        return rc;
    unsigned *pus, n = model_pus(m, &pus);
    unsigned limit = n ? pus[n - 1] + 1 : 0;
    if (limit != n) {
        fprintf(stderr,
                "topsync-sim: the PUs' OS indexes are not 0..%u without holes; a CSV "
                "table indexes CPUs by OS number and cannot say which are missing\n",
                n ? n - 1 : 0);
        free(pus);
        free_machine(m);
        return 1;
    }
    for (unsigned i = 0; i < n; i++) {
        for (unsigned j = 0; j < n; j++) {
            if (j)
                putchar(',');
            if (j < i)
                printf("%.3f", topsync_model_latency_ns(m->model, i, j));
        }
        putchar('\n');
    }
    free(pus);
    free_machine(m);
    return 0;
}

int main(int argc, char **argv)
{
    cli_check_stdout_at_exit("topsync-sim");
    if (argc >= 2 && !strcmp(argv[1], "--version")) {
        printf("topsync-sim (topsync) %s\n", topsync_version());
        return 0;
    }
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "barrier") && strcmp(cmd, "levels") && strcmp(cmd, "table")) {
        fprintf(stderr, "topsync-sim: unknown command '%s'; valid: barrier, levels, table\n", cmd);
        return 2;
    }
    struct machine m = {0};
    topsync_model_options_init(&m.options);
    topsync_sim_options_t so;
    topsync_sim_options_init(&so);
    static unsigned noise_on[MAX_NP], start_on[MAX_NP]; /* --noise-on, --start-on */
    so.seed = 1;
    unsigned np = 0;
    const char *map_arg = "core", *output = NULL;
    const char *names[MAX_ALGORITHMS];
    size_t nnames = 0;
    int json = 0;
    unsigned long long v;
    enum {
        O_TOPO = 256,
        O_XML,
        O_C2C,
        O_CROSS,
        O_LEVELS,
        O_SCALE,
        O_MLP,
        O_HOME,
        O_RAW,
        O_NP,
        O_MAP,
        O_ALG,
        O_EPI,
        O_WARM,
        O_SEED,
        O_WAIT,
        O_FAULT,
        O_NOISE,
        O_BIND,
        O_OS,
        O_RUN_MS,
        O_NOISE_ON,
        O_START_ON,
        O_SCHED,
        O_JSON,
        O_OUT,
        O_HELP
    };
    static const struct option longopts[] = {{"topology", required_argument, 0, O_TOPO},
                                             {"xml", required_argument, 0, O_XML},
                                             {"c2c", required_argument, 0, O_C2C},
                                             {"cross-package-ns", required_argument, 0, O_CROSS},
                                             {"level-ns", required_argument, 0, O_LEVELS},
                                             {"scale", required_argument, 0, O_SCALE},
                                             {"mlp", required_argument, 0, O_MLP},
                                             {"home-service-ns", required_argument, 0, O_HOME},
                                             {"raw-table", no_argument, 0, O_RAW},
                                             {"np", required_argument, 0, O_NP},
                                             {"map-by", required_argument, 0, O_MAP},
                                             {"algorithm", required_argument, 0, O_ALG},
                                             {"episodes", required_argument, 0, O_EPI},
                                             {"warmup", required_argument, 0, O_WARM},
                                             {"run-ms", required_argument, 0, O_RUN_MS},
                                             {"seed", required_argument, 0, O_SEED},
                                             {"wait", required_argument, 0, O_WAIT},
                                             {"fault", required_argument, 0, O_FAULT},
                                             {"noise", required_argument, 0, O_NOISE},
                                             {"bind", required_argument, 0, O_BIND},
                                             {"os-ns", required_argument, 0, O_OS},
                                             {"noise-on", required_argument, 0, O_NOISE_ON},
                                             {"start-on", required_argument, 0, O_START_ON},
                                             {"scheduler", required_argument, 0, O_SCHED},
                                             {"json", no_argument, 0, O_JSON},
                                             {"output", required_argument, 0, O_OUT},
                                             {"help", no_argument, 0, O_HELP},
                                             {0, 0, 0, 0}};
    int c;
    unsigned given = 0; /* bit c - O_TOPO: the options on the command line */
    optind = 2;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c >= O_TOPO && c < O_HELP)
            given |= 1u << (c - O_TOPO);
        switch (c) {
        case O_TOPO: m.synthetic = optarg; break;
        case O_XML: m.xml = optarg; break;
        case O_C2C: m.c2c = optarg; break;
        case O_CROSS:
            if (parse_double(optarg, &m.options.cross_package_ns, 0.001, 1e9)) {
                fprintf(stderr,
                        "topsync-sim: --cross-package-ns takes a latency in ns "
                        "(> 0, up to 1e9), not '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case O_LEVELS:
            if (parse_level_ns(optarg, m.options.level_ns)) {
                fprintf(stderr,
                        "topsync-sim: --level-ns takes LEVEL=NS,... with LEVEL one of "
                        "core, l2, l3, numa, package, machine and NS > 0, not '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case O_SCALE:
            if (parse_double(optarg, &m.options.scale, 1e-6, 1e6)) {
                fprintf(stderr,
                        "topsync-sim: --scale takes a factor from 1e-6 to 1e6, not "
                        "'%s'\n",
                        optarg);
                return 2;
            }
            break;
        case O_MLP:
            if (parse_u64(optarg, &v, 1, TOPSYNC_MODEL_MAX_MLP)) {
                fprintf(stderr,
                        "topsync-sim: --mlp takes 1 to %u outstanding misses, not "
                        "'%s'\n",
                        TOPSYNC_MODEL_MAX_MLP, optarg);
                return 2;
            }
            m.options.mlp = (unsigned)v;
            break;
        case O_HOME:
            if (parse_double(optarg, &m.options.home_service_ns, 0, 1e6)) {
                fprintf(stderr,
                        "topsync-sim: --home-service-ns takes ns from 0 (not modelled) to "
                        "1e6, not '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case O_RAW: m.options.raw_table = true; break;
        case O_NP:
            if (parse_u64(optarg, &v, 1, MAX_NP)) {
                fprintf(stderr, "topsync-sim: --np takes 1 to %u, not '%s'\n", MAX_NP, optarg);
                return 2;
            }
            np = (unsigned)v;
            break;
        case O_MAP: map_arg = optarg; break;
        case O_ALG:
            if (strcmp(optarg, "all") && strcmp(optarg, TOPSYNC_SIM_PEER_GLIBC) &&
                topsync_barrier_algorithm_validate(optarg) < 0) {
                fprintf(stderr, "topsync-sim: %s\n", topsync_error_message());
                return 2;
            }
            if (nnames == MAX_ALGORITHMS) {
                fprintf(stderr, "topsync-sim: at most %d --algorithm\n", MAX_ALGORITHMS);
                return 2;
            }
            names[nnames++] = optarg;
            break;
        case O_EPI:
        case O_WARM:
            if (parse_u64(optarg, &v, 1, 10000000)) {
                fprintf(stderr, "topsync-sim: --%s takes 1 to 10000000, not '%s'\n",
                        c == O_EPI ? "episodes" : "warmup", optarg);
                return 2;
            }
            *(c == O_EPI ? &so.episodes : &so.warmup) = (unsigned)v;
            break;
        case O_RUN_MS:
            if (parse_double(optarg, &so.run_ms, 0, 1e6)) {
                fprintf(stderr, "topsync-sim: --run-ms takes 0 to 1e6 ms, not '%s'\n", optarg);
                return 2;
            }
            break;
        case O_SEED:
            if (parse_u64(optarg, &v, 0, ULLONG_MAX)) {
                fprintf(stderr, "topsync-sim: --seed takes a whole number, not '%s'\n", optarg);
                return 2;
            }
            so.seed = v;
            break;
        case O_WAIT:
            if (topsync_wait_policy_parse(optarg, &so.wait) < 0) {
                fprintf(stderr, "topsync-sim: --wait: %s\n", topsync_error_message());
                return 2;
            }
            break;
        case O_FAULT: {
            const char *colon = strchr(optarg, ':');
            size_t len = colon ? (size_t)(colon - optarg) : 0;
            if (colon && len == 12 && !strncmp(optarg, "skip-arrival", len))
                so.fault = TOPSYNC_SIM_FAULT_SKIP_ARRIVAL;
            else if (colon && len == 9 && !strncmp(optarg, "skip-wait", len))
                so.fault = TOPSYNC_SIM_FAULT_SKIP_WAIT;
            if (!so.fault || parse_u64(colon + 1, &v, 0, MAX_NP - 1)) {
                fprintf(stderr,
                        "topsync-sim: --fault takes skip-arrival:RANK or "
                        "skip-wait:RANK, not '%s'\n",
                        optarg);
                return 2;
            }
            so.fault_rank = (unsigned)v;
            break;
        }
        case O_NOISE:
            if (parse_u64(optarg, &v, 0, MAX_NP)) {
                fprintf(stderr, "topsync-sim: --noise takes 0 to %u busy neighbours, not '%s'\n",
                        MAX_NP, optarg);
                return 2;
            }
            so.noise = (unsigned)v;
            break;
        case O_BIND:
            if (strcmp(optarg, "core") && strcmp(optarg, "none")) {
                fprintf(stderr, "topsync-sim: --bind takes core or none, not '%s'\n", optarg);
                return 2;
            }
            so.unbound = !strcmp(optarg, "none");
            break;
        case O_OS:
            if (parse_os_ns(optarg, &so)) {
                char costs[160];
                fprintf(stderr,
                        "topsync-sim: --os-ns takes NAME=NS,... with NAME one of %s and NS "
                        "from 0 (the default) to 1e9, not '%s'\n",
                        os_cost_list(costs, sizeof costs, 0), optarg);
                return 2;
            }
            break;
        case O_NOISE_ON:
            if (parse_uint_list(optarg, noise_on, MAX_NP, MAX_NP, &so.noise_on_count)) {
                fprintf(stderr,
                        "topsync-sim: --noise-on takes busy neighbours per PU in OS order, "
                        "N,N,... (at most %u PUs, %u each), not '%s'\n",
                        MAX_NP, MAX_NP, optarg);
                return 2;
            }
            so.noise_on = noise_on;
            break;
        case O_START_ON:
            if (parse_uint_list(optarg, start_on, MAX_NP, MAX_NP - 1, &so.start_on_count)) {
                fprintf(stderr,
                        "topsync-sim: --start-on takes the PU (OS index) each participant "
                        "starts on, PU,PU,... (at most %u), not '%s'\n",
                        MAX_NP, optarg);
                return 2;
            }
            so.start_on = start_on;
            break;
        case O_SCHED: {
            size_t n = sizeof scheduler_names / sizeof scheduler_names[0], i = 0;
            while (i < n && strcmp(optarg, scheduler_names[i].option))
                i++;
            if (i == n) {
                fprintf(stderr, "topsync-sim: --scheduler takes eevdf or cfs, not '%s'\n", optarg);
                return 2;
            }
            so.scheduler = (topsync_sim_scheduler_t)i;
            break;
        }
        case O_JSON: json = 1; break;
        case O_OUT: output = optarg; break;
        case 'h':
        case O_HELP: usage(stdout); return 0;
        default: /* getopt named the option */
            fprintf(stderr, "Try 'topsync-sim --help'.\n");
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "topsync-sim: unexpected argument '%s'; try 'topsync-sim --help'\n",
                argv[optind]);
        return 2;
    }
    if (m.synthetic && m.xml) {
        fprintf(stderr, "topsync-sim: give --topology or --xml, not both\n");
        return 2;
    }
    /* an option the command does not use is refused, not ignored */
    unsigned machine_opts =
        1u << (O_TOPO - O_TOPO) | 1u << (O_XML - O_TOPO) | 1u << (O_C2C - O_TOPO) |
        1u << (O_CROSS - O_TOPO) | 1u << (O_LEVELS - O_TOPO) | 1u << (O_SCALE - O_TOPO) |
        1u << (O_MLP - O_TOPO) | 1u << (O_HOME - O_TOPO) | 1u << (O_RAW - O_TOPO);
    unsigned allowed = !strcmp(cmd, "levels")  ? machine_opts | 1u << (O_JSON - O_TOPO)
                       : !strcmp(cmd, "table") ? machine_opts
                                               : ~0u;
    for (const struct option *lo = longopts; lo->name; lo++) {
        unsigned bit = lo->val >= O_TOPO && lo->val < O_HELP ? 1u << (lo->val - O_TOPO) : 0;
        if (given & ~allowed & bit) {
            fprintf(stderr,
                    "topsync-sim %s: --%s does not apply to this command; try "
                    "'topsync-sim --help'\n",
                    cmd, lo->name);
            return 2;
        }
    }
    if (!strcmp(cmd, "levels"))
        return cmd_levels(&m, json);
    if (!strcmp(cmd, "table"))
        return cmd_table(&m);
    if (!np || !nnames) {
        fprintf(stderr, "topsync-sim: barrier needs --np N and --algorithm NAME|all; try "
                        "'topsync-sim --help'\n");
        return 2;
    }
    if (so.fault && so.fault_rank >= np) {
        fprintf(stderr, "topsync-sim: --fault names participant %u of %u\n", so.fault_rank, np);
        return 2;
    }
    if (so.noise_on) {
        unsigned long placed = 0;
        for (unsigned k = 0; k < so.noise_on_count; k++)
            placed += so.noise_on[k];
        if ((given & 1u << (O_NOISE - O_TOPO)) && placed != so.noise) {
            fprintf(stderr, "topsync-sim: --noise-on places %lu busy neighbours, --noise %u\n",
                    placed, so.noise);
            return 2;
        }
        if (placed > MAX_NP) {
            fprintf(stderr, "topsync-sim: --noise-on places %lu busy neighbours; at most %u\n",
                    placed, MAX_NP);
            return 2;
        }
        so.noise = (unsigned)placed;
    }
    if (so.start_on && (so.start_on_count != np || !so.unbound)) {
        fprintf(stderr,
                "topsync-sim: --start-on gives %u PU%s; it needs one per participant (--np %u) "
                "and --bind none\n",
                so.start_on_count, so.start_on_count == 1 ? "" : "s", np);
        return 2;
    }
    return cmd_barrier(&m, np, map_arg, names, nnames, &so, json, output);
}
