#define _POSIX_C_SOURCE 200809L
/* What the benchmark drivers share: run summaries and option parsing. */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "exe_dir.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A sorted copy of the runs; 0, or -1 for a bad count. */
static int sorted_runs(const double *runs, unsigned nruns, double *sorted)
{
    if (nruns == 0 || nruns > BENCH_MAX_RUNS)
        return -1;
    memcpy(sorted, runs, nruns * sizeof *runs);
    qsort(sorted, nruns, sizeof *sorted, cmp_double);
    return 0;
}

double bench_protocol_summary(const double *runs, unsigned nruns)
{
    double sorted[BENCH_MAX_RUNS];
    if (sorted_runs(runs, nruns, sorted) < 0)
        return -1;
    unsigned lo = nruns >= 3 ? 1 : 0, hi = nruns >= 3 ? nruns - 1 : nruns;
    double sum = 0;
    for (unsigned i = lo; i < hi; i++)
        sum += sorted[i];
    return sum / (hi - lo);
}

const char *bench_protocol_words(unsigned nruns, char *buf, size_t len)
{
    if (nruns >= 3)
        snprintf(buf, len,
                 "the mean of the %u middle runs of %u (smallest and largest dropped, the "
                 "barrier paper's protocol); the median beside it",
                 nruns - 2, nruns);
    else
        snprintf(buf, len, "the mean of %u run%s; the median beside it", nruns,
                 nruns == 1 ? "" : "s");
    return buf;
}

