/* SPDX-License-Identifier: MIT */
/*
 * Chrome trace-event JSON (the format Perfetto and chrome://tracing load)
 * from the traces of a run: one process per profile (named by rank and
 * pid), one track per CPU thread and per GPU stream or queue, a complete
 * event ("X") per traced event with its calling context, and a flow arrow
 * from each API call to the device work it started (same correlation id).
 *
 * Only real timestamps are written. A run without traces gets no Chrome
 * trace: a profile holds no time line, and inventing one (say, laying
 * contexts end to end) would show an order of events that never happened.
 * Clocks of different hosts are not comparable: times start at 0 at each
 * host's first event.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "core/trace-format.h"

#define PROFILE_SUFFIX ".gtprof"

/* The trace file of a profile: same stem, .gttrace. */
static char *trace_name(const char *profile)
{
	size_t n = strlen(profile), k = strlen(PROFILE_SUFFIX);
	char *s;

	if (n < k || strcmp(profile + n - k, PROFILE_SUFFIX))
		return NULL;
	s = malloc(n - k + strlen(GT_TRACE_SUFFIX) + 1);
	if (!s)
		return NULL;
	memcpy(s, profile, n - k);
	strcpy(s + n - k, GT_TRACE_SUFFIX);
	return s;
}

/* 0 read, 1 absent, -1 unreadable (said why). */
static int load_trace(const char *file, struct gt_trace *t)
{
	char why[200] = "";
	FILE *f = gt_open_regular(file);
	int err;

	if (!f) {
		if (errno == ENOENT)
			return 1;
		fprintf(stderr, "gputool: cannot open %s: %s\n", file, strerror(errno));
		return -1;
	}
	err = gt_trace__read(t, f, why, sizeof(why));
	fclose(f);
	if (err) {
		fprintf(stderr, "gputool: cannot read the trace %s: %s\n", file, err == -EINVAL ? why : strerror(-err));
		return -1;
	}
	return 0;
}

struct host_origin {
	const char *host;
	uint64_t origin;
};

struct chrome {
	FILE *f;
	const struct gt_run *r;
	struct host_origin *hosts;
	uint32_t n_hosts;
	uint64_t flow_id;
	int first;
};

static struct host_origin *origin_of(struct chrome *c, const char *host)
{
	for (uint32_t i = 0; i < c->n_hosts; i++)
		if ((!host && !c->hosts[i].host) || (host && c->hosts[i].host && !strcmp(host, c->hosts[i].host)))
			return &c->hosts[i];
	c->hosts[c->n_hosts] = (struct host_origin){ .host = host, .origin = UINT64_MAX };
	return &c->hosts[c->n_hosts++];
}

static void sep(struct chrome *c)
{
	fputs(c->first ? "\n" : ",\n", c->f);
	c->first = 0;
}

static void ts(FILE *f, uint64_t ns, uint64_t origin)
{
	uint64_t d = ns > origin ? ns - origin : 0;

	fprintf(f, "%" PRIu64 ".%03" PRIu64, d / 1000, d % 1000);
}

/* The calling context of profile node i, outermost first; cached. */
static const char *context(const struct gt_profile *p, char **cache, uint32_t i)
{
	struct gt_sb b = { 0 };
	uint32_t chain[256], n = 0;

	if (!p || i >= p->n_nodes)
		return NULL;
	if (cache[i])
		return cache[i];
	for (uint32_t v = i; v != 0 && n < 256; v = p->nodes[v].parent)
		chain[n++] = v;
	while (n--) {
		gt_label(&b, p, chain[n], GT_LABEL_SHORT_FILE);
		if (n)
			gt_sb__add(&b, " > ");
	}
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	cache[i] = b.s ? b.s : strdup("<program>");
	return cache[i];
}

/*
 * "kind @ label" into buf (len bytes). A label too long keeps its end,
 * the "(file:line)" that says where the slice was, and loses the middle
 * of its function's name (a C++ signature's arguments) instead:
 * "omp parallel @ CalcKinematicsForElems(Domain&, ...Real_t) (lulesh.cc:1290)".
 */
