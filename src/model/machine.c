/*
 * The machine model's latencies: a core-to-core table read from CSV, or one
 * derived from the topology's levels (docs/model.md, "The machine").
 *
 * Levels of a pair. Two distinct PUs are classed by the closest unit they
 * share: the core (SMT siblings), then topsync's units of L2, L3, NUMA node
 * and package (topology.h: sets of allowed cores), else the machine. A
 * unit that holds exactly the cores of the unit above it is the same
 * place, and the pair takes the higher level's name (on Kunpeng 920 the L3
 * is the NUMA node, so a pair inside it is a NUMA pair; on a 1-NUMA-per-
 * socket EPYC a pair in two CCXs of one socket is a package pair), as
 * topsync's active levels drop a repeated level in favour of the higher
 * one. The derived table and `topsync-sim levels` (which measures a table's
 * figures per level, and gave the defaults below) use this one rule.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/file.h"
#include "model/model_private.h"
#include "topology/topology_private.h"

/*
 * Defaults of a derived table, ns: for each level, the median over the
 * tables of data/c2c that have pairs of that level of each table's median
 * (docs/model.md, "Derived tables"; `scripts/model_defaults.py` recomputes
 * them and unit.model_defaults checks these figures against it). L2 has no
 * measured pair in any table: it takes the L3 figure (a line in a shared L2
 * is no farther than in a shared L3).
 */
static const double level_default_ns[TOPSYNC_MODEL_NLEVELS] = {
    [TOPSYNC_MODEL_CORE] = 7.74,      /* EPYC 7742 8.0, Xeon Gold 6242 7.4: SMT siblings */
    [TOPSYNC_MODEL_L2] = 25.33,       /* = L3 */
    [TOPSYNC_MODEL_L3] = 25.33,       /* EPYC 7742: one CCX */
    [TOPSYNC_MODEL_NUMA] = 35.66,     /* Kunpeng 920: one die (its L3 and NUMA node) */
    [TOPSYNC_MODEL_PACKAGE] = 64.25,  /* Kunpeng 80.5, EPYC 132.1, Xeon 48.0, Graviton2 47.2 */
    [TOPSYNC_MODEL_MACHINE] = 204.01, /* EPYC 266.6, Xeon 141.4: across sockets */
};

static const char *const level_names[TOPSYNC_MODEL_NLEVELS] = {"core", "l2",      "l3",
                                                               "numa", "package", "machine"};

const char *topsync_model_level_name(topsync_model_level_t level)
{
    return (unsigned)level < TOPSYNC_MODEL_NLEVELS ? level_names[level] : NULL;
}

double topsync_model_level_default_ns(topsync_model_level_t level)
{
    return (unsigned)level < TOPSYNC_MODEL_NLEVELS ? level_default_ns[level] : -1;
}

void topsync_model_options_init(topsync_model_options_t *o)
{
    if (o)
        memset(o, 0, sizeof *o);
}

/* Latencies are checked to lie in [0, 1e9] ns: rounding half up is exact
 * enough, and keeps libm out of the library. */
static ts_ps to_ps(double ns)
{
    return (ts_ps)(ns * 1000.0 + 0.5);
}

/* ---------------------------------------------------------------------- */
/* Units of each level per PU.                                              */

/*
 * unit[l][pu]: the unit of level l holding the PU (-1: none), so that two
 * PUs share a place at l exactly when their entries are equal and >= 0;
 * unit_class[l][pu]: the class of a pair whose closest shared place is
 * that unit, after the promotion of repeated units described at the top.
 */
