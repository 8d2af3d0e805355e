/*
 * Topology: an hwloc topology plus what topsync derives from it once at load
 * time (cores, line size, the cpusets of the units of every candidate level),
 * so that the queries the groups code makes are cheap and never touch sysfs.
 */
#include "topology_private.h"

#include <ctype.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"

/* Lowest first: the order in which groups are formed. */
static const topsync_level_t level_order[TOPSYNC_MAX_LEVELS] = {
    TOPSYNC_LEVEL_L2, TOPSYNC_LEVEL_L3, TOPSYNC_LEVEL_NUMA, TOPSYNC_LEVEL_PACKAGE};
static const hwloc_obj_type_t level_type[TOPSYNC_MAX_LEVELS] = {
    HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_NUMANODE, HWLOC_OBJ_PACKAGE};

/* Used when no cache reports a line size (some synthetic/XML topologies):
 * the largest line of common servers (Kunpeng L3, POWER, Apple), so that a
 * missing figure costs memory, never false sharing. */
#define TS_FALLBACK_LINE_SIZE 128

int ts_level_index(topsync_level_t level)
{
    for (int i = 0; i < TOPSYNC_MAX_LEVELS; i++)
        if (level_order[i] == level)
            return i;
    return -1;
}

const char *topsync_level_name(topsync_level_t level)
{
    int i = ts_level_index(level);
    return i < 0 ? NULL : hwloc_obj_type_string(level_type[i]);
}

static int finish_load(topsync_topology_t *t)
{
    hwloc_topology_t h = t->hwloc;

    t->core_type = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE
                                                                  : HWLOC_OBJ_PU;
    int ncores = hwloc_get_nbobjs_by_type(h, t->core_type);
    if (ncores <= 0)
        return ts_fail(EINVAL, "topology %s has no cores or PUs", t->source);
    t->ncores = (unsigned)ncores;

    unsigned line = 0;
    int depth = hwloc_topology_get_depth(h);
    for (int d = 0; d < depth; d++) {
        hwloc_obj_t o = hwloc_get_obj_by_depth(h, d, 0);
        if (!o || !hwloc_obj_type_is_cache(o->type))
            continue;
        for (; o; o = o->next_cousin)
            if (o->attr->cache.linesize > line)
                line = o->attr->cache.linesize;
    }
    t->line_size = line ? line : TS_FALLBACK_LINE_SIZE;

    for (int l = 0; l < TOPSYNC_MAX_LEVELS; l++) {
        int nb = hwloc_get_nbobjs_by_type(h, level_type[l]);
        struct ts_level_units *u = &t->levels[l];
        u->count = 0;
        u->cpusets = NULL;
        if (nb <= 0)
            continue;
        u->cpusets = calloc((size_t)nb, sizeof *u->cpusets);
        if (!u->cpusets)
            return ts_fail(ENOMEM, "out of memory loading the topology");
        for (int i = 0; i < nb; i++) {
            hwloc_obj_t o = hwloc_get_obj_by_type(h, level_type[l], (unsigned)i);
            /* Memory-only NUMA nodes (no cores) cannot hold a participant. */
            if (!o->cpuset || hwloc_bitmap_iszero(o->cpuset))
                continue;
            u->cpusets[u->count] = hwloc_bitmap_dup(o->cpuset);
            if (!u->cpusets[u->count])
                return ts_fail(ENOMEM, "out of memory loading the topology");
            u->count++;
        }
    }
    return 0;
}

/*
 * Synthetic descriptions are checked against a grammar of topsync's own
 * before hwloc sees them. hwloc builds every object a description asks
 * for, with an insertion quadratic in a level's width, and its parser is
 * lenient: the fuzzer found "core:777777776" (minutes and gigabytes before
 * failing), "22252" (four minutes), and, once topsync counted objects with
 * a heuristic, glued or bracketed forms such as "pack[:92l3\x1a1c:422 pu:3"
 * that hwloc read as more levels than the heuristic saw. So topsync accepts
 * exactly what hwloc writes with `lstopo --of synthetic`, and the short
 * forms of the documentation, counts the objects of that parse, and refuses
 * anything else with the position of the first unexpected character:
 *
 *   description := level { blank level }
 *   level       := { memory } [ type ":" ] count [ attributes ]
 *   memory      := "[" type [ attributes ] "]"      one per parent object
 *   type        := letter { letter | digit }       hwloc then checks the name
 *   count       := 1 .. TS_SYNTHETIC_MAX_ARITY
 *   attributes  := "(" attribute { blank attribute } ")"
 *   attribute   := ("memory" | "size") "=" digits { letter }
 *                | "indexes=" { digit | "," | "*" | ":" }   each number
 *                                                  <= TS_SYNTHETIC_MAX_INDEX
 *
 * The limits: at most TS_SYNTHETIC_MAX_OBJECTS objects in all (8 packages
 * of 512 PUs fit) and PU/NUMA indexes below TS_SYNTHETIC_MAX_INDEX (each
 * object's cpuset is a bitmap as wide as the largest index).
 */
