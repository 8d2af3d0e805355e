/*
 * Liveness: with a timeout, a wait for a participant that never comes (it
 * hangs, or was killed with SIGKILL in the middle of a run) fails with a
 * message naming it, for every algorithm, threads and forked processes;
 * the barrier is then broken; invalid TOPSYNC_TIMEOUT values are errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <topsync.h>

#include "check.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Entries of topsync's in /dev/shm: a killed participant must leave none. */
static int shm_entries(void)
{
    DIR *d = opendir("/dev/shm");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strstr(e->d_name, "topsync") != NULL;
    if (d)
        closedir(d);
    return n;
}

struct waiter {
    topsync_barrier_t *b;
    unsigned rank;
    int rc, again;
    char message[512];
};

static void *wait_once(void *p)
{
    struct waiter *w = p;
    w->rc = topsync_barrier_wait_checked(w->b, w->rank);
    snprintf(w->message, sizeof w->message, "%s", topsync_error_message());
    w->again = topsync_barrier_wait_checked(w->b, w->rank);
    return NULL;
}

/* Threads 0 and 1 of 3 wait; 2 never comes. */
static void test_threads(const char *algorithm, topsync_wait_policy_t policy)
{
    topsync_barrier_options_t o;
    topsync_barrier_options_init(&o);
    o.algorithm = algorithm;
    o.wait = policy;
    o.timeout_seconds = 0.2;
    topsync_barrier_t *b;
    CHECK_EQ(topsync_barrier_create(&b, 3, &o), 0);
    struct waiter w[2] = {{b, 0, 0, 0, ""}, {b, 1, 0, 0, ""}};
    pthread_t t[2];
    double start = now();
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, wait_once, &w[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    double took = now() - start;
    for (int i = 0; i < 2; i++) {
        CHECK_EQ(w[i].rc, -ETIMEDOUT);
        CHECK(strstr(w[i].message, "not arrived: 2") != NULL);
        CHECK_EQ(w[i].again, -EPIPE);
        if (w[i].rc != -ETIMEDOUT || !strstr(w[i].message, "not arrived: 2"))
            fprintf(stderr, "%s: rank %d: rc %d '%s'\n", algorithm, i, w[i].rc, w[i].message);
    }
    CHECK(took < 5.0); /* within the timeout, give or take scheduling */
    unsigned missing[4];
    CHECK_EQ(topsync_barrier_missing(b, 0, missing, 4), 1);
    CHECK_EQ(missing[0], 2);
    CHECK_EQ(topsync_barrier_destroy(b), 0);
}

/* Four forked processes; process 2 kills itself with SIGKILL at episode
 * 100; the others must report it, each within the timeout. */
static void test_processes_kill9(const char *algorithm, int use_plain_wait)
{
    topsync_barrier_options_t o;
    topsync_barrier_options_init(&o);
    o.algorithm = algorithm;
    o.process_shared = 1;
    o.timeout_seconds = 0.5;
    topsync_barrier_t *b;
    int shm_before = shm_entries();
    CHECK_EQ(topsync_barrier_create(&b, 4, &o), 0);
    int pipes[4][2];
    pid_t pids[4];
    fflush(NULL);
    double start = now();
    for (unsigned r = 0; r < 4; r++) {
        if (pipe(pipes[r]) < 0)
            abort();
        pids[r] = fork();
        if (pids[r] == 0) {
            dup2(pipes[r][1], 2);
            for (int e = 1; e <= 1000; e++) {
                if (r == 2 && e == 100)
                    raise(SIGKILL);
                if (use_plain_wait) {
                    topsync_barrier_wait(b, r); /* aborts with the message */
                    continue;
                }
                int rc = topsync_barrier_wait_checked(b, r);
                if (rc == -ETIMEDOUT) {
                    fprintf(stderr, "%s\n", topsync_error_message());
                    _exit(e == 100 && strstr(topsync_error_message(), "not arrived: 2") ? 0 : 3);
                }
                if (rc < 0)
                    _exit(4);
            }
            _exit(5); /* nobody may get through episode 100 */
        }
        close(pipes[r][1]);
    }
    for (unsigned r = 0; r < 4; r++) {
        char buf[1024] = "";
        ssize_t n = read(pipes[r][0], buf, sizeof buf - 1);
        buf[n > 0 ? n : 0] = '\0';
        close(pipes[r][0]);
        int status = 0;
        waitpid(pids[r], &status, 0);
        if (r == 2) {
            CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        } else if (use_plain_wait) {
            CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
            CHECK(strstr(buf, "not arrived: 2") != NULL);
        } else {
            CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fprintf(stderr, "%s: process %u: status %d: %s\n", algorithm, r, status, buf);
        }
    }
    CHECK(now() - start < 10.0);
    CHECK_EQ(topsync_barrier_destroy(b), 0);
    CHECK_EQ(shm_entries(), shm_before);
}

/* Everybody arrives, but a releaser dies before releasing (issue 13 item
 * 5): in a 4-participant tournament, 2 beats 3 and loses to 0, and wakes 3
 * once 0 woke it. Kill 2 while it waits for 0; 0 then completes the episode
 * with 1, and 3 must time out naming 2 as its releaser (the report used to
 * say "none (they arrived since)"). Same for MCS (rank 3 is woken by 1). */
static void test_dead_releaser(const char *algorithm, unsigned victim, unsigned waiter)
{
    topsync_barrier_options_t o;
    topsync_barrier_options_init(&o);
    o.algorithm = algorithm;
    o.process_shared = 1;
    o.timeout_seconds = 1.0;
    topsync_barrier_t *b;
    CHECK_EQ(topsync_barrier_create(&b, 4, &o), 0);
    int fds[2];
    if (pipe(fds) < 0)
        abort();
    fflush(NULL);
    pid_t pids[4] = {0};
    for (unsigned r = 1; r < 4; r++) {
        pids[r] = fork();
        if (pids[r] == 0) {
            if (r == waiter)
                dup2(fds[1], 2);
            close(fds[0]);
            close(fds[1]);
            int rc = topsync_barrier_wait_checked(b, r);
            if (rc == -ETIMEDOUT)
                fprintf(stderr, "%s\n", topsync_error_message());
            _exit(rc == 0 ? 0 : 1);
        }
    }
    close(fds[1]);
    /* the victim has entered the episode (and 0 has not): let it reach its
     * wait, then kill it */
    unsigned shown[4];
    double start = now();
    while (topsync_barrier_missing(b, victim, shown, 4) < 1 && now() - start < 5)
        usleep(1000);
    usleep(200000);
    kill(pids[victim], SIGKILL);
    CHECK_EQ(topsync_barrier_wait_checked(b, 0), 0);
    char buf[1024] = "";
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = '\0';
    close(fds[0]);
    int waiter_status = 0;
    for (unsigned r = 1; r < 4; r++) {
        int status = 0;
        waitpid(pids[r], &status, 0);
        if (r == waiter)
            waiter_status = status;
    }
    char expect[64];
    snprintf(expect, sizeof expect, "participant %u, which releases participant %u", victim,
             waiter);
    CHECK(WIFEXITED(waiter_status) && WEXITSTATUS(waiter_status) == 1);
    CHECK(strstr(buf, "all arrived") != NULL);
    CHECK(strstr(buf, expect) != NULL);
    if (!strstr(buf, expect))
        fprintf(stderr, "%s: expected \"%s\" in: %s\n", algorithm, expect, buf);
    topsync_barrier_destroy(b);
}

static void test_configuration(void)
{
    topsync_barrier_t *b;
    topsync_barrier_options_t o;
    topsync_barrier_options_init(&o);
    setenv("TOPSYNC_TIMEOUT", "soon", 1);
    CHECK_EQ(topsync_barrier_create(&b, 2, NULL), -EINVAL);
    CHECK_MSG("valid: a number of seconds");
    CHECK_EQ(topsync_environment_check(), -EINVAL);
    setenv("TOPSYNC_TIMEOUT", "-1", 1);
    CHECK_EQ(topsync_barrier_create(&b, 2, NULL), -EINVAL);
    setenv("TOPSYNC_TIMEOUT", "0.25", 1);
    CHECK_EQ(topsync_environment_check(), 0);
    /* the variable arms the timeout when the program sets none */
    CHECK_EQ(topsync_barrier_create(&b, 2, NULL), 0);
    CHECK_EQ(topsync_barrier_wait_checked(b, 0), -ETIMEDOUT);
    CHECK_MSG("not arrived: 1");
    topsync_barrier_destroy(b);
    /* negative: no timeout, whatever the variable says */
    o.timeout_seconds = -1;
    CHECK_EQ(topsync_barrier_create(&b, 1, &o), 0);
    for (int i = 0; i < 100; i++)
        CHECK_EQ(topsync_barrier_wait_checked(b, 0), 0);
    topsync_barrier_destroy(b);
    unsetenv("TOPSYNC_TIMEOUT");
    o.timeout_seconds = 2e6;
    CHECK_EQ(topsync_barrier_create(&b, 2, &o), -EINVAL);
    CHECK_EQ(topsync_barrier_missing(NULL, 0, NULL, 0), -EINVAL);
}

int main(void)
{
    alarm(240);
    for (const char *const *name = topsync_barrier_algorithm_names(); *name; name++) {
        test_threads(*name, TOPSYNC_WAIT_BLOCK);
        test_processes_kill9(*name, 0);
    }
    test_threads("dissemination", TOPSYNC_WAIT_SPIN);
    test_threads("sense-reversing", TOPSYNC_WAIT_YIELD);
    test_threads("topo", TOPSYNC_WAIT_SPIN);
    test_processes_kill9("sense-reversing", 1);
    test_dead_releaser("tournament", 2, 3);
    test_dead_releaser("mcs", 1, 3);
    test_configuration();
    return check_summary();
}
