/*
 * topsync-info: the machine (or a synthetic/XML one), its active levels, and
 * the groups of the hierarchical barrier for a given job layout, printed like
 * Fig. 2 of Kurnosov (2022), or as JSON.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <topsync.h>

#include "base/json_escape.h"
#include "info_env.h"
#include "info_preload.h"
#include "mpi_match.h"
#include "node/segment.h"
#include "cli_output.h"

/* Where shm_open's segments live (glibc) */
#define TOPSYNC_SHM_DIR "/dev/shm"

/* Participants topsync-info lays out: 2^20 take about 2 s and 0.4 GB here
 * (placement and groups are O(n log n)); more is not what it is for. */
#define MAX_NP (1u << 20)
/* --explain makes the barrier (a page per participant). */
#define MAX_EXPLAIN_NP 65536u

/* What auto chooses for these participants: a barrier made with "auto". */
static int explain_auto(topsync_topology_t *topo, unsigned np, hwloc_const_bitmap_t *sets,
                        int processes, unsigned node_processes, char *alg, char *wait, char *why,
                        size_t len)
{
    topsync_barrier_options_t o;
    topsync_barrier_options_init(&o);
    o.algorithm = "auto";
    o.topology = topo;
    o.cpusets = sets;
    o.process_shared = processes;
    o.cpu_sharers = node_processes;
    topsync_barrier_t *b;
    if (topsync_barrier_create(&b, np, &o) < 0) {
        fprintf(stderr, "topsync-info: %s\n", topsync_error_message());
        return -1;
    }
    snprintf(alg, 96, "%s", topsync_barrier_algorithm(b));
    snprintf(wait, 16, "%s", topsync_barrier_wait_policy_name(b));
    snprintf(why, len, "%s", topsync_barrier_explain(b));
    topsync_barrier_destroy(b);
    return 0;
}

/* What auto chooses for libtopsync-mpi's collectives on a node of these
 * processes: per MPI library with a collectives entry in this machine's
 * tuning file for the case, and for any other MPI (the rules). */
#define MAX_COLL_MPIS 8
struct coll_explain {
    unsigned n; /* MPIs with an entry, then one for any other */
    char mpi[MAX_COLL_MPIS + 1][TOPSYNC_TUNING_MPI_LEN];
    topsync_coll_choice_t choice[MAX_COLL_MPIS + 1];
};

static int explain_collectives(topsync_topology_t *topo, unsigned np, hwloc_const_bitmap_t *sets,
                               unsigned node_processes, struct coll_explain *out)
{
    char placement[48], path[4096];
    hwloc_topology_t h = topsync_topology_hwloc(topo);
    int cpus = hwloc_bitmap_weight(hwloc_topology_get_allowed_cpuset(h));
    int oversubscribed = (int)(node_processes ? node_processes : np) > cpus;
    out->n = 0;
    if (topsync_tuning_placement(topo, np, sets, placement, sizeof placement) < 0)
        goto failed;
    topsync_tuning_t *tu = NULL;
    if (topsync_tuning_path(topo, path, sizeof path) == 0 && access(path, F_OK) == 0 &&
        topsync_tuning_load(&tu, path, topo) == 0) {
        for (unsigned i = 0; i < topsync_tuning_coll_count(tu) && out->n < MAX_COLL_MPIS; i++) {
            topsync_tuning_coll_entry_t e;
            topsync_tuning_get_coll(tu, i, &e);
            bool seen = !e.oversubscribed != !oversubscribed || strcmp(e.placement, placement);
            for (unsigned j = 0; j < out->n && !seen; j++)
                seen = !strcmp(out->mpi[j], e.mpi);
            if (!seen)
                snprintf(out->mpi[out->n++], sizeof out->mpi[0], "%s", e.mpi);
        }
        topsync_tuning_destroy(tu);
    }
    out->mpi[out->n][0] = '\0';
    for (unsigned j = 0; j <= out->n; j++)
        if (topsync_coll_choose(topo, np, oversubscribed, placement, out->mpi[j], &out->choice[j]) <
            0)
            goto failed;
    out->n++;
    return 0;
failed:
    fprintf(stderr, "topsync-info: %s\n", topsync_error_message());
    return -1;
}

