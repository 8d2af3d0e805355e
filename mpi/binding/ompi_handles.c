/*
 * Open MPI's predefined handles, which binding.h's MPI_COMM_WORLD and
 * friends read: addresses of objects in libmpi, filled in by ts_mpi_bind
 * (binding/mpi_binding.c) from the library the process loaded, so that
 * libtopsync-mpi needs no load-time relocation against an MPI. A file of
 * its own, at the bottom of the binding layer: everything that names a
 * handle reads it, ts_mpi_bind among them. Built for Open MPI only.
 * docs/design.md section 8.21.
 */
#include <mpi.h>

#include "binding/binding.h"

struct ts_ompi_handles ts_ompi;
