/* SPDX-License-Identifier: MIT */
/*
 * The models of the advice's estimates (docs/ADVICE.md), as pure
 * functions of the shares the checks measure: no profile, no I/O, so that
 * tests/unit/test_advice_model.c checks them on figures worked by hand and
 * tests/advice_model.py restates them once for the report's oracles.
 *
 * Kernels (GPA's (CGO'21) stall elimination and latency hiding, with the
 * scheduler's issue cycles kept): of a kernel context's S samples, L are
 * latency samples (its scheduler issued nothing), so the schedulers issued
 * in the share W_R = (S - L) / S of its cycles; the share w of the samples
 * waited (neither issued nor eligible).
 */
#ifndef GT_REPORT_ADVICE_MODEL_H
#define GT_REPORT_ADVICE_MODEL_H

/* A change that removes the share f of the samples, all waiting, and the
 * share cut of the issued instructions: the issue cycles shrink by cut,
 * the others as the warps' waiting does.
 *   T' / T = W_R (1 - c) + (1 - W_R) (w - f) / w */
double gt_advice_model__stall(double wr, double waiting, double f, double cut);

/* Barriers (gpu-barrier): the shares b of the samples that wait at a
 * block's barriers, g_sum that wait for global loads outside loops, and
 * g_max of those for the load that waits the most. Balanced or without
 * the barriers, the warps do not wait at them, and the loads, issued
 * together, wait as the longest does: the first model with
 *   f = b + g_sum - g_max, c = 0. */
double gt_advice_model__barrier(double wr, double waiting, double b, double g_sum, double g_max);

/* The same change where the waits' cause goes too (local loads that
 * become registers): a warp then waits the share w' = (w - f) / (1 - f) of
 * its time, and a scheduler with n resident warps, each waiting
 * independently, issues in 1 - w'^n of its cycles, at most every cycle:
 *   T' / T = W_R (1 - c) / (1 - w'^n)
 * (the first model where w' >= 1 or n < 1). */
double gt_advice_model__gone(double wr, double waiting, double f, double cut, double n);

/* More resident warps per scheduler, n -> next_n (the theoretical
 * occupancy's, bounded by the grid's own warps), hide latency as far as
 * the independent-warp model lets the issue rate grow (model__issue),
 * but for the memory's waits (the share m of the waiting), whose
 * bandwidth the samples do not show:
 *   T' / T = 1 - (1 - m) (1 - R(n) / R(n')) */
double gt_advice_model__occupancy(double m, double e, double n, double next_n);

/* The share cut of the warp instructions ran for idle threads: only the
 * issue cycles shrink, T' / T = W_R (1 - c) + (1 - W_R); without PC
 * samples (sampled 0) the kernel is taken as issue-bound, T' / T = 1 - c. */
double gt_advice_model__divergence(int sampled, double wr, double cut);

/* Launches that found their stream idle: busy the kernel time of those
 * launches, gap the idle time after them; launched together, only busy
 * remains: T / T' = (busy + gap) / busy. */
double gt_advice_model__launch_speedup(double busy, double gap);

/* The program's speedup when saved_ns of its wall_ns are saved: wall /
 * (wall - saved); 0 (not estimated) when the saving is not below wall. */
double gt_advice_model__program(double wall_ns, double saved_ns);

/* The parallel models (GPA's block and thread increase): a warp is ready
 * (eligible) the share e of its cycles, the kernel's (S_I + S_N) / S, each
 * independently of the others; a scheduler with n resident warps then
 * issues in R(n) = 1 - (1 - e)^n of its cycles, and n < 1 (some
 * schedulers without a warp) in n e. */
double gt_advice_model__issue(double e, double n);

/* Larger blocks (thread increase): the lanes a warp fills go from the
 * share u to all of them (the warp instructions, and the waits each
 * stands for, shrink by u), and the warps per scheduler from n to next_n:
 *   T' / T = u R(n) / R(n') */
double gt_advice_model__threads(double u, double e, double n, double next_n);

/* Smaller blocks, the same threads (block increase): the grid's blocks go
 * from sms to sms_next busy SMs, each scheduler's warps from n to next_n:
 *   T' / T = (sms R(n)) / (sms' R(n')) */
double gt_advice_model__blocks(double sms, double sms_next, double e, double n, double next_n);
/* Scattered global accesses: the cycles a warp waited, on average, per
 * global instruction it issued. A PC sample of a warp waiting is a cycle
 * it waited, a sample of it issuing is a cycle it issued (one
 * instruction), so with waits the samples waiting on global memory and
 * issued the issued samples of the global instructions:
 *   wait = waits / issued   (0 where nothing issued)
 * A scattered access moves a sector per thread, whose requests queue in
 * the L1TEX and memory pipelines: its warp waits longer than one access
 * of the DRAM (GT_ADVICE_MODEL_DRAM_WAIT cycles); loads that wait less,
 * on average, are mostly served by the caches, where coalescing saves
 * little. */
#define GT_ADVICE_MODEL_DRAM_WAIT 500.0
double gt_advice_model__access_wait(double waits, double issued);

/*
 * OpenMP (docs/ADVICE.md, "OpenMP"): the measurements of a parallel region
 * summed over its N instances and its threads: wait, the threads' time at
 * the region's barriers (OMP_WAIT below it, nested regions' left out);
 * work, their time in its implicit tasks not waiting (OMP_WORK); team, the
 * mean team size (OMP_PAR_THREADS / OMP_PAR_COUNT); par, the instances'
 * wall time on the thread that starts them (OMP_PAR_TIME).
 */

/* Imbalance: at a barrier each thread waits for the slowest, so the waits
 * of an instance add up to team (max - mean) of the threads' work; a
 * balanced schedule ends the instance at the mean: it saves wait / team. */
double gt_advice_model__imbalance(double wait, double team);

/* Fork/join: of a region's wall time par, only the threads' mean work,
 * work / team, is the work's own; the rest is starting the team, the
 * barriers and the waits, which one region around the loop of instances
 * (or a coarser one) saves: par - work / team, at least 0. */
double gt_advice_model__fork_join(double par, double work, double team);

/* Amdahl: serial time run by team threads instead of one saves
 * serial (1 - 1 / team); nothing for a team of one or less. */
double gt_advice_model__amdahl(double serial, double team);

/* Tasks: the team's working time in a region outside its explicit tasks,
 * work - tasks, is the tasks' creation and scheduling (and whatever else
 * the region does outside them): spread over the team it is the wall time
 * that tasks coarse enough to make it negligible save, (work - tasks) /
 * team, at least 0. */
double gt_advice_model__tasks(double work, double tasks, double team);

#endif
