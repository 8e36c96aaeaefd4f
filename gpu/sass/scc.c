/* SPDX-License-Identifier: MIT */
/* Strongly connected components (sass-internal.h): Tarjan's algorithm,
 * iterative, so that a deep graph cannot overflow the stack. */
#include <errno.h>
#include <stdlib.h>

#include "gpu/sass/sass-internal.h"

int gt_sass__scc(uint32_t n, const uint32_t *start, const uint32_t *to, uint32_t *comp, uint32_t *ncomp)
{
	uint32_t *index = malloc((n ? n : 1) * sizeof(*index)), *low = malloc((n ? n : 1) * sizeof(*low));
	uint32_t *stack = malloc((n ? n : 1) * sizeof(*stack)), *call = malloc((n ? n : 1) * sizeof(*call));
	uint32_t *next = malloc((n ? n : 1) * sizeof(*next)), counter = 0, comps = 0, sp = 0, cp = 0;
	uint8_t *on = calloc(n ? n : 1, 1);
	int err = -ENOMEM;

	if (!index || !low || !stack || !call || !next || !on)
		goto out;
	for (uint32_t v = 0; v < n; v++)
		index[v] = UINT32_MAX;
	for (uint32_t root = 0; root < n; root++) {
		if (index[root] != UINT32_MAX)
			continue;
		/* call[]: the path of the depth-first search; next[v]: the
		 * next of v's edges to follow. */
		call[cp++] = root;
		index[root] = low[root] = counter++;
		next[root] = start[root];
		stack[sp++] = root;
		on[root] = 1;
		while (cp) {
			uint32_t v = call[cp - 1];

			if (next[v] < start[v + 1]) {
				uint32_t w = to[next[v]++];

				if (index[w] == UINT32_MAX) {
					index[w] = low[w] = counter++;
					next[w] = start[w];
					stack[sp++] = w;
					on[w] = 1;
					call[cp++] = w;
				} else if (on[w] && index[w] < low[v]) {
					low[v] = index[w];
				}
				continue;
			}
			cp--;
			if (cp && low[v] < low[call[cp - 1]])
				low[call[cp - 1]] = low[v];
			if (low[v] == index[v]) {
				uint32_t w;

				do {
					w = stack[--sp];
					on[w] = 0;
					comp[w] = comps;
				} while (w != v);
				comps++;
			}
		}
	}
	*ncomp = comps;
	err = 0;
out:
	free(index);
	free(low);
	free(stack);
	free(call);
	free(next);
	free(on);
	return err;
}
