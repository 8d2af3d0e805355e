/*
 * Topology: an hwloc topology plus what topsync derives from it once at load
 * time (cores, line size, the cpusets of the units of every candidate level),
 * so that the queries the groups code makes are cheap and never touch sysfs.
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

/* Used when no cache reports a line size (some synthetic/XML topologies):
 * the largest line of common servers (Kunpeng L3, POWER, Apple), so that a
 * missing figure costs memory, never false sharing. */
#define TS_FALLBACK_LINE_SIZE 128

int ts_topology_pu_core(const topsync_topology_t *t, unsigned os_index)
{
    return os_index < t->pu_limit ? t->pu_core[os_index] : -1;
}

int ts_topology_unit_of_set(const topsync_topology_t *t, int l, hwloc_const_cpuset_t set)
{
    const struct ts_level_units *u = &t->levels[l];
    int first = hwloc_bitmap_first(set);
    int core = first < 0 ? -1 : ts_topology_pu_core(t, (unsigned)first);
    int unit = core < 0 ? -1 : u->core_unit[core];
    if (unit < 0 || !hwloc_bitmap_isincluded(set, u->cpusets[unit]))
        return -1;
    return unit;
}

/* The allowed cores, in logical order, and the map from PU to core. */
static int load_cores(topsync_topology_t *t)
{
    hwloc_topology_t h = t->hwloc;
    hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(h);
    t->core_type = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE
                                                                  : HWLOC_OBJ_PU;
    int nobjs = hwloc_get_nbobjs_by_type(h, t->core_type);
    int last = hwloc_bitmap_last(hwloc_topology_get_complete_cpuset(h));
    if (nobjs <= 0 || last < 0)
        return ts_fail(EINVAL, "topology %s has no cores or PUs", t->source);
    t->pu_limit = (unsigned)last + 1;
    t->cores = calloc((size_t)nobjs, sizeof *t->cores);
    t->core_sets = calloc((size_t)nobjs, sizeof *t->core_sets);
    t->pu_core = malloc(t->pu_limit * sizeof *t->pu_core);
    t->allowed = hwloc_bitmap_alloc();
    if (!t->cores || !t->core_sets || !t->pu_core || !t->allowed)
        return ts_fail(ENOMEM, "out of memory loading the topology");
    for (unsigned i = 0; i < t->pu_limit; i++)
        t->pu_core[i] = -1;
    unsigned n = 0;
    for (int i = 0; i < nobjs; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(h, t->core_type, (unsigned)i);
        if (!o->cpuset || !hwloc_bitmap_intersects(o->cpuset, allowed))
            continue; /* offline or disallowed: no participant may go there */
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        if (!set)
            return ts_fail(ENOMEM, "out of memory loading the topology");
        hwloc_bitmap_and(set, o->cpuset, allowed);
        t->cores[n] = o;
        t->core_sets[n] = set;
        hwloc_bitmap_or(t->allowed, t->allowed, set);
        int pu;
        hwloc_bitmap_foreach_begin(pu, set)
            if ((unsigned)pu < t->pu_limit)
                t->pu_core[pu] = (int)n;
        hwloc_bitmap_foreach_end();
        n++;
    }
    if (n == 0)
        return ts_fail(EINVAL, "topology %s has no allowed core", t->source);
    t->ncores = n;
    return 0;
}

struct weighted_obj {
    hwloc_obj_t obj;
    unsigned cores;
};

static int by_cores_then_index(const void *a, const void *b)
{
    const struct weighted_obj *x = a, *y = b;
    if (x->cores != y->cores)
        return x->cores < y->cores ? -1 : 1;
    return x->obj->logical_index < y->obj->logical_index ? -1
           : x->obj->logical_index > y->obj->logical_index;
}

/*
 * Units: every core goes to the smallest object of the level's type that
 * holds it (ties: the lowest logical index), so that twins with the same
 * cores (MCDRAM beside DDR) are one unit, a root-attached node keeps only
 * the cores no smaller node holds, and coreless nodes are no unit at all.
 * The result is a partition of the cores that some object holds, each unit
 * inside one object. O(objects log objects + PUs).
 */
