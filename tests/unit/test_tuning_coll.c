/*
 * auto for libtopsync-mpi's collectives (topsync/tune.h): the tuning
 * file's collectives entries kept, matched (case, MPI, nearest count),
 * written and read back, damaged ones refused with where; and
 * topsync_coll_choose per kind and size class: given, tuning (with the
 * margin on both sides of it), rules, and each fallback's reason.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <topsync.h>

#include "check.h"

static char dir[] = "/tmp/topsync-tuning-coll-XXXXXX";

static const char *path_of(const char *name)
{
    static char buf[4][256];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, 256, "%s/%s", dir, name);
    return p;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

/* Sizes 8 B .. 16 KiB, topsync at half the MPI's own everywhere but where
 * the caller changes it. */
static topsync_tuning_coll_entry_t coll_entry(unsigned n, const char *placement, const char *mpi)
{
    topsync_tuning_coll_entry_t e;
    memset(&e, 0, sizeof e);
    e.participants = n;
    snprintf(e.placement, sizeof e.placement, "%s", placement);
    snprintf(e.mpi, sizeof e.mpi, "%s", mpi);
    for (unsigned k = 0; k < TOPSYNC_COLL_KINDS; k++) {
        for (size_t bytes = 8; bytes <= 16384; bytes *= 2) {
            topsync_tuning_coll_point_t *p = &e.points[k][e.npoints[k]++];
            p->bytes = bytes;
            p->own_ns = 1000.0 + (double)bytes;
            p->topsync_ns = p->own_ns / 2;
        }
    }
    return e;
}

/* the point of `bytes` in kind k: topsync `ratio` times the MPI's own */
static void set_ratio(topsync_tuning_coll_entry_t *e, topsync_coll_kind_t k, size_t bytes,
                      double ratio)
{
    for (unsigned i = 0; i < e->npoints[k]; i++)
        if (e->points[k][i].bytes == bytes)
            e->points[k][i].topsync_ns = e->points[k][i].own_ns * ratio;
}

static void test_classes(void)
{
    CHECK_EQ(topsync_coll_class(1), 0);
    CHECK_EQ(topsync_coll_class(8), 0);
    CHECK_EQ(topsync_coll_class(9), 1);
    CHECK_EQ(topsync_coll_class(16), 1);
    CHECK_EQ(topsync_coll_class(17), 2);
    CHECK_EQ(topsync_coll_class(4096), 9);
    CHECK_EQ(topsync_coll_class(1u << 20), TOPSYNC_COLL_CLASSES - 1);
    CHECK_STR(topsync_coll_kind_name(TOPSYNC_COLL_BCAST), "bcast");
    CHECK_STR(topsync_coll_kind_name(TOPSYNC_COLL_KINDS), "");
}

