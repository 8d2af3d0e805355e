/*
 * The predefined reduction operations: acc[i] = acc[i] op in[i] for every
 * type and op of collectives.h, and which op applies to which type (MPI's
 * rules). The why: docs/design.md section 9.
 */
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <topsync/collectives.h>

#include "base/error.h"
#include "collectives/coll_private.h"

struct float_int {
    float value;
    int index;
};
struct double_int {
    double value;
    int index;
};
struct long_int {
    long value;
    int index;
};
struct int_int {
    int value;
    int index;
};
struct short_int {
    short value;
    int index;
};
struct long_double_int {
    long double value;
    int index;
};

enum type_class { CLASS_INT, CLASS_FLOAT, CLASS_COMPLEX, CLASS_BOOL, CLASS_PAIR };

static const struct {
    const char *name;
    size_t size;
    enum type_class cls;
} types[TOPSYNC_TYPE_COUNT] = {
    [TOPSYNC_TYPE_INT8] = {"int8", 1, CLASS_INT},
    [TOPSYNC_TYPE_INT16] = {"int16", 2, CLASS_INT},
    [TOPSYNC_TYPE_INT32] = {"int32", 4, CLASS_INT},
    [TOPSYNC_TYPE_INT64] = {"int64", 8, CLASS_INT},
    [TOPSYNC_TYPE_UINT8] = {"uint8", 1, CLASS_INT},
    [TOPSYNC_TYPE_UINT16] = {"uint16", 2, CLASS_INT},
    [TOPSYNC_TYPE_UINT32] = {"uint32", 4, CLASS_INT},
    [TOPSYNC_TYPE_UINT64] = {"uint64", 8, CLASS_INT},
    [TOPSYNC_TYPE_FLOAT] = {"float", sizeof(float), CLASS_FLOAT},
    [TOPSYNC_TYPE_DOUBLE] = {"double", sizeof(double), CLASS_FLOAT},
    [TOPSYNC_TYPE_LONG_DOUBLE] = {"long-double", sizeof(long double), CLASS_FLOAT},
    [TOPSYNC_TYPE_BOOL] = {"bool", sizeof(bool), CLASS_BOOL},
    [TOPSYNC_TYPE_FLOAT_COMPLEX] = {"float-complex", sizeof(float _Complex), CLASS_COMPLEX},
    [TOPSYNC_TYPE_DOUBLE_COMPLEX] = {"double-complex", sizeof(double _Complex), CLASS_COMPLEX},
    [TOPSYNC_TYPE_FLOAT_INT] = {"float-int", sizeof(struct float_int), CLASS_PAIR},
    [TOPSYNC_TYPE_DOUBLE_INT] = {"double-int", sizeof(struct double_int), CLASS_PAIR},
    [TOPSYNC_TYPE_LONG_INT] = {"long-int", sizeof(struct long_int), CLASS_PAIR},
    [TOPSYNC_TYPE_2INT] = {"2int", sizeof(struct int_int), CLASS_PAIR},
    [TOPSYNC_TYPE_SHORT_INT] = {"short-int", sizeof(struct short_int), CLASS_PAIR},
    [TOPSYNC_TYPE_LONG_DOUBLE_INT] = {"long-double-int", sizeof(struct long_double_int),
                                      CLASS_PAIR},
};

static const char *const op_names[TOPSYNC_OP_COUNT] = {
    "sum", "prod", "min", "max", "land", "lor", "lxor", "band", "bor", "bxor", "minloc", "maxloc",
};

/* Which classes each op takes (MPI 4.0 section 6.9.2). */
static bool op_takes(topsync_op_t op, enum type_class cls)
{
    switch (op) {
    case TOPSYNC_OP_SUM:
    case TOPSYNC_OP_PROD: return cls == CLASS_INT || cls == CLASS_FLOAT || cls == CLASS_COMPLEX;
    case TOPSYNC_OP_MIN:
    case TOPSYNC_OP_MAX: return cls == CLASS_INT || cls == CLASS_FLOAT;
    case TOPSYNC_OP_LAND:
    case TOPSYNC_OP_LOR:
    case TOPSYNC_OP_LXOR: return cls == CLASS_INT || cls == CLASS_BOOL;
    case TOPSYNC_OP_BAND:
    case TOPSYNC_OP_BOR:
    case TOPSYNC_OP_BXOR: return cls == CLASS_INT;
    case TOPSYNC_OP_MINLOC:
    case TOPSYNC_OP_MAXLOC: return cls == CLASS_PAIR;
    case TOPSYNC_OP_COUNT: break;
    }
    return false;
}

