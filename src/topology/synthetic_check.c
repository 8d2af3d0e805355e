/*
 * The check of an hwloc synthetic description before hwloc sees it: the
 * grammar, sizes and hierarchy hwloc would assert on or take minutes over.
 * docs/design.md section 1.
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
                return 0;           /* hwloc refuses it, and frees */
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

int ts_topology_synthetic_check(const char *description)
{
    struct synthetic_scan s = {.start = description, .at = description};
    unsigned long long objects = 0, product = 1; /* objects so far; those of the last level */
    const char *types[TS_SYNTHETIC_MAX_LEVELS];  /* NULL: a bare count */
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
