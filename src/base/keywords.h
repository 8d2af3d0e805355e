/*
 * Private: turning a word of the user's (an option, a TOPSYNC_* value)
 * into an enum through one table, with the valid words in the error
 * message. docs/design.md section "Layers" (base).
 */
#ifndef TOPSYNC_SRC_BASE_KEYWORDS_H
#define TOPSYNC_SRC_BASE_KEYWORDS_H

#include <stdbool.h>
#include <stddef.h>

/* One entry; a table ends with { NULL }. An alias is accepted but not
 * listed among the valid words (socket for package, default for the
 * policy the library picks). */
typedef struct ts_keyword {
    const char *word;
    int value;
    bool alias;
} ts_keyword_t;

/* The entry matching `word` (ASCII case-insensitive), or NULL. */
const ts_keyword_t *ts_keyword_find(const ts_keyword_t *table, const char *word);
/* The same for the first len bytes of `word` (an item of a list). */
const ts_keyword_t *ts_keyword_find_n(const ts_keyword_t *table, const char *word, size_t len);

/* The listed words, ", "-separated, into buf (always NUL-terminated). */
void ts_keywords_valid(const ts_keyword_t *table, char *buf, size_t size);

/* *value for `word`; otherwise -EINVAL with the message
 * "unknown <what> '<word>'; valid: <listed words>". */
int ts_keyword_parse(const ts_keyword_t *table, const char *what, const char *word, int *value);

#endif
