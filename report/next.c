/* SPDX-License-Identifier: MIT */
/*
 * What to do next (next.h). Each check reads metrics the run measured, by
 * name; a profile without them gets no advice of that kind.
 *
 * Kernels (from their PC samples; GPA's (CGO'21) stall elimination and latency
 * hiding, with the scheduler's issue cycles kept). Of a kernel context's S
 * samples, L are latency samples (its scheduler issued nothing), so the
 * schedulers issued in the share W_R = (S - L) / S of its cycles; the share
 * w of the samples waited (neither issued nor eligible). A change that
 * removes the share f of the samples, all waiting, keeps the issue cycles
 * (less those of the instructions it removes, the share c of them) and
 * shrinks the others as the waiting:
 *   T' / T = W_R (1 - c) + (1 - W_R) (w - f) / w
 * Where the change removes the waits' cause (local loads that become
 * registers), the warps' other waits overlap instead: with n warps per
 * scheduler each waiting the share w' = (w - f) / (1 - f) of its time,
 *   T' / T = W_R (1 - c) / (1 - w'^n)
 * More resident warps (occupancy o -> o') hide latency instead, but for
 * the memory's (the share m of the waiting), whose bandwidth the samples
 * do not show:
 *   T' / T = W_R + (1 - W_R) (m + (1 - m) o / o')
 * The kernel's estimated speedup is T / T'.
 *
 * The program: the GPU time a change saves shortens the run only where the
 * CPU waited for it; blame shifting measured that wait per kernel
 * (CPU_IDLE_CAUSE, docs/BLAME.md). Without it, the GPU time saved is an
 * upper bound. The program's speedup is wall / (wall - saved), per process.
 */
#include "report/next.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/next-internal.h"
#include "report/ptree.h"

#define MIN_SAMPLES 1000    /* a kernel context with fewer PC samples gets no advice */
#define MIN_SHARE 0.10      /* the least share of a kernel's samples a stall advice explains */
#define LATENCY_BOUND 0.20  /* occupancy advice only where this share of the cycles issued nothing */
#define MIN_SPEEDUP 1.05    /* occupancy advice only where it gains this much */
#define SCATTERED_BW 0.25   /* global accesses using under this share of the DRAM peak are scattered */
#define MIN_PINNED 1048576u /* bytes of pinned copies a pinned bandwidth is measured from */
#define LANE_BYTES 4        /* the bytes a thread's global access is assumed to move */

static const struct {
	const char *id, *title, *todo;
} kinds[GT_NEXT_KINDS] = {
	[GT_NEXT_GPU_GLOBAL] = { "gpu-global-memory", "scattered global memory accesses",
				 "make a warp's 32 threads access consecutive addresses (coalesce: index with "
				 "threadIdx.x in the fastest dimension, transpose the data or go through shared "
				 "memory)" },
	[GT_NEXT_GPU_LOCAL] = { "gpu-local-memory", "local memory (spilled registers or a local array)",
				"keep the values in registers: index local arrays with constants (unrolled loops), "
				"fewer live values, or allow more registers (__launch_bounds__, -maxrregcount)" },
	[GT_NEXT_GPU_BARRIER] = { "gpu-barrier", "warps idle at a barrier",
				  "give the block's warps equal work between barriers (spread the long "
				  "path over all warps), or synchronize fewer threads (__syncwarp, cooperative "
				  "groups)" },
	[GT_NEXT_GPU_OCCUPANCY] = { "gpu-occupancy", "too few resident warps to hide latency",
				    "raise the warps resident per SM" },
	[GT_NEXT_GPU_DIVERGENCE] = { "gpu-divergence", "warps run with threads idle (divergent branches)",
				     "make the threads of a warp take the same path: branch on a warp-uniform "
				     "value (the warp's index, not threadIdx.x's low bits), sort or bin the work "
				     "so that neighbouring threads do alike, or move the rare path out of the loop" },
	[GT_NEXT_GPU_UNROLL] = { "gpu-unroll", "a loop whose iterations wait one after the other",
				 "unroll the loop 4 times (#pragma unroll 4, or by hand with independent "
				 "accumulators) so that the iterations' loads and arithmetic wait together; or load "
				 "the next iteration's data before this one's use (software pipelining)" },
	[GT_NEXT_GPU_INLINE] = { "gpu-inline", "waits in a device function that is called, not inlined",
				 "inline the function (__forceinline__, or drop __noinline__; move it into the "
				 "caller's translation unit or link with -dlto) so that its work can overlap the "
				 "caller's" },
	[GT_NEXT_GPU_MATH] = { "gpu-math", "long-latency arithmetic: conversions, divisions, precise math functions",
			       "cheaper arithmetic for the same result: 32-bit integer operands instead of 64-bit "
			       "(64-bit division and modulo are long sequences or calls), a division by a value the "
			       "loop does not change made a multiplication by its reciprocal computed once before "
			       "it, shifts and masks for powers of two, float constants (1.0f) in float code; where "
			       "the precision allows, __fdividef, __expf, __sinf or -use_fast_math" },
	[GT_NEXT_PAGEABLE] = { "pageable-copies", "copies of pageable host memory",
			       "pin the host buffer (cudaMallocHost, cudaHostRegister; an OpenMP allocator "
			       "with the pinned trait), then copy with cudaMemcpyAsync" },
	[GT_NEXT_OVERLAP] = { "cpu-gpu-overlap", "the CPU waits for the GPU while the GPU waits for the CPU",
			      "overlap them: launch asynchronously and do the CPU work before the wait, or "
			      "split the work and pipeline it over streams" },
	[GT_NEXT_RESENT] = { "resent-data", "the same host bytes uploaded to the device again",
			     "keep the data on the device between uses (OpenMP: a target data region or "
			     "target enter/exit data around the loop; CUDA: copy once, reuse the device "
			     "buffer), and send only what changed" },
	[GT_NEXT_LAUNCH_BOUND] = { "launch-bound", "kernels shorter than their launches: the stream idles between them",
				   "launch fewer, larger kernels: capture the sequence once in a CUDA graph and "
				   "launch the graph (cudaStreamBeginCapture, cudaGraphInstantiate, "
				   "cudaGraphLaunch), or fuse the kernels; OpenCL: fuse them, or record a "
				   "command buffer (cl_khr_command_buffer); OpenMP: fewer, larger target regions" },
	[GT_NEXT_SERIAL_SYNC] = { "serializing-sync", "a wait for one stream holds back the next stream's work",
				  "issue the other stream's work before the wait, and wait where its results are "
				  "needed; where it needs the waited work, let the device order them "
				  "(cudaStreamWaitEvent, an OpenCL event in its wait list) instead of the host" },
	[GT_NEXT_OCL_AOT] = { "opencl-aot-compilation", "compiled from source at run time though one device is used",
			      "compile ahead of time for it (an offline compiler, or a binary cached with "
			      "clGetProgramInfo and clCreateProgramWithBinary)" },
	[GT_NEXT_OCL_RESEND] = { "opencl-resent-data", "data read back from the device goes back unchanged",
				 "keep it on the device and pass the buffer to the next kernel" },
	[GT_NEXT_OCL_RESTRICT] = { "opencl-restrict", "buffer arguments that never overlap, not declared restrict",
				   "declare the kernel's pointer parameters restrict, so that the compiler may "
				   "reorder their accesses" },
	[GT_NEXT_OCL_CONTEXTS] = { "opencl-contexts", "a kernel run in more than one context, compiled for each",
				   "put its queues in one context" },
	[GT_NEXT_OCL_INORDER] = { "opencl-inorder-queue", "an in-order queue runs its commands one at a time",
				  "where they are independent, use CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE and "
				  "events for the dependencies" },
	[GT_NEXT_OCL_DEVICES] = { "opencl-unused-devices", "devices of the platforms stay unused",
				  "share the work among them, in proportion to their speed" },
};

