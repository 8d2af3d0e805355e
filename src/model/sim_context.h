/*
 * Private: the simulator's coroutines. One context per virtual participant
 * plus the caller's; a switch saves the callee-saved registers of the
 * running context on its own stack and resumes another.
 *
 * On x86-64 the switch is a dozen instructions (sim_context.c); elsewhere,
 * or with -DTS_SIM_UCONTEXT, it is ucontext's swapcontext, which also
 * saves and restores the signal mask with a system call per switch (about
 * three times slower here, and slow under AddressSanitizer, whose
 * swapcontext interceptor clears the whole stack's shadow each time).
 */
#ifndef TOPSYNC_SRC_MODEL_SIM_CONTEXT_H
#define TOPSYNC_SRC_MODEL_SIM_CONTEXT_H

#include <stddef.h>

#if !defined(TS_SIM_UCONTEXT) && !defined(__x86_64__)
#define TS_SIM_UCONTEXT 1
#endif

#ifdef TS_SIM_UCONTEXT
#include <ucontext.h>
typedef struct ts_context {
    ucontext_t uc;
} ts_context;
#else
typedef struct ts_context {
    void *sp; /* the saved stack pointer; the registers are below it */
} ts_context;
#endif

/* Make ctx start entry() on the stack [stack, stack + size) at its first
 * resumption; entry must never return. 0, or -1. */
int ts_context_make(ts_context *ctx, void *stack, size_t size, void (*entry)(void));

/* Save the running context into *from and resume *to. */
void ts_context_switch(ts_context *from, ts_context *to);

#endif
