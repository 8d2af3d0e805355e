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
#include "base/file.h"

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
    t->core_type = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
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
        hwloc_bitmap_foreach_begin(pu, set) if ((unsigned)pu < t->pu_limit) t->pu_core[pu] = (int)n;
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
    return x->obj->logical_index < y->obj->logical_index
               ? -1
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
        objs[i].cores =
            objs[i].obj->cpuset ? (unsigned)hwloc_bitmap_weight(objs[i].obj->cpuset) : 0;
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
        hwloc_bitmap_foreach_begin(pu, o->cpuset) int core = ts_topology_pu_core(t, (unsigned)pu);
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
    return ts_topology_fingerprint(t);
}

static int read_xml_file(const char *path, char **text, size_t *size)
{
    int rc = ts_file_read(path, TS_XML_MAX_BYTES, 0, text, size);
    if (rc == -EFBIG)
        return ts_fail(EINVAL, "'%s': an XML topology larger than %u MiB", path,
                       TS_XML_MAX_BYTES >> 20);
    if (rc == -ENOMEM)
        return ts_fail(ENOMEM, "out of memory reading '%s'", path);
    if (rc < 0)
        return ts_fail(EINVAL, "cannot use '%s' as an hwloc XML topology: %s", path, strerror(-rc));
    return 0;
}

/*
 * hwloc's x86 backend binds the loading thread to every PU in turn to read
 * its CPUID, which waits for each CPU to be free: 6-16 ms on this 2-CPU
 * machine while it is busy (0.9 ms without it), more on 128 cores. On Linux
 * the OS backend already gives every object topsync reads (packages,
 * NUMA nodes, caches with their sizes and lines, cores, PUs, CPUModel); the
 * x86 backend only annotates them (issue 35 item 4). A failure to skip it
 * (an hwloc without that component) only costs the time.
 */
static void skip_cpuid_discovery(hwloc_topology_t h)
{
    (void)hwloc_topology_set_components(h, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
}

static bool has_caches(hwloc_topology_t h)
{
    for (int d = 0; d < hwloc_topology_get_depth(h); d++) {
        hwloc_obj_t o = hwloc_get_obj_by_depth(h, d, 0);
        if (o && hwloc_obj_type_is_cache(o->type))
            return true;
    }
    return false;
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
        rc = ts_topology_synthetic_check(synthetic);
        if (rc == 0 && hwloc_topology_set_synthetic(t->hwloc, synthetic) < 0)
            rc = ts_fail(EINVAL,
                         "invalid hwloc synthetic topology '%s' (expected e.g. "
                         "'pack:2 numa:2 l3:1 core:32 pu:1')",
                         synthetic);
    } else if (xml_text) {
        snprintf(t->source, sizeof t->source, "xml: %s", xml_name);
        rc = ts_topology_xml_check(xml_text, xml_name);
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
            rc = ts_topology_synthetic_check(env_syn);
        } else if (env_xml && *env_xml) {
            snprintf(t->source, sizeof t->source, "xml: %s (HWLOC_XMLFILE)", env_xml);
            char *text = NULL;
            size_t size = 0;
            rc = read_xml_file(env_xml, &text, &size);
            if (rc == 0)
                rc = ts_topology_xml_check(text, env_xml);
            free(text);
        }
    }
    bool discovering = !synthetic && !xml_text && !getenv("HWLOC_XMLFILE") &&
                       !getenv("HWLOC_SYNTHETIC") && !getenv("HWLOC_COMPONENTS");
    if (rc == 0 && discovering)
        skip_cpuid_discovery(t->hwloc);
    if (rc == 0 && hwloc_topology_load(t->hwloc) < 0)
        rc = ts_fail(EINVAL, "hwloc could not load the topology (%s)", t->source);
    if (rc == 0 && discovering && !has_caches(t->hwloc)) {
        /* the OS told no caches (some containers): let CPUID tell them */
        hwloc_topology_destroy(t->hwloc);
        t->hwloc = NULL;
        if (hwloc_topology_init(&t->hwloc) < 0 || hwloc_topology_load(t->hwloc) < 0)
            rc = ts_fail(EINVAL, "hwloc could not load the topology (%s)", t->source);
    }
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
