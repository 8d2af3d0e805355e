/*
 * src/barrier/algorithms/sense_reversing.c: a central counter (fetch_add, acq_rel);
 * the last to arrive resets it and publishes the episode in the release
 * word (release); the others wait for it (acquire). Every participant
 * writes data before the barrier; after it, every participant must see
 * every write of that episode, and all N must have arrived.
 * -DWEAK: the arrival is relaxed, so the data store may become visible
 * after it (modelled as the store happening after the increment): the
 * check must find a participant that reads stale data.
 */
#define N 3
#define E 2

byte count = 0;
byte release = 0;
byte data[N];
byte arrived[E + 1]; /* ghost: participants that entered episode e */

proctype P(byte me)
{
    byte e = 1, c, q;
    do
    :: e > E -> break
    :: else ->
#ifdef WEAK
        atomic { c = count; count++; arrived[e]++ }
        data[me] = e;
#else
        data[me] = e;
        atomic { c = count; count++; arrived[e]++ } /* fetch_add, acq_rel */
#endif
        if
        :: c == N - 1 -> count = 0; release = e     /* last: reset, publish */
        :: else -> release >= e                      /* wait (acquire) */
        fi;
        assert(arrived[e] == N);
        q = 0;
        do
        :: q < N -> assert(data[q] >= e); q++
        :: else -> break
        od;
        e++
    od
}

init { atomic { run P(0); run P(1); run P(2) } }
