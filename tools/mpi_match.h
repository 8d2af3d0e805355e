/* topsync-info --mpi: which libtopsync-mpi serves a program (mpi_match.c). */
#ifndef TOPSYNC_TOOLS_MPI_MATCH_H
#define TOPSYNC_TOOLS_MPI_MATCH_H

#include <stdio.h>

#include "binding/mpi_abi_names.h"

/* Print the program's DT_NEEDED entries, its MPI and the library to use.
 * Returns 0 when a library fits (or `path` is a script), 1 when none does,
 * 2 when `path` cannot be read as an ELF file (a message on stderr). */
int ts_info_mpi(const char *path, FILE *out);
/* The same, with the ABI found in *abi (TS_MPI_ABI_UNKNOWN: none, or a
 * script whose MPI is loaded at run time). */
int ts_info_mpi_abi(const char *path, FILE *out, enum ts_mpi_abi *abi);

#endif
