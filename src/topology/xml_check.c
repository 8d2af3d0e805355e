/*
 * The check of an hwloc XML topology before hwloc sees it: one linear pass
 * over the text for what hwloc 2.9 would crash on. docs/design.md section 1.
 */
#include "topology/topology_private.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
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

/* Whether the len bytes at s are exactly `word` (names and values in the
 * text are not NUL-terminated). */
static bool xml_is(const char *s, size_t len, const char *word)
{
    return strlen(word) == len && !strncmp(s, word, len);
}

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
        if (xml_is(v, len, types[k]))
            return true;
    return false;
}

/*
 * The attributes hwloc writes on each element: its 2.x DTD (hwloc2.dtd),
 * its 1.x DTD (online_cpuset, os_level, huge_page_*, relative_depth,
 * latency_base, value) and what the 46 real machines' files hold. With
 * hwloc-plugins installed hwloc reads through libxml2, which resolves what
 * this scan does not model (a namespaced "x:type" reaches hwloc as
 * "type", DTD defaults add attributes): a name outside this list is
 * refused, and so, with each allowed at most once, is an element with
 * 131072 attributes that libxml2 takes a minute over (issue 37 items 1, 3).
 */
struct xml_attributes {
    const char *element;
    const char *const *names;
};
static const char *const object_attributes[] = {"type",
                                                "subtype",
                                                "os_index",
                                                "id",
                                                "gp_index",
                                                "name",
                                                "local_memory",
                                                "cache_size",
                                                "cache_linesize",
                                                "cache_associativity",
                                                "cache_type",
                                                "cpuset",
                                                "complete_cpuset",
                                                "allowed_cpuset",
                                                "online_cpuset",
                                                "nodeset",
                                                "complete_nodeset",
                                                "allowed_nodeset",
                                                "depth",
                                                "kind",
                                                "subkind",
                                                "dont_merge",
                                                "bridge_type",
                                                "bridge_pci",
                                                "pci_busid",
                                                "pci_type",
                                                "pci_link_speed",
                                                "osdev_type",
                                                "os_level",
                                                "huge_page_size_kB",
                                                "huge_page_free",
                                                NULL};
static const char *const topology_attributes[] = {"version", NULL};
static const char *const name_value[] = {"name", "value", NULL};
static const char *const page_type_attributes[] = {"size", "count", NULL};
static const char *const distances2_attributes[] = {"type", "nbobjs", "indexing",
                                                    "kind", "name",   NULL};
static const char *const distances2hetero_attributes[] = {"nbobjs", "kind", "name", NULL};
static const char *const distances_attributes[] = {"nbobjs", "relative_depth", "latency_base",
                                                   NULL};
static const char *const value_only[] = {"value", NULL};
static const char *const length_only[] = {"length", NULL};
static const char *const userdata_attributes[] = {"name", "length", "encoding", NULL};
static const char *const memattr_attributes[] = {"name", "flags", NULL};
static const char *const memattr_value_attributes[] = {
    "target_obj_gp_index",    "target_obj_type",    "value", "initiator_cpuset",
    "initiator_obj_gp_index", "initiator_obj_type", NULL};
static const char *const cpukind_attributes[] = {"cpuset", "forced_efficiency", NULL};
static const struct xml_attributes xml_allowed[] = {
    {"topology", topology_attributes},
    {"object", object_attributes},
    {"page_type", page_type_attributes},
    {"info", name_value},
    {"distances", distances_attributes},
    {"latency", value_only},
    {"distances2", distances2_attributes},
    {"distances2hetero", distances2hetero_attributes},
    {"indexes", length_only},
    {"u64values", length_only},
    {"userdata", userdata_attributes},
    {"memattr", memattr_attributes},
    {"memattr_value", memattr_value_attributes},
    {"cpukind", cpukind_attributes},
    {"support", name_value},
};

/* The index of attribute `attr` among those hwloc writes on `element`, or -1. */
static int xml_attribute_index(const char *element, const char *attr, size_t len)
{
    for (size_t e = 0; e < sizeof xml_allowed / sizeof xml_allowed[0]; e++) {
        if (strcmp(xml_allowed[e].element, element))
            continue;
        for (int k = 0; xml_allowed[e].names[k]; k++)
            if (xml_is(attr, len, xml_allowed[e].names[k]))
                return k;
        return -1;
    }
    return -1;
}

