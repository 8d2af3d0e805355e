/*
 * Tuning files (include/topsync/tune.h): the machine's fingerprint, the
 * placement signature, and reading, matching and writing the JSON file.
 *
 * A file is trusted only when it says it is a tuning file of this format
 * version for this machine and every entry is well formed; anything else
 * is refused as a whole with a message that says where (the caller, auto,
 * prints it once and goes on without it).
 */
#include <topsync/tune.h>
#include <topsync/model.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/env.h"
#include "base/error.h"
#include "base/file.h"
#include "base/hash.h"
#include "base/json.h"
#include "topology/topology_private.h"
#include "tune/tune_private.h"

#define FILE_FORMAT "topsync-tuning"
#define MAX_FILE_BYTES (16u << 20)

/* ---------------------------------------------------------------------- */
/* Fingerprint and placement.                                               */

int topsync_tuning_fingerprint(const topsync_topology_t *t, char out[TOPSYNC_FINGERPRINT_LEN])
{
    if (!t || !out)
        return ts_fail(EINVAL, "topsync_tuning_fingerprint: NULL argument");
    memcpy(out, t->fingerprint, TOPSYNC_FINGERPRINT_LEN); /* made at load, topology.c */
    return 0;
}

int topsync_tuning_placement(const topsync_topology_t *t, unsigned n,
                             const hwloc_const_bitmap_t *sets, char *out, size_t len)
{
    if (!t || !out || len < 16 || n == 0)
        return ts_fail(EINVAL, "topsync_tuning_placement: bad argument");
    hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(topsync_topology_hwloc(t));
    bool unbound = !sets;
    for (unsigned i = 0; i < n && !unbound; i++)
        unbound =
            !sets[i] || hwloc_bitmap_iszero(sets[i]) || hwloc_bitmap_isincluded(allowed, sets[i]);
    if (unbound) {
        snprintf(out, len, "unbound");
        return 0;
    }
    static const struct {
        topsync_map_by_t map;
        const char *name;
    } maps[] = {{TOPSYNC_MAP_BY_CORE, "core"},
                {TOPSYNC_MAP_BY_NUMA, "numa"},
                {TOPSYNC_MAP_BY_SOCKET, "socket"}};
    hwloc_bitmap_t *want = calloc(n, sizeof *want);
    if (!want)
        return ts_fail(ENOMEM, "out of memory");
    for (size_t m = 0; m < sizeof maps / sizeof *maps; m++) {
        if (topsync_placement_compute(t, n, maps[m].map, TOPSYNC_BIND_TO_CORE, want) < 0) {
            free(want);
            return -ENOMEM;
        }
        bool same = true;
        for (unsigned i = 0; i < n; i++) {
            same &= hwloc_bitmap_isequal(want[i], sets[i]);
            hwloc_bitmap_free(want[i]);
        }
        if (same) {
            free(want);
            snprintf(out, len, "%s", maps[m].name);
            return 0;
        }
    }
    free(want);
    uint64_t h = TS_FNV1A64_OFFSET;
    for (unsigned i = 0; i < n; i++) {
        char *s = NULL;
        if (hwloc_bitmap_asprintf(&s, sets[i]) < 0)
            return ts_fail(ENOMEM, "out of memory");
        h = ts_fnv1a64_str(ts_fnv1a64_str(h, s), ";");
        free(s);
    }
    snprintf(out, len, "custom-%08x", (unsigned)(h ^ (h >> 32)));
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Candidates.                                                              */

static const char *level_word(topsync_level_t l)
{
    switch (l) {
    case TOPSYNC_LEVEL_L2: return "l2";
    case TOPSYNC_LEVEL_L3: return "l3";
    case TOPSYNC_LEVEL_NUMA: return "numa";
    default: return "socket";
    }
}

unsigned ts_tuning_candidates_of(const topsync_groups_t *groups, char (*names)[96], unsigned max)
{
    static const char *const flat[] = {"sense-reversing",
                                       "sense-reversing-counter",
                                       "sense-reversing-gr",
                                       "combining-tree",
                                       "mcs",
                                       "tournament",
                                       "dissemination"};
    unsigned n = 0;
    for (size_t i = 0; i < sizeof flat / sizeof *flat && n < max; i++)
        snprintf(names[n++], 96, "%s", flat[i]);
    topsync_level_t lv[TOPSYNC_MAX_LEVELS];
    unsigned nl =
        groups && topsync_groups_hierarchical(groups) ? topsync_groups_levels(groups, lv) : 0;
    for (unsigned mask = 1; nl && mask < (1u << nl); mask++) {
        if (nl > 3 && mask != (1u << nl) - 1 && (mask & (mask - 1)))
            continue; /* with 4 levels: all of them, and each alone */
        char list[64] = "";
        for (unsigned k = 0; k < nl; k++)
            if (mask & (1u << k))
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                         list[0] ? "," : "", level_word(lv[k]));
        for (int tree = 0; tree < 2 && n < max; tree++)
            snprintf(names[n++], 96, "topo:%s/%s", list, tree ? "tree" : "global");
    }
    return n;
}

