/*
 * Word tables (keywords.h): lookup and the "valid: ..." list.
 */
#include "base/keywords.h"
#include "base/error.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

const ts_keyword_t *ts_keyword_find(const ts_keyword_t *table, const char *word)
{
    if (!word)
        return NULL;
    for (const ts_keyword_t *w = table; w->word; w++)
        if (!strcasecmp(word, w->word))
            return w;
    return NULL;
}

const ts_keyword_t *ts_keyword_find_n(const ts_keyword_t *table, const char *word, size_t len)
{
    for (const ts_keyword_t *w = table; w->word; w++)
        if (strlen(w->word) == len && !strncasecmp(word, w->word, len))
            return w;
    return NULL;
}

void ts_keywords_valid(const ts_keyword_t *table, char *buf, size_t size)
{
    size_t used = 0;
    if (size)
        buf[0] = '\0';
    for (const ts_keyword_t *w = table; w->word && used < size; w++) {
        if (w->alias)
            continue;
        int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", w->word);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

int ts_keyword_parse(const ts_keyword_t *table, const char *what, const char *word, int *value)
{
    const ts_keyword_t *w = ts_keyword_find(table, word);
    if (w) {
        *value = w->value;
        return 0;
    }
    char valid[256];
    ts_keywords_valid(table, valid, sizeof valid);
    return ts_fail(EINVAL, "unknown %s '%s'; valid: %s", what, word ? word : "(null)", valid);
}
