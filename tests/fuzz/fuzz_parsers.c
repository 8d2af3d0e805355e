/*
 * libFuzzer target for every parser of user input: algorithm names (with
 * topo options), level lists, wait and RCL placement policies, map-by and
 * bind-to words, the TOPSYNC_* variables through topsync_environment_check
 * and topsync_rcl_runtime_create's validation, and hwloc synthetic topology
 * strings and XML (text starting with '<') through the topology loaders,
 * then placement and groups on what loaded, tuning files (JSON; "FP" in the
 * text stands for the machine's fingerprint, so that inputs reach the
 * entries) and core-to-core tables (CSV) through their readers. The first
 * byte picks the parser, the rest is the text. Checked beyond "no crash, no leak, no UB":
 * a failure always leaves a message, and a name accepted once is accepted
 * again (parsers are pure).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <topsync.h>

static void must(int cond, const char *what, const char *text)
{
    if (!cond) {
        fprintf(stderr, "fuzz_parsers: %s for input '%s'\n", what, text);
        abort();
    }
}

static void check_result(int rc, const char *text)
{
    if (rc < 0)
        must(topsync_error_message()[0] != '\0', "failure without a message", text);
}

/* The text as a file (memfd), for the readers that take a path. */
static int as_file(const char *text, char *path, size_t len)
{
    int fd = memfd_create("fuzz", 0);
    if (fd < 0)
        return -1;
    size_t n = strlen(text);
    if (write(fd, text, n) != (ssize_t)n) {
        close(fd);
        return -1;
    }
    snprintf(path, len, "/proc/self/fd/%d", fd);
    return fd;
}

