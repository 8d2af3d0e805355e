/* topsync: topology-aware synchronization. Umbrella header. */
#ifndef TOPSYNC_H
#define TOPSYNC_H

#include <topsync/common.h>
#include <topsync/topology.h>
#include <topsync/groups.h>
#include <topsync/wait.h>
#include <topsync/barrier.h>
#include <topsync/collectives.h>
#include <topsync/rcl.h>
#include <topsync/model.h>
#include <topsync/tune.h>

#endif /* TOPSYNC_H */
