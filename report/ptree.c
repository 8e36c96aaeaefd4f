/* SPDX-License-Identifier: MIT */
/* Reading one profile's tree for the GPU sections and the advice (ptree.h). */
#include "report/ptree.h"

#include <stdlib.h>
#include <string.h>

#include "core/metrics.h"
#include "core/modmap.h"
#include "core/text.h"
#include "report/paths.h"

static uint64_t *totals(const struct gt_profile *p, const char *name, int inclusive)
{
	uint64_t *v = calloc(p->n_nodes ? p->n_nodes : 1, sizeof(*v));
	uint32_t m = gt_profile__find_metric(p, name);

	if (v && m != GT_NONE &&
	    gt_profile__metric_totals(p, m, inclusive ? NULL : v, inclusive ? v : NULL)) {
		free(v);
		return NULL;
	}
	return v;
}

uint64_t *gt_ptree__excl(const struct gt_profile *p, const char *name)
{
	return totals(p, name, 0);
}

uint64_t *gt_ptree__incl(const struct gt_profile *p, const char *name)
{
	return totals(p, name, 1);
}

/* Printable: control characters from the file become '?'. */
void gt_ptree__put(char *out, size_t cap, size_t *len, const char *s)
{
	for (; *s && *len + 1 < cap; s++)
		out[(*len)++] = ((unsigned char)*s < 0x20 || *s == 0x7f) ? '?' : *s;
	out[*len] = 0;
}

void gt_ptree__label(const struct gt_profile *p, uint32_t i, char *out, size_t cap, size_t *len)
{
	struct gt_sb b = { 0 };

	gt_label(&b, p, i, GT_LABEL_SHORT_FILE);
	gt_ptree__put(out, cap, len, b.s ? b.s : "?");
	free(b.s);
}

const char *gt_ptree__host_device(const struct gt_profile *p, uint32_t i)
{
	const char *s = p->nodes[i].kind == GT_PNODE_NAME ? gt_profile__str(p, p->nodes[i].name) : NULL;
	const char *type = s && !strncmp(s, "device ", 7) ? strchr(s, '(') : NULL;

	if (!type || (!strstr(type, "generic") && !strstr(type, "x86_64")))
		return NULL;
	return type + 1;
}

int gt_ptree__on_host(const struct gt_profile *p, uint32_t i)
{
	/* Parents come before children (core/profile.c): the walk ends. */
	for (; i != GT_NONE && i < p->n_nodes; i = i ? p->nodes[i].parent : GT_NONE)
		if (gt_ptree__host_device(p, i))
			return 1;
	return 0;
}

int gt_ptree__device_time(const struct gt_profile *p)
{
	for (uint32_t m = 0; m < p->n_metrics; m++) {
		uint64_t *v;
		int found = 0;

		if (p->metrics[m].cls != GT_MC_DEVICE)
			continue;
		/* No memory: said to have some, so that nothing is hidden. */
		if (!(v = gt_ptree__excl(p, gt_profile__str(p, p->metrics[m].name))))
			return 1;
		for (uint32_t i = 0; i < p->n_nodes && !found; i++)
			found = v[i] && !gt_ptree__on_host(p, i);
		free(v);
		if (found)
			return 1;
	}
	return 0;
}

void gt_ptree__where(const struct gt_profile *p, uint32_t from, char *out, size_t cap)
{
	const struct gt_paths_opts o = { .width = GT_PTREE_WHERE_COLS, .leaf_first = 1,
					 .label_flags = GT_LABEL_ELIDE_ARGS };
	char *s = gt_paths__one(p, from, &o);
	size_t len = 0;

	out[0] = 0;
	gt_ptree__put(out, cap, &len, s ? s : "?");
	free(s);
}

int gt_ptree__is_kernel_ph(const struct gt_profile *p, uint32_t i)
{
	const char *ph;

	if (i == GT_NONE || p->nodes[i].kind != GT_PNODE_PLACEHOLDER)
		return 0;
	ph = gt_profile__str(p, p->nodes[i].name);
	return ph && !strcmp(ph, "<gpu kernel>");
}

uint32_t gt_ptree__kernel_of(const struct gt_profile *p, uint32_t i, char *path, size_t cap)
{
	size_t len = 0;

	path[0] = 0;
	for (uint32_t v = p->nodes[i].parent; v != GT_NONE; v = p->nodes[v].parent) {
		if (gt_ptree__is_kernel_ph(p, p->nodes[v].parent))
			return v;
		if (len)
			gt_ptree__put(path, cap, &len, " < ");
		gt_ptree__label(p, v, path, cap, &len);
	}
	return GT_NONE;
}

uint32_t *gt_ptree__kernels(const struct gt_profile *p)
{
	uint32_t *k = malloc((p->n_nodes ? p->n_nodes : 1) * sizeof(*k));

	if (!k)
		return NULL;
	for (uint32_t i = 0; i < p->n_nodes; i++) {
		k[i] = GT_NONE;
		for (uint32_t v = i; v != GT_NONE; v = p->nodes[v].parent)
			if (gt_ptree__is_kernel_ph(p, p->nodes[v].parent)) {
				k[i] = v;
				break;
			}
	}
	return k;
}

uint32_t gt_ptree__launch_site(const struct gt_profile *p, uint32_t k)
{
	uint32_t ph = p->nodes[k].parent;

	return ph == GT_NONE ? GT_NONE : p->nodes[ph].parent;
}

int gt_ptree__tool_time(const struct gt_profile *p, uint32_t i)
{
	int framed = 0;

	for (; i != GT_NONE && i < p->n_nodes; i = p->nodes[i].parent) {
		const struct gt_prof_node *n = &p->nodes[i];
		const char *s = gt_profile__str(p, n->name);

		if (n->kind == GT_PNODE_NAME && s && !strncmp(s, GT_PNODE_TOOL_PREFIX, strlen(GT_PNODE_TOOL_PREFIX)))
			return 1;
		if (framed || !gt_pnode__is_frame(n->kind))
			continue;
		/* The innermost frame. */
		framed = 1;
		s = n->module != GT_NONE && n->module < p->n_modules ? gt_profile__str(p, p->modules[n->module]) : NULL;
		if (s && gt_modmap__classify(s) == GT_MOD_TOOL)
			return 1;
	}
	return 0;
}
