/* SPDX-License-Identifier: MIT */
/* Calling contexts as text that tells rows apart (report/paths.h). */
#include "report/paths.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/text.h"

#define ROUNDS 16     /* of widening rows that read alike; each keeps at least one more element */
#define MIN_LABEL 16  /* a label is not cut below this many columns while others can give */

/* What an element of a context is, in the order elements give way
 * (lowest first). */
enum kind {
	K_LIBRARY, /* a shared library's frame, or a frame in a header */
	K_NOLINE,  /* the program's frame without a file (built without -g) */
	K_USER,    /* the program's frame in a source file */
	K_MARK,    /* a placeholder or a name */
};

struct row {
	uint32_t node, n; /* n elements, outermost first */
	char **lab;
	size_t *w;            /* columns of each label */
	unsigned char *kind;  /* enum kind */
	unsigned char *must;  /* kept however long the row gets */
	uint32_t *order;      /* the other elements, in the order they are added while they fit */
	char *text;
};

static int is_header(const char *file)
{
	const char *b = gt_base_name(file), *dot = strrchr(b, '.');
	static const char *const ext[] = { "h", "hh", "hpp", "hxx", "h++", "inl", "tcc", "ipp", "cuh" };

	if (!strncmp(file, "/usr/", 5) || !dot) /* system headers; <vector> has no extension */
		return 1;
	for (size_t k = 0; k < sizeof(ext) / sizeof(ext[0]); k++)
		if (!strcmp(dot + 1, ext[k]))
			return 1;
	return 0;
}

static enum kind kind_of(const struct gt_profile *p, uint32_t i)
{
	const struct gt_prof_node *n = &p->nodes[i];
	const char *file = gt_profile__str(p, n->file);
	const char *mod = n->module == GT_NONE || n->module >= p->n_modules ? NULL
										 : gt_profile__str(p, p->modules[n->module]);

	if (!gt_pnode__is_frame(n->kind))
		return K_MARK;
	if ((mod && gt_text__is_library(mod)) || (file && is_header(file)))
		return K_LIBRARY;
	return file ? K_USER : K_NOLINE;
}

static void row__fini(struct row *r)
{
	for (uint32_t k = 0; r->lab && k < r->n; k++)
		free(r->lab[k]);
	free(r->lab);
	free(r->w);
	free(r->kind);
	free(r->must);
	free(r->order);
	free(r->text);
}

static int row__init(struct row *r, const struct gt_profile *p, uint32_t node, int flags)
{
	uint32_t n = 0, k, inner = GT_NONE, o = 0;

	memset(r, 0, sizeof(*r));
	r->node = node;
	for (uint32_t v = node; v != GT_NONE && v != 0; v = p->nodes[v].parent)
		n++;
	r->n = n;
	if (!n)
		return 0;
	r->lab = calloc(n, sizeof(*r->lab));
	r->w = calloc(n, sizeof(*r->w));
	r->kind = calloc(n, 1);
	r->must = calloc(n, 1);
	r->order = calloc(n, sizeof(*r->order));
	if (!r->lab || !r->w || !r->kind || !r->must || !r->order)
		return -ENOMEM;
	k = n;
	for (uint32_t v = node; k > 0; v = p->nodes[v].parent) {
		struct gt_sb b = { 0 };
		const struct gt_prof_node *pn = &p->nodes[v];

		k--;
		gt_label(&b, p, v, flags | GT_LABEL_SHORT_FILE);
		if (b.oom || !b.s) {
			free(b.s);
			return -ENOMEM;
		}
		r->lab[k] = b.s;
		r->w[k] = gt_cols(b.s);
		r->kind[k] = (unsigned char)kind_of(p, v);
		/* A kernel's name, and the placeholder it is under; a region
		 * the program named (an MPI call, an NVTX range), and the frame
		 * that opened it: the program's call into the library, even in
		 * a header of the program's own (miniFE's dot() calling
		 * MPI_Allreduce). */
		if (pn->kind == GT_PNODE_NAME && pn->parent != GT_NONE &&
		    (p->nodes[pn->parent].kind == GT_PNODE_PLACEHOLDER ||
		     gt_pnode__is_frame(p->nodes[pn->parent].kind))) {
			r->must[k] = 1;
			if (k)
				r->must[k - 1] = 1;
		}
	}
	if (r->kind[n - 1] == K_MARK)
		r->must[n - 1] = 1;
	for (enum kind want = K_USER;; want = K_NOLINE) {
		for (k = n; k-- > 0 && inner == GT_NONE;)
			if (r->kind[k] == want)
				inner = k;
		if (inner != GT_NONE || want == K_NOLINE)
			break;
	}
	if (inner == GT_NONE)
		for (k = n; k-- > 0 && inner == GT_NONE;)
			if (r->kind[k] != K_MARK)
				inner = k;
	r->must[inner == GT_NONE ? n - 1 : inner] = 1;
	/* What is added while it fits: marks and the user's frames from the
	 * inside out, the outermost, frames without lines, then libraries and
	 * headers from the outside in (the call into a library before its
	 * internals). */
	for (k = n; k-- > 0;)
		if (r->kind[k] == K_MARK)
			r->order[o++] = k;
	for (k = n; k-- > 0;)
		if (r->kind[k] == K_USER)
			r->order[o++] = k;
	if (r->kind[0] != K_MARK && r->kind[0] != K_USER)
		r->order[o++] = 0;
	for (k = n; k-- > 1;)
		if (r->kind[k] == K_NOLINE)
			r->order[o++] = k;
	for (k = 1; k < n; k++)
		if (r->kind[k] == K_LIBRARY)
			r->order[o++] = k;
	return 0;
}

