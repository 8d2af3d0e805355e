/* Private to libtopsync-mpi: what the entry points, the node map and the
 * per-communicator set-up share. */
#ifndef TOPSYNC_MPI_PRIVATE_H
#define TOPSYNC_MPI_PRIVATE_H

#include <stdint.h>

#include <mpi.h>

#include <topsync.h>

/* MODE_DEFERRED: not set up yet; PMPI_Barrier until the communicator's
 * TOPSYNC_MPI_SETUP_AT-th barrier (topsync_mpi.c) */
enum comm_mode { MODE_PMPI, MODE_NODE, MODE_NODES, MODE_DEFERRED };

/* One communicator's barrier, cached on it with an attribute. */
struct comm_state {
    enum comm_mode mode;
    MPI_Comm comm;    /* the communicator (for the idle hook's messages) */
    MPI_Comm leaders; /* MODE_NODES: the world's node leaders (not owned) */
    int node_rank, node_size;
    int *node_members; /* comm ranks of my (pseudo-)node, ascending */
    topsync_barrier_t *barrier;
    void *segment;
    size_t segment_size;
    unsigned deferred_barriers; /* MODE_DEFERRED: PMPI_Barriers left before set-up */
};

/* What a process tells the others about itself at set-up: which node it is
 * on (the host's name hashed, and the world rank of its node's first rank
 * as MPI_COMM_TYPE_SHARED made it at MPI_Init, -1 when MPI_Init was not
 * seen), whether it leads its node in the world's leaders' communicator,
 * and its thread level. Equal (host_hash, node_id): same node. */
struct ts_node_record {
    uint64_t host_hash;
    int32_t node_id;
    int32_t world_leader; /* 1: in the world leaders' communicator */
    int32_t thread_level;
    int32_t reserved;
};

/* At MPI_Init / MPI_Init_thread (collective over MPI_COMM_WORLD, one thread). */
void ts_mpi_node_map_init(int provided);
/* This process's record (local). */
void ts_mpi_node_record(struct ts_node_record *out);
/* The job's processes on this node (the real node, not a pseudo-node), as
 * MPI_Init saw them; 0 when MPI_Init was not seen. */
int ts_mpi_node_processes(void);
/* The node leaders of MPI_COMM_WORLD (MPI_COMM_NULL: one node, not a leader,
 * or MPI_Init not seen). */
MPI_Comm ts_mpi_world_leaders(void);

/* TOPSYNC_NODE_SPLIT (1 when unset; 0 when invalid) and TOPSYNC_VERBOSE. */
int ts_mpi_node_split(void);
int ts_mpi_verbose(void);
/* TOPSYNC_MPI_SETUP_AT: at which of a communicator's barriers it is set up
 * (2 when unset; MPI_COMM_WORLD always at its first; 0 when invalid). */
int ts_mpi_setup_at(void);

/* Set up comm's barrier: collective over comm, calls only collectives on
 * comm itself (never creates a communicator). Never NULL. */
struct comm_state *ts_mpi_setup(MPI_Comm comm);
void ts_mpi_state_free(struct comm_state *s);

/* Print to stderr and MPI_Abort(comm). */
void ts_mpi_fatal(MPI_Comm comm, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

#endif