/* A JSON string literal of text (json_escape.h: UTF-8, escapes). */
static void json_string(const char *text)
{
    putchar('"');
    for (const unsigned char *c = (const unsigned char *)text; *c;) {
        char esc[8];
        c += ts_json_escape_char(c, esc);
        fputs(esc, stdout);
    }
    putchar('"');
}

/* The distinct bindings of the ranks, each listed once: binding[i] is rank
 * i's index into them (the sets are the topology's, so equal bindings are
 * the same pointer). An open-addressing table of pointers: O(np). */
static unsigned index_bindings(const hwloc_const_bitmap_t *sets, unsigned np, unsigned *binding,
                               hwloc_const_bitmap_t **distinct)
{
    size_t cap = 16;
    while (cap < 2 * (size_t)np)
        cap *= 2;
    hwloc_const_bitmap_t *key = calloc(cap, sizeof *key);
    unsigned *val = malloc(cap * sizeof *val);
    hwloc_const_bitmap_t *list = malloc((size_t)np * sizeof *list);
    unsigned n = 0;
    if (!key || !val || !list) {
        free(key);
        free(val);
        free(list);
        return 0;
    }
    for (unsigned i = 0; i < np; i++) {
        size_t h = ((uintptr_t)sets[i] >> 4) * 0x9e3779b97f4a7c15ull & (cap - 1);
        while (key[h] && key[h] != sets[i])
            h = (h + 1) & (cap - 1);
        if (!key[h]) {
            key[h] = sets[i];
            val[h] = n;
            list[n++] = sets[i];
        }
        binding[i] = val[h];
    }
    free(key);
    free(val);
    *distinct = list;
    return n;
}

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: topsync-info [--topology STRING | --xml FILE | -i FILE|STRING] [--np N]\n"
        "                    [--map-by core|numa|socket] [--bind-to core|numa|package|none]\n"
        "                    [--levels LIST] [--rank R] [--json] [--list-algorithms]\n"
        "                    [--explain [--processes] [--node-processes K]]\n"
        "       topsync-info --cleanup [--dry-run]\n"
        "       topsync-info --mpi PROGRAM\n"
        "       topsync-info --preload [--launcher mpirun|mpiexec|srun] [PROGRAM [ARGS]]\n"
        "       topsync-info --env\n"
        "\n"
        "  --topology STRING  hwloc synthetic topology, e.g. 'pack:2 numa:2 l3:1 core:32 pu:1'\n"
        "  --xml FILE         hwloc XML topology (lstopo --of xml)\n"
        "  -i FILE|STRING     as lstopo: an XML file if FILE exists, else a synthetic STRING\n"
        "  --np N             number of participants, 1 to %u (default: one per core)\n"
        "  --map-by WHAT      placement of rank r (default core)\n"
        "  --bind-to WHAT     binding width of each rank (default core)\n"
        "  --levels LIST      levels to use: l2,l3,numa,socket or all (default all)\n"
        "  --rank R           only the groups of rank R\n"
        "  --json             machine-readable output\n"
        "  --list-algorithms  print the barrier algorithm names and exit\n"
        "  --explain          what \"auto\" chooses for these participants, which step\n"
        "                     chose (tuning file, machine model, rules) and on which figures\n"
        "  --processes        ... for processes (default threads), and for their\n"
        "                     collectives under libtopsync-mpi: which sizes are topsync's,\n"
        "                     per MPI library the tuning file has (topsync-tune --mpi)\n"
        "  --node-processes K ... with K runnable processes on the machine in all (an MPI\n"
        "                     job's ranks on the node; default np)\n"
        "  --version          print the version and exit\n"
        "  --cleanup          remove the shared segments (/dev/shm/topsync-PID-...) of\n"
        "                     MPI jobs of this user that died during set-up, listing\n"
        "                     each; a segment whose creating process lives is kept\n"
        "  --dry-run          ... only list what --cleanup would remove\n"
        "  --mpi PROGRAM      which libtopsync-mpi serves PROGRAM, from the MPI library\n"
        "                     it is linked with (its DT_NEEDED entries)\n"
        "  --preload          the command that runs PROGRAM with topsync preloaded, with\n"
        "                     absolute paths: its MPI's libtopsync-mpi under the launcher,\n"
        "                     or libtopsync-pthread; without PROGRAM, a line per library\n"
        "  --launcher L       ... under mpirun, mpiexec or srun (default: the MPI's own)\n"
        "  --env              every TOPSYNC_* variable: its value here, default, valid\n"
        "                     values; then whether they are valid as set\n"
        "\nWithout --topology, --xml or -i: this machine (or what HWLOC_XMLFILE or\n"
        "HWLOC_SYNTHETIC describe, which the output then names).\n"
        "Exit status: 0 on success, 2 on bad input, 1 on other failures.\n",
        MAX_NP);
}

