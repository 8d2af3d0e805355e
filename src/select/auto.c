/*
 * "auto": tuning file, then the machine model, then the rules (auto.h).
 * The why: docs/design.md section 8.13.
 */
#include "select/auto.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <topsync/tune.h>

#include "base/env.h"
#include "base/error.h"
#include "base/keywords.h"
#include "base/text.h"
#include "model/model_private.h"
#include "select/model_cache.h"
#include "select/model_error.h"
#include "tune/tune_private.h"

enum { STEP_TUNING = 1, STEP_MODEL = 2, STEP_RULES = 4 };

#define MODEL_MAX_PARTICIPANTS 512u /* beyond, the simulations cost too much at create */
#define MODEL_EPISODES 40u
#define MODEL_WARMUP 4u

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---------------------------------------------------------------------- */
/* TOPSYNC_AUTO.                                                            */

/* 0, or -1 with `why` saying what is wrong (an unknown or repeated word,
 * an empty item). Words are case-insensitive, as every TOPSYNC_* word. */
static int parse_steps(const char *v, unsigned *steps, char *why, size_t len)
{
    static const ts_keyword_t words[] = {
        {"tuning", STEP_TUNING, false},
        {"model", STEP_MODEL, false},
        {"rules", STEP_RULES, false},
        {NULL, 0, false},
    };
    unsigned seen = 0;
    *steps = STEP_RULES;
    for (const char *p = v;; p++) {
        size_t n = strcspn(p, ",");
        const ts_keyword_t *w = ts_keyword_find_n(words, p, n);
        if (!n) {
            snprintf(why, len, "an empty item");
            return -1;
        }
        if (!w) {
            snprintf(why, len, "unknown step '%.*s'", (int)n, p);
            return -1;
        }
        if (seen & (unsigned)w->value) {
            snprintf(why, len, "step '%.*s' given twice", (int)n, p);
            return -1;
        }
        seen |= (unsigned)w->value;
        *steps |= (unsigned)w->value;
        p += n;
        if (!*p)
            return 0;
    }
}

int ts_auto_steps_check(void)
{
    const char *v = ts_getenv("TOPSYNC_AUTO");
    unsigned steps;
    char why[128];
    if (v && parse_steps(v, &steps, why, sizeof why) < 0)
        return ts_fail(EINVAL,
                       "TOPSYNC_AUTO='%s' is not valid (%s); valid: a comma-separated list of "
                       "tuning, model, rules, each at most once (e.g. 'model,rules'; the rules "
                       "always remain as the last resort)",
                       v, why);
    return 0;
}

static unsigned auto_steps(void)
{
    const char *v = ts_getenv("TOPSYNC_AUTO");
    unsigned steps;
    if (!v)
        return STEP_TUNING | STEP_MODEL | STEP_RULES;
    char why[128];
    if (parse_steps(v, &steps, why, sizeof why) < 0)
        return STEP_RULES; /* topsync_barrier_create refused it already */
    return steps;
}

/* ---------------------------------------------------------------------- */
/* Step 1: the tuning file.                                                 */

static struct {
    char path[4096];
    struct stat st;
    topsync_tuning_t *tuning; /* NULL: that file was refused */
    char fingerprint[TOPSYNC_FINGERPRINT_LEN];
} tuning_cache;
static char warned[8][4200];
static unsigned nwarned;

/* One warning line per distinct message per process. Under cache_lock. */
static void warn_once(const char *msg)
{
    for (unsigned i = 0; i < nwarned && i < 8; i++)
        if (!strcmp(warned[i], msg))
            return;
    snprintf(warned[nwarned++ % 8], sizeof warned[0], "%s", msg);
    fprintf(stderr, "topsync: warning: %s; auto goes on without it\n", msg);
}