static void test_put_lookup(void)
{
    topsync_topology_t *t = NULL;
    CHECK_EQ(topsync_topology_load_synthetic(&t, "pack:1 core:4 pu:1"), 0);
    topsync_tuning_t *tu = NULL;
    CHECK_EQ(topsync_tuning_create(&tu, t), 0);
    topsync_tuning_coll_entry_t e = coll_entry(2, "core", "Open MPI v4.1.4"), got;
    CHECK_EQ(topsync_tuning_put_coll(tu, &e), 0);
    e = coll_entry(4, "core", "Open MPI v4.1.4");
    e.points[TOPSYNC_COLL_REDUCE][0].own_ns = 77;
    CHECK_EQ(topsync_tuning_put_coll(tu, &e), 0);
    e = coll_entry(2, "core", "MPICH Version: 4.0.2");
    CHECK_EQ(topsync_tuning_put_coll(tu, &e), 0);
    e = coll_entry(2, "core", "Open MPI v4.1.4"); /* the same case again: replaced */
    e.points[TOPSYNC_COLL_BCAST][0].own_ns = 55;
    CHECK_EQ(topsync_tuning_put_coll(tu, &e), 0);
    CHECK_EQ(topsync_tuning_coll_count(tu), 3);
    CHECK_EQ(topsync_tuning_lookup_coll(tu, 2, 0, "core", "Open MPI v4.1.4", &got), 0);
    CHECK(got.points[TOPSYNC_COLL_BCAST][0].own_ns == 55);
    /* nearest count, the smaller on a tie */
    CHECK_EQ(topsync_tuning_lookup_coll(tu, 3, 0, "core", "Open MPI v4.1.4", &got), 0);
    CHECK_EQ(got.participants, 2);
    CHECK_EQ(topsync_tuning_lookup_coll(tu, 9, 0, "core", "Open MPI v4.1.4", &got), 0);
    CHECK_EQ(got.participants, 4);
    /* another MPI, placement or oversubscription: none */
    CHECK_EQ(topsync_tuning_lookup_coll(tu, 4, 0, "core", "Intel(R) MPI Library 2021.10", &got),
             -ENOENT);
    CHECK_MSG("no collectives entry for Intel(R) MPI Library 2021.10");
    CHECK_EQ(topsync_tuning_lookup_coll(tu, 2, 0, "numa", "Open MPI v4.1.4", &got), -ENOENT);
    CHECK_EQ(topsync_tuning_lookup_coll(tu, 2, 1, "core", "Open MPI v4.1.4", &got), -ENOENT);
    /* bad entries */
    e = coll_entry(2, "core", "x");
    memset(e.npoints, 0, sizeof e.npoints);
    CHECK_EQ(topsync_tuning_put_coll(tu, &e), -EINVAL);
    CHECK_MSG("no points");
    e = coll_entry(2, "core", "x");
    e.points[TOPSYNC_COLL_REDUCE][3].bytes = 8;
    CHECK_EQ(topsync_tuning_put_coll(tu, &e), -EINVAL);
    CHECK_MSG("reduce[3]: bytes 8 not ascending");
    e = coll_entry(2, "core", "x");
    e.points[TOPSYNC_COLL_BCAST][1].own_ns = 0;
    CHECK_EQ(topsync_tuning_put_coll(tu, &e), -EINVAL);
    CHECK_MSG("bcast[1]: topsync_ns or own_ns is not a latency");
    e = coll_entry(2, "core", "");
    CHECK_EQ(topsync_tuning_put_coll(tu, &e), -EINVAL);
    CHECK_MSG("no placement or no mpi");
    e = coll_entry(0, "core", "x");
    CHECK_EQ(topsync_tuning_put_coll(tu, &e), -EINVAL);
    CHECK_EQ(topsync_tuning_coll_count(tu), 3);

    /* written and read back: the same figures; barrier entries untouched */
    CHECK_EQ(topsync_tuning_write(tu, path_of("colls.json")), 0);
    topsync_tuning_t *back = NULL;
    CHECK_EQ(topsync_tuning_load(&back, path_of("colls.json"), t), 0);
    CHECK_EQ(topsync_tuning_coll_count(back), 3);
    CHECK_EQ(topsync_tuning_count(back), 0);
    CHECK_EQ(topsync_tuning_lookup_coll(back, 4, 0, "core", "Open MPI v4.1.4", &got), 0);
    CHECK(got.points[TOPSYNC_COLL_REDUCE][0].own_ns == 77);
    CHECK_EQ(got.npoints[TOPSYNC_COLL_ALLREDUCE], 12);
    CHECK_EQ(got.points[TOPSYNC_COLL_ALLREDUCE][11].bytes, 16384);
    CHECK(got.points[TOPSYNC_COLL_ALLREDUCE][11].topsync_ns == (1000.0 + 16384) / 2);
    topsync_tuning_destroy(back);

    /* a damaged collectives entry: the whole file refused, saying where */
    char fp[TOPSYNC_FINGERPRINT_LEN], text[1024];
    topsync_tuning_fingerprint(t, fp);
    snprintf(text, sizeof text,
             "{\"format\": \"topsync-tuning\", \"version\": 1, \"fingerprint\": \"%s\", "
             "\"entries\": [], \"collectives\": [{\"participants\": 2, \"oversubscribed\": "
             "false, \"placement\": \"core\", \"mpi\": \"m\", \"allreduce\": [[8, 1, 2], "
             "[16, 1]]}]}",
             fp);
    write_text(path_of("badcoll.json"), text);
    CHECK_EQ(topsync_tuning_load(&back, path_of("badcoll.json"), t), -EBADMSG);
    CHECK_MSG("collectives[0]: allreduce[1] is not [bytes, topsync_ns, own_ns]");
    snprintf(text, sizeof text,
             "{\"format\": \"topsync-tuning\", \"version\": 1, \"fingerprint\": \"%s\", "
             "\"entries\": [], \"collectives\": [{\"participants\": 2, \"oversubscribed\": "
             "false, \"placement\": \"core\", \"allreduce\": [[8, 1, 2]]}]}",
             fp);
    write_text(path_of("nompi.json"), text);
    CHECK_EQ(topsync_tuning_load(&back, path_of("nompi.json"), t), -EBADMSG);
    CHECK_MSG("collectives[0]: participants (a whole number from 1), oversubscribed, placement");
    topsync_tuning_destroy(tu);
    topsync_topology_destroy(t);
}

