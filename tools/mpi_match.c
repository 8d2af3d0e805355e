/*
 * topsync-info --mpi PROGRAM: which libtopsync-mpi serves a program, read
 * from the MPI library among its dependencies: its DT_NEEDED entries and
 * theirs, found as the dynamic loader finds them (DT_RPATH, LD_LIBRARY_PATH,
 * DT_RUNPATH with $ORIGIN, the directories of /etc/ld.so.conf, the default
 * ones), from the ELF files themselves, not ldd: nothing of the program is
 * loaded or run. The sonames are the ABIs' promises (mpi/mpi_abi_names.h,
 * the table mpi/mpi_binding.c checks at run time); docs/design.md section
 * "MPI libraries and ABIs".
 */
#define _GNU_SOURCE
#include "mpi_match.h"
#include "binding/mpi_abi_names.h"
#include "base/file.h"

#include <elf.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The whole file, at most 1 GiB; NULL (with a message unless quiet). */
static unsigned char *read_all(const char *path, size_t *len, int quiet)
{
    char *text = NULL;
    int rc = ts_file_read(path, (size_t)1 << 30, 0, &text, len);
    if (quiet)
        return (unsigned char *)text;
    if (rc == -EFBIG)
        fprintf(stderr, "topsync-info: %s: larger than 1 GiB\n", path);
    else if (rc < 0)
        fprintf(stderr, "topsync-info: %s: %s\n", path, strerror(-rc));
    return (unsigned char *)text;
}

/* The file offset of virtual address `vaddr`, from the PT_LOAD segments;
 * 0 when no segment holds it. */
static size_t file_offset(const Elf64_Phdr *ph, unsigned nph, Elf64_Addr vaddr)
{
    for (unsigned i = 0; i < nph; i++)
        if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr &&
            vaddr - ph[i].p_vaddr < ph[i].p_filesz)
            return (size_t)(ph[i].p_offset + (vaddr - ph[i].p_vaddr));
    return 0;
}

/* What the loader reads of one ELF file. */
struct elf_deps {
    char **needed;
    size_t count;
    char *rpath, *runpath; /* NULL when absent */
};

static void elf_deps_free(struct elf_deps *d)
{
    for (size_t i = 0; i < d->count; i++)
        free(d->needed[i]);
    free(d->needed);
    free(d->rpath);
    free(d->runpath);
    memset(d, 0, sizeof *d);
}

enum elf_read { ELF_OK, ELF_SCRIPT, ELF_STATIC, ELF_BAD };

/* Reads path's dynamic section. ELF_BAD with a message (unless quiet) when
 * it is not a 64-bit little-endian ELF file or is truncated. */
static enum elf_read elf_read_deps(const char *path, struct elf_deps *d, int quiet)
{
    memset(d, 0, sizeof *d);
    size_t len = 0;
    unsigned char *elf = read_all(path, &len, quiet);
    if (!elf)
        return ELF_BAD;
    enum elf_read rc = ELF_BAD;
    const char *problem = NULL;
    const Elf64_Ehdr *eh = (const void *)elf;
    if (len >= 2 && elf[0] == '#' && elf[1] == '!') {
        rc = ELF_SCRIPT;
        goto out;
    }
    if (len < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) {
        problem = "not an ELF file";
        goto out;
    }
    if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB) {
        problem = "not a 64-bit little-endian ELF file";
        goto out;
    }
    if (eh->e_phoff >= len || eh->e_phentsize != sizeof(Elf64_Phdr) ||
        (len - eh->e_phoff) / sizeof(Elf64_Phdr) < eh->e_phnum) {
        problem = "truncated ELF file (program headers)";
        goto out;
    }
    const Elf64_Phdr *ph = (const void *)(elf + eh->e_phoff);
    const Elf64_Dyn *dyn = NULL;
    size_t ndyn = 0;
    for (unsigned i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_DYNAMIC && ph[i].p_offset < len &&
            ph[i].p_filesz <= len - ph[i].p_offset) {
            dyn = (const void *)(elf + ph[i].p_offset);
            ndyn = ph[i].p_filesz / sizeof *dyn;
        }
    if (!dyn) {
        rc = ELF_STATIC;
        goto out;
    }
    size_t strtab = 0, strsz = 0;
    for (size_t i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
        if (dyn[i].d_tag == DT_STRTAB)
            strtab = file_offset(ph, eh->e_phnum, dyn[i].d_un.d_ptr);
        else if (dyn[i].d_tag == DT_STRSZ)
            strsz = dyn[i].d_un.d_val;
    }
    if (!strtab || strtab >= len || strsz > len - strtab) {
        problem = "truncated ELF file (string table)";
        goto out;
    }
    d->needed = calloc(ndyn, sizeof *d->needed);
    if (!d->needed) {
        problem = "out of memory";
        goto out;
    }
    for (size_t i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
        Elf64_Sxword tag = dyn[i].d_tag;
        if ((tag != DT_NEEDED && tag != DT_RPATH && tag != DT_RUNPATH) ||
            dyn[i].d_un.d_val >= strsz)
            continue;
        const char *name = (const char *)elf + strtab + dyn[i].d_un.d_val;
        if (!memchr(name, '\0', strsz - dyn[i].d_un.d_val))
            continue;
        char **slot = tag == DT_NEEDED  ? &d->needed[d->count++]
                      : tag == DT_RPATH ? &d->rpath
                                        : &d->runpath;
        free(*slot);
        *slot = strdup(name);
    }
    rc = ELF_OK;
