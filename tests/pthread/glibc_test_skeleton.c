/*
 * The part of glibc's test skeleton that its nptl barrier tests
 * (tst-barrier1..4, from glibc's source package, ../shared/SUITES.md)
 * use, written for running them outside glibc's build tree: the test
 * defines do_test and TEST_FUNCTION (and may define TIMEOUT, seconds),
 * then includes this file as "../test-skeleton.c". Exit status: the
 * test's (0 passed, 77 unsupported, other failed); a test that outlives
 * its timeout is killed by SIGALRM, which tests/pthread/glibc_tests.sh
 * reports as a hang.
 */
#include <stdlib.h>
#include <unistd.h>

#ifndef TIMEOUT
#define TIMEOUT 20
#endif

int main(void)
{
    alarm(TIMEOUT);
    return TEST_FUNCTION;
}