static int load_level_units(topsync_topology_t *t, int l)
{
    hwloc_topology_t h = t->hwloc;
    struct ts_level_units *u = &t->levels[l];
    int nb = hwloc_get_nbobjs_by_type(h, ts_level_type(l));
    u->core_unit = malloc(t->ncores * sizeof *u->core_unit);
    if (!u->core_unit)
        return ts_fail(ENOMEM, "out of memory loading the topology");
    for (unsigned c = 0; c < t->ncores; c++)
        u->core_unit[c] = -1;
    if (nb <= 0)
        return 0;
    struct weighted_obj *objs = calloc((size_t)nb, sizeof *objs);
    int *obj_unit = malloc((size_t)nb * sizeof *obj_unit);
    u->cpusets = calloc((size_t)nb, sizeof *u->cpusets);
    if (!objs || !obj_unit || !u->cpusets) {
        free(objs);
        free(obj_unit);
        return ts_fail(ENOMEM, "out of memory loading the topology");
    }
    for (int i = 0; i < nb; i++) {
        objs[i].obj = hwloc_get_obj_by_type(h, ts_level_type(l), (unsigned)i);
        objs[i].cores = objs[i].obj->cpuset
                            ? (unsigned)hwloc_bitmap_weight(objs[i].obj->cpuset) : 0;
        obj_unit[i] = -1;
    }
    qsort(objs, (size_t)nb, sizeof *objs, by_cores_then_index);
    /* Assign cores to the smallest objects first; remember who got any. */
    int *claimed_by = malloc(t->ncores * sizeof *claimed_by);
    if (!claimed_by) {
        free(objs);
        free(obj_unit);
        return ts_fail(ENOMEM, "out of memory loading the topology");
    }
    for (unsigned c = 0; c < t->ncores; c++)
        claimed_by[c] = -1;
    for (int k = 0; k < nb; k++) {
        hwloc_obj_t o = objs[k].obj;
        if (!o->cpuset)
            continue;
        int pu;
        hwloc_bitmap_foreach_begin(pu, o->cpuset)
            int core = ts_topology_pu_core(t, (unsigned)pu);
            /* a core belongs to an object only when all of its PUs do */
            if (core >= 0 && claimed_by[core] < 0 &&
                hwloc_bitmap_isincluded(t->core_sets[core], o->cpuset))
                claimed_by[core] = (int)o->logical_index;
        hwloc_bitmap_foreach_end();
    }
    /* Number the units in the objects' logical order. */
    for (unsigned c = 0; c < t->ncores; c++)
        if (claimed_by[c] >= 0)
            obj_unit[claimed_by[c]] = 0;
    for (int i = 0; i < nb; i++)
        if (obj_unit[i] == 0)
            obj_unit[i] = (int)u->count++ + 1; /* 1-based while marking */
    unsigned *sizes = calloc(u->count ? u->count : 1, sizeof *sizes);
    int rc = sizes ? 0 : ts_fail(ENOMEM, "out of memory loading the topology");
    for (unsigned k = 0; k < u->count && rc == 0; k++)
        if (!(u->cpusets[k] = hwloc_bitmap_alloc()))
            rc = ts_fail(ENOMEM, "out of memory loading the topology");
    for (unsigned c = 0; c < t->ncores && rc == 0; c++) {
        if (claimed_by[c] < 0)
            continue;
        int unit = obj_unit[claimed_by[c]] - 1;
        u->core_unit[c] = unit;
        hwloc_bitmap_or(u->cpusets[unit], u->cpusets[unit], t->core_sets[c]);
        if (++sizes[unit] > u->max_unit_cores)
            u->max_unit_cores = sizes[unit];
    }
    free(sizes);
    free(claimed_by);
    free(objs);
    free(obj_unit);
    return rc;
}

/*
 * The machine's fingerprint (topsync_tuning_fingerprint, tune.h): FNV-1a
 * over hwloc's tree depth first: each object's type, OS index and number of
 * children (normal and memory), each cache's size and line size, the CPU
 * model hwloc reports, and the root's complete cpuset (CPUs offline
 * included). The tree's shape with its PUs' OS indexes says which PUs each
 * object holds, so the objects' own cpusets add nothing: leaving them out
 * keeps a 32768-PU machine at milliseconds. Memory sizes and the allowed
 * CPUs are left out: they change with boots and jobs, not with the machine.
 */