int topsync_tuning_candidates(const topsync_topology_t *t, unsigned n,
                              const hwloc_const_bitmap_t *cpusets, char (*names)[96], unsigned max)
{
    if (!t || !names || n == 0)
        return ts_fail(EINVAL, "topsync_tuning_candidates: bad argument");
    topsync_groups_t *g = NULL;
    int rc = cpusets ? topsync_groups_build(&g, t, n, cpusets, TOPSYNC_LEVELS_ALL)
                     : topsync_groups_build_flat(&g, n);
    if (rc < 0)
        return rc;
    unsigned count = ts_tuning_candidates_of(g, names, max);
    topsync_groups_destroy(g);
    return (int)count;
}

/* ---------------------------------------------------------------------- */

static int new_tuning(topsync_tuning_t **out, const topsync_topology_t *t)
{
    topsync_tuning_t *tu = calloc(1, sizeof *tu);
    if (!tu)
        return ts_fail(ENOMEM, "out of memory");
    int rc = topsync_tuning_fingerprint(t, tu->fingerprint);
    if (rc < 0) {
        free(tu);
        return rc;
    }
    snprintf(tu->machine, sizeof tu->machine, "%s", topsync_topology_source(t));
    *out = tu;
    return 0;
}

int topsync_tuning_create(topsync_tuning_t **out, const topsync_topology_t *t)
{
    if (!out)
        return ts_fail(EINVAL, "topsync_tuning_create: out is NULL");
    *out = NULL;
    if (!t)
        return ts_fail(EINVAL, "topsync_tuning_create: topology is NULL");
    return new_tuning(out, t);
}

void topsync_tuning_destroy(topsync_tuning_t *tu)
{
    if (!tu)
        return;
    free(tu->entries);
    free(tu->colls);
    free(tu->c2c);
    free(tu);
}

static const char *wait_name(topsync_wait_policy_t w)
{
    return topsync_wait_policy_to_string(w);
}