/* The OpenCL layer's counts (core/metrics.h), by kind. */
static const char *const ocl_metrics[] = {
	[GT_NEXT_OCL_AOT - GT_NEXT_OCL_AOT] = "SINGLE_DEVICE_USE_AOT_COMPILATION",
	[GT_NEXT_OCL_RESEND - GT_NEXT_OCL_AOT] = "OUTPUT_OF_KERNEL_INPUT_TO_ANOTHER_KERNEL",
	[GT_NEXT_OCL_RESTRICT - GT_NEXT_OCL_AOT] = "KERNEL_PARAMS_NOT_ALIASED",
	[GT_NEXT_OCL_CONTEXTS - GT_NEXT_OCL_AOT] = "KERNEL_TO_MULTIPLE_QUEUES_MULTIPLE_CONTEXTS",
	[GT_NEXT_OCL_INORDER - GT_NEXT_OCL_AOT] = "INORDER_QUEUE",
	[GT_NEXT_OCL_DEVICES - GT_NEXT_OCL_AOT] = "ALL_DEVICES_NOT_USED",
};

int gt_next__of_kernel(enum gt_next_kind k)
{
	return k <= GT_NEXT_GPU_MATH || k == GT_NEXT_LAUNCH_BOUND;
}

const char *gt_next__id(enum gt_next_kind k)
{
	return k < GT_NEXT_KINDS ? kinds[k].id : "?";
}

const char *gt_next__title(enum gt_next_kind k)
{
	return k < GT_NEXT_KINDS ? kinds[k].title : "?";
}

static const struct {
	const char *metric;
	int inclusive, per_kernel; /* per_kernel: summed over each kernel context's nodes */
} cols[C_COLS] = {
	[C_SAMPLES] = { "GPC_SAMPLES", 1, 0 },
	[C_LATENCY] = { "GPC_LATENCY", 1, 0 },
	[C_ISSUED] = { "GPC_ISSUED", 1, 0 },
	[C_NOT_SELECTED] = { "GPC_NOT_SELECTED", 1, 0 },
	[C_MEMORY] = { "GPC_MEMORY", 1, 0 },
	[C_LONG_SB] = { "GPS_LONG_SCOREBOARD", 0, 1 },
	[C_BARRIER] = { "GPS_BARRIER", 0, 1 },
	[C_LG_THROTTLE] = { "GPS_LG_THROTTLE", 0, 1 },
	[C_B_GLOBAL] = { "GPB_GLOBAL", 0, 1 },
	[C_B_LOCAL] = { "GPB_LOCAL", 0, 1 },
	[C_I_GLOBAL] = { "GPI_GLOBAL", 0, 1 },
	[C_I_LOCAL] = { "GPI_LOCAL", 0, 1 },
	[C_GKER] = { "GKER", 0, 0 },
	[C_COUNT] = { "GKER_COUNT", 0, 0 },
	[C_OCC] = { "GKER_OCC_THR", 0, 0 },
	[C_OCC_SLOTS] = { "GKER_OCC_SLOTS", 0, 0 },
	[C_OCC_REGS] = { "GKER_OCC_REGS", 0, 0 },
	[C_OCC_SMEM] = { "GKER_OCC_SMEM", 0, 0 },
	[C_REGS] = { "GKER_THR_REG", 0, 0 },
	[C_SMEM_ST] = { "GKER_STMEM", 0, 0 },
	[C_SMEM_DY] = { "GKER_DYMEM", 0, 0 },
	[C_IDLE_CAUSE] = { "CPU_IDLE_CAUSE", 0, 0 },
	[C_CPU_IDLE] = { "CPU_IDLE", 0, 0 },
	[C_GPU_IDLE_CAUSE] = { "GPU_IDLE_CAUSE", 0, 0 },
	[C_PAGEABLE] = { "GXCOPY_PAGEABLE_BYTES", 0, 0 },
	[C_H2D] = { "GXCOPY_H2D", 0, 0 },
	[C_H2D_BYTES] = { "GXCOPY_H2D_BYTES", 0, 0 },
	[C_D2H] = { "GXCOPY_D2H", 0, 0 },
	[C_D2H_BYTES] = { "GXCOPY_D2H_BYTES", 0, 0 },
	[C_RESENT] = { "GXCOPY_RESENT_BYTES", 0, 0 },
	[C_RESENT_COUNT] = { "GXCOPY_RESENT_COUNT", 0, 0 },
	[C_OMP_H2D] = { "OMP_TGT_H2D_TIME", 0, 0 },
	[C_OMP_H2D_BYTES] = { "OMP_TGT_H2D_BYTES", 0, 0 },
	[C_H2D_COUNT] = { "GXCOPY_H2D_COUNT", 0, 0 },
	[C_OMP_H2D_COUNT] = { "OMP_TGT_H2D_COUNT", 0, 0 },
	[C_LAUNCH_GAP] = { "GKER_LAUNCH_GAP", 0, 0 },
	[C_LAUNCH_GAP_COUNT] = { "GKER_LAUNCH_GAP_COUNT", 0, 0 },
	[C_SC_INST] = { "GSC_INST", 0, 1 },
	[C_SC_THREADS] = { "GSC_THREAD_INST", 0, 1 },
	[C_SERIAL] = { "GSYNC_SERIAL", 0, 0 },
	[C_SERIAL_COUNT] = { "GSYNC_SERIAL_COUNT", 0, 0 },
	[C_SYNC_COUNT] = { "GSYNC_COUNT", 0, 0 },
	[C_B_CONVERT] = { "GPB_CONVERT", 0, 1 },
	[C_B_LOOP] = { "GPO_UNROLL", 0, 1 },
	[C_LOOP_ISSUED] = { "GPC_ISSUED", 0, 0 },
	[C_BRANCH] = { "GPS_BRANCH", 1, 0 },
	[C_I_CONTROL] = { "GPI_CONTROL", 0, 0 },
	[C_I_OTHER] = { "GPI_OTHER", 0, 0 },
	[C_IDIOM_ISSUED] = { "GPO_IDIOM_ISSUED", 0, 0 },
};


