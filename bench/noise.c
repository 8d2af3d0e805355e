/*
 * --noise N of topsync-bench barrier: busy neighbour processes, the other
 * work of a shared node, running while a benchmark measures (issue 35:
 * users run on nodes where other jobs take the CPUs).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

static pid_t *noise_pids;
static unsigned noise_count;

static _Noreturn void burn(void)
{
    volatile double x = 1.0; /* volatile: the loop must not be optimized away */
    for (;;)
        x = x * 1.0000001 + 1e-9;
}

int bench_noise_start(unsigned n)
{
    bench_noise_stop();
    if (n == 0)
        return 0;
    noise_pids = calloc(n, sizeof *noise_pids);
    if (!noise_pids) {
        fprintf(stderr, "topsync-bench: out of memory\n");
        return -1;
    }
    pid_t parent = getpid();
    for (unsigned i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("topsync-bench: fork (--noise)");
            bench_noise_stop();
            return -1;
        }
        if (pid == 0) {
            /* unbound, as other work is: the harness may have bound this thread */
            cpu_set_t all;
            CPU_ZERO(&all);
            for (int c = 0; c < CPU_SETSIZE; c++)
                CPU_SET(c, &all);
            sched_setaffinity(0, sizeof all, &all);
            /* dies with the benchmark, however it ends */
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent) /* the parent died before prctl */
                _exit(0);
            burn();
        }
        noise_pids[noise_count++] = pid;
    }
    return 0;
}

void bench_noise_stop(void)
{
    for (unsigned i = 0; i < noise_count; i++) {
        kill(noise_pids[i], SIGKILL);
        waitpid(noise_pids[i], NULL, 0);
    }
    free(noise_pids);
    noise_pids = NULL;
    noise_count = 0;
}
