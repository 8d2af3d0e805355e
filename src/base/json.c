/* A small JSON reader (json.h). Recursive descent with a depth limit. */
#include "base/json.h"
#include "base/json_escape.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct parser {
    const char *text, *pos, *end;
    char *err;
    size_t errlen;
    int failed; /* -EINVAL or -ENOMEM once set */
};

static void fail(struct parser *p, const char *why)
{
    if (p->failed)
        return;
    p->failed = -EINVAL;
    unsigned line = 1, column = 1;
    for (const char *c = p->text; c < p->pos && c < p->end; c++) {
        if (*c == '\n') {
            line++;
            column = 1;
        } else {
            column++;
        }
    }
    snprintf(p->err, p->errlen, "line %u, column %u: %s", line, column, why);
}

static void out_of_memory(struct parser *p)
{
    if (!p->failed) {
        p->failed = -ENOMEM;
        snprintf(p->err, p->errlen, "out of memory");
    }
}

static void skip_space(struct parser *p)
{
    while (p->pos < p->end &&
           (*p->pos == ' ' || *p->pos == '\t' || *p->pos == '\n' || *p->pos == '\r'))
        p->pos++;
}

static bool literal(struct parser *p, const char *word)
{
    size_t len = strlen(word);
    if ((size_t)(p->end - p->pos) < len || memcmp(p->pos, word, len) != 0)
        return false;
    p->pos += len;
    return true;
}

