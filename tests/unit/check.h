/* A minimal test harness: CHECK records failures and goes on; main returns
 * the count. Every test program ends with "N passed, N failed". */
#ifndef TOPSYNC_TEST_CHECK_H
#define TOPSYNC_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_passed, check_failed;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (cond) {                                                                  \
            check_passed++;                                                          \
        } else {                                                                     \
            check_failed++;                                                          \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);                            \
        if (check_a_ == check_b_) {                                                                \
            check_passed++;                                                                        \
        } else {                                                                                   \
            check_failed++;                                                                        \
            fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %lld, expected %s == %lld\n", __FILE__, \
                    __LINE__, #a, check_a_, #b, check_b_);                                         \
        }                                                                                          \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *check_a_ = (a), *check_b_ = (b);                                               \
        if (check_a_ && check_b_ && strcmp(check_a_, check_b_) == 0) {                             \
            check_passed++;                                                                        \
        } else {                                                                                   \
            check_failed++;                                                                        \
            fprintf(stderr, "%s:%d: CHECK_STR failed: %s = \"%s\", expected \"%s\"\n", __FILE__,   \
                    __LINE__, #a, check_a_ ? check_a_ : "(null)", check_b_ ? check_b_ : "(null)"); \
        }                                                                                          \
    } while (0)

/* The message of the last failure contains `needle`. */
#define CHECK_MSG(needle) CHECK(strstr(topsync_error_message(), (needle)) != NULL)

static inline int check_summary(void)
{
    printf("%d passed, %d failed\n", check_passed, check_failed);
    return check_failed ? 1 : 0;
}

#endif
