/* SPDX-License-Identifier: MIT */
/*
 * A merged run as bytes, so that the ranks of `mpirun gputool report` can
 * send their part of a run to another rank (load.c). The tree travels as a
 * profile file (core/profile.h, with no values), followed by the
 * processes and the cells:
 *
 *   "GTRUN\0\0\1"  u64 length of the profile  profile bytes
 *   uv n_procs  uv n_merged  uv n_failed  uv n_threads  uv detail
 *   n_procs times: uv state, and for a process that was read: uv n_meta,
 *     n_meta times (str key, str value), uv n_threads, uv n_totals,
 *     n_totals times (uv metric, uv value)
 *   uv n_cells, then per cell: uv node, uv metric, pstat excl, pstat incl,
 *     uv thr.min, uv thr.max, uv thr.n, and with detail n_procs times uv
 *   pstat: uv sum, uv min, uv max, uv sumsq low, uv sumsq high, uv n,
 *     uv min_at, uv max_at
 *   str: uv 0 for none, else uv length + 1 and the bytes
 *
 * Both ends are the same gputool; the decoder still checks every index,
 * so that a damaged message ends in -EINVAL rather than a crash.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "core/bytes.h"

#define MAGIC "GTRUN\0\0\2"

static void w__str(struct gt_bytes *b, const char *s)
{
	if (!s) {
		gt_bytes__uv(b, 0);
		return;
	}
	gt_bytes__uv(b, (uint64_t)strlen(s) + 1);
	gt_bytes__put(b, s, strlen(s));
}

static void w__pstat(struct gt_bytes *b, const struct gt_pstat *s)
{
	gt_bytes__uv(b, s->sum);
	gt_bytes__uv(b, s->min);
	gt_bytes__uv(b, s->max);
	gt_bytes__uv(b, (uint64_t)s->sumsq);
	gt_bytes__uv(b, (uint64_t)(s->sumsq >> 64));
	gt_bytes__uv(b, s->n);
	gt_bytes__uv(b, s->min_at);
	gt_bytes__uv(b, s->max_at);
}

int gt_run__encode(const struct gt_run *r, char **out, size_t *out_len)
{
	struct gt_bytes b = { 0 };
	char *tree = NULL;
	size_t tree_len = 0;
	FILE *f;
	int err;

	f = open_memstream(&tree, &tree_len);
	if (!f)
		return -ENOMEM;
	err = gt_profile__write(&r->t, f);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		free(tree);
		return err;
	}
	gt_bytes__put(&b, MAGIC, 8);
	gt_bytes__fixed(&b, tree_len, 8);
	gt_bytes__put(&b, tree, tree_len);
	free(tree);
	gt_bytes__uv(&b, r->n_procs);
	gt_bytes__uv(&b, r->n_merged);
	gt_bytes__uv(&b, r->n_failed);
	gt_bytes__uv(&b, r->n_threads);
	gt_bytes__uv(&b, (uint64_t)r->detail);
	for (uint32_t i = 0; i < r->n_procs; i++) {
		const struct gt_proc *p = &r->procs[i];

		gt_bytes__uv(&b, p->state);
		if (p->state == GT_PROC_PENDING)
			continue;
		gt_bytes__uv(&b, p->n_meta);
		for (uint32_t k = 0; k < p->n_meta; k++) {
			w__str(&b, p->meta[k].key);
			w__str(&b, p->meta[k].value);
		}
		gt_bytes__uv(&b, p->n_threads);
		gt_bytes__uv(&b, p->n_totals);
		for (uint32_t k = 0; k < p->n_totals; k++) {
			gt_bytes__uv(&b, p->totals[k].metric);
			gt_bytes__uv(&b, p->totals[k].value);
		}
	}
	gt_bytes__uv(&b, r->n_cells);
	for (uint32_t node = 0; node < r->t.n_nodes; node++) {
		for (uint32_t c = r->head[node]; c != GT_NONE; c = r->cells[c].next) {
			const struct gt_cell *cell = &r->cells[c];

			gt_bytes__uv(&b, node);
			gt_bytes__uv(&b, cell->metric);
			w__pstat(&b, &cell->excl);
			w__pstat(&b, &cell->incl);
			gt_bytes__uv(&b, cell->thr.min);
			gt_bytes__uv(&b, cell->thr.max);
			gt_bytes__uv(&b, cell->thr.n);
			if (r->detail)
				for (uint32_t k = 0; k < r->n_procs; k++)
					gt_bytes__uv(&b, cell->per_proc ? cell->per_proc[k] : 0);
		}
	}
	if (b.oom) {
		free(b.d);
		return -ENOMEM;
	}
	*out = (char *)b.d;
	*out_len = b.len;
	return 0;
}

static uint32_t r__u32(struct gt_cursor *b, uint64_t below)
{
	uint64_t v = gt_cursor__uv(b);

	if (v >= below) {
		b->bad = 1;
		return 0;
	}
	return (uint32_t)v;
}

/* NULL for none; *bad on a malformed or unallocatable string. */
static char *r__str(struct gt_cursor *b)
{
	uint64_t n = gt_cursor__uv(b);
	char *s;

	if (!n || b->bad)
		return NULL;
	n--;
	if (n > b->end - b->pos || memchr(b->d + b->pos, 0, (size_t)n)) {
		b->bad = 1;
		return NULL;
	}
	s = malloc((size_t)n + 1);
	if (!s) {
		b->bad = 1;
		return NULL;
	}
	memcpy(s, b->d + b->pos, (size_t)n);
	s[n] = '\0';
	b->pos += (size_t)n;
	return s;
}