/* This machine's tuning, read or taken from the cache. Under cache_lock. */
static const topsync_tuning_t *machine_tuning(const topsync_topology_t *t, char *path, size_t len)
{
    if (topsync_tuning_path(t, path, len) < 0)
        return NULL; /* TOPSYNC_TUNING=off, or no cache directory */
    bool explicit_file = ts_getenv("TOPSYNC_TUNING") != NULL;
    char fp[TOPSYNC_FINGERPRINT_LEN];
    topsync_tuning_fingerprint(t, fp);
    struct stat st;
    if (stat(path, &st) < 0) {
        if (explicit_file) {
            char msg[4200];
            snprintf(msg, sizeof msg, "TOPSYNC_TUNING=%s: %s", path, strerror(errno));
            warn_once(msg);
        }
        return NULL; /* no tuning done on this machine yet */
    }
    if (!strcmp(tuning_cache.path, path) && !strcmp(tuning_cache.fingerprint, fp) &&
        tuning_cache.st.st_mtim.tv_sec == st.st_mtim.tv_sec &&
        tuning_cache.st.st_mtim.tv_nsec == st.st_mtim.tv_nsec &&
        tuning_cache.st.st_size == st.st_size && tuning_cache.st.st_ino == st.st_ino)
        return tuning_cache.tuning;
    topsync_tuning_destroy(tuning_cache.tuning);
    tuning_cache.tuning = NULL;
    snprintf(tuning_cache.path, sizeof tuning_cache.path, "%s", path);
    snprintf(tuning_cache.fingerprint, sizeof tuning_cache.fingerprint, "%s", fp);
    tuning_cache.st = st;
    if (topsync_tuning_load(&tuning_cache.tuning, path, t) < 0)
        warn_once(topsync_error_message());
    return tuning_cache.tuning;
}

static void describe_results(const topsync_tuning_entry_t *e, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned k = 0; k < e->nresults && k < 4; k++)
        used =
            ts_append(buf, len, used, "%s%s/%s %.0f ns", k ? ", " : "", e->results[k].algorithm,
                      topsync_wait_policy_to_string(e->results[k].wait), e->results[k].latency_ns);
    if (e->nresults > 4)
        ts_append(buf, len, used, " (fastest of %u measured)", e->nresults);
}

static bool tuning_step(const struct ts_auto_request *req, struct ts_auto_choice *out)
{
    char placement[48], path[4096], figures[400];
    if (topsync_tuning_placement(req->topology, req->n, req->cpusets, placement, sizeof placement) <
        0)
        return false;
    pthread_mutex_lock(&cache_lock);
    const topsync_tuning_t *tu = machine_tuning(req->topology, path, sizeof path);
    topsync_tuning_entry_t e;
    bool found = tu && topsync_tuning_lookup(tu, req->n, req->processes, req->oversubscribed,
                                             placement, &e) == 0;
    pthread_mutex_unlock(&cache_lock);
    if (!found)
        return false;
    snprintf(out->algorithm, sizeof out->algorithm, "%s", e.results[0].algorithm);
    out->wait = e.results[0].wait;
    describe_results(&e, figures, sizeof figures);
    char nearest[48] = "";
    if (e.participants != req->n)
        snprintf(nearest, sizeof nearest, " (nearest tuned count to %u)", req->n);
    snprintf(out->explain, sizeof out->explain,
             "tuning file %.300s, entry %u %s%s, %s, placement %s: %.400s", path, e.participants,
             e.processes ? "processes" : "threads", nearest,
             e.oversubscribed ? "oversubscribed" : "one per CPU", placement, figures);
    return true;
}

bool ts_auto_allows_tuning(void)
{
    return auto_steps() & STEP_TUNING;
}

bool ts_auto_tuning_coll(const topsync_topology_t *t, unsigned n, int oversubscribed,
                         const char *placement, const char *mpi, topsync_tuning_coll_entry_t *out,
                         char *path, size_t len)
{
    pthread_mutex_lock(&cache_lock);
    const topsync_tuning_t *tu = machine_tuning(t, path, len);
    bool found = tu && topsync_tuning_lookup_coll(tu, n, oversubscribed, placement, mpi, out) == 0;
    pthread_mutex_unlock(&cache_lock);
    return found;
}