#define TS_SYNTHETIC_MAX_OBJECTS 8192
#define TS_SYNTHETIC_MAX_ARITY 1024
#define TS_SYNTHETIC_MAX_INDEX 65535

struct synthetic_scan {
    const char *start, *at;
};

/* Every refusal names the description (its first 64 characters), then why. */
static int synthetic_fail(const struct synthetic_scan *s, const char *why)
{
    return ts_fail(EINVAL, "synthetic topology '%.64s%s'%s", s->start,
                   strlen(s->start) > 64 ? "..." : "", why);
}

static int synthetic_refuse(const struct synthetic_scan *s, const char *what)
{
    char why[384];
    snprintf(why, sizeof why,
             ": %s at character %zu; expected levels 'TYPE:COUNT' separated by spaces, e.g. "
             "'pack:2 numa:2 l3:1 core:32 pu:1' (attributes '(memory=|size=|indexes=...)' and "
             "'[NUMANode]' as lstopo --of synthetic writes them)",
             what, (size_t)(s->at - s->start) + 1);
    return synthetic_fail(s, why);
}

static int synthetic_too_large(const struct synthetic_scan *s)
{
    char why[192];
    snprintf(why, sizeof why,
             " is too large: more than %d objects, or a level of more than %d (limits of "
             "topsync: hwloc would build every object)",
             TS_SYNTHETIC_MAX_OBJECTS, TS_SYNTHETIC_MAX_ARITY);
    return synthetic_fail(s, why);
}

static int synthetic_rule(const struct synthetic_scan *s, const char *rule)
{
    char why[160];
    snprintf(why, sizeof why, ": %s", rule);
    return synthetic_fail(s, why);
}

static bool scan_number(struct synthetic_scan *s, unsigned long long limit,
                        unsigned long long *value)
{
    if (!isdigit((unsigned char)*s->at))
        return false;
    unsigned long long v = 0;
    for (; isdigit((unsigned char)*s->at); s->at++) {
        unsigned digit = (unsigned)(*s->at - '0');
        if (v > (limit - digit) / 10)
            v = limit; /* saturate: "too large" is all the caller needs */
        else
            v = v * 10 + digit;
    }
    *value = v;
    return true;
}

static int scan_attributes(struct synthetic_scan *s)
{
    s->at++; /* '(' */
    for (;;) {
        while (*s->at == ' ' || *s->at == '\t')
            s->at++;
        if (*s->at == ')') {
            s->at++;
            return 0;
        }
        unsigned long long v;
        if (!strncasecmp(s->at, "memory=", 7) || !strncasecmp(s->at, "size=", 5)) {
            s->at = strchr(s->at, '=') + 1;
            if (!scan_number(s, ULLONG_MAX, &v))
                return synthetic_refuse(s, "a size must be a number");
            while (isalpha((unsigned char)*s->at))
                s->at++; /* unit: kB, MiB, GB... (hwloc checks it) */
        } else if (!strncasecmp(s->at, "indexes=", 8)) {
            s->at += 8;
            while (isdigit((unsigned char)*s->at) || *s->at == ',' || *s->at == '*' ||
                   *s->at == ':') {
                if (isdigit((unsigned char)*s->at)) {
                    scan_number(s, TS_SYNTHETIC_MAX_INDEX + 1ULL, &v);
                    if (v > TS_SYNTHETIC_MAX_INDEX)
                        return synthetic_refuse(s, "an index above 65535");
                } else {
                    s->at++;
                }
            }
        } else {
            return synthetic_refuse(s, *s->at ? "an unknown attribute (valid: memory=, size=, "
                                                "indexes=)"
                                              : "an unclosed '('");
        }
        if (*s->at != ' ' && *s->at != '\t' && *s->at != ')')
            return synthetic_refuse(s, *s->at ? "an unexpected character in the attributes"
                                              : "an unclosed '('");
    }
}

