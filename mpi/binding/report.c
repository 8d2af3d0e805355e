/*
 * The two ways libtopsync-mpi stops a process: refusing to run before
 * MPI_Init (no MPI_Abort yet: exit status 1), and a fatal error after it
 * (MPI_Abort, after the message has had time to get out). Error paths
 * only. docs/design.md section 8.21.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <mpi.h>

#include "binding/binding.h"

void ts_mpi_refuse(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("topsync-mpi: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    _exit(1);
}

void ts_mpi_fatal(MPI_Comm comm, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "topsync-mpi (rank %d): %s\n", rank, msg);
    fflush(stderr);
    /* Launchers forward output asynchronously and stop forwarding once a
     * rank aborts: give the messages time to get out (an error path only). */
    usleep(300 * 1000);
    PMPI_Abort(comm, 1);
    abort();
}