out:
    if (problem && !quiet)
        fprintf(stderr, "topsync-info: %s: %s\n", path, problem);
    if (rc != ELF_OK)
        elf_deps_free(d);
    free(elf);
    return rc;
}

/* ---- where the loader looks ---------------------------------------------- */

#define MAX_DIRS 128

struct dirs {
    char *dir[MAX_DIRS];
    unsigned count;
};

static void dirs_add(struct dirs *l, const char *dir, size_t len)
{
    if (len == 0 || l->count == MAX_DIRS)
        return;
    for (unsigned i = 0; i < l->count; i++)
        if (strlen(l->dir[i]) == len && !strncmp(l->dir[i], dir, len))
            return;
    l->dir[l->count] = strndup(dir, len);
    if (l->dir[l->count])
        l->count++;
}

static void dirs_free(struct dirs *l)
{
    for (unsigned i = 0; i < l->count; i++)
        free(l->dir[i]);
    l->count = 0;
}

/* Adds a colon-separated path list, $ORIGIN (or ${ORIGIN}) replaced by
 * origin (the loading object's directory). */
static void dirs_add_list(struct dirs *l, const char *list, const char *origin)
{
    while (list && *list) {
        size_t len = strcspn(list, ":");
        char dir[4096];
        size_t out = 0;
        for (size_t i = 0; i < len && out < sizeof dir - 1;) {
            size_t skip = !strncmp(list + i, "${ORIGIN}", 9) ? 9
                          : !strncmp(list + i, "$ORIGIN", 7) ? 7
                                                             : 0;
            if (skip) {
                out += (size_t)snprintf(dir + out, sizeof dir - out, "%s", origin);
                out = out < sizeof dir ? out : sizeof dir - 1;
                i += skip;
            } else {
                dir[out++] = list[i++];
            }
        }
        dirs_add(l, dir, out);
        list += len + (list[len] == ':');
    }
}

/* /etc/ld.so.conf and its includes (globs), as ldconfig reads them to build
 * the cache the loader consults. depth bounds include cycles. */
static void dirs_add_conf(struct dirs *l, const char *path, int depth)
{
    FILE *f = depth < 8 ? fopen(path, "r") : NULL;
    if (!f)
        return;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "#\n")] = '\0';
        char *word = line + strspn(line, " \t");
        size_t end = strlen(word);
        while (end && (word[end - 1] == ' ' || word[end - 1] == '\t'))
            word[--end] = '\0';
        if (!strncmp(word, "include", 7) && (word[7] == ' ' || word[7] == '\t')) {
            char *pattern = word + 7 + strspn(word + 7, " \t");
            glob_t g;
            if (glob(pattern, 0, NULL, &g) == 0) {
                for (size_t i = 0; i < g.gl_pathc; i++)
                    dirs_add_conf(l, g.gl_pathv[i], depth + 1);
                globfree(&g);
            }
        } else if (*word == '/') {
            dirs_add(l, word, end);
        }
    }
    fclose(f);
}

