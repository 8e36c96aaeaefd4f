/* SPDX-License-Identifier: MIT */
/*
 * The JSON form of a merged run (docs/REPORT.md, docs/report.schema.json).
 * One object; one node per line. Integers are exact unsigned 64-bit
 * values; ratios and means are decimal numbers.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/next.h"
#include "report/paths.h"
#include "report/ptree.h"
#include "report/report.h"
#include "report/sections.h"
#include "core/metrics.h"

#define HTML_MIN_SHARE 1e-4 /* the page leaves out contexts under this share of every metric */

struct js {
	FILE *f;
	const struct gt_analysis *a;
	int html;
	uint32_t *pos;   /* run process index -> position in "processes" */
	struct gt_used u; /* metrics with a nonzero total */
	unsigned char *ref; /* html: nodes a list refers to, and their ancestors, kept whatever their share */
};

/* Node i (and so its ancestors) stays in the page, which draws the lists'
 * contexts from the nodes. */
static void mark(const struct js *j, uint32_t i)
{
	for (; j->ref && i < j->a->t->n_nodes && !j->ref[i]; i = j->a->t->nodes[i].parent)
		j->ref[i] = 1;
}

static void mark_list(const struct js *j, const uint32_t *ids, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		mark(j, ids[k]);
}

/* key (JSON punctuation and name), then v in decimal: the hot path of
 * this writer, without printf's format parsing. */
static void u64(FILE *f, const char *key, uint64_t v)
{
	char buf[24], *p = buf + sizeof(buf);

	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10));
	fputs(key, f);
	fwrite(p, 1, (size_t)(buf + sizeof(buf) - p), f);
}

static void num(FILE *f, double v)
{
	if (!isfinite(v))
		v = 0;
	if (v == floor(v) && fabs(v) < 1e15) {
		if (v >= 0)
			u64(f, "", (uint64_t)v);
		else
			fprintf(f, "%.0f", v);
	} else {
		fprintf(f, "%.9g", v);
	}
}

static void str(const struct js *j, const char *s)
{
	gt_json__str(j->f, s, j->html);
}

static const char *mname(const struct gt_profile *t, uint32_t m)
{
	const char *s = gt_profile__str(t, t->metrics[m].name);

	return s ? s : "?";
}

static void pstat(const struct js *j, const struct gt_pstat *s)
{
	uint32_t n = j->a->run->n_merged;

	u64(j->f, "{\"sum\":", s->sum);
	u64(j->f, ",\"min\":", gt_pstat__min(s, n));
	fputs(",\"mean\":", j->f);
	num(j->f, gt_pstat__mean(s, n));
	u64(j->f, ",\"max\":", s->max);
	fputs(",\"stddev\":", j->f);
	num(j->f, gt_pstat__stddev(s, n));
	fputs(",\"imbalance\":", j->f);
	num(j->f, gt_pstat__imbalance(s, n));
	u64(j->f, ",\"processes\":", s->n);
	if (s->n < n)
		fputs(",\"min_process\":null", j->f);
	else
		u64(j->f, ",\"min_process\":", j->pos[s->min_at]);
	if (s->n)
		u64(j->f, ",\"max_process\":", j->pos[s->max_at]);
	else
		fputs(",\"max_process\":null", j->f);
	fputc('}', j->f);
}

/* excl and threads only when the context measured something itself. */
static void cell(const struct js *j, const struct gt_cell *c)
{
	double mean = gt_tstat__mean(&c->thr, c->excl.sum);

	fputs("{\"incl\":", j->f);
	pstat(j, &c->incl);
	if (c->excl.n) {
		fputs(",\"excl\":", j->f);
		pstat(j, &c->excl);
	}
	if (c->thr.n) {
		u64(j->f, ",\"threads\":{\"threads\":", c->thr.n);
		u64(j->f, ",\"min\":", c->thr.min);
		fputs(",\"mean\":", j->f);
		num(j->f, mean);
		u64(j->f, ",\"max\":", c->thr.max);
		fputs(",\"imbalance\":", j->f);
		num(j->f, mean > 0 ? (double)c->thr.max / mean : 0.0);
		fputc('}', j->f);
	}
	if (c->per_proc) {
		fputs(",\"per_process\":[", j->f);
		for (uint32_t k = 0; k < j->a->n_proc_order; k++)
			u64(j->f, k ? "," : "", c->per_proc[j->a->proc_order[k]]);
		fputc(']', j->f);
	}
	fputc('}', j->f);
}

