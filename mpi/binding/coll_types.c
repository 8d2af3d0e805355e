/*
 * The MPI's predefined datatypes and ops as topsync's collectives know
 * them: which C type a handle is, and which op. Open MPI's handles are
 * addresses in libmpi, looked up by name once (no load-time relocation
 * against an MPI: binding.h); MPICH's and the standard ABI's are
 * constants. Each type's size and extent are checked against the C type's
 * once, so a pair type laid out otherwise goes to the MPI's own.
 * The why: docs/design.md section 9.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <mpi.h>

#include "binding/binding.h"

#ifdef OMPI_MAJOR_VERSION
#define HANDLE(constant, ompi_symbol) NULL, ompi_symbol
#else
#define HANDLE(constant, ompi_symbol) constant, NULL
#endif

#define INT_TYPE(T)                        \
    (sizeof(T) == 1   ? TOPSYNC_TYPE_INT8  \
     : sizeof(T) == 2 ? TOPSYNC_TYPE_INT16 \
     : sizeof(T) == 4 ? TOPSYNC_TYPE_INT32 \
                      : TOPSYNC_TYPE_INT64)
#define UINT_TYPE(T)                        \
    (sizeof(T) == 1   ? TOPSYNC_TYPE_UINT8  \
     : sizeof(T) == 2 ? TOPSYNC_TYPE_UINT16 \
     : sizeof(T) == 4 ? TOPSYNC_TYPE_UINT32 \
                      : TOPSYNC_TYPE_UINT64)
/* A type only broadcast moves (MPI defines no reduction on it). */
#define MOVE_ONLY (-1)

