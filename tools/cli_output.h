/*
 * The command-line tools' outputs (issue 37 item 4): a file written
 * beside its target and renamed over it only once every byte reached the
 * disk, so that a full disk never leaves a truncated or empty file in
 * place of a good one; an existing file replaced only when it is an
 * earlier output of the same kind; standard output checked at exit. Every
 * failure is a message on stderr and a non-zero exit. docs/design.md,
 * "Tools".
 */
#ifndef TOPSYNC_TOOLS_CLI_OUTPUT_H
#define TOPSYNC_TOOLS_CLI_OUTPUT_H

#include <stdio.h>

/* What an earlier output of the same kind starts with. */
typedef enum {
    CLI_OUTPUT_JSON,    /* '[' or '{' after blanks */
    CLI_OUTPUT_CSV,     /* the header line given as `header` */
    CLI_OUTPUT_NUMBERS, /* a latency table: digits, '.', ',' and newlines */
} cli_output_kind_t;

typedef struct cli_output {
    FILE *f; /* write here between open and close */
    const char *tool, *path;
    int direct; /* a device or FIFO (/dev/stdout): written in place */
    char tmp[4200];
} cli_output_t;

/* 0 with out->f open on a new file beside `path`; 1 after a message on
 * stderr ("<tool>: cannot write <path>: ..."): the directory is missing
 * or not writable, `path` is a directory, or it is a file holding something
 * that is not an earlier output of `kind` ("exists and is not ...;
 * not overwritten"). `header` is the CSV header line for CLI_OUTPUT_CSV.
 * A device or FIFO (/dev/stdout, /dev/full) is written in place and
 * checked at close. */
int cli_output_open(cli_output_t *out, const char *tool, const char *path, cli_output_kind_t kind,
                    const char *header);

/* The same checks, creating nothing, for a tool to run before it spends
 * minutes measuring: 0, or 1 after the message. */
int cli_output_check(const char *tool, const char *path, cli_output_kind_t kind,
                     const char *header);

/* Flush, sync and close, then rename over `path`: 0, or 1 after a message
 * naming the error (ENOSPC, EFBIG, EIO ...) with `path` left as it was. */
int cli_output_close(cli_output_t *out);

/* At exit, flush and close standard output; on an error (a full disk
 * under "> F", /dev/full, a closed pipe) print "<tool>: error writing
 * standard output: ..." and end with status 1 instead of 0. Call once,
 * first thing in main. */
void cli_check_stdout_at_exit(const char *tool);

#endif
