/*
 * The layouts of communicators set up before, kept per group: what a
 * set-up learns with collectives (the nodes, my node's ranks and their
 * bindings, the collectives each rank serves) is the same for a later
 * communicator of the same ranks in the same order (MPI_Comm_dup; a split
 * or a create that keeps them), whose set-up then gathers none of it.
 * The why: docs/design.md section 8.18.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "node/node.h"

/* Layouts kept per process: a program that makes communicators of many
 * groups (a split per step) keeps its most recently used. Which are kept
 * may differ between ranks (they belong to different communicators): the
 * set-up agrees, with a digest, that every rank holds the same one. */
#define TS_LAYOUTS_KEPT 16

extern char **environ;

static pthread_mutex_t layouts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ts_layout kept[TS_LAYOUTS_KEPT]; /* world_ranks NULL: free */
static unsigned long last_use;

/* value of `entry` ("NAME=value") into *value when it is `prefix`'s
 * ("NAME=") and none was found before: getenv's first match */
static void note_value(const char *entry, const char *prefix, size_t len, const char **value)
{
    if (!*value && !strncmp(entry, prefix, len))
        *value = entry + len;
}

void ts_mpi_env_scan(struct ts_mpi_env *out)
{
    /* environ's order is the process's own: hash each variable and add,
     * so that two processes with the same variables agree; 64 bits, since
     * a set-up does not validate variables that hash as the last valid
     * ones did (node/setup.c) */
    *out = (struct ts_mpi_env){0};
    for (char **e = environ; e && *e; e++) {
        /* the first letter inline: an MPI launcher's environment has 40-90
         * variables, a strncmp call each was 0.2-0.4 us a set-up */
        if ((*e)[0] != 'T' || strncmp(*e, "TOPSYNC_", 8))
            continue;
        out->hash += ts_fnv1a64(TS_FNV1A64_OFFSET, *e, strlen(*e));
        /* in this pass, not by a getenv each: that walks the whole
         * environment again, 0.1 us each here */
        note_value(*e, "TOPSYNC_BARRIER=", 16, &out->barrier);
        note_value(*e, "TOPSYNC_NODE_SPLIT=", 19, &out->node_split);
        note_value(*e, "TOPSYNC_MPI_SETUP_AT=", 21, &out->setup_at);
        note_value(*e, "TOPSYNC_MPI_OPS=", 16, &out->ops);
    }
}

/* MPI_COMM_WORLD's group, made once (under world_group_lock) and kept
 * until MPI_Finalize (ts_mpi_layouts_release): two of the five group calls
 * a set-up made. */
static pthread_mutex_t world_group_lock = PTHREAD_MUTEX_INITIALIZER;
static MPI_Group world_group;
static bool have_world_group;

static MPI_Group group_of_world(void)
{
    pthread_mutex_lock(&world_group_lock);
    if (!have_world_group) {
        PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
        have_world_group = true;
    }
    MPI_Group g = world_group;
    pthread_mutex_unlock(&world_group_lock);
    return g;
}

int ts_mpi_layout_world_ranks(MPI_Comm comm, int size, int **out)
{
    *out = NULL;
    int *mine = malloc((size_t)size * sizeof *mine), *world = malloc((size_t)size * sizeof *world);
    MPI_Group group;
    if (!mine || !world) {
        free(mine);
        free(world);
        return -1;
    }
    for (int i = 0; i < size; i++)
        mine[i] = i;
    PMPI_Comm_group(comm, &group);
    PMPI_Group_translate_ranks(group, size, mine, group_of_world(), world);
    PMPI_Group_free(&group);
    free(mine);
    for (int i = 0; i < size; i++) {
        if (world[i] == MPI_UNDEFINED) { /* spawned or connected: not kept */
            free(world);
            return -1;
        }
    }
    *out = world;
    return 0;
}

void ts_mpi_layouts_release(void)
{
    pthread_mutex_lock(&world_group_lock);
    if (have_world_group) {
        PMPI_Group_free(&world_group);
        have_world_group = false;
    }
    pthread_mutex_unlock(&world_group_lock);
    pthread_mutex_lock(&layouts_lock);
    for (int i = 0; i < TS_LAYOUTS_KEPT; i++)
        ts_mpi_layout_clear(&kept[i]);
    pthread_mutex_unlock(&layouts_lock);
}

void ts_mpi_layout_clear(struct ts_layout *l)
{
    free(l->world_ranks);
    free(l->node_members);
    free(l->leader);
    if (l->sets)
        for (int i = 0; i < l->node_size; i++)
            hwloc_bitmap_free(l->sets[i]);
    free(l->sets);
    memset(l, 0, sizeof *l);
}

static int *copy_ints(const int *from, int n)
{
    int *to = malloc((size_t)(n ? n : 1) * sizeof *to);
    if (to && n)
        memcpy(to, from, (size_t)n * sizeof *to);
    return to;
}

/* A deep copy; false when out of memory (out cleared). */
static bool copy_layout(struct ts_layout *out, const struct ts_layout *in)
{
    *out = *in;
    out->world_ranks = copy_ints(in->world_ranks, in->size);
    out->node_members = copy_ints(in->node_members, in->node_size);
    out->leader = in->leader ? copy_ints(in->leader, in->size) : NULL;
    out->sets = calloc((size_t)in->node_size, sizeof *out->sets);
    bool ok = out->world_ranks && out->node_members && (out->leader || !in->leader) && out->sets;
    for (int i = 0; ok && i < in->node_size; i++)
        ok = (out->sets[i] = hwloc_bitmap_dup(in->sets[i])) != NULL;
    if (!ok)
        ts_mpi_layout_clear(out);
    return ok;
}

static struct ts_layout *slot_of(const int *world_ranks, int size)
{
    for (int i = 0; i < TS_LAYOUTS_KEPT; i++)
        if (kept[i].world_ranks && kept[i].size == size &&
            !memcmp(kept[i].world_ranks, world_ranks, (size_t)size * sizeof *world_ranks))
            return &kept[i];
    return NULL;
}

bool ts_mpi_layout_find(const int *world_ranks, int size, uint64_t env_hash, struct ts_layout *out)
{
    pthread_mutex_lock(&layouts_lock);
    struct ts_layout *l = slot_of(world_ranks, size);
    bool found = l && l->env_hash == env_hash && copy_layout(out, l);
    if (found)
        l->used = ++last_use;
    pthread_mutex_unlock(&layouts_lock);
    return found;
}

void ts_mpi_layout_keep(struct ts_layout *l)
{
    pthread_mutex_lock(&layouts_lock);
    struct ts_layout *slot = slot_of(l->world_ranks, l->size); /* replaced */
    for (int i = 0; !slot && i < TS_LAYOUTS_KEPT; i++)
        if (!kept[i].world_ranks)
            slot = &kept[i];
    if (!slot) { /* the least recently used goes */
        slot = &kept[0];
        for (int i = 1; i < TS_LAYOUTS_KEPT; i++)
            if (kept[i].used < slot->used)
                slot = &kept[i];
    }
    ts_mpi_layout_clear(slot);
    *slot = *l;
    slot->used = ++last_use;
    memset(l, 0, sizeof *l); /* moved */
    pthread_mutex_unlock(&layouts_lock);
}

void ts_mpi_layout_forget(const int *world_ranks, int size)
{
    pthread_mutex_lock(&layouts_lock);
    struct ts_layout *l = slot_of(world_ranks, size);
    if (l)
        ts_mpi_layout_clear(l);
    pthread_mutex_unlock(&layouts_lock);
}
