/* SPDX-License-Identifier: MIT */
/*
 * Tail calls as GCC describes them (the host compiler of nvcc): a call site
 * with DW_AT_call_tail_call and DW_AT_call_return_pc, the address after the
 * jump, and no DW_AT_call_pc. Built by GCC at -O2 whatever compiles the rest
 * (tests/unit/CMakeLists.txt). The jumps are not the functions' last code
 * (the unlikely branch is placed after them), so the line at a function's
 * end is not the jump's. The functions are static: GCC names the callee
 * of a call site (DW_AT_call_origin) only where it cannot be interposed.
 */
#include <stdint.h>

uintptr_t gt_tailgcc_main(int x, int rt);
uintptr_t gt_tailgcc_fn(int which);

volatile int gt_tailgcc_sink;

__attribute__((noinline, noclone)) static uintptr_t gt_tailgcc_target(int x)
{
	gt_tailgcc_sink = x;
	return (uintptr_t)__builtin_return_address(0);
}

/* Stands for runtime code linked into the program (a static CUDA runtime). */
__attribute__((noinline, noclone)) static uintptr_t gt_tailgcc_rt(int x)
{
	gt_tailgcc_sink = x;
	return (uintptr_t)__builtin_return_address(0);
}

__attribute__((noinline, noclone)) static uintptr_t gt_tailgcc_relay(int x)
{
	if (__builtin_expect(x > 0, 1)) {
		gt_tailgcc_sink = 9;
		return gt_tailgcc_target(x + 1); /* GCC_TAIL_JUMP */
	}
	gt_tailgcc_sink = 4;
	return (uintptr_t)gt_tailgcc_sink * 3;
}

__attribute__((noinline, noclone)) static uintptr_t gt_tailgcc_relay_rt(int x)
{
	if (__builtin_expect(x > 0, 1)) {
		gt_tailgcc_sink = 8;
		return gt_tailgcc_rt(x + 2); /* GCC_RT_JUMP */
	}
	gt_tailgcc_sink = 4;
	return (uintptr_t)gt_tailgcc_sink * 5;
}

__attribute__((noinline)) uintptr_t gt_tailgcc_main(int x, int rt)
{
	uintptr_t r = rt ? gt_tailgcc_relay_rt(x) : gt_tailgcc_relay(x);

	gt_tailgcc_sink = 0; /* code after the calls: they are not tail calls */
	return r;
}

/* The entries of gt_tailgcc_target (0) and gt_tailgcc_rt (1). */
uintptr_t gt_tailgcc_fn(int which)
{
	return which ? (uintptr_t)&gt_tailgcc_rt : (uintptr_t)&gt_tailgcc_target;
}