static struct type_entry {
    MPI_Datatype handle;
    const char *symbol;
    int type;    /* topsync_datatype_t, or MOVE_ONLY */
    size_t size; /* of the C type (MOVE_ONLY: of the MPI's type, read at bind) */
    bool usable;
} types[] = {
    /* the commonest first: the lookup is a linear search */
    {HANDLE(MPI_DOUBLE, "ompi_mpi_double"), TOPSYNC_TYPE_DOUBLE, sizeof(double), 0},
    {HANDLE(MPI_INT, "ompi_mpi_int"), INT_TYPE(int), sizeof(int), 0},
    {HANDLE(MPI_LONG, "ompi_mpi_long"), INT_TYPE(long), sizeof(long), 0},
    {HANDLE(MPI_FLOAT, "ompi_mpi_float"), TOPSYNC_TYPE_FLOAT, sizeof(float), 0},
    {HANDLE(MPI_UNSIGNED_LONG, "ompi_mpi_unsigned_long"), UINT_TYPE(unsigned long),
     sizeof(unsigned long), 0},
    {HANDLE(MPI_LONG_LONG_INT, "ompi_mpi_long_long_int"), INT_TYPE(long long), sizeof(long long),
     0},
    {HANDLE(MPI_UNSIGNED, "ompi_mpi_unsigned"), UINT_TYPE(unsigned), sizeof(unsigned), 0},
    {HANDLE(MPI_DOUBLE_INT, "ompi_mpi_double_int"), TOPSYNC_TYPE_DOUBLE_INT, 0, 0},
    {HANDLE(MPI_2INT, "ompi_mpi_2int"), TOPSYNC_TYPE_2INT, 0, 0},
    {HANDLE(MPI_BYTE, "ompi_mpi_byte"), MOVE_ONLY, 0, 0},
    {HANDLE(MPI_CHAR, "ompi_mpi_char"), MOVE_ONLY, 0, 0},
    {HANDLE(MPI_SHORT, "ompi_mpi_short"), INT_TYPE(short), sizeof(short), 0},
    {HANDLE(MPI_UNSIGNED_SHORT, "ompi_mpi_unsigned_short"), UINT_TYPE(unsigned short),
     sizeof(unsigned short), 0},
    {HANDLE(MPI_UNSIGNED_LONG_LONG, "ompi_mpi_unsigned_long_long"), UINT_TYPE(unsigned long long),
     sizeof(unsigned long long), 0},
    {HANDLE(MPI_SIGNED_CHAR, "ompi_mpi_signed_char"), TOPSYNC_TYPE_INT8, 1, 0},
    {HANDLE(MPI_UNSIGNED_CHAR, "ompi_mpi_unsigned_char"), TOPSYNC_TYPE_UINT8, 1, 0},
    {HANDLE(MPI_INT8_T, "ompi_mpi_int8_t"), TOPSYNC_TYPE_INT8, 1, 0},
    {HANDLE(MPI_INT16_T, "ompi_mpi_int16_t"), TOPSYNC_TYPE_INT16, 2, 0},
    {HANDLE(MPI_INT32_T, "ompi_mpi_int32_t"), TOPSYNC_TYPE_INT32, 4, 0},
    {HANDLE(MPI_INT64_T, "ompi_mpi_int64_t"), TOPSYNC_TYPE_INT64, 8, 0},
    {HANDLE(MPI_UINT8_T, "ompi_mpi_uint8_t"), TOPSYNC_TYPE_UINT8, 1, 0},
    {HANDLE(MPI_UINT16_T, "ompi_mpi_uint16_t"), TOPSYNC_TYPE_UINT16, 2, 0},
    {HANDLE(MPI_UINT32_T, "ompi_mpi_uint32_t"), TOPSYNC_TYPE_UINT32, 4, 0},
    {HANDLE(MPI_UINT64_T, "ompi_mpi_uint64_t"), TOPSYNC_TYPE_UINT64, 8, 0},
    {HANDLE(MPI_AINT, "ompi_mpi_aint"), INT_TYPE(MPI_Aint), sizeof(MPI_Aint), 0},
    {HANDLE(MPI_OFFSET, "ompi_mpi_offset"), INT_TYPE(MPI_Offset), sizeof(MPI_Offset), 0},
    {HANDLE(MPI_COUNT, "ompi_mpi_count"), INT_TYPE(MPI_Count), sizeof(MPI_Count), 0},
    {HANDLE(MPI_LONG_DOUBLE, "ompi_mpi_long_double"), TOPSYNC_TYPE_LONG_DOUBLE, sizeof(long double),
     0},
    {HANDLE(MPI_C_BOOL, "ompi_mpi_c_bool"), TOPSYNC_TYPE_BOOL, sizeof(_Bool), 0},
    {HANDLE(MPI_C_FLOAT_COMPLEX, "ompi_mpi_c_float_complex"), TOPSYNC_TYPE_FLOAT_COMPLEX,
     sizeof(float _Complex), 0},
#ifdef OMPI_MAJOR_VERSION /* the same handle as MPI_C_FLOAT_COMPLEX elsewhere */
    {HANDLE(MPI_C_COMPLEX, "ompi_mpi_c_complex"), TOPSYNC_TYPE_FLOAT_COMPLEX,
     sizeof(float _Complex), 0},
#endif
    {HANDLE(MPI_C_DOUBLE_COMPLEX, "ompi_mpi_c_double_complex"), TOPSYNC_TYPE_DOUBLE_COMPLEX,
     sizeof(double _Complex), 0},
    {HANDLE(MPI_FLOAT_INT, "ompi_mpi_float_int"), TOPSYNC_TYPE_FLOAT_INT, 0, 0},
    {HANDLE(MPI_LONG_INT, "ompi_mpi_long_int"), TOPSYNC_TYPE_LONG_INT, 0, 0},
    {HANDLE(MPI_SHORT_INT, "ompi_mpi_short_int"), TOPSYNC_TYPE_SHORT_INT, 0, 0},
    {HANDLE(MPI_LONG_DOUBLE_INT, "ompi_mpi_longdbl_int"), TOPSYNC_TYPE_LONG_DOUBLE_INT, 0, 0},
    {HANDLE(MPI_WCHAR, "ompi_mpi_wchar"), MOVE_ONLY, 0, 0},
#if defined(OMPI_MAJOR_VERSION) || defined(MPI_INTEGER)
    /* Fortran's, from C: checked against the C type of their size below */
    {HANDLE(MPI_INTEGER, "ompi_mpi_integer"), TOPSYNC_TYPE_INT32, 4, 0},
    {HANDLE(MPI_REAL, "ompi_mpi_real"), TOPSYNC_TYPE_FLOAT, sizeof(float), 0},
    {HANDLE(MPI_DOUBLE_PRECISION, "ompi_mpi_dblprec"), TOPSYNC_TYPE_DOUBLE, sizeof(double), 0},
#endif
};