static int keep(const struct js *j, uint32_t i)
{
	if (!j->html || i == 0 || (j->ref && j->ref[i]))
		return 1;
	for (uint32_t k = 0; k < j->u.n; k++) {
		const struct gt_cell *c = gt_run__cell(j->a->run, i, j->u.metric[k]);

		if (c && (double)c->incl.sum >= HTML_MIN_SHARE * (double)j->u.total[k])
			return 1;
	}
	return 0;
}

static void node(const struct js *j, uint32_t i)
{
	const struct gt_analysis *a = j->a;
	const struct gt_prof_node *n = &a->t->nodes[i];
	static const char *const kinds[] = { "root", "frame", "placeholder", "name", "inline", "tail" };
	struct gt_sb lab = { 0 };
	int first = 1;

	u64(j->f, "{\"id\":", i);
	fputs(",\"parent\":", j->f);
	if (i)
		u64(j->f, "", n->parent);
	else
		fputs("null", j->f);
	fprintf(j->f, ",\"kind\":\"%s\",\"name\":",
		n->kind < sizeof(kinds) / sizeof(*kinds) ? kinds[n->kind] : "other");
	str(j, gt_profile__str(a->t, n->name));
	if (gt_profile__linkage(a->t, n->name) != GT_NONE) {
		fputs(",\"linkage_name\":", j->f);
		str(j, gt_profile__str(a->t, gt_profile__linkage(a->t, n->name)));
	}
	fputs(",\"file\":", j->f);
	str(j, gt_profile__str(a->t, n->file));
	u64(j->f, ",\"line\":", n->line);
	fputs(",\"module\":", j->f);
	if (n->module == GT_NONE)
		fputs("null", j->f);
	else
		u64(j->f, "", n->module);
	u64(j->f, ",\"offset\":", n->offset);
	fputs(",\"label\":", j->f);
	gt_label(&lab, a->t, i, GT_LABEL_SHORT_FILE);
	str(j, lab.oom ? "?" : lab.s ? lab.s : "");
	free(lab.s);
	fputs(",\"metrics\":{", j->f);
	for (uint32_t c = a->run->head[i]; c != GT_NONE; c = a->run->cells[c].next) {
		const struct gt_cell *cl = &a->run->cells[c];

		if (!first)
			fputc(',', j->f);
		first = 0;
		str(j, mname(a->t, cl->metric));
		fputc(':', j->f);
		cell(j, cl);
	}
	fputs("},\"importance\":{\"I_C\":", j->f);
	num(j->f, gt_analysis__I_C(a, i));
	fputs(",\"I_G\":", j->f);
	num(j->f, gt_analysis__I_G(a, i));
	fputs(",\"I_G_j\":{", j->f);
	first = 1;
	for (uint32_t g = 0; g < a->n_gpu; g++) {
		if (!a->Gj[g][i] || !a->G_P)
			continue;
		fputs(first ? "" : ",", j->f);
		first = 0;
		str(j, mname(a->t, a->gpu_metric[g]));
		fputc(':', j->f);
		num(j->f, (double)a->Gj[g][i] / (double)a->G_P);
	}
	fputs("}}}", j->f);
}

static void id_list(FILE *f, const uint32_t *ids, uint32_t n)
{
	fputc('[', f);
	for (uint32_t k = 0; k < n; k++)
		fprintf(f, "%s%" PRIu32, k ? "," : "", ids[k]);
	fputc(']', f);
}

static void process(const struct js *j, uint32_t i)
{
	const struct gt_proc *p = &j->a->run->procs[i];

	fprintf(j->f, "{\"index\":%" PRIu32 ",\"file\":", j->pos[i]);
	str(j, p->file);
	fputs(",\"rank\":", j->f);
	if (p->rank >= 0)
		fprintf(j->f, "%" PRId64, p->rank);
	else
		fputs("null", j->f);
	fprintf(j->f, ",\"pid\":%" PRIu64 ",\"host\":", p->pid);
	str(j, p->host);
	fputs(",\"exe\":", j->f);
	str(j, p->exe);
	fputs(",\"cmdline\":", j->f);
	str(j, p->cmdline);
	fprintf(j->f, ",\"threads\":%" PRIu32 ",\"wall_ns\":%" PRIu64 ",\"start_ns\":%" PRIu64 ",\"totals\":{",
		p->n_threads, p->wall_ns, p->start_ns);
	for (uint32_t k = 0; k < p->n_totals; k++) {
		fputs(k ? "," : "", j->f);
		str(j, mname(j->a->t, p->totals[k].metric));
		fprintf(j->f, ":%" PRIu64, p->totals[k].value);
	}
	fputs("},\"meta\":{", j->f);
	for (uint32_t k = 0; k < p->n_meta; k++) {
		fputs(k ? "," : "", j->f);
		str(j, p->meta[k].key);
		fputc(':', j->f);
		str(j, p->meta[k].value);
	}
	fputs("}}", j->f);
}

