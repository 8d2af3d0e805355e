/* The node's shared segment (see segment.h). */
#define _GNU_SOURCE
#include "segment.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

int ts_segment_create_named(const char *name, size_t size)
{
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0)
        return -errno;
    if (ftruncate(fd, (off_t)size) < 0) {
        int err = errno;
        close(fd);
        shm_unlink(name);
        return -err;
    }
    return fd;
}

int ts_segment_create(char *name, size_t name_len, size_t size)
{
    unsigned char rnd[16];
    if (name_len < TS_SEGMENT_NAME_LEN)
        return -EINVAL;
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        return -errno;
    int off = snprintf(name, name_len, TS_SEGMENT_PREFIX);
    for (size_t i = 0; i < sizeof rnd; i++)
        off += snprintf(name + off, name_len - (size_t)off, "%02x", rnd[i]);
    return ts_segment_create_named(name, size);
}
