/*
 * topsync_environment_check for the MPI library, which takes one value
 * more. docs/design.md, "Layers".
 */
#ifndef TOPSYNC_FRONT_ENVIRONMENT_H
#define TOPSYNC_FRONT_ENVIRONMENT_H

#include <stdbool.h>

/* The parts whose variables a check reads: a library checks, as errors,
 * only the variables of the parts it uses (issue 56 item 6: a bad
 * TOPSYNC_RCL_PLACEMENT must not turn the pthread drop-in's barriers into
 * glibc's), and reports the others as warnings. */
enum ts_env_part {
    TS_ENV_BARRIER = 1, /* TOPSYNC_BARRIER, _WAIT, _SPIN, _POLL, _TIMEOUT, _AUTO */
    TS_ENV_COLL = 2,    /* TOPSYNC_COLL_MAX_BYTES */
    TS_ENV_RCL = 4,     /* TOPSYNC_RCL_PLACEMENT */
    TS_ENV_ALL = 7
};

/* topsync_environment_check of the variables of `parts`, where
 * TOPSYNC_BARRIER=mpi (any case) is also valid when barrier_mpi_valid:
 * libtopsync-mpi's "the MPI's own barrier". */
int ts_environment_check(bool barrier_mpi_valid, unsigned parts);

#endif
