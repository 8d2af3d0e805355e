/*
 * Outputs of the command-line tools checked to the last byte; see
 * cli_output.h. The same rule as topsync_tuning_write (src/tune/tuning.c).
 * docs/design.md, "Tools".
 */
#define _GNU_SOURCE /* mkostemp */
#include "cli_output.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_name(cli_output_kind_t kind)
{
    switch (kind) {
    case CLI_OUTPUT_JSON: return "JSON output";
    case CLI_OUTPUT_CSV: return "CSV output of this kind";
    case CLI_OUTPUT_NUMBERS: return "latency table";
    }
    return "output";
}

/* Whether the first bytes of an existing file are an earlier output of
 * `kind`; an empty file is (a failed run's leftover). */
static int earlier_output(int fd, cli_output_kind_t kind, const char *header)
{
    char head[512];
    ssize_t n = read(fd, head, sizeof head - 1);
    if (n < 0)
        return 0;
    head[n] = '\0';
    if (n == 0)
        return 1;
    switch (kind) {
    case CLI_OUTPUT_JSON: {
        const char *p = head;
        while (*p && isspace((unsigned char)*p))
            p++;
        return *p == '[' || *p == '{';
    }
    case CLI_OUTPUT_CSV: return header && !strncmp(head, header, strlen(header));
    case CLI_OUTPUT_NUMBERS:
        for (ssize_t i = 0; i < n; i++)
            if (!strchr("0123456789.,\n", head[i]))
                return 0;
        return 1;
    }
    return 0;
}

/* The checks of cli_output_open that create nothing: -1 after the message
 * (refused), 0 for a new or replaceable file, 1 for a device or FIFO
 * (/dev/stdout), which is written in place. */
static int may_replace(const char *tool, const char *path, cli_output_kind_t kind,
                       const char *header)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return 0;
    if (S_ISDIR(st.st_mode)) {
        fprintf(stderr, "%s: cannot write %s: a directory\n", tool, path);
        return -1;
    }
    if (!S_ISREG(st.st_mode))
        return 1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int same = fd >= 0 && earlier_output(fd, kind, header);
    if (fd >= 0)
        close(fd);
    if (!same) {
        fprintf(stderr,
                "%s: %s exists and is not a %s; not overwritten (remove it or choose "
                "another name)\n",
                tool, path, kind_name(kind));
        return -1;
    }
    return 0;
}

/* Flush (and sync) then close f: 0, or the errno of the first step that
 * failed (EIO when an earlier write failed without one). */
static int close_checked(FILE *f, int sync)
{
    errno = 0;
    int err = fflush(f) != 0 || ferror(f) || (sync && fsync(fileno(f)) != 0) ? errno : 0;
    if (ferror(f) && !err)
        err = EIO;
    if (fclose(f) != 0 && !err)
        err = errno ? errno : EIO;
    return err;
}

int cli_output_check(const char *tool, const char *path, cli_output_kind_t kind, const char *header)
{
    if (may_replace(tool, path, kind, header) < 0)
        return 1;
    char dir[4096];
    int w = snprintf(dir, sizeof dir, "%s", path);
    if (w < 0 || (size_t)w >= sizeof dir) {
        fprintf(stderr, "%s: cannot write %s: the name is too long\n", tool, path);
        return 1;
    }
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    if (access(dir, W_OK | X_OK) < 0) {
        fprintf(stderr, "%s: cannot write %s: %s: %s\n", tool, path, dir, strerror(errno));
        return 1;
    }
    return 0;
}

int cli_output_open(cli_output_t *out, const char *tool, const char *path, cli_output_kind_t kind,
                    const char *header)
{
    out->f = NULL;
    out->tool = tool;
    out->path = path;
    out->direct = may_replace(tool, path, kind, header);
    if (out->direct < 0)
        return 1;
    if (out->direct) {
        if (!(out->f = fopen(path, "w"))) {
            fprintf(stderr, "%s: cannot write %s: %s\n", tool, path, strerror(errno));
            return 1;
        }
        return 0;
    }
    int w = snprintf(out->tmp, sizeof out->tmp, "%s.tmp.%ld.XXXXXX", path, (long)getpid());
    if (w < 0 || (size_t)w >= sizeof out->tmp) {
        fprintf(stderr, "%s: cannot write %s: the name is too long\n", tool, path);
        return 1;
    }
    int fd = mkostemp(out->tmp, O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "%s: cannot write %s: %s\n", tool, path, strerror(errno));
        return 1;
    }
    /* mkstemp makes it 0600; an output is an ordinary file (umask) */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) < 0 || !(out->f = fdopen(fd, "w"))) {
        fprintf(stderr, "%s: cannot write %s: %s\n", tool, path, strerror(errno));
        close(fd);
        unlink(out->tmp);
        return 1;
    }
    return 0;
}

int cli_output_close(cli_output_t *out)
{
    int err = close_checked(out->f, !out->direct);
    out->f = NULL;
    if (!err && !out->direct && rename(out->tmp, out->path) < 0)
        err = errno ? errno : EIO;
    if (err) {
        if (!out->direct)
            unlink(out->tmp);
        fprintf(stderr, "%s: cannot write %s: %s%s\n", out->tool, out->path, strerror(err),
                out->direct ? "" : "; any earlier file of that name is left as it was");
        return 1;
    }
    return 0;
}

static const char *stdout_tool = "topsync";

static void check_stdout(void)
{
    int err = close_checked(stdout, 0);
    if (err) {
        fprintf(stderr, "%s: error writing standard output: %s\n", stdout_tool, strerror(err));
        /* exit() is running this handler: _exit is the way to change the
         * status (as coreutils' close_stdout does) */
        _exit(1);
    }
}

void cli_check_stdout_at_exit(const char *tool)
{
    stdout_tool = tool;
    atexit(check_stdout);
}
