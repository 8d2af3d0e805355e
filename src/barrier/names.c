/*
 * The algorithms' names: the registry built from algorithms/list.h, the
 * name grammar (auto, a name, topo:LEVELS/MODE) and its error messages.
 * docs/design.md section 3.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include <topsync/barrier.h>

#include "barrier/barrier_private.h"
#include "barrier/setup.h"
#include "base/error.h"
#include "base/keywords.h"
#include "topology/topology_private.h"

#define TS_ALGORITHM_ADDRESS(stem, name) &TS_ALGO(stem),
const ts_algorithm *const ts_algorithms[TS_NALGORITHMS] = {TS_ALGORITHM_LIST(TS_ALGORITHM_ADDRESS)};
#undef TS_ALGORITHM_ADDRESS

#define TS_ALGORITHM_NAME(stem, name) name,
static const char *const algorithm_names[] = {"auto", TS_ALGORITHM_LIST(TS_ALGORITHM_NAME) NULL};
#undef TS_ALGORITHM_NAME

const char *const *topsync_barrier_algorithm_names(void)
{
    return algorithm_names;
}

#define TS_ALGORITHM_WORD(stem, name) name ", "
#define VALID_ALGORITHMS                                                                   \
    "auto, " TS_ALGORITHM_LIST(TS_ALGORITHM_WORD) "topo:LEVELS (LEVELS a "                 \
                                                  "comma-separated list of l2, l3, numa, " \
                                                  "socket), each topo form optionally "    \
                                                  "followed by /global or /tree"

/* ---------------------------------------------------------------------- */
/* Names.                                                                    */

int ts_barrier_parse_algorithm(const char *name, struct parsed_algorithm *out, const char *origin)
{
    memset(out, 0, sizeof *out);
    out->level_mask = TOPSYNC_LEVELS_ALL;
    if (!name || !*name)
        return ts_fail(EINVAL, "%sempty algorithm name; valid: " VALID_ALGORITHMS, origin);
    if (!strcasecmp(name, "auto"))
        return 0;
    for (size_t i = 0; i < NALGORITHMS; i++) {
        if (ts_algorithms[i] != &ts_algo_topo && !strcasecmp(name, ts_algorithms[i]->name)) {
            out->algo = ts_algorithms[i];
            return 0;
        }
    }
    if (strncasecmp(name, "topo", 4) == 0 &&
        (name[4] == '\0' || name[4] == ':' || name[4] == '/')) {
        char buf[128];
        if (strlen(name) >= sizeof buf)
            return ts_fail(EINVAL, "%salgorithm name too long: '%.40s...'", origin, name);
        strcpy(buf, name);
        char *mode = strchr(buf, '/');
        if (mode) {
            *mode++ = '\0';
            static const ts_keyword_t modes[] = {
                {"global", 0, false},
                {"tree", 1, false},
                {NULL, 0, false},
            };
            const ts_keyword_t *m = ts_keyword_find(modes, mode);
            if (!m) {
                char valid[64];
                ts_keywords_valid(modes, valid, sizeof valid);
                return ts_fail(EINVAL, "%sunknown topo release mode '%s' in '%s'; valid: %s",
                               origin, mode, name, valid);
            }
            out->tree_release = m->value;
            out->mode_given = true;
        }
        if (buf[4] == ':') {
            int rc = topsync_levels_parse(buf + 5, &out->level_mask);
            if (rc < 0)
                return ts_fail(EINVAL, "%sin algorithm '%s': %s", origin, name,
                               topsync_error_message());
        }
        out->algo = &ts_algo_topo;
        return 0;
    }
    if (!strcasecmp(name, "mpi"))
        return ts_fail(EINVAL,
                       "%s'mpi' is a value for the MPI library only (libtopsync-mpi: "
                       "the MPI's own barrier); for this barrier, valid: " VALID_ALGORITHMS,
                       origin);
    return ts_fail(EINVAL, "%sunknown barrier algorithm '%s'; valid: " VALID_ALGORITHMS, origin,
                   name);
}

const char *topsync_barrier_wait_policy_name(const topsync_barrier_t *b)
{
    if (!b)
        return "";
    switch (b->wait.kind) {
    case TS_WAIT_SPIN: return "spin";
    case TS_WAIT_YIELD: return "yield";
    case TS_WAIT_BLOCK: return "block";
    }
    return "?";
}

int topsync_barrier_algorithm_validate(const char *name)
{
    struct parsed_algorithm p;
    return ts_barrier_parse_algorithm(name, &p, "");
}

void ts_barrier_level_list(unsigned mask, char *buf, size_t len)
{
    static const struct {
        unsigned bit;
        const char *word;
    } words[] = {
        {TOPSYNC_LEVEL_L2, "l2"},
        {TOPSYNC_LEVEL_L3, "l3"},
        {TOPSYNC_LEVEL_NUMA, "numa"},
        {TOPSYNC_LEVEL_PACKAGE, "socket"},
    };
    buf[0] = '\0';
    for (size_t i = 0; i < 4; i++)
        if (mask & words[i].bit) {
            if (buf[0])
                strncat(buf, ",", len - strlen(buf) - 1);
            strncat(buf, words[i].word, len - strlen(buf) - 1);
        }
    if (!buf[0])
        snprintf(buf, len, "flat");
}