static void test_choose(void)
{
    topsync_topology_t *t = NULL;
    CHECK_EQ(topsync_topology_load_synthetic(&t, "pack:1 core:4 pu:1"), 0);
    topsync_coll_choice_t c;
    const char *ompi = "Open MPI v4.1.4";

    /* no tuning file: the rules, every call up to the default */
    setenv("TOPSYNC_TUNING", "off", 1);
    CHECK_EQ(topsync_coll_choose(t, 2, 0, "core", ompi, &c), 0);
    for (unsigned k = 0; k < TOPSYNC_COLL_KINDS; k++) {
        CHECK_EQ(c.max_bytes[k], TOPSYNC_COLL_MAX_BYTES_DEFAULT);
        CHECK(topsync_coll_choice_serves(&c, k, 1));
        CHECK(topsync_coll_choice_serves(&c, k, TOPSYNC_COLL_MAX_BYTES_DEFAULT));
        CHECK(!topsync_coll_choice_serves(&c, k, TOPSYNC_COLL_MAX_BYTES_DEFAULT + 1));
        CHECK(strstr(c.explain[k], "rules: up to 4096 B") == c.explain[k]);
        CHECK(strstr(c.explain[k], "no tuning entry for Open MPI v4.1.4, 2 processes"));
    }

    /* the tuning file */
    topsync_tuning_t *tu = NULL;
    CHECK_EQ(topsync_tuning_create(&tu, t), 0);
    topsync_tuning_coll_entry_t e = coll_entry(2, "core", ompi);
    set_ratio(&e, TOPSYNC_COLL_REDUCE, 32, 1.5);   /* the MPI's own takes 17-32 B */
    set_ratio(&e, TOPSYNC_COLL_REDUCE, 64, 1.25);  /* and 33-64 B */
    set_ratio(&e, TOPSYNC_COLL_REDUCE, 128, 1.15); /* within the margin: topsync */
    set_ratio(&e, TOPSYNC_COLL_BCAST, 8, 2.0);     /* the MPI's own takes 1-8 B */
    set_ratio(&e, TOPSYNC_COLL_BCAST, 16384, 1.3); /* and 8193-16384 B */
    CHECK_EQ(topsync_tuning_put_coll(tu, &e), 0);
    CHECK_EQ(topsync_tuning_write(tu, path_of("choose.json")), 0);
    topsync_tuning_destroy(tu);
    setenv("TOPSYNC_TUNING", path_of("choose.json"), 1);
    CHECK_EQ(topsync_coll_choose(t, 2, 0, "core", ompi, &c), 0);
    CHECK_EQ(c.max_bytes[TOPSYNC_COLL_ALLREDUCE], 16384);
    CHECK(topsync_coll_choice_serves(&c, TOPSYNC_COLL_ALLREDUCE, 16384));
    CHECK(!topsync_coll_choice_serves(&c, TOPSYNC_COLL_ALLREDUCE, 16385));
    CHECK(strstr(c.explain[TOPSYNC_COLL_ALLREDUCE], "topsync takes every size measured"));
    CHECK(topsync_coll_choice_serves(&c, TOPSYNC_COLL_REDUCE, 16));
    CHECK(!topsync_coll_choice_serves(&c, TOPSYNC_COLL_REDUCE, 17));
    CHECK(!topsync_coll_choice_serves(&c, TOPSYNC_COLL_REDUCE, 64));
    CHECK(topsync_coll_choice_serves(&c, TOPSYNC_COLL_REDUCE, 65));
    CHECK(topsync_coll_choice_serves(&c, TOPSYNC_COLL_REDUCE, 128));
    CHECK(strstr(c.explain[TOPSYNC_COLL_REDUCE],
                 "the MPI's own takes the calls of 17-32 B, 33-64 B (more than 1.2x faster"));
    CHECK(strstr(c.explain[TOPSYNC_COLL_REDUCE], "32 B 1.50x"));
    CHECK(!topsync_coll_choice_serves(&c, TOPSYNC_COLL_BCAST, 1));
    CHECK(!topsync_coll_choice_serves(&c, TOPSYNC_COLL_BCAST, 8));
    CHECK(topsync_coll_choice_serves(&c, TOPSYNC_COLL_BCAST, 9));
    CHECK(topsync_coll_choice_serves(&c, TOPSYNC_COLL_BCAST, 8192));
    CHECK(!topsync_coll_choice_serves(&c, TOPSYNC_COLL_BCAST, 8193));
    CHECK(topsync_coll_choice_serves(&c, TOPSYNC_COLL_BCAST, 0)); /* count 0: nothing to do */
    CHECK(strstr(c.explain[TOPSYNC_COLL_BCAST], "tuning file ") == c.explain[TOPSYNC_COLL_BCAST]);
    /* the nearest tuned count, said */
    CHECK_EQ(topsync_coll_choose(t, 3, 0, "core", ompi, &c), 0);
    CHECK(!topsync_coll_choice_serves(&c, TOPSYNC_COLL_REDUCE, 20));
    CHECK(strstr(c.explain[TOPSYNC_COLL_REDUCE], "(nearest tuned count to 3)"));
    /* another MPI, placement, oversubscription: the rules, saying why */
    CHECK_EQ(topsync_coll_choose(t, 2, 0, "core", "MPICH Version: 4.0.2", &c), 0);
    CHECK(topsync_coll_choice_serves(&c, TOPSYNC_COLL_REDUCE, 20));
    CHECK(strstr(c.explain[TOPSYNC_COLL_REDUCE], "no tuning entry for MPICH Version: 4.0.2"));
    CHECK_EQ(topsync_coll_choose(t, 2, 1, "core", ompi, &c), 0);
    CHECK(strstr(c.explain[TOPSYNC_COLL_REDUCE], "oversubscribed, placement core"));
    CHECK_EQ(topsync_coll_choose(t, 2, 0, "core", NULL, &c), 0);
    CHECK(strstr(c.explain[TOPSYNC_COLL_REDUCE], "no tuning entry for this MPI"));
    /* TOPSYNC_AUTO without the tuning step */
    setenv("TOPSYNC_AUTO", "rules", 1);
    CHECK_EQ(topsync_coll_choose(t, 2, 0, "core", ompi, &c), 0);
    CHECK(topsync_coll_choice_serves(&c, TOPSYNC_COLL_REDUCE, 20));
    CHECK(strstr(c.explain[TOPSYNC_COLL_REDUCE], "TOPSYNC_AUTO leaves out the tuning step"));
    setenv("TOPSYNC_AUTO", "fast", 1);
    CHECK_EQ(topsync_coll_choose(t, 2, 0, "core", ompi, &c), -EINVAL);
    CHECK_MSG("TOPSYNC_AUTO='fast' is not valid");
    unsetenv("TOPSYNC_AUTO");
    /* given: over the file, every kind, to the byte */
    setenv("TOPSYNC_COLL_MAX_BYTES", "100", 1);
    CHECK_EQ(topsync_coll_choose(t, 2, 0, "core", ompi, &c), 0);
    for (unsigned k = 0; k < TOPSYNC_COLL_KINDS; k++) {
        CHECK(topsync_coll_choice_serves(&c, k, 100));
        CHECK(topsync_coll_choice_serves(&c, k, 20));
        CHECK(!topsync_coll_choice_serves(&c, k, 101));
        CHECK_STR(c.explain[k], "given: TOPSYNC_COLL_MAX_BYTES=100 (topsync serves up to 100 B)");
    }
    setenv("TOPSYNC_COLL_MAX_BYTES", "4k", 1);
    CHECK_EQ(topsync_coll_choose(t, 2, 0, "core", ompi, &c), -EINVAL);
    CHECK_MSG("TOPSYNC_COLL_MAX_BYTES='4k' is not valid");
    unsetenv("TOPSYNC_COLL_MAX_BYTES");
    /* bad arguments */
    CHECK_EQ(topsync_coll_choose(NULL, 2, 0, "core", ompi, &c), -EINVAL);
    CHECK_EQ(topsync_coll_choose(t, 0, 0, "core", ompi, &c), -EINVAL);
    CHECK_EQ(topsync_coll_choose(t, 2, 0, NULL, ompi, &c), -EINVAL);
    CHECK_EQ(topsync_coll_choose(t, 2, 0, "core", ompi, NULL), -EINVAL);
    unsetenv("TOPSYNC_TUNING");
    topsync_topology_destroy(t);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    unsetenv("TOPSYNC_TUNING");
    unsetenv("TOPSYNC_AUTO");
    unsetenv("TOPSYNC_COLL_MAX_BYTES");
    setenv("XDG_CACHE_HOME", path_of("empty-cache"), 1); /* never the user's own cache */
    test_classes();
    test_put_lookup();
    test_choose();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return check_summary();
}