/* Per kernel context: the sum over the nodes under it of an exclusive
 * column, and the hottest of those nodes (the first of equals). */
uint64_t gt_next__under(const struct ctx *c, uint32_t k, enum col col, uint32_t *hot)
{
	if (hot)
		*hot = c->hot[col][k];
	return c->sum[col][k];
}

/* The sums and hottest nodes of the columns read per kernel, in one pass. */
static int under__build(struct ctx *c)
{
	const struct gt_profile *p = c->p;
	size_t n = p->n_nodes ? p->n_nodes : 1;

	for (int col = 0; col < C_COLS; col++) {
		if (!cols[col].per_kernel)
			continue;
		c->sum[col] = calloc(n, sizeof(*c->sum[col]));
		c->hot[col] = malloc(n * sizeof(*c->hot[col]));
		if (!c->sum[col] || !c->hot[col])
			return -ENOMEM;
		for (uint32_t i = 0; i < p->n_nodes; i++)
			c->hot[col][i] = GT_NONE;
		for (uint32_t i = 0; i < p->n_nodes; i++) {
			uint32_t k = c->kern[i];
			uint64_t x = c->v[col][i];

			if (k == GT_NONE || !x)
				continue;
			c->sum[col][k] += x;
			if (c->hot[col][k] == GT_NONE || x > c->v[col][c->hot[col][k]])
				c->hot[col][k] = i;
		}
	}
	return 0;
}

struct gt_next *gt_next__add(struct ctx *c, enum gt_next_kind kind, uint32_t node)
{
	struct gt_next *n;

	if (c->out->n == c->cap) {
		uint32_t cap = c->cap ? 2 * c->cap : 16;
		struct gt_next *v = realloc(c->out->v, cap * sizeof(*v));

		if (!v) {
			c->oom = 1;
			return NULL;
		}
		c->out->v = v;
		c->cap = cap;
	}
	n = &c->out->v[c->out->n++];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->node = node;
	n->line = GT_NONE;
	snprintf(n->todo, sizeof(n->todo), "%s", kinds[kind].todo);
	return n;
}

/* The run's time saved (summed over its processes), per process, and the
 * program's speedup; upper: the saving assumes all of it was on the
 * critical path. */
static void saves(const struct ctx *c, struct gt_next *n, uint64_t saved, int upper)
{
	uint32_t procs = c->run->processes ? c->run->processes : 1;

	n->upper_bound = upper;
	n->saved_ns = saved / procs;
	if (c->run->wall_ns > n->saved_ns)
		n->program = (double)c->run->wall_ns / (double)(c->run->wall_ns - n->saved_ns);
}

/* The whole program's share of a time saved on the GPU by a kernel's
 * change: what the CPU waited for the kernel, when blame measured it. */
static void program_gain(const struct ctx *c, struct gt_next *n, uint64_t gpu_saved, uint64_t waited)
{
	if (c->blame)
		saves(c, n, waited < gpu_saved ? waited : gpu_saved, 0);
	else
		saves(c, n, gpu_saved, 1);
}

/* A kernel change estimated as T'/T = ratio. A run that counted
 * instructions ran its kernels patched: their speedup holds, their times
 * are not theirs, and the program's gain is left unestimated. */
void gt_next__kernel_gain(const struct ctx *c, struct gt_next *n, uint32_t k, double ratio)
{
	uint64_t t = c->v[C_GKER][k];

	if (ratio <= 0 || ratio >= 1)
		ratio = 1;
	n->time_ns = t;
	n->speedup = 1.0 / ratio;
	if (!c->patched)
		program_gain(c, n, (uint64_t)((double)t * (1.0 - ratio)), c->v[C_IDLE_CAUSE][k]);
}


/*
 * T'/T for a change that removes the share f of the samples, all of them
 * waiting, and the share cut of the issued instructions: the issue cycles
 * shrink by cut, the others as the warps' waiting does (the samples that
 * issued or could have are not waiting).
 */
double gt_next__stall_ratio(double wr, double waiting, double f, double cut)
{
	double left = waiting > 0 ? (waiting - f) / waiting : 1;

	return wr * (1.0 - cut) + (1.0 - wr) * (left > 0 ? left : 0);
}

/*
 * T'/T for a change that removes the share f of the samples, all waiting,
 * and their cause with them (local loads that become registers): a warp
 * then waits the share w' = (w - f) / (1 - f) of its time, and a
 * scheduler with n resident warps, each waiting independently, issues in
 * 1 - w'^n of its cycles, at most every cycle:
 *   T' / T = W_R (1 - c) / (1 - w'^n)
 */
