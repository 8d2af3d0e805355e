/*
 * Reading TOPSYNC_* variables by one rule (env.h), and the warning for a
 * TOPSYNC_* variable nobody reads (a typo such as TOPSYNC_BARIER would
 * otherwise be silently ignored). docs/design.md section "Layers" (base).
 */
#include "base/env.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

extern char **environ;

/* Every TOPSYNC_* variable read anywhere: the library, the MPI and
 * pthread libraries, the tools and benchmarks, and the scripts and tests
 * (so that running those never warns). README "Configuration" and
 * topsync(7) describe the first group. */
static const char *const known_variables[] = {
    /* library */
    "TOPSYNC_BARRIER", "TOPSYNC_WAIT", "TOPSYNC_SPIN", "TOPSYNC_POLL", "TOPSYNC_TIMEOUT",
    "TOPSYNC_REACTIVE", "TOPSYNC_AUTO", "TOPSYNC_TUNING", "TOPSYNC_RCL_PLACEMENT",
    "TOPSYNC_COLL_MAX_BYTES",
    /* MPI library */
    "TOPSYNC_VERBOSE", "TOPSYNC_NODE_SPLIT", "TOPSYNC_MPI_SETUP_AT", "TOPSYNC_MPI_OPS",
    /* benchmarks */
    "TOPSYNC_BENCH_MPI", "TOPSYNC_PTHREAD_SHIM",
    /* scripts and tests */
    "TOPSYNC_SANITIZERS", "TOPSYNC_SANITIZE", "TOPSYNC_FUZZ", "TOPSYNC_FUZZ_SECONDS",
    "TOPSYNC_FUZZ_SEED", "TOPSYNC_SETUP_MPI", "TOPSYNC_SETUP_MPI_MATRIX", "TOPSYNC_SETUP_NUMA_VM",
    "TOPSYNC_SETUP_GENMC", "TOPSYNC_SETUP_APPS", "TOPSYNC_SETUP_SUITES", "TOPSYNC_SUITES",
    "TOPSYNC_NUMA_VM_CACHE", "TOPSYNC_NUMA_VM_TIMEOUT", "TOPSYNC_MACHINE_VM",
    "TOPSYNC_MACHINE_VM_ACCEL", "TOPSYNC_MACHINE_VM_BOOT", "TOPSYNC_MACHINE_VM_EPISODES",
    "TOPSYNC_MACHINE_VM_KVM_BOOT", "TOPSYNC_MACHINE_VM_PLAN", "TOPSYNC_MACHINE_VM_QEMU",
    "TOPSYNC_MACHINE_VM_TIMEOUT", "TOPSYNC_MACHINE_VM_IDLE_MS", "TOPSYNC_MPI_MATRIX_DIR",
    "TOPSYNC_MPI_IMPLS", "TOPSYNC_MPI_ABI_INCLUDE_DIR", "TOPSYNC_GENMC", "TOPSYNC_GENMC_TARBALL",
    "TOPSYNC_EXPECT", "TOPSYNC_EXPECT_PMPI", "TOPSYNC_BUILDING", NULL};

/* Edit distance, for "did you mean"; names are short (< 64). */
static unsigned distance(const char *a, size_t la, const char *b)
{
    size_t lb = strlen(b);
    unsigned row[64];
    if (la >= 63 || lb >= 63)
        return 99;
    for (size_t j = 0; j <= lb; j++)
        row[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        unsigned diagonal = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            unsigned above = row[j];
            unsigned cost = diagonal + (a[i - 1] != b[j - 1]);
            unsigned best = above + 1 < row[j - 1] + 1 ? above + 1 : row[j - 1] + 1;
            row[j] = cost < best ? cost : best;
            diagonal = above;
        }
    }
    return row[lb];
}

/* NULL when the first len bytes of `name` are a known variable; else the
 * closest known one when it is plausibly a typo of it, or "" when none is. */
static const char *unknown_variable(const char *name, size_t len)
{
    const char *closest = "";
    unsigned best = 99;
    for (const char *const *k = known_variables; *k; k++) {
        if (strlen(*k) == len && !strncmp(*k, name, len))
            return NULL;
        unsigned d = distance(name, len, *k);
        if (d < best) {
            best = d;
            closest = *k;
        }
    }
    return best <= 2 || best * 4 <= len - 8 ? closest : "";
}

/* One line per TOPSYNC_* variable of the environment that nothing reads,
 * each prefixed, so that grep finds them. */
static void warn_unknown(void)
{
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "TOPSYNC_", 8))
            continue;
        const char *eq = strchr(*e, '=');
        int len = (int)(eq ? (size_t)(eq - *e) : strlen(*e));
        const char *closest = unknown_variable(*e, (size_t)len);
        if (!closest)
            continue;
        if (*closest)
            fprintf(stderr,
                    "topsync: warning: %.*s is not a variable topsync reads, ignored; did you "
                    "mean %s?\n",
                    len, *e, closest);
        else
            fprintf(stderr,
                    "topsync: warning: %.*s is not a variable topsync reads, ignored "
                    "(topsync(7) and docs/guide/configuration.md list them)\n",
                    len, *e);
    }
}

const char *ts_getenv(const char *name)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, warn_unknown);
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

bool ts_env_parse_whole(const char *v, long min, long max, long *out)
{
    if (!*v || strlen(v) > 18)
        return false;
    long n = 0;
    for (const char *p = v; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        n = n * 10 + (*p - '0');
    }
    if (n < min || n > max)
        return false;
    *out = n;
    return true;
}

/* Digits with an optional fraction, from 0 to max. */
static bool parse_decimal(const char *v, double max, double *out)
{
    /* by hand, not strtod: a program's LC_NUMERIC may want ',' */
    const char *p = v;
    size_t digits = 0, fraction = 0;
    double t = 0, scale = 1;
    for (; *p >= '0' && *p <= '9'; p++, digits++)
        t = t * 10 + (*p - '0');
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++, fraction++)
            t += (*p - '0') * (scale /= 10);
    if (*p || (digits == 0 && fraction == 0) || digits > 15 || !(t <= max))
        return false;
    *out = t;
    return true;
}

int ts_env_whole(const char *name, long min, long max, const char *unit, long *out)
{
    const char *v = ts_getenv(name);
    if (!v)
        return 0;
    if (!ts_env_parse_whole(v, min, max, out))
        return ts_fail(EINVAL,
                       "%s='%s' is not valid; valid: a whole number of %s from %ld to %ld, "
                       "in decimal digits",
                       name, v, unit, min, max);
    return 1;
}

int ts_env_seconds(const char *name, double max, double *out)
{
    const char *v = ts_getenv(name);
    if (!v)
        return 0;
    if (!parse_decimal(v, max, out))
        return ts_fail(EINVAL,
                       "%s='%s' is not valid; valid: a number of seconds from 0 to %.0f, "
                       "in decimal digits with an optional fraction, e.g. 30 or 0.5",
                       name, v, max);
    return 1;
}

int ts_env_verbose(void)
{
    const char *v = getenv("TOPSYNC_VERBOSE");
    if (!v || !*v)
        return 0;
    return v[1] == '\0' && v[0] >= '0' && v[0] <= '2' ? v[0] - '0' : -1;
}
