/*
 * How many MPI libraries this process maps, read from /proc/self/maps after
 * MPI_Init (not from topsync's own enumeration, which this checks): exactly
 * one, and libtopsync-mpi mapped when MAPS_CHECK_TOPSYNC=1. A plain MPI
 * program (no topsync), for LD_PRELOAD. Prints "N passed, M failed".
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* the core library of an MPI: libmpi.so.N, libmpich.so.N,
     * libmpi_abi.so.N, libmpi_ilp64.so.N (not libmpifort, libmpi_cxx...) */
    regex_t mpi_core;
    regcomp(&mpi_core, "/lib(mpi|mpich|mpi_abi|mpi_ilp64)\\.so(\\.[0-9]+)*$", REG_EXTENDED);
    char seen[8][4096];
    int nseen = 0, topsync = 0;
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[8192];
    while (maps && fgets(line, sizeof line, maps)) {
        line[strcspn(line, "\n")] = '\0';
        char *path = strchr(line, '/');
        if (!path)
            continue;
        if (strstr(path, "libtopsync-mpi"))
            topsync = 1;
        if (regexec(&mpi_core, path, 0, NULL, 0) != 0)
            continue;
        int known = 0;
        for (int i = 0; i < nseen; i++)
            known |= !strcmp(seen[i], path);
        if (!known && nseen < 8)
            snprintf(seen[nseen++], sizeof seen[0], "%s", path);
    }
    if (maps)
        fclose(maps);
    int passed = 0, failed = 0;
    if (nseen == 1) {
        passed++;
    } else {
        failed++;
        fprintf(stderr, "rank %d: %d MPI libraries mapped:", rank, nseen);
        for (int i = 0; i < nseen; i++)
            fprintf(stderr, " %s", seen[i]);
        fputc('\n', stderr);
    }
    const char *want = getenv("MAPS_CHECK_TOPSYNC");
    if (want && !strcmp(want, "1")) {
        if (topsync)
            passed++;
        else {
            failed++;
            fprintf(stderr, "rank %d: libtopsync-mpi is not mapped\n", rank);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int all[2] = {passed, failed};
    MPI_Allreduce(MPI_IN_PLACE, all, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi library: %s\n%d passed, %d failed\n", nseen ? seen[0] : "(none)", all[0],
               all[1]);
    regfree(&mpi_core);
    MPI_Finalize();
    return all[1] != 0;
}