static int load_units(topsync_model_t *m, const topsync_topology_t *t)
{
    for (int l = 0; l < TOPSYNC_MODEL_MACHINE; l++) {
        m->unit[l] = malloc(m->pu_limit * sizeof *m->unit[l]);
        m->unit_class[l] = malloc(m->pu_limit * sizeof *m->unit_class[l]);
        if (!m->unit[l] || !m->unit_class[l])
            return ts_fail(ENOMEM, "out of memory building the model");
        for (unsigned pu = 0; pu < m->pu_limit; pu++) {
            m->unit[l][pu] = -1;
            m->unit_class[l][pu] = (topsync_model_level_t)l;
        }
    }
    for (unsigned pu = 0; pu < m->pu_limit; pu++) {
        int core = ts_topology_pu_core(t, pu);
        if (core < 0)
            continue;
        m->unit[TOPSYNC_MODEL_CORE][pu] = core;
        for (int l = 0; l < TOPSYNC_MAX_LEVELS; l++)
            m->unit[TOPSYNC_MODEL_L2 + l][pu] = t->levels[l].core_unit[core];
    }
    /* Promotion, once per unit: the highest level up to package whose unit
     * holding the same PUs has exactly the same cores. */
    for (int l = TOPSYNC_MODEL_L2; l < TOPSYNC_MODEL_MACHINE; l++) {
        const struct ts_level_units *lu = &t->levels[l - TOPSYNC_MODEL_L2];
        topsync_model_level_t *cls = calloc(lu->count ? lu->count : 1, sizeof *cls);
        bool *done = calloc(lu->count ? lu->count : 1, sizeof *done);
        if (!cls || !done) {
            free(cls);
            free(done);
            return ts_fail(ENOMEM, "out of memory building the model");
        }
        for (unsigned pu = 0; pu < m->pu_limit; pu++) {
            int u = m->unit[l][pu];
            if (u < 0)
                continue;
            if (!done[u]) {
                done[u] = true;
                cls[u] = (topsync_model_level_t)l;
                for (int h = l + 1; h < TOPSYNC_MODEL_MACHINE; h++) {
                    int uh = m->unit[h][pu];
                    if (uh >= 0 && hwloc_bitmap_isequal(
                                       lu->cpusets[u], t->levels[h - TOPSYNC_MODEL_L2].cpusets[uh]))
                        cls[u] = (topsync_model_level_t)h;
                }
            }
            m->unit_class[l][pu] = cls[u];
        }
        free(cls);
        free(done);
    }
    return 0;
}

int topsync_model_pair_level(const topsync_model_t *m, unsigned a, unsigned b)
{
    if (!m || a == b || !ts_model_has_pu(m, a) || !ts_model_has_pu(m, b))
        return -1;
    return (int)ts_model_level(m, a, b);
}

/* ---------------------------------------------------------------------- */
/* The CSV table.                                                           */

#define TABLE_MAX_CPUS 4096
#define TABLE_MAX_BYTES (256u << 20)

static int read_file(const char *path, char **text)
{
    size_t len = 0;
    int rc = ts_file_read(path, TABLE_MAX_BYTES, 0, text, &len);
    if (rc == -EFBIG)
        return ts_fail(EINVAL, "latency table %s is larger than %u MiB", path,
                       TABLE_MAX_BYTES >> 20);
    if (rc == -ENOMEM)
        return ts_fail(ENOMEM, "out of memory reading %s", path);
    if (rc < 0)
        return ts_fail(EINVAL, "cannot open latency table %s: %s", path, strerror(-rc));
    if (strlen(*text) != len) {
        free(*text);
        *text = NULL;
        return ts_fail(EINVAL, "latency table %s is not text (it holds a NUL byte)", path);
    }
    return 0;
}

/* Lines of the text (a final empty line not counted). */
static unsigned count_lines(const char *text)
{
    unsigned n = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        n++;
        if (!nl)
            break;
        p = nl + 1;
    }
    return n;
}

/*
 * Parse the lower triangle: line i (0-based) holds at least i cells, cells
 * 0..i-1 numbers > 0 (ns); what follows on the line must be empty cells
 * (the upper triangle is not read, but a value there means the file is not
 * what we think it is).
 */
