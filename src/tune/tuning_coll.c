/*
 * The collectives' entries of a tuning file (include/topsync/tune.h):
 * topsync's call against the MPI's own, per operation and size, for one
 * case and MPI library; kept, matched, read and written beside the
 * barrier's entries (tuning.c). The why: docs/design.md section 9.6.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <topsync/collectives.h>
#include <topsync/tune.h>

#include "base/error.h"
#include "base/json.h"
#include "tune/tune_private.h"

static const char *const kind_names[TOPSYNC_COLL_KINDS] = {"allreduce", "reduce", "bcast"};

const char *topsync_coll_kind_name(topsync_coll_kind_t kind)
{
    return (unsigned)kind < TOPSYNC_COLL_KINDS ? kind_names[kind] : "";
}

static int check_coll(const topsync_tuning_coll_entry_t *e, char *why, size_t len)
{
    if (e->participants == 0) {
        snprintf(why, len, "participants is 0");
        return -1;
    }
    if (!memchr(e->placement, '\0', sizeof e->placement) || !e->placement[0] ||
        !memchr(e->mpi, '\0', sizeof e->mpi) || !e->mpi[0]) {
        snprintf(why, len, "no placement or no mpi");
        return -1;
    }
    unsigned total = 0;
    for (unsigned k = 0; k < TOPSYNC_COLL_KINDS; k++) {
        if (e->npoints[k] > TOPSYNC_TUNING_COLL_POINTS) {
            snprintf(why, len, "%s: %u points (at most %d)", kind_names[k], e->npoints[k],
                     TOPSYNC_TUNING_COLL_POINTS);
            return -1;
        }
        total += e->npoints[k];
        for (unsigned i = 0; i < e->npoints[k]; i++) {
            const topsync_tuning_coll_point_t *p = &e->points[k][i];
            if (p->bytes == 0 || p->bytes > TOPSYNC_COLL_MAX_BYTES_LIMIT ||
                (i && p->bytes <= e->points[k][i - 1].bytes)) {
                snprintf(why, len, "%s[%u]: bytes %zu not ascending within 1..%u", kind_names[k], i,
                         p->bytes, TOPSYNC_COLL_MAX_BYTES_LIMIT);
                return -1;
            }
            if (!(p->topsync_ns > 0 && p->topsync_ns < 1e12 && p->own_ns > 0 && p->own_ns < 1e12)) {
                snprintf(why, len, "%s[%u]: topsync_ns or own_ns is not a latency", kind_names[k],
                         i);
                return -1;
            }
        }
    }
    if (!total) {
        snprintf(why, len, "no points");
        return -1;
    }
    return 0;
}

static bool same_coll_case(const topsync_tuning_coll_entry_t *a,
                           const topsync_tuning_coll_entry_t *b)
{
    return a->participants == b->participants && !a->oversubscribed == !b->oversubscribed &&
           !strcmp(a->placement, b->placement) && !strcmp(a->mpi, b->mpi);
}

int topsync_tuning_put_coll(topsync_tuning_t *tu, const topsync_tuning_coll_entry_t *e)
{
    char why[160];
    if (!tu || !e)
        return ts_fail(EINVAL, "topsync_tuning_put_coll: NULL argument");
    if (check_coll(e, why, sizeof why) < 0)
        return ts_fail(EINVAL, "tuning collectives entry: %s", why);
    unsigned k = 0;
    while (k < tu->ncolls && !same_coll_case(&tu->colls[k], e))
        k++;
    if (k == tu->ncolls) {
        int rc =
            ts_tuning_grow((void **)&tu->colls, &tu->ncolls, sizeof *tu->colls, "collectives ");
        if (rc < 0)
            return rc;
    }
    tu->colls[k] = *e;
    tu->colls[k].oversubscribed = !!e->oversubscribed;
    return 0;
}

int topsync_tuning_lookup_coll(const topsync_tuning_t *tu, unsigned n, int oversubscribed,
                               const char *placement, const char *mpi,
                               topsync_tuning_coll_entry_t *out)
{
    if (!tu || !placement || !mpi || !out)
        return ts_fail(EINVAL, "topsync_tuning_lookup_coll: NULL argument");
    const topsync_tuning_coll_entry_t *best = NULL;
    for (unsigned k = 0; k < tu->ncolls; k++) {
        const topsync_tuning_coll_entry_t *e = &tu->colls[k];
        if (!e->oversubscribed != !oversubscribed || strcmp(e->placement, placement) ||
            strcmp(e->mpi, mpi))
            continue;
        if (ts_tuning_nearer(e->participants, best ? &best->participants : NULL, n))
            best = e;
    }
    if (!best)
        return ts_fail(ENOENT, "no collectives entry for %s, %s, placement %s", mpi,
                       oversubscribed ? "oversubscribed" : "one per CPU", placement);
    *out = *best;
    return 0;
}

unsigned topsync_tuning_coll_count(const topsync_tuning_t *tu)
{
    return tu ? tu->ncolls : 0;
}

int topsync_tuning_get_coll(const topsync_tuning_t *tu, unsigned index,
                            topsync_tuning_coll_entry_t *out)
{
    if (!tu || !out || index >= tu->ncolls)
        return ts_fail(EINVAL, "topsync_tuning_get_coll: bad argument");
    *out = tu->colls[index];
    return 0;
}

/* ---------------------------------------------------------------------- */
/* The file: "collectives": [{"participants": 2, "oversubscribed": false,   */
/* "placement": "core", "mpi": "Open MPI v4.1.4",                           */
/* "allreduce": [[bytes, topsync_ns, own_ns], ...], "reduce": ..., ...}]    */