static void fit_label(char *buf, size_t len, const char *kind, const char *label)
{
	size_t n = strlen(label), head = strlen(kind) + 3, loc_len, keep;
	const char *loc = NULL;

	for (const char *q = strstr(label, " ("); q; q = strstr(q + 1, " ("))
		loc = q;
	if (head + n < len || !loc || label[n - 1] != ')' || !memchr(loc, ':', n - (size_t)(loc - label)) ||
	    memchr(loc + 1, ' ', n - (size_t)(loc + 1 - label))) {
		snprintf(buf, len, "%s @ %s", kind, label);
		return;
	}
	loc_len = n - (size_t)(loc - label);
	/* The function's start, "...", its end: 3 bytes of dots, a few of each. */
	if (head + loc_len + 3 + 16 >= len) {
		snprintf(buf, len, "%s @ %s", kind, label);
		return;
	}
	keep = len - 1 - head - loc_len - 3;
	{
		size_t fn = (size_t)(loc - label), front = keep / 2, back = keep - front;

		/* Never split a UTF-8 sequence: cut on a lead byte. */
		while (front && ((unsigned char)label[front] & 0xC0) == 0x80)
			front--;
		while (back && ((unsigned char)label[fn - back] & 0xC0) == 0x80)
			back--;
		snprintf(buf, len, "%s @ %.*s...%.*s%s", kind, (int)front, label, (int)back, label + fn - back, loc);
	}
}

/* A slice's name and where it was, "omp parallel @ compute (split.c:45)",
 * by the innermost frame of its context; the name alone without one.
 * Written into buf. */
static const char *slice_name(const struct gt_profile *p, uint32_t i, const char *kind, char *buf, size_t len)
{
	struct gt_sb b = { 0 };
	uint32_t site = p && i < p->n_nodes ? i : UINT32_MAX;

	while (site != UINT32_MAX && site != 0 && p->nodes[site].kind != GT_PNODE_FRAME &&
	       p->nodes[site].kind != GT_PNODE_INLINE)
		site = p->nodes[site].parent;
	if (site == UINT32_MAX || site == 0)
		return kind;
	gt_label(&b, p, site, GT_LABEL_SHORT_FILE);
	if (!b.s || b.oom)
		snprintf(buf, len, "%s @ ?", kind);
	else
		fit_label(buf, len, kind, b.s);
	free(b.s);
	return buf;
}

static int is_gpu_kind(uint32_t k)
{
	return k >= GT_EV_KERNEL && k <= GT_EV_SYNC;
}

struct corr {
	uint64_t corr;
	uint32_t event;
};

static int corr_cmp(const void *a, const void *b)
{
	const struct corr *x = a, *y = b;

	if (x->corr != y->corr)
		return x->corr < y->corr ? -1 : 1;
	return x->event < y->event ? -1 : x->event > y->event;
}