static bool scan_type(struct synthetic_scan *s)
{
    if (!isalpha((unsigned char)*s->at))
        return false;
    while (isalnum((unsigned char)*s->at))
        s->at++;
    return true;
}

/*
 * The rules hwloc 2.x checks once it has parsed every level. Checked here
 * first for two reasons: the message can say which rule, and hwloc returns
 * from these checks without freeing what it parsed (its "[NUMANode]" and
 * "(indexes=)" records: 32 bytes and more per refused description, which
 * LeakSanitizer reports in topsync's fuzzer). A type hwloc cannot name is
 * left to hwloc, whose parser refuses it on a path that frees.
 */
static int synthetic_hierarchy_check(const struct synthetic_scan *s, const char *const *types,
                                     unsigned nlevels, unsigned attached_numa)
{
    unsigned count[HWLOC_OBJ_TYPE_MAX] = {0}, bare = 0;
    for (unsigned i = 0; i < nlevels; i++) {
        if (!types[i]) {
            bare += i + 1 < nlevels; /* hwloc does not count the last level */
            continue;
        }
        hwloc_obj_type_t type;
        union hwloc_obj_attr_u attr;
        if (hwloc_type_sscanf(types[i], &type, &attr, sizeof attr) < 0) {
            if (strncmp(types[i], "Tile", 4) && strncmp(types[i], "Module", 6))
                return 0; /* hwloc refuses it, and frees */
            type = HWLOC_OBJ_GROUP; /* as hwloc reads these two */
        }
        if (i + 1 == nlevels && type != HWLOC_OBJ_PU)
            return synthetic_rule(s, "the last level must be PUs (e.g. '... core:4 pu:2')");
        if ((int)type >= 0 && type < HWLOC_OBJ_TYPE_MAX)
            count[type]++;
    }
    static const struct {
        hwloc_obj_type_t type;
        const char *several;
    } unique[] = {{HWLOC_OBJ_PU, "several PU levels"},
                  {HWLOC_OBJ_PACKAGE, "several package levels"},
                  {HWLOC_OBJ_DIE, "several die levels"},
                  {HWLOC_OBJ_NUMANODE, "several NUMA node levels"},
                  {HWLOC_OBJ_CORE, "several core levels"}};
    for (size_t u = 0; u < sizeof unique / sizeof unique[0]; u++)
        if (count[unique[u].type] > 1)
            return synthetic_rule(s, unique[u].several);
    if (count[HWLOC_OBJ_NUMANODE] && attached_numa)
        return synthetic_rule(s, "NUMA nodes both as a level and attached ('[NUMANode]')");
    if (bare && bare != nlevels - 1)
        return synthetic_rule(s, "bare counts mixed with 'TYPE:COUNT' levels (use one form)");
    return 0;
}

#define TS_SYNTHETIC_MAX_LEVELS 64 /* hwloc's limit is 128 */

static int synthetic_check(const char *description)
{
    struct synthetic_scan s = {.start = description, .at = description};
    unsigned long long objects = 0, product = 1; /* objects so far; those of the last level */
    const char *types[TS_SYNTHETIC_MAX_LEVELS]; /* NULL: a bare count */
    unsigned nlevels = 0, attached_numa = 0;
    for (;;) {
        while (*s.at == ' ' || *s.at == '\t' || *s.at == '\n')
            s.at++;
        if (!*s.at)
            break;
        while (*s.at == '[') { /* memory attached to each object of the level above */
            s.at++;
            if (!scan_type(&s))
                return synthetic_refuse(&s, "a memory object type expected after '['");
            int rc = *s.at == '(' ? scan_attributes(&s) : 0;
            if (rc < 0)
                return rc;
            if (*s.at != ']')
                return synthetic_refuse(&s, "']' expected");
            s.at++;
            objects += product;
            attached_numa++;
            if (objects > TS_SYNTHETIC_MAX_OBJECTS)
                return synthetic_too_large(&s);
            while (*s.at == ' ' || *s.at == '\t')
                s.at++;
        }
        const char *level = s.at;
        if (nlevels == TS_SYNTHETIC_MAX_LEVELS)
            return synthetic_refuse(&s, "more than 64 levels");
        types[nlevels] = scan_type(&s) ? level : NULL;
        if (types[nlevels]) {
            if (*s.at != ':')
                return synthetic_refuse(&s, "':' expected after the type");
            s.at++;
        }
        unsigned long long count;
        if (!scan_number(&s, TS_SYNTHETIC_MAX_ARITY + 1ULL, &count)) {
            if (!*s.at && s.at == level)
                break; /* trailing memory objects only */
            return synthetic_refuse(&s, "a count expected");
        }
        if (count == 0)
            return synthetic_refuse(&s, "a level needs at least one object");
        if (count > TS_SYNTHETIC_MAX_ARITY)
            return synthetic_too_large(&s);
        product *= count;
        objects += product;
        if (objects > TS_SYNTHETIC_MAX_OBJECTS)
            return synthetic_too_large(&s);
        nlevels++;
        if (*s.at == '(') {
            int rc = scan_attributes(&s);
            if (rc < 0)
                return rc;
        }
        if (*s.at && *s.at != ' ' && *s.at != '\t' && *s.at != '\n')
            return synthetic_refuse(&s, "a space expected between levels");
    }
    if (!nlevels)
        return synthetic_refuse(&s, "no level");
    return synthetic_hierarchy_check(&s, types, nlevels, attached_numa);
}

