/*
 * The simulator's context switch (sim_context.h).
 *
 * x86-64 (System V): the callee-saved registers rbp, rbx, r12-r15, the SSE
 * control word (MXCSR) and the x87 control word are pushed on the running
 * stack, the stack pointer is saved, the other context's is loaded and its
 * registers popped; `ret` then resumes it where it called the switch. A new
 * context gets a frame laid out the same way whose return address is
 * start(), entered with the stack 16-byte aligned, which calls the entry
 * point (so that it starts as after any call, rsp + 8 a multiple of 16).
 */
#include "model/sim_context.h"

#include <stdint.h>
#include <string.h>

#ifdef TS_SIM_UCONTEXT

int ts_context_make(ts_context *ctx, void *stack, size_t size, void (*entry)(void))
{
    if (getcontext(&ctx->uc) < 0)
        return -1;
    ctx->uc.uc_stack.ss_sp = stack;
    ctx->uc.uc_stack.ss_size = size;
    ctx->uc.uc_link = NULL;
    makecontext(&ctx->uc, entry, 0);
    return 0;
}

void ts_context_switch(ts_context *from, ts_context *to)
{
    swapcontext(&from->uc, &to->uc);
}

#else

/* void ts_context_swap(void **save_sp, void *load_sp) */
void ts_context_swap(void **save_sp, void *load_sp);
__asm__(".text\n"
        ".globl ts_context_swap\n"
        ".hidden ts_context_swap\n"
        ".type ts_context_swap, @function\n"
        "ts_context_swap:\n"
        "    .cfi_startproc\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $8, %rsp\n"
        "    stmxcsr (%rsp)\n"
        "    fnstcw 4(%rsp)\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    ldmxcsr (%rsp)\n"
        "    fldcw 4(%rsp)\n"
        "    addq $8, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        "    .cfi_endproc\n"
        ".size ts_context_swap, .-ts_context_swap\n");

/* The entry point of a new context: the frame keeps it in rbx. */
void ts_context_start(void);
__asm__(".text\n"
        ".globl ts_context_start\n"
        ".hidden ts_context_start\n"
        ".type ts_context_start, @function\n"
        "ts_context_start:\n"
        "    .cfi_startproc\n"
        "    .cfi_undefined rip\n" /* the outermost frame: unwinders stop here */
        "    xorl %ebp, %ebp\n"
        "    call *%rbx\n"
        "    ud2\n" /* entry never returns */
        "    .cfi_endproc\n"
        ".size ts_context_start, .-ts_context_start\n");

int ts_context_make(ts_context *ctx, void *stack, size_t size, void (*entry)(void))
{
    uintptr_t top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
    /* from the top down: the return address of the switch (start, entered
     * with rsp = top), rbp, rbx = entry, r12-r15, and the control words:
     * MXCSR 0x1f80 and x87 0x037f, their reset values */
    uint64_t *sp = (uint64_t *)top;
    *--sp = (uint64_t)(uintptr_t)ts_context_start;
    *--sp = 0;                          /* rbp */
    *--sp = (uint64_t)(uintptr_t)entry; /* rbx */
    for (int r = 0; r < 4; r++)
        *--sp = 0; /* r12..r15 */
    *--sp = 0x1f80u | ((uint64_t)0x037fu << 32);
    ctx->sp = sp;
    return 0;
}

void ts_context_switch(ts_context *from, ts_context *to)
{
    ts_context_swap(&from->sp, to->sp);
}

#endif