static double gone_ratio(double wr, double waiting, double f, double cut, double n)
{
	double w = f < 1 ? (waiting - f) / (1 - f) : 0;

	if (w < 0)
		w = 0;
	if (w >= 1 || n < 1)
		return gt_next__stall_ratio(wr, waiting, f, cut);
	return wr * (1.0 - cut) / (1.0 - pow(w, n));
}

static void check_kernel(struct ctx *c, uint32_t k)
{
	const uint64_t *const *v = (const uint64_t *const *)c->v;
	double S = (double)v[C_SAMPLES][k], wr, waiting, iss = (double)v[C_ISSUED][k];
	uint64_t count = v[C_COUNT][k] ? v[C_COUNT][k] : 1;
	double il, ig, mem, resident;
	uint32_t hot;
	struct gt_next *n;

	if (S < MIN_SAMPLES || !v[C_GKER][k])
		return;
	wr = (S - (double)v[C_LATENCY][k]) / S;
	waiting = 1.0 - (iss + (double)v[C_NOT_SELECTED][k]) / S;
	/* The waits for the L1TEX path (long scoreboard, LG throttle), shared
	 * between local and global memory as their instructions issued. */
	il = (double)gt_next__under(c, k, C_I_LOCAL, NULL);
	ig = (double)gt_next__under(c, k, C_I_GLOBAL, NULL);
	mem = (double)(gt_next__under(c, k, C_LONG_SB, NULL) + gt_next__under(c, k, C_LG_THROTTLE, NULL)) / S;
	/* Warps resident per scheduler: the theoretical occupancy of the SM's
	 * warp slots (64 where the device is not known), over 4 schedulers. */
	resident = (double)v[C_OCC][k] / (double)count / 1000.0 *
		   (double)(c->run->warps_per_sm ? c->run->warps_per_sm : 64) /
		   (double)(c->run->pc_schedulers ? c->run->pc_schedulers : 4);

	/* Local memory: what the local loads and stores make the warps wait
	 * for goes, and so do those instructions. */
	if (il > 0 && (gt_next__under(c, k, C_B_LOCAL, &hot), hot != GT_NONE)) {
		double f = mem * il / (il + ig);

		if (f >= MIN_SHARE && (n = gt_next__add(c, GT_NEXT_GPU_LOCAL, k))) {
			n->line = hot;
			n->samples = (uint64_t)(f * S + 0.5);
			n->kernel_samples = (uint64_t)S;
			gt_next__kernel_gain(c, n, k, gone_ratio(wr, waiting, f, iss > 0 ? il / iss : 0, resident));
			int len = snprintf(n->why, sizeof(n->why),
					   "%.1f%% of the kernel's PC samples wait on local memory; local loads and "
					   "stores are %.1f%% of its instructions",
					   100.0 * f, iss > 0 ? 100.0 * il / iss : 0.0);

			if (v[C_REGS][k] && len > 0 && (size_t)len < sizeof(n->why))
				snprintf(n->why + len, sizeof(n->why) - (size_t)len, "; %" PRIu64 " registers per thread",
					 v[C_REGS][k] / count);
		}
	}

	/* Scattered global accesses: memory-bound on global loads while the
	 * bytes the threads asked for use little of the DRAM's bandwidth. */
	if (ig > 0 && (gt_next__under(c, k, C_B_GLOBAL, &hot), hot != GT_NONE)) {
		double f = mem * ig / (il + ig), t = (double)v[C_GKER][k] / 1e9, bytes = 0, floor = 0;
		const struct gt_sections_run *r = c->run;

		if (r->pc_period && iss > 0 && r->dram_bytes_per_s && t > 0) {
			double w = r->pc_schedulers ? (double)r->pc_schedulers : 4.0;

			/* Equations 10-11 (report/advice.c): the global instructions
			 * issued, a warp's 32 accesses each. */
			bytes = (S - (double)v[C_LATENCY][k]) * w * (double)r->pc_period * ig / iss * 32 * LANE_BYTES;
			floor = bytes / (double)r->dram_bytes_per_s / t;
		}
		if (f >= MIN_SHARE * 3 && bytes > 0 && floor < SCATTERED_BW && (n = gt_next__add(c, GT_NEXT_GPU_GLOBAL, k))) {
			double ratio = gt_next__stall_ratio(wr, waiting, f, 0);

			n->line = hot;
			n->samples = (uint64_t)(f * S + 0.5);
			n->kernel_samples = (uint64_t)S;
			/* No faster than the DRAM moves the bytes asked for. */
			gt_next__kernel_gain(c, n, k, ratio > floor ? ratio : floor);
			snprintf(n->why, sizeof(n->why),
				 "%.1f%% of the kernel's PC samples wait on global memory, while the %.3g bytes its "
				 "threads access use %.1f%% of the DRAM's peak bandwidth over its run",
				 100.0 * f, bytes, 100.0 * floor);
		}
	}

	/* Barriers. */
	{
		double b = (double)gt_next__under(c, k, C_BARRIER, &hot), f = b / S;

		if (f >= MIN_SHARE && hot != GT_NONE && (n = gt_next__add(c, GT_NEXT_GPU_BARRIER, k))) {
			n->line = hot;
			n->samples = (uint64_t)b;
			n->kernel_samples = (uint64_t)S;
			gt_next__kernel_gain(c, n, k, gt_next__stall_ratio(wr, waiting, f, 0));
			snprintf(n->why, sizeof(n->why), "%.1f%% of the kernel's PC samples wait at barriers", 100.0 * f);
		}
	}

	/* Occupancy, where the kernel is latency-bound: what lifting its
	 * tightest bound gives, up to the next one. */
	if (v[C_OCC][k] && 1.0 - wr >= LATENCY_BOUND) {
		static const char *const what[] = { "the block size", "the registers per thread",
						    "the shared memory per block" };
		double occ = (double)v[C_OCC][k] / (double)count, lim[3], next = 1000;
		int tight = 0;

		lim[0] = (double)v[C_OCC_SLOTS][k] / (double)count;
		lim[1] = (double)v[C_OCC_REGS][k] / (double)count;
		lim[2] = (double)v[C_OCC_SMEM][k] / (double)count;
		for (int i = 1; i < 3; i++)
			if (lim[i] > 0 && lim[i] < lim[tight])
				tight = i;
		for (int i = 0; i < 3; i++)
			if (i != tight && lim[i] > 0 && lim[i] < next)
				next = lim[i];
		/* Waits for memory are left as they are: more warps hide them
		 * only up to the memory's bandwidth, which the samples do not
		 * show (a random-access kernel gains nothing). */
		double m = waiting > 0 ? (double)v[C_MEMORY][k] / S / waiting : 0;
		double ratio = wr + (1.0 - wr) * (m + (1.0 - m) * occ / next);

		if (lim[tight] > 0 && occ < 1000 && next > occ * 1.25 && ratio <= 1.0 / MIN_SPEEDUP &&
		    (n = gt_next__add(c, GT_NEXT_GPU_OCCUPANCY, k))) {
			n->samples = v[C_LATENCY][k];
			n->kernel_samples = (uint64_t)S;
			gt_next__kernel_gain(c, n, k, ratio);
			snprintf(n->why, sizeof(n->why),
				 "%.1f%% of the schedulers' cycles issue nothing; %s bounds the occupancy at "
				 "%.1f%%, the next bound is %.1f%%",
				 100.0 * (1.0 - wr), what[tight], occ / 10, next / 10);
			if (tight == 1)
				snprintf(n->todo, sizeof(n->todo),
					 "fewer registers per thread (now %" PRIu64 "): __launch_bounds__ or "
					 "-maxrregcount, fewer live values",
					 v[C_REGS][k] / count);
			else if (tight == 2)
				snprintf(n->todo, sizeof(n->todo),
					 "less shared memory per block (now %" PRIu64 " bytes): smaller tiles, or "
					 "fewer threads sharing more of it",
					 (v[C_SMEM_ST][k] + v[C_SMEM_DY][k]) / count);
			else
				snprintf(n->todo, sizeof(n->todo),
					 "larger blocks: the SM's block slots fill before its warp slots");
		}
	}
}

