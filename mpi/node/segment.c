/* The node's shared segment (see segment.h). */
#define _GNU_SOURCE
#include "node/segment.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    int off = snprintf(name, name_len, TS_SEGMENT_PREFIX "%ld-", (long)getpid());
    for (size_t i = 0; i < sizeof rnd; i++)
        off += snprintf(name + off, name_len - (size_t)off, "%02x", rnd[i]);
    return ts_segment_create_named(name, size);
}

pid_t ts_segment_creator(const char *name)
{
    const char *prefix = &TS_SEGMENT_PREFIX[1]; /* names in a directory have no '/' */
    if (name[0] == '/')
        name++;
    if (strncmp(name, prefix, strlen(prefix)) != 0)
        return -1;
    const char *p = name + strlen(prefix);
    char *end;
    errno = 0;
    long pid = strtol(p, &end, 10);
    if (errno || end == p || *end != '-' || pid <= 0 || pid != (pid_t)pid)
        return -1;
    if (strlen(end + 1) != 32 || strspn(end + 1, "0123456789abcdef") != 32)
        return -1;
    return (pid_t)pid;
}

int ts_segment_sweep(const char *dir, FILE *report, int dry_run)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int removed = 0;
    for (struct dirent *e; (e = readdir(d));) {
        pid_t pid = ts_segment_creator(e->d_name);
        if (pid <= 0)
            continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
            continue;
        if (st.st_uid != geteuid()) {
            if (report)
                fprintf(report, "kept    %s/%s: another user's\n", dir, e->d_name);
            continue;
        }
        /* ESRCH only: EPERM means the process exists (another user's) */
        if (kill(pid, 0) == 0 || errno != ESRCH) {
            if (report)
                fprintf(report, "kept    %s/%s: its creator, pid %ld, is alive\n", dir, e->d_name,
                        (long)pid);
            continue;
        }
        char name[NAME_MAX + 2];
        snprintf(name, sizeof name, "/%s", e->d_name);
        int gone = dry_run || shm_unlink(name) == 0;
        removed += gone;
        if (report)
            fprintf(report, "%s %s/%s: left by pid %ld, which is gone (%lld bytes)\n",
                    !gone     ? "FAILED "
                    : dry_run ? "would remove"
                              : "removed",
                    dir, e->d_name, (long)pid, (long long)st.st_size);
    }
    closedir(d);
    return removed;
}
