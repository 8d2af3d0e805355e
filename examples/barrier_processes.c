/*
 * A barrier between processes: a segment of our own (shared anonymous
 * memory, inherited across fork), every process attaches its rank.
 *
 *   cc barrier_processes.c $(pkg-config --cflags --libs topsync)
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS and usleep under -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <topsync.h>

enum { NPROCS = 3, EPISODES = 1000 };

int main(void)
{
    unsigned n = NPROCS;
    /* README: begin processes */
    size_t size;
    if (topsync_barrier_segment_size(n, NULL, &size) < 0)
        return 1;
    void *segment = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    /* zero-filled, page aligned; a shm_open + ftruncate segment would do too */
    /* README: end */
    if (segment == MAP_FAILED)
        return 1;
    /* attach, then meet: a shared counter of our own */
    int *attached = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pid_t pids[NPROCS];
    for (unsigned rank = 0; rank < n; rank++) {
        pids[rank] = fork();
        if (pids[rank] != 0)
            continue;
        /* README: begin processes-attach */
        topsync_barrier_t *b;
        if (topsync_barrier_attach(&b, n, NULL, segment, size, rank) < 0) {
            fprintf(stderr, "topsync: %s\n", topsync_error_message());
            _exit(1);
        }
        /* every process must have attached before the first wait */
        /* README: end */
        __atomic_add_fetch(attached, 1, __ATOMIC_SEQ_CST);
        while (__atomic_load_n(attached, __ATOMIC_SEQ_CST) < (int)n)
            usleep(100);
        for (int e = 0; e < EPISODES; e++)
            topsync_barrier_wait(b, rank);
        topsync_barrier_destroy(b);
        _exit(0);
    }
    int failed = 0;
    for (unsigned rank = 0; rank < n; rank++) {
        int status;
        waitpid(pids[rank], &status, 0);
        failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    printf("barrier_processes: %u processes, %d episodes, %s\n", n, EPISODES,
           failed ? "FAILED" : "ok");
    munmap(segment, size);
    return failed;
}
