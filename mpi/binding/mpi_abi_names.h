/* The MPI ABIs topsync serves, told by an MPI library's soname, and the
 * libtopsync-mpi of each: one table for the run-time check
 * (mpi/binding/mpi_binding.c) and topsync-info --mpi (tools/mpi_match.c). Header
 * only, no MPI header needed. docs/design.md section 6. */
#ifndef TOPSYNC_MPI_ABI_NAMES_H
#define TOPSYNC_MPI_ABI_NAMES_H

#include <string.h>

enum ts_mpi_abi { TS_MPI_ABI_OPENMPI, TS_MPI_ABI_MPICH, TS_MPI_ABI_STANDARD, TS_MPI_ABI_UNKNOWN };

static const struct {
    const char *what, *library;
} ts_mpi_abis[] = {
    [TS_MPI_ABI_OPENMPI] = {"Open MPI", "libtopsync-mpi-openmpi.so"},
    [TS_MPI_ABI_MPICH] = {"MPICH (also Intel MPI, MVAPICH)", "libtopsync-mpi-mpich.so"},
    [TS_MPI_ABI_STANDARD] = {"MPI-5 standard ABI", "libtopsync-mpi-abi.so"},
    [TS_MPI_ABI_UNKNOWN] = {"unknown", NULL},
};

/* The ABI a soname promises: libmpi_abi.so.N the standard's, libmpi.so.40
 * Open MPI's (4.x, 5.x), any *mpi*.so.12 the MPICH ABI's (libmpi.so.12,
 * Debian's libmpich.so.12, vendors' renamings). Open MPI 1.x also named
 * its library libmpi.so.12: a loaded library is asked for Open MPI's
 * symbols too (mpi_binding.c). */
static inline enum ts_mpi_abi ts_mpi_abi_of_soname(const char *soname)
{
    size_t n = strlen(soname);
    if (!strncmp(soname, "libmpi_abi.so", 13))
        return TS_MPI_ABI_STANDARD;
    if (!strcmp(soname, "libmpi.so.40") || !strncmp(soname, "libmpi.so.40.", 13))
        return TS_MPI_ABI_OPENMPI;
    if (n >= 6 && !strcmp(soname + n - 6, ".so.12") && strstr(soname, "mpi"))
        return TS_MPI_ABI_MPICH;
    return TS_MPI_ABI_UNKNOWN;
}

#endif
