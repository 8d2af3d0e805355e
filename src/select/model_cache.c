/*
 * auto's model-step answers on disk (model_cache.h): one line per case,
 * "KEY<TAB>ALGORITHM<TAB>EXPLANATION". The key names everything the
 * answer depends on (auto.c: machine, placement, count, wait, kind, the
 * tuning file's identity, topsync's version, the model's error bound, the
 * poll mode), so a line is never stale, only unused. The why:
 * docs/design.md section 1, "auto".
 */
#include "select/model_cache.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/file.h"

enum { CACHE_MAX_BYTES = 1 << 20, CACHE_KEEP = 64 };

static char build_identity[96];
static pthread_once_t build_once = PTHREAD_ONCE_INIT;

static void find_build(void)
{
    Dl_info info;
    struct stat st;
    if (dladdr((void *)ts_model_cache_build, &info) && info.dli_fname &&
        stat(info.dli_fname, &st) == 0)
        snprintf(build_identity, sizeof build_identity, "%lu.%ld.%ld.%ld", (unsigned long)st.st_ino,
                 (long)st.st_size, (long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
    else
        snprintf(build_identity, sizeof build_identity, "unknown");
}

const char *ts_model_cache_build(void)
{
    pthread_once(&build_once, find_build);
    return build_identity;
}

bool ts_model_cache_path(const char *tuning_path, const char *fingerprint, char *buf, size_t len)
{
    const char *slash = strrchr(tuning_path, '/');
    if (!slash)
        return false;
    int n = snprintf(buf, len, "%.*s/auto-model-%s.tsv", (int)(slash - tuning_path), tuning_path,
                     fingerprint);
    return n > 0 && (size_t)n < len;
}

/* The next line of text at *at (NUL-terminated in place), or NULL. */
static char *next_line(char **at)
{
    char *line = *at;
    if (!line || !*line)
        return NULL;
    char *end = strchr(line, '\n');
    if (end) {
        *end = '\0';
        *at = end + 1;
    } else {
        *at = line + strlen(line);
    }
    return line;
}

bool ts_model_cache_find(const char *path, const char *key, char *algorithm, size_t algorithm_len,
                         char *explain, size_t explain_len)
{
    char *text = NULL;
    size_t size = 0;
    if (ts_file_read(path, CACHE_MAX_BYTES, TS_FILE_REGULAR_ONLY, &text, &size) < 0)
        return false;
    bool found = false;
    size_t klen = strlen(key);
    char *at = text;
    for (char *line; !found && (line = next_line(&at));) {
        char *alg = line + klen, *why = NULL;
        if (strncmp(line, key, klen) || *alg != '\t' || !(why = strchr(alg + 1, '\t')))
            continue;
        snprintf(algorithm, algorithm_len, "%.*s", (int)(why - alg - 1), alg + 1);
        snprintf(explain, explain_len, "%s", why + 1);
        found = true;
    }
    free(text);
    return found;
}

/* KEY<TAB>ALGORITHM<TAB>EXPLANATION, printable: a damaged line is dropped. */
static bool well_formed(const char *line)
{
    const char *tab = strchr(line, '\t');
    if (!tab || tab == line || !strchr(tab + 1, '\t'))
        return false;
    for (; *line; line++)
        if ((unsigned char)*line < ' ' && *line != '\t')
            return false;
    return true;
}

/* A field as a line may hold it: tabs and newlines become spaces. */
static void put_field(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(*s == '\t' || *s == '\n' ? ' ' : *s, f);
}

/* What ts_model_cache_store writes: the new line, then the others. */
struct cache_line {
    const char *path, *key, *algorithm, *explain;
};

/* ts_file_replace's callback: the newest first, ours, then the
 * well-formed others the file held, up to CACHE_KEEP */
static void write_cache(FILE *f, void *arg)
{
    const struct cache_line *c = arg;
    put_field(f, c->key);
    fputc('\t', f);
    put_field(f, c->algorithm);
    fputc('\t', f);
    put_field(f, c->explain);
    fputc('\n', f);
    char *text = NULL;
    size_t size = 0, klen = strlen(c->key);
    if (ts_file_read(c->path, CACHE_MAX_BYTES, TS_FILE_REGULAR_ONLY, &text, &size) < 0)
        return;
    char *at = text;
    unsigned kept = 1;
    for (char *line; kept < CACHE_KEEP && (line = next_line(&at));)
        if (well_formed(line) && (strncmp(line, c->key, klen) || line[klen] != '\t')) {
            fprintf(f, "%s\n", line);
            kept++;
        }
    free(text);
}

void ts_model_cache_store(const char *path, const char *key, const char *algorithm,
                          const char *explain)
{
    /* not synced: a cache line lost in a crash is computed again. The XDG
     * cache directory (and ~/.cache) may not exist yet: made 0700, as the
     * specification asks */
    struct cache_line line = {path, key, algorithm, explain};
    ts_file_replace_step failed;
    (void)ts_file_replace(path, false, write_cache, &line, &failed);
}
