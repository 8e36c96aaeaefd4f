/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for a runtime library (its file name starts with "libomp-", so
 * the unwinder elides it): calls back into the tool with the return address
 * of its caller, as an OpenMP runtime does with codeptr_ra.
 */
__attribute__((visibility("default"), noinline)) void rt_call(void (*cb)(void *ra, int depth),
							      int depth);
__attribute__((visibility("default"), noinline)) void rt_call_own_ra(void (*cb)(void *ra, int depth),
								     int depth);

__attribute__((visibility("default"), noinline)) void rt_spin(volatile int *state);

static volatile int sink;

__attribute__((noinline)) static void rt_inner(void (*cb)(void *ra, int depth), void *ra, int depth)
{
	cb(ra, depth);
	sink++;
}

void rt_call(void (*cb)(void *ra, int depth), int depth)
{
	rt_inner(cb, __builtin_return_address(0), depth);
	sink++;
}

/* A runtime that reports a return address of its own (LLVM's taskloop
 * reports one inside __kmpc_taskloop): the user's call site is above it. */
__attribute__((noinline)) static void rt_inner_own(void (*cb)(void *ra, int depth), int depth)
{
	cb(__builtin_return_address(0), depth);
	sink++;
}

void rt_call_own_ra(void (*cb)(void *ra, int depth), int depth)
{
	rt_inner_own(cb, depth);
	sink++;
}

/* A runtime waiting: sets *state to 1, then spins in its own code until
 * someone sets it to 2, as libomp spins at a barrier. */
void rt_spin(volatile int *state)
{
	*state = 1;
	while (*state == 1)
		sink++;
}
