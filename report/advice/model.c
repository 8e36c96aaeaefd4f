/* SPDX-License-Identifier: MIT */
/* The advice's models (model.h); docs/ADVICE.md derives them. */
#include "report/advice/model.h"

#include <math.h>

double gt_advice_model__stall(double wr, double waiting, double f, double cut)
{
	double left = waiting > 0 ? (waiting - f) / waiting : 1;

	return wr * (1.0 - cut) + (1.0 - wr) * (left > 0 ? left : 0);
}

double gt_advice_model__barrier(double wr, double waiting, double b, double g_sum, double g_max)
{
	return gt_advice_model__stall(wr, waiting, b + g_sum - g_max, 0);
}

double gt_advice_model__gone(double wr, double waiting, double f, double cut, double n)
{
	double w = f < 1 ? (waiting - f) / (1 - f) : 0;

	if (w < 0)
		w = 0;
	if (w >= 1 || n < 1)
		return gt_advice_model__stall(wr, waiting, f, cut);
	return wr * (1.0 - cut) / (1.0 - pow(w, n));
}

double gt_advice_model__occupancy(double m, double e, double n, double next_n)
{
	double to = gt_advice_model__issue(e, next_n);

	return to > 0 ? 1.0 - (1.0 - m) * (1.0 - gt_advice_model__issue(e, n) / to) : 1.0;
}

double gt_advice_model__divergence(int sampled, double wr, double cut)
{
	return sampled ? gt_advice_model__stall(wr, 1.0, 0, cut) : 1.0 - cut;
}

double gt_advice_model__launch_speedup(double busy, double gap)
{
	return (busy + gap) / busy;
}

double gt_advice_model__program(double wall_ns, double saved_ns)
{
	return wall_ns > saved_ns ? wall_ns / (wall_ns - saved_ns) : 0;
}

double gt_advice_model__issue(double e, double n)
{
	if (n <= 0 || e <= 0)
		return 0;
	return n >= 1 ? 1.0 - pow(1.0 - e, n) : n * e;
}

double gt_advice_model__threads(double u, double e, double n, double next_n)
{
	double to = gt_advice_model__issue(e, next_n);

	return to > 0 ? u * gt_advice_model__issue(e, n) / to : u;
}

double gt_advice_model__blocks(double sms, double sms_next, double e, double n, double next_n)
{
	double to = sms_next * gt_advice_model__issue(e, next_n);

	return to > 0 ? sms * gt_advice_model__issue(e, n) / to : 1.0;
}

double gt_advice_model__access_wait(double waits, double issued)
{
	return issued > 0 ? waits / issued : 0;
}
