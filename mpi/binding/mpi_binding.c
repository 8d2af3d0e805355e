/*
 * Which MPI library serves this process, found before topsync makes its
 * first MPI call. libtopsync-mpi has no DT_NEEDED on an MPI library: a
 * preloaded library must never bring a second MPI into a process (Debian's
 * libmpich.so.12 beside MPICH 5's libmpi.so.12, or Open MPI 4.1's
 * libmpi.so.40 under mpi4py before it loads Open MPI 5's). Its MPI symbols
 * resolve, lazily, in the MPI the program itself loaded, which this file
 * checks is exactly one library of the ABI this build serves, and refuses
 * (a message naming the library to use, exit status 1) otherwise: a
 * mismatched ABI would otherwise crash inside the MPI or, worse, run.
 * docs/design.md section "MPI libraries and ABIs" has the why.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "binding/mpi_abi_names.h"
#include "binding/binding.h"

#if defined(MPI_ABI_VERSION)
#define OUR_ABI TS_MPI_ABI_STANDARD
#elif defined(OMPI_MAJOR_VERSION)
#define OUR_ABI TS_MPI_ABI_OPENMPI
#elif defined(MPICH)
#define OUR_ABI TS_MPI_ABI_MPICH
#else
#error "libtopsync-mpi: an mpi.h of Open MPI, of the MPICH family or of the MPI-5 standard ABI"
#endif

static char library_path[4096]; /* the MPI library, as loaded */

/* ---- the loaded objects ------------------------------------------------ */

struct object_list {
    char **names;
    size_t count, capacity;
};

static int add_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct object_list *list = data;
    if (!info->dlpi_name || !info->dlpi_name[0])
        return 0; /* the executable: dlsym(RTLD_DEFAULT) below covers it */
    if (list->count == list->capacity) {
        size_t cap = list->capacity ? 2 * list->capacity : 64;
        char **grown = realloc(list->names, cap * sizeof *grown);
        if (!grown)
            return 1;
        list->names = grown;
        list->capacity = cap;
    }
    if ((list->names[list->count] = strdup(info->dlpi_name)) != NULL)
        list->count++;
    return 0;
}

/* The DT_SONAME of a loaded object (glibc relocates the dynamic section's
 * pointers on most targets, not on all: an unrelocated one is below l_addr). */
static void soname_of(const struct link_map *map, char *out, size_t outlen)
{
    const char *strtab = NULL;
    ElfW(Addr) name = 0;
    int have_name = 0;
    for (const ElfW(Dyn) *d = map->l_ld; d && d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_STRTAB)
            strtab = (const char *)(d->d_un.d_ptr < map->l_addr ? map->l_addr + d->d_un.d_ptr
                                                                : d->d_un.d_ptr);
        else if (d->d_tag == DT_SONAME) {
            name = d->d_un.d_val;
            have_name = 1;
        }
    }
    if (strtab && have_name)
        snprintf(out, outlen, "%s", strtab + name);
    else
        out[0] = '\0';
}

/* The MPI libraries found so far: each distinct object defining PMPI_Init,
 * with a handle on it kept open (the MPI stays loaded while we are). */
struct mpi_list {
    struct {
        const void *base;
        const char *fname;
        void *handle;
    } at[8];
    size_t count;
};

/* Note the object that defines `sym` (a PMPI_Init, NULL: none). */
static void note_definer(struct mpi_list *mpis, const void *sym)
{
    Dl_info info;
    if (!sym || !dladdr(sym, &info))
        return;
    for (size_t j = 0; j < mpis->count; j++)
        if (mpis->at[j].base == info.dli_fbase)
            return;
    void *own = mpis->count < sizeof mpis->at / sizeof mpis->at[0]
                    ? dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)
                    : NULL;
    if (own) {
        mpis->at[mpis->count].base = info.dli_fbase;
        mpis->at[mpis->count].fname = info.dli_fname;
        mpis->at[mpis->count].handle = own;
        mpis->count++;
    }
}