static int emit_process(struct chrome *c, uint32_t pidx, uint32_t proc, const struct gt_trace *t,
			const struct gt_profile *p, uint64_t origin)
{
	const struct gt_proc *pr = &c->r->procs[proc];
	FILE *f = c->f;
	char **cache = p ? calloc(p->n_nodes ? p->n_nodes : 1, sizeof(*cache)) : NULL;
	struct corr *launches = NULL;
	uint64_t n_launch = 0;

	if (p && !cache)
		return -ENOMEM;
	sep(c);
	fprintf(f, "{\"ph\":\"M\",\"pid\":%" PRIu32 ",\"name\":\"process_name\",\"args\":{\"name\":", pidx);
	{
		char name[96];

		if (pr->rank >= 0)
			snprintf(name, sizeof(name), "rank %" PRId64 " (pid %" PRIu64 ")", pr->rank, pr->pid);
		else
			snprintf(name, sizeof(name), "pid %" PRIu64, pr->pid);
		gt_json__str(f, name, 0);
	}
	fputs("}}", f);
	sep(c);
	fprintf(f, "{\"ph\":\"M\",\"pid\":%" PRIu32 ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%" PRIu32 "}}",
		pidx, pidx);
	for (uint32_t k = 0; k < t->n_tracks; k++) {
		const struct gt_trace_track *tr = &t->tracks[k];
		char name[128];

		if (tr->name != UINT32_MAX)
			snprintf(name, sizeof(name), "%s", t->strings[tr->name]);
		else if (tr->kind == GT_TRACK_GPU)
			snprintf(name, sizeof(name), "GPU %" PRIu64 " stream %" PRIu64, tr->a, tr->b);
		else
			snprintf(name, sizeof(name), "CPU thread %" PRIu64 " (tid %" PRIu64 ")", tr->a, tr->b);
		sep(c);
		fprintf(f, "{\"ph\":\"M\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"name\":\"thread_name\",\"args\":{\"name\":",
			pidx, tr->id);
		gt_json__str(f, name, 0);
		fputs("}}", f);
		sep(c);
		/* GPU tracks after the CPU threads. */
		fprintf(f, "{\"ph\":\"M\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
			   ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%" PRIu64 "}}",
			pidx, tr->id, (uint64_t)(tr->kind == GT_TRACK_GPU ? 1000000u : 0) + k);
	}
	for (uint64_t i = 0; i < t->n_events; i++) {
		const struct gt_trace_event *e = &t->events[i];
		const struct gt_trace_track *tr = &t->tracks[e->track];
		const char *ctx = e->node != UINT32_MAX ? context(p, cache, e->node) : NULL;
		const char *name = e->name != UINT32_MAX ? t->strings[e->name] : NULL;
		char slice[256];

		sep(c);
		fprintf(f, "{\"ph\":\"X\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"ts\":", pidx, tr->id);
		ts(f, e->start, origin);
		fprintf(f, ",\"dur\":%" PRIu64 ".%03" PRIu64 ",\"cat\":\"%s\",\"name\":", e->dur / 1000, e->dur % 1000,
			gt_trace__event_kind_name(e->kind));
		/* CPU slices (regions, tasks, API calls) say where they were. */
		if (tr->kind == GT_TRACK_CPU || !name)
			name = slice_name(p, e->node, name ? name : gt_trace__event_kind_name(e->kind), slice,
					  sizeof(slice));
		gt_json__str(f, name, 0);
		fputs(",\"args\":{", f);
		if (ctx) {
			fputs("\"context\":", f);
			gt_json__str(f, ctx, 0);
		}
		if (e->corr)
			fprintf(f, "%s\"correlation\":%" PRIu64, ctx ? "," : "", e->corr);
		fputs("}}", f);
		if (e->corr && tr->kind == GT_TRACK_CPU && !is_gpu_kind(e->kind))
			n_launch++;
	}
	/* Flows: from the CPU event of a correlation id to each device event. */
	launches = malloc((n_launch ? n_launch : 1) * sizeof(*launches));
	if (!launches)
		goto out_nomem;
	n_launch = 0;
	for (uint64_t i = 0; i < t->n_events; i++) {
		const struct gt_trace_event *e = &t->events[i];

		if (e->corr && t->tracks[e->track].kind == GT_TRACK_CPU && !is_gpu_kind(e->kind))
			launches[n_launch++] = (struct corr){ e->corr, (uint32_t)i };
	}
	qsort(launches, n_launch, sizeof(*launches), corr_cmp);
	for (uint64_t i = 0; i < t->n_events; i++) {
		const struct gt_trace_event *e = &t->events[i], *l;
		struct corr key = { e->corr, 0 }, *hit;
		uint64_t lo = 0, hi = n_launch;

		if (!e->corr || t->tracks[e->track].kind != GT_TRACK_GPU)
			continue;
		while (lo < hi) { /* the first launch with this id */
			uint64_t mid = lo + (hi - lo) / 2;

			if (corr_cmp(&launches[mid], &key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		hit = lo < n_launch && launches[lo].corr == e->corr ? &launches[lo] : NULL;
		if (!hit)
			continue;
		l = &t->events[hit->event];
		c->flow_id++;
		sep(c);
		fprintf(f, "{\"ph\":\"s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"ts\":", pidx, t->tracks[l->track].id);
		ts(f, l->start, origin);
		fprintf(f, ",\"id\":%" PRIu64 ",\"cat\":\"launch\",\"name\":\"launch\"}", c->flow_id);
		sep(c);
		fprintf(f, "{\"ph\":\"f\",\"bp\":\"e\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"ts\":", pidx,
			t->tracks[e->track].id);
		ts(f, e->start, origin);
		fprintf(f, ",\"id\":%" PRIu64 ",\"cat\":\"launch\",\"name\":\"launch\"}", c->flow_id);
	}
	free(launches);
	for (uint32_t i = 0; cache && i < p->n_nodes; i++)
		free(cache[i]);
	free(cache);
	return 0;
out_nomem:
	for (uint32_t i = 0; cache && i < p->n_nodes; i++)
		free(cache[i]);
	free(cache);
	return -ENOMEM;
}

/* The profile of a process, for context names; NULL if it cannot be read. */
static struct gt_profile *load_profile(const char *file)
{
	struct gt_profile *p = malloc(sizeof(*p));
	FILE *f = gt_open_regular(file);

	if (!p || !f || gt_profile__read(p, f, NULL, 0)) {
		if (f)
			fclose(f);
		free(p);
		return NULL;
	}
	fclose(f);
	return p;
}

int gt_chrome__write(FILE *f, const char *path, const struct gt_run *r)
{
	struct chrome c = { .f = f, .r = r, .first = 1 };
	uint32_t *order = NULL, n = 0, found = 0;
	int status = 0;

	c.hosts = calloc(r->n_procs ? r->n_procs : 1, sizeof(*c.hosts));
	order = malloc((r->n_procs ? r->n_procs : 1) * sizeof(*order));
	if (!c.hosts || !order) {
		fprintf(stderr, "gputool: out of memory\n");
		status = 1;
		goto out_free;
	}
	/* First pass: which traces exist, and where each host's time starts. */
	for (uint32_t i = 0; i < r->n_procs; i++) {
		struct gt_trace t;
		char *name;
		int got;

		if (r->procs[i].state != GT_PROC_MERGED || !(name = trace_name(r->procs[i].file)))
			continue;
		got = load_trace(name, &t);
		free(name);
		if (got < 0)
			status = 1;
		if (got)
			continue;
		found++;
		order[n++] = i;
		for (uint64_t k = 0; k < t.n_events; k++) {
			struct host_origin *h = origin_of(&c, r->procs[i].host);

			if (t.events[k].start < h->origin)
				h->origin = t.events[k].start;
		}
		gt_trace__fini(&t);
	}
	if (!found) {
		fprintf(stderr,
			"gputool: no trace recorded in %s: a Chrome trace needs the *%s files that `gputool run --trace` "
			"asks the library for; without them there are no timestamps to show (--format html or folded "
			"give a flame graph of the profile)\n",
			path, GT_TRACE_SUFFIX);
		status = 1;
		goto out_free;
	}
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"gputool\",\"source\":", f);
	gt_json__str(f, path, 0);
	fputs("},\"traceEvents\":[", f);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = order[k];
		char *name = trace_name(r->procs[i].file);
		struct gt_profile *p = load_profile(r->procs[i].file);
		struct gt_trace t;
		int err = name ? load_trace(name, &t) : -1;

		if (!err) {
			if (t.truncated)
				fprintf(stderr, "gputool: %s: %s; the events before it are shown\n", name, t.why);
			if (emit_process(&c, k, i, &t, p, origin_of(&c, r->procs[i].host)->origin)) {
				fprintf(stderr, "gputool: out of memory\n");
				status = 1;
			}
			gt_trace__fini(&t);
		} else {
			status = 1;
		}
		if (p) {
			gt_profile__fini(p);
			free(p);
		}
		free(name);
	}
	fputs("\n]}\n", f);
	if (ferror(f) || fflush(f))
		status = 1;
out_free:
	free(c.hosts);
	free(order);
	return status;
}