static int load_common(topsync_topology_t **out, const char *synthetic, const char *xml)
{
    if (!out)
        return ts_fail(EINVAL, "topsync_topology_load: out is NULL");
    *out = NULL;
    topsync_topology_t *t = calloc(1, sizeof *t);
    if (!t)
        return ts_fail(ENOMEM, "out of memory");
    if (hwloc_topology_init(&t->hwloc) < 0) {
        free(t);
        return ts_fail(ENOMEM, "hwloc_topology_init failed");
    }
    int rc = 0;
    if (synthetic) {
        snprintf(t->source, sizeof t->source, "synthetic: %s", synthetic);
        rc = synthetic_check(synthetic);
        if (rc == 0 && hwloc_topology_set_synthetic(t->hwloc, synthetic) < 0)
            rc = ts_fail(EINVAL,
                         "invalid hwloc synthetic topology '%s' (expected e.g. "
                         "'pack:2 numa:2 l3:1 core:32 pu:1')",
                         synthetic);
    } else if (xml) {
        snprintf(t->source, sizeof t->source, "xml: %s", xml);
        if (hwloc_topology_set_xml(t->hwloc, xml) < 0)
            rc = ts_fail(EINVAL, "cannot use '%s' as an hwloc XML topology", xml);
    } else {
        snprintf(t->source, sizeof t->source, "this machine");
    }
    if (rc == 0 && hwloc_topology_load(t->hwloc) < 0)
        rc = ts_fail(EINVAL, "hwloc could not load the topology (%s)", t->source);
    if (rc == 0)
        rc = finish_load(t);
    if (rc < 0) {
        topsync_topology_destroy(t);
        return rc;
    }
    *out = t;
    return 0;
}

int topsync_topology_load(topsync_topology_t **out)
{
    return load_common(out, NULL, NULL);
}

int topsync_topology_load_synthetic(topsync_topology_t **out, const char *description)
{
    if (out)
        *out = NULL;
    if (!description || !*description)
        return ts_fail(EINVAL, "empty synthetic topology description");
    return load_common(out, description, NULL);
}

int topsync_topology_load_xml(topsync_topology_t **out, const char *path)
{
    if (out)
        *out = NULL;
    if (!path || !*path)
        return ts_fail(EINVAL, "empty XML topology path");
    return load_common(out, NULL, path);
}

void topsync_topology_destroy(topsync_topology_t *t)
{
    if (!t)
        return;
    for (int l = 0; l < TOPSYNC_MAX_LEVELS; l++) {
        for (unsigned i = 0; i < t->levels[l].count; i++)
            hwloc_bitmap_free(t->levels[l].cpusets[i]);
        free(t->levels[l].cpusets);
    }
    if (t->hwloc)
        hwloc_topology_destroy(t->hwloc);
    free(t);
}

hwloc_topology_t topsync_topology_hwloc(const topsync_topology_t *t)
{
    return t ? t->hwloc : NULL;
}

unsigned topsync_topology_ncores(const topsync_topology_t *t)
{
    return t ? t->ncores : 0;
}

