/*
 * The check of an hwloc XML topology before hwloc sees it: one linear pass
 * over the text for what hwloc 2.9 would crash on. docs/design.md section 1.
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
 * XML. hwloc 2.9's loader dereferences a missing root complete_cpuset when a
 * format-2 file has no NUMANode (it then invents one): SIGSEGV in any
 * program that loads such a file, lstopo included. Format 2 always holds
 * NUMA nodes (hwloc writes at least one), so such a file is refused here,
 * before hwloc sees it. topsync reads the file itself and hands hwloc the
 * same bytes it checked.
 */

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

/*
 * The format of a <topology version="..."> as hwloc 2.9 reads it (sscanf
 * "%u.%u"): MAJOR.MINOR is format MAJOR; any other text ("200", "2")
 * leaves hwloc in format 1, and its format-1 rules apply (the fuzzer's find: version="200" with a NUMANode
 * lacking a nodeset, SIGSEGV in hwloc_bitmap_isequal; one lacking a cpuset
 * crashes too).
 */
static int xml_format(const char *v)
{
    /* the attribute's closing quote ends both numbers, as in hwloc */
    unsigned major, minor;
    return sscanf(v, "%u.%u", &major, &minor) == 2 && major < 100 ? (int)major : 1;
}

/*
 * The object types hwloc writes: 2.x's names, and 1.x's System, Socket and
 * Cache. hwloc 2.9 reads a type by a loose prefix match ("Node", "numan"
 * followed by any byte and more: NUMANode), so a NUMANode check that looks
 * for the exact name misses the fuzzer's "NUMAN\x7fde" and hwloc crashes
 * on it; only these names pass.
 */
static bool xml_type_known(const char *v, size_t len)
{
    static const char *const types[] = {
        "Machine", "Package", "Die",      "Core",     "PU",       "L1Cache", "L2Cache",  "L3Cache",
        "L4Cache", "L5Cache", "L1iCache", "L2iCache", "L3iCache", "Group",   "NUMANode", "MemCache",
        "Bridge",  "PCIDev",  "OSDev",    "Misc",     "System",   "Socket",  "Cache"};
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        if (strlen(types[k]) == len && !strncmp(v, types[k], len))
            return true;
    return false;
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
 * checking: at least one NUMANode in format 2, a cpuset and a nodeset on
 * every NUMANode, only object types hwloc writes, and beside every cpuset or
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
int ts_topology_xml_check(const char *text, const char *name)
{
    static const char *const elements[] = {
        "topology", "object",     "page_type",        "info",    "distances",
        "latency",  "distances2", "distances2hetero", "indexes", "u64values",
        "userdata", "memattr",    "memattr_value",    "cpukind", "support"};
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
        int numa_object = 0;
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
                             name, (int)(alen < 32 ? alen : 32), attr, (int)(vlen < 64 ? vlen : 64),
                             value, (size_t)(attr - text));
                goto out;
            }
            static const char *const sets[] = {"cpuset", "complete_cpuset", "nodeset",
                                               "complete_nodeset"};
            for (int k = 0; k < 4; k++)
                has[k] |= strlen(sets[k]) == alen && !strncmp(attr, sets[k], alen);
            if (is_object && alen == 4 && !strncmp(attr, "type", 4)) {
                if (!xml_type_known(value, vlen)) {
                    rc = ts_fail(EINVAL,
                                 "%s: an object of type \"%.*s\" at byte %zu, not a type "
                                 "hwloc writes (hwloc 2.9 reads some such names as another "
                                 "type and may crash)",
                                 name, (int)(vlen < 32 ? vlen : 32), value, (size_t)(tag - text));
                    goto out;
                }
                if (vlen == 8 && !strncmp(value, "NUMANode", 8))
                    numa = numa_object = 1;
            }
            if (is_root && x.depth == 0 && alen == 7 && !strncmp(attr, "version", 7) && vlen) {
                version = value;
                version_len = vlen;
                format = xml_format(value);
            }
        }
        if (numa_object && (!has[0] || !has[2])) {
            rc = ts_fail(EINVAL,
                         "%s: a NUMANode object without a %s at byte %zu (hwloc always "
                         "writes both; hwloc 2.9 crashes loading such a file)",
                         name, has[0] ? "nodeset" : "cpuset", (size_t)(tag - text));
            goto out;
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
        rc = ts_fail(EINVAL,
                     "%s: truncated or not well-formed XML: <%s> is not closed at the "
                     "end of the file",
                     name, x.open[x.depth - 1]);
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
