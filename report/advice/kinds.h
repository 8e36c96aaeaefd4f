/* SPDX-License-Identifier: MIT */
/*
 * The kinds of advice, written once: everything that enumerates them (the
 * enum of report/next.h, the ids and titles of the JSON and text writers,
 * their scope) is generated from this list.
 *
 * X(ID, "json-id", SCOPE, subject, "title", "try")
 *   ID        GT_NEXT_<ID> in report/next.h
 *   json-id   the JSON writer's "kind", stable: scripts key on it
 *   SCOPE     what the advice is about, which decides how it is shown
 *             (GT_ADVICE_<SCOPE>): KERNEL a kernel context, named by its
 *             kernel at its launch site; COPY a copy's node; WAIT a wait's
 *             call site (a line node then names the CPU work); CPU a
 *             host call site
 *   subject   what the estimated speedup is of, in "the <subject>: 1.20x
 *             faster" (NULL: no such line)
 *   title     one line, after the context
 *   try       what to change, unless the check writes its own
 *
 * The order is the enum's: the ranking breaks its last ties by it, so a new
 * kind goes last to leave the other kinds' order as it was.
 */
#ifndef GT_REPORT_ADVICE_KINDS_H
#define GT_REPORT_ADVICE_KINDS_H

enum gt_advice_scope {
	GT_ADVICE_KERNEL,
	GT_ADVICE_COPY,
	GT_ADVICE_WAIT,
	GT_ADVICE_CPU,
};

