/*
 * src/rcl.c, sleep_idle() against topsync_rcl_execute_checked(): an idle
 * server stores SLEEPING in the doorbell, fences (seq_cst), rescans, and
 * sleeps (futex) if it found nothing; a client stores its request, fences
 * (seq_cst), and wakes the server if the doorbell says SLEEPING. Checked:
 * the request is always served (no lost wake-up: a blocked server and a
 * blocked client would be an invalid end state).
 * -DWEAK: no fence on the client side, so its doorbell load may be
 * performed before its request store is visible (store-load reordering,
 * which x86 does): modelled as the load coming first. The check must find
 * the lost wake-up.
 */
byte request = 0, done = 0;
bool doorbell = 0; /* 1: SLEEPING */
bool asleep = 0, woken = 0;

active proctype client()
{
    bool door;
#ifdef WEAK
    door = doorbell;
    request = 1;
#else
    request = 1;               /* release store, then seq_cst fence */
    door = doorbell;
#endif
    if
    :: door -> atomic { doorbell = 0; if :: asleep -> woken = 1 :: else -> skip fi }
    :: else -> skip
    fi;
    done == 1                  /* wait for the completion */
}

active proctype server()
{
    do
    :: request != done -> done = request; break       /* serve */
    :: request == done ->
        doorbell = 1;                                 /* SLEEPING, then fence */
        if
        :: request != done -> doorbell = 0            /* the rescan found work */
        :: else ->
            atomic { if :: doorbell -> asleep = 1 :: else -> skip fi } /* futex_wait(SLEEPING) */
            if
            :: asleep -> woken; atomic { asleep = 0; woken = 0 }
            :: else -> skip
            fi;
            doorbell = 0
        fi
    od
}