size_t topsync_topology_line_size(const topsync_topology_t *t)
{
    return t ? t->line_size : 0;
}

const char *topsync_topology_source(const topsync_topology_t *t)
{
    return t ? t->source : "";
}

int topsync_topology_level_units(const topsync_topology_t *t, topsync_level_t level)
{
    int l = ts_level_index(level);
    if (!t || l < 0)
        return ts_fail(EINVAL, "topsync_topology_level_units: bad topology or level");
    return (int)t->levels[l].count;
}

hwloc_const_cpuset_t topsync_topology_level_unit_cpuset(const topsync_topology_t *t,
                                                        topsync_level_t level, unsigned index)
{
    int l = ts_level_index(level);
    if (!t || l < 0 || index >= t->levels[l].count)
        return NULL;
    return t->levels[l].cpusets[index];
}

static unsigned cores_in(const topsync_topology_t *t, hwloc_const_cpuset_t set)
{
    return (unsigned)hwloc_get_nbobjs_inside_cpuset_by_type(t->hwloc, set, t->core_type);
}

/* Same partition of the cores: same units with the same cpusets. */
static int same_partition(const struct ts_level_units *a, const struct ts_level_units *b)
{
    if (a->count != b->count)
        return 0;
    for (unsigned i = 0; i < a->count; i++) {
        unsigned j;
        for (j = 0; j < b->count; j++)
            if (hwloc_bitmap_isequal(a->cpusets[i], b->cpusets[j]))
                break;
        if (j == b->count)
            return 0;
    }
    return 1;
}

int topsync_topology_active_levels(const topsync_topology_t *t, unsigned mask,
                                   topsync_level_t levels[TOPSYNC_MAX_LEVELS])
{
    if (!t || !levels)
        return ts_fail(EINVAL, "topsync_topology_active_levels: NULL argument");
    if (mask & ~(unsigned)TOPSYNC_LEVELS_ALL)
        return ts_fail(EINVAL, "level mask 0x%x has unknown bits", mask);

    int shared[TOPSYNC_MAX_LEVELS], nshared = 0;
    for (int l = 0; l < TOPSYNC_MAX_LEVELS; l++) {
        const struct ts_level_units *u = &t->levels[l];
        if (!(mask & level_order[l]) || u->count == 0)
            continue;
        int is_shared = 0;
        for (unsigned i = 0; i < u->count && !is_shared; i++)
            is_shared = cores_in(t, u->cpusets[i]) >= 2;
        /* One unit holding every core is the machine: the implicit top. */
        if (u->count == 1 && cores_in(t, u->cpusets[0]) == t->ncores)
            is_shared = 0;
        if (is_shared)
            shared[nshared++] = l;
    }
    int n = 0;
    for (int k = 0; k < nshared; k++) {
        /* A level repeating the next selected one adds nothing: keep the upper. */
        if (k + 1 < nshared &&
            same_partition(&t->levels[shared[k]], &t->levels[shared[k + 1]]))
            continue;
        levels[n++] = level_order[shared[k]];
    }
    return n;
}

/* ---------------------------------------------------------------------- */

static int word_eq(const char *a, size_t len, const char *b)
{
    return strlen(b) == len && strncasecmp(a, b, len) == 0;
}

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
        unsigned bit = 0;
        if (word_eq(p, len, "l2"))
            bit = TOPSYNC_LEVEL_L2;
        else if (word_eq(p, len, "l3"))
            bit = TOPSYNC_LEVEL_L3;
        else if (word_eq(p, len, "numa") || word_eq(p, len, "node") ||
                 word_eq(p, len, "numanode"))
            bit = TOPSYNC_LEVEL_NUMA;
        else if (word_eq(p, len, "socket") || word_eq(p, len, "package") ||
                 word_eq(p, len, "pack"))
            bit = TOPSYNC_LEVEL_PACKAGE;
        else if (word_eq(p, len, "all"))
            bit = TOPSYNC_LEVELS_ALL;
        if (!bit)
            return ts_fail(EINVAL, "unknown level '%.*s' in level list '%s'; valid levels: %s",
                           (int)len, p, list, valid);
        if (m & bit)
            return ts_fail(EINVAL, "level '%.*s' given twice in level list '%s'", (int)len,
                           p, list);
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
    if (!strcasecmp(w, "core"))
        *out = TOPSYNC_MAP_BY_CORE;
    else if (!strcasecmp(w, "numa") || !strcasecmp(w, "node"))
        *out = TOPSYNC_MAP_BY_NUMA;
    else if (!strcasecmp(w, "socket") || !strcasecmp(w, "package"))
        *out = TOPSYNC_MAP_BY_SOCKET;
    else
        return ts_fail(EINVAL, "unknown mapping '%s'; valid: core, numa, socket", w);
    return 0;
}