/*
 * Divergence, from instruction counts (GPUTOOL_SASS_COUNTS): a kernel
 * context's warps executed W instructions, its threads Th. Full warps
 * would have needed Th / 32: the share c = 1 - Th / (32 W) of the warp
 * instructions ran for idle threads. With the issue cycles' share W_R
 * from PC samples (a profile that has both), only those shrink:
 *   T' / T = W_R (1 - c) + (1 - W_R)
 * without them the kernel is taken as issue-bound, T' / T = 1 - c, an
 * upper bound. The line named is the one with the most warp
 * instructions run for idle threads.
 */
static void check_divergence(struct ctx *c)
{
	const struct gt_profile *p = c->p;
	const uint64_t *const *v = (const uint64_t *const *)c->v;
	uint32_t *hot = malloc((p->n_nodes ? p->n_nodes : 1) * sizeof(*hot));
	double *lost = calloc(p->n_nodes ? p->n_nodes : 1, sizeof(*lost));

	if (!hot || !lost) {
		c->oom = 1;
		goto out;
	}
	for (uint32_t i = 0; i < p->n_nodes; i++)
		hot[i] = GT_NONE;
	/* Each kernel context's line with the most instructions for idle threads. */
	for (uint32_t i = 0; i < p->n_nodes; i++) {
		uint32_t k = c->kern[i];
		double l = (double)v[C_SC_INST][i] - (double)v[C_SC_THREADS][i] / 32.0;

		if (k == GT_NONE || !v[C_SC_INST][i] || l <= 0)
			continue;
		if (hot[k] == GT_NONE || l > lost[k]) {
			hot[k] = i;
			lost[k] = l;
		}
	}
	for (uint32_t k = 0; k < p->n_nodes; k++) {
		double w = (double)gt_next__under(c, k, C_SC_INST, NULL), th = (double)gt_next__under(c, k, C_SC_THREADS, NULL);
		double cut, ratio, S = (double)v[C_SAMPLES][k];
		struct gt_next *n;

		if (c->kern[k] != k || w <= 0 || hot[k] == GT_NONE)
			continue;
		cut = 1.0 - th / (32.0 * w);
		if (cut < MIN_SHARE || !(n = gt_next__add(c, GT_NEXT_GPU_DIVERGENCE, k)))
			continue;
		ratio = S >= MIN_SAMPLES ? gt_next__stall_ratio((S - (double)v[C_LATENCY][k]) / S, 1.0, 0, cut) : 1.0 - cut;
		n->line = hot[k];
		gt_next__kernel_gain(c, n, k, ratio);
		snprintf(n->why, sizeof(n->why),
			 "its warps ran %.1f %% of their instructions for threads left idle (%.0f of %.0f warp "
			 "instructions at full warps); the most at the line named, %.1f %% of its own",
			 100.0 * cut, th / 32.0, w,
			 100.0 * lost[k] / (double)v[C_SC_INST][hot[k]]);
	}
out:
	free(hot);
	free(lost);
}

