/*
 * auto for libtopsync-mpi's collectives: per operation, the largest call
 * topsync serves before the MPI's own is faster (topsync_coll_choose in
 * include/topsync/tune.h): given, then the tuning file, then the rules.
 * The why: docs/design.md section 9.6.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <topsync/collectives.h>
#include <topsync/tune.h>

#include "base/env.h"
#include "base/error.h"
#include "base/text.h"
#include "select/auto.h"

/* Every class of calls up to `bytes`. */
static unsigned classes_up_to(size_t bytes)
{
    unsigned top = topsync_coll_class(bytes);
    return top >= 31 ? ~0u : (2u << top) - 1;
}

/*
 * One kind from its measured points: class c goes to the MPI's own when
 * the first point at or above its largest size (8 * 2^c) had the MPI's own
 * more than TOPSYNC_COLL_OWN_MARGIN times faster; nothing above the
 * largest point is topsync's (not measured). Sizes ascend (check_coll).
 */
static void decide(const topsync_tuning_coll_entry_t *e, unsigned kind, size_t *max_bytes,
                   unsigned *classes, char *buf, size_t len)
{
    const topsync_tuning_coll_point_t *p = e->points[kind];
    unsigned n = e->npoints[kind];
    size_t used = 0;
    *max_bytes = 0;
    *classes = 0;
    if (n == 0) {
        ts_append(buf, len, used, "not measured: the MPI's own for every size");
        return;
    }
    *max_bytes = p[n - 1].bytes;
    unsigned last = topsync_coll_class(p[n - 1].bytes), lost = 0;
    for (unsigned c = 0, i = 0; c <= last && c < TOPSYNC_COLL_CLASSES; c++) {
        size_t top = (size_t)8 << c;
        while (i + 1 < n && p[i].bytes < top)
            i++;
        if (p[i].topsync_ns <= p[i].own_ns * TOPSYNC_COLL_OWN_MARGIN)
            *classes |= 1u << c;
        else
            lost |= 1u << c;
    }
    used = ts_append(buf, len, used, "topsync / the MPI's own:");
    for (unsigned i = 0; i < n; i++)
        used = ts_append(buf, len, used, "%s %zu B %.2fx", i ? "," : "", p[i].bytes,
                         p[i].topsync_ns / p[i].own_ns);
    if (lost) {
        used = ts_append(buf, len, used, "; the MPI's own takes the calls of");
        for (unsigned c = 0, first = 1; c < TOPSYNC_COLL_CLASSES; c++)
            if (lost >> c & 1u) {
                used = ts_append(buf, len, used, "%s %zu-%zu B", first ? "" : ",",
                                 c ? ((size_t)8 << (c - 1)) + 1 : 1, (size_t)8 << c);
                first = 0;
            }
        used =
            ts_append(buf, len, used, " (more than %.2gx faster there)", TOPSYNC_COLL_OWN_MARGIN);
    } else {
        used = ts_append(buf, len, used, "; topsync takes every size measured");
    }
    ts_append(buf, len, used, ", and the MPI's own those above %zu B (not measured)", *max_bytes);
}

int topsync_coll_choose(const topsync_topology_t *t, unsigned n, int oversubscribed,
                        const char *placement, const char *mpi, topsync_coll_choice_t *out)
{
    if (!out)
        return ts_fail(EINVAL, "topsync_coll_choose: out is NULL");
    memset(out, 0, sizeof *out);
    if (!t || !n || !placement)
        return ts_fail(EINVAL, "topsync_coll_choose: NULL topology or placement, or n 0");
    if (!mpi)
        mpi = "";
    long given = 0;
    int rc =
        ts_env_whole("TOPSYNC_COLL_MAX_BYTES", 1, TOPSYNC_COLL_MAX_BYTES_LIMIT, "bytes", &given);
    if (rc < 0)
        return rc;
    if (rc == 1) {
        for (unsigned k = 0; k < TOPSYNC_COLL_KINDS; k++) {
            out->max_bytes[k] = (size_t)given;
            out->classes[k] = classes_up_to((size_t)given);
            snprintf(out->explain[k], sizeof out->explain[k],
                     "given: TOPSYNC_COLL_MAX_BYTES=%ld (topsync serves up to %ld B)", given,
                     given);
        }
        return 0;
    }
    if ((rc = ts_auto_steps_check()) < 0)
        return rc;
    char path[4096] = "", why[300];
    topsync_tuning_coll_entry_t e;
    bool tuned = false;
    if (!ts_auto_allows_tuning())
        snprintf(why, sizeof why, "TOPSYNC_AUTO leaves out the tuning step");
    else if (!mpi[0])
        snprintf(why, sizeof why, "no tuning entry for this MPI (topsync-tune --mpi makes one)");
    else if (!(tuned = ts_auto_tuning_coll(t, n, oversubscribed, placement, mpi, &e, path,
                                           sizeof path)))
        snprintf(why, sizeof why,
                 "no tuning entry for %.64s, %u processes, %s, placement %.48s "
                 "(topsync-tune --mpi makes one)",
                 mpi, n, oversubscribed ? "oversubscribed" : "one per CPU", placement);
    for (unsigned k = 0; k < TOPSYNC_COLL_KINDS; k++) {
        if (tuned) {
            char figures[400];
            decide(&e, k, &out->max_bytes[k], &out->classes[k], figures, sizeof figures);
            char nearest[48] = "";
            if (e.participants != n)
                snprintf(nearest, sizeof nearest, " (nearest tuned count to %u)", n);
            snprintf(out->explain[k], sizeof out->explain[k],
                     "tuning file %.100s, entry %u processes%s, %s, placement %.48s, %.64s: %s",
                     path, e.participants, nearest,
                     e.oversubscribed ? "oversubscribed" : "one per CPU", e.placement, e.mpi,
                     figures);
        } else {
            out->max_bytes[k] = TOPSYNC_COLL_MAX_BYTES_DEFAULT;
            out->classes[k] = classes_up_to(TOPSYNC_COLL_MAX_BYTES_DEFAULT);
            snprintf(out->explain[k], sizeof out->explain[k],
                     "rules: up to %u B, the default limit (below MPICH 4.0's own allreduce "
                     "catching up at 8 KiB where it was measured: docs/results.md, \"Small "
                     "collectives\"); %s",
                     TOPSYNC_COLL_MAX_BYTES_DEFAULT, why);
        }
    }
    return 0;
}