int topsync_bind_to_parse(const char *w, topsync_bind_to_t *out)
{
    if (!w || !out)
        return ts_fail(EINVAL, "topsync_bind_to_parse: NULL argument");
    if (!strcasecmp(w, "core"))
        *out = TOPSYNC_BIND_TO_CORE;
    else if (!strcasecmp(w, "numa") || !strcasecmp(w, "node"))
        *out = TOPSYNC_BIND_TO_NUMA;
    else if (!strcasecmp(w, "package") || !strcasecmp(w, "socket"))
        *out = TOPSYNC_BIND_TO_PACKAGE;
    else if (!strcasecmp(w, "none"))
        *out = TOPSYNC_BIND_TO_NONE;
    else
        return ts_fail(EINVAL, "unknown binding '%s'; valid: core, numa, package, none", w);
    return 0;
}

/* The k-th core (mod their count) among those inside `set`, in logical order. */
static hwloc_obj_t nth_core_inside(const topsync_topology_t *t, hwloc_const_cpuset_t set,
                                   unsigned k)
{
    unsigned count = cores_in(t, set);
    if (count == 0)
        return NULL;
    return hwloc_get_obj_inside_cpuset_by_type(t->hwloc, set, t->core_type, k % count);
}

/* The unit of `type` containing `core`, or the machine when there is none. */
static hwloc_const_cpuset_t enclosing(const topsync_topology_t *t, hwloc_obj_t core, int l)
{
    const struct ts_level_units *u = &t->levels[l];
    for (unsigned i = 0; i < u->count; i++)
        if (hwloc_bitmap_isincluded(core->cpuset, u->cpusets[i]))
            return u->cpusets[i];
    return hwloc_topology_get_topology_cpuset(t->hwloc);
}

int topsync_placement_compute(const topsync_topology_t *t, unsigned n,
                              topsync_map_by_t map_by, topsync_bind_to_t bind_to,
                              hwloc_bitmap_t *cpusets)
{
    if (!t || !cpusets)
        return ts_fail(EINVAL, "topsync_placement_compute: NULL argument");
    if (n == 0)
        return ts_fail(EINVAL, "topsync_placement_compute: no participants (n = 0)");
    hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(t->hwloc);
    for (unsigned r = 0; r < n; r++) {
        hwloc_obj_t core = NULL;
        int domain_level = -1;
        if (map_by == TOPSYNC_MAP_BY_NUMA)
            domain_level = ts_level_index(TOPSYNC_LEVEL_NUMA);
        else if (map_by == TOPSYNC_MAP_BY_SOCKET)
            domain_level = ts_level_index(TOPSYNC_LEVEL_PACKAGE);
        if (domain_level >= 0 && t->levels[domain_level].count > 0) {
            const struct ts_level_units *u = &t->levels[domain_level];
            core = nth_core_inside(t, u->cpusets[r % u->count], r / u->count);
        } else {
            core = nth_core_inside(t, all, r);
        }
        if (!core) {
            for (unsigned i = 0; i < r; i++)
                hwloc_bitmap_free(cpusets[i]);
            return ts_fail(EINVAL, "cannot place participant %u on this topology", r);
        }
        hwloc_const_cpuset_t set = core->cpuset;
        if (bind_to == TOPSYNC_BIND_TO_NUMA)
            set = enclosing(t, core, ts_level_index(TOPSYNC_LEVEL_NUMA));
        else if (bind_to == TOPSYNC_BIND_TO_PACKAGE)
            set = enclosing(t, core, ts_level_index(TOPSYNC_LEVEL_PACKAGE));
        else if (bind_to == TOPSYNC_BIND_TO_NONE)
            set = all;
        cpusets[r] = hwloc_bitmap_dup(set);
        if (!cpusets[r]) {
            for (unsigned i = 0; i < r; i++)
                hwloc_bitmap_free(cpusets[i]);
            return ts_fail(ENOMEM, "out of memory");
        }
    }
    return 0;
}
