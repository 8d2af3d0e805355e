/*
 * Tuning files (topsync/tune.h) and the tuning step of "auto": the
 * machine's fingerprint and the placement signature, a file written and
 * read back, matched by fingerprint and case (nearest count), a foreign,
 * corrupt or other-version file refused with its reason and ignored by
 * auto with one warning line, concurrent writers leaving one valid file,
 * and auto choosing from the file (and the model from its c2c table).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <topsync.h>

#include "check.h"

static char dir[] = "/tmp/topsync-tuning-XXXXXX";

static const char *path_of(const char *name)
{
    static char buf[4][256];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, 256, "%s/%s", dir, name);
    return p;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static topsync_topology_t *synthetic(const char *d)
{
    topsync_topology_t *t = NULL;
    CHECK_EQ(topsync_topology_load_synthetic(&t, d), 0);
    return t;
}

static topsync_tuning_entry_t entry(unsigned n, int processes, int over, const char *placement,
                                    const char *best, topsync_wait_policy_t wait, double ns)
{
    topsync_tuning_entry_t e;
    memset(&e, 0, sizeof e);
    e.participants = n;
    e.processes = processes;
    e.oversubscribed = over;
    snprintf(e.placement, sizeof e.placement, "%s", placement);
    /* deliberately not sorted: put() sorts */
    snprintf(e.results[0].algorithm, sizeof e.results[0].algorithm, "mcs");
    e.results[0].wait = TOPSYNC_WAIT_SPIN;
    e.results[0].latency_ns = ns * 2;
    snprintf(e.results[1].algorithm, sizeof e.results[1].algorithm, "%s", best);
    e.results[1].wait = wait;
    e.results[1].latency_ns = ns;
    e.nresults = 2;
    return e;
}

static void test_fingerprint_and_placement(void)
{
    topsync_topology_t *a = synthetic("pack:2 numa:2 l3:1 core:4 pu:1");
    topsync_topology_t *a2 = synthetic("pack:2 numa:2 l3:1 core:4 pu:1");
    topsync_topology_t *b = synthetic("pack:2 numa:2 l3:1 core:4 pu:2");
    char fa[TOPSYNC_FINGERPRINT_LEN], fa2[TOPSYNC_FINGERPRINT_LEN], fb[TOPSYNC_FINGERPRINT_LEN];
    CHECK_EQ(topsync_tuning_fingerprint(a, fa), 0);
    CHECK_EQ(topsync_tuning_fingerprint(a2, fa2), 0);
    CHECK_EQ(topsync_tuning_fingerprint(b, fb), 0);
    CHECK_STR(fa, fa2);
    CHECK(strcmp(fa, fb) != 0);
    CHECK_EQ(strlen(fa), 16);

    char p[48];
    hwloc_bitmap_t sets[16];
    static const struct {
        topsync_map_by_t map;
        const char *name;
    } maps[] = {{TOPSYNC_MAP_BY_CORE, "core"},
                {TOPSYNC_MAP_BY_NUMA, "numa"},
                {TOPSYNC_MAP_BY_SOCKET, "socket"}};
    for (int m = 0; m < 3; m++) {
        topsync_placement_compute(a, 8, maps[m].map, TOPSYNC_BIND_TO_CORE, sets);
        CHECK_EQ(topsync_tuning_placement(a, 8, (const hwloc_const_bitmap_t *)sets, p, sizeof p),
                 0);
        CHECK_STR(p, maps[m].name);
        for (int i = 0; i < 8; i++)
            hwloc_bitmap_free(sets[i]);
    }
    /* map-by core and numa coincide for one rank per NUMA node... the first
     * match is named; a reordered binding is custom, and stable */
    topsync_placement_compute(a, 8, TOPSYNC_MAP_BY_CORE, TOPSYNC_BIND_TO_CORE, sets);
    hwloc_bitmap_t swap = sets[0];
    sets[0] = sets[7];
    sets[7] = swap;
    CHECK_EQ(topsync_tuning_placement(a, 8, (const hwloc_const_bitmap_t *)sets, p, sizeof p), 0);
    CHECK(strncmp(p, "custom-", 7) == 0);
    char again[48];
    topsync_tuning_placement(a, 8, (const hwloc_const_bitmap_t *)sets, again, sizeof again);
    CHECK_STR(p, again);
    for (int i = 0; i < 8; i++)
        hwloc_bitmap_free(sets[i]);
    topsync_placement_compute(a, 8, TOPSYNC_MAP_BY_CORE, TOPSYNC_BIND_TO_NONE, sets);
    CHECK_EQ(topsync_tuning_placement(a, 8, (const hwloc_const_bitmap_t *)sets, p, sizeof p), 0);
    CHECK_STR(p, "unbound");
    for (int i = 0; i < 8; i++)
        hwloc_bitmap_free(sets[i]);
    CHECK_EQ(topsync_tuning_placement(a, 8, NULL, p, sizeof p), 0);
    CHECK_STR(p, "unbound");
    CHECK_EQ(topsync_tuning_placement(a, 0, NULL, p, sizeof p), -EINVAL);
    topsync_topology_destroy(a);
    topsync_topology_destroy(a2);
    topsync_topology_destroy(b);
}

