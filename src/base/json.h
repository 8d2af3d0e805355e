/*
 * Private: a small JSON reader for tuning files (RFC 8259: objects,
 * arrays, strings with every escape, numbers, true, false, null), into a
 * tree owned by its root. Depth is limited and every failure says where.
 */
#ifndef TOPSYNC_SRC_TUNE_JSON_H
#define TOPSYNC_SRC_TUNE_JSON_H

#include <stdbool.h>
#include <stddef.h>

typedef enum ts_json_type {
    TS_JSON_NULL,
    TS_JSON_BOOL,
    TS_JSON_NUMBER,
    TS_JSON_STRING,
    TS_JSON_ARRAY,
    TS_JSON_OBJECT,
} ts_json_type;

typedef struct ts_json ts_json;
struct ts_json {
    ts_json_type type;
    bool boolean;
    double number;
    char *string;   /* decoded, NUL-terminated (no NUL inside: \u0000 is refused) */
    char *key;      /* the member's name, inside an object */
    ts_json *child; /* first element or member */
    ts_json *next;  /* next sibling */
};

#define TS_JSON_MAX_DEPTH 32

/* Parse text[0..len); 0 with *out, or -EINVAL with "line L, column C: why"
 * in err, or -ENOMEM. */
int ts_json_parse(const char *text, size_t len, ts_json **out, char *err, size_t errlen);
void ts_json_free(ts_json *root);

/* The member `key` of an object, of the given type; NULL otherwise. */
const ts_json *ts_json_member(const ts_json *object, const char *key, ts_json_type type);

/* Append `text` to buf as a JSON string literal (quotes and escapes);
 * returns the length it needs, like snprintf. */
size_t ts_json_quote(char *buf, size_t len, const char *text);

#endif
