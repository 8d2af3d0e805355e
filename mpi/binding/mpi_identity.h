/* The MPI library's name as tuning files key the collectives' entries
 * (include/topsync/tune.h, topsync_tuning_coll_entry_t.mpi): the first line
 * of MPI_Get_library_version up to its first comma, runs of blanks made
 * one space. Header only: libtopsync-mpi and topsync-tune --mpi must name
 * the MPI alike. docs/design.md section 9.6. */
#ifndef TOPSYNC_MPI_IDENTITY_H
#define TOPSYNC_MPI_IDENTITY_H

#include <stddef.h>
#include <stdio.h>

#include <mpi.h>

static inline void ts_mpi_identity(char *out, size_t len)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING + 1]; /* 8 KiB under MPICH */
    int n = 0;
    if (PMPI_Get_library_version(version, &n) != MPI_SUCCESS || n < 0)
        n = 0;
    version[n < MPI_MAX_LIBRARY_VERSION_STRING ? n : MPI_MAX_LIBRARY_VERSION_STRING] = '\0';
    size_t used = 0;
    int blank = 0;
    for (const char *c = version; *c && *c != ',' && *c != '\n' && used + 1 < len; c++) {
        if (*c == ' ' || *c == '\t' || *c == '\r') {
            blank = used > 0;
            continue;
        }
        if (blank && used + 2 < len)
            out[used++] = ' ';
        blank = 0;
        out[used++] = *c;
    }
    if (len)
        out[used < len ? used : len - 1] = '\0';
    if (len && !used)
        snprintf(out, len, "unknown MPI");
}

#endif