static int check_entry(const topsync_tuning_entry_t *e, char *why, size_t len)
{
    if (e->participants == 0) {
        snprintf(why, len, "participants is 0");
        return -1;
    }
    if (e->nresults == 0 || e->nresults > TOPSYNC_TUNING_MAX_RESULTS) {
        snprintf(why, len, "%u results (1 to %d)", e->nresults, TOPSYNC_TUNING_MAX_RESULTS);
        return -1;
    }
    if (!memchr(e->placement, '\0', sizeof e->placement) || !e->placement[0]) {
        snprintf(why, len, "no placement");
        return -1;
    }
    for (unsigned k = 0; k < e->nresults; k++) {
        const topsync_tuning_result_t *r = &e->results[k];
        if (!memchr(r->algorithm, '\0', sizeof r->algorithm) ||
            topsync_barrier_algorithm_validate(r->algorithm) < 0 ||
            !strcasecmp(r->algorithm, "auto")) {
            snprintf(why, len, "results[%u]: algorithm is not one topsync has", k);
            return -1;
        }
        if (r->wait != TOPSYNC_WAIT_SPIN && r->wait != TOPSYNC_WAIT_YIELD &&
            r->wait != TOPSYNC_WAIT_BLOCK) {
            snprintf(why, len, "results[%u]: wait is not spin, yield or block", k);
            return -1;
        }
        if (!(r->latency_ns > 0 && r->latency_ns < 1e12)) {
            snprintf(why, len, "results[%u]: latency_ns %g is not a latency", k, r->latency_ns);
            return -1;
        }
    }
    return 0;
}

static bool same_case(const topsync_tuning_entry_t *a, const topsync_tuning_entry_t *b)
{
    return a->participants == b->participants && !a->processes == !b->processes &&
           !a->oversubscribed == !b->oversubscribed && !strcmp(a->placement, b->placement);
}

static int by_latency(const void *a, const void *b)
{
    const topsync_tuning_result_t *x = a, *y = b;
    return x->latency_ns < y->latency_ns ? -1 : x->latency_ns > y->latency_ns;
}

int topsync_tuning_put(topsync_tuning_t *tu, const topsync_tuning_entry_t *e)
{
    char why[160];
    if (!tu || !e)
        return ts_fail(EINVAL, "topsync_tuning_put: NULL argument");
    if (check_entry(e, why, sizeof why) < 0)
        return ts_fail(EINVAL, "tuning entry: %s", why);
    unsigned k = 0;
    while (k < tu->nentries && !same_case(&tu->entries[k], e))
        k++;
    if (k == tu->nentries) {
        int rc = ts_tuning_grow((void **)&tu->entries, &tu->nentries, sizeof *tu->entries, "");
        if (rc < 0)
            return rc;
    }
    tu->entries[k] = *e;
    tu->entries[k].processes = !!e->processes;
    tu->entries[k].oversubscribed = !!e->oversubscribed;
    qsort(tu->entries[k].results, e->nresults, sizeof *e->results, by_latency);
    return 0;
}

int topsync_tuning_set_c2c(topsync_tuning_t *tu, unsigned n, const double *ns)
{
    if (!tu || !ns || n < 2 || n > 4096)
        return ts_fail(EINVAL, "topsync_tuning_set_c2c: bad argument");
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < i; j++)
            if (!(ns[(size_t)i * n + j] > 0 && ns[(size_t)i * n + j] < 1e9))
                return ts_fail(EINVAL,
                               "topsync_tuning_set_c2c: entry (%u, %u) is not a "
                               "latency",
                               i, j);
    double *copy = malloc((size_t)n * n * sizeof *copy);
    if (!copy)
        return ts_fail(ENOMEM, "out of memory");
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++)
            copy[(size_t)i * n + j] = i == j  ? 0
                                      : i > j ? ns[(size_t)i * n + j]
                                              : ns[(size_t)j * n + i];
    free(tu->c2c);
    tu->c2c = copy;
    tu->c2c_n = n;
    return 0;
}

const double *topsync_tuning_c2c(const topsync_tuning_t *tu, unsigned *n)
{
    if (n)
        *n = tu ? tu->c2c_n : 0;
    return tu ? tu->c2c : NULL;
}

int topsync_tuning_set_mlp(topsync_tuning_t *tu, double mlp, double interval_ns)
{
    if (!tu || !(mlp > 0 && mlp <= TOPSYNC_MODEL_MAX_MLP) ||
        !(interval_ns > 0 && interval_ns < 1e9))
        return ts_fail(EINVAL,
                       "topsync_tuning_set_mlp: overlap %g (valid: > 0 to %u) or interval %g ns "
                       "(valid: > 0 to 1e9) out of range",
                       mlp, TOPSYNC_MODEL_MAX_MLP, interval_ns);
    tu->mlp = mlp;
    tu->miss_interval_ns = interval_ns;
    return 0;
}

