/*
 * topsync_environment_check for the MPI library, which takes one value
 * more. docs/design.md, "Layers".
 */
#ifndef TOPSYNC_FRONT_ENVIRONMENT_H
#define TOPSYNC_FRONT_ENVIRONMENT_H

#include <stdbool.h>

/* topsync_environment_check, where TOPSYNC_BARRIER=mpi (any case) is also
 * valid when barrier_mpi_valid: libtopsync-mpi's "the MPI's own barrier". */
int ts_environment_check(bool barrier_mpi_valid);

#endif
