/*
 * topsync-info --preload [--launcher L] [PROGRAM [ARGS]]: the exact
 * command that runs PROGRAM with topsync preloaded, with absolute paths:
 * the libtopsync-mpi of the MPI PROGRAM is linked with (mpi_match.c) under
 * its launcher, or libtopsync-pthread for a program without MPI. The
 * libraries are looked for beside this topsync-info: installed (its
 * ../LIBDIR) or in the build tree (its ../mpi, ../pthread).
 * docs/guide/tools.md.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exe_dir.h"
#include "info_preload.h"
#include "mpi_match.h"

#ifndef TOPSYNC_INSTALL_LIBDIR
#define TOPSYNC_INSTALL_LIBDIR "lib"
#endif

/* The absolute path of library `name` beside this program, into out
 * (PATH_MAX); false when none is there. */
static bool find_beside(const char *name, const char *build_dir, char *out)
{
    char self[PATH_MAX]; /* bin/ (installed) or tools/ (build tree) */
    if (tools_exe_dir(self, sizeof self) < 0)
        return false;
    const char *dirs[] = {TOPSYNC_INSTALL_LIBDIR, build_dir};
    for (size_t i = 0; i < 2; i++) {
        char dir[PATH_MAX + 64], real[PATH_MAX];
        snprintf(dir, sizeof dir, "%s../%s", self, dirs[i]);
        if (!realpath(dir, real)) /* the directory's own path; the name as it is */
            continue;
        int len = snprintf(out, PATH_MAX, "%s/%s", real, name);
        if (len > 0 && len < PATH_MAX && access(out, R_OK) == 0)
            return true;
    }
    return false;
}

/* A word the shell takes as it is, else single-quoted. */
static void print_word(FILE *out, const char *w)
{
    if (*w && strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                        "_-+./=:,@%") == strlen(w)) {
        fputs(w, out);
        return;
    }
    fputc('\'', out);
    for (const char *c = w; *c; c++) {
        if (*c == '\'')
            fputs("'\\''", out);
        else
            fputc(*c, out);
    }
    fputc('\'', out);
}

/* The program, absolute when it is a path (a command name stays one), then
 * its arguments as they are. */
static void print_program(FILE *out, char *const *argv)
{
    char real[PATH_MAX];
    fputc(' ', out);
    print_word(out, strchr(argv[0], '/') && realpath(argv[0], real) ? real : argv[0]);
    for (char *const *a = argv + 1; *a; a++) {
        fputc(' ', out);
        print_word(out, *a);
    }
}

static void print_mpi(FILE *out, const char *launcher, const char *lib, char *const *argv)
{
    if (!strcmp(launcher, "mpirun"))
        fprintf(out, "mpirun -np N --bind-to core -x LD_PRELOAD=");
    else if (!strcmp(launcher, "mpiexec"))
        fprintf(out, "mpiexec -n N -bind-to core -genv LD_PRELOAD ");
    else
        fprintf(out, "srun -n N --cpu-bind=cores --export=ALL,LD_PRELOAD=");
    print_word(out, lib);
    if (argv)
        print_program(out, argv);
    else
        fputs(" PROGRAM", out);
    fputc('\n', out);
}

int ts_info_preload(char *const *argv, const char *launcher, FILE *out)
{
    if (launcher && strcmp(launcher, "mpirun") && strcmp(launcher, "mpiexec") &&
        strcmp(launcher, "srun")) {
        fprintf(stderr,
                "topsync-info: --launcher '%s' is not valid; valid: mpirun, mpiexec, "
                "srun\n",
                launcher);
        return 2;
    }
    char lib[PATH_MAX];
    if (!argv || !argv[0]) { /* every library there is, one line each */
        int found = 0;
        for (int abi = TS_MPI_ABI_OPENMPI; abi < TS_MPI_ABI_UNKNOWN; abi++) {
            if (!find_beside(ts_mpi_abis[abi].library, "mpi", lib))
                continue;
            fprintf(out, "# a program of %s:\n", ts_mpi_abis[abi].what);
            print_mpi(out,
                      launcher                    ? launcher
                      : abi == TS_MPI_ABI_OPENMPI ? "mpirun"
                                                  : "mpiexec",
                      lib, NULL);
            found = 1;
        }
        if (find_beside("libtopsync-pthread.so", "pthread", lib)) {
            fprintf(out, "# a pthread program:\nLD_PRELOAD=");
            print_word(out, lib);
            fputs(" PROGRAM\n", out);
            found = 1;
        }
        if (!found)
            fprintf(stderr, "topsync-info: no topsync library beside this topsync-info\n");
        return found ? 0 : 1;
    }
    FILE *quiet = fopen("/dev/null", "w");
    enum ts_mpi_abi abi = TS_MPI_ABI_UNKNOWN;
    int rc = ts_info_mpi_abi(argv[0], quiet ? quiet : stderr, &abi);
    if (quiet)
        fclose(quiet);
    if (rc == 2)
        return 2; /* unreadable: said on stderr */
    if (abi != TS_MPI_ABI_UNKNOWN) {
        if (!find_beside(ts_mpi_abis[abi].library, "mpi", lib)) {
            fprintf(stderr,
                    "topsync-info: %s is linked with %s, but %s is not beside this "
                    "topsync-info (built without that MPI?)\n",
                    argv[0], ts_mpi_abis[abi].what, ts_mpi_abis[abi].library);
            return 1;
        }
        print_mpi(out,
                  launcher                    ? launcher
                  : abi == TS_MPI_ABI_OPENMPI ? "mpirun"
                                              : "mpiexec",
                  lib, argv);
        return 0;
    }
    if (launcher) {
        fprintf(stderr,
                "topsync-info: %s is linked with no MPI topsync knows (topsync-info "
                "--mpi %s says more): no launcher line\n",
                argv[0], argv[0]);
        return 1;
    }
    if (!find_beside("libtopsync-pthread.so", "pthread", lib)) {
        fprintf(stderr, "topsync-info: libtopsync-pthread.so is not beside this topsync-info\n");
        return 1;
    }
    fputs("LD_PRELOAD=", out);
    print_word(out, lib);
    print_program(out, argv);
    fputc('\n', out);
    return 0;
}