/* Pageable copies: at the pinned bandwidth the run measured itself, per direction. */
static void check_pageable(struct ctx *c)
{
	const struct gt_profile *p = c->p;
	const uint64_t *const *v = (const uint64_t *const *)c->v;
	static const enum col dir[2][2] = { { C_H2D, C_H2D_BYTES }, { C_D2H, C_D2H_BYTES } };
	double pinned[2] = { 0, 0 };

	/* The copies with no pageable bytes, per direction. */
	for (int d = 0; d < 2; d++) {
		uint64_t b = 0, t = 0;

		for (uint32_t i = 0; i < p->n_nodes; i++)
			if (!v[C_PAGEABLE][i] && v[dir[d][1]][i]) {
				b += v[dir[d][1]][i];
				t += v[dir[d][0]][i];
			}
		if (b >= MIN_PINNED && t)
			pinned[d] = (double)b / (double)t; /* bytes per ns */
	}
	for (uint32_t i = 0; i < p->n_nodes; i++) {
		uint64_t bytes = v[C_H2D_BYTES][i] + v[C_D2H_BYTES][i], t = v[C_H2D][i] + v[C_D2H][i];
		double after = 0;
		int known = 1;
		struct gt_next *n;

		/* Copies of under 0.1 % of the run's wall time are not worth a line. */
		if (!v[C_PAGEABLE][i] || !bytes || !t || (double)t < 0.001 * (double)c->run->wall_ns)
			continue;
		/* A node holds copies of one direction or both: the pageable
		 * share of each at the pinned rate, the rest as it was. */
		for (int d = 0; d < 2; d++) {
			uint64_t b = v[dir[d][1]][i], td = v[dir[d][0]][i];
			double pb = (double)v[C_PAGEABLE][i] * (double)b / (double)bytes;

			if (!b)
				continue;
			if (!pinned[d]) {
				known = 0;
				continue;
			}
			after += (double)td * (1.0 - pb / (double)b) + pb / pinned[d];
		}
		if (!(n = gt_next__add(c, GT_NEXT_PAGEABLE, i)))
			return;
		n->time_ns = t;
		if (known && after > 0 && after < (double)t) {
			n->speedup = (double)t / after;
			/* A pageable copy blocks the host thread: its time is the wait. */
			saves(c, n, (uint64_t)((double)t - after), 0);
			snprintf(n->why, sizeof(n->why),
				 "%" PRIu64 " bytes copied from or to pageable memory at %.2f GB/s; pinned copies of "
				 "this run moved %.2f GB/s",
				 v[C_PAGEABLE][i], (double)bytes / (double)t,
				 (double)(v[C_H2D_BYTES][i] ? pinned[0] : pinned[1]));
		} else {
			snprintf(n->why, sizeof(n->why),
				 "%" PRIu64 " bytes copied from or to pageable memory at %.2f GB/s; no pinned copy of "
				 "this run to estimate the gain from",
				 v[C_PAGEABLE][i], (double)bytes / (double)t);
		}
	}
}

/*
 * Uploads of the same host bytes as the buffer's previous upload
 * (GXCOPY_RESENT_BYTES, gpu/resend.h), at the copy's node: kept on the
 * device, they cost nothing. Their time is their share of the node's upload
 * time: OpenMP's transfers (OMP_TGT_H2D_TIME) are host time the thread
 * spent in them; CUDA's (GXCOPY_H2D) device time, which an asynchronous
 * copy may overlap with the host's work (an upper bound).
 */
static void check_resent(struct ctx *c)
{
	const struct gt_profile *p = c->p;
	const uint64_t *const *v = (const uint64_t *const *)c->v;

	for (uint32_t i = 0; i < p->n_nodes; i++) {
		int omp = v[C_OMP_H2D_BYTES][i] != 0;
		uint64_t t = omp ? v[C_OMP_H2D][i] : v[C_H2D][i];
		uint64_t b = omp ? v[C_OMP_H2D_BYTES][i] : v[C_H2D_BYTES][i];
		uint64_t r = v[C_RESENT][i];
		double share;
		struct gt_next *n;

		/* Under 0.1 % of the run's wall time: not worth a line. */
		if (!r || !b || !t || (double)t < 0.001 * (double)c->run->wall_ns)
			continue;
		share = r < b ? (double)r / (double)b : 1.0;
		if (!(n = gt_next__add(c, GT_NEXT_RESENT, i)))
			return;
		n->time_ns = t;
		saves(c, n, (uint64_t)((double)t * share), !omp);
		snprintf(n->why, sizeof(n->why),
			 "%" PRIu64 " of %" PRIu64 " uploads here (%.1f %% of the %" PRIu64
			 " bytes) sent the bytes the same host buffer held at its previous upload",
			 v[C_RESENT_COUNT][i],
			 omp ? v[C_OMP_H2D_COUNT][i] : v[C_H2D_COUNT][i], 100.0 * share, b);
	}
}

/*
 * Launch-bound kernels: at a kernel's node, n of its N launches found their
 * stream idle after the kernel had been issued, for G in all
 * (GKER_LAUNCH_GAP: the launches' own cost, gpu/streams.h). Launched
 * together (a graph, a fused kernel), those n kernels would run back to
 * back: of their time now, their share of the kernel time D plus the
 * gaps, only D n / N would remain:
 *   T / T' = (D n / N + G) / (D n / N)
 * The time saved is G: the host was issuing those launches, so the loop
 * that issues them ends sooner by as much; an upper bound, as the host
 * may have had other work to overlap.
 */
static void check_launch_bound(struct ctx *c)
{
	const struct gt_profile *p = c->p;
	const uint64_t *const *v = (const uint64_t *const *)c->v;

	for (uint32_t i = 0; i < p->n_nodes; i++) {
		uint64_t g = v[C_LAUNCH_GAP][i], n = v[C_LAUNCH_GAP_COUNT][i], all = v[C_COUNT][i];
		double busy, speedup;
		struct gt_next *x;

		/* Under 1 % of the run's wall time: a stream's dispatch latency
		 * before a few long kernels, not a launch-bound loop. */
		if (!g || !n || all < n || !v[C_GKER][i] || (double)g < 0.01 * (double)c->run->wall_ns)
			continue;
		busy = (double)v[C_GKER][i] * (double)n / (double)all;
		speedup = (busy + (double)g) / busy;
		if (speedup < MIN_SPEEDUP || !(x = gt_next__add(c, GT_NEXT_LAUNCH_BOUND, i)))
			continue;
		x->time_ns = (uint64_t)(busy + (double)g);
		x->speedup = speedup;
		saves(c, x, g, 1);
		snprintf(x->why, sizeof(x->why),
			 "%" PRIu64 " of %" PRIu64 " launches found their stream idle, %.2f us each on average after "
			 "the previous operation ended, the kernel already issued; the kernel ran %.2f us",
			 n, all, (double)g / (double)n / 1e3, (double)v[C_GKER][i] / (double)all / 1e3);
	}
}

