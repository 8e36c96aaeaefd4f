/* SPDX-License-Identifier: MIT */
/*
 * Stalls a change to the kernel's memory accesses or synchronization
 * removes (docs/ADVICE.md, "Kernels"): local memory, scattered global
 * accesses, barriers; each at the line whose samples wait the most on it.
 */
#include <inttypes.h>
#include <stdio.h>

#include "report/advice/check.h"

#define SCATTERED_BW 0.25 /* global accesses using under this share of the DRAM peak are scattered */
#define LANE_BYTES 4      /* the bytes a thread's global access is assumed to move */

/* The waits for global loads outside loops, by the line of the load
 * (GPB_GLOBAL at the lines right under kernel context k): their sum and
 * the most of one line. Between barriers a block's warps issue such a
 * load, wait for it, and pass the next barrier together, so that no load
 * of the next stretch overlaps it; issued together before the first
 * barrier, or with no barrier between them, they wait as one. */
static void serial_loads(const struct gt_advice_ctx *c, uint32_t k, double *sum, double *most)
{
	const struct gt_profile *p = c->p;

	for (uint32_t i = k + 1; i < p->n_nodes; i++) {
		double g = (double)c->excl[GT_M_GPB_GLOBAL][i];

		if (c->kern[i] != k || p->nodes[i].parent != k || !g)
			continue;
		*sum += g;
		if (g > *most)
			*most = g;
	}
}

static void kernel(struct gt_advice_ctx *c, const struct gt_advice_kernel *x)
{
	uint64_t *const *ex = c->excl;
	uint32_t k = x->k, hot;
	double S = x->S, wr = x->wr, waiting = x->waiting, iss = x->iss;
	uint64_t count = ex[GT_M_GKER_COUNT][k] ? ex[GT_M_GKER_COUNT][k] : 1;
	double il, ig, mem, resident;
	struct gt_next *n;

	if (!x->sampled)
		return;
	/* The waits for the L1TEX path (long scoreboard, LG throttle), shared
	 * between local and global memory as their instructions issued. */
	il = (double)gt_advice__under(c, k, GT_M_GPI_LOCAL, NULL);
	ig = (double)gt_advice__under(c, k, GT_M_GPI_GLOBAL, NULL);
	mem = (double)(gt_advice__under(c, k, GT_M_GPS_LONG_SCOREBOARD, NULL) +
		       gt_advice__under(c, k, GT_M_GPS_LG_THROTTLE, NULL)) / S;
	/* Warps resident per scheduler: the theoretical occupancy of the SM's
	 * warp slots (64 where the device is not known), over 4 schedulers. */
	resident = (double)ex[GT_M_GKER_OCC_THR][k] / (double)count / 1000.0 *
		   (double)(c->run->warps_per_sm ? c->run->warps_per_sm : 64) /
		   (double)(c->run->pc_schedulers ? c->run->pc_schedulers : 4);

	/* Local memory: what the local loads and stores make the warps wait
	 * for goes, and so do those instructions. */
	if (il > 0 && (gt_advice__under(c, k, GT_M_GPB_LOCAL, &hot), hot != GT_NONE)) {
		double f = mem * il / (il + ig);

		if (f >= GT_ADVICE_MIN_SHARE &&
		    (n = gt_advice__kernel_item(c, GT_NEXT_GPU_LOCAL, k, hot, (uint64_t)(f * S + 0.5), S,
						gt_advice_model__gone(wr, waiting, f, iss > 0 ? il / iss : 0, resident)))) {
			int len = snprintf(n->why, sizeof(n->why),
					   "%.1f%% of the kernel's PC samples wait on local memory; local loads and "
					   "stores are %.1f%% of its instructions",
					   100.0 * f, iss > 0 ? 100.0 * il / iss : 0.0);

			if (ex[GT_M_GKER_THR_REG][k] && len > 0 && (size_t)len < sizeof(n->why))
				snprintf(n->why + len, sizeof(n->why) - (size_t)len, "; %" PRIu64 " registers per thread",
					 ex[GT_M_GKER_THR_REG][k] / count);
		}
	}

	/* Scattered global accesses: memory-bound on global loads while the
	 * bytes the threads asked for use little of the DRAM's bandwidth, and
	 * each global instruction waits longer than a DRAM access. */
	if (ig > 0 && (gt_advice__under(c, k, GT_M_GPB_GLOBAL, &hot), hot != GT_NONE)) {
		double f = mem * ig / (il + ig), t = (double)ex[GT_M_GKER][k] / 1e9, bytes = 0, floor = 0;
		const struct gt_sections_run *r = c->run;

		if (r->pc_period && iss > 0 && r->dram_bytes_per_s && t > 0) {
			double w = r->pc_schedulers ? (double)r->pc_schedulers : 4.0;

			/* Equations 10-11 (report/advice.c): the global instructions
			 * issued, a warp's 32 accesses each. */
			bytes = (S - (double)c->incl[GT_M_GPC_LATENCY][k]) * w * (double)r->pc_period * ig / iss * 32 *
				LANE_BYTES;
			floor = bytes / (double)r->dram_bytes_per_s / t;
		}
		/* And its global instructions wait longer, each, than an access
		 * of the DRAM: a sector per thread queues (model.h). */
		double wait = gt_advice_model__access_wait(f * S, ig);

		/* No faster than the DRAM moves the bytes asked for. */
		double ratio = gt_advice_model__stall(wr, waiting, f, 0);

		if (f >= GT_ADVICE_MIN_SHARE * 3 && bytes > 0 && floor < SCATTERED_BW &&
		    wait >= GT_ADVICE_MODEL_DRAM_WAIT &&
		    (n = gt_advice__kernel_item(c, GT_NEXT_GPU_GLOBAL, k, hot, (uint64_t)(f * S + 0.5), S,
						ratio > floor ? ratio : floor))) {
			snprintf(n->why, sizeof(n->why),
				 "%.1f%% of the kernel's PC samples wait on global memory, while the %.3g bytes its "
				 "threads access use %.1f%% of the DRAM's peak bandwidth over its run; each global "
				 "instruction waited %.0f cycles on average, more than an access of the DRAM",
				 100.0 * f, bytes, 100.0 * floor, wait);
		}
	}

	/* Barriers: the waits at them, and the global loads they serialize. */
	{
		double b = (double)gt_advice__under(c, k, GT_M_GPS_BARRIER, &hot), g_sum = 0, g_max = 0, f;

		serial_loads(c, k, &g_sum, &g_max);
		f = (b + g_sum - g_max) / S;
		if (b > 0 && f >= GT_ADVICE_MIN_SHARE && hot != GT_NONE &&
		    (n = gt_advice__kernel_item(c, GT_NEXT_GPU_BARRIER, k, hot, (uint64_t)b, S,
						gt_advice_model__barrier(wr, waiting, b / S, g_sum / S, g_max / S)))) {
			snprintf(n->why, sizeof(n->why),
				 "%.1f%% of the kernel's PC samples wait at barriers, and %.1f%% for global loads outside "
				 "loops that the barriers keep from overlapping (%.1f%% for the one that waits the most)",
				 100.0 * b / S, 100.0 * g_sum / S, 100.0 * g_max / S);
		}
	}
}