static int parse_table(const char *path, const char *text, unsigned *n_out, double **out)
{
    unsigned n = count_lines(text);
    if (n < 2)
        return ts_fail(EINVAL,
                       "latency table %s: %u line(s); a table has one line per CPU, "
                       "at least 2",
                       path, n);
    if (n > TABLE_MAX_CPUS)
        return ts_fail(EINVAL, "latency table %s: %u lines, more than %u CPUs", path, n,
                       TABLE_MAX_CPUS);
    double *ns = calloc((size_t)n * n, sizeof *ns);
    if (!ns)
        return ts_fail(ENOMEM, "out of memory reading %s", path);
    const char *p = text;
    for (unsigned i = 0; i < n; i++) {
        const char *end = strchr(p, '\n');
        if (!end)
            end = p + strlen(p);
        const char *stop = end > p && end[-1] == '\r' ? end - 1 : end;
        const char *cell = p;
        for (unsigned j = 0; cell <= stop; j++) {
            const char *comma = memchr(cell, ',', (size_t)(stop - cell));
            const char *cell_end = comma ? comma : stop;
            if (j < i) {
                char buf[64];
                size_t len = (size_t)(cell_end - cell);
                char *num_end;
                if (len == 0 || len >= sizeof buf) {
                    free(ns);
                    return ts_fail(EINVAL,
                                   "latency table %s, line %u, column %u: %s; the "
                                   "lower triangle needs a latency in ns in every cell",
                                   path, i + 1, j + 1, len ? "cell too long" : "empty cell");
                }
                memcpy(buf, cell, len);
                buf[len] = '\0';
                errno = 0;
                double v = strtod(buf, &num_end);
                if (errno || *num_end || num_end == buf || !isfinite(v) || !(v > 0) || v > 1e9) {
                    free(ns);
                    return ts_fail(EINVAL,
                                   "latency table %s, line %u, column %u: '%s' is not "
                                   "a latency (a number of ns, > 0)",
                                   path, i + 1, j + 1, buf);
                }
                ns[(size_t)i * n + j] = ns[(size_t)j * n + i] = v;
            } else if (cell_end != cell) {
                free(ns);
                return ts_fail(EINVAL,
                               "latency table %s, line %u, column %u: a value on or "
                               "above the diagonal; the table holds the lower "
                               "triangle only (line i has i values)",
                               path, i + 1, j + 1);
            }
            if (!comma)
                break;
            cell = comma + 1;
        }
        /* fewer cells than i: the loop stopped before j reached i */
        unsigned cells = 1;
        for (const char *c = p; c < stop; c++)
            cells += *c == ',';
        if (cells < i || (i > 0 && p == stop)) {
            free(ns);
            return ts_fail(EINVAL,
                           "latency table %s, line %u: %u cell(s), the lower triangle "
                           "needs %u",
                           path, i + 1, p == stop ? 0 : cells, i);
        }
        p = *end ? end + 1 : end;
    }
    *n_out = n;
    *out = ns;
    return 0;
}

/* A table given in memory: the same checks as a file's lower triangle. */
static int copy_table(const double *in, unsigned n, unsigned *n_out, double **out)
{
    if (n < 2 || n > TABLE_MAX_CPUS)
        return ts_fail(EINVAL, "latency table in memory: %u CPUs; valid: 2 to %u", n,
                       TABLE_MAX_CPUS);
    double *ns = calloc((size_t)n * n, sizeof *ns);
    if (!ns)
        return ts_fail(ENOMEM, "out of memory");
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < i; j++) {
            double v = in[(size_t)i * n + j];
            if (!isfinite(v) || !(v > 0) || v > 1e9) {
                free(ns);
                return ts_fail(EINVAL,
                               "latency table in memory: entry (%u, %u) = %g is not a "
                               "latency (a number of ns, > 0)",
                               i, j, v);
            }
            ns[(size_t)i * n + j] = ns[(size_t)j * n + i] = v;
        }
    *n_out = n;
    *out = ns;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Mapping the table onto the topology.                                     */