#define GT_ADVICE_KINDS(X) \
	X(GPU_GLOBAL, "gpu-global-memory", KERNEL, "kernel", "scattered global memory accesses", \
	  "make a warp's 32 threads access consecutive addresses (coalesce: index with " \
	  "threadIdx.x in the fastest dimension, transpose the data or go through shared " \
	  "memory)") \
	X(GPU_LOCAL, "gpu-local-memory", KERNEL, "kernel", "local memory (spilled registers or a local array)", \
	  "keep the values in registers: index local arrays with constants (unrolled loops), " \
	  "fewer live values, or allow more registers (__launch_bounds__, -maxrregcount)") \
	X(GPU_BARRIER, "gpu-barrier", KERNEL, "kernel", "warps idle at a barrier", \
	  "give the block's warps equal work between barriers (spread the long path over all " \
	  "warps), or synchronize fewer threads (__syncwarp, cooperative groups)") \
	X(GPU_OCCUPANCY, "gpu-occupancy", KERNEL, "kernel", "too few resident warps to hide latency", \
	  "raise the warps resident per SM") \
	X(GPU_DIVERGENCE, "gpu-divergence", KERNEL, "kernel", "warps run with threads idle (divergent branches)", \
	  "make the threads of a warp take the same path: branch on a warp-uniform value (the " \
	  "warp's index, not threadIdx.x's low bits), sort or bin the work so that neighbouring " \
	  "threads do alike, or move the rare path out of the loop") \
	X(GPU_UNROLL, "gpu-unroll", KERNEL, "kernel", "a loop whose iterations wait one after the other", \
	  "unroll the loop 4 times (#pragma unroll 4, or by hand with independent accumulators) " \
	  "so that the iterations' loads and arithmetic wait together; or load the next " \
	  "iteration's data before this one's use (software pipelining)") \
	X(GPU_INLINE, "gpu-inline", KERNEL, "kernel", "waits in a device function that is called, not inlined", \
	  "inline the function (__forceinline__, or drop __noinline__; move it into the " \
	  "caller's translation unit or link with -dlto) so that its work can overlap the " \
	  "caller's") \
	X(GPU_MATH, "gpu-math", KERNEL, "kernel", "long-latency arithmetic: conversions, divisions, precise math functions", \
	  "cheaper arithmetic for the same result: 32-bit integer operands instead of 64-bit " \
	  "(64-bit division and modulo are long sequences or calls), a division by a value the " \
	  "loop does not change made a multiplication by its reciprocal computed once before " \
	  "it, shifts and masks for powers of two, float constants (1.0f) in float code; where " \
	  "the precision allows, __fdividef, __expf, __sinf or -use_fast_math") \
	X(PAGEABLE, "pageable-copies", COPY, "copies", "copies of pageable host memory", \
	  "pin the host buffer (cudaMallocHost, cudaHostRegister; an OpenMP allocator with the " \
	  "pinned trait), then copy with cudaMemcpyAsync") \
	X(OVERLAP, "cpu-gpu-overlap", WAIT, NULL, "the CPU waits for the GPU while the GPU waits for the CPU", \
	  "overlap them: launch asynchronously and do the CPU work before the wait, or split " \
	  "the work and pipeline it over streams") \
	X(RESENT, "resent-data", COPY, "copies", "the same host bytes uploaded to the device again", \
	  "keep the data on the device between uses (OpenMP: a target data region or target " \
	  "enter/exit data around the loop; CUDA: copy once, reuse the device buffer), and send " \
	  "only what changed") \
	X(LAUNCH_BOUND, "launch-bound", KERNEL, "kernels with their launches", "kernels shorter than their launches: the stream idles between them", \
	  "launch fewer, larger kernels: capture the sequence once in a CUDA graph and launch " \
	  "the graph (cudaStreamBeginCapture, cudaGraphInstantiate, cudaGraphLaunch), or fuse " \
	  "the kernels; OpenCL: fuse them, or record a command buffer (cl_khr_command_buffer); " \
	  "OpenMP: fewer, larger target regions") \
	X(SERIAL_SYNC, "serializing-sync", WAIT, NULL, "a wait for one stream holds back the next stream's work", \
	  "issue the other stream's work before the wait, and wait where its results are " \
	  "needed; where it needs the waited work, let the device order them " \
	  "(cudaStreamWaitEvent, an OpenCL event in its wait list) instead of the host") \
	X(OCL_AOT, "opencl-aot-compilation", CPU, NULL, "compiled from source at run time though one device is used", \
	  "compile ahead of time for it (an offline compiler, or a binary cached with " \
	  "clGetProgramInfo and clCreateProgramWithBinary)") \
	X(OCL_RESEND, "opencl-resent-data", COPY, "copies", "data read back from the device goes back unchanged", \
	  "keep it on the device and pass the buffer to the next kernel") \
	X(OCL_RESTRICT, "opencl-restrict", CPU, NULL, "buffer arguments that never overlap, not declared restrict", \
	  "declare the kernel's pointer parameters restrict, so that the compiler may reorder " \
	  "their accesses") \
	X(OCL_CONTEXTS, "opencl-contexts", CPU, NULL, "a kernel run in more than one context, compiled for each", \
	  "put its queues in one context") \
	X(OCL_INORDER, "opencl-inorder-queue", CPU, NULL, "an in-order queue runs its commands one at a time", \
	  "where they are independent, use CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE and events " \
	  "for the dependencies") \
	X(OCL_DEVICES, "opencl-unused-devices", CPU, NULL, "devices of the platforms stay unused", \
	  "share the work among them, in proportion to their speed") \
	X(GPU_THREADS, "gpu-threads", KERNEL, "kernel", "blocks too small: warps with idle lanes, or too few warps per SM", \
	  "larger blocks, of whole warps (a multiple of 32 threads), each thread's work the same") \
	X(GPU_BLOCKS, "gpu-blocks", KERNEL, "kernel", "fewer blocks than SMs: most SMs idle", \
	  "smaller blocks, more of them, for the same threads, so that the grid spreads over more SMs") \
	X(GPU_SHARED, "gpu-shared", KERNEL, "kernel", "a loop waits for its shared-memory loads", \
	  "keep the value a loop updates in a register (load it before the loop, accumulate, store " \
	  "it after) instead of reading and writing shared memory every iteration, and load the " \
	  "next iteration's operands before this one's use, so that the loads wait together") \
	X(OMP_IMBALANCE, "omp-imbalance", CPU, "region", "threads wait at the region's barrier for the slowest one", \
	  "balance the threads' work: schedule(dynamic) or schedule(guided) for a loop whose " \
	  "iterations differ in cost (a smaller chunk for schedule(static)), split a long " \
	  "iteration so that other threads share it, or give the waiting threads other work " \
	  "(nowait, tasks)") \
	X(OMP_FORK_JOIN, "omp-fork-join", CPU, "region", "regions too short for the cost of starting and joining their team", \
	  "merge the regions: one parallel region around the loop that starts them (its " \
	  "worksharing loops inside, with nowait where no barrier is needed), or coarser " \
	  "regions with more work each; for a region this short, if(n > threshold) keeps it " \
	  "serial") \
	X(OMP_SERIAL, "omp-serial", CPU, "serial part", "serial time between the parallel regions", \
	  "parallelize it (a parallel for over its loop, tasks for independent steps), or " \
	  "overlap it with the parallel work") \
	X(OMP_TASKS, "omp-fine-tasks", CPU, "region", "tasks too small for the cost of creating and scheduling them", \
	  "make each task do more: a cutoff below which the work runs inline (if() or final() " \
	  "on the task), taskloop with a grainsize, or a parallel for over the same work") \
	X(MPI_IMBALANCE, "mpi-imbalance", CPU, "collective", "ranks wait at a collective for the last to arrive", \
	  "balance the ranks' work before it: give each rank an equal share of the cells or " \
	  "particles (repartition by measured cost, not by count), or overlap the wait with " \
	  "independent work (a non-blocking collective, MPI_Iallreduce, completed later)")

#endif
