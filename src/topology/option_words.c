/*
 * The words of options and variables about the machine: level lists,
 * --map-by and --bind-to. docs/design.md section 1.
 */
#include "topology/topology_private.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "base/keywords.h"

int topsync_levels_parse(const char *list, unsigned *mask)
{
    static const char valid[] = "l2, l3, numa (or node), socket (or package, pack), all";
    if (!list || !mask)
        return ts_fail(EINVAL, "topsync_levels_parse: NULL argument");
    unsigned m = 0;
    const char *p = list;
    if (!*p)
        return ts_fail(EINVAL, "empty level list; valid levels: %s", valid);
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        static const ts_keyword_t levels[] = {
            {"l2", TOPSYNC_LEVEL_L2, false},          {"l3", TOPSYNC_LEVEL_L3, false},
            {"numa", TOPSYNC_LEVEL_NUMA, false},      {"node", TOPSYNC_LEVEL_NUMA, true},
            {"numanode", TOPSYNC_LEVEL_NUMA, true},   {"socket", TOPSYNC_LEVEL_PACKAGE, false},
            {"package", TOPSYNC_LEVEL_PACKAGE, true}, {"pack", TOPSYNC_LEVEL_PACKAGE, true},
            {"all", TOPSYNC_LEVELS_ALL, false},       {NULL, 0, false},
        };
        const ts_keyword_t *k = ts_keyword_find_n(levels, p, len);
        unsigned bit = k ? (unsigned)k->value : 0;
        if (!bit)
            return ts_fail(EINVAL, "unknown level '%.*s' in level list '%s'; valid levels: %s",
                           (int)len, p, list, valid);
        if (m & bit)
            return ts_fail(EINVAL, "level '%.*s' given twice in level list '%s'", (int)len, p,
                           list);
        m |= bit;
        if (!end)
            break;
        p = end + 1;
    }
    *mask = m;
    return 0;
}

int topsync_map_by_parse(const char *w, topsync_map_by_t *out)
{
    if (!w || !out)
        return ts_fail(EINVAL, "topsync_map_by_parse: NULL argument");
    if (!strcasecmp(w, "node"))
        return ts_fail(EINVAL, "mapping 'node' is ambiguous (mpirun's --map-by node spreads "
                               "ranks across hosts): say numa for NUMA nodes; valid: core, "
                               "numa, socket");
    static const ts_keyword_t words[] = {
        {"core", TOPSYNC_MAP_BY_CORE, false},
        {"numa", TOPSYNC_MAP_BY_NUMA, false},
        {"socket", TOPSYNC_MAP_BY_SOCKET, false},
        {"package", TOPSYNC_MAP_BY_SOCKET, true},
        {NULL, 0, false},
    };
    int value;
    int rc = ts_keyword_parse(words, "mapping", w, &value);
    if (rc == 0)
        *out = (topsync_map_by_t)value;
    return rc;
}

int topsync_bind_to_parse(const char *w, topsync_bind_to_t *out)
{
    if (!w || !out)
        return ts_fail(EINVAL, "topsync_bind_to_parse: NULL argument");
    if (!strcasecmp(w, "node"))
        return ts_fail(EINVAL, "binding 'node' is ambiguous (to mpirun a node is a host): say "
                               "numa for a NUMA node; valid: core, numa, package, none");
    static const ts_keyword_t words[] = {
        {"core", TOPSYNC_BIND_TO_CORE, false},       {"numa", TOPSYNC_BIND_TO_NUMA, false},
        {"package", TOPSYNC_BIND_TO_PACKAGE, false}, {"socket", TOPSYNC_BIND_TO_PACKAGE, true},
        {"none", TOPSYNC_BIND_TO_NONE, false},       {NULL, 0, false},
    };
    int value;
    int rc = ts_keyword_parse(words, "binding", w, &value);
    if (rc == 0)
        *out = (topsync_bind_to_t)value;
    return rc;
}