/* The loader's search for soname needed by an object in origin with the
 * given DT_RPATH and DT_RUNPATH (ld.so(8)): the path found, malloc'd, with
 * the library's own dependencies in *deps (read once, here), or NULL. Only
 * 64-bit little-endian ELF files count, as the loader skips libraries of
 * another class. */
static char *find_library(const char *soname, const char *origin, const char *rpath,
                          const char *runpath, const struct dirs *system, struct elf_deps *deps)
{
    if (strchr(soname, '/')) { /* the name is the path */
        char *found = elf_read_deps(soname, deps, 1) == ELF_OK ? strdup(soname) : NULL;
        if (!found)
            elf_deps_free(deps);
        return found;
    }
    struct dirs order = {0};
    if (rpath && !runpath)
        dirs_add_list(&order, rpath, origin);
    dirs_add_list(&order, getenv("LD_LIBRARY_PATH"), origin);
    if (runpath)
        dirs_add_list(&order, runpath, origin);
    for (unsigned i = 0; i < system->count; i++)
        dirs_add(&order, system->dir[i], strlen(system->dir[i]));
    char *found = NULL;
    for (unsigned i = 0; i < order.count && !found; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", order.dir[i], soname);
        if (access(path, R_OK) == 0 && elf_read_deps(path, deps, 1) == ELF_OK) {
            found = strdup(path);
            if (!found)
                elf_deps_free(deps);
        }
    }
    dirs_free(&order);
    return found;
}

/* ---- the walk ------------------------------------------------------------ */

#define MAX_OBJECTS 1024

struct object {
    char *soname, *path;
    struct elf_deps deps; /* what it needs, when path was found */
    int parent;           /* index of the object that needs it; -1 for the program */
};

/* The chain from the program to objects[i]: "a, which needs b, ..." */
static void print_chain(FILE *out, const struct object *objects, int i)
{
    if (objects[i].parent >= 0) {
        print_chain(out, objects, objects[i].parent);
        fprintf(out, ", which needs ");
    } else {
        fprintf(out, "through ");
    }
    fprintf(out, "%s", objects[i].soname);
}

int ts_info_mpi(const char *path, FILE *out)
{
    enum ts_mpi_abi abi;
    return ts_info_mpi_abi(path, out, &abi);
}