static void r__pstat(struct gt_cursor *b, struct gt_pstat *s, uint32_t n_procs)
{
	uint64_t lo, hi;

	s->sum = gt_cursor__uv(b);
	s->min = gt_cursor__uv(b);
	s->max = gt_cursor__uv(b);
	lo = gt_cursor__uv(b);
	hi = gt_cursor__uv(b);
	s->sumsq = (unsigned __int128)hi << 64 | lo;
	s->n = r__u32(b, (uint64_t)n_procs + 1);
	s->min_at = r__u32(b, n_procs ? n_procs : 1);
	s->max_at = r__u32(b, n_procs ? n_procs : 1);
}

int gt_run__decode(struct gt_run *r, const char *buf, size_t len)
{
	struct gt_cursor b = { .d = (const uint8_t *)buf, .end = len };
	uint64_t tree_len = 0, n_procs, n_cells;
	uint32_t n_meta;
	uint32_t *tail = NULL;
	char why[200];
	FILE *f;
	int err;

	memset(r, 0, sizeof(*r));
	if (len < 16 || memcmp(buf, MAGIC, 8))
		return -EINVAL;
	for (int i = 0; i < 8; i++)
		tree_len |= (uint64_t)(uint8_t)buf[8 + i] << (8 * i);
	if (tree_len > len - 16)
		return -EINVAL;
	b.pos = 16 + (size_t)tree_len;
	n_procs = gt_cursor__uv(&b);
	if (b.bad || n_procs > GT_NONE - 1 || gt_run__init(r, (uint32_t)n_procs))
		return b.bad || n_procs > GT_NONE - 1 ? -EINVAL : -ENOMEM;
	gt_profile__fini(&r->t);
	f = fmemopen((void *)(buf + 16), (size_t)tree_len, "rb");
	if (!f) {
		gt_run__fini(r);
		return -ENOMEM;
	}
	err = gt_profile__read(&r->t, f, why, sizeof(why));
	fclose(f);
	if (err || !r->t.n_nodes) {
		gt_run__fini(r);
		return err ? err : -EINVAL;
	}
	err = -EINVAL;
	r->n_merged = r__u32(&b, n_procs + 1);
	r->n_failed = r__u32(&b, n_procs + 1);
	r->n_threads = gt_cursor__uv(&b);
	r->detail = gt_cursor__uv(&b) != 0;
	if (r->detail != (n_procs <= GT_DETAIL_MAX))
		b.bad = 1;
	for (uint32_t i = 0; i < n_procs && !b.bad; i++) {
		struct gt_proc *p = &r->procs[i];

		p->state = (enum gt_proc_state)r__u32(&b, 3);
		if (p->state == GT_PROC_PENDING)
			continue;
		/* Each pair takes at least 2 bytes. */
		n_meta = r__u32(&b, (b.end - b.pos) / 2 + 1);
		if (b.bad)
			break;
		p->meta = calloc(n_meta ? n_meta : 1, sizeof(*p->meta));
		if (!p->meta) {
			err = -ENOMEM;
			goto out_fail;
		}
		for (uint32_t k = 0; k < n_meta && !b.bad; k++) {
			p->n_meta = k + 1;
			p->meta[k].key = r__str(&b);
			p->meta[k].value = r__str(&b);
			if (!b.bad && !p->meta[k].key)
				b.bad = 1;
		}
		if (b.bad)
			break;
		gt_proc__describe(p);
		p->n_threads = r__u32(&b, GT_NONE);
		p->n_totals = r__u32(&b, (uint64_t)r->t.n_metrics + 1);
		if (b.bad)
			break;
		p->totals = calloc(p->n_totals ? p->n_totals : 1, sizeof(*p->totals));
		if (!p->totals) {
			err = -ENOMEM;
			goto out_fail;
		}
		for (uint32_t k = 0; k < p->n_totals; k++) {
			p->totals[k].metric = r__u32(&b, r->t.n_metrics);
			p->totals[k].value = gt_cursor__uv(&b);
		}
	}
	n_cells = gt_cursor__uv(&b);
	/* Each cell takes at least 21 bytes. */
	if (b.bad || n_cells > (b.end - b.pos) / 21)
		goto out_fail;
	r->cells = calloc(n_cells ? (size_t)n_cells : 1, sizeof(*r->cells));
	free(r->head);
	free(r->hashes);
	r->head = malloc(r->t.n_nodes * sizeof(*r->head));
	/* Only absorbed, never looked up: no hashes needed, but the same size. */
	r->hashes = malloc(r->t.n_nodes * sizeof(*r->hashes));
	tail = malloc(r->t.n_nodes * sizeof(*tail));
	if (!r->cells || !r->head || !r->hashes || !tail) {
		err = -ENOMEM;
		goto out_fail;
	}
	r->cap_head = r->t.n_nodes;
	r->cap_cells = (uint32_t)(n_cells ? n_cells : 1);
	memset(r->head, 0xff, r->t.n_nodes * sizeof(*r->head));
	memset(r->hashes, 0, r->t.n_nodes * sizeof(*r->hashes));
	memset(tail, 0xff, r->t.n_nodes * sizeof(*tail));
	for (uint32_t c = 0; c < n_cells && !b.bad; c++) {
		struct gt_cell *cell = &r->cells[c];
		uint32_t node = r__u32(&b, r->t.n_nodes);

		cell->metric = r__u32(&b, r->t.n_metrics);
		cell->next = GT_NONE;
		r__pstat(&b, &cell->excl, (uint32_t)n_procs);
		r__pstat(&b, &cell->incl, (uint32_t)n_procs);
		cell->thr.min = gt_cursor__uv(&b);
		cell->thr.max = gt_cursor__uv(&b);
		cell->thr.n = gt_cursor__uv(&b);
		r->n_cells++;
		if (r->detail) {
			cell->per_proc = calloc(n_procs ? n_procs : 1, sizeof(uint64_t));
			if (!cell->per_proc) {
				err = -ENOMEM;
				goto out_fail;
			}
			for (uint32_t k = 0; k < n_procs; k++)
				cell->per_proc[k] = gt_cursor__uv(&b);
		}
		if (b.bad)
			break;
		if (tail[node] == GT_NONE)
			r->head[node] = c;
		else
			r->cells[tail[node]].next = c;
		tail[node] = c;
	}
	if (b.bad)
		goto out_fail;
	free(tail);
	return 0;
out_fail:
	free(tail);
	gt_run__fini(r);
	return err;
}
