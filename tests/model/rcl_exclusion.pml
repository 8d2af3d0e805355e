/*
 * src/rcl.c, run_request(): around a takeover two servicing threads may
 * scan the request lines at once. A request runs only under the lock's
 * `busy` word, claimed by CAS (acquire), with the request re-checked under
 * the claim; the completion (`done`) is published before `busy` is dropped
 * (release). Two clients, two requests each, on one lock, two scanners.
 * Checked: no request runs twice, critical sections never overlap, every
 * request completes with its own result.
 * -DWEAK: `busy` dropped before `done` is published (an order this
 * project had, and that a TSan stress run caught): the check must find a
 * request that runs twice.
 */
#define E 2

byte request[2], done[2]; /* per client line: episodes */
byte arg[2], result[2];
bool busy = 0;
byte counter = 0;
byte inside = 0;
byte runs[2 * (E + 1)];   /* ghost: times request (c, e) ran */

proctype client(byte c)
{
    byte e = 1;
    do
    :: e > E -> break
    :: else ->
        arg[c] = 10 * c + e;        /* (fn, arg) written before the request */
        request[c] = e;             /* publish (release) */
        done[c] >= e;               /* wait (acquire) */
        assert(result[c] == 10 * c + e);
        e++
    od
}

proctype scanner()
{
    byte c, e, t;
    do
    :: c = 0;
       do
       :: c < 2 ->
           e = request[c];
           if
           :: e != done[c] ->
               atomic { if :: !busy -> busy = 1 :: else -> goto next fi } /* CAS */
               if
               :: request[c] == e && done[c] != e ->        /* re-check */
                   inside++;
                   assert(inside == 1);
                   runs[c * (E + 1) + e]++;
                   assert(runs[c * (E + 1) + e] == 1);
                   t = counter; counter = t + 1;             /* the critical section */
                   result[c] = arg[c];
                   inside--;
#ifdef WEAK
                   busy = 0;
                   done[c] = e;
#else
                   done[c] = e;                              /* publish (release) */
                   busy = 0;                                 /* drop (release) */
#endif
               :: else -> busy = 0
               fi
           :: else -> skip
           fi;
next:      c++
       :: else -> break
       od
    :: done[0] == E && done[1] == E -> break
    od;
    assert(counter == 2 * E)
}

init { atomic { run client(0); run client(1); run scanner(); run scanner() } }
