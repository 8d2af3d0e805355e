/*
 * GenMC harness: publishing auto's chooser (src/barrier/settings.c,
 * included as it is). The publisher fills a chooser with plain writes and
 * hands it over with ts_barrier_set_chooser(), as select/auto.c's
 * constructor does; two readers call auto_check(), as every barrier made
 * with "auto" does, and call through what they read. Under every RC11
 * execution a reader sees either no chooser or a whole one: no data race
 * on its fields (release in ts_barrier_set_chooser, acquire in
 * auto_check). Weakened (-DWEAKEN_IN=ts_barrier_set_chooser): the release
 * relaxed; GenMC must report the race.
 */
#include "genmc_shim.h"

#include <assert.h>

#include "../../src/barrier/settings.c"

static atomic_int checks;

static int check_counted(void)
{
    atomic_fetch_add_explicit(&checks, 1, memory_order_relaxed);
    return 0;
}

static struct ts_barrier_chooser published; /* plain fields, written once */

static void *publisher(void *arg)
{
    (void)arg;
    published.check = check_counted;
    published.choose = NULL;
    ts_barrier_set_chooser(&published);
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    assert(auto_check() == 0);
    return NULL;
}

int main(void)
{
    pthread_t p, r1, r2;
    pthread_create(&p, NULL, publisher, NULL);
    pthread_create(&r1, NULL, reader, NULL);
    pthread_create(&r2, NULL, reader, NULL);
    pthread_join(p, NULL);
    pthread_join(r1, NULL);
    pthread_join(r2, NULL);
    return 0;
}
