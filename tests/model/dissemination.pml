/*
 * src/barrier/algorithms/dissemination.c: in round k, participant p publishes the
 * episode in the round-k flag of (p + 2^k) mod N (release) and waits for
 * its own round-k flag (acquire). After ceil(log2 N) rounds it has heard,
 * transitively, from everybody: all have arrived, all writes are visible.
 * -DWEAK: the data store may become visible after the first publish
 * (relaxed publish): the check must find stale data after the barrier.
 */
#define N 3
#define E 2

byte flag0[N], flag1[N]; /* round 0 and round 1 flags of each participant */
byte data[N];
byte arrived[E + 1];

proctype P(byte me)
{
    byte e = 1, q;
    do
    :: e > E -> break
    :: else ->
        arrived[e]++;
#ifdef WEAK
        flag0[(me + 1) % N] = e;
        data[me] = e;
#else
        data[me] = e;
        flag0[(me + 1) % N] = e;  /* round 0: publish (release) */
#endif
        flag0[me] >= e;           /* wait (acquire) */
        flag1[(me + 2) % N] = e;  /* round 1 */
        flag1[me] >= e;
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
