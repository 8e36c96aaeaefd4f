/* SPDX-License-Identifier: MIT */
/*
 * The instruction blamer on one loop of N instructions (a load every
 * fourth, the rest multiply-adds through 100 registers in turn, as an
 * unrolled loop's body looks), every instruction with waits of each kind:
 * the blamer alone (the GPB_* metrics), then with the waits unrolling
 * could overlap (GPO_UNROLL: the loop's recurrences), the medians of 5
 * runs each and their ratio. What the exit of a PC-sampled run spends per
 * kernel on it. Not a test.
 *
 *   bench_blame [N...]     (default: 500 2000 8000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu/sass/sass.h"

#define RUNS 5

static char *kernel_text(unsigned n, size_t *len)
{
	size_t cap = 512 + (size_t)(n + 8) * 80;
	char *t = malloc(cap);

	if (!t)
		return NULL;
	*len = (size_t)snprintf(t, cap, "\t.section\t.text.big,\"ax\",@progbits\n        .type big,@function\n"
					"        .other big,@\"STO_CUDA_ENTRY STV_DEFAULT\"\nbig:\n.text.big:\n"
					"        /*0000*/ MOV R1, RZ ;\n.L_x_1:\n");
	for (unsigned i = 0; i < n; i++) {
		unsigned r = 2 + i % 100;

		if (i % 4 == 0)
			*len += (size_t)snprintf(t + *len, cap - *len, "        /*%04x*/ LDG.E R%u, desc[UR4][R200.64] ;\n",
						 (i + 1) * 16, r);
		else
			*len += (size_t)snprintf(t + *len, cap - *len, "        /*%04x*/ FFMA R%u, R%u, R%u, R1 ;\n",
						 (i + 1) * 16, r, 2 + (r - 1) % 100, 2 + r % 100);
	}
	*len += (size_t)snprintf(t + *len, cap - *len,
				 "        /*%04x*/ @P0 BRA `(.L_x_1) ;\n        /*%04x*/ EXIT ;\n", (n + 1) * 16,
				 (n + 2) * 16);
	return t;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	static const unsigned sizes[] = { 500, 2000, 8000 };
	int nsize = argc > 1 ? argc - 1 : (int)(sizeof(sizes) / sizeof(sizes[0]));

	printf("%8s %10s %12s %14s %7s\n", "insns", "loops", "blame ms", "+unroll ms", "ratio");
	for (int k = 0; k < nsize; k++) {
		unsigned n = argc > 1 ? (unsigned)strtoul(argv[k + 1], NULL, 10) : sizes[k];
		size_t len;
		char *text = kernel_text(n, &len);
		struct gt_sass *s = text ? gt_sass__parse(text, len, NULL, NULL) : NULL;
		uint32_t ni;
		uint64_t *stalls, *issued;
		double *blame, *inloop, t[2][RUNS];

		if (!s) {
			fprintf(stderr, "bench_blame: no kernel of %u instructions\n", n);
			return 1;
		}
		ni = s->sections[0].end - s->sections[0].first;
		stalls = calloc((size_t)ni * GT_SASS__WAITS, sizeof(*stalls));
		issued = calloc(ni, sizeof(*issued));
		blame = malloc((size_t)ni * GT_SASS__BLAMES * sizeof(*blame));
		inloop = malloc(ni * sizeof(*inloop));
		if (!stalls || !issued || !blame || !inloop)
			return 1;
		for (uint32_t i = 0; i < ni; i++) {
			stalls[(size_t)i * GT_SASS__WAITS + GT_SASS_WAIT_LONG] = 3;
			stalls[(size_t)i * GT_SASS__WAITS + GT_SASS_WAIT_FIXED] = 5;
			issued[i] = 2;
		}
		for (int r = 0; r < RUNS; r++)
			for (int with = 0; with < 2; with++) {
				double t0 = now_ms();

				if (gt_sass__blame(s, 0, stalls, issued, blame, with ? inloop : NULL, NULL))
					return 1;
				t[with][r] = now_ms() - t0;
			}
		qsort(t[0], RUNS, sizeof(double), cmp);
		qsort(t[1], RUNS, sizeof(double), cmp);
		printf("%8u %10u %12.2f %14.2f %7.2f\n", ni, s->n_loops, t[0][RUNS / 2], t[1][RUNS / 2],
		       t[1][RUNS / 2] / t[0][RUNS / 2]);
		free(stalls);
		free(issued);
		free(blame);
		free(inloop);
		free(text);
		gt_sass__delete(s);
	}
	return 0;
}