static const char *const bound_names[] = {
	[GT_BOUND_NOTHING] = "nothing", [GT_BOUND_CPU_ONLY] = "cpu-only",
	[GT_BOUND_CPU] = "cpu",         [GT_BOUND_GPU] = "gpu",
};

static void importance(const struct js *j)
{
	const struct gt_analysis *a = j->a;
	FILE *f = j->f;

	fputs("\"importance\":{\"cpu_metric\":", f);
	str(j, a->cpu_metric == GT_NONE ? NULL : mname(a->t, a->cpu_metric));
	fputs(",\"gpu_metrics\":[", f);
	for (uint32_t g = 0; g < a->n_gpu; g++) {
		fputs(g ? "," : "", f);
		str(j, mname(a->t, a->gpu_metric[g]));
	}
	fprintf(f, "],\"C_P\":%" PRIu64 ",\"G_P\":%" PRIu64 ",\"I_C_P\":", a->C_P, a->G_P);
	num(f, a->I_C_P);
	fputs(",\"I_G_P_j\":{", f);
	for (uint32_t g = 0, first = 1; g < a->n_gpu; g++) {
		if (!a->Gj[g][0])
			continue;
		fputs(first ? "" : ",", f);
		first = 0;
		str(j, mname(a->t, a->gpu_metric[g]));
		fputc(':', f);
		num(f, (double)a->Gj[g][0] / (double)a->G_P);
	}
	fprintf(f, "},\"bound\":\"%s\",\"cpu_hot_path\":", bound_names[a->bound]);
	id_list(f, a->cpu_hot, a->n_cpu_hot);
	fputs(",\"gpu_hot_path\":", f);
	id_list(f, a->gpu_hot, a->n_gpu_hot);
	fputs(",\"gpu_sites\":[", f);
	for (uint32_t k = 0; k < a->n_sites; k++) {
		fprintf(f, "%s{\"node\":%" PRIu32 ",\"metric\":", k ? "," : "", a->sites[k].node);
		str(j, mname(a->t, a->gpu_metric[a->sites[k].j]));
		fprintf(f, ",\"value\":%" PRIu64 ",\"I_G_ij\":", a->sites[k].value);
		num(f, a->G_P ? (double)a->sites[k].value / (double)a->G_P : 0.0);
		fputc('}', f);
	}
	fputs("]}", f);
}

/*
 * "advice": what to do next (report/next.h), ranked; each piece with its
 * contexts as text too, since a compact page may leave their nodes out.
 */