static const char *const takes_words[TOPSYNC_OP_COUNT] = {
    "integer, floating point and complex types",
    "integer, floating point and complex types",
    "integer and floating point types",
    "integer and floating point types",
    "integer types and bool",
    "integer types and bool",
    "integer types and bool",
    "integer types",
    "integer types",
    "integer types",
    "the (value, index) pair types",
    "the (value, index) pair types",
};

size_t topsync_datatype_size(topsync_datatype_t type)
{
    return (unsigned)type < TOPSYNC_TYPE_COUNT ? types[type].size : 0;
}

const char *topsync_datatype_name(topsync_datatype_t type)
{
    return (unsigned)type < TOPSYNC_TYPE_COUNT ? types[type].name : "";
}

const char *topsync_op_name(topsync_op_t op)
{
    return (unsigned)op < TOPSYNC_OP_COUNT ? op_names[op] : "";
}

bool ts_coll_op_applies(topsync_op_t op, topsync_datatype_t type)
{
    return (unsigned)op < TOPSYNC_OP_COUNT && (unsigned)type < TOPSYNC_TYPE_COUNT &&
           op_takes(op, types[type].cls);
}

int topsync_op_check(topsync_op_t op, topsync_datatype_t type)
{
    if ((unsigned)op >= TOPSYNC_OP_COUNT)
        return ts_fail(EINVAL, "collectives: unknown op %d (valid: 0 to %d, TOPSYNC_OP_*)", (int)op,
                       TOPSYNC_OP_COUNT - 1);
    if ((unsigned)type >= TOPSYNC_TYPE_COUNT)
        return ts_fail(EINVAL, "collectives: unknown datatype %d (valid: 0 to %d, TOPSYNC_TYPE_*)",
                       (int)type, TOPSYNC_TYPE_COUNT - 1);
    if (!op_takes(op, types[type].cls))
        return ts_fail(EINVAL, "collectives: op %s does not apply to %s (it takes %s)",
                       op_names[op], types[type].name, takes_words[op]);
    return 0;
}

/* Integer arithmetic wraps, done in an unsigned type at least as wide as
 * int (a uint16_t would be promoted to int, whose product can overflow):
 * a signed overflow must not be undefined behaviour inside the library. */
#define INT_LOOP(T, U, EXPR)                 \
    do {                                     \
        T *a = acc;                          \
        const T *b = in;                     \
        for (size_t i = 0; i < count; i++) { \
            T x = a[i], y = b[i];            \
            (void)sizeof(U);                 \
            a[i] = (T)(EXPR);                \
        }                                    \
    } while (0)

#define INT_OPS(T, U)                                           \
    switch (op) {                                               \
    case TOPSYNC_OP_SUM: INT_LOOP(T, U, (U)x + (U)y); return;   \
    case TOPSYNC_OP_PROD: INT_LOOP(T, U, (U)x *(U)y); return;   \
    case TOPSYNC_OP_MIN: INT_LOOP(T, U, y < x ? y : x); return; \
    case TOPSYNC_OP_MAX: INT_LOOP(T, U, y > x ? y : x); return; \
    case TOPSYNC_OP_LAND: INT_LOOP(T, U, x &&y); return;        \
    case TOPSYNC_OP_LOR: INT_LOOP(T, U, x || y); return;        \
    case TOPSYNC_OP_LXOR: INT_LOOP(T, U, !x != !y); return;     \
    case TOPSYNC_OP_BAND: INT_LOOP(T, U, (U)x &(U)y); return;   \
    case TOPSYNC_OP_BOR: INT_LOOP(T, U, (U)x | (U)y); return;   \
    case TOPSYNC_OP_BXOR: INT_LOOP(T, U, (U)x ^ (U)y); return;  \
    default: return;                                            \
    }