static const enum gt_metric triggers[] = { GT_M_GPC_SAMPLES, GT_ADVICE_END };
static const struct gt_advice_need needs[] = {
	{ GT_M_GPC_LATENCY, GT_ADVICE_INCL },
	{ GT_M_GPS_LONG_SCOREBOARD, GT_ADVICE_PER_KERNEL },
	{ GT_M_GPS_LG_THROTTLE, GT_ADVICE_PER_KERNEL },
	{ GT_M_GPS_BARRIER, GT_ADVICE_PER_KERNEL },
	{ GT_M_GPB_GLOBAL, GT_ADVICE_PER_KERNEL },
	{ GT_M_GPB_LOCAL, GT_ADVICE_PER_KERNEL },
	{ GT_M_GPI_GLOBAL, GT_ADVICE_PER_KERNEL },
	{ GT_M_GPI_LOCAL, GT_ADVICE_PER_KERNEL },
	{ GT_M_GKER_COUNT, GT_ADVICE_EXCL },
	{ GT_M_GKER_OCC_THR, GT_ADVICE_EXCL },
	{ GT_M_GKER_THR_REG, GT_ADVICE_EXCL },
	{ GT_ADVICE_END, 0 },
};

const struct gt_advice_check gt_advice_check_kernel_stalls = {
	.name = "kernel-stalls",
	.triggers = triggers,
	.needs = needs,
	.kernel = kernel,
};
