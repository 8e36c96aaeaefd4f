// SPDX-License-Identifier: MIT
// A kernel of known length for the samples that check times: it runs ns
// nanoseconds by the GPU's global timer.
#ifndef GT_SAMPLES_CUDA_SPIN_H
#define GT_SAMPLES_CUDA_SPIN_H

__global__ void spin(unsigned long long ns)
{
	unsigned long long t0, t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	while (t - t0 < ns);
}

#endif
