/*
 * topsync-info --env: every TOPSYNC_* variable a user may set, its value
 * here, its default and valid values, and what it applies to; then
 * whether the library's variables are valid as set (the MPI and pthread
 * libraries check theirs where they are read). The names must match
 * src/base/env.c's list (tests/unit/env_docs_test.sh checks, and that
 * topsync(7) and the guide describe each). docs/design.md, "Layers".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include <topsync.h>

#include "info_env.h"

static const struct {
    const char *name, *applies, *valid, *fallback;
} variables[] = {
    {"TOPSYNC_BARRIER", "barriers (library, MPI, pthread)",
     "auto, an algorithm (topsync-info --list-algorithms), mpi (MPI library)", "auto"},
    {"TOPSYNC_WAIT", "barriers", "spin, yield, block", "block"},
    {"TOPSYNC_SPIN", "barriers", "0 .. 100000000 pauses", "learned; 0 when oversubscribed"},
    {"TOPSYNC_POLL", "barriers", "scan, ordered", "scan"},
    {"TOPSYNC_REACTIVE", "auto's barriers",
     "on, off, every:N (testing: switch every N episodes, N a power of two)", "on"},
    {"TOPSYNC_TIMEOUT", "barriers, collectives", "seconds 0 .. 1000000 (decimals allowed)",
     "0 (none)"},
    {"TOPSYNC_AUTO", "auto", "a comma-separated list of tuning, model, rules", "all three"},
    {"TOPSYNC_TUNING", "auto", "a file path, or off", "the per-user cache file of this machine"},
    {"TOPSYNC_RCL_PLACEMENT", "RCL", "pack, spread, default", "pack"},
    {"TOPSYNC_COLL_MAX_BYTES", "collectives", "1 .. 1048576 bytes",
     "4096 (threads); auto's choice per size (MPI)"},
    {"TOPSYNC_VERBOSE", "MPI and pthread libraries",
     "0, 1 (a start line and a summary), 2 (every detail)", "0"},
    {"TOPSYNC_MPI_OPS", "MPI library",
     "a comma-separated list of barrier, allreduce, reduce, bcast; all; none", "all"},
    {"TOPSYNC_NODE_SPLIT", "MPI library (testing)", "1 .. 1048576 pseudo-nodes per node", "1"},
    {"TOPSYNC_MPI_SETUP_AT", "MPI library", "1 .. 1000000: the barrier that sets a comm up", "2"},
    {"TOPSYNC_BENCH_MPI", "topsync-bench --mpi", "openmpi, mpich", "the MPI it runs under"},
    {"TOPSYNC_PTHREAD_SHIM", "topsync-bench", "the path of libtopsync-pthread.so",
     "found beside the tools"},
};

int ts_info_env(FILE *out)
{
    for (size_t i = 0; i < sizeof variables / sizeof variables[0]; i++) {
        const char *value = getenv(variables[i].name);
        fprintf(out, "%-24s %s\n", variables[i].name, value && *value ? value : "(unset)");
        fprintf(out, "    default: %s; valid: %s; for: %s\n", variables[i].fallback,
                variables[i].valid, variables[i].applies);
    }
    if (topsync_environment_check() < 0) {
        fprintf(out, "as set here: %s\n", topsync_error_message());
        return 1;
    }
    fprintf(out, "as set here: the library's variables are valid (the MPI library checks "
                 "TOPSYNC_VERBOSE, TOPSYNC_MPI_OPS, TOPSYNC_NODE_SPLIT and "
                 "TOPSYNC_MPI_SETUP_AT at MPI_Init)\n");
    return 0;
}