/* ---------------------------------------------------------------------- */
/* Step 2: the machine model.                                               */

struct model_memo {
    char key[256];
    char algorithm[96];
    char explain[1024];
};
static struct model_memo memo[32];
static unsigned memo_next;

/* Remember the model step's answer for key ("" algorithm: the rules decide,
 * explain says why); the oldest of the 32 entries goes. */
static void memo_store(const char *key, const char *algorithm, const char *explain)
{
    if (!key[0])
        return;
    pthread_mutex_lock(&cache_lock);
    struct model_memo *slot = &memo[memo_next++ % 32];
    snprintf(slot->key, sizeof slot->key, "%s", key);
    snprintf(slot->algorithm, sizeof slot->algorithm, "%s", algorithm);
    snprintf(slot->explain, sizeof slot->explain, "%s", explain);
    pthread_mutex_unlock(&cache_lock);
}

/* Remember an answer in memory and, when the case has a cache file, on disk
 * for later processes. */
static void remember(const char *disk, const char *key, const char *algorithm, const char *explain)
{
    memo_store(key, algorithm, explain);
    if (disk[0] && key[0])
        ts_model_cache_store(disk, key, algorithm, explain);
}

/* Every participant on a core of its own: what the model can predict. */
static bool bound_one_per_core(const struct ts_auto_request *req)
{
    if (!req->topology || !req->cpusets || req->oversubscribed || req->n < 2 ||
        req->n > MODEL_MAX_PARTICIPANTS)
        return false;
    hwloc_topology_t h = topsync_topology_hwloc(req->topology);
    hwloc_bitmap_t used = hwloc_bitmap_alloc();
    bool ok = used != NULL;
    for (unsigned i = 0; ok && i < req->n; i++) {
        hwloc_const_bitmap_t set = req->cpusets[i];
        hwloc_obj_t core = set ? hwloc_get_obj_covering_cpuset(h, set) : NULL;
        while (core && core->type != HWLOC_OBJ_CORE && core->type != HWLOC_OBJ_PU)
            core = core->parent;
        ok = core && (core->type == HWLOC_OBJ_CORE || core->type == HWLOC_OBJ_PU) &&
             !hwloc_bitmap_intersects(used, core->cpuset);
        if (ok)
            hwloc_bitmap_or(used, used, core->cpuset);
    }
    hwloc_bitmap_free(used);
    return ok;
}

/* The model of this machine: the tuning file's table, else the defaults. */
static topsync_model_t *machine_model(const topsync_topology_t *t, char *source, size_t len)
{
    topsync_model_options_t mo;
    topsync_model_options_init(&mo);
    char path[4096];
    unsigned n = 0;
    double *table = NULL;
    pthread_mutex_lock(&cache_lock);
    const topsync_tuning_t *tu = machine_tuning(t, path, sizeof path);
    const double *c2c = tu ? topsync_tuning_c2c(tu, &n) : NULL;
    if (c2c && (table = malloc((size_t)n * n * sizeof *table)))
        memcpy(table, c2c, (size_t)n * n * sizeof *table);
    double interval = 0, overlap = tu ? topsync_tuning_mlp(tu, &interval) : 0;
    pthread_mutex_unlock(&cache_lock);
    topsync_model_t *m = NULL;
    if (table) {
        mo.c2c_ns = table;
        mo.c2c_cpus = n;
        /* the overlap measured with the table: this machine's K and home */
        if (overlap > 0) {
            long k = (long)(overlap + 0.5); /* overlap > 0: rounded, without libm */
            mo.mlp = k < 1                             ? 1
                     : k > (long)TOPSYNC_MODEL_MAX_MLP ? TOPSYNC_MODEL_MAX_MLP
                                                       : (unsigned)k;
            mo.home_service_ns = interval;
        }
        if (topsync_model_create(&m, t, &mo) != 0)
            m = NULL;
        else if (mo.mlp)
            snprintf(source, len,
                     "measured c2c table of %s; K = %u misses in flight and a home per "
                     "%.2f ns, measured with it",
                     path, mo.mlp, mo.home_service_ns);
        else
            snprintf(source, len, "measured c2c table of %s", path);
        free(table);
        mo.c2c_ns = NULL;
        mo.c2c_cpus = 0;
        mo.mlp = 0;
        mo.home_service_ns = 0;
    }
    if (!m && topsync_model_create(&m, t, &mo) == 0)
        snprintf(source, len, "per-level default latencies");
    return m;
}