static int read_points(const ts_json *list, topsync_tuning_coll_entry_t *e, unsigned kind,
                       char *why, size_t len)
{
    for (const ts_json *p = list ? list->child : NULL; p; p = p->next) {
        const ts_json *v[3] = {NULL, NULL, NULL};
        unsigned nv = 0;
        for (const ts_json *x = p->type == TS_JSON_ARRAY ? p->child : NULL; x; x = x->next, nv++)
            if (nv < 3)
                v[nv] = x->type == TS_JSON_NUMBER ? x : NULL;
        if (e->npoints[kind] == TOPSYNC_TUNING_COLL_POINTS || nv != 3 || !v[0] || !v[1] || !v[2] ||
            !(v[0]->number >= 1 && v[0]->number <= TOPSYNC_COLL_MAX_BYTES_LIMIT &&
              v[0]->number == (double)(size_t)v[0]->number)) {
            snprintf(why, len,
                     "%s[%u] is not [bytes, topsync_ns, own_ns] (at most %d of them, bytes a "
                     "whole number 1..%u)",
                     kind_names[kind], e->npoints[kind], TOPSYNC_TUNING_COLL_POINTS,
                     TOPSYNC_COLL_MAX_BYTES_LIMIT);
            return -1;
        }
        topsync_tuning_coll_point_t *out = &e->points[kind][e->npoints[kind]++];
        out->bytes = (size_t)v[0]->number;
        out->topsync_ns = v[1]->number;
        out->own_ns = v[2]->number;
    }
    return 0;
}

static int read_coll(const ts_json *j, topsync_tuning_coll_entry_t *e, char *why, size_t len)
{
    memset(e, 0, sizeof *e);
    const ts_json *n = ts_json_member(j, "participants", TS_JSON_NUMBER);
    const ts_json *over = ts_json_member(j, "oversubscribed", TS_JSON_BOOL);
    const ts_json *place = ts_json_member(j, "placement", TS_JSON_STRING);
    const ts_json *mpi = ts_json_member(j, "mpi", TS_JSON_STRING);
    if (!n || !(n->number >= 1 && n->number <= 1e7 && n->number == (unsigned)n->number) || !over ||
        !place || strlen(place->string) >= sizeof e->placement || !mpi ||
        strlen(mpi->string) >= sizeof e->mpi) {
        snprintf(why, len,
                 "participants (a whole number from 1), oversubscribed, placement or mpi "
                 "missing or too long");
        return -1;
    }
    e->participants = (unsigned)n->number;
    e->oversubscribed = over->boolean;
    strcpy(e->placement, place->string);
    strcpy(e->mpi, mpi->string);
    for (unsigned k = 0; k < TOPSYNC_COLL_KINDS; k++)
        if (read_points(ts_json_member(j, kind_names[k], TS_JSON_ARRAY), e, k, why, len) < 0)
            return -1;
    return check_coll(e, why, len);
}

int ts_tuning_read_colls(topsync_tuning_t *tu, const ts_json *colls, char *why, size_t len)
{
    unsigned k = 0;
    for (const ts_json *c = colls->child; c; c = c->next, k++) {
        topsync_tuning_coll_entry_t e;
        char detail[200];
        if (read_coll(c, &e, detail, sizeof detail) < 0) {
            snprintf(why, len, "collectives[%u]: %s", k, detail);
            return -1;
        }
        if (topsync_tuning_put_coll(tu, &e) < 0) {
            snprintf(why, len, "collectives[%u]: %s", k, topsync_error_message());
            return -1;
        }
    }
    return 0;
}

void ts_tuning_write_colls(FILE *f, const topsync_tuning_t *tu)
{
    if (!tu->ncolls)
        return;
    fprintf(f, ",\n  \"collectives\": [");
    for (unsigned k = 0; k < tu->ncolls; k++) {
        const topsync_tuning_coll_entry_t *e = &tu->colls[k];
        char place[200], mpi[300];
        ts_json_quote(place, sizeof place, e->placement);
        ts_json_quote(mpi, sizeof mpi, e->mpi);
        fprintf(f,
                "%s\n    {\"participants\": %u, \"oversubscribed\": %s, \"placement\": %s, "
                "\"mpi\": %s",
                k ? "," : "", e->participants, e->oversubscribed ? "true" : "false", place, mpi);
        for (unsigned kind = 0; kind < TOPSYNC_COLL_KINDS; kind++) {
            fprintf(f, ",\n     \"%s\": [", kind_names[kind]);
            for (unsigned i = 0; i < e->npoints[kind]; i++) {
                const topsync_tuning_coll_point_t *p = &e->points[kind][i];
                fprintf(f, "%s[%zu, %.1f, %.1f]", i ? ", " : "", p->bytes, p->topsync_ns,
                        p->own_ns);
            }
            fprintf(f, "]");
        }
        fprintf(f, "}");
    }
    fprintf(f, "\n  ]");
}