static uint64_t hash_object(uint64_t h, hwloc_obj_t o)
{
    if (o->type == HWLOC_OBJ_MISC || hwloc_obj_type_is_io(o->type))
        return h;
    char buf[160];
    int len = snprintf(buf, sizeof buf, "%s:%d:%u:%u", hwloc_obj_type_string(o->type),
                       o->os_index == HWLOC_UNKNOWN_INDEX ? -1 : (int)o->os_index, o->arity,
                       o->memory_arity);
    if (hwloc_obj_type_is_cache(o->type) && o->attr && len > 0 && (size_t)len < sizeof buf)
        snprintf(buf + len, sizeof buf - (size_t)len, ":%llu:%u",
                 (unsigned long long)o->attr->cache.size, o->attr->cache.linesize);
    h = ts_fnv1a(h, buf);
    const char *model = hwloc_obj_get_info_by_name(o, "CPUModel");
    if (model)
        h = ts_fnv1a(ts_fnv1a(h, ":"), model);
    h = ts_fnv1a(h, ";");
    for (hwloc_obj_t c = o->memory_first_child; c; c = c->next_sibling)
        h = hash_object(h, c);
    for (hwloc_obj_t c = o->first_child; c; c = c->next_sibling)
        h = hash_object(h, c);
    return h;
}

static int fingerprint(topsync_topology_t *t)
{
    hwloc_obj_t root = hwloc_get_root_obj(t->hwloc);
    uint64_t h = hash_object(TS_FNV1A_OFFSET, root);
    char *set = NULL;
    if (hwloc_bitmap_asprintf(&set, hwloc_topology_get_complete_cpuset(t->hwloc)) < 0)
        return ts_fail(ENOMEM, "out of memory loading the topology");
    h = ts_fnv1a(h, set);
    free(set);
    snprintf(t->fingerprint, sizeof t->fingerprint, "%016llx", (unsigned long long)h);
    return 0;
}

