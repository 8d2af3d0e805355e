/*
 * topsync-bench c2c's second measurement of disturbed pairs
 * (bench_c2c_remeasure, bench/c2c.c; docs/model.md, "Disturbed pairs"): on
 * a synthetic 2-package machine with a table of 40 ns inside a package and
 * 150 across, exactly the pairs far above their level are measured again,
 * the lower figure is kept, and pairs far below their level are not
 * touched. The measurement is this test's function: nothing is timed.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>

#include <topsync.h>

#include "bench.h"
#include "check.h"

enum { N = 16 };

struct fake {
    double again; /* what a second measurement gives */
    unsigned calls;
    unsigned pair[N][N];
};

static double fake_measure(void *arg, unsigned i, unsigned j)
{
    struct fake *f = arg;
    f->calls++;
    f->pair[i][j]++;
    return f->again;
}

static void fill(double *table)
{
    for (unsigned i = 0; i < N; i++)
        for (unsigned j = 0; j < N; j++)
            table[i * N + j] = i == j ? 0 : i / 8 == j / 8 ? 40 : 150;
    table[5 * N + 2] = table[2 * N + 5] = 400;   /* disturbed inside a package */
    table[12 * N + 3] = table[3 * N + 12] = 600; /* disturbed across */
    table[6 * N + 1] = table[1 * N + 6] = 4;     /* far below: structure, kept */
}

int main(void)
{
    topsync_topology_t *t = NULL;
    CHECK_EQ(topsync_topology_load_synthetic(&t, "pack:2 numa:1 core:8 pu:1"), 0);
    double table[N * N];

    /* the second measurement lower: kept, in both triangles */
    fill(table);
    struct fake f = {.again = 45};
    CHECK_EQ(bench_c2c_remeasure(t, table, N, fake_measure, &f), 2);
    CHECK_EQ(f.calls, 2);
    CHECK_EQ(f.pair[5][2], 1);
    CHECK_EQ(f.pair[12][3], 1);
    CHECK(fabs(table[5 * N + 2] - 45) < 1e-9 && fabs(table[2 * N + 5] - 45) < 1e-9);
    CHECK(fabs(table[12 * N + 3] - 45) < 1e-9);
    CHECK(fabs(table[6 * N + 1] - 4) < 1e-9); /* far below: never measured again */
    CHECK(fabs(table[8 * N + 0] - 150) < 1e-9);

    /* higher again (a second disturbance), or failed: the first stays */
    fill(table);
    struct fake g = {.again = 900};
    CHECK_EQ(bench_c2c_remeasure(t, table, N, fake_measure, &g), 2);
    CHECK(fabs(table[5 * N + 2] - 400) < 1e-9);
    fill(table);
    struct fake h = {.again = -1};
    CHECK_EQ(bench_c2c_remeasure(t, table, N, fake_measure, &h), 2);
    CHECK(fabs(table[12 * N + 3] - 600) < 1e-9);

    /* an undisturbed table: nothing measured again */
    fill(table);
    table[5 * N + 2] = table[2 * N + 5] = 40;
    table[12 * N + 3] = table[3 * N + 12] = 150;
    struct fake u = {.again = 1};
    CHECK_EQ(bench_c2c_remeasure(t, table, N, fake_measure, &u), 0);
    CHECK_EQ(u.calls, 0);

    /* a table the topology cannot take: an error, not a guess */
    CHECK_EQ(bench_c2c_remeasure(t, table, 3, fake_measure, &u), -1);
    topsync_topology_destroy(t);
    return check_summary();
}