static int map_table(topsync_model_t *m, const topsync_topology_t *t, const char *path, unsigned n,
                     double cross_package_ns)
{
    unsigned npus = 0;
    for (unsigned pu = 0; pu < m->pu_limit; pu++)
        npus += ts_topology_pu_core(t, pu) >= 0;
    if (n == m->pu_limit) {
        /* the whole machine (its offline and disallowed CPUs included, as
         * the OS numbers them): table CPU = PU OS index */
        for (unsigned pu = 0; pu < m->pu_limit; pu++)
            m->table_index[pu] = ts_topology_pu_core(t, pu) >= 0 ? (int)pu : -1;
        snprintf(m->description, sizeof m->description, "c2c table %s (%u CPUs, the whole machine)",
                 path, n);
        return 0;
    }
    /* one package: PU k of each package, in OS order, is table CPU k */
    const struct ts_level_units *pk = &t->levels[ts_level_index(TOPSYNC_LEVEL_PACKAGE)];
    unsigned npack = pk->count;
    unsigned *fill = calloc(npack ? npack : 1, sizeof *fill);
    if (!fill)
        return ts_fail(ENOMEM, "out of memory building the model");
    bool fits = npack > 1;
    for (unsigned pu = 0; pu < m->pu_limit && fits; pu++) {
        int core = ts_topology_pu_core(t, pu);
        m->table_index[pu] = -1;
        if (core < 0)
            continue;
        int unit = pk->core_unit[core];
        if (unit < 0 || fill[unit] >= n) {
            fits = false;
            break;
        }
        m->package[pu] = unit;
        m->table_index[pu] = (int)fill[unit]++;
    }
    for (unsigned k = 0; k < npack && fits; k++)
        fits = fill[k] == n;
    free(fill);
    if (!fits)
        return ts_fail(EINVAL,
                       "latency table %s has %u CPUs, but the topology has %u PUs (OS "
                       "indexes up to %u) in %u package(s): a table covers every PU, "
                       "or one package of a machine whose packages have as many PUs "
                       "as the table",
                       path, n, npus, m->pu_limit - 1, npack);
    m->per_package = true;
    m->cross_package_ps = to_ps(cross_package_ns);
    snprintf(m->description, sizeof m->description,
             "c2c table %s (%u CPUs, one package of %u; %.1f ns across packages)", path, n, npack,
             cross_package_ns);
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Disturbed pairs (docs/model.md, "Disturbed pairs").                      */

static int compare_ps(const void *a, const void *b)
{
    ts_ps x = *(const ts_ps *)a, y = *(const ts_ps *)b;
    return (x > y) - (x < y);
}

/* The p-quantile of n sorted values, interpolated between the two nearest
 * ranks (the definition of numpy's and R's default). */
static double quantile(const ts_ps *sorted, size_t n, double p)
{
    double k = (double)(n - 1) * p;
    size_t f = (size_t)k;
    if (f + 1 >= n)
        return (double)sorted[n - 1];
    return (double)sorted[f] + ((double)sorted[f + 1] - (double)sorted[f]) * (k - (double)f);
}

/*
 * A ping-pong measured while its CPUs were disturbed (an interrupt, a
 * host's other guest, a frequency step) only gains time, and a table is
 * measured pair after pair, so a disturbance marks a few pairs far above
 * their peers. One such pair decides every episode of a barrier whose root
 * it touches, so a pair above its level's far-out fence (Tukey: Q3 + 3 IQR
 * of the table's pairs of the same level class) takes its level's median.
 * A level needs 4 pairs for quartiles; fewer are kept as given.
 */
static int median_far_pairs(topsync_model_t *m, unsigned *replaced)
{
    unsigned n = m->table_n;
    size_t npairs = (size_t)n * (n - 1) / 2;
    int *pu_of = malloc(n * sizeof *pu_of);
    ts_ps *values = malloc((npairs + 1) * sizeof *values);
    signed char *level_of = malloc(npairs + 1); /* pair (i, j < i) at i(i-1)/2 + j */
    if (!pu_of || !values || !level_of) {
        free(pu_of);
        free(values);
        free(level_of);
        return ts_fail(ENOMEM, "out of memory building the model");
    }
    for (unsigned k = 0; k < n; k++)
        pu_of[k] = -1;
    int package = -1;
    for (unsigned pu = 0; pu < m->pu_limit; pu++) {
        int k = m->table_index[pu];
        if (k < 0 || pu_of[k] >= 0)
            continue;
        if (m->per_package) {
            if (package < 0)
                package = m->package[pu];
            if (m->package[pu] != package)
                continue;
        }
        pu_of[k] = (int)pu;
    }
    /* each pair's level class, once (-1: a table CPU that is no PU) */
    for (unsigned i = 0, at = 0; i < n; i++)
        for (unsigned j = 0; j < i; j++, at++)
            level_of[at] =
                pu_of[i] < 0 || pu_of[j] < 0
                    ? -1
                    : (signed char)ts_model_level(m, (unsigned)pu_of[i], (unsigned)pu_of[j]);
    *replaced = 0;
    for (int level = 0; level < TOPSYNC_MODEL_NLEVELS; level++) {
        size_t count = 0;
        for (unsigned i = 0, at = 0; i < n; i++)
            for (unsigned j = 0; j < i; j++, at++)
                if (level_of[at] == level)
                    values[count++] = m->table[(size_t)i * n + j];
        if (count < 4)
            continue;
        qsort(values, count, sizeof *values, compare_ps);
        double q1 = quantile(values, count, 0.25), q3 = quantile(values, count, 0.75);
        double fence = q3 + 3 * (q3 - q1);
        ts_ps median = (ts_ps)(quantile(values, count, 0.5) + 0.5);
        for (unsigned i = 0, at = 0; i < n; i++)
            for (unsigned j = 0; j < i; j++, at++)
                if (level_of[at] == level && (double)m->table[(size_t)i * n + j] > fence) {
                    m->table[(size_t)i * n + j] = m->table[(size_t)j * n + i] = median;
                    ++*replaced;
                }
    }
    free(pu_of);
    free(values);
    free(level_of);
    return 0;
}

/* ---------------------------------------------------------------------- */

void topsync_model_destroy(topsync_model_t *m)
{
    if (!m)
        return;
    free(m->table);
    free(m->table_index);
    free(m->package);
    for (int l = 0; l < TOPSYNC_MODEL_MACHINE; l++) {
        free(m->unit[l]);
        free(m->unit_class[l]);
    }
    free(m);
}

static int check_ns(const char *what, double v)
{
    if (!isfinite(v) || v < 0 || v > 1e9)
        return ts_fail(EINVAL,
                       "model: %s %g is not valid; valid: 0 (the default) or a "
                       "latency in ns up to 1e9",
                       what, v);
    return 0;
}

int topsync_model_create(topsync_model_t **out, const topsync_topology_t *t,
                         const topsync_model_options_t *opts)
{
    topsync_model_options_t defaults;
    if (!out)
        return ts_fail(EINVAL, "topsync_model_create: out is NULL");
    *out = NULL;
    if (!t)
        return ts_fail(EINVAL, "topsync_model_create: topology is NULL");
    if (!opts) {
        topsync_model_options_init(&defaults);
        opts = &defaults;
    }
    double scale = opts->scale == 0 ? 1 : opts->scale;
    if (!isfinite(scale) || scale <= 0 || scale > 1e6)
        return ts_fail(EINVAL,
                       "model: scale %g is not valid; valid: 0 (1) or a factor > 0 "
                       "up to 1e6",
                       opts->scale);
    if (opts->mlp > TOPSYNC_MODEL_MAX_MLP)
        return ts_fail(EINVAL,
                       "model: memory-level parallelism %u is not valid; valid: 0 (not "
                       "known) or 1 to %u outstanding misses",
                       opts->mlp, TOPSYNC_MODEL_MAX_MLP);
    int rc = check_ns("cross_package_ns", opts->cross_package_ns);
    if (rc == 0)
        rc = check_ns("home_service_ns", opts->home_service_ns);
    for (int l = 0; l < TOPSYNC_MODEL_NLEVELS && rc == 0; l++)
        rc = check_ns(level_names[l], opts->level_ns[l]);
    if (rc < 0)
        return rc;

    topsync_model_t *m = calloc(1, sizeof *m);
    if (!m)
        return ts_fail(ENOMEM, "out of memory building the model");
    m->topology = t;
    m->pu_limit = t->pu_limit;
    m->mlp = opts->mlp;
    m->home_service_ps = (ts_ps)(opts->home_service_ns * scale * 1000 + 0.5); /* >= 0 */
    m->table_index = malloc(m->pu_limit * sizeof *m->table_index);
    m->package = calloc(m->pu_limit, sizeof *m->package);
    if (!m->table_index || !m->package) {
        topsync_model_destroy(m);
        return ts_fail(ENOMEM, "out of memory building the model");
    }
    rc = load_units(m, t);
    if (rc < 0) {
        topsync_model_destroy(m);
        return rc;
    }

    if (opts->c2c_path || opts->c2c_ns) {
        char *text = NULL;
        double *ns = NULL;
        unsigned n = 0;
        const char *name = opts->c2c_path ? opts->c2c_path : "(in memory)";
        if (opts->c2c_path) {
            rc = read_file(opts->c2c_path, &text);
            if (rc == 0)
                rc = parse_table(opts->c2c_path, text, &n, &ns);
            free(text);
        } else {
            rc = copy_table(opts->c2c_ns, opts->c2c_cpus, &n, &ns);
        }
        if (rc == 0) {
            double cross =
                opts->cross_package_ns ? opts->cross_package_ns : TOPSYNC_MODEL_CROSS_PACKAGE_NS;
            rc = map_table(m, t, name, n, cross * scale);
        }
        if (rc == 0 && !(m->table = malloc((size_t)n * n * sizeof *m->table)))
            rc = ts_fail(ENOMEM, "out of memory building the model");
        if (rc < 0) {
            free(ns);
            topsync_model_destroy(m);
            return rc;
        }
        m->table_n = n;
        for (size_t k = 0; k < (size_t)n * n; k++)
            m->table[k] = to_ps(ns[k] * scale);
        free(ns);
        unsigned replaced = 0;
        if (!opts->raw_table && (rc = median_far_pairs(m, &replaced)) < 0) {
            topsync_model_destroy(m);
            return rc;
        }
        if (replaced) {
            size_t len = strlen(m->description);
            snprintf(m->description + len, sizeof m->description - len,
                     ", %u disturbed pair%s at %s level's median", replaced,
                     replaced == 1 ? "" : "s", replaced == 1 ? "its" : "their");
        }
    } else {
        m->derived = true;
        for (unsigned pu = 0; pu < m->pu_limit; pu++)
            m->table_index[pu] = ts_topology_pu_core(t, pu) >= 0 ? (int)pu : -1;
        int len = snprintf(m->description, sizeof m->description, "derived from levels (ns:");
        for (int l = 0; l < TOPSYNC_MODEL_NLEVELS; l++) {
            double v = (opts->level_ns[l] ? opts->level_ns[l] : level_default_ns[l]) * scale;
            m->level_ps[l] = to_ps(v);
            if (len > 0 && (size_t)len < sizeof m->description)
                len += snprintf(m->description + len, sizeof m->description - (size_t)len,
                                " %s %.1f", level_names[l], v);
        }
        if (len > 0 && (size_t)len < sizeof m->description)
            snprintf(m->description + len, sizeof m->description - (size_t)len, ")");
    }
    if (scale != 1) {
        size_t len = strlen(m->description);
        snprintf(m->description + len, sizeof m->description - len, ", scaled x%g", scale);
    }
    if (m->mlp) {
        size_t len = strlen(m->description);
        snprintf(m->description + len, sizeof m->description - len, ", %u outstanding misses",
                 m->mlp);
    }
    if (m->home_service_ps) {
        size_t len = strlen(m->description);
        snprintf(m->description + len, sizeof m->description - len,
                 ", a home serves one request per %.2f ns", (double)m->home_service_ps / 1000);
    }
    *out = m;
    return 0;
}

double topsync_model_latency_ns(const topsync_model_t *m, unsigned a, unsigned b)
{
    if (!m || !ts_model_has_pu(m, a) || !ts_model_has_pu(m, b))
        return -1;
    return (double)ts_model_ps(m, a, b) / 1000.0;
}

double topsync_model_home_service_ns(const topsync_model_t *m)
{
    return m ? (double)m->home_service_ps / 1000 : 0;
}

unsigned topsync_model_mlp(const topsync_model_t *m)
{
    return m ? m->mlp : 0;
}

const char *topsync_model_describe(const topsync_model_t *m)
{
    return m ? m->description : "";
}