static int finish_load(topsync_topology_t *t)
{
    hwloc_topology_t h = t->hwloc;
    int rc = load_cores(t);
    if (rc < 0)
        return rc;

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

    for (int l = 0; l < TOPSYNC_MAX_LEVELS; l++)
        if ((rc = load_level_units(t, l)) < 0)
            return rc;
    return fingerprint(t);
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
            /* hwloc reads a bare last level as the PUs, and does not count
             * it as a bare level ("pack:2 pu:2 [numa]2": several PU levels,
             * on a path that leaks the [numa]; found by the fuzzer) */
            if (i + 1 == nlevels)
                count[HWLOC_OBJ_PU]++;
            else
                bare++;
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

/*
 * XML. hwloc 2.9's loader dereferences a missing root complete_cpuset when a
 * format-2 file has no NUMANode (it then invents one): SIGSEGV in any
 * program that loads such a file, lstopo included. Format 2 always holds
 * NUMA nodes (hwloc writes at least one), so such a file is refused here,
 * before hwloc sees it. topsync reads the file itself and hands hwloc the
 * same bytes it checked.
 */
#define TS_XML_MAX_BYTES (256u << 20)

/*
 * A cpuset or nodeset value as hwloc writes it: comma-separated words, the
 * first "0xf...f" or "0x" and hex digits, the others the same or empty
 * ("0x00000001,,0x0"). hwloc 2.9's hwloc_bitmap_sscanf asserts, aborting
 * the program, on a value that begins with a comma and goes on (found by
 * the fuzzer: complete_nodeset=",x1"); every other form hwloc does not
 * write is refused with it.
 */
static bool xml_bitmap_ok(const char *v, size_t len)
{
    const char *end = v + len;
    for (int first = 1;; first = 0) {
        const char *comma = memchr(v, ',', (size_t)(end - v));
        const char *word_end = comma ? comma : end;
        size_t n = (size_t)(word_end - v);
        int ok = n == 0 ? !first : n == 7 && first && !strncmp(v, "0xf...f", 7);
        if (!ok && n > 2 && v[0] == '0' && v[1] == 'x') {
            ok = 1;
            for (const char *c = v + 2; c < word_end; c++)
                ok &= isxdigit((unsigned char)*c) != 0;
        }
        if (!ok)
            return false;
        if (!comma)
            return true;
        v = comma + 1;
    }
}

/* One scan of the text, each byte visited a bounded number of times. */
struct xml_scan {
    const char *text, *p, *name;
    const char **open; /* names of the elements open at p */
    size_t depth, cap;
};

static int xml_malformed(const struct xml_scan *x, const char *at, const char *what)
{
    return ts_fail(EINVAL, "%s: truncated or not well-formed XML: %s at byte %zu", x->name, what,
                   (size_t)(at - x->text));
}

static size_t xml_name_len(const char *p)
{
    return strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:");
}

/* Skip markup that is not an element: <?...?>, <!--...-->, <![CDATA[...]]>, <!...>. */
static int xml_skip_special(struct xml_scan *x)
{
    const char *p = x->p, *close;
    if (p[1] == '?')
        close = strstr(p + 2, "?>"), close = close ? close + 2 : NULL;
    else if (!strncmp(p, "<!--", 4))
        close = strstr(p + 4, "-->"), close = close ? close + 3 : NULL;
    else if (!strncmp(p, "<![CDATA[", 9))
        close = strstr(p + 9, "]]>"), close = close ? close + 3 : NULL;
    else
        close = strchr(p, '>'), close = close ? close + 1 : NULL;
    if (!close)
        return xml_malformed(x, p, "markup not closed");
    x->p = close;
    return 0;
}

/*
 * What hwloc's own export always writes and 2.9's loader relies on without
 * checking: at least one NUMANode in format 2, and beside every cpuset or
 * nodeset attribute of an object its complete_ counterpart (a PU without
 * complete_cpuset, or a NUMANode without complete_nodeset: SIGSEGV); in
 * format 1, a nodeset on the root object when any object has one (the
 * fuzzer's find: a NUMANode's nodeset under a root without one, SIGSEGV
 * in hwloc_insert_object_by_parent, lstopo included); only
 * elements hwloc writes (on any other, 2.9's importer fails and leaks the
 * object it was reading: found by the fuzzer); cpuset and nodeset values
 * as hwloc writes them. Comments and other non-element markup are skipped,
 * and the elements must nest and close: a truncated file is said to be one.
 * Linear in the size of the text.
 */
static int xml_check(const char *text, const char *name)
{
    static const char *const elements[] = {
        "topology", "object", "page_type", "info", "distances", "latency", "distances2",
        "distances2hetero", "indexes", "u64values", "userdata", "memattr", "memattr_value",
        "cpukind", "support"};
    struct xml_scan x = {.text = text, .p = text, .name = name};
    int rc = 0, numa = 0, roots = 0, format = 1;
    int any_nodeset = 0, root_object_nodeset = -1; /* -1: no object yet */
    const char *version = "1";
    size_t version_len = 1;
    while (rc == 0 && (x.p = strchr(x.p, '<')) != NULL) {
        const char *tag = x.p;
        if (tag[1] == '?' || tag[1] == '!') {
            rc = xml_skip_special(&x);
            continue;
        }
        if (tag[1] == '/') { /* a closing tag: it must close the innermost open element */
            size_t n = xml_name_len(tag + 2);
            const char *close = tag + 2 + n;
            while (isspace((unsigned char)*close))
                close++;
            if (*close != '>')
                rc = xml_malformed(&x, tag, "a closing tag not closed");
            else if (x.depth == 0 || strlen(x.open[x.depth - 1]) != n ||
                     strncmp(x.open[x.depth - 1], tag + 2, n))
                rc = xml_malformed(&x, tag, "a closing tag that matches no open element");
            else
                x.depth--;
            x.p = close + 1;
            continue;
        }
        size_t n = xml_name_len(tag + 1);
        const char *element = NULL;
        for (size_t k = 0; k < sizeof elements / sizeof elements[0] && !element; k++)
            if (strlen(elements[k]) == n && !strncmp(tag + 1, elements[k], n))
                element = elements[k];
        if (!element) {
            if (n == 0) {
                rc = xml_malformed(&x, tag, "a '<' that opens no element");
                goto out;
            }
            rc = ts_fail(EINVAL,
                         "%s: element <%.*s> at byte %zu is not one hwloc writes (hwloc 2.9 "
                         "fails on it and leaks)",
                         name, (int)(n < 32 ? n : 32), tag + 1, (size_t)(tag - text));
            goto out;
        }
        if (x.depth == 0 && roots++) {
            rc = xml_malformed(&x, tag, "a second root element");
            goto out;
        }
        if (x.depth == 0 && strcmp(element, "topology")) {
            rc = ts_fail(EINVAL, "%s is not an hwloc XML topology (its root is <%s>)", name,
                         element);
            goto out;
        }
        int is_object = !strcmp(element, "object"), is_root = !strcmp(element, "topology");
        int has[4] = {0}; /* cpuset, complete_cpuset, nodeset, complete_nodeset */
        /* the attributes, each once: name = "value" */
        const char *p = tag + 1 + n;
        for (;;) {
            const char *ws = p;
            while (isspace((unsigned char)*p))
                p++;
            if (*p == '>' || (p[0] == '/' && p[1] == '>'))
                break;
            size_t alen = xml_name_len(p);
            if (!*p) {
                rc = xml_malformed(&x, tag, "a tag not closed");
                goto out;
            }
            if (!alen || ws == p) {
                rc = xml_malformed(&x, p, "not an attribute");
                goto out;
            }
            const char *attr = p;
            p += alen;
            while (isspace((unsigned char)*p))
                p++;
            if (*p != '=') {
                rc = xml_malformed(&x, attr, "an attribute without a value");
                goto out;
            }
            p++;
            while (isspace((unsigned char)*p))
                p++;
            if (*p != '"' && *p != '\'') {
                rc = xml_malformed(&x, attr, "an attribute value not quoted");
                goto out;
            }
            const char *value = p + 1, *close = strchr(value, *p);
            if (!close) {
                rc = xml_malformed(&x, attr, "an attribute value not closed");
                goto out;
            }
            size_t vlen = (size_t)(close - value);
            p = close + 1;
            int is_set = (alen >= 6 && !strncmp(attr + alen - 6, "cpuset", 6)) ||
                         (alen >= 7 && !strncmp(attr + alen - 7, "nodeset", 7));
            if (is_set && !xml_bitmap_ok(value, vlen)) {
                rc = ts_fail(EINVAL,
                               "%s: %.*s=\"%.*s\" at byte %zu is not a bitmap as hwloc writes "
                               "one (0x words separated by commas; hwloc 2.9 aborts on some "
                               "others)",
                               name, (int)(alen < 32 ? alen : 32), attr,
                             (int)(vlen < 64 ? vlen : 64), value, (size_t)(attr - text));
                goto out;
            }
            static const char *const sets[] = {"cpuset", "complete_cpuset", "nodeset",
                                               "complete_nodeset"};
            for (int k = 0; k < 4; k++)
                has[k] |= strlen(sets[k]) == alen && !strncmp(attr, sets[k], alen);
            if (is_object && alen == 4 && !strncmp(attr, "type", 4) && vlen == 8 &&
                !strncmp(value, "NUMANode", 8))
                numa = 1;
            if (is_root && x.depth == 0 && alen == 7 && !strncmp(attr, "version", 7) && vlen) {
                version = value;
                version_len = vlen;
                format = value[0] - '0';
            }
        }
        any_nodeset |= has[2];
        if (is_object && root_object_nodeset < 0)
            root_object_nodeset = has[2];
        for (int k = 0; is_object && k < 4; k += 2)
            if (has[k] && !has[k + 1]) {
                rc = ts_fail(EINVAL,
                               "%s: an object with a %s but no complete_%s at byte %zu (hwloc "
                               "always writes both; hwloc 2.9 crashes loading such a file)",
                               name, k ? "nodeset" : "cpuset", k ? "nodeset" : "cpuset",
                             (size_t)(tag - text));
                goto out;
            }
        if (*p == '>') { /* an element with content: open until its closing tag */
            if (x.depth == x.cap) {
                size_t cap = x.cap ? x.cap * 2 : 16;
                const char **grown = realloc(x.open, cap * sizeof *grown);
                if (!grown) {
                    rc = ts_fail(ENOMEM, "out of memory checking %s", name);
                    goto out;
                }
                x.open = grown;
                x.cap = cap;
            }
            x.open[x.depth++] = element;
            x.p = p + 1;
        } else {
            x.p = p + 2;
        }
    }
    if (rc == 0 && !roots)
        rc = ts_fail(EINVAL, "%s is not an hwloc XML topology (no <topology> element)", name);
    else if (rc == 0 && x.depth > 0)
        rc = ts_fail(EINVAL, "%s: truncated or not well-formed XML: <%s> is not closed at the "
                     "end of the file", name, x.open[x.depth - 1]);
    else if (rc == 0 && format < 2 && any_nodeset && root_object_nodeset == 0)
        rc = ts_fail(EINVAL,
                     "%s: an hwloc XML topology of format 1 whose root object has no nodeset "
                     "while another object has one (hwloc writes it on the root; hwloc 2.9 "
                     "crashes loading such a file)",
                     name);
    else if (rc == 0 && format >= 2 && !numa)
        rc = ts_fail(EINVAL,
                     "%s: an hwloc XML topology of format %.*s without a NUMANode object "
                     "(hwloc writes at least one; hwloc 2.9 crashes loading such a file)",
                     name, (int)version_len, version);
out:
    free(x.open);
    return rc;
}

static int read_xml_file(const char *path, char **text, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return ts_fail(EINVAL, "cannot use '%s' as an hwloc XML topology: %s", path,
                       strerror(errno));
    /* one allocation of the file's size (plus one, to see it end) */
    size_t cap = 1 << 16, n = 0;
    if (fseek(f, 0, SEEK_END) == 0) {
        long end = ftell(f);
        if (end > 0 && (unsigned long)end < TS_XML_MAX_BYTES)
            cap = (size_t)end + 1;
        rewind(f);
    }
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        if (cap >= TS_XML_MAX_BYTES) {
            free(buf);
            fclose(f);
            return ts_fail(EINVAL, "'%s': an XML topology larger than %u MiB", path,
                           TS_XML_MAX_BYTES >> 20);
        }
        char *bigger = realloc(buf, cap * 2 + 1);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    int err = ferror(f);
    fclose(f);
    if (!buf)
        return ts_fail(ENOMEM, "out of memory reading '%s'", path);
    if (err) {
        free(buf);
        return ts_fail(EINVAL, "cannot read '%s'", path);
    }
    buf[n] = '\0';
    *text = buf;
    *size = n;
    return 0;
}

static int load_common(topsync_topology_t **out, const char *synthetic, const char *xml_name,
                       const char *xml_text, size_t xml_size)
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
    } else if (xml_text) {
        snprintf(t->source, sizeof t->source, "xml: %s", xml_name);
        rc = xml_check(xml_text, xml_name);
        if (rc == 0 && (xml_size >= INT_MAX ||
                        hwloc_topology_set_xmlbuffer(t->hwloc, xml_text, (int)xml_size + 1) < 0))
            rc = ts_fail(EINVAL, "cannot use %s as an hwloc XML topology", xml_name);
    } else {
        /* hwloc obeys these variables in place of discovery: check what they
         * name as topsync's own loaders would, and say where it came from */
        snprintf(t->source, sizeof t->source, "this machine");
        const char *env_xml = getenv("HWLOC_XMLFILE"), *env_syn = getenv("HWLOC_SYNTHETIC");
        if (env_syn && *env_syn) {
            snprintf(t->source, sizeof t->source, "synthetic: %s (HWLOC_SYNTHETIC)", env_syn);
            rc = synthetic_check(env_syn);
        } else if (env_xml && *env_xml) {
            snprintf(t->source, sizeof t->source, "xml: %s (HWLOC_XMLFILE)", env_xml);
            char *text = NULL;
            size_t size = 0;
            rc = read_xml_file(env_xml, &text, &size);
            if (rc == 0)
                rc = xml_check(text, env_xml);
            free(text);
        }
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
    return load_common(out, NULL, NULL, NULL, 0);
}