static void test_round_trip(void)
{
    topsync_topology_t *t = synthetic("pack:2 numa:2 l3:1 core:4 pu:1");
    topsync_tuning_t *tu;
    CHECK_EQ(topsync_tuning_create(&tu, t), 0);
    topsync_tuning_entry_t e =
        entry(8, 1, 1, "unbound", "sense-reversing", TOPSYNC_WAIT_BLOCK, 3000);
    CHECK_EQ(topsync_tuning_put(tu, &e), 0);
    e = entry(2, 0, 0, "core", "topo:numa/tree", TOPSYNC_WAIT_SPIN, 50);
    CHECK_EQ(topsync_tuning_put(tu, &e), 0);
    e = entry(8, 0, 0, "core", "dissemination", TOPSYNC_WAIT_YIELD, 400);
    CHECK_EQ(topsync_tuning_put(tu, &e), 0);
    e = entry(8, 0, 0, "core", "combining-tree", TOPSYNC_WAIT_SPIN, 300); /* replaces */
    CHECK_EQ(topsync_tuning_put(tu, &e), 0);
    CHECK_EQ(topsync_tuning_count(tu), 3);
    double c2c[4] = {0, 31.5, 31.5, 0};
    CHECK_EQ(topsync_tuning_set_c2c(tu, 2, c2c), 0);
    double interval = -1;
    CHECK(topsync_tuning_mlp(tu, &interval) == 0 && interval == 0); /* none measured */
    CHECK_EQ(topsync_tuning_set_mlp(tu, 0, 2.5), -EINVAL);
    CHECK_MSG("topsync_tuning_set_mlp: overlap 0");
    CHECK_EQ(topsync_tuning_set_mlp(tu, TOPSYNC_MODEL_MAX_MLP + 1, 2.5), -EINVAL);
    CHECK_EQ(topsync_tuning_set_mlp(tu, 13.45, 0), -EINVAL);
    CHECK_EQ(topsync_tuning_set_mlp(tu, 13.45, 2.188), 0);
    /* bad entries */
    e.nresults = 0;
    CHECK_EQ(topsync_tuning_put(tu, &e), -EINVAL);
    e = entry(4, 0, 0, "core", "fastest", TOPSYNC_WAIT_SPIN, 10);
    CHECK_EQ(topsync_tuning_put(tu, &e), -EINVAL);
    CHECK_MSG("algorithm is not one topsync has");
    e = entry(4, 0, 0, "core", "auto", TOPSYNC_WAIT_SPIN, 10);
    CHECK_EQ(topsync_tuning_put(tu, &e), -EINVAL);
    e = entry(4, 0, 0, "core", "mcs", TOPSYNC_WAIT_DEFAULT, 10);
    CHECK_EQ(topsync_tuning_put(tu, &e), -EINVAL);

    const char *file = path_of("sub/dir/tuning.json"); /* directories made */
    CHECK_EQ(topsync_tuning_write(tu, file), 0);
    topsync_tuning_destroy(tu);

    CHECK_EQ(topsync_tuning_load(&tu, file, t), 0);
    CHECK_EQ(topsync_tuning_count(tu), 3);
    topsync_tuning_entry_t got;
    CHECK_EQ(topsync_tuning_lookup(tu, 8, 0, 0, "core", &got), 0);
    CHECK_STR(got.results[0].algorithm, "combining-tree"); /* sorted, fastest first */
    CHECK_EQ(got.results[0].wait, TOPSYNC_WAIT_SPIN);
    CHECK(got.results[0].latency_ns == 300);
    CHECK_STR(got.results[1].algorithm, "mcs");
    /* nearest count: 5 is nearer 8 than 2; 5 between 2 and 8 at 3 and 3: the smaller */
    CHECK_EQ(topsync_tuning_lookup(tu, 6, 0, 0, "core", &got), 0);
    CHECK_EQ(got.participants, 8);
    CHECK_EQ(topsync_tuning_lookup(tu, 5, 0, 0, "core", &got), 0);
    CHECK_EQ(got.participants, 2);
    CHECK_EQ(topsync_tuning_lookup(tu, 64, 1, 1, "unbound", &got), 0);
    CHECK_STR(got.results[0].algorithm, "sense-reversing");
    CHECK_EQ(got.results[0].wait, TOPSYNC_WAIT_BLOCK);
    /* kind, oversubscription and placement must match */
    CHECK_EQ(topsync_tuning_lookup(tu, 8, 1, 0, "core", &got), -ENOENT);
    CHECK_EQ(topsync_tuning_lookup(tu, 8, 0, 1, "core", &got), -ENOENT);
    CHECK_EQ(topsync_tuning_lookup(tu, 8, 0, 0, "numa", &got), -ENOENT);
    unsigned n;
    const double *table = topsync_tuning_c2c(tu, &n);
    CHECK(table && n == 2 && table[2] == 31.5 && table[1] == 31.5);
    CHECK(topsync_tuning_mlp(tu, &interval) == 13.45 && interval == 2.188);
    topsync_tuning_destroy(tu);

    /* another machine: refused, naming both fingerprints */
    topsync_topology_t *other = synthetic("pack:1 core:4 pu:1");
    CHECK_EQ(topsync_tuning_load(&tu, file, other), -ENODEV);
    CHECK_MSG("is for another machine");
    CHECK(tu == NULL);
    topsync_topology_destroy(other);
    CHECK_EQ(topsync_tuning_load(&tu, path_of("none.json"), t), -ENOENT);
    topsync_topology_destroy(t);
}