/* Columns of the row with the elements in keep, each run of the others one "…". */
static size_t width_of(const struct row *r, const unsigned char *keep, const size_t *w)
{
	size_t total = 0, parts = 0;

	for (uint32_t k = 0; k < r->n; k++) {
		if (keep[k])
			total += w[k];
		else if (!k || keep[k - 1])
			total += 1; /* "…" */
		else
			continue;
		parts++;
	}
	return total + (parts ? 3 * (parts - 1) : 0);
}

/* lab fitted to width columns: a frame's " (file:line)" stays whole while
 * its name gives way. */
static char *fit_label(const char *lab, size_t width)
{
	struct gt_sb b = { 0 };
	size_t len = strlen(lab);
	const char *tail = len && lab[len - 1] == ')' ? strstr(lab, " (") : NULL;

	/* The last " (" that opens the file: names may hold " (anonymous namespace)". */
	while (tail && strstr(tail + 2, " ("))
		tail = strstr(tail + 2, " (");
	if (tail && gt_cols(tail) + 8 <= width) {
		struct gt_sb head = { 0 };

		gt_sb__addn(&head, lab, (size_t)(tail - lab));
		gt_sb__add_fit(&b, head.s ? head.s : "", width - gt_cols(tail));
		gt_sb__add(&b, tail);
		free(head.s);
	} else {
		gt_sb__add_fit(&b, lab, width);
	}
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s ? b.s : strdup("");
}

/* The row's text at o->width, into r->text. */
static int row__render(struct row *r, const struct gt_paths_opts *o, size_t width)
{
	const char *sep = o->leaf_first ? " < " : " > ";
	unsigned char *keep;
	size_t *w;
	char **cut;
	struct gt_sb out = { 0 }, whole = { 0 };
	int err = -ENOMEM;

	free(r->text);
	r->text = NULL;
	if (!r->n) {
		r->text = strdup("<program>");
		return r->text ? 0 : -ENOMEM;
	}
	keep = malloc(r->n);
	w = malloc(r->n * sizeof(*w));
	cut = calloc(r->n, sizeof(*cut));
	if (!keep || !w || !cut)
		goto out_free;
	memcpy(keep, r->must, r->n);
	memcpy(w, r->w, r->n * sizeof(*w));
	for (uint32_t k = 0; k < r->n; k++) {
		uint32_t e = r->order[k];

		if (keep[e])
			continue;
		keep[e] = 1;
		if (width_of(r, keep, w) > width)
			keep[e] = 0;
	}
	/* What must stay is too wide: cut the widest labels, down to MIN_LABEL. */
	for (;;) {
		size_t total = width_of(r, keep, w), widest = 0;
		uint32_t at = GT_NONE;

		if (total <= width)
			break;
		for (uint32_t k = 0; k < r->n; k++)
			if (keep[k] && w[k] > MIN_LABEL && w[k] > widest) {
				widest = w[k];
				at = k;
			}
		if (at == GT_NONE)
			break;
		free(cut[at]);
		cut[at] = fit_label(r->lab[at], widest - (total - width) > MIN_LABEL ? widest - (total - width)
										   : MIN_LABEL);
		if (!cut[at])
			goto out_free;
		w[at] = gt_cols(cut[at]);
		if (w[at] >= widest)
			break;
	}
	for (uint32_t i = 0, parts = 0; i < r->n; i++) {
		uint32_t k = o->leaf_first ? r->n - 1 - i : i;
		int gap = !keep[k] && (i == 0 || keep[o->leaf_first ? k + 1 : k - 1]);

		if (!keep[k] && !gap)
			continue;
		if (parts++)
			gt_sb__add(&whole, sep);
		gt_sb__add(&whole, keep[k] ? (cut[k] ? cut[k] : r->lab[k]) : "…");
	}
	if (whole.oom)
		goto out_free;
	gt_sb__add_fit(&out, whole.s ? whole.s : "", width);
	if (out.oom)
		goto out_free;
	r->text = out.s ? out.s : strdup("");
	out.s = NULL;
	err = r->text ? 0 : -ENOMEM;
out_free:
	for (uint32_t k = 0; cut && k < r->n; k++)
		free(cut[k]);
	free(cut);
	free(out.s);
	free(whole.s);
	free(w);
	free(keep);
	return err;
}

/* Marks in a and b the outermost element where their contexts differ;
 * whether any mark is new. */