/* Before MPI_Init there is no MPI_Abort: the message, then exit status 1. */
static void bind_once(void)
{
    struct object_list list = {0};
    dl_iterate_phdr(add_object, &list);
    /* Every distinct object that defines PMPI_Init is an MPI library; the
     * global scope's first definer covers the executable (a static MPI). */
    struct mpi_list mpis = {.count = 0};
    for (size_t i = 0; i < list.count; i++) {
        void *handle = dlopen(list.names[i], RTLD_LAZY | RTLD_NOLOAD);
        if (handle) {
            note_definer(&mpis, dlsym(handle, "PMPI_Init"));
            dlclose(handle);
        }
        free(list.names[i]);
    }
    free(list.names);
    note_definer(&mpis, dlsym(RTLD_DEFAULT, "PMPI_Init"));

    const char *mine = ts_mpi_abis[OUR_ABI].library;
    if (mpis.count == 0)
        ts_mpi_refuse(
            "%s is loaded into a process with no MPI library (no PMPI_Init): load it into an "
            "MPI program",
            mine);
    if (mpis.count > 1) {
        char both[8192 - 512] = "";
        for (size_t j = 0; j < mpis.count; j++)
            snprintf(both + strlen(both), sizeof both - strlen(both), "%s%s", j ? " and " : "",
                     mpis.at[j].fname);
        ts_mpi_refuse(
            "two MPI libraries are loaded into this process: %s. One program, one MPI: check "
            "LD_LIBRARY_PATH and LD_PRELOAD (%s adds none)",
            both, mine);
    }
    void *mpi = mpis.at[0].handle;
    snprintf(library_path, sizeof library_path, "%s", mpis.at[0].fname);
    char soname[4096] = "";
    struct link_map *map = NULL;
    if (dlinfo(mpi, RTLD_DI_LINKMAP, &map) == 0 && map)
        soname_of(map, soname, sizeof soname);
    if (!soname[0]) {
        const char *slash = strrchr(library_path, '/');
        snprintf(soname, sizeof soname, "%s", slash ? slash + 1 : library_path);
    }
    /* by soname, the ABI's promise (MPICH 5's libmpi.so.12 exports the
     * MPI-5 functions too, so those do not tell); Open MPI also by the
     * object behind MPI_COMM_WORLD (Open MPI 1.x was libmpi.so.12) */
    enum ts_mpi_abi abi = ts_mpi_abi_of_soname(soname);
    if (abi != TS_MPI_ABI_STANDARD && dlsym(mpi, "ompi_mpi_comm_world"))
        abi = TS_MPI_ABI_OPENMPI;
    if (abi != OUR_ABI) {
        char which[1024];
        if (abi == TS_MPI_ABI_UNKNOWN)
            snprintf(which, sizeof which,
                     "an MPI whose ABI topsync does not know (soname %s); topsync serves "
                     "Open MPI (libmpi.so.40), the MPICH ABI (libmpi.so.12, libmpich.so.12) "
                     "and the MPI-5 standard ABI (libmpi_abi.so.1)",
                     soname);
        else
            snprintf(which, sizeof which, "%s (soname %s): use %s", ts_mpi_abis[abi].what, soname,
                     ts_mpi_abis[abi].library);
        ts_mpi_refuse("%s serves %s, but this process's MPI is %s, %s", mine,
                      ts_mpi_abis[OUR_ABI].what, library_path, which);
    }
    /* mpi4py and other dlopen()ers load the MPI with RTLD_LOCAL: our calls
     * into it could not resolve. Promote it to the global scope. */
    if (!dlsym(RTLD_DEFAULT, "PMPI_Init") &&
        !dlopen(library_path, RTLD_LAZY | RTLD_NOLOAD | RTLD_GLOBAL))
        ts_mpi_refuse("cannot make %s's symbols global (%s)", library_path, dlerror());
#ifdef OMPI_MAJOR_VERSION
    /* Open MPI's predefined handles are the addresses of its objects: taken
     * here rather than by load-time relocations, which would need the MPI
     * loaded before us (see the file comment). From the global scope, as
     * libmpi's own references resolve: a program that names MPI_COMM_WORLD
     * holds a copy (R_X86_64_COPY) that libmpi then uses, not its own. */
    static const char *const names[] = {
        "ompi_mpi_comm_world", "ompi_mpi_comm_null",     "ompi_mpi_int",      "ompi_mpi_char",
        "ompi_mpi_byte",       "ompi_mpi_op_max",        "ompi_mpi_op_sum",   "ompi_mpi_info_null",
        "ompi_mpi_comm_self",  "ompi_mpi_long_long_int", "ompi_request_null",
    };
    void *addr[sizeof names / sizeof names[0]];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!(addr[i] = dlsym(RTLD_DEFAULT, names[i])))
            ts_mpi_refuse("%s has no %s: not the Open MPI ABI %s serves", library_path, names[i],
                          mine);
    ts_ompi = (struct ts_ompi_handles){
        .comm_world = addr[0],
        .comm_null = addr[1],
        .type_int = addr[2],
        .type_char = addr[3],
        .type_byte = addr[4],
        .op_max = addr[5],
        .op_sum = addr[6],
        .info_null = addr[7],
        .comm_self = addr[8],
        .type_long_long = addr[9],
        .request_null = addr[10],
    };
#endif
    ts_mpi_chain_resolve(mpi, library_path);
}

static pthread_once_t bound = PTHREAD_ONCE_INIT;

void ts_mpi_bind(void)
{
    pthread_once(&bound, bind_once);
}

const char *ts_mpi_library(void)
{
    return library_path;
}
