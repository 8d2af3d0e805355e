/*
 * RCL stress: C client threads, L locks spread over S servers, each client
 * doing N critical sections on locks chosen by a per-client random walk.
 * Inside each critical section: the lock's counter and the client's own
 * tally for that lock are incremented, and a plain "inside" flag catches
 * two critical sections of one lock overlapping. After every round (all
 * clients joined) the invariant is checked: every lock's counter equals the
 * sum of the clients' tallies for it, and equals what the clients counted
 * on their side. Rounds restart servers (start/stop cycles).
 *
 *   stress_rcl --clients 1,2,8,64 --locks 4 --servers 2 --ops 2000 --rounds 3
 *              [--wait spin|yield|block] [--takeover-us N] [--sleep-every N]
 * Prints "FAIL ..." on a violated invariant; alarm() turns a hang into one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <topsync.h>

#define MAX_CLIENTS 256
#define MAX_LOCKS 64

struct lock_state {
    long counter;
    int inside;
    int overlaps;
    long tally[MAX_CLIENTS]; /* written inside the critical section */
};

struct request {
    struct lock_state *lock;
    unsigned client;
};

/* Every sleep_every-th critical section of a lock sleeps: a blocking
 * critical section in the middle of the traffic, so that standby threads
 * take over while other locks' requests keep arriving. */
static unsigned sleep_every;

static void *critical_section(void *p)
{
    struct request *r = p;
    struct lock_state *l = r->lock;
    if (l->inside)
        l->overlaps++;
    l->inside = 1;
    l->counter++;
    l->tally[r->client]++;
    if (sleep_every && l->counter % sleep_every == 0)
        usleep(300);
    l->inside = 0;
    return (void *)(uintptr_t)l->counter;
}

struct client {
    unsigned id, ops, nlocks;
    topsync_rcl_lock_t **locks;
    struct lock_state *states;
    long done[MAX_LOCKS];
    int bad_result;
};

static void *client_main(void *p)
{
    struct client *c = p;
    uint64_t x = 0x9e3779b97f4a7c15ull * (c->id + 1);
    for (unsigned i = 0; i < c->ops; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        unsigned k = (unsigned)(x % c->nlocks);
        struct request r = {&c->states[k], c->id};
        uintptr_t seen = (uintptr_t)topsync_rcl_execute(c->locks[k], critical_section, &r);
        if (seen == 0) /* the counter after our increment is at least 1 */
            c->bad_result = 1;
        c->done[k]++;
    }
    return NULL;
}

static unsigned parse_list(const char *s, unsigned *out, unsigned max)
{
    unsigned n = 0;
    char *copy = strdup(s), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t && n < max; t = strtok_r(NULL, ",", &save))
        out[n++] = (unsigned)strtoul(t, NULL, 10);
    free(copy);
    return n;
}