static int advice(const struct js *j)
{
	struct gt_flat_profile fp;
	struct gt_next_list l;
	char buf[GT_PTREE_WHERE_COLS + 512], **ctx = NULL;
	FILE *f = j->f;
	int err;

	/* The run's tree holds its metrics: no flat copy when nothing applies. */
	if (!gt_next__applies(j->a->t)) {
		fputs(",\n\"advice\":[],\n\"advice_none\":", f);
		str(j, gt_next__none_why(j->a->t));
		return 0;
	}
	err = gt_flat_profile__init(&fp, j->a);
	if (err)
		return err;
	err = gt_next__build(&fp.p, &fp.run, &l);
	if (err)
		goto out;
	/* The contexts the text report shows at its default width. */
	ctx = calloc(2 * (size_t)l.n + 1, sizeof(*ctx));
	err = ctx ? gt_next__wheres(&fp.p, &l, l.n, GT_PATHS_WIDTH, fp.run.signatures, ctx) : -ENOMEM;
	if (err) {
		gt_next__fini(&l);
		goto out;
	}
	fputs(",\n\"advice\":[", f);
	for (uint32_t k = 0; k < l.n; k++) {
		const struct gt_next *n = &l.v[k];
		int kernel = gt_next__of_kernel(n->kind);
		size_t len = 0;

		mark(j, n->node);
		if (n->line != GT_NONE)
			mark(j, n->line);
		u64(f, k ? ",\n  {\"rank\":" : "\n  {\"rank\":", k + 1);
		fputs(",\"kind\":", f);
		str(j, gt_next__id(n->kind));
		fputs(",\"title\":", f);
		str(j, gt_next__title(n->kind));
		u64(f, ",\"node\":", n->node);
		buf[0] = 0;
		gt_ptree__label(&fp.p, n->node, buf, sizeof(buf), &len);
		fputs(",\"name\":", f);
		str(j, buf);
		fputs(kernel ? ",\"launched_at\":" : ",\"at\":", f);
		str(j, ctx[2 * k]);
		if (n->line != GT_NONE) {
			u64(f, ",\"line_node\":", n->line);
			len = 0;
			buf[0] = 0;
			if (kernel)
				gt_ptree__label(&fp.p, n->line, buf, sizeof(buf), &len);
			fputs(kernel ? ",\"line\":" : ",\"cpu_work_at\":", f);
			str(j, kernel ? buf : ctx[2 * k + 1]);
		}
		if (n->kernel_samples) {
			u64(f, ",\"samples\":", n->samples);
			u64(f, ",\"kernel_samples\":", n->kernel_samples);
		}
		u64(f, ",\"time_ns\":", n->time_ns);
		fputs(",\"speedup\":", f);
		num(f, n->speedup);
		u64(f, ",\"saved_ns\":", n->saved_ns);
		fputs(",\"program_speedup\":", f);
		num(f, n->program);
		fprintf(f, ",\"upper_bound\":%s,\"why\":", n->upper_bound ? "true" : "false");
		str(j, n->why);
		fputs(",\"try\":", f);
		str(j, n->todo);
		fputc('}', f);
	}
	fputc(']', f);
	if (!l.n) {
		fputs(",\n\"advice_none\":", f);
		str(j, gt_next__none_why(&fp.p));
	}
	gt_paths__free(ctx, 2 * l.n);
	gt_next__fini(&l);
out:
	free(ctx); /* its strings, when built, were freed above */
	gt_flat_profile__fini(&fp);
	return err;
}

/*
 * "regions" and "waits": the text report's OpenMP regions and waits
 * (report/sections.h), the first `top` rows of each, with node ids and
 * each context as text too.
 */
static int sections(const struct js *j, unsigned top)
{
	struct gt_flat_profile fp;
	struct gt_section_rows s;
	FILE *f = j->f;
	int err = gt_flat_profile__init(&fp, j->a);

	if (err)
		return err;
	err = gt_report__section_rows(&fp.p, top, &fp.run, &s);
	if (err)
		goto out;
	u64(f, ",\n\"regions\":{\"of\":", s.all_regions);
	u64(f, ",\"wall_ns\":", fp.run.wall_ns);
	fputs(",\"rows\":[", f);
	for (uint32_t k = 0; k < s.n_region; k++) {
		const struct gt_region_row *r = &s.region[k];

		mark(j, r->node);
		mark_list(j, r->body, r->n_body);
		u64(f, k ? ",\n  {\"node\":" : "\n  {\"node\":", r->node);
		fputs(",\"kernel\":", f);
		if (r->kernel == GT_NONE)
			fputs("null", f);
		else
			u64(f, "", r->kernel);
		fputs(",\"kernel_name\":", f);
		str(j, r->kernel_name);
		u64(f, ",\"instances\":", r->instances);
		u64(f, ",\"time_ns\":", r->time_ns);
		u64(f, ",\"thread_instances\":", r->thread_instances);
		u64(f, ",\"work_ns\":", r->work_ns);
		u64(f, ",\"wait_ns\":", r->wait_ns);
		u64(f, ",\"time_samples\":", r->time_samples);
		u64(f, ",\"cpu_ns\":", r->cpu_ns);
		fputs(",\"bodies\":", f);
		id_list(f, r->body, r->n_body);
		fputs(",\"where\":", f);
		str(j, r->where);
		fputc('}', f);
	}
	u64(f, "]},\n\"waits\":{\"of\":", s.all_waits);
	u64(f, ",\"total_ns\":", s.wait_total_ns);
	fputs(",\"rows\":[", f);
	for (uint32_t k = 0; k < s.n_wait; k++) {
		const struct gt_wait_row *w = &s.wait[k];

		mark(j, w->node);
		u64(f, k ? ",\n  {\"node\":" : "\n  {\"node\":", w->node);
		u64(f, ",\"wait_ns\":", w->wait_ns);
		u64(f, ",\"count\":", w->count);
		u64(f, ",\"time_samples\":", w->time_samples);
		u64(f, ",\"threads\":", w->threads);
		fputs(",\"where\":", f);
		str(j, w->where);
		fputc('}', f);
	}
	fputs("]}", f);
	gt_section_rows__fini(&s);
out:
	gt_flat_profile__fini(&fp);
	return err;
}