#define FLOAT_OPS(T)                                            \
    switch (op) {                                               \
    case TOPSYNC_OP_SUM: INT_LOOP(T, T, x + y); return;         \
    case TOPSYNC_OP_PROD: INT_LOOP(T, T, x *y); return;         \
    case TOPSYNC_OP_MIN: INT_LOOP(T, T, y < x ? y : x); return; \
    case TOPSYNC_OP_MAX: INT_LOOP(T, T, y > x ? y : x); return; \
    default: return;                                            \
    }

#define COMPLEX_OPS(T)                                  \
    switch (op) {                                       \
    case TOPSYNC_OP_SUM: INT_LOOP(T, T, x + y); return; \
    case TOPSYNC_OP_PROD: INT_LOOP(T, T, x *y); return; \
    default: return;                                    \
    }

/* MINLOC / MAXLOC: the better value; on a tie the lower index (MPI). */
#define PAIR_OPS(S)                                                       \
    do {                                                                  \
        struct S *a = acc;                                                \
        const struct S *b = in;                                           \
        bool min = op == TOPSYNC_OP_MINLOC;                               \
        for (size_t i = 0; i < count; i++) {                              \
            if (min ? b[i].value < a[i].value : b[i].value > a[i].value)  \
                a[i] = b[i];                                              \
            else if (b[i].value == a[i].value && b[i].index < a[i].index) \
                a[i].index = b[i].index;                                  \
        }                                                                 \
    } while (0)

void ts_reduce_apply(topsync_datatype_t type, topsync_op_t op, void *acc, const void *in,
                     size_t count)
{
    switch (type) {
    case TOPSYNC_TYPE_INT8: INT_OPS(int8_t, unsigned);
    case TOPSYNC_TYPE_INT16: INT_OPS(int16_t, unsigned);
    case TOPSYNC_TYPE_INT32: INT_OPS(int32_t, uint32_t);
    case TOPSYNC_TYPE_INT64: INT_OPS(int64_t, uint64_t);
    case TOPSYNC_TYPE_UINT8: INT_OPS(uint8_t, unsigned);
    case TOPSYNC_TYPE_UINT16: INT_OPS(uint16_t, unsigned);
    case TOPSYNC_TYPE_UINT32: INT_OPS(uint32_t, uint32_t);
    case TOPSYNC_TYPE_UINT64: INT_OPS(uint64_t, uint64_t);
    case TOPSYNC_TYPE_FLOAT: FLOAT_OPS(float);
    case TOPSYNC_TYPE_DOUBLE: FLOAT_OPS(double);
    case TOPSYNC_TYPE_LONG_DOUBLE: FLOAT_OPS(long double);
    case TOPSYNC_TYPE_BOOL:
        switch (op) {
        case TOPSYNC_OP_LAND: INT_LOOP(bool, bool, x &&y); return;
        case TOPSYNC_OP_LOR: INT_LOOP(bool, bool, x || y); return;
        case TOPSYNC_OP_LXOR: INT_LOOP(bool, bool, x != y); return;
        default: return;
        }
    case TOPSYNC_TYPE_FLOAT_COMPLEX: COMPLEX_OPS(float _Complex);
    case TOPSYNC_TYPE_DOUBLE_COMPLEX: COMPLEX_OPS(double _Complex);
    case TOPSYNC_TYPE_FLOAT_INT: PAIR_OPS(float_int); return;
    case TOPSYNC_TYPE_DOUBLE_INT: PAIR_OPS(double_int); return;
    case TOPSYNC_TYPE_LONG_INT: PAIR_OPS(long_int); return;
    case TOPSYNC_TYPE_2INT: PAIR_OPS(int_int); return;
    case TOPSYNC_TYPE_SHORT_INT: PAIR_OPS(short_int); return;
    case TOPSYNC_TYPE_LONG_DOUBLE_INT: PAIR_OPS(long_double_int); return;
    case TOPSYNC_TYPE_COUNT: return;
    }
}