double topsync_tuning_mlp(const topsync_tuning_t *tu, double *interval_ns)
{
    if (interval_ns)
        *interval_ns = tu ? tu->miss_interval_ns : 0;
    return tu ? tu->mlp : 0;
}

unsigned topsync_tuning_count(const topsync_tuning_t *tu)
{
    return tu ? tu->nentries : 0;
}

int topsync_tuning_get(const topsync_tuning_t *tu, unsigned index, topsync_tuning_entry_t *out)
{
    if (!tu || !out || index >= tu->nentries)
        return ts_fail(EINVAL, "topsync_tuning_get: no entry %u", index);
    *out = tu->entries[index];
    return 0;
}

const char *topsync_tuning_machine_fingerprint(const topsync_tuning_t *tu)
{
    return tu ? tu->fingerprint : "";
}

int topsync_tuning_lookup(const topsync_tuning_t *tu, unsigned n, int processes, int oversubscribed,
                          const char *placement, topsync_tuning_entry_t *out)
{
    if (!tu || !placement || !out)
        return ts_fail(EINVAL, "topsync_tuning_lookup: NULL argument");
    const topsync_tuning_entry_t *best = NULL;
    for (unsigned k = 0; k < tu->nentries; k++) {
        const topsync_tuning_entry_t *e = &tu->entries[k];
        if (!e->processes != !processes || !e->oversubscribed != !oversubscribed ||
            strcmp(e->placement, placement))
            continue;
        if (ts_tuning_nearer(e->participants, best ? &best->participants : NULL, n))
            best = e;
    }
    if (!best)
        return ts_fail(ENOENT, "no tuning entry for %s, %s, placement %s",
                       processes ? "processes" : "threads",
                       oversubscribed ? "oversubscribed" : "one per CPU", placement);
    *out = *best;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Reading.                                                                 */

static int refuse(const char *path, const char *fmt, const char *detail)
{
    return ts_fail(EINVAL, "tuning file %s is not a topsync tuning file: %s%s", path, fmt,
                   detail ? detail : "");
}

/* A tuning file (its format says so) whose contents are damaged. */
static int damaged(const char *path, const char *where)
{
    return ts_fail(EBADMSG, "tuning file %s is damaged: %s", path, where);
}

static int read_entry(const ts_json *j, topsync_tuning_entry_t *e, char *why, size_t len)
{
    memset(e, 0, sizeof *e);
    const ts_json *n = ts_json_member(j, "participants", TS_JSON_NUMBER);
    const ts_json *kind = ts_json_member(j, "kind", TS_JSON_STRING);
    const ts_json *over = ts_json_member(j, "oversubscribed", TS_JSON_BOOL);
    const ts_json *place = ts_json_member(j, "placement", TS_JSON_STRING);
    const ts_json *results = ts_json_member(j, "results", TS_JSON_ARRAY);
    if (!n || !(n->number >= 1 && n->number <= 1e7 && n->number == (unsigned)n->number)) {
        snprintf(why, len, "participants missing or not a whole number from 1");
        return -1;
    }
    if (!kind || (strcmp(kind->string, "threads") && strcmp(kind->string, "processes"))) {
        snprintf(why, len, "kind missing or not threads or processes");
        return -1;
    }
    if (!over || !place || strlen(place->string) >= sizeof e->placement || !results) {
        snprintf(why, len,
                 "oversubscribed, placement (at most %zu characters) or results "
                 "missing",
                 sizeof e->placement - 1);
        return -1;
    }
    e->participants = (unsigned)n->number;
    e->processes = !strcmp(kind->string, "processes");
    e->oversubscribed = over->boolean;
    strcpy(e->placement, place->string);
    for (const ts_json *r = results->child; r; r = r->next) {
        if (e->nresults == TOPSYNC_TUNING_MAX_RESULTS) {
            snprintf(why, len, "more than %d results", TOPSYNC_TUNING_MAX_RESULTS);
            return -1;
        }
        topsync_tuning_result_t *out = &e->results[e->nresults];
        const ts_json *alg = ts_json_member(r, "algorithm", TS_JSON_STRING);
        const ts_json *wait = ts_json_member(r, "wait", TS_JSON_STRING);
        const ts_json *lat = ts_json_member(r, "latency_ns", TS_JSON_NUMBER);
        if (!alg || !wait || !lat || strlen(alg->string) >= sizeof out->algorithm ||
            topsync_wait_policy_parse(wait->string, &out->wait) < 0) {
            snprintf(why, len,
                     "results[%u]: algorithm, wait (spin, yield or block) or "
                     "latency_ns missing or wrong",
                     e->nresults);
            return -1;
        }
        strcpy(out->algorithm, alg->string);
        out->latency_ns = lat->number;
        e->nresults++;
    }
    return check_entry(e, why, len);
}

static int read_c2c(topsync_tuning_t *tu, const ts_json *rows, char *why, size_t len)
{
    unsigned n = 0;
    for (const ts_json *r = rows->child; r; r = r->next)
        n++;
    if (n < 2 || n > 4096) {
        snprintf(why, len, "c2c_ns has %u rows (2 to 4096)", n);
        return -1;
    }
    double *ns = calloc((size_t)n * n, sizeof *ns);
    if (!ns) {
        snprintf(why, len, "out of memory");
        return -1;
    }
    unsigned i = 0;
    for (const ts_json *r = rows->child; r; r = r->next, i++) {
        unsigned j = 0;
        if (r->type != TS_JSON_ARRAY)
            j = ~0u;
        for (const ts_json *v = r->type == TS_JSON_ARRAY ? r->child : NULL; v; v = v->next, j++)
            if (j >= i || v->type != TS_JSON_NUMBER || !(v->number > 0 && v->number < 1e9))
                j = ~0u - 1;
            else
                ns[(size_t)i * n + j] = v->number;
        if (j != i) {
            free(ns);
            snprintf(why, len, "c2c_ns row %u is not %u latencies (the lower triangle)", i, i);
            return -1;
        }
    }
    int rc = topsync_tuning_set_c2c(tu, n, ns);
    free(ns);
    if (rc < 0)
        snprintf(why, len, "%s", topsync_error_message());
    return rc;
}

int topsync_tuning_load(topsync_tuning_t **out, const char *path, const topsync_topology_t *t)
{
    if (!out)
        return ts_fail(EINVAL, "topsync_tuning_load: out is NULL");
    *out = NULL;
    if (!path || !t)
        return ts_fail(EINVAL, "topsync_tuning_load: NULL argument");
    char *text = NULL;
    size_t got = 0;
    int read_rc = ts_file_read(path, MAX_FILE_BYTES, TS_FILE_REGULAR_ONLY, &text, &got);
    if (read_rc == -EINVAL || read_rc == -EFBIG || read_rc == -EISDIR)
        return refuse(path, "not a regular file of at most 16 MiB", NULL);
    if (read_rc == -ENOMEM)
        return ts_fail(ENOMEM, "out of memory");
    if (read_rc < 0)
        return ts_fail(read_rc == -ENOENT ? ENOENT : EINVAL, "cannot read tuning file %s: %s", path,
                       strerror(-read_rc));
    ts_json *root = NULL;
    char err[160];
    int rc = ts_json_parse(text, got, &root, err, sizeof err);
    free(text);
    if (rc == -ENOMEM)
        return ts_fail(ENOMEM, "out of memory");
    if (rc < 0)
        return refuse(path, "JSON ", err);
    const ts_json *format = ts_json_member(root, "format", TS_JSON_STRING);
    const ts_json *version = ts_json_member(root, "version", TS_JSON_NUMBER);
    const ts_json *fp = ts_json_member(root, "fingerprint", TS_JSON_STRING);
    const ts_json *entries = ts_json_member(root, "entries", TS_JSON_ARRAY);
    const ts_json *c2c = ts_json_member(root, "c2c_ns", TS_JSON_ARRAY);
    const ts_json *colls = ts_json_member(root, "collectives", TS_JSON_ARRAY);
    const ts_json *mlp = ts_json_member(root, "mlp", TS_JSON_NUMBER);
    const ts_json *interval = ts_json_member(root, "miss_interval_ns", TS_JSON_NUMBER);
    const ts_json *machine = ts_json_member(root, "machine", TS_JSON_STRING);
    topsync_tuning_t *tu = NULL;
    if (!format || strcmp(format->string, FILE_FORMAT)) {
        rc = refuse(path, "no \"format\": \"" FILE_FORMAT "\"", NULL);
    } else if (!version || version->number != TOPSYNC_TUNING_FORMAT_VERSION) {
        rc = ts_fail(ESTALE,
                     "tuning file %s has format version %g; this topsync reads version "
                     "%d (run topsync-tune again)",
                     path, version ? version->number : -1, TOPSYNC_TUNING_FORMAT_VERSION);
    } else if ((rc = new_tuning(&tu, t)) < 0) {
        /* out of memory */
    } else if (!fp || strcmp(fp->string, tu->fingerprint)) {
        rc = ts_fail(ENODEV,
                     "tuning file %s is for another machine (%s, fingerprint %s; this "
                     "one is %s)",
                     path, machine ? machine->string : "?", fp ? fp->string : "none",
                     tu->fingerprint);
    } else if (!entries) {
        rc = damaged(path, "no \"entries\" array");
    } else {
        if (machine)
            snprintf(tu->machine, sizeof tu->machine, "%s", machine->string);
        unsigned k = 0;
        for (const ts_json *e = entries->child; e && rc == 0; e = e->next, k++) {
            topsync_tuning_entry_t entry;
            char why[160], where[200];
            if (read_entry(e, &entry, why, sizeof why) < 0) {
                snprintf(where, sizeof where, "entries[%u]: %s", k, why);
                rc = damaged(path, where);
            } else if (topsync_tuning_put(tu, &entry) < 0) {
                rc = -EINVAL;
            }
        }
        char why[160];
        if (rc == 0 && c2c && read_c2c(tu, c2c, why, sizeof why) < 0)
            rc = damaged(path, why);
        if (rc == 0 && colls && ts_tuning_read_colls(tu, colls, why, sizeof why) < 0)
            rc = damaged(path, why);
        if (rc == 0 && (!mlp != !interval ||
                        (mlp && topsync_tuning_set_mlp(tu, mlp->number, interval->number) < 0)))
            rc = damaged(path, "\"mlp\" and \"miss_interval_ns\" go together, each > 0");
    }
    ts_json_free(root);
    if (rc < 0) {
        topsync_tuning_destroy(tu);
        return rc;
    }
    *out = tu;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Writing.                                                                 */

static void write_json(FILE *f, const topsync_tuning_t *tu)
{
    char q[400];
    ts_json_quote(q, sizeof q, tu->machine);
    fprintf(f,
            "{\n  \"format\": \"%s\",\n  \"version\": %d,\n  \"fingerprint\": \"%s\",\n"
            "  \"machine\": %s,\n  \"topsync\": \"%s\",\n  \"entries\": [",
            FILE_FORMAT, TOPSYNC_TUNING_FORMAT_VERSION, tu->fingerprint, q, topsync_version());
    for (unsigned k = 0; k < tu->nentries; k++) {
        const topsync_tuning_entry_t *e = &tu->entries[k];
        ts_json_quote(q, sizeof q, e->placement);
        fprintf(f,
                "%s\n    {\"participants\": %u, \"kind\": \"%s\", \"oversubscribed\": %s, "
                "\"placement\": %s,\n     \"results\": [",
                k ? "," : "", e->participants, e->processes ? "processes" : "threads",
                e->oversubscribed ? "true" : "false", q);
        for (unsigned r = 0; r < e->nresults; r++) {
            ts_json_quote(q, sizeof q, e->results[r].algorithm);
            fprintf(f, "%s\n       {\"algorithm\": %s, \"wait\": \"%s\", \"latency_ns\": %.1f}",
                    r ? "," : "", q, wait_name(e->results[r].wait), e->results[r].latency_ns);
        }
        fprintf(f, "]}");
    }
    fprintf(f, "\n  ]");
    if (tu->c2c) {
        fprintf(f, ",\n  \"c2c_ns\": [");
        for (unsigned i = 0; i < tu->c2c_n; i++) {
            fprintf(f, "%s[", i ? ", " : "");
            for (unsigned j = 0; j < i; j++)
                fprintf(f, "%s%.3f", j ? ", " : "", tu->c2c[(size_t)i * tu->c2c_n + j]);
            fprintf(f, "]");
        }
        fprintf(f, "]");
    }
    if (tu->mlp > 0)
        fprintf(f, ",\n  \"mlp\": %.2f,\n  \"miss_interval_ns\": %.3f", tu->mlp,
                tu->miss_interval_ns);
    ts_tuning_write_colls(f, tu);
    fprintf(f, "\n}\n");
}

/* ts_file_replace's callback */
static void write_tuning(FILE *f, void *tu)
{
    write_json(f, tu);
}

int topsync_tuning_write(const topsync_tuning_t *tu, const char *path)
{
    if (!tu || !path || !*path)
        return ts_fail(EINVAL, "topsync_tuning_write: NULL argument");
    ts_file_replace_step failed;
    int rc = ts_file_replace(path, true, write_tuning, (void *)tu, &failed);
    if (rc == 0)
        return 0;
    if (rc == -ENOMEM)
        return ts_fail(ENOMEM, "out of memory");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    switch (failed) {
    case TS_FILE_REPLACE_DIR:
        return ts_fail(EINVAL, "cannot create the directory %s: %s", dir, strerror(-rc));
    case TS_FILE_REPLACE_TEMP:
        return ts_fail(EINVAL, "cannot write beside %s: %s", path, strerror(-rc));
    case TS_FILE_REPLACE_WRITE: break;
    }
    return ts_fail(EINVAL, "cannot write tuning file %s: %s", path, strerror(-rc));
}

int topsync_tuning_path(const topsync_topology_t *t, char *buf, size_t len)
{
    if (!t || !buf || !len)
        return ts_fail(EINVAL, "topsync_tuning_path: bad argument");
    const char *env = ts_getenv("TOPSYNC_TUNING");
    if (env) {
        if (!strcmp(env, "off"))
            return ts_fail(ENOENT, "TOPSYNC_TUNING=off");
        snprintf(buf, len, "%s", env);
        return 0;
    }
    char fp[TOPSYNC_FINGERPRINT_LEN];
    int rc = topsync_tuning_fingerprint(t, fp);
    if (rc < 0)
        return rc;
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0] == '/') /* the XDG spec: relative paths are invalid, ignore them */
        snprintf(buf, len, "%s/topsync/tuning-%s.json", xdg, fp);
    else if (home && home[0] == '/')
        snprintf(buf, len, "%s/.cache/topsync/tuning-%s.json", home, fp);
    else
        return ts_fail(ENOENT, "no cache directory: neither XDG_CACHE_HOME nor HOME is set");
    return 0;
}