int gt_json__write(FILE *f, const struct gt_analysis *a, const struct gt_out_opts *o, int html)
{
	const struct gt_run *r = a->run;
	const struct gt_profile *t = a->t;
	struct js j = { .f = f, .a = a, .html = html };
	int err = -ENOMEM, first;

	j.pos = calloc(r->n_procs ? r->n_procs : 1, sizeof(*j.pos));
	if (!j.pos || gt_used__init(&j.u, r, 0))
		goto out_free;
	if (html && !(j.ref = calloc(t->n_nodes ? t->n_nodes : 1, 1)))
		goto out_free;
	for (uint32_t k = 0; k < a->n_proc_order; k++)
		j.pos[a->proc_order[k]] = k;

	fprintf(f, "{\"format\":\"gputool-report\",\"version\":1,\"source\":");
	str(&j, o->path);
	fputs(",\"metric\":", f);
	str(&j, a->metric_name);
	fprintf(f, ",\n\"run\":{\"processes\":%" PRIu32 ",\"failed\":%" PRIu32 ",\"threads\":%" PRIu64
		   ",\"per_process_values\":%s},\n\"metrics\":[",
		r->n_merged, r->n_failed, r->n_threads, r->detail ? "true" : "false");
	for (uint32_t k = 0; k < j.u.n; k++) {
		const struct gt_prof_metric *m = &t->metrics[j.u.metric[k]];

		fputs(k ? ",\n  {\"name\":" : "\n  {\"name\":", f);
		str(&j, gt_profile__str(t, m->name));
		fputs(",\"unit\":", f);
		str(&j, gt_profile__str(t, m->unit));
		fputs(",\"description\":", f);
		str(&j, gt_profile__str(t, m->desc));
		fprintf(f, ",\"class\":\"%s\",\"total\":%" PRIu64 "}",
			gt_metric_class_names[m->cls < GT_MC__COUNT ? m->cls : 0], j.u.total[k]);
	}
	fputs("],\n\"processes\":[", f);
	for (uint32_t k = 0; k < a->n_proc_order; k++) {
		fputs(k ? ",\n  " : "\n  ", f);
		process(&j, a->proc_order[k]);
	}
	fputs("],\n", f);
	importance(&j);
	if ((err = advice(&j)))
		goto out_free;
	err = -ENOMEM;
	fputs(",\n\"imbalance\":{\"processes\":", f);
	id_list(f, a->imb, a->n_imb);
	fputs(",\"threads\":", f);
	id_list(f, a->timb, a->n_timb);
	fputc('}', f);
	mark_list(&j, a->imb, a->n_imb);
	mark_list(&j, a->timb, a->n_timb);
	mark_list(&j, a->cpu_hot, a->n_cpu_hot);
	mark_list(&j, a->gpu_hot, a->n_gpu_hot);
	for (uint32_t k = 0; k < a->n_sites; k++)
		mark(&j, a->sites[k].node);
	if ((err = sections(&j, o->top)))
		goto out_free;
	err = -ENOMEM;
	fputs(",\n\"modules\":[", f);
	for (uint32_t m = 0; m < t->n_modules; m++) {
		fputs(m ? ",\n  " : "\n  ", f);
		str(&j, gt_profile__str(t, t->modules[m]));
	}
	fputs("],\n\"nodes\":[", f);
	first = 1;
	for (uint32_t i = 0; i < t->n_nodes; i++) {
		if (!keep(&j, i))
			continue;
		fputs(first ? "\n  " : ",\n  ", f);
		first = 0;
		node(&j, i);
	}
	fputs("]}\n", f);
	err = ferror(f) || fflush(f) ? -EIO : 0;
out_free:
	free(j.pos);
	free(j.ref);
	gt_used__fini(&j.u);
	return err;
}