static topsync_topology_t *small_machine(void)
{
    static topsync_topology_t *t;
    if (!t && topsync_topology_load_synthetic(&t, "pack:2 core:2 pu:1") < 0)
        abort();
    return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 512)
        return 0;
    char *text = malloc(size);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    unsigned mask, mask2;
    topsync_wait_policy_t wp;
    topsync_rcl_policy_t rp;
    topsync_map_by_t mb;
    topsync_bind_to_t bt;
    int rc;
    switch (data[0] % 11) {
    case 0:
        rc = topsync_barrier_algorithm_validate(text);
        check_result(rc, text);
        must(topsync_barrier_algorithm_validate(text) == rc, "algorithm parse not pure", text);
        break;
    case 1:
        rc = topsync_levels_parse(text, &mask);
        check_result(rc, text);
        if (rc == 0) {
            must(topsync_levels_parse(text, &mask2) == 0 && mask == mask2, "levels not pure", text);
            must(mask != 0 && (mask & ~0xfu) == 0, "levels outside the four known", text);
        }
        break;
    case 2: check_result(topsync_wait_policy_parse(text, &wp), text); break;
    case 3: check_result(topsync_rcl_policy_parse(text, &rp), text); break;
    case 4:
        check_result(topsync_map_by_parse(text, &mb), text);
        check_result(topsync_bind_to_parse(text, &bt), text);
        break;
    case 5: { /* the variables, as the libraries read them */
        static const char *const vars[] = {"TOPSYNC_BARRIER", "TOPSYNC_WAIT", "TOPSYNC_SPIN",
                                           "TOPSYNC_TIMEOUT", "TOPSYNC_AUTO"};
        const char *var = vars[size % 5];
        setenv(var, text, 1);
        check_result(topsync_environment_check(), text);
        unsetenv(var);
        break;
    }
    case 6: {
        setenv("TOPSYNC_RCL_PLACEMENT", text, 1);
        topsync_rcl_options_t o;
        topsync_rcl_options_init(&o);
        o.wait = TOPSYNC_WAIT_SPIN; /* only the placement comes from text */
        topsync_rcl_runtime_t *rt = NULL;
        rc = topsync_rcl_runtime_create(&rt, &o);
        check_result(rc, text);
        if (rc == 0)
            must(topsync_rcl_runtime_destroy(rt) == 0, "runtime destroy", text);
        unsetenv("TOPSYNC_RCL_PLACEMENT");
        break;
    }
    case 7: { /* synthetic or XML topologies, then levels, placement, groups */
        topsync_topology_t *t = NULL;
        if (text[0] == '<') {
            rc = topsync_topology_load_xml_buffer(&t, text, size - 1);
        } else {
            if (size > 96)
                break; /* hwloc builds every object: keep machines small */
            rc = topsync_topology_load_synthetic(&t, text);
        }
        check_result(rc, text);
        if (rc == 0) {
            topsync_level_t levels[TOPSYNC_MAX_LEVELS];
            check_result(topsync_topology_active_levels(t, 0xfu, levels), text);
            unsigned n = topsync_topology_ncores(t) + 3;
            hwloc_bitmap_t sets[64];
            topsync_groups_t *g = NULL;
            if (n <= 64 && topsync_placement_compute(t, n, (topsync_map_by_t)(size % 3),
                                                     TOPSYNC_BIND_TO_CORE, sets) == 0) {
                rc = topsync_groups_build(&g, t, n, (const hwloc_const_bitmap_t *)sets, 0xfu);
                check_result(rc, text);
                topsync_groups_destroy(g);
                for (unsigned i = 0; i < n; i++)
                    hwloc_bitmap_free(sets[i]);
            }
            topsync_topology_destroy(t);
        }
        break;
    }
    case 9: { /* a tuning file */
        /* each 2-byte "FP" becomes 16 bytes: at most 8 out per byte in */
        char fp[TOPSYNC_FINGERPRINT_LEN], path[64], *doc = malloc(8 * size + 1);
        if (!doc)
            break;
        topsync_tuning_fingerprint(small_machine(), fp);
        size_t out = 0;
        for (const char *c = text; *c; c++) /* "FP": this machine's fingerprint */
            if (c[0] == 'F' && c[1] == 'P') {
                memcpy(doc + out, fp, 16);
                out += 16;
                c++;
            } else {
                doc[out++] = *c;
            }
        doc[out] = '\0';
        int fd = as_file(doc, path, sizeof path);
        free(doc);
        if (fd < 0)
            break;
        topsync_tuning_t *tu = NULL;
        rc = topsync_tuning_load(&tu, path, small_machine());
        check_result(rc, text);
        if (rc == 0) { /* what was accepted writes and reads back the same */
            topsync_tuning_entry_t e, again;
            for (unsigned k = 0; k < topsync_tuning_count(tu); k++) {
                must(topsync_tuning_get(tu, k, &e) == 0, "entry", text);
                must(topsync_tuning_lookup(tu, e.participants, e.processes, e.oversubscribed,
                                           e.placement, &again) == 0 &&
                         again.participants == e.participants,
                     "an entry's own case found", text);
            }
            topsync_tuning_destroy(tu);
        }
        close(fd);
        break;
    }
    case 10: { /* a core-to-core table: 4 PUs, or one package of 2 */
        char path[64];
        int fd = as_file(text, path, sizeof path);
        if (fd < 0)
            break;
        topsync_model_options_t mo;
        topsync_model_options_init(&mo);
        mo.c2c_path = path;
        topsync_model_t *m = NULL;
        rc = topsync_model_create(&m, small_machine(), &mo);
        check_result(rc, text);
        if (rc == 0) {
            for (unsigned a = 0; a < 4; a++)
                for (unsigned b = 0; b < 4; b++)
                    must(topsync_model_latency_ns(m, a, b) >= 0, "a latency of a read table", text);
            topsync_model_destroy(m);
        }
        close(fd);
        break;
    }
    default: { /* a barrier named by the text, used once */
        topsync_barrier_options_t o;
        topsync_barrier_options_init(&o);
        o.algorithm = text;
        o.timeout_seconds = -1;
        topsync_barrier_t *b = NULL;
        rc = topsync_barrier_create(&b, 1, &o);
        check_result(rc, text);
        if (rc == 0) {
            must(topsync_barrier_wait_checked(b, 0) == 0, "a 1-participant wait", text);
            topsync_barrier_destroy(b);
        }
        break;
    }
    }
    free(text);
    return 0;
}