int topsync_topology_load_synthetic(topsync_topology_t **out, const char *description)
{
    if (out)
        *out = NULL;
    if (!description || !*description)
        return ts_fail(EINVAL, "empty synthetic topology description");
    return load_common(out, description, NULL, NULL, 0);
}

int topsync_topology_load_xml(topsync_topology_t **out, const char *path)
{
    if (out)
        *out = NULL;
    if (!path || !*path)
        return ts_fail(EINVAL, "empty XML topology path");
    char *text = NULL;
    size_t size = 0;
    int rc = read_xml_file(path, &text, &size);
    if (rc < 0)
        return rc;
    rc = load_common(out, NULL, path, text, size);
    free(text);
    return rc;
}

int topsync_topology_load_xml_buffer(topsync_topology_t **out, const char *buffer, size_t size)
{
    if (out)
        *out = NULL;
    if (!buffer || size == 0)
        return ts_fail(EINVAL, "empty XML topology buffer");
    if (size > TS_XML_MAX_BYTES)
        return ts_fail(EINVAL, "an XML topology larger than %u MiB", TS_XML_MAX_BYTES >> 20);
    char *text = malloc(size + 1); /* hwloc and the check want it NUL-terminated */
    if (!text)
        return ts_fail(ENOMEM, "out of memory");
    memcpy(text, buffer, size);
    text[size] = '\0';
    int rc = load_common(out, NULL, "(buffer)", text, strlen(text));
    free(text);
    return rc;
}

