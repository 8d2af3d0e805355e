/*
 * libtopsync-mpi's shared segment (mpi/segment.c): unguessable names,
 * 0600, O_EXCL. Another user cannot open it (checked as root by switching
 * to `nobody` in a child; exit 77, reported by CTest as skipped, when not
 * root: no other user to be), and a file planted under the name is never
 * opened, truncated or reused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <topsync.h>

#include "check.h"
#include "node/segment.h"

int main(void)
{
    char a[TS_SEGMENT_NAME_LEN], b[TS_SEGMENT_NAME_LEN];
    int fa = ts_segment_create(a, sizeof a, 4096);
    int fb = ts_segment_create(b, sizeof b, 4096);
    CHECK(fa >= 0 && fb >= 0);
    /* the creator's pid, then 128 random bits written as 32 hex digits,
     * which differ between calls */
    char pid_prefix[32];
    snprintf(pid_prefix, sizeof pid_prefix, TS_SEGMENT_PREFIX "%ld-", (long)getpid());
    CHECK_EQ(strlen(a), strlen(pid_prefix) + 32);
    CHECK(strncmp(a, pid_prefix, strlen(pid_prefix)) == 0);
    CHECK(strspn(a + strlen(pid_prefix), "0123456789abcdef") == 32);
    CHECK_EQ(ts_segment_creator(a), getpid());
    CHECK_EQ(ts_segment_creator(a + 1), getpid()); /* as listed in /dev/shm */
    CHECK_EQ(ts_segment_creator("/topsync-12-abc"), -1);
    CHECK_EQ(ts_segment_creator("/topsync-x-0123456789abcdef0123456789abcdef"), -1);
    CHECK_EQ(ts_segment_creator("/other-12-0123456789abcdef0123456789abcdef"), -1);
    CHECK(strcmp(a, b) != 0);
    struct stat st;
    CHECK_EQ(fstat(fa, &st), 0);
    CHECK_EQ(st.st_mode & 0777, 0600);
    CHECK_EQ(st.st_size, 4096);
    CHECK_EQ(ts_segment_create(a, 8, 4096), -EINVAL); /* no room for the name */

    /* The sweep: a dead creator's segment goes, a live one's stays, and so
     * does anything not named like ours. */
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    waitpid(child, NULL, 0);
    char dead[TS_SEGMENT_NAME_LEN];
    snprintf(dead, sizeof dead, TS_SEGMENT_PREFIX "%ld-0123456789abcdef0123456789abcdef",
             (long)child);
    shm_unlink(dead);
    int fd_dead = ts_segment_create_named(dead, 4096);
    CHECK(fd_dead >= 0);
    close(fd_dead);
    const char *other = "/topsync-not-a-segment-name";
    int fo = shm_open(other, O_CREAT | O_RDWR, 0600);
    CHECK(fo >= 0);
    close(fo);
    CHECK(ts_segment_sweep("/dev/shm", NULL, 0) >= 1);
    CHECK(shm_open(dead, O_RDWR, 0) < 0 && errno == ENOENT);
    int still = shm_open(a, O_RDWR, 0); /* ours: we are alive */
    CHECK(still >= 0);
    close(still);
    still = shm_open(other, O_RDWR, 0);
    CHECK(still >= 0);
    close(still);
    shm_unlink(other);
    CHECK_EQ(ts_segment_sweep("/nonexistent-directory", NULL, 0), 0);

    /* A planted file under the name is refused, and left untouched. */
    const char *planted = "/topsync-planted-by-someone-else";
    shm_unlink(planted);
    int fp = shm_open(planted, O_CREAT | O_EXCL | O_RDWR, 0666);
    CHECK(fp >= 0);
    CHECK_EQ(write(fp, "bait", 4), 4);
    CHECK_EQ(ts_segment_create_named(planted, 1 << 20), -EEXIST);
    CHECK_EQ(fstat(fp, &st), 0);
    CHECK_EQ(st.st_size, 4); /* not truncated to the segment's size */
    close(fp);
    shm_unlink(planted);
    /* the same for a name of ours that exists */
    CHECK_EQ(ts_segment_create_named(a, 4096), -EEXIST);

    int skipped = 0;
    if (geteuid() == 0) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            if (setgid(65534) < 0 || setuid(65534) < 0)
                _exit(2);
            int fd = shm_open(a, O_RDWR, 0);
            int fd_ro = shm_open(a, O_RDONLY, 0);
            _exit(fd < 0 && errno == EACCES && fd_ro < 0 ? 0 : 1);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    } else {
        printf("not root: the other-user check needs a second user\n");
        skipped = 1;
    }
    close(fa);
    close(fb);
    CHECK_EQ(shm_unlink(a), 0);
    CHECK_EQ(shm_unlink(b), 0);
    int rc = check_summary();
    return rc ? rc : skipped ? 77 : 0;
}