static int mark_difference(struct row *a, struct row *b)
{
	uint32_t m = a->n < b->n ? a->n : b->n, d = 0;
	int changed = 0;

	while (d < m && !strcmp(a->lab[d], b->lab[d]))
		d++;
	if (d == a->n && d == b->n)
		return 0; /* the same labels all the way */
	if (d < a->n) {
		changed |= !a->must[d];
		a->must[d] = 1;
	} else if (a->n) {
		changed |= !a->must[a->n - 1];
		a->must[a->n - 1] = 1;
	}
	if (d < b->n) {
		changed |= !b->must[d];
		b->must[d] = 1;
	} else if (b->n) {
		changed |= !b->must[b->n - 1];
		b->must[b->n - 1] = 1;
	}
	return changed;
}

/* same[2i]: row i's number (from 1) among the distinct nodes whose rows
 * read as it does, 0 when it is alone; same[2i + 1]: how many. */
static void number_alike(const struct row *rows, uint32_t n, uint32_t *same)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t of = 0, at = 0;

		for (uint32_t j = 0; j < n; j++) {
			int first = 1; /* the first row of node j in the group */

			if (strcmp(rows[i].text, rows[j].text))
				continue;
			for (uint32_t q = 0; q < j && first; q++)
				first = rows[q].node != rows[j].node || strcmp(rows[q].text, rows[j].text);
			if (!first)
				continue;
			of++;
			if (rows[j].node == rows[i].node)
				at = of;
		}
		same[2 * i] = of > 1 ? at : 0;
		same[2 * i + 1] = of;
	}
}

int gt_paths__build(const struct gt_profile *p, const uint32_t *nodes, uint32_t n, const struct gt_paths_opts *o,
		    char **out)
{
	struct row *rows = calloc(n ? n : 1, sizeof(*rows));
	uint32_t *same = NULL;
	unsigned char *narrowed = NULL;
	size_t reserve;
	int err = -ENOMEM;

	if (!rows)
		return -ENOMEM;
	for (uint32_t k = 0; k < n; k++)
		if ((err = row__init(&rows[k], p, nodes[k], o->label_flags)))
			goto out_free;
	for (unsigned round = 0; round < ROUNDS; round++) {
		int changed = 0;

		for (uint32_t k = 0; k < n; k++)
			if ((err = row__render(&rows[k], o, o->width)))
				goto out_free;
		for (uint32_t i = 0; i < n; i++)
			for (uint32_t j = i + 1; j < n; j++)
				if (rows[i].node != rows[j].node && !strcmp(rows[i].text, rows[j].text))
					changed |= mark_difference(&rows[i], &rows[j]);
		if (!changed)
			break;
	}
	/* Rows that still read alike are contexts with the same labels:
	 * numbered among the distinct nodes of their group, within the width.
	 * A numbered row is drawn again narrower, to leave room for its
	 * number, and that can make it read like a row of another group
	 * (both cut to "…"): the groups are found again on the texts drawn,
	 * until no row newly needs a number, so that the numbers tell apart
	 * every two rows that read alike as written. A row is narrowed once:
	 * at most n + 1 rounds. */
	err = -ENOMEM;
	same = calloc(2 * (size_t)(n ? n : 1), sizeof(*same));
	narrowed = calloc(n ? n : 1, 1);
	if (!same || !narrowed)
		goto out_free;
	reserve = (size_t)snprintf(NULL, 0, " (%u of %u contexts)", (unsigned)n, (unsigned)n);
	for (;;) {
		int grew = 0;

		number_alike(rows, n, same);
		for (uint32_t i = 0; i < n; i++) {
			if (!same[2 * i] || narrowed[i])
				continue;
			narrowed[i] = grew = 1;
			if ((err = row__render(&rows[i], o, o->width > reserve + MIN_LABEL ? o->width - reserve : MIN_LABEL)))
				goto out_free;
		}
		if (!grew)
			break;
	}
	for (uint32_t i = 0; i < n; i++) {
		char suffix[48];

		if (!same[2 * i])
			continue;
		snprintf(suffix, sizeof(suffix), " (%u of %u contexts)", (unsigned)same[2 * i], (unsigned)same[2 * i + 1]);
		{
			struct gt_sb b = { 0 };

			gt_sb__add(&b, rows[i].text);
			gt_sb__add(&b, suffix);
			if (b.oom) {
				free(b.s);
				err = -ENOMEM;
				goto out_free;
			}
			free(rows[i].text);
			rows[i].text = b.s;
		}
	}
	err = 0;
out_free:
	free(narrowed);
	free(same);
	for (uint32_t k = 0; k < n; k++) {
		if (!err)
			out[k] = rows[k].text, rows[k].text = NULL;
		row__fini(&rows[k]);
	}
	free(rows);
	return err;
}

char *gt_paths__one(const struct gt_profile *p, uint32_t node, const struct gt_paths_opts *o)
{
	char *s;

	return gt_paths__build(p, &node, 1, o, &s) ? NULL : s;
}

void gt_paths__free(char **out, uint32_t n)
{
	for (uint32_t k = 0; out && k < n; k++)
		free(out[k]);
}
