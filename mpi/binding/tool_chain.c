/*
 * PMPI tools beside libtopsync-mpi: a profiler or tracer (mpiP, Score-P, a
 * counting wrapper) defines MPI_X and calls PMPI_X, exactly as topsync does,
 * so with only MPI_X defined one of the two would lose the call whatever the
 * order. libtopsync-mpi therefore defines both names for each function it
 * intercepts: its work lives in its PMPI_X, which calls the MPI's own
 * (ts_mpi_own_fn, found in the MPI library), and its MPI_X passes the call
 * to a tool's MPI_X loaded after it, else straight to its own PMPI_X.
 *   tool first:    program -> tool's MPI_X -> topsync's PMPI_X -> MPI's
 *   topsync first: program -> topsync's MPI_X -> tool's MPI_X -> topsync's PMPI_X -> MPI's
 * docs/design.md section 8.28 has the why and the limits.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <mpi.h>

#include "binding/binding.h"

ts_mpi_fnptr ts_mpi_own_fn[TS_MPI_FN_COUNT];
/* the tool's MPI_X after libtopsync-mpi in the global scope (NULL: none):
 * written once by ts_mpi_chain_resolve inside ts_mpi_bind's pthread_once */
ts_mpi_fnptr ts_mpi_tool_fn[TS_MPI_FN_COUNT];
/* the functions this thread is inside a tool's MPI_X for: a tool that calls
 * MPI_X itself (not PMPI_X) is then served rather than sent round again */
static _Thread_local __attribute__((tls_model("initial-exec"))) uint64_t in_tool;

_Static_assert(TS_MPI_FN_COUNT <= 64, "in_tool has one bit per function");

/* each function's name and its profiling name */
static const struct {
    const char *plain, *profiling;
} names[TS_MPI_FN_COUNT] = {
#define TS_MPI_C_NAMES(name) [TS_MPI_FN_##name] = {"MPI_" #name, "PMPI_" #name},
    TS_MPI_SERVED(TS_MPI_C_NAMES) TS_MPI_PASSED(TS_MPI_C_NAMES)
#undef TS_MPI_C_NAMES
        [TS_MPI_FN_mpi_barrier] = {"mpi_barrier", "pmpi_barrier"},
    [TS_MPI_FN_mpi_barrier_] = {"mpi_barrier_", "pmpi_barrier_"},
    [TS_MPI_FN_mpi_barrier__] = {"mpi_barrier__", "pmpi_barrier__"},
    [TS_MPI_FN_MPI_BARRIER] = {"MPI_BARRIER", "PMPI_BARRIER"},
    [TS_MPI_FN_mpi_barrier_f08_] = {"mpi_barrier_f08_", "pmpi_barrier_f08_"},
};

/* dlsym's object pointer as a function pointer (POSIX guarantees they
 * convert; ISO C does not say so, hence the copy) */
static ts_mpi_fnptr as_function(void *symbol)
{
    ts_mpi_fnptr fn;
    _Static_assert(sizeof fn == sizeof symbol, "function and object pointers differ in size");
    memcpy(&fn, &symbol, sizeof fn);
    return fn;
}

/* Does the object that defines `symbol` define `profiling_name` too? MPI
 * libraries define every MPI_X with its PMPI_X (a weak alias in all six of
 * the matrix); a tool defines only MPI_X. */
static int object_defines(void *symbol, const char *profiling_name)
{
    Dl_info where, other;
    if (!dladdr(symbol, &where) || !where.dli_fname)
        return 0;
    void *object = dlopen(where.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!object)
        return 0;
    void *found = dlsym(object, profiling_name); /* also searches its dependencies */
    int same = found && dladdr(found, &other) && other.dli_fbase == where.dli_fbase;
    dlclose(object);
    return same;
}

void ts_mpi_chain_resolve(void *mpi, const char *path)
{
    for (int fn = 0; fn < TS_MPI_FN_COUNT; fn++) {
        if (fn < TS_MPI_FN_SERVED_COUNT && !ts_mpi_own_fn[fn]) {
            void *own = dlsym(mpi, names[fn].profiling);
            if (!own && ts_mpi_fn_optional(fn))
                continue; /* nothing calls it: the MPI's header has no MPI_X either */
            if (!own)
                ts_mpi_refuse("%s defines no %s", path, names[fn].profiling);
            ts_mpi_own_fn[fn] = as_function(own);
        }
        /* RTLD_NEXT: the first definition after this library in the
         * global scope, i.e. a tool preloaded or linked after us */
        void *next = dlsym(RTLD_NEXT, names[fn].plain);
        if (next && !object_defines(next, names[fn].profiling))
            ts_mpi_tool_fn[fn] = as_function(next);
    }
}

void ts_mpi_chain_report(void)
{
    for (int fn = 0; fn < TS_MPI_FN_COUNT; fn++) {
        Dl_info where;
        if (ts_mpi_tool_fn[fn] && dladdr((void *)(uintptr_t)ts_mpi_tool_fn[fn], &where))
            fprintf(stderr, "topsync-mpi: %s passes through %s (a PMPI tool loaded after it)\n",
                    names[fn].plain, where.dli_fname ? where.dli_fname : "?");
    }
}

ts_mpi_fnptr ts_mpi_tool_claim(enum ts_mpi_fn fn)
{
    if (in_tool & (UINT64_C(1) << fn))
        return NULL;
    in_tool |= UINT64_C(1) << fn;
    return ts_mpi_tool_fn[fn];
}

void ts_mpi_tool_leave(enum ts_mpi_fn fn)
{
    in_tool &= ~(UINT64_C(1) << fn);
}
