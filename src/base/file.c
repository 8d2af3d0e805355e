/*
 * The bounded whole-file reader (file.h). One allocation of the file's
 * size when fstat knows it; pipes and /proc files grow the buffer instead.
 */
/* O_CLOEXEC (POSIX 2008): also when a tool compiles this file with -std=c11 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int ts_file_read(const char *path, size_t max_bytes, unsigned flags, char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int err = errno;
        close(fd);
        return -err;
    }
    if ((flags & TS_FILE_REGULAR_ONLY) && !S_ISREG(st.st_mode)) {
        close(fd);
        return -EINVAL;
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return -EISDIR;
    }
    /* one byte more than the file's size, so that reading sees it end */
    size_t cap = 1 << 16;
    if (S_ISREG(st.st_mode) && st.st_size >= 0 && (unsigned long long)st.st_size < max_bytes)
        cap = (size_t)st.st_size + 1;
    if (cap > max_bytes + 1)
        cap = max_bytes + 1;
    char *buf = malloc(cap + 1);
    size_t n = 0;
    int rc = 0;
    while (buf) {
        if (n == cap) {
            if (n > max_bytes) {
                rc = -EFBIG;
                break;
            }
            size_t grown_cap = cap > max_bytes / 2 ? max_bytes + 1 : cap * 2;
            char *grown = realloc(buf, grown_cap + 1);
            if (!grown) {
                rc = -ENOMEM;
                break;
            }
            buf = grown;
            cap = grown_cap;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = -errno;
            break;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    if (!buf)
        return -ENOMEM;
    if (rc == 0 && n > max_bytes)
        rc = -EFBIG;
    if (rc < 0) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}