int ts_info_mpi_abi(const char *path, FILE *out, enum ts_mpi_abi *abi)
{
    *abi = TS_MPI_ABI_UNKNOWN;
    struct elf_deps program;
    switch (elf_read_deps(path, &program, 0)) {
    case ELF_SCRIPT:
        fprintf(out,
                "%s: a script: its interpreter loads the MPI at run time (mpi4py: "
                "python3 -c 'from mpi4py import MPI; print(MPI.Get_library_version())' "
                "names it); the table in docs/guide/mpi.md (\"The program's MPI\") gives "
                "the library\n",
                path);
        return 0;
    case ELF_STATIC:
        fprintf(out,
                "%s: statically linked (no dynamic section): no library can replace its "
                "MPI_Barrier, preloaded or not\n",
                path);
        return 1;
    case ELF_BAD: return 2;
    case ELF_OK: break;
    }
    fprintf(out, "%s needs:", path);
    for (size_t i = 0; i < program.count; i++)
        fprintf(out, " %s", program.needed[i]);
    fputc('\n', out);

    struct dirs system = {0};
    dirs_add_conf(&system, "/etc/ld.so.conf", 0);
    static const char *const defaults[] = {"/lib64", "/usr/lib64", "/lib", "/usr/lib"};
    for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++)
        dirs_add(&system, defaults[i], strlen(defaults[i]));

    /* breadth first, as the loader orders its search scope: the first MPI
     * found is the one the program's symbols bind to */
    struct object *objects = calloc(MAX_OBJECTS, sizeof *objects);
    unsigned nobjects = 0, missing = 0;
    int found = -1, mpi_like = -1;
    enum ts_mpi_abi matched = TS_MPI_ABI_UNKNOWN;
    char *program_dir = strdup(path);
    if (!objects || !program_dir) {
        fprintf(stderr, "topsync-info: out of memory\n");
        free(objects);
        free(program_dir);
        elf_deps_free(&program);
        dirs_free(&system);
        return 2;
    }
    char *slash = strrchr(program_dir, '/');
    if (slash)
        *slash = '\0';
    else
        strcpy(program_dir, ".");
    const char *first_missing = NULL;
    for (int parent = -1; parent < (int)nobjects && found < 0; parent++) {
        const struct elf_deps *deps = &program;
        char origin[4096];
        snprintf(origin, sizeof origin, "%s", program_dir);
        if (parent >= 0) {
            if (!objects[parent].path)
                continue;
            deps = &objects[parent].deps;
            snprintf(origin, sizeof origin, "%s", objects[parent].path);
            char *end = strrchr(origin, '/');
            if (end)
                *end = '\0';
        }
        for (size_t i = 0; i < deps->count && found < 0; i++) {
            const char *soname = deps->needed[i];
            int seen = 0;
            for (unsigned k = 0; k < nobjects && !seen; k++)
                seen = !strcmp(objects[k].soname, soname);
            if (seen || nobjects == MAX_OBJECTS)
                continue;
            struct object *o = &objects[nobjects];
            o->soname = strdup(soname);
            o->parent = parent;
            if (!o->soname)
                continue;
            nobjects++;
            matched = ts_mpi_abi_of_soname(soname);
            if (matched != TS_MPI_ABI_UNKNOWN) {
                found = (int)nobjects - 1;
                break;
            }
            if (mpi_like < 0 && !strncmp(soname, "libmpi", 6))
                mpi_like = (int)nobjects - 1;
            /* the object's own RPATH/RUNPATH (glibc also tries the RPATHs
             * of the objects that loaded it, when it has no RUNPATH: not
             * followed here) */
            o->path = find_library(soname, origin, deps->rpath, deps->runpath, &system, &o->deps);
            if (!o->path && missing++ == 0)
                first_missing = o->soname;
        }
    }

    int rc;
    if (found >= 0) {
        fprintf(out, "MPI: %s", ts_mpi_abis[matched].what);
        if (objects[found].parent >= 0) {
            fprintf(out, " (");
            print_chain(out, objects, objects[found].parent);
            fprintf(out, ", which needs %s)", objects[found].soname);
        }
        fprintf(out, "\nuse: %s\n", ts_mpi_abis[matched].library);
        *abi = matched;
        rc = 0;
    } else if (mpi_like >= 0) {
        fprintf(out, "MPI: an MPI library topsync does not know (%s", objects[mpi_like].soname);
        if (objects[mpi_like].parent >= 0) {
            fprintf(out, ", ");
            print_chain(out, objects, objects[mpi_like].parent);
        }
        fprintf(out, "; none of libmpi.so.40, libmpi.so.12, libmpich.so.12, libmpi_abi.so.1): "
                     "no libtopsync-mpi serves it\n");
        rc = 1;
    } else {
        fprintf(out, "MPI: none among its %u dependencies, direct and indirect", nobjects);
        if (missing)
            fprintf(out,
                    " (%u not found as the loader searches, %s first: an MPI behind "
                    "them is not seen; LD_LIBRARY_PATH as the program runs with helps)",
                    missing, first_missing);
        fprintf(out, "; an MPI loaded at run time (dlopen) is not seen here: run the program "
                     "with TOPSYNC_VERBOSE=1 and a libtopsync-mpi preloaded, which names the "
                     "MPI it finds or refuses it; for mpi4py, python3 -c 'from mpi4py import "
                     "MPI; print(MPI.Get_library_version())' names it\n");
        rc = 1;
    }
    for (unsigned i = 0; i < nobjects; i++) {
        free(objects[i].soname);
        free(objects[i].path);
        elf_deps_free(&objects[i].deps);
    }
    free(objects);
    free(program_dir);
    elf_deps_free(&program);
    dirs_free(&system);
    return rc;
}
