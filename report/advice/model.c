/* SPDX-License-Identifier: MIT */
/* The advice's models (model.h); docs/ADVICE.md derives them. */
#include "report/advice/model.h"

#include <math.h>

double gt_advice_model__stall(double wr, double waiting, double f, double cut)
{
	double left = waiting > 0 ? (waiting - f) / waiting : 1;

	return wr * (1.0 - cut) + (1.0 - wr) * (left > 0 ? left : 0);
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

double gt_advice_model__occupancy(double wr, double m, double occ, double next)
{
	return wr + (1.0 - wr) * (m + (1.0 - m) * occ / next);
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

double gt_advice_model__access_wait(double waits, double issued)
{
	return issued > 0 ? waits / issued : 0;
}