double bench_median_in_place(double *v, unsigned n)
{
    if (n == 0)
        return -1;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int progress_shown; /* a line is on the terminal (one thread reports) */

void bench_progress(const char *tool, unsigned done, unsigned total, const char *what)
{
    static int tty = -1;
    if (tty < 0)
        tty = isatty(STDERR_FILENO);
    if (!tty)
        return;
    fprintf(stderr, "\r\033[K%s: %u/%u %s", tool, done, total, what);
    fflush(stderr);
    progress_shown = 1;
}

void bench_progress_end(void)
{
    if (progress_shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        progress_shown = 0;
    }
}

double bench_median(const double *runs, unsigned nruns)
{
    double sorted[BENCH_MAX_RUNS];
    if (nruns > BENCH_MAX_RUNS)
        return -1;
    memcpy(sorted, runs, nruns * sizeof *runs);
    return bench_median_in_place(sorted, nruns);
}

int bench_check_list(const char *option, const char *list)
{
    size_t n = strlen(list);
    if (n == 0) {
        fprintf(stderr, "topsync-bench: %s is empty\n", option);
        return -1;
    }
    if (list[0] == ',' || list[n - 1] == ',' || strstr(list, ",,")) {
        fprintf(stderr, "topsync-bench: %s '%s' has an empty element\n", option, list);
        return -1;
    }
    return 0;
}

int bench_parse_u64(const char *s, uint64_t *out, uint64_t min, uint64_t max)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

void bench_mpi_usage(FILE *f)
{
    fprintf(f,
            "usage: mpirun ... topsync-bench barrier --mpi [--algorithm NAME|all|none]\n"
            "          [--wait POLICY] [--iterations K] [--runs R] [--budget-ms MS]\n"
            "          [--peer-name NAME] [--label TEXT] [--json] [--output FILE]\n"
            "       mpirun ... topsync-tune --mpi [--iterations K] [--runs R] [--output FILE]\n");
}

int bench_find_helper(const char *name, char *path, size_t size)
{
    char self[4096];
    if (tools_exe_dir(self, sizeof self) == 0) {
        static const char *const relative[] = {"", "../libexec/topsync/"};
        for (size_t i = 0; i < sizeof relative / sizeof relative[0]; i++) {
            snprintf(path, size, "%s%s%s", self, relative[i], name);
            if (access(path, X_OK) == 0)
                return 0;
        }
    }
#ifdef TOPSYNC_HELPER_DIR
    snprintf(path, size, "%s/%s", TOPSYNC_HELPER_DIR, name);
    if (access(path, X_OK) == 0)
        return 0;
#endif
    return -1;
}

int bench_mpi_helper(const char *tool, const char *base, char *path, size_t size,
                     const char **impl_out)
{
    const char *impl = getenv("TOPSYNC_BENCH_MPI");
    if (!impl) {
        if (getenv("OMPI_COMM_WORLD_SIZE"))
            impl = "openmpi";
        else if (getenv("PMI_SIZE") || getenv("PMI_RANK") || getenv("MPI_LOCALRANKID"))
            impl = "mpich";
    }
    if (!impl) {
        fprintf(stderr,
                "%s: --mpi must run under mpirun (Open MPI) or mpiexec "
                "(MPICH); set TOPSYNC_BENCH_MPI=openmpi|mpich to force one\n",
                tool);
        return 2;
    }
    if (strcmp(impl, "openmpi") && strcmp(impl, "mpich")) {
        fprintf(stderr, "%s: TOPSYNC_BENCH_MPI='%s'; valid: openmpi, mpich\n", tool, impl);
        return 2;
    }
    char name[64];
    snprintf(name, sizeof name, "%s-%s", base, impl);
    if (bench_find_helper(name, path, size) < 0) {
        fprintf(stderr, "%s: %s not found (looked beside %s and in its libexec/topsync)\n", tool,
                name, tool);
        return 1;
    }
    *impl_out = impl;
    return 0;
}

int bench_mpi_sibling(const char *tool, char *path, size_t size, const char **impl_out)
{
    return bench_mpi_helper(tool, "topsync-bench-mpi", path, size, impl_out);
}

unsigned bench_fastest(const double *latency, unsigned n, unsigned *top, unsigned k)
{
    unsigned ntop = 0;
    while (ntop < k) {
        int best = -1;
        for (unsigned c = 0; c < n; c++) {
            int taken = 0;
            for (unsigned j = 0; j < ntop; j++)
                taken |= top[j] == c;
            if (!taken && latency[c] > 0 && (best < 0 || latency[c] < latency[best]))
                best = (int)c;
        }
        if (best < 0)
            break;
        top[ntop++] = (unsigned)best;
    }
    return ntop;
}

void bench_print_fastest(const topsync_tuning_t *tuning, const topsync_tuning_entry_t *entry)
{
    topsync_tuning_entry_t sorted;
    if (topsync_tuning_lookup(tuning, entry->participants, entry->processes, entry->oversubscribed,
                              entry->placement, &sorted) < 0)
        return;
    printf("  fastest:");
    for (unsigned k = 0; k < sorted.nresults && k < 3; k++)
        printf("%s %s/%s %.0f ns", k ? "," : "", sorted.results[k].algorithm,
               topsync_wait_policy_to_string(sorted.results[k].wait), sorted.results[k].latency_ns);
}

int bench_topology_load(const char *tool, topsync_topology_t **out)
{
    if (topsync_topology_load(out) < 0) {
        fprintf(stderr, "%s: %s\n", tool, topsync_error_message());
        return 1;
    }
    const char *source = topsync_topology_source(*out);
    if (strcmp(source, "this machine") != 0) {
        fprintf(stderr,
                "%s: the topology is not this machine's (%s): a benchmark binds to "
                "and measures the machine it runs on; unset HWLOC_SYNTHETIC and "
                "HWLOC_XMLFILE\n",
                tool, source);
        topsync_topology_destroy(*out);
        *out = NULL;
        return 2;
    }
    return 0;
}

topsync_tuning_t *bench_tuning_open(const topsync_topology_t *t, const char *path, int *refused)
{
    topsync_tuning_t *tu = NULL;
    int rc = topsync_tuning_load(&tu, path, t);
    *refused = 0;
    if (rc == 0)
        return tu;
    if (rc == -EINVAL || rc == -ENOMEM) {
        fprintf(stderr,
                "topsync-tune: %s; not overwritten (remove it, or give another "
                "--output)\n",
                topsync_error_message());
        *refused = rc == -EINVAL;
        return NULL;
    }
    if (rc != -ENOENT)
        fprintf(stderr, "topsync-tune: replacing %s: %s\n", path, topsync_error_message());
    if (topsync_tuning_create(&tu, t) < 0) {
        fprintf(stderr, "topsync-tune: %s\n", topsync_error_message());
        return NULL;
    }
    return tu;
}
