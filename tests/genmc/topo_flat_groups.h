/*
 * For the GenMC harnesses that run topo (barrier.c with -DTOPO_FLAT,
 * coll.c): groups.c's two lookups, answering one flat group of all N
 * participants led by 0, whose leader scans N - 1 members at once
 * (ts_wait_all). N (at most 3) is the harness's.
 */
#ifndef TOPSYNC_TESTS_GENMC_TOPO_FLAT_GROUPS_H
#define TOPSYNC_TESTS_GENMC_TOPO_FLAT_GROUPS_H

int topsync_groups_of_rank(const topsync_groups_t *g, unsigned rank, unsigned *idx, unsigned max)
{
    (void)g, (void)rank, (void)max;
    idx[0] = 0;
    return 1;
}

int topsync_groups_get(const topsync_groups_t *g, unsigned index, topsync_group_info_t *info)
{
    static const unsigned all[] = {0, 1, 2};
    (void)g, (void)index;
    info->leader = 0;
    info->nmembers = N;
    info->members = all;
    return 0;
}

#endif
