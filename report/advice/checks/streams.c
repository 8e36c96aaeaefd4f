/* SPDX-License-Identifier: MIT */
/*
 * What the streams and the host's waits show (docs/ADVICE.md, "Copies and
 * waits"): kernels shorter than their launches, waits that serialize two
 * streams, and the CPU and the GPU waiting for each other.
 */
#include <inttypes.h>
#include <stdio.h>

#include "report/advice/check.h"
#include "report/ptree.h"

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
static int check_launch_bound(struct gt_advice_ctx *c)
{
	const struct gt_profile *p = c->p;
	uint64_t *const *v = c->excl;

	for (uint32_t i = 0; i < p->n_nodes; i++) {
		uint64_t g = v[GT_M_GKER_LAUNCH_GAP][i], n = v[GT_M_GKER_LAUNCH_GAP_COUNT][i], all = v[GT_M_GKER_COUNT][i];
		double busy, speedup;
		struct gt_next *x;

		/* Under 1 % of the run's wall time: a stream's dispatch latency
		 * before a few long kernels, not a launch-bound loop. */
		if (!g || !n || all < n || !v[GT_M_GKER][i] || (double)g < 0.01 * (double)c->run->wall_ns)
			continue;
		busy = (double)v[GT_M_GKER][i] * (double)n / (double)all;
		speedup = gt_advice_model__launch_speedup(busy, (double)g);
		if (speedup < GT_ADVICE_MIN_SPEEDUP || !(x = gt_advice__add(c, GT_NEXT_LAUNCH_BOUND, i)))
			continue;
		x->time_ns = (uint64_t)(busy + (double)g);
		x->speedup = speedup;
		gt_advice__saves(c, x, g, 1);
		snprintf(x->why, sizeof(x->why),
			 "%" PRIu64 " of %" PRIu64 " launches found their stream idle, %.2f us each on average after "
			 "the previous operation ended, the kernel already issued; the kernel ran %.2f us",
			 n, all, (double)g / (double)n / 1e3, (double)v[GT_M_GKER][i] / (double)all / 1e3);
	}
	return 0;
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
static int check_serial_sync(struct gt_advice_ctx *c)
{
	const struct gt_profile *p = c->p;
	uint64_t *const *v = c->excl;

	for (uint32_t i = 0; i < p->n_nodes; i++) {
		uint64_t g = v[GT_M_GSYNC_SERIAL][i], n = v[GT_M_GSYNC_SERIAL_COUNT][i];
		struct gt_next *x;

		/* Under 1 % of the run's wall time: not worth a line. */
		if (!g || !n || (double)g < 0.01 * (double)c->run->wall_ns ||
		    !(x = gt_advice__add(c, GT_NEXT_SERIAL_SYNC, i)))
			continue;
		x->time_ns = g;
		snprintf(x->why, sizeof(x->why),
			 "%" PRIu64 " of the %" PRIu64 " waits here were for one stream, and the work issued next "
			 "ran on another: up to %.3f ms of it could have run beside the waited work, were it "
			 "independent and the device free enough",
			 n, v[GT_M_GSYNC_COUNT][i] ? v[GT_M_GSYNC_COUNT][i] : n, (double)g / 1e6);
	}
	return 0;
}


/* The CPU waited at syncs (CPU_IDLE) and the GPU idled during CPU work
 * (GPU_IDLE_CAUSE): overlapping them saves at most the smaller. */
static int check_overlap(struct gt_advice_ctx *c)
{
	const struct gt_profile *p = c->p;
	uint64_t idle = 0, gidle = 0, waited;
	uint32_t at = GT_NONE, cpu = GT_NONE;
	uint64_t *const *v = c->excl;
	uint32_t procs = c->run->processes ? c->run->processes : 1;
	struct gt_next *n;

	for (uint32_t i = 0; i < p->n_nodes; i++) {
		/* The measurement's own time (CUPTI's, ours) is no program work. */
		uint64_t g = v[GT_M_GPU_IDLE_CAUSE][i] && !gt_ptree__tool_time(p, i) ? v[GT_M_GPU_IDLE_CAUSE][i] : 0;

		idle += v[GT_M_CPU_IDLE][i];
		gidle += g;
		if (v[GT_M_CPU_IDLE][i] && (at == GT_NONE || v[GT_M_CPU_IDLE][i] > v[GT_M_CPU_IDLE][at]))
			at = i;
		/* The root holds samples no context was found for: no place to name. */
		if (i && g && (cpu == GT_NONE || g > v[GT_M_GPU_IDLE_CAUSE][cpu]))
			cpu = i;
	}
	waited = idle < gidle ? idle : gidle;
	if (at == GT_NONE || !gidle || !c->run->wall_ns ||
	    (double)waited / procs < 0.01 * (double)c->run->wall_ns || !(n = gt_advice__add(c, GT_NEXT_OVERLAP, at)))
		return 0;
	n->line = cpu;
	n->time_ns = waited;
	gt_advice__saves(c, n, waited, 1);
	snprintf(n->why, sizeof(n->why),
		 "the CPU waited %.3f s at synchronizations (CPU_IDLE) and did %.3f s of work while no GPU "
		 "had anything to do (GPU_IDLE_CAUSE)",
		 (double)idle / 1e9 / procs, (double)gidle / 1e9 / procs);
	return 0;
}


static const enum gt_metric launch_triggers[] = { GT_M_GKER_LAUNCH_GAP, GT_ADVICE_END };
static const struct gt_advice_need launch_needs[] = {
	{ GT_M_GKER_LAUNCH_GAP, GT_ADVICE_EXCL },
	{ GT_M_GKER_LAUNCH_GAP_COUNT, GT_ADVICE_EXCL },
	{ GT_M_GKER_COUNT, GT_ADVICE_EXCL },
	{ GT_ADVICE_END, 0 },
};

const struct gt_advice_check gt_advice_check_launch_bound = {
	.name = "launch-bound",
	.triggers = launch_triggers,
	.needs = launch_needs,
	.run = check_launch_bound,
};

static const enum gt_metric serial_triggers[] = { GT_M_GSYNC_SERIAL, GT_ADVICE_END };
static const struct gt_advice_need serial_needs[] = {
	{ GT_M_GSYNC_SERIAL, GT_ADVICE_EXCL },
	{ GT_M_GSYNC_SERIAL_COUNT, GT_ADVICE_EXCL },
	{ GT_M_GSYNC_COUNT, GT_ADVICE_EXCL },
	{ GT_ADVICE_END, 0 },
};

const struct gt_advice_check gt_advice_check_serial_sync = {
	.name = "serializing-sync",
	.triggers = serial_triggers,
	.needs = serial_needs,
	.run = check_serial_sync,
};

static const enum gt_metric overlap_triggers[] = { GT_M_CPU_IDLE, GT_ADVICE_END };
static const struct gt_advice_need overlap_needs[] = {
	{ GT_M_CPU_IDLE, GT_ADVICE_EXCL },
	{ GT_M_GPU_IDLE_CAUSE, GT_ADVICE_EXCL },
	{ GT_ADVICE_END, 0 },
};

const struct gt_advice_check gt_advice_check_overlap = {
	.name = "cpu-gpu-overlap",
	.triggers = overlap_triggers,
	.needs = overlap_needs,
	.run = check_overlap,
};
