/*
 * topsync-info --mpi PROGRAM: which libtopsync-mpi serves a program, read
 * from the MPI library among its DT_NEEDED entries (the ELF file itself,
 * not ldd: nothing of the program is loaded or run). The sonames are the
 * ABIs' promises (mpi/mpi_abi_names.h, the table mpi/mpi_binding.c checks
 * at run time); docs/design.md section "MPI libraries and ABIs".
 */
#include "mpi_match.h"
#include "mpi_abi_names.h"
#include "base/file.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole file, at most 1 GiB; NULL with a message on failure. */
static unsigned char *read_all(const char *path, size_t *len)
{
    char *text = NULL;
    int rc = ts_file_read(path, (size_t)1 << 30, 0, &text, len);
    if (rc == -EFBIG)
        fprintf(stderr, "topsync-info: %s: larger than 1 GiB\n", path);
    else if (rc < 0)
        fprintf(stderr, "%s: %s\n", path, strerror(-rc));
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

int ts_info_mpi(const char *path, FILE *out)
{
    size_t len = 0;
    unsigned char *elf = read_all(path, &len);
    if (!elf)
        return 1;
    int rc = 2;
    const Elf64_Ehdr *eh = (const void *)elf;
    if (len >= 2 && elf[0] == '#' && elf[1] == '!') {
        fprintf(out,
                "%s: a script: its interpreter loads the MPI at run time (mpi4py: "
                "python3 -c 'from mpi4py import MPI; print(MPI.Get_library_version())' "
                "names it); the table in README.md section \"Which library for which "
                "MPI\" gives the library\n",
                path);
        free(elf);
        return 0;
    }
    if (len < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) {
        fprintf(stderr, "topsync-info: %s: not an ELF file\n", path);
        goto out;
    }
    if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB) {
        fprintf(stderr, "topsync-info: %s: not a 64-bit little-endian ELF file\n", path);
        goto out;
    }
    if (eh->e_phoff >= len || eh->e_phentsize != sizeof(Elf64_Phdr) ||
        (len - eh->e_phoff) / sizeof(Elf64_Phdr) < eh->e_phnum) {
        fprintf(stderr, "topsync-info: %s: truncated ELF file (program headers)\n", path);
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
        fprintf(out,
                "%s: statically linked (no dynamic section): no library can replace its "
                "MPI_Barrier, preloaded or not\n",
                path);
        rc = 1;
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
        fprintf(stderr, "topsync-info: %s: truncated ELF file (string table)\n", path);
        goto out;
    }
    enum ts_mpi_abi matched = TS_MPI_ABI_UNKNOWN;
    int mpi_like = 0;
    fprintf(out, "%s needs:", path);
    for (size_t i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
        if (dyn[i].d_tag != DT_NEEDED || dyn[i].d_un.d_val >= strsz)
            continue;
        const char *name = (const char *)elf + strtab + dyn[i].d_un.d_val;
        if (!memchr(name, '\0', strsz - dyn[i].d_un.d_val))
            continue;
        fprintf(out, " %s", name);
        if (matched == TS_MPI_ABI_UNKNOWN)
            matched = ts_mpi_abi_of_soname(name);
        mpi_like |= !strncmp(name, "libmpi", 6);
    }
    fputc('\n', out);
    if (matched != TS_MPI_ABI_UNKNOWN) {
        fprintf(out, "MPI: %s\nuse: %s\n", ts_mpi_abis[matched].what, ts_mpi_abis[matched].library);
        rc = 0;
    } else if (mpi_like) {
        fprintf(out, "MPI: an MPI library topsync does not know (none of libmpi.so.40, "
                     "libmpi.so.12, libmpich.so.12, libmpi_abi.so.1): no libtopsync-mpi "
                     "serves it\n");
        rc = 1;
    } else {
        fprintf(out, "MPI: none among its direct dependencies (an MPI loaded by one of its "
                     "libraries, or at run time, is not seen here: run the program with "
                     "TOPSYNC_VERBOSE=1 and a libtopsync-mpi preloaded, which names the MPI "
                     "it finds or refuses it; for mpi4py, python3 -c 'from mpi4py import MPI; "
                     "print(MPI.Get_library_version())' names it)\n");
        rc = 1;
    }
out:
    free(elf);
    return rc;
}