/* Attributes whose value is free text, where hwloc escapes with &amp; and
 * the like; anywhere else an entity or character reference is a value
 * libxml2 would decode and this scan would not (version="&#50;.0"). */
static bool xml_text_attribute(const char *attr, size_t len)
{
    return (xml_is(attr, len, "name")) || (xml_is(attr, len, "value")) ||
           (xml_is(attr, len, "subtype"));
}

/* os_index of a PU or NUMANode: decimal, and small enough that hwloc's
 * bitmaps indexed by it stay small (os_index="4294967295" took 1.6 GB and
 * 14 s; Linux's NR_CPUS is at most 8192). */
#define XML_MAX_OS_INDEX 1048575u

/* Elements whose content is text (the others hold only elements). */
static bool xml_text_content(const char *element)
{
    return !strcmp(element, "indexes") || !strcmp(element, "u64values") ||
           !strcmp(element, "userdata");
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
    return strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.");
}

/* Skip markup that is not an element and that the scan lets through
 * (outside <topology>): <?...?>, <!--...-->, <!DOCTYPE ...>. */
static int xml_skip_special(struct xml_scan *x)
{
    const char *p = x->p, *close;
    if (p[1] == '?')
        close = strstr(p + 2, "?>"), close = close ? close + 2 : NULL;
    else if (!strncmp(p, "<!--", 4))
        close = strstr(p + 4, "-->"), close = close ? close + 3 : NULL;
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
    const char *from = x.p;
    while (rc == 0 && (x.p = strchr(x.p, '<')) != NULL) {
        const char *tag = x.p;
        /* text between the tags: only blanks, but in the elements that hold
         * text (with libxml2, hwloc stops reading an object's children at a
         * text or comment node) */
        if (x.depth > 0 && !xml_text_content(x.open[x.depth - 1]))
            for (const char *c = from; c < tag; c++)
                if (!isspace((unsigned char)*c)) {
                    rc = ts_fail(EINVAL,
                                 "%s: text inside <%s> at byte %zu (hwloc never writes any; "
                                 "read through libxml2, hwloc stops reading the children there)",
                                 name, x.open[x.depth - 1], (size_t)(c - text));
                    goto out;
                }
        if ((tag[1] == '?' || tag[1] == '!') && x.depth > 0) {
            rc = ts_fail(EINVAL,
                         "%s: a comment or other markup inside <%s> at byte %zu (hwloc never "
                         "writes one; read through libxml2, hwloc stops reading the children "
                         "there)",
                         name, x.open[x.depth - 1], (size_t)(tag - text));
            goto out;
        }
        if (tag[1] == '!' && strncmp(tag, "<!--", 4) && strncmp(tag, "<!DOCTYPE", 9)) {
            rc = ts_fail(EINVAL, "%s: markup \"%.9s\" at byte %zu, which hwloc never writes", name,
                         tag, (size_t)(tag - text));
            goto out;
        }
        if (!strncmp(tag, "<!DOCTYPE", 9)) {
            const char *end = strchr(tag, '>'), *subset = strchr(tag, '[');
            if (subset && (!end || subset < end)) {
                rc = ts_fail(EINVAL,
                             "%s: a DOCTYPE with an internal subset at byte %zu (hwloc never "
                             "writes one; libxml2 would add its attribute defaults, which this "
                             "check cannot see)",
                             name, (size_t)(tag - text));
                goto out;
            }
        }
        if (tag[1] == '?' || tag[1] == '!') {
            rc = xml_skip_special(&x);
            from = x.p;
            continue;
        }
        if (tag[1] == '/') { /* a closing tag: it must close the innermost open element */
            size_t n = xml_name_len(tag + 2);
            const char *close = tag + 2 + n;
            while (isspace((unsigned char)*close))
                close++;
            if (*close != '>')
                rc = xml_malformed(&x, tag, "a closing tag not closed");
            else if (x.depth == 0 || !xml_is(tag + 2, n, x.open[x.depth - 1]))
                rc = xml_malformed(&x, tag, "a closing tag that matches no open element");
            else
                x.depth--;
            x.p = close + 1;
            from = x.p;
            continue;
        }
        size_t n = xml_name_len(tag + 1);
        if (tag[1 + n] == ':') {
            rc = ts_fail(EINVAL,
                         "%s: a namespaced element name at byte %zu (hwloc never writes one)", name,
                         (size_t)(tag - text));
            goto out;
        }
        const char *element = NULL;
        for (size_t k = 0; k < sizeof elements / sizeof elements[0] && !element; k++)
            if (xml_is(tag + 1, n, elements[k]))
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
        uint64_t seen = 0; /* the allowed attributes met, by index */
        const char *type = NULL, *os_index = NULL;
        size_t type_len = 0, os_index_len = 0;
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
            if (*p == ':') {
                rc = ts_fail(EINVAL,
                             "%s: a namespaced attribute name \"%.*s:...\" at byte %zu (hwloc "
                             "never writes one; libxml2 hands \"x:type\" to hwloc as \"type\")",
                             name, (int)(alen < 32 ? alen : 32), attr, (size_t)(attr - text));
                goto out;
            }
            int index = xml_attribute_index(element, attr, alen);
            if (index < 0 || (seen >> index & 1)) {
                rc = ts_fail(EINVAL, "%s: attribute \"%.*s\" on <%s> at byte %zu %s", name,
                             (int)(alen < 32 ? alen : 32), attr, element, (size_t)(attr - text),
                             index < 0 ? "is not one hwloc writes there"
                                       : "given twice (hwloc writes each once)");
                goto out;
            }
            seen |= (uint64_t)1 << index;
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
            if (memchr(value, '&', vlen) && !xml_text_attribute(attr, alen)) {
                rc = ts_fail(EINVAL,
                             "%s: an entity or character reference in %.*s=\"%.*s\" at byte "
                             "%zu (hwloc writes this value plainly; libxml2 would decode it, "
                             "this check does not)",
                             name, (int)(alen < 32 ? alen : 32), attr, (int)(vlen < 32 ? vlen : 32),
                             value, (size_t)(attr - text));
                goto out;
            }
            if (is_object && xml_is(attr, alen, "os_index"))
                os_index = value, os_index_len = vlen;
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
                has[k] |= xml_is(attr, alen, sets[k]);
            if (is_object && xml_is(attr, alen, "type")) {
                type = value;
                type_len = vlen;
                if (!xml_type_known(value, vlen)) {
                    rc = ts_fail(EINVAL,
                                 "%s: an object of type \"%.*s\" at byte %zu, not a type "
                                 "hwloc writes (hwloc 2.9 reads some such names as another "
                                 "type and may crash)",
                                 name, (int)(vlen < 32 ? vlen : 32), value, (size_t)(tag - text));
                    goto out;
                }
                if (xml_is(value, vlen, "NUMANode"))
                    numa = numa_object = 1;
            }
            if (is_root && x.depth == 0 && xml_is(attr, alen, "version") && vlen) {
                version = value;
                version_len = vlen;
                format = xml_format(value);
            }
        }
        if (is_object && !type) {
            rc = ts_fail(EINVAL, "%s: an object without a type at byte %zu", name,
                         (size_t)(tag - text));
            goto out;
        }
        /* the root object hwloc writes: Machine (hwloc 1.x also wrote System,
         * and NUMANode on one-node machines: a real file here has one); any
         * other made hwloc 2.9 crash or abort (issue 37 item 2) */
        if (is_object && x.depth == 1 && !(xml_is(type, type_len, "Machine")) &&
            !(format < 2 && xml_is(type, type_len, "System")) && !(format < 2 && numa_object)) {
            rc = ts_fail(EINVAL,
                         "%s: the root object at byte %zu is a %.*s; hwloc writes a Machine "
                         "there (in format 1 also a System, or a NUMANode on one-node "
                         "machines)",
                         name, (size_t)(tag - text), (int)(type_len < 32 ? type_len : 32), type);
            goto out;
        }
        /* os_index on every PU and NUMANode, as hwloc writes it */
        if (is_object && ((xml_is(type, type_len, "PU")) || numa_object)) {
            bool decimal = os_index && os_index_len > 0 && os_index_len <= 7;
            unsigned long value = 0;
            for (size_t k = 0; decimal && k < os_index_len; k++) {
                decimal = isdigit((unsigned char)os_index[k]) != 0;
                value = value * 10 + (unsigned long)(os_index[k] - '0');
            }
            if (!decimal || value > XML_MAX_OS_INDEX) {
                rc = ts_fail(EINVAL,
                             "%s: a %.*s at byte %zu %s (hwloc writes each one's OS index, a "
                             "number from 0 to %u here)",
                             name, (int)type_len, type, (size_t)(tag - text),
                             os_index ? "with an os_index that is not a small number"
                                      : "without an os_index",
                             XML_MAX_OS_INDEX);
                goto out;
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
        from = x.p;
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
