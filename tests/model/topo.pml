/*
 * src/barrier/algorithms/topo.c (global release mode): two groups {0,1} and {2,3};
 * members publish their arrival word (release); group leader 2 waits for
 * its member (acquire), then publishes its own arrival upward; the top
 * leader 0 waits for its member and for leader 2, then publishes the
 * release word; everybody waits for it. Checked after every episode: all
 * arrived, every write before the barrier visible after it.
 * -DWEAK: member 3's data store may become visible after its arrival
 * (relaxed publish): the check must catch the stale read.
 */
#define N 4
#define E 2

byte arrival[N];
byte release = 0;
byte data[N];
byte arrived[E + 1];

inline check(e)
{
    assert(arrived[e] == N);
    q = 0;
    do
    :: q < N -> assert(data[q] >= e); q++
    :: else -> break
    od
}

proctype member(byte me)
{
    byte e = 1, q;
    do
    :: e > E -> break
    :: else ->
        arrived[e]++;
#ifdef WEAK
        if
        :: me == 3 -> arrival[me] = e; data[me] = e
        :: else -> data[me] = e; arrival[me] = e
        fi;
#else
        data[me] = e;
        arrival[me] = e;            /* publish to the group leader (release) */
#endif
        release >= e;               /* wait for the release (acquire) */
        check(e);
        e++
    od
}

proctype leader2()
{
    byte e = 1, q;
    do
    :: e > E -> break
    :: else ->
        arrived[e]++;
        data[2] = e;
        arrival[3] >= e;            /* its member (acquire) */
        arrival[2] = e;             /* upward (release) */
        release >= e;
        check(e);
        e++
    od
}

proctype top()
{
    byte e = 1, q;
    do
    :: e > E -> break
    :: else ->
        arrived[e]++;
        data[0] = e;
        arrival[1] >= e;            /* its member */
        arrival[2] >= e;            /* the other group's leader */
        release = e;                /* release everybody (release) */
        check(e);
        e++
    od
}

init { atomic { run top(); run member(1); run leader2(); run member(3) } }