/*
 * Waits for one stream after which the thread's next operation ran on
 * another stream (GSYNC_SERIAL at the wait's node, gpu/streams.h): issued
 * before the wait, that operation could have run beside the waited work,
 * for the shorter of the two. The gain is not estimated: it needs the
 * operation not to depend on the waited work, and the device to have room
 * for both at once, and the measurements show neither (on PoCL's CPU
 * device, one kernel filled it: samples/opencl/streams gained nothing).
 */
static void check_serial_sync(struct ctx *c)
{
	const struct gt_profile *p = c->p;
	const uint64_t *const *v = (const uint64_t *const *)c->v;

	for (uint32_t i = 0; i < p->n_nodes; i++) {
		uint64_t g = v[C_SERIAL][i], n = v[C_SERIAL_COUNT][i];
		struct gt_next *x;

		/* Under 1 % of the run's wall time: not worth a line. */
		if (!g || !n || (double)g < 0.01 * (double)c->run->wall_ns ||
		    !(x = gt_next__add(c, GT_NEXT_SERIAL_SYNC, i)))
			continue;
		x->time_ns = g;
		snprintf(x->why, sizeof(x->why),
			 "%" PRIu64 " of the %" PRIu64 " waits here were for one stream, and the work issued next "
			 "ran on another: up to %.3f ms of it could have run beside the waited work, were it "
			 "independent and the device free enough",
			 n, v[C_SYNC_COUNT][i] ? v[C_SYNC_COUNT][i] : n, (double)g / 1e6);
	}
}

/* The CPU waited at syncs (CPU_IDLE) and the GPU idled during CPU work
 * (GPU_IDLE_CAUSE): overlapping them saves at most the smaller. */
static void check_overlap(struct ctx *c)
{
	const struct gt_profile *p = c->p;
	uint64_t idle = 0, gidle = 0, waited;
	uint32_t at = GT_NONE, cpu = GT_NONE;
	uint32_t procs = c->run->processes ? c->run->processes : 1;
	struct gt_next *n;

	for (uint32_t i = 0; i < p->n_nodes; i++) {
		/* The measurement's own time (CUPTI's, ours) is no program work. */
		uint64_t g = c->v[C_GPU_IDLE_CAUSE][i] && !gt_ptree__tool_time(p, i) ? c->v[C_GPU_IDLE_CAUSE][i] : 0;

		idle += c->v[C_CPU_IDLE][i];
		gidle += g;
		if (c->v[C_CPU_IDLE][i] && (at == GT_NONE || c->v[C_CPU_IDLE][i] > c->v[C_CPU_IDLE][at]))
			at = i;
		/* The root holds samples no context was found for: no place to name. */
		if (i && g && (cpu == GT_NONE || g > c->v[C_GPU_IDLE_CAUSE][cpu]))
			cpu = i;
	}
	waited = idle < gidle ? idle : gidle;
	if (at == GT_NONE || !gidle || !c->run->wall_ns ||
	    (double)waited / procs < 0.01 * (double)c->run->wall_ns || !(n = gt_next__add(c, GT_NEXT_OVERLAP, at)))
		return;
	n->line = cpu;
	n->time_ns = waited;
	saves(c, n, waited, 1);
	snprintf(n->why, sizeof(n->why),
		 "the CPU waited %.3f s at synchronizations (CPU_IDLE) and did %.3f s of work while no GPU "
		 "had anything to do (GPU_IDLE_CAUSE)",
		 (double)idle / 1e9 / procs, (double)gidle / 1e9 / procs);
}

/*
 * OpenCL's best-practice checks, one piece of advice per context that
 * showed one. Two have a time to save: a run-time build (its host time,
 * GJIT, at its <gpu jit> node: an ahead-of-time binary loads in a part of
 * it, so the whole is an upper bound) and data sent back unchanged (the
 * upload's time at its <gpu copy h2d> node, saved whole if the data stays
 * on the device). The others are given without an estimate.
 */
static int check_opencl(struct ctx *c)
{
	const struct gt_profile *p = c->p;
	uint64_t *jit = gt_ptree__excl(p, "GJIT"), *up = gt_ptree__excl(p, "GXCOPY_H2D");
	int err = -ENOMEM;

	if (!jit || !up)
		goto out;
	for (enum gt_next_kind k = GT_NEXT_OCL_AOT; k <= GT_NEXT_OCL_DEVICES; k++) {
		uint64_t *v = gt_ptree__excl(p, ocl_metrics[k - GT_NEXT_OCL_AOT]);

		if (!v)
			goto out;
		for (uint32_t i = 0; i < p->n_nodes; i++) {
			uint64_t t = k == GT_NEXT_OCL_AOT ? jit[i] : k == GT_NEXT_OCL_RESEND ? up[i] : 0;
			struct gt_next *n;

			if (!v[i])
				continue;
			if (!(n = gt_next__add(c, k, i))) {
				free(v);
				goto out;
			}
			snprintf(n->why, sizeof(n->why), "%s: %" PRIu64,
				 k == GT_NEXT_OCL_AOT	     ? "run-time builds of source or IL with one device in use"
				 : k == GT_NEXT_OCL_RESEND   ? "uploads of bytes read back from a device, unchanged"
				 : k == GT_NEXT_OCL_RESTRICT ? "launches with buffer arguments that do not overlap"
				 : k == GT_NEXT_OCL_CONTEXTS ? "first launches in a context other than the kernel's first"
				 : k == GT_NEXT_OCL_INORDER  ? "in-order queues created"
							     : "contexts leaving a device of a platform unused",
				 v[i]);
			if (!t)
				continue;
			n->time_ns = t;
			saves(c, n, t, 1);
		}
		free(v);
	}
	err = 0;
out:
	free(jit);
	free(up);
	return err;
}