/*
 * The model's choice must not hang on what the model does not know. A
 * core's memory-level parallelism K (docs/model.md, section 4) is known
 * only where the model was given it; otherwise every K of
 * TOPSYNC_MODEL_MLP_RANGE is simulated, and the choice is the candidate
 * whose worst ratio to the best, over those Ks, is smallest. It is taken
 * only when that ratio is within MODEL_MARGIN: a choice that costs at most
 * 10 % more than the best whatever the core's K. 10 % is the model's
 * accuracy where it can be checked against a measurement (this machine's
 * 2-thread latency, docs/model.md section 7), so smaller differences are
 * not the model's to resolve; it was set before, and not tuned on, the
 * paper's Fig. 4 and Fig. 6.
 */
#define MODEL_MARGIN 0.10

struct model_run {
    unsigned nc, nk;
    unsigned ks[TOPSYNC_MODEL_MLP_RANGE_N];
    double lat[TOPSYNC_TUNING_MAX_CANDIDATES][TOPSYNC_MODEL_MLP_RANGE_N]; /* ns; <0: failed */
    double best[TOPSYNC_MODEL_MLP_RANGE_N];
    bool done[TOPSYNC_MODEL_MLP_RANGE_N];
};

/* Candidate c's worst ratio to the best over the Ks simulated so far. */
static double regret(const struct model_run *mr, unsigned c)
{
    double worst = 1;
    for (unsigned k = 0; k < mr->nk; k++) {
        if (!mr->done[k])
            continue;
        if (mr->lat[c][k] < 0 || mr->best[k] <= 0)
            return INFINITY;
        double r = mr->lat[c][k] / mr->best[k];
        if (r > worst)
            worst = r;
    }
    return worst;
}

/* One candidate's predicted latency (ns; -1: the simulation failed) with
 * K outstanding misses per core. */
static double simulate(const struct ts_auto_request *req, const topsync_model_t *m,
                       const char *name, unsigned k)
{
    topsync_sim_options_t so;
    topsync_sim_options_init(&so);
    so.episodes = MODEL_EPISODES;
    so.warmup = MODEL_WARMUP;
    so.seed = 1;
    so.wait = req->wait;
    so.mlp = k;
    topsync_sim_result_t r;
    return topsync_sim_barrier(m, req->n, req->cpusets, name, &so, &r) < 0 ? -1 : r.latency_ns;
}

/* Simulate every candidate at every K (the extremes first, stopping as
 * soon as no candidate can be within the margin); the most robust one. */
static int model_robust(const struct ts_auto_request *req, const topsync_model_t *m,
                        char names[][96], struct model_run *mr, double *worst)
{
    int chosen = -1; /* mr's Ks set and its first done by model_screen */
    for (unsigned step = 0; step < mr->nk; step++) {
        unsigned k = step == 0 ? 0 : step == 1 ? mr->nk - 1 : step - 1;
        if (!mr->done[k]) { /* the first K may be done already (model_screen) */
            mr->best[k] = INFINITY;
            for (unsigned c = 0; c < mr->nc; c++) {
                mr->lat[c][k] = simulate(req, m, names[c], mr->ks[k]);
                if (mr->lat[c][k] >= 0 && mr->lat[c][k] < mr->best[k])
                    mr->best[k] = mr->lat[c][k];
            }
            mr->done[k] = true;
        }
        chosen = -1;
        *worst = INFINITY;
        for (unsigned c = 0; c < mr->nc; c++) {
            double w = regret(mr, c);
            if (w < *worst || (w == *worst && chosen >= 0 && mr->lat[c][0] < mr->lat[chosen][0])) {
                *worst = w;
                chosen = (int)c;
            }
        }
        if (chosen < 0 || *worst > 1 + MODEL_MARGIN)
            break; /* only more Ks could make it worse */
    }
    return chosen;
}