static const struct op_entry {
    MPI_Op handle;
    const char *symbol;
    topsync_op_t op;
} ops_init[] = {
    {HANDLE(MPI_SUM, "ompi_mpi_op_sum"), TOPSYNC_OP_SUM},
    {HANDLE(MPI_MAX, "ompi_mpi_op_max"), TOPSYNC_OP_MAX},
    {HANDLE(MPI_MIN, "ompi_mpi_op_min"), TOPSYNC_OP_MIN},
    {HANDLE(MPI_PROD, "ompi_mpi_op_prod"), TOPSYNC_OP_PROD},
    {HANDLE(MPI_LAND, "ompi_mpi_op_land"), TOPSYNC_OP_LAND},
    {HANDLE(MPI_LOR, "ompi_mpi_op_lor"), TOPSYNC_OP_LOR},
    {HANDLE(MPI_LXOR, "ompi_mpi_op_lxor"), TOPSYNC_OP_LXOR},
    {HANDLE(MPI_BAND, "ompi_mpi_op_band"), TOPSYNC_OP_BAND},
    {HANDLE(MPI_BOR, "ompi_mpi_op_bor"), TOPSYNC_OP_BOR},
    {HANDLE(MPI_BXOR, "ompi_mpi_op_bxor"), TOPSYNC_OP_BXOR},
    {HANDLE(MPI_MINLOC, "ompi_mpi_op_minloc"), TOPSYNC_OP_MINLOC},
    {HANDLE(MPI_MAXLOC, "ompi_mpi_op_maxloc"), TOPSYNC_OP_MAXLOC},
};
static struct op_entry ops[sizeof ops_init / sizeof ops_init[0]];

enum { NTYPES = sizeof types / sizeof types[0], NOPS = sizeof ops / sizeof ops[0] };

static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Once, after MPI_Init: the handles (Open MPI), and each type's layout.
 * A reducible type is usable when the MPI's size and extent are the C
 * type's; a move-only one when its extent is its size. */
static void load(void)
{
    for (int i = 0; i < NOPS; i++) {
        ops[i] = ops_init[i];
#ifdef OMPI_MAJOR_VERSION
        ops[i].handle = (MPI_Op)dlsym(RTLD_DEFAULT, ops[i].symbol);
#endif
    }
    for (int i = 0; i < NTYPES; i++) {
        struct type_entry *t = &types[i];
#ifdef OMPI_MAJOR_VERSION
        t->handle = (MPI_Datatype)dlsym(RTLD_DEFAULT, t->symbol);
        if (!t->handle)
            continue;
#endif
        int size = 0;
        MPI_Aint lb = 0, extent = 0;
        if (PMPI_Type_size(t->handle, &size) != MPI_SUCCESS ||
            PMPI_Type_get_extent(t->handle, &lb, &extent) != MPI_SUCCESS)
            continue;
        if (t->type != MOVE_ONLY && !t->size)
            t->size = topsync_datatype_size((topsync_datatype_t)t->type);
        if (t->type == MOVE_ONLY && lb == 0 && extent == size && size > 0)
            t->size = (size_t)size;
        /* a pair's size counts no padding; its extent is the C struct's */
        t->usable = lb == 0 && (size_t)extent == t->size &&
                    (size == extent || t->type >= (int)TOPSYNC_TYPE_FLOAT_INT);
    }
}

/* initial-exec: looked up on every call; one entry each remembers the
 * last handle this thread passed (predefined handles never change) */
static _Thread_local __attribute__((tls_model("initial-exec"))) const struct type_entry *last_type;
static _Thread_local __attribute__((tls_model("initial-exec"))) const struct op_entry *last_op;

bool ts_mpi_coll_type(MPI_Datatype dt, int *type, size_t *size)
{
    const struct type_entry *t = last_type;
    if (!t || t->handle != dt) {
        pthread_once(&once, load);
        t = NULL;
        for (int i = 0; i < NTYPES && !t; i++)
            if (types[i].usable && types[i].handle == dt)
                t = &types[i];
        if (!t)
            return false;
        last_type = t;
    }
    *type = t->type;
    *size = t->size;
    return true;
}

bool ts_mpi_coll_op(MPI_Op op, topsync_op_t *out)
{
    const struct op_entry *o = last_op;
    if (!o || o->handle != op) {
        pthread_once(&once, load);
        o = NULL;
        for (int i = 0; i < NOPS && !o; i++)
            if (ops[i].handle == op && ops[i].handle)
                o = &ops[i];
        if (!o)
            return false;
        last_op = o;
    }
    *out = o->op;
    return true;
}

const char *ts_mpi_coll_name(topsync_coll_kind_t kind)
{
    static const char *const names[] = {"MPI_Allreduce", "MPI_Reduce", "MPI_Bcast"};
    _Static_assert(TOPSYNC_COLL_ALLREDUCE == 0 && TOPSYNC_COLL_REDUCE == 1 &&
                       TOPSYNC_COLL_BCAST == 2 && TOPSYNC_COLL_KINDS == 3,
                   "names in topsync_coll_kind_t's order");
    return (unsigned)kind < TOPSYNC_COLL_KINDS ? names[kind] : "";
}