void topsync_topology_destroy(topsync_topology_t *t)
{
    if (!t)
        return;
    for (int l = 0; l < TOPSYNC_MAX_LEVELS; l++) {
        for (unsigned i = 0; i < t->levels[l].count; i++)
            hwloc_bitmap_free(t->levels[l].cpusets[i]);
        free(t->levels[l].cpusets);
        free(t->levels[l].core_unit);
    }
    if (t->core_sets)
        for (unsigned i = 0; i < t->ncores; i++)
            hwloc_bitmap_free(t->core_sets[i]);
    free(t->core_sets);
    free(t->cores);
    free(t->pu_core);
    hwloc_bitmap_free(t->allowed);
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

/* Every core is a point: the machine-wide order of the selected levels. */
static int machine_levels(const topsync_topology_t *t, unsigned mask,
                          topsync_level_t levels[TOPSYNC_MAX_LEVELS],
                          topsync_level_note_t notes[TOPSYNC_MAX_LEVELS], unsigned *nnotes)
{
    if (!t || !levels)
        return ts_fail(EINVAL, "topsync_topology_active_levels: NULL argument");
    if (mask & ~(unsigned)TOPSYNC_LEVELS_ALL)
        return ts_fail(EINVAL, "level mask 0x%x has unknown bits", mask);
    int *unit_of = malloc((size_t)TOPSYNC_MAX_LEVELS * t->ncores * sizeof *unit_of);
    if (!unit_of)
        return ts_fail(ENOMEM, "out of memory");
    for (int l = 0; l < TOPSYNC_MAX_LEVELS; l++)
        memcpy(unit_of + (size_t)l * t->ncores, t->levels[l].core_unit,
               t->ncores * sizeof *unit_of);
    int n = ts_levels_order(t, mask, t->ncores, unit_of, levels, notes, nnotes);
    free(unit_of);
    return n;
}

int topsync_topology_active_levels(const topsync_topology_t *t, unsigned mask,
                                   topsync_level_t levels[TOPSYNC_MAX_LEVELS])
{
    topsync_level_note_t notes[TOPSYNC_MAX_LEVELS];
    unsigned nnotes;
    return machine_levels(t, mask, levels, notes, &nnotes);
}

int topsync_topology_level_notes(const topsync_topology_t *t, unsigned mask,
                                 topsync_level_note_t notes[TOPSYNC_MAX_LEVELS])
{
    topsync_level_t levels[TOPSYNC_MAX_LEVELS];
    unsigned nnotes = 0;
    if (!notes)
        return ts_fail(EINVAL, "topsync_topology_level_notes: NULL argument");
    int rc = machine_levels(t, mask, levels, notes, &nnotes);
    return rc < 0 ? rc : (int)nnotes;
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
    if (!strcasecmp(w, "node"))
        return ts_fail(EINVAL, "mapping 'node' is ambiguous (mpirun's --map-by node spreads "
                               "ranks across hosts): say numa for NUMA nodes; valid: core, "
                               "numa, socket");
    if (!strcasecmp(w, "core"))
        *out = TOPSYNC_MAP_BY_CORE;
    else if (!strcasecmp(w, "numa"))
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
    if (!strcasecmp(w, "node"))
        return ts_fail(EINVAL, "binding 'node' is ambiguous (to mpirun a node is a host): say "
                               "numa for a NUMA node; valid: core, numa, package, none");
    if (!strcasecmp(w, "core"))
        *out = TOPSYNC_BIND_TO_CORE;
    else if (!strcasecmp(w, "numa"))
        *out = TOPSYNC_BIND_TO_NUMA;
    else if (!strcasecmp(w, "package") || !strcasecmp(w, "socket"))
        *out = TOPSYNC_BIND_TO_PACKAGE;
    else if (!strcasecmp(w, "none"))
        *out = TOPSYNC_BIND_TO_NONE;
    else
        return ts_fail(EINVAL, "unknown binding '%s'; valid: core, numa, package, none", w);
    return 0;
}