static int by_gain(const void *a, const void *b)
{
	const struct gt_next *x = a, *y = b;

	if ((x->program > 0) != (y->program > 0))
		return x->program > 0 ? -1 : 1;
	if (x->saved_ns != y->saved_ns)
		return x->saved_ns > y->saved_ns ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns > y->time_ns ? -1 : 1;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

int gt_next__applies(const struct gt_profile *p)
{
	/* What every check starts from: PC samples, pageable or resent
	 * copies, launch gaps, waits, OpenCL's counts. */
	if (gt_profile__find_metric(p, "GPC_SAMPLES") != GT_NONE ||
	    gt_profile__find_metric(p, "GSC_INST") != GT_NONE ||
	    gt_profile__find_metric(p, "GXCOPY_PAGEABLE_BYTES") != GT_NONE ||
	    gt_profile__find_metric(p, "GXCOPY_RESENT_BYTES") != GT_NONE ||
	    gt_profile__find_metric(p, "GKER_LAUNCH_GAP") != GT_NONE ||
	    gt_profile__find_metric(p, "GSYNC_SERIAL") != GT_NONE ||
	    gt_profile__find_metric(p, "CPU_IDLE") != GT_NONE)
		return 1;
	for (size_t i = 0; i < sizeof(ocl_metrics) / sizeof(ocl_metrics[0]); i++)
		if (gt_profile__find_metric(p, ocl_metrics[i]) != GT_NONE)
			return 1;
	return 0;
}

int gt_next__build(const struct gt_profile *p, const struct gt_sections_run *run, struct gt_next_list *out)
{
	struct ctx c = { .p = p, .run = run, .out = out };
	int err = -ENOMEM;

	out->v = NULL;
	out->n = 0;
	if (!gt_next__applies(p))
		return 0;
	for (int i = 0; i < C_COLS; i++)
		if (!(c.v[i] = cols[i].inclusive ? gt_ptree__incl(p, cols[i].metric) : gt_ptree__excl(p, cols[i].metric)))
			goto out_free;
	if (!(c.kern = gt_ptree__kernels(p)) || under__build(&c))
		goto out_free;
	c.blame = gt_profile__find_metric(p, "CPU_IDLE_CAUSE") != GT_NONE;
	c.patched = gt_profile__find_metric(p, "GSC_INST") != GT_NONE;
	for (uint32_t i = 0; i < p->n_nodes; i++)
		if (c.kern[i] == i)
			check_kernel(&c, i);
	gt_next__check_code(&c);
	check_divergence(&c);
	check_pageable(&c);
	check_resent(&c);
	check_launch_bound(&c);
	check_serial_sync(&c);
	check_overlap(&c);
	if (c.oom || check_opencl(&c))
		goto out_free;
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), by_gain);
	err = 0;
out_free:
	for (int i = 0; i < C_COLS; i++) {
		free(c.v[i]);
		free(c.sum[i]);
		free(c.hot[i]);
	}
	free(c.kern);
	if (err)
		gt_next__fini(out);
	return err;
}

void gt_next__fini(struct gt_next_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static void put_time(FILE *f, uint64_t ns)
{
	if (ns >= 1000000000)
		fprintf(f, "%.3f s", (double)ns / 1e9);
	else if (ns >= 1000000)
		fprintf(f, "%.3f ms", (double)ns / 1e6);
	else
		fprintf(f, "%.3f us", (double)ns / 1e3);
}

int gt_next__write_text(const struct gt_profile *p, const struct gt_next_list *l, FILE *f, unsigned top)
{
	char what[256], ctx[GT_PTREE_WHERE_COLS + 512], path[GT_PTREE_WHERE_COLS + 512];
	uint32_t shown = l->n < top ? l->n : top;

	if (!l->n)
		return 0;
	fprintf(f, "\nWhat to do next (%" PRIu32 " of %" PRIu32 ", by the estimated gain of the whole program;"
		   " how each is estimated: docs/ADVICE.md)\n",
		shown, l->n);
	for (uint32_t k = 0; k < shown; k++) {
		const struct gt_next *n = &l->v[k];
		int kernel = gt_next__of_kernel(n->kind);
		size_t len = 0;

		what[0] = 0;
		gt_ptree__label(p, n->node, what, sizeof(what), &len);
		fprintf(f, "  %2" PRIu32 ". ", k + 1);
		if (n->program > 0) {
			fprintf(f, "program %s%.3fx, saves ", n->upper_bound ? "up to " : "", n->program);
			put_time(f, n->saved_ns);
		} else {
			fputs("gain not estimated", f);
		}
		fprintf(f, ": %s%s%s\n", kernel ? what : "", kernel ? ": " : "", kinds[n->kind].title);
		if (n->line != GT_NONE && kernel) {
			len = 0;
			what[0] = 0;
			gt_ptree__label(p, n->line, what, sizeof(what), &len);
			gt_ptree__kernel_of(p, n->line, path, sizeof(path));
			fprintf(f, "        at %s%s%s\n", what, path[0] ? " in " : "", path);
		}
		fprintf(f, "        %s\n", n->why);
		if (n->speedup > 0 && kernel) {
			fprintf(f, "        the %s: %.2fx faster (",
				n->kind == GT_NEXT_LAUNCH_BOUND ? "kernels with their launches" : "kernel", n->speedup);
			put_time(f, n->time_ns);
			fputs(" -> ", f);
			put_time(f, (uint64_t)((double)n->time_ns / n->speedup));
			fprintf(f, ")%s\n", n->upper_bound ? "; no blame measured: all of it counted as the program's" : "");
		} else if (n->speedup > 0 && n->kind == GT_NEXT_PAGEABLE) {
			fprintf(f, "        the copies: %.2fx faster (", n->speedup);
			put_time(f, n->time_ns);
			fputs(" -> ", f);
			put_time(f, (uint64_t)((double)n->time_ns / n->speedup));
			fputs(")\n", f);
		}
		fprintf(f, "        try: %s\n", n->todo);
		gt_ptree__where(p, kernel ? gt_ptree__launch_site(p, n->node) : n->node, ctx, sizeof(ctx));
		fprintf(f, "        %s %s\n", kernel ? "launched at" : "at", ctx);
		if (n->kind == GT_NEXT_OVERLAP && n->line != GT_NONE) {
			gt_ptree__where(p, n->line, ctx, sizeof(ctx));
			fprintf(f, "        CPU work at %s\n", ctx);
		}
	}
	if (shown < l->n)
		fprintf(f, "  … %" PRIu32 " more (--top N shows N)\n", l->n - shown);
	return 0;
}
