/*
 * The bounded whole-file reader and the whole-file replacer (file.h). The
 * reader makes one allocation of the file's size when fstat knows it;
 * pipes and /proc files grow the buffer instead.
 */
/* O_CLOEXEC (POSIX 2008): also when a tool compiles this file with -std=c11 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
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

/* mkdir -p, 0700 for what it makes; an existing directory is fine. */
static int make_dirs(char *dir)
{
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = mkdir(dir, 0700);
        *p = '/';
        if (rc < 0 && errno != EEXIST)
            return -errno;
    }
    return mkdir(dir, 0700) < 0 && errno != EEXIST ? -errno : 0;
}

int ts_file_replace(const char *path, bool durable, void (*write)(FILE *f, void *arg), void *arg,
                    ts_file_replace_step *failed)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        int rc = make_dirs(dir);
        if (rc < 0) {
            *failed = TS_FILE_REPLACE_DIR;
            return rc;
        }
    }
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.XXXXXX", path, (long)getpid());
    int fd = mkstemp(tmp);
    if (fd < 0) {
        *failed = TS_FILE_REPLACE_TEMP;
        return -errno;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        *failed = TS_FILE_REPLACE_TEMP;
        return -ENOMEM;
    }
    write(f, arg);
    int bad = fflush(f) != 0 || ferror(f) || (durable && fsync(fd) != 0);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) < 0) {
        int err = errno ? errno : EIO;
        unlink(tmp);
        *failed = TS_FILE_REPLACE_WRITE;
        return -err;
    }
    return 0;
}
