/*
 * src/wait/wait.h: a waiter about to sleep sets TS_SLEEPING in the very word it
 * waits on (CAS), then futex_wait()s on that value; the publisher's single
 * atomic exchange both publishes the episode and returns the bit, and it
 * calls futex_wake when the bit was set. Checked: no lost wake-up (spin
 * reports a waiter blocked forever as an invalid end state).
 * -DWEAK: the publisher reads the bit, then stores (two operations instead
 * of one read-modify-write): the waiter's CAS can fall between them, and
 * the wake-up is lost. The check must catch it.
 */
#define EPISODE 1

byte value = 0;   /* episode bits of the word */
bool sleeping = 0; /* TS_SLEEPING bit of the same word */
bool asleep = 0;   /* the waiter is inside futex_wait */
bool woken = 0;

active proctype waiter()
{
    byte v;
    bool s;
loop:
    atomic { v = value; s = sleeping }           /* acquire load */
    if
    :: v >= EPISODE -> goto done
    :: else -> skip
    fi;
    if
    :: !s ->                                      /* CAS(v -> v | SLEEPING) */
        atomic {
            if
            :: value == v && !sleeping -> sleeping = 1
            :: else -> goto loop
            fi
        }
    :: else -> skip
    fi;
    /* futex_wait(word, v | SLEEPING): the kernel compares and sleeps at once */
    atomic {
        if
        :: value == v && sleeping -> asleep = 1
        :: else -> goto loop
        fi
    }
    woken;                                         /* blocked until woken */
    atomic { asleep = 0; woken = 0 }
    goto loop;
done:
    skip
}

active proctype publisher()
{
    bool old;
#ifdef WEAK
    old = sleeping;
    atomic { value = EPISODE; sleeping = 0 }
#else
    atomic { old = sleeping; value = EPISODE; sleeping = 0 } /* exchange */
#endif
    if
    :: old -> atomic { if :: asleep -> woken = 1 :: else -> skip fi } /* futex_wake */
    :: else -> skip
    fi
}