static void test_refused(void)
{
    topsync_topology_t *t = synthetic("pack:1 core:2 pu:1");
    char fp[TOPSYNC_FINGERPRINT_LEN], text[1024];
    topsync_tuning_fingerprint(t, fp);
    topsync_tuning_t *tu;
    write_text(path_of("corrupt.json"), "{\"format\": \"topsync-tuning\",\n \"version\": 1,,}");
    CHECK_EQ(topsync_tuning_load(&tu, path_of("corrupt.json"), t), -EINVAL);
    CHECK_MSG("is not a topsync tuning file: JSON line 2, column 15");
    write_text(path_of("other.json"), "{\"format\": \"something\", \"version\": 1}");
    CHECK_EQ(topsync_tuning_load(&tu, path_of("other.json"), t), -EINVAL);
    CHECK_MSG("no \"format\": \"topsync-tuning\"");
    snprintf(text, sizeof text,
             "{\"format\": \"topsync-tuning\", \"version\": 2, "
             "\"fingerprint\": \"%s\", \"entries\": []}",
             fp);
    write_text(path_of("v2.json"), text);
    CHECK_EQ(topsync_tuning_load(&tu, path_of("v2.json"), t), -ESTALE);
    CHECK_MSG("has format version 2; this topsync reads version 1");
    snprintf(text, sizeof text,
             "{\"format\": \"topsync-tuning\", \"version\": 1, \"fingerprint\": \"%s\", "
             "\"entries\": [{\"participants\": 2, \"kind\": \"threads\", \"oversubscribed\": "
             "false, \"placement\": \"core\", \"results\": [{\"algorithm\": \"mcs\", \"wait\": "
             "\"nap\", \"latency_ns\": 5}]}]}",
             fp);
    write_text(path_of("badwait.json"), text);
    CHECK_EQ(topsync_tuning_load(&tu, path_of("badwait.json"), t), -EBADMSG); /* damaged */
    CHECK_MSG("entries[0]: results[0]");
    snprintf(text, sizeof text,
             "{\"format\": \"topsync-tuning\", \"version\": 1, \"fingerprint\": \"%s\", "
             "\"entries\": [], \"c2c_ns\": [[], [1, 2]]}",
             fp);
    write_text(path_of("badc2c.json"), text);
    CHECK_EQ(topsync_tuning_load(&tu, path_of("badc2c.json"), t), -EBADMSG);
    CHECK_MSG("c2c_ns row 1");
    snprintf(text, sizeof text,
             "{\"format\": \"topsync-tuning\", \"version\": 1, \"fingerprint\": \"%s\", "
             "\"entries\": [], \"mlp\": 12}",
             fp);
    write_text(path_of("badmlp.json"), text);
    CHECK_EQ(topsync_tuning_load(&tu, path_of("badmlp.json"), t), -EBADMSG);
    CHECK_MSG("\"mlp\" and \"miss_interval_ns\" go together");
    /* escapes, unicode and nesting are JSON's: accepted where they belong */
    snprintf(text, sizeof text,
             "{\"format\": \"topsync-tuning\", \"version\": 1.0, \"fingerprint\": \"%s\", "
             "\"machine\": \"caf\\u00e9 \\\"x\\\"\", \"extra\": {\"a\": [null, true, -1e3]}, "
             "\"entries\": []}",
             fp);
    write_text(path_of("fine.json"), text);
    CHECK_EQ(topsync_tuning_load(&tu, path_of("fine.json"), t), 0);
    topsync_tuning_destroy(tu);
    topsync_topology_destroy(t);
}