/* The rules' algorithm for req (rules_step's choice, without its words). */
static const char *rules_choice(const struct ts_auto_request *req);

/*
 * The model overrules the rules only by a predicted margin beyond its error
 * at every K, so a candidate that is not that much faster at the first K
 * never will be: simulate every candidate and the rules' choice there, and
 * when none is, the other Ks cannot change the answer (issue 35 item 4:
 * the K sweep cost 0.3 s of CPU at 128 participants inside the first
 * barrier; this is a fifth of it). Sets mr's Ks and fills its first.
 * Returns whether the sweep is needed: some candidate beats the rules by
 * more than the error there, or a simulation failed (*fastest -1 when all
 * the candidates' did, *rules_ns -1 when the rules' choice's did). Else
 * *fastest is the fastest candidate and *rules_ns the rules' latency.
 */
static bool model_screen(const struct ts_auto_request *req, const topsync_model_t *m,
                         char names[][96], struct model_run *mr, const char *rules, int *fastest,
                         double *rules_ns)
{
    static const unsigned range[] = TOPSYNC_MODEL_MLP_RANGE;
    mr->nk = 0;
    if (topsync_model_mlp(m))
        mr->ks[mr->nk++] = topsync_model_mlp(m);
    else
        for (unsigned k = 0; k < TOPSYNC_MODEL_MLP_RANGE_N; k++)
            mr->ks[mr->nk++] = range[k];
    *fastest = -1;
    mr->best[0] = INFINITY;
    for (unsigned c = 0; c < mr->nc; c++) {
        mr->lat[c][0] = simulate(req, m, names[c], mr->ks[0]);
        if (mr->lat[c][0] >= 0 && mr->lat[c][0] < mr->best[0]) {
            mr->best[0] = mr->lat[c][0];
            *fastest = (int)c;
        }
    }
    mr->done[0] = true;
    *rules_ns = simulate(req, m, rules, mr->ks[0]);
    return *fastest < 0 || *rules_ns <= 0 || *rules_ns / mr->best[0] > TS_MODEL_RATIO_ERROR;
}

/* "K=1: combining-tree, K=16: topo:numa/global": the best at each K done. */
static size_t describe_bests(const struct model_run *mr, char names[][96], char *buf, size_t len,
                             size_t used)
{
    bool first = true;
    for (unsigned k = 0; k < mr->nk; k++) {
        if (!mr->done[k])
            continue;
        for (unsigned c = 0; c < mr->nc; c++)
            if (mr->lat[c][k] == mr->best[k]) {
                used =
                    ts_append(buf, len, used, "%sK=%u: %s", first ? "" : ", ", mr->ks[k], names[c]);
                first = false;
                break;
            }
    }
    return used;
}