static int parse_uint(const char *s, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || s[0] == ' ' || v > UINT_MAX)
        return -1;
    *out = (unsigned)v;
    return 0;
}

/* "0-31" / "0,32" / "0-3,8": compact member lists for the table. */
static void print_ranges(const unsigned *m, unsigned n)
{
    for (unsigned i = 0; i < n;) {
        unsigned j = i;
        while (j + 1 < n && m[j + 1] == m[j] + 1)
            j++;
        printf("%s", i ? "," : "");
        if (j > i + 1)
            printf("%u-%u", m[i], m[j]);
        else if (j == i + 1)
            printf("%u,%u", m[i], m[j]);
        else
            printf("%u", m[i]);
        i = j + 1;
    }
}

int main(int argc, char **argv)
{
    cli_check_stdout_at_exit("topsync-info");
    const char *synthetic = NULL, *xml = NULL, *levels_arg = "all";
    const char *map_arg = "core", *bind_arg = "core";
    unsigned np = 0, rank = 0;
    int json = 0, list = 0, has_rank = 0, explain = 0, processes = 0, cleanup = 0, dry_run = 0;
    const char *mpi_program = NULL, *launcher = NULL;
    int preload = 0, env = 0;
    unsigned node_processes = 0;
    enum {
        OPT_TOPO = 256,
        OPT_XML,
        OPT_NP,
        OPT_MAP,
        OPT_BIND,
        OPT_LEVELS,
        OPT_RANK,
        OPT_JSON,
        OPT_LIST,
        OPT_HELP,
        OPT_VERSION,
        OPT_EXPLAIN,
        OPT_PROCESSES,
        OPT_NODE_PROCESSES,
        OPT_CLEANUP,
        OPT_DRY_RUN,
        OPT_MPI,
        OPT_PRELOAD,
        OPT_LAUNCHER,
        OPT_ENV
    };
    static const struct option longopts[] = {
        {"topology", required_argument, 0, OPT_TOPO},
        {"xml", required_argument, 0, OPT_XML},
        {"np", required_argument, 0, OPT_NP},
        {"map-by", required_argument, 0, OPT_MAP},
        {"bind-to", required_argument, 0, OPT_BIND},
        {"levels", required_argument, 0, OPT_LEVELS},
        {"rank", required_argument, 0, OPT_RANK},
        {"json", no_argument, 0, OPT_JSON},
        {"list-algorithms", no_argument, 0, OPT_LIST},
        {"help", no_argument, 0, OPT_HELP},
        {"version", no_argument, 0, OPT_VERSION},
        {"explain", no_argument, 0, OPT_EXPLAIN},
        {"processes", no_argument, 0, OPT_PROCESSES},
        {"node-processes", required_argument, 0, OPT_NODE_PROCESSES},
        {"cleanup", no_argument, 0, OPT_CLEANUP},
        {"dry-run", no_argument, 0, OPT_DRY_RUN},
        {"mpi", required_argument, 0, OPT_MPI},
        {"preload", no_argument, 0, OPT_PRELOAD},
        {"launcher", required_argument, 0, OPT_LAUNCHER},
        {"env", no_argument, 0, OPT_ENV},
        {0, 0, 0, 0}};
    int c;
    const char *lstopo_input = NULL;
    /* "+": the options first, then --preload's PROGRAM and its own arguments */
    while ((c = getopt_long(argc, argv, "+hi:", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_TOPO: synthetic = optarg; break;
        case OPT_XML: xml = optarg; break;
        case OPT_NP:
            if (parse_uint(optarg, &np) || np == 0 || np > MAX_NP) {
                fprintf(stderr, "topsync-info: --np takes a number from 1 to %u, not '%s'\n",
                        MAX_NP, optarg);
                return 2;
            }
            break;
        case OPT_MAP: map_arg = optarg; break;
        case OPT_BIND: bind_arg = optarg; break;
        case OPT_LEVELS: levels_arg = optarg; break;
        case OPT_RANK:
            if (parse_uint(optarg, &rank)) {
                fprintf(stderr, "topsync-info: --rank takes a number, not '%s'\n", optarg);
                return 2;
            }
            has_rank = 1;
            break;
        case OPT_JSON: json = 1; break;
        case OPT_LIST: list = 1; break;
        case OPT_EXPLAIN: explain = 1; break;
        case OPT_PROCESSES: processes = 1; break;
        case OPT_CLEANUP: cleanup = 1; break;
        case OPT_DRY_RUN: dry_run = 1; break;
        case OPT_MPI: mpi_program = optarg; break;
        case OPT_PRELOAD: preload = 1; break;
        case OPT_LAUNCHER: launcher = optarg; break;
        case OPT_ENV: env = 1; break;
        case OPT_NODE_PROCESSES:
            if (parse_uint(optarg, &node_processes) || node_processes == 0 ||
                node_processes > MAX_NP) {
                fprintf(stderr,
                        "topsync-info: --node-processes takes a number from 1 to %u, "
                        "not '%s'\n",
                        MAX_NP, optarg);
                return 2;
            }
            break;
        case 'i': lstopo_input = optarg; break;
        case 'h':
        case OPT_HELP: usage(stdout); return 0;
        case OPT_VERSION: printf("topsync-info (topsync) %s\n", topsync_version()); return 0;
        default: /* getopt named the option */
            fprintf(stderr, "Try 'topsync-info --help'.\n");
            return 2;
        }
    }
    if (launcher && !preload) {
        fprintf(stderr, "topsync-info: --launcher goes with --preload\n");
        return 2;
    }
    if (preload)
        return ts_info_preload(optind < argc ? argv + optind : NULL, launcher, stdout);
    if (optind < argc) {
        fprintf(stderr, "topsync-info: unexpected argument '%s'; try 'topsync-info --help'\n",
                argv[optind]);
        return 2;
    }
    if (env) {
        if (argc != 2) {
            fprintf(stderr, "topsync-info: --env takes no other option\n");
            return 2;
        }
        return ts_info_env(stdout);
    }
    if (mpi_program) {
        if (argc != 3) {
            fprintf(stderr, "topsync-info: --mpi takes no other option\n");
            return 2;
        }
        return ts_info_mpi(mpi_program, stdout);
    }
    if (dry_run && !cleanup) {
        fprintf(stderr, "topsync-info: --dry-run goes with --cleanup\n");
        return 2;
    }
    if (cleanup) {
        if (argc - 1 != 1 + dry_run) {
            fprintf(stderr, "topsync-info: --cleanup takes no other option but --dry-run\n");
            return 2;
        }
        int n = ts_segment_sweep(TOPSYNC_SHM_DIR, stdout, dry_run);
        printf("%d segment%s %s\n", n, n == 1 ? "" : "s", dry_run ? "to remove" : "removed");
        return 0;
    }
    if (lstopo_input && (synthetic || xml)) {
        fprintf(stderr, "topsync-info: give one of --topology, --xml and -i\n");
        return 2;
    }
    if (lstopo_input) {
        /* lstopo's rule: an existing file is XML, anything else synthetic */
        if (access(lstopo_input, F_OK) == 0)
            xml = lstopo_input;
        else
            synthetic = lstopo_input;
    }
    if (list) {
        for (const char *const *n = topsync_barrier_algorithm_names(); *n; n++)
            printf("%s\n", *n);
        return 0;
    }
    if (synthetic && xml) {
        fprintf(stderr, "topsync-info: give --topology or --xml, not both\n");
        return 2;
    }

    topsync_map_by_t map_by;
    topsync_bind_to_t bind_to;
    unsigned mask;
    if (topsync_map_by_parse(map_arg, &map_by) < 0 ||
        topsync_bind_to_parse(bind_arg, &bind_to) < 0 ||
        topsync_levels_parse(levels_arg, &mask) < 0) {
        fprintf(stderr, "topsync-info: %s\n", topsync_error_message());
        return 2;
    }

    topsync_topology_t *topo;
    int rc = synthetic ? topsync_topology_load_synthetic(&topo, synthetic)
             : xml     ? topsync_topology_load_xml(&topo, xml)
                       : topsync_topology_load(&topo);
    if (rc < 0) {
        fprintf(stderr, "topsync-info: %s\n", topsync_error_message());
        return (synthetic || xml) ? 2 : 1; /* a bad description is bad input */
    }
    if (np == 0)
        np = topsync_topology_ncores(topo);
    if (explain && np > MAX_EXPLAIN_NP) {
        fprintf(stderr, "topsync-info: --explain makes the barrier: --np up to %u\n",
                MAX_EXPLAIN_NP);
        topsync_topology_destroy(topo);
        return 2;
    }
    if (node_processes && node_processes < np) {
        fprintf(stderr,
                "topsync-info: --node-processes %u is fewer than the %u participants "
                "(--np): it counts them and any other runnable process\n",
                node_processes, np);
        topsync_topology_destroy(topo);
        return 2;
    }
    if ((processes || node_processes) && !explain) {
        fprintf(stderr, "topsync-info: --processes and --node-processes go with --explain\n");
        topsync_topology_destroy(topo);
        return 2;
    }
    if (has_rank && rank >= np) {
        fprintf(stderr, "topsync-info: --rank %u out of range (--np %u)\n", rank, np);
        topsync_topology_destroy(topo);
        return 2;
    }

    topsync_level_t levels[TOPSYNC_MAX_LEVELS];
    int nlevels = topsync_topology_active_levels(topo, mask, levels);
    /* the topology's own cpusets, one pointer and one core index per rank */
    hwloc_const_bitmap_t *sets = calloc(np, sizeof *sets);
    unsigned *cores = calloc(np, sizeof *cores);
    topsync_groups_t *groups = NULL;
    if (nlevels < 0 || !sets || !cores ||
        topsync_placement_compute_shared(topo, np, map_by, bind_to, sets, cores) < 0 ||
        topsync_groups_build(&groups, topo, np, sets, mask) < 0) {
        fprintf(stderr, "topsync-info: %s\n",
                nlevels < 0 || (sets && cores) ? topsync_error_message() : "out of memory");
        topsync_topology_destroy(topo);
        return 1;
    }

    /* Placement as the user sees it: ranks beyond one per core share one. */
    unsigned doubled = 0;
    if (bind_to == TOPSYNC_BIND_TO_CORE) {
        unsigned char *seen = calloc(topsync_topology_ncores(topo), 1);
        for (unsigned i = 0; i < np && seen; i++) {
            doubled += seen[cores[i]];
            seen[cores[i]] = 1;
        }
        free(seen);
    }
    topsync_level_t group_levels[TOPSYNC_MAX_LEVELS];
    unsigned ngl = topsync_groups_levels(groups, group_levels);
    topsync_level_note_t notes[TOPSYNC_MAX_LEVELS], machine_notes[TOPSYNC_MAX_LEVELS];
    unsigned nnotes = topsync_groups_level_notes(groups, notes);
    int nmachine_notes = topsync_topology_level_notes(topo, mask, machine_notes);
    unsigned ngroups = topsync_groups_count(groups);
    unsigned *selected = calloc(ngroups ? ngroups : 1, sizeof *selected);
    unsigned nsel = 0;
    if (has_rank) {
        nsel = (unsigned)topsync_groups_of_rank(groups, rank, selected, ngroups);
    } else {
        for (unsigned i = 0; i < ngroups; i++)
            selected[nsel++] = i;
    }

    char auto_alg[96] = "", auto_wait[16] = "", auto_why[1100] = "";
    static struct coll_explain colls;
    if (explain &&
        (explain_auto(topo, np, sets, processes, node_processes, auto_alg, auto_wait, auto_why,
                      sizeof auto_why) < 0 ||
         (processes && explain_collectives(topo, np, sets, node_processes, &colls) < 0))) {
        topsync_topology_destroy(topo);
        return 1;
    }
    if (json) {
        /* the source names the user's XML file: escaped */
        printf("{\"topology\": ");
        json_string(topsync_topology_source(topo));
        printf(", \"cores\": %u, \"line_size\": %zu, \"active_levels\": [",
               topsync_topology_ncores(topo), topsync_topology_line_size(topo));
        for (int l = 0; l < nlevels; l++)
            printf("%s\"%s\"", l ? ", " : "", topsync_level_name(levels[l]));
        printf("], \"np\": %u, \"map_by\": \"%s\", \"bind_to\": \"%s\", \"hierarchical\": %s", np,
               map_arg, bind_arg, topsync_groups_hierarchical(groups) ? "true" : "false");
        printf(", \"group_levels\": [");
        for (unsigned l = 0; l < ngl; l++)
            printf("%s\"%s\"", l ? ", " : "", topsync_level_name(group_levels[l]));
        printf("], \"dropped_levels\": [");
        for (unsigned k = 0; k < nnotes; k++) {
            printf("%s{\"level\": \"%s\", \"reason\": ", k ? ", " : "",
                   topsync_level_name(notes[k].level));
            json_string(notes[k].reason);
            printf("}");
        }
        /* each distinct binding once; a rank refers to its binding */
        unsigned *binding = malloc((size_t)np * sizeof *binding);
        hwloc_const_bitmap_t *distinct = NULL;
        unsigned nbindings = binding ? index_bindings(sets, np, binding, &distinct) : 0;
        if (nbindings == 0) {
            fprintf(stderr, "topsync-info: out of memory\n");
            return 1;
        }
        printf("], \"shared_cores\": %u, \"bindings\": [", doubled);
        for (unsigned b = 0; b < nbindings; b++) {
            printf("%s{\"binding\": %u, \"pus\": [", b ? ", " : "", b);
            int pu, first = 1;
            hwloc_bitmap_foreach_begin(pu, distinct[b]) printf("%s%d", first ? "" : ", ", pu);
            first = 0;
            hwloc_bitmap_foreach_end();
            printf("]}");
        }
        printf("], \"ranks\": [");
        for (unsigned i = 0; i < np; i++)
            printf("%s{\"rank\": %u, \"core\": %u, \"binding\": %u}", i ? ", " : "", i, cores[i],
                   binding[i]);
        printf("]");
        free(binding);
        free(distinct);
        if (has_rank)
            printf(", \"rank\": %u", rank);
        printf(", \"groups\": [");
        for (unsigned s = 0; s < nsel; s++) {
            topsync_group_info_t g;
            topsync_groups_get(groups, selected[s], &g);
            printf("%s{\"level\": \"%s\", \"leader\": %u, \"members\": [", s ? ", " : "",
                   topsync_group_level_name(g.level), g.leader);
            for (unsigned m = 0; m < g.nmembers; m++)
                printf("%s%u", m ? ", " : "", g.members[m]);
            printf("]}");
        }
        printf("]");
        if (explain) {
            printf(", \"auto\": {\"algorithm\": \"%s\", \"wait\": \"%s\", \"kind\": \"%s\", "
                   "\"explain\": ",
                   auto_alg, auto_wait, processes ? "processes" : "threads");
            json_string(auto_why);
            printf("}");
        }
        if (explain && processes) {
            printf(", \"collectives\": [");
            for (unsigned j = 0; j < colls.n; j++)
                for (unsigned k = 0; k < TOPSYNC_COLL_KINDS; k++) {
                    printf("%s{\"mpi\": ", j || k ? ", " : "");
                    json_string(colls.mpi[j]);
                    printf(", \"kind\": \"%s\", \"max_bytes\": %zu, \"sizes\": [",
                           topsync_coll_kind_name((topsync_coll_kind_t)k),
                           colls.choice[j].max_bytes[k]);
                    /* each class topsync serves, by its largest size */
                    for (unsigned cls = 0, first = 1; cls < TOPSYNC_COLL_CLASSES; cls++)
                        if ((colls.choice[j].classes[k] >> cls & 1u) &&
                            ((size_t)8 << cls) / 2 < colls.choice[j].max_bytes[k]) {
                            printf("%s%zu", first ? "" : ", ", (size_t)8 << cls);
                            first = 0;
                        }
                    printf("], \"explain\": ");
                    json_string(colls.choice[j].explain[k]);
                    printf("}");
                }
            printf("]");
        }
        printf("}\n");
    } else {
        printf("Topology:      %s\n", topsync_topology_source(topo));
        printf("Cores:         %u (cache line %zu B)\n", topsync_topology_ncores(topo),
               topsync_topology_line_size(topo));
        printf("Active levels:");
        if (nlevels == 0)
            printf(" none (no level below the machine is shared by two or more cores)");
        for (int l = 0; l < nlevels; l++)
            printf(" %s (%d units)", topsync_level_name(levels[l]),
                   topsync_topology_level_units(topo, levels[l]));
        printf("\n");
        for (int k = 0; k < nmachine_notes; k++)
            printf("               (%s dropped: %s)\n", topsync_level_name(machine_notes[k].level),
                   machine_notes[k].reason);
        printf("\nGroups for %u participants, map-by %s, bind-to %s, levels %s:\n", np, map_arg,
               bind_arg, levels_arg);
        if (doubled)
            printf("note: %u ranks share a core with another (%u ranks, %u allowed cores)\n",
                   doubled, np, topsync_topology_ncores(topo));
        if (topsync_groups_hierarchical(groups)) {
            printf("levels used:");
            for (unsigned l = 0; l < ngl; l++)
                printf(" %s", topsync_level_name(group_levels[l]));
            if (ngl == 0)
                printf(" none");
            /* what the participants' placement drops beyond the machine's notes */
            unsigned shown = 0;
            for (unsigned k = 0; k < nnotes; k++) {
                int known = 0;
                for (int m = 0; m < nmachine_notes; m++)
                    known |= machine_notes[m].level == notes[k].level &&
                             !strcmp(machine_notes[m].reason, notes[k].reason);
                if (!known)
                    printf("%s%s: %s", shown++ ? "; " : " (for these participants, dropped ",
                           topsync_level_name(notes[k].level), notes[k].reason);
            }
            printf("%s\n", shown ? ")" : "");
        }
        if (has_rank)
            printf("(only the groups of rank %u)\n", rank);
        if (!topsync_groups_hierarchical(groups))
            printf("no hierarchy: participants are not bound, the barrier runs one flat group\n");
        printf("  %-10s %-7s %-8s %s\n", "level", "leader", "size", "members");
        for (unsigned s = 0; s < nsel; s++) {
            topsync_group_info_t g;
            topsync_groups_get(groups, selected[s], &g);
            printf("  %-10s %-7u %-8u ", topsync_group_level_name(g.level), g.leader, g.nmembers);
            print_ranges(g.members, g.nmembers);
            printf("\n");
        }
        if (nsel == 0)
            printf("  (none: a single participant needs no synchronization)\n");
        if (explain)
            printf("\nauto for these %u %s: %s, wait %s\n  %s\n", np,
                   processes ? "processes" : "threads", auto_alg, auto_wait, auto_why);
        for (unsigned j = 0; explain && processes && j < colls.n; j++) {
            printf("\nauto for their collectives (libtopsync-mpi) under %s:\n",
                   colls.mpi[j][0] ? colls.mpi[j] : "an MPI without a tuning entry");
            for (unsigned k = 0; k < TOPSYNC_COLL_KINDS; k++)
                printf("  %s up to %zu B: %s\n", topsync_coll_kind_name((topsync_coll_kind_t)k),
                       colls.choice[j].max_bytes[k], colls.choice[j].explain[k]);
        }
    }
    free(sets);
    free(cores);
    free(selected);
    topsync_groups_destroy(groups);
    topsync_topology_destroy(topo);
    return 0;
}