int main(int argc, char **argv)
{
    unsigned clients_list[16] = {1, 2, 8, 64}, nlists = 4;
    unsigned nlocks = 4, nservers = 2, ops = 2000, rounds = 3, takeover_us = 0;
    topsync_wait_policy_t wait = TOPSYNC_WAIT_DEFAULT;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--clients"))
            nlists = parse_list(argv[i + 1], clients_list, 16);
        else if (!strcmp(argv[i], "--locks"))
            nlocks = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--servers"))
            nservers = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--ops"))
            ops = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds"))
            rounds = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--sleep-every"))
            sleep_every = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--takeover-us"))
            takeover_us = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--wait")) {
            if (topsync_wait_policy_parse(argv[i + 1], &wait) < 0) {
                fprintf(stderr, "FAIL: %s\n", topsync_error_message());
                return 2;
            }
        } else {
            fprintf(stderr, "FAIL: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (!nlocks || nlocks > MAX_LOCKS || !nservers || nservers > nlocks) {
        fprintf(stderr, "FAIL: need 1 <= servers <= locks <= %d\n", MAX_LOCKS);
        return 2;
    }
    alarm(240);
    topsync_rcl_options_t o;
    topsync_rcl_options_init(&o);
    o.wait = wait;
    o.takeover_us = takeover_us;
    topsync_rcl_runtime_t *rt;
    if (topsync_rcl_runtime_create(&rt, &o) < 0) {
        fprintf(stderr, "FAIL: %s\n", topsync_error_message());
        return 1;
    }
    int failures = 0;
    for (unsigned li = 0; li < nlists; li++) {
        unsigned nclients = clients_list[li];
        unsigned long takeovers = 0;
        if (!nclients || nclients > MAX_CLIENTS) {
            fprintf(stderr, "FAIL: clients must be 1..%d\n", MAX_CLIENTS);
            return 2;
        }
        for (unsigned round = 0; round < rounds; round++) {
            topsync_rcl_server_t *servers[MAX_LOCKS];
            topsync_rcl_lock_t *locks[MAX_LOCKS];
            struct lock_state *states = calloc(nlocks, sizeof *states);
            struct client *cl = calloc(nclients, sizeof *cl);
            pthread_t *threads = calloc(nclients, sizeof *threads);
            for (unsigned s = 0; s < nservers; s++)
                if (topsync_rcl_server_start(rt, TOPSYNC_RCL_CORE_AUTO, &servers[s]) < 0) {
                    fprintf(stderr, "FAIL: server start: %s\n", topsync_error_message());
                    return 1;
                }
            for (unsigned k = 0; k < nlocks; k++)
                if (topsync_rcl_lock_create(servers[k % nservers], &locks[k]) < 0) {
                    fprintf(stderr, "FAIL: lock create: %s\n", topsync_error_message());
                    return 1;
                }
            for (unsigned c = 0; c < nclients; c++) {
                cl[c] = (struct client){
                    .id = c, .ops = ops, .nlocks = nlocks, .locks = locks, .states = states};
                pthread_create(&threads[c], NULL, client_main, &cl[c]);
            }
            for (unsigned c = 0; c < nclients; c++)
                pthread_join(threads[c], NULL);
            long total = 0;
            for (unsigned k = 0; k < nlocks; k++) {
                long tallies = 0, done = 0;
                for (unsigned c = 0; c < nclients; c++) {
                    tallies += states[k].tally[c];
                    done += cl[c].done[k];
                    if (states[k].tally[c] != cl[c].done[k]) {
                        fprintf(stderr,
                                "FAIL: clients=%u round=%u lock=%u client=%u: %ld "
                                "critical sections ran, %ld returned\n",
                                nclients, round, k, c, states[k].tally[c], cl[c].done[k]);
                        failures++;
                    }
                }
                if (states[k].counter != tallies || states[k].counter != done ||
                    states[k].overlaps) {
                    fprintf(stderr,
                            "FAIL: clients=%u round=%u lock=%u: counter %ld, tallies "
                            "%ld, returned %ld, overlaps %d\n",
                            nclients, round, k, states[k].counter, tallies, done,
                            states[k].overlaps);
                    failures++;
                }
                total += states[k].counter;
                if (topsync_rcl_lock_destroy(locks[k]) < 0) {
                    fprintf(stderr, "FAIL: lock destroy: %s\n", topsync_error_message());
                    failures++;
                }
            }
            for (unsigned c = 0; c < nclients; c++)
                if (cl[c].bad_result) {
                    fprintf(stderr, "FAIL: client %u got a wrong result\n", c);
                    failures++;
                }
            if (total != (long)nclients * ops) {
                fprintf(stderr, "FAIL: clients=%u round=%u: %ld increments, expected %ld\n",
                        nclients, round, total, (long)nclients * ops);
                failures++;
            }
            for (unsigned s = 0; s < nservers; s++) {
                topsync_rcl_server_stats_t st;
                topsync_rcl_server_stats(servers[s], &st);
                takeovers += st.takeovers;
            }
            for (unsigned s = 0; s < nservers; s++)
                if (topsync_rcl_server_stop(servers[s]) < 0) {
                    fprintf(stderr, "FAIL: server stop: %s\n", topsync_error_message());
                    failures++;
                }
            free(states);
            free(cl);
            free(threads);
        }
        printf("clients=%u locks=%u servers=%u ops=%u rounds=%u takeovers=%lu: %s\n", nclients,
               nlocks, nservers, ops, rounds, takeovers, failures ? "FAIL" : "ok");
    }
    if (topsync_rcl_runtime_destroy(rt) < 0) {
        fprintf(stderr, "FAIL: %s\n", topsync_error_message());
        failures++;
    }
    return failures ? 1 : 0;
}
