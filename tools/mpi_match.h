/* topsync-info --mpi: which libtopsync-mpi serves a program (mpi_match.c). */
#ifndef TOPSYNC_TOOLS_MPI_MATCH_H
#define TOPSYNC_TOOLS_MPI_MATCH_H

#include <stdio.h>

/* Print the program's DT_NEEDED entries, its MPI and the library to use.
 * Returns 0 when a library fits (or `path` is a script), 1 when none does,
 * 2 when `path` cannot be read as an ELF file (a message on stderr). */
int ts_info_mpi(const char *path, FILE *out);

#endif
