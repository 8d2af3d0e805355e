/*
 * The drop-in's rows of topsync-bench barrier: the same unmodified pthread
 * program (topsync-bench-pthread-loop) run as it is, on glibc's barrier, and
 * with libtopsync-pthread preloaded, in alternating processes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "exe_dir.h"

/* $TOPSYNC_PTHREAD_SHIM, else ../lib beside an installed topsync-bench, else
 * the build tree's library. */
static const char *find_shim(const char *dir, char *buf, size_t size)
{
    const char *env = getenv("TOPSYNC_PTHREAD_SHIM");
    if (env && *env)
        return access(env, R_OK) == 0 ? env : NULL;
    static const char *const libdirs[] = {"../lib/", "../lib64/", "../lib/x86_64-linux-gnu/",
                                          "../lib/aarch64-linux-gnu/"};
    for (size_t i = 0; i < sizeof libdirs / sizeof libdirs[0]; i++) {
        snprintf(buf, size, "%s%slibtopsync-pthread.so.%s", dir, libdirs[i], TOPSYNC_SOVERSION);
        if (access(buf, R_OK) == 0)
            return buf;
    }
#ifdef TOPSYNC_PTHREAD_SHIM_BUILD
    if (access(TOPSYNC_PTHREAD_SHIM_BUILD, R_OK) == 0)
        return TOPSYNC_PTHREAD_SHIM_BUILD;
#endif
#ifdef TOPSYNC_PTHREAD_SHIM_INSTALLED
    if (access(TOPSYNC_PTHREAD_SHIM_INSTALLED, R_OK) == 0)
        return TOPSYNC_PTHREAD_SHIM_INSTALLED;
#endif
    return NULL;
}

/* One process: its one run's figure (ns), and the implementation it names. */
static double run_loop(const char *loop, const char *preload, unsigned threads, uint64_t iterations,
                       int unbound, char *impl, size_t impl_len)
{
    int fd[2];
    if (pipe(fd) < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        /* the harness may have bound this thread: the program gets every
         * CPU the process may use, as when started from a shell */
        cpu_set_t all;
        CPU_ZERO(&all);
        for (int c = 0; c < CPU_SETSIZE; c++)
            CPU_SET(c, &all);
        sched_setaffinity(0, sizeof all, &all);
        if (preload)
            setenv("LD_PRELOAD", preload, 1);
        else
            unsetenv("LD_PRELOAD");
        char t[16], k[24];
        snprintf(t, sizeof t, "%u", threads);
        snprintf(k, sizeof k, "%llu", (unsigned long long)iterations);
        execl(loop, loop, t, k, "1", unbound ? "none" : "core", (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    FILE *f = fdopen(fd[0], "r");
    double ns = -1;
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "implementation: ", 16)) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(impl, impl_len, "%s", line + 16);
        } else if (ns < 0) {
            ns = strtod(line, NULL);
        }
    }
    if (f)
        fclose(f);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? ns : -1;
}

int bench_pthread_dropin_runs(unsigned threads, uint64_t iterations, unsigned runs, int unbound,
                              double *glibc_ns, double *preload_ns, char *impl, size_t impl_len)
{
    char dir[4096], loop[4200], shim_buf[4200];
    if (tools_exe_dir(dir, sizeof dir) < 0)
        return -1;
    if (bench_find_helper("topsync-bench-pthread-loop", loop, sizeof loop) < 0) {
        fprintf(stderr, "topsync-bench: topsync-bench-pthread-loop not found (beside topsync-bench "
                        "or in its libexec/topsync): no drop-in rows\n");
        return -1;
    }
    const char *shim = find_shim(dir, shim_buf, sizeof shim_buf);
    if (!shim) {
        fprintf(stderr, "topsync-bench: libtopsync-pthread not found (set TOPSYNC_PTHREAD_SHIM): "
                        "no drop-in rows\n");
        return -1;
    }
    char glibc_impl[64] = "";
    for (unsigned r = 0; r < runs; r++) { /* alternate, so that drift hits both */
        glibc_ns[r] =
            run_loop(loop, NULL, threads, iterations, unbound, glibc_impl, sizeof glibc_impl);
        preload_ns[r] = run_loop(loop, shim, threads, iterations, unbound, impl, impl_len);
        if (glibc_ns[r] < 0 || preload_ns[r] < 0) {
            fprintf(stderr, "topsync-bench: %s failed (threads %u)\n", loop, threads);
            return -1;
        }
    }
    if (strncmp(impl, "topsync", 7) != 0) {
        fprintf(stderr, "topsync-bench: the preloaded program ran '%s', not topsync\n", impl);
        return -1;
    }
    return 0;
}
