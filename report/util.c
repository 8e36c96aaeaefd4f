/* SPDX-License-Identifier: MIT */
/* Value scaling for the views and formats (the text helpers are core/text.h);
 * opening the files the command reads. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/rank.h"
#include "report/report.h"
#include "report/sections.h"

FILE *gt_open_regular(const char *path)
{
	/* Non-blocking: a FIFO's open would wait for a writer. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	FILE *f;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	f = fdopen(fd, "rb");
	if (!f)
		close(fd);
	return f;
}

struct gt_scale gt_scale__for(const char *unit, uint64_t largest)
{
	double v = (double)largest;

	if (unit && !strcmp(unit, "ns")) {
		if (v >= 1e8 || !largest)
			return (struct gt_scale){ 1e9, "s", 3 };
		if (v >= 1e5)
			return (struct gt_scale){ 1e6, "ms", 3 };
		return (struct gt_scale){ 1e3, "us", 3 };
	}
	if (v >= 1e10)
		return (struct gt_scale){ 1e9, "G", 3 };
	if (v >= 1e7)
		return (struct gt_scale){ 1e6, "M", 3 };
	if (v >= 1e5)
		return (struct gt_scale){ 1e3, "K", 3 };
	return (struct gt_scale){ 1, "", 0 };
}

void gt_scale__fmt(const struct gt_scale *s, char *buf, size_t len, double v)
{
	snprintf(buf, len, "%.*f", s->decimals, v / s->div);
}

int gt_ranked__cmp(const void *a, const void *b)
{
	const struct gt_ranked *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

int gt_ranked__nodes(struct gt_ranked *k, uint32_t n, uint32_t **out)
{
	uint32_t *idx = k ? malloc((n ? n : 1) * sizeof(*idx)) : NULL;

	if (!idx) {
		free(k);
		return -ENOMEM;
	}
	qsort(k, n, sizeof(*k), gt_ranked__cmp);
	for (uint32_t i = 0; i < n; i++)
		idx[i] = k[i].node;
	free(k);
	*out = idx;
	return 0;
}

int gt_used__init(struct gt_used *u, const struct gt_run *r, int keep)
{
	uint32_t n = r->t.n_metrics, nodes = r->t.n_nodes;

	memset(u, 0, sizeof(*u));
	u->metric = malloc((n ? n : 1) * sizeof(*u->metric));
	u->total = malloc((n ? n : 1) * sizeof(*u->total));
	if (keep)
		u->keep = calloc(nodes ? nodes : 1, 1);
	if (!u->metric || !u->total || (keep && !u->keep)) {
		gt_used__fini(u);
		return -ENOMEM;
	}
	for (uint32_t m = 0; m < n; m++) {
		const struct gt_cell *c = nodes ? gt_run__cell(r, 0, m) : NULL;

		if (c && c->incl.sum) {
			u->total[u->n] = c->incl.sum;
			u->metric[u->n++] = m;
		}
	}
	/* A parent's index is smaller than its children's: one pass upwards. */
	for (uint32_t i = nodes; keep && i-- > 0;) {
		for (uint32_t k = 0; !u->keep[i] && k < u->n; k++)
			u->keep[i] = gt_run__excl(r, i, u->metric[k]) != 0;
		if (u->keep[i] && i)
			u->keep[r->t.nodes[i].parent] = 1;
	}
	return 0;
}

void gt_used__fini(struct gt_used *u)
{
	free(u->metric);
	free(u->total);
	free(u->keep);
	memset(u, 0, sizeof(*u));
}

uint64_t gt_run__excl(const struct gt_run *r, uint32_t node, uint32_t m)
{
	const struct gt_cell *c = gt_run__cell(r, node, m);

	return c ? c->excl.sum : 0;
}

int gt_device_list__next(const char **s, unsigned long *dev, uint64_t *ns)
{
	const char *p = *s;
	char *end;

	if (!p || !*p)
		return 0;
	*dev = strtoul(p, &end, 10);
	if (end == p || *end != ':')
		return 0;
	p = end + 1;
	*ns = strtoull(p, &end, 10);
	if (end == p)
		return 0;
	*s = *end == ' ' ? end + 1 : end;
	return 1;
}