static bool model_step(const struct ts_auto_request *req, struct ts_auto_choice *out, char *note,
                       size_t note_len)
{
    if (!bound_one_per_core(req))
        return false;
    char placement[48], key[256] = "", disk[4200] = "";
    if (!req->model) {
        char fp[TOPSYNC_FINGERPRINT_LEN];
        if (topsync_tuning_fingerprint(req->topology, fp) < 0 ||
            topsync_tuning_placement(req->topology, req->n, req->cpusets, placement,
                                     sizeof placement) < 0)
            return false;
        char path[4096];
        struct stat st = {0};
        if (topsync_tuning_path(req->topology, path, sizeof path) == 0) {
            stat(path, &st); /* a new file may bring a new table: a new answer */
            if (!ts_model_cache_path(path, fp, disk, sizeof disk))
                disk[0] = '\0';
        }
        /* the file's inode and size too: a file replaced within one tick of
         * the coarse clock the kernel stamps mtimes with keeps its mtime;
         * and what else changes the answer: this build of topsync (its
         * algorithms and defaults), the poll mode */
        const char *poll = ts_getenv("TOPSYNC_POLL");
        snprintf(key, sizeof key, "%s/%s/%u/%d/%d/%ld.%ld/%lu/%ld/%s-%s/%s", fp, placement, req->n,
                 (int)req->wait, req->processes, (long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec,
                 (unsigned long)st.st_ino, (long)st.st_size, TOPSYNC_VERSION_STRING,
                 ts_model_cache_build(), poll ? poll : "");
        char algorithm[sizeof out->algorithm], explain[sizeof out->explain];
        bool known = false;
        pthread_mutex_lock(&cache_lock);
        for (unsigned i = 0; i < 32 && !known; i++)
            if (!strcmp(memo[i].key, key)) {
                snprintf(algorithm, sizeof algorithm, "%s", memo[i].algorithm);
                snprintf(explain, sizeof explain, "%s", memo[i].explain);
                known = true;
            }
        pthread_mutex_unlock(&cache_lock);
        /* else a case an earlier process answered (every rank of the last job) */
        if (!known && disk[0] &&
            ts_model_cache_find(disk, key, algorithm, sizeof algorithm, explain, sizeof explain)) {
            memo_store(key, algorithm, explain);
            known = true;
        }
        if (known) {
            bool chose = algorithm[0] != '\0';
            snprintf(out->algorithm, sizeof out->algorithm, "%s", algorithm);
            snprintf(chose ? out->explain : note, chose ? sizeof out->explain : note_len, "%s",
                     explain);
            return chose;
        }
    }
    char source[4200] = "the simulated machine";
    topsync_model_t *own = req->model ? NULL : machine_model(req->topology, source, sizeof source);
    const topsync_model_t *m = req->model ? req->model : own;
    if (!m)
        return false;
    char names[TOPSYNC_TUNING_MAX_CANDIDATES][96];
    struct model_run mr;
    memset(&mr, 0, sizeof mr);
    mr.nc = ts_tuning_candidates_of(req->groups, names, TOPSYNC_TUNING_MAX_CANDIDATES);
    /* The rules' choice is overruled only by a predicted margin beyond the
     * model's measured error on such a ratio (TS_MODEL_RATIO_ERROR) */
    const char *rules = rules_choice(req);
    int fastest;
    double rules_first;
    char explain[sizeof out->explain];
    size_t used = 0;
    if (!model_screen(req, m, names, &mr, rules, &fastest, &rules_first)) {
        topsync_model_destroy(own);
        if (!strcmp(names[fastest], rules) || rules_first <= mr.lat[fastest][0])
            used = ts_append(explain, sizeof explain, used,
                             "model (%s): predicted the rules' %s fastest at K = %u (%.0f ns): ",
                             source, rules, mr.ks[0], rules_first);
        else
            used = ts_append(explain, sizeof explain, used,
                             "model (%s): predicted %s fastest at K = %u (%.0f ns), only %.2fx "
                             "faster than the rules' %s (%.0f ns), within the model's error on "
                             "the ratio of two barriers (%.2fx on the barrier paper's Fig. 4 and "
                             "6, docs/model.md): ",
                             source, names[fastest], mr.ks[0], mr.lat[fastest][0],
                             rules_first / mr.lat[fastest][0], rules, rules_first,
                             TS_MODEL_RATIO_ERROR);
        snprintf(note, note_len, "%s", explain); /* the rules decide; the note says why */
        remember(disk, key, "", explain);
        return false;
    }
    double worst = INFINITY;
    int chosen = model_robust(req, m, names, &mr, &worst);
    bool robust = chosen >= 0 && worst <= 1 + MODEL_MARGIN;
    double margin = INFINITY; /* rules' latency / the choice's, worst over K */
    unsigned margin_k = 0;    /* the K index of that worst margin */
    double rules_at_margin = -1;
    if (robust && strcmp(names[chosen], rules) != 0)
        for (unsigned k = 0; k < mr.nk; k++) {
            if (!mr.done[k])
                continue;
            /* the first K's was simulated by model_screen */
            double lr = k == 0 ? rules_first : simulate(req, m, rules, mr.ks[k]);
            if (lr >= 0 && mr.lat[chosen][k] > 0 && lr / mr.lat[chosen][k] < margin) {
                margin = lr / mr.lat[chosen][k];
                margin_k = k;
                rules_at_margin = lr;
            }
        }
    bool overrules = margin > TS_MODEL_RATIO_ERROR;
    topsync_model_destroy(own);
    if (chosen < 0)
        return false;
    if (robust && !overrules) {
        used = ts_append(explain, sizeof explain, used,
                         "model (%s): predicted %s fastest, but at K = %u only %.2fx faster than "
                         "the rules' %s (%.0f against %.0f ns), within the model's error on the "
                         "ratio of two barriers (%.2fx on the barrier paper's Fig. 4 and 6, "
                         "docs/model.md): ",
                         source, names[chosen], mr.ks[margin_k], margin, rules,
                         mr.lat[chosen][margin_k], rules_at_margin, TS_MODEL_RATIO_ERROR);
        snprintf(note, note_len, "%s", explain); /* the rules decide; the note says why */
        remember(disk, key, "", explain);
        return false;
    }
    unsigned k0 = 0; /* the figures shown: the first K (1, or the model's) */
    if (robust) {
        snprintf(out->algorithm, sizeof out->algorithm, "%s", names[chosen]);
        used = ts_append(explain, sizeof explain, used, "model (%s): predicted %s %.0f ns", source,
                         names[chosen], mr.lat[chosen][k0]);
        /* the next two fastest at that K */
        int shown[2] = {-1, -1};
        for (int s = 0; s < 2; s++) {
            for (unsigned c = 0; c < mr.nc; c++)
                if ((int)c != chosen && (int)c != shown[0] && mr.lat[c][k0] >= 0 &&
                    (shown[s] < 0 || mr.lat[c][k0] < mr.lat[shown[s]][k0]))
                    shown[s] = (int)c;
            if (shown[s] >= 0)
                used = ts_append(explain, sizeof explain, used, ", %s %.0f ns", names[shown[s]],
                                 mr.lat[shown[s]][k0]);
        }
        used = ts_append(explain, sizeof explain, used, " (of %u candidates", mr.nc);
        if (mr.nk == 1)
            used = ts_append(explain, sizeof explain, used, ", %u outstanding misses per core)",
                             mr.ks[0]);
        else
            used = ts_append(explain, sizeof explain, used,
                             "; within %.0f %% of the best at every memory-level parallelism "
                             "K = %u..%u, at worst %.1f %% behind)",
                             MODEL_MARGIN * 100, mr.ks[0], mr.ks[mr.nk - 1], (worst - 1) * 100);
    } else {
        used = ts_append(explain, sizeof explain, used,
                         "the model's choice depends on memory-level parallelism not known for "
                         "this core (model (%s): fastest at ",
                         source);
        used = describe_bests(&mr, names, explain, sizeof explain, used);
        used = ts_append(explain, sizeof explain, used,
                         "; none within %.0f %% of the best at "
                         "every K, the closest %s %.0f %% behind): ",
                         MODEL_MARGIN * 100, names[chosen], (worst - 1) * 100);
    }
    snprintf(robust ? out->explain : note, robust ? sizeof out->explain : note_len, "%s", explain);
    remember(disk, key, robust ? out->algorithm : "", explain);
    return robust;
}

/* ---------------------------------------------------------------------- */
/* Step 3: the rules.                                                       */

static bool groups_below_top(const topsync_groups_t *g)
{
    for (unsigned i = 0; g && i < topsync_groups_count(g); i++) {
        topsync_group_info_t info;
        topsync_groups_get(g, i, &info);
        if (info.level != TOPSYNC_GROUP_TOP)
            return true;
    }
    return false;
}

/* The one place the rules decide; rules_step says why. */
static const char *rules_choice(const struct ts_auto_request *req)
{
    if (req->oversubscribed)
        return "sense-reversing";
    if (req->groups && topsync_groups_hierarchical(req->groups) && groups_below_top(req->groups))
        return "topo";
    return "dissemination";
}

static void rules_step(const struct ts_auto_request *req, struct ts_auto_choice *out)
{
    const char *chosen = rules_choice(req);
    snprintf(out->algorithm, sizeof out->algorithm, "%s", chosen);
    if (!strcmp(chosen, "sense-reversing")) {
        snprintf(out->explain, sizeof out->explain,
                 "rules: sense-reversing, since more participants are runnable than there are "
                 "CPUs (one wake-up releases every sleeper)");
    } else if (!strcmp(chosen, "topo")) {
        snprintf(out->explain, sizeof out->explain,
                 "rules: topo, since the participants' hierarchy has groups below TOP");
    } else {
        snprintf(out->explain, sizeof out->explain,
                 "rules: dissemination, since %s (no read-modify-write, log2 P rounds)",
                 !req->cpusets ? "the participants are not bound"
                 : req->groups && topsync_groups_hierarchical(req->groups)
                     ? "no level groups the participants below TOP"
                     : "some participant is not bound");
    }
}

/*
 * What the rules set aside, tried online by a reactive barrier (docs/design.md
 * section 10.4): the other family of the model's own uncertainty. Where a
 * core's memory-level parallelism is not known, the flat gather/release
 * (one root scanning every arrival word, one release line) and the
 * log-depth dissemination trade places with K (docs/model.md sections 4
 * and 7; issue 54's 16-core table: dissemination first at K = 1-4,
 * sense-reversing-gr from K = 8), and topo against a flat log-depth one is
 * within the model's error on a ratio. The robust configuration covers
 * the central counter.
 */
static const char *rules_candidate(const char *rules)
{
    if (!strcmp(rules, "dissemination"))
        return "sense-reversing-gr";
    if (!strcmp(rules, "topo"))
        return "dissemination";
    return "";
}

void ts_auto_choose(const struct ts_auto_request *req, struct ts_auto_choice *out)
{
    memset(out, 0, sizeof *out);
    unsigned steps = auto_steps();
    char skipped[200] = "", note[sizeof out->explain] = "";
    if ((steps & STEP_TUNING) && req->topology && !req->model && tuning_step(req, out))
        return;
    if ((steps & STEP_MODEL) && model_step(req, out, note, sizeof note))
        return;
    rules_step(req, out);
    snprintf(out->candidate, sizeof out->candidate, "%s", rules_candidate(out->algorithm));
    if (note[0]) { /* the model ran but its choice was not robust: say so first */
        char rules[sizeof out->explain];
        memcpy(rules, out->explain, sizeof rules);
        /* what does not fit is cut: the explanation is for reading */
        size_t used = ts_append(out->explain, sizeof out->explain, 0, "%s", note);
        ts_append(out->explain, sizeof out->explain, used, "%s", rules);
    }
    if (!(steps & STEP_MODEL) || !(steps & STEP_TUNING))
        snprintf(skipped, sizeof skipped, " [TOPSYNC_AUTO=%s]", ts_getenv("TOPSYNC_AUTO"));
    if (skipped[0] && strlen(out->explain) + strlen(skipped) < sizeof out->explain)
        strcat(out->explain, skipped);
}

const struct ts_barrier_chooser ts_auto_chooser = {.check = ts_auto_steps_check,
                                                   .choose = ts_auto_choose};

/* The barrier's core lies below auto and calls it only through this
 * registration (barrier_private.h): at load, before any call into the
 * library. Both builds link every object (the static library is one
 * relocatable object), so it always runs. */
__attribute__((constructor)) static void register_auto(void)
{
    ts_barrier_set_chooser(&ts_auto_chooser);
}