/* Two processes rewrite the same file 200 times each while a third reads
 * it: every read finds a whole, valid file. */
static void test_concurrent_writers(void)
{
    topsync_topology_t *t = synthetic("pack:1 core:2 pu:1");
    const char *file = path_of("shared.json");
    pid_t pids[2];
    for (int w = 0; w < 2; w++) {
        pids[w] = fork();
        if (pids[w] == 0) {
            topsync_tuning_t *tu;
            if (topsync_tuning_create(&tu, t) < 0)
                _exit(1);
            for (int k = 0; k < 200; k++) {
                topsync_tuning_entry_t e = entry(2 + (unsigned)w, 0, 0, "core", "dissemination",
                                                 TOPSYNC_WAIT_SPIN, 10 + k);
                if (topsync_tuning_put(tu, &e) < 0 || topsync_tuning_write(tu, file) < 0)
                    _exit(2);
            }
            topsync_tuning_destroy(tu);
            _exit(0);
        }
    }
    int bad = 0, good = 0;
    for (int k = 0; k < 400; k++) {
        topsync_tuning_t *tu;
        int rc = topsync_tuning_load(&tu, file, t);
        if (rc == 0) {
            good++;
            bad += topsync_tuning_count(tu) != 1;
            topsync_tuning_destroy(tu);
        } else if (rc != -ENOENT) {
            fprintf(stderr, "concurrent read: %s\n", topsync_error_message());
            bad++;
        }
    }
    for (int w = 0; w < 2; w++) {
        int status;
        waitpid(pids[w], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    CHECK_EQ(bad, 0);
    topsync_tuning_t *tu;
    CHECK_EQ(topsync_tuning_load(&tu, file, t), 0);
    topsync_tuning_entry_t got;
    CHECK_EQ(topsync_tuning_get(tu, 0, &got), 0);
    CHECK(got.participants == 2 || got.participants == 3);
    CHECK(got.results[0].latency_ns == 209); /* the last write of either writer */
    topsync_tuning_destroy(tu);
    /* no temporary file left beside it */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls %s | grep -q 'shared.json.tmp'", dir);
    CHECK(system(cmd) != 0);
    (void)good;
    topsync_topology_destroy(t);
}

/* Run f with stderr going to a file; returns what it printed. */
static char *capture_stderr(void (*f)(void *), void *arg)
{
    static char out[4096];
    const char *file = path_of("stderr.txt");
    fflush(stderr);
    int saved = dup(2), fd = open(file, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    dup2(fd, 2);
    close(fd);
    f(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *in = fopen(file, "r");
    size_t n = fread(out, 1, sizeof out - 1, in);
    fclose(in);
    out[n] = '\0';
    return out;
}

struct auto_case {
    topsync_topology_t *t;
    hwloc_bitmap_t *sets;
    unsigned n;
    char algorithm[96], wait[16], explain[1100];
};

static void create_twice(void *arg)
{
    struct auto_case *c = arg;
    topsync_barrier_options_t o;
    topsync_barrier_options_init(&o);
    o.algorithm = "auto";
    o.topology = c->t;
    o.cpusets = (const hwloc_const_bitmap_t *)c->sets;
    for (int k = 0; k < 2; k++) {
        topsync_barrier_t *b;
        if (topsync_barrier_create(&b, c->n, &o) < 0) {
            snprintf(c->algorithm, sizeof c->algorithm, "failed");
            return;
        }
        snprintf(c->algorithm, sizeof c->algorithm, "%s", topsync_barrier_algorithm(b));
        snprintf(c->wait, sizeof c->wait, "%s", topsync_barrier_wait_policy_name(b));
        snprintf(c->explain, sizeof c->explain, "%s", topsync_barrier_explain(b));
        topsync_barrier_destroy(b);
    }
}

static void test_auto_from_file(void)
{
    /* a machine large enough that 4 bound threads are not oversubscribed */
    topsync_topology_t *t = synthetic("pack:2 numa:2 l3:1 core:4 pu:1");
    hwloc_bitmap_t sets[4];
    topsync_placement_compute(t, 4, TOPSYNC_MAP_BY_NUMA, TOPSYNC_BIND_TO_CORE, sets);
    struct auto_case c = {.t = t, .sets = sets, .n = 4};
    topsync_tuning_t *tu;
    CHECK_EQ(topsync_tuning_create(&tu, t), 0);
    topsync_tuning_entry_t e = entry(3, 0, 0, "numa", "tournament", TOPSYNC_WAIT_YIELD, 120);
    CHECK_EQ(topsync_tuning_put(tu, &e), 0);
    char file[300]; /* path_of's buffers rotate: capture_stderr takes them too */
    snprintf(file, sizeof file, "%s", path_of("auto.json"));
    CHECK_EQ(topsync_tuning_write(tu, file), 0);
    setenv("TOPSYNC_TUNING", file, 1);
    char *err = capture_stderr(create_twice, &c);
    CHECK_STR(c.algorithm, "tournament");
    CHECK_STR(c.wait, "yield"); /* the tuned policy, none being given */
    CHECK(strstr(c.explain, "auto: tuning file ") && strstr(c.explain, "entry 3 threads "
                                                                       "(nearest tuned count "
                                                                       "to 4), one per CPU, "
                                                                       "placement numa: "
                                                                       "tournament/yield "
                                                                       "120 ns, mcs/spin "
                                                                       "240 ns"));
    CHECK_STR(err, "");
    /* a wait policy given by the user is kept */
    setenv("TOPSYNC_WAIT", "spin", 1);
    capture_stderr(create_twice, &c);
    CHECK_STR(c.algorithm, "tournament");
    CHECK_STR(c.wait, "spin");
    CHECK(strstr(c.explain, "(wait policy given: kept)") != NULL);
    unsetenv("TOPSYNC_WAIT");
    /* another case than the file's: the model decides (on the defaults) */
    hwloc_bitmap_t core_sets[4];
    topsync_placement_compute(t, 4, TOPSYNC_MAP_BY_CORE, TOPSYNC_BIND_TO_CORE, core_sets);
    struct auto_case other = {.t = t, .sets = core_sets, .n = 4};
    capture_stderr(create_twice, &other);
    CHECK(strncmp(other.explain, "auto: model (per-level default latencies)", 41) == 0);

    /* the file's own c2c table feeds the model step */
    double c2c[64];
    for (int i = 0; i < 64; i++)
        c2c[i] = 40 + (i % 8) + (i / 8);
    CHECK_EQ(topsync_tuning_set_c2c(tu, 8, c2c), 0);
    CHECK_EQ(topsync_tuning_write(tu, file), 0);
    capture_stderr(create_twice, &other);
    CHECK(strstr(other.explain, "auto: model (measured c2c table of ") != NULL);
    CHECK(strstr(other.explain, "misses in flight") == NULL);
    /* with the miss overlap measured here: that K alone, and the home */
    CHECK_EQ(topsync_tuning_set_mlp(tu, 3.4, 12.5), 0);
    CHECK_EQ(topsync_tuning_write(tu, file), 0);
    capture_stderr(create_twice, &other);
    CHECK(strstr(other.explain, "K = 3 misses in flight and a home per 12.50 ns") != NULL);
    CHECK(strstr(other.explain, "every memory-level parallelism") == NULL);

    /* a foreign file: one warning line for two barriers, then the model */
    topsync_topology_t *small = synthetic("pack:1 core:2 pu:1");
    topsync_tuning_t *foreign;
    CHECK_EQ(topsync_tuning_create(&foreign, small), 0);
    CHECK_EQ(topsync_tuning_write(foreign, path_of("foreign.json")), 0);
    topsync_tuning_destroy(foreign);
    topsync_topology_destroy(small);
    setenv("TOPSYNC_TUNING", path_of("foreign.json"), 1);
    err = capture_stderr(create_twice, &c);
    CHECK(strstr(err, "topsync: warning: tuning file ") && strstr(err, "is for another machine"));
    CHECK(strchr(err, '\n') == strrchr(err, '\n')); /* one line */
    CHECK(strncmp(c.explain, "auto: model", 11) == 0);
    /* a missing file named by TOPSYNC_TUNING: said once too */
    setenv("TOPSYNC_TUNING", path_of("missing.json"), 1);
    err = capture_stderr(create_twice, &c);
    CHECK(strstr(err, "missing.json: No such file or directory") != NULL);
    CHECK(strchr(err, '\n') == strrchr(err, '\n'));
    /* off: no file, no warning */
    setenv("TOPSYNC_TUNING", "off", 1);
    char p[256];
    CHECK_EQ(topsync_tuning_path(t, p, sizeof p), -ENOENT);
    err = capture_stderr(create_twice, &c);
    CHECK_STR(err, "");
    unsetenv("TOPSYNC_TUNING");

    /* the per-user cache: XDG_CACHE_HOME/topsync/tuning-FINGERPRINT.json */
    setenv("XDG_CACHE_HOME", dir, 1);
    CHECK_EQ(topsync_tuning_path(t, p, sizeof p), 0);
    char fp[TOPSYNC_FINGERPRINT_LEN], want[256];
    topsync_tuning_fingerprint(t, fp);
    snprintf(want, sizeof want, "%s/topsync/tuning-%s.json", dir, fp);
    CHECK_STR(p, want);
    CHECK_EQ(topsync_tuning_write(tu, p), 0);
    capture_stderr(create_twice, &c);
    CHECK_STR(c.algorithm, "tournament");
    CHECK(strstr(c.explain, want) != NULL);
    setenv("XDG_CACHE_HOME", path_of("empty-cache"), 1);
    topsync_tuning_destroy(tu);
    for (int i = 0; i < 4; i++) {
        hwloc_bitmap_free(sets[i]);
        hwloc_bitmap_free(core_sets[i]);
    }
    topsync_topology_destroy(t);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    unsetenv("TOPSYNC_TUNING");
    unsetenv("TOPSYNC_AUTO");
    unsetenv("TOPSYNC_WAIT");
    setenv("XDG_CACHE_HOME", path_of("empty-cache"), 1); /* never the user's own cache */
    test_fingerprint_and_placement();
    test_round_trip();
    test_refused();
    test_concurrent_writers();
    test_auto_from_file();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return check_summary();
}