static int hex4(const char *s, uint32_t *out)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *dst, uint32_t cp)
{
    if (cp < 0x80) {
        dst[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        dst[0] = (char)(0xc0 | (cp >> 6));
        dst[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        dst[0] = (char)(0xe0 | (cp >> 12));
        dst[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        dst[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    dst[0] = (char)(0xf0 | (cp >> 18));
    dst[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    dst[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    dst[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* A string literal at p->pos (the opening quote); the decoded copy. */
static char *parse_string(struct parser *p)
{
    const char *s = p->pos + 1;
    /* decoded text is never longer than the literal */
    const char *close = s;
    while (close < p->end && *close != '"') {
        if (*close == '\\')
            close++;
        close++;
    }
    if (close >= p->end) {
        fail(p, "unterminated string");
        return NULL;
    }
    char *buf = malloc((size_t)(close - s) + 1);
    if (!buf) {
        out_of_memory(p);
        return NULL;
    }
    size_t n = 0;
    while (s < close) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20) {
            p->pos = s;
            fail(p, "control character in a string");
            free(buf);
            return NULL;
        }
        if (c != '\\') {
            buf[n++] = (char)c;
            s++;
            continue;
        }
        char e = s[1];
        s += 2;
        switch (e) {
        case '"': buf[n++] = '"'; break;
        case '\\': buf[n++] = '\\'; break;
        case '/': buf[n++] = '/'; break;
        case 'b': buf[n++] = '\b'; break;
        case 'f': buf[n++] = '\f'; break;
        case 'n': buf[n++] = '\n'; break;
        case 'r': buf[n++] = '\r'; break;
        case 't': buf[n++] = '\t'; break;
        case 'u': {
            uint32_t cp;
            if (close - s < 4 || hex4(s, &cp) < 0) {
                p->pos = s;
                fail(p, "bad \\u escape");
                free(buf);
                return NULL;
            }
            s += 4;
            if (cp >= 0xd800 && cp < 0xdc00) { /* a surrogate pair */
                uint32_t lo;
                if (close - s < 6 || s[0] != '\\' || s[1] != 'u' || hex4(s + 2, &lo) < 0 ||
                    lo < 0xdc00 || lo > 0xdfff) {
                    p->pos = s;
                    fail(p, "lone surrogate in a \\u escape");
                    free(buf);
                    return NULL;
                }
                s += 6;
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            } else if (cp >= 0xdc00 && cp <= 0xdfff) {
                p->pos = s;
                fail(p, "lone surrogate in a \\u escape");
                free(buf);
                return NULL;
            }
            if (cp == 0) {
                p->pos = s;
                fail(p, "\\u0000 in a string");
                free(buf);
                return NULL;
            }
            n += put_utf8(buf + n, cp); /* at most 4 bytes for 6 or 12 of input */
            break;
        }
        default:
            p->pos = s - 1;
            fail(p, "unknown escape in a string");
            free(buf);
            return NULL;
        }
    }
    buf[n] = '\0';
    p->pos = close + 1;
    return buf;
}

static bool parse_number(struct parser *p, double *out)
{
    const char *s = p->pos;
    if (s < p->end && *s == '-')
        s++;
    if (s >= p->end || !(*s >= '0' && *s <= '9'))
        return false;
    if (*s == '0')
        s++;
    else
        while (s < p->end && *s >= '0' && *s <= '9')
            s++;
    if (s < p->end && *s == '.') {
        s++;
        if (s >= p->end || !(*s >= '0' && *s <= '9'))
            return false;
        while (s < p->end && *s >= '0' && *s <= '9')
            s++;
    }
    if (s < p->end && (*s == 'e' || *s == 'E')) {
        s++;
        if (s < p->end && (*s == '+' || *s == '-'))
            s++;
        if (s >= p->end || !(*s >= '0' && *s <= '9'))
            return false;
        while (s < p->end && *s >= '0' && *s <= '9')
            s++;
    }
    char buf[64];
    size_t len = (size_t)(s - p->pos);
    if (len >= sizeof buf)
        return false;
    memcpy(buf, p->pos, len);
    buf[len] = '\0';
    *out = strtod(buf, NULL);
    p->pos = s;
    return true;
}

static ts_json *parse_value(struct parser *p, int depth);

static ts_json *new_node(struct parser *p, ts_json_type type)
{
    ts_json *v = calloc(1, sizeof *v);
    if (!v)
        out_of_memory(p);
    else
        v->type = type;
    return v;
}

/* Elements of an array or members of an object, after the opening bracket. */
static ts_json *parse_container(struct parser *p, int depth, bool object)
{
    ts_json *v = new_node(p, object ? TS_JSON_OBJECT : TS_JSON_ARRAY);
    if (!v)
        return NULL;
    ts_json **tail = &v->child;
    char close = object ? '}' : ']';
    skip_space(p);
    if (p->pos < p->end && *p->pos == close) {
        p->pos++;
        return v;
    }
    for (;;) {
        char *key = NULL;
        skip_space(p);
        if (object) {
            if (p->pos >= p->end || *p->pos != '"') {
                fail(p, "a member name (a string) expected");
                break;
            }
            key = parse_string(p);
            if (!key)
                break;
            skip_space(p);
            if (p->pos >= p->end || *p->pos != ':') {
                free(key);
                fail(p, "':' expected after a member name");
                break;
            }
            p->pos++;
        }
        ts_json *item = parse_value(p, depth + 1);
        if (!item) {
            free(key);
            break;
        }
        item->key = key;
        *tail = item;
        tail = &item->next;
        skip_space(p);
        if (p->pos < p->end && *p->pos == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->end && *p->pos == close) {
            p->pos++;
            return v;
        }
        fail(p, object ? "',' or '}' expected" : "',' or ']' expected");
        break;
    }
    ts_json_free(v);
    return NULL;
}

static ts_json *parse_value(struct parser *p, int depth)
{
    if (depth > TS_JSON_MAX_DEPTH) {
        fail(p, "nested too deeply");
        return NULL;
    }
    skip_space(p);
    if (p->pos >= p->end) {
        fail(p, "a value expected");
        return NULL;
    }
    ts_json *v;
    switch (*p->pos) {
    case '{':
    case '[': p->pos++; return parse_container(p, depth, p->pos[-1] == '{');
    case '"': {
        char *s = parse_string(p);
        if (!s)
            return NULL;
        if (!(v = new_node(p, TS_JSON_STRING))) {
            free(s);
            return NULL;
        }
        v->string = s;
        return v;
    }
    default: break;
    }
    if (literal(p, "true") || literal(p, "false")) {
        if ((v = new_node(p, TS_JSON_BOOL)))
            v->boolean = p->pos[-1] == 'e' && p->pos[-2] == 'u';
        return v;
    }
    if (literal(p, "null"))
        return new_node(p, TS_JSON_NULL);
    double number;
    if (parse_number(p, &number)) {
        if ((v = new_node(p, TS_JSON_NUMBER)))
            v->number = number;
        return v;
    }
    fail(p, "a value expected");
    return NULL;
}

int ts_json_parse(const char *text, size_t len, ts_json **out, char *err, size_t errlen)
{
    struct parser p = {text, text, text + len, err, errlen, 0};
    *out = NULL;
    if (errlen)
        err[0] = '\0';
    if (memchr(text, '\0', len)) {
        p.pos = memchr(text, '\0', len);
        fail(&p, "a NUL byte");
        return p.failed;
    }
    ts_json *root = parse_value(&p, 0);
    if (root) {
        skip_space(&p);
        if (p.pos != p.end)
            fail(&p, "text after the value");
    }
    if (p.failed) {
        ts_json_free(root);
        return p.failed;
    }
    *out = root;
    return 0;
}

void ts_json_free(ts_json *v)
{
    while (v) {
        ts_json *next = v->next;
        ts_json_free(v->child);
        free(v->string);
        free(v->key);
        free(v);
        v = next;
    }
}

const ts_json *ts_json_member(const ts_json *o, const char *key, ts_json_type type)
{
    if (!o || o->type != TS_JSON_OBJECT)
        return NULL;
    const ts_json *found = NULL;
    for (const ts_json *m = o->child; m; m = m->next)
        if (!strcmp(m->key, key))
            found = m; /* the last of duplicates, as most readers do */
    return found && found->type == type ? found : NULL;
}

size_t ts_json_quote(char *buf, size_t len, const char *text)
{
    size_t n = 0;
#define PUT(c)            \
    do {                  \
        if (n + 1 < len)  \
            buf[n] = (c); \
        n++;              \
    } while (0)
    PUT('"');
    for (const unsigned char *c = (const unsigned char *)text; *c;) {
        char esc[8];
        c += ts_json_escape_char(c, esc);
        for (const char *e = esc; *e; e++)
            PUT(*e);
    }
    PUT('"');
#undef PUT
    if (len)
        buf[n < len ? n : len - 1] = '\0';
    return n;
}
