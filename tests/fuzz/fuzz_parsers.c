#define _POSIX_C_SOURCE 200809L
/*
 * libFuzzer target for every parser of user input: algorithm names (with
 * topo options), level lists, wait and RCL placement policies, map-by and
 * bind-to words, the TOPSYNC_* variables through topsync_environment_check
 * and topsync_rcl_runtime_create's validation, and hwloc synthetic topology
 * strings and XML (text starting with '<') through the topology loaders,
 * then placement and groups on what loaded. The first byte picks the
 * parser, the rest is the text. Checked beyond "no crash, no leak, no UB":
 * a failure always leaves a message, and a name accepted once is accepted
 * again (parsers are pure).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    switch (data[0] % 9) {
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
    case 2:
        check_result(topsync_wait_policy_parse(text, &wp), text);
        break;
    case 3:
        check_result(topsync_rcl_policy_parse(text, &rp), text);
        break;
    case 4:
        check_result(topsync_map_by_parse(text, &mb), text);
        check_result(topsync_bind_to_parse(text, &bt), text);
        break;
    case 5: { /* the variables, as the libraries read them */
        static const char *const vars[] = {"TOPSYNC_BARRIER", "TOPSYNC_WAIT", "TOPSYNC_SPIN",
                                           "TOPSYNC_TIMEOUT"};
        const char *var = vars[size % 4];
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
