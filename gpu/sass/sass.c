/* SPDX-License-Identifier: MIT */
/*
 * nvdisasm's text, read into functions, instructions, source lines and
 * instruction classes. The lines this reads:
 *
 *   .section .text.NAME,"ax",@progbits     a kernel's section begins
 *   .type NAME,@function                    NAME is a function
 *   .other NAME,@"STO_CUDA_ENTRY ..."       NAME is a kernel
 *   NAME:                                   a function or a label (.L_x_N)
 *   //## File "PATH", line N [inlined at ...]   the following instructions' line
 *   /\*0120*\/  [@!P0] OPCODE operands ;    an instruction at offset 0x120
 *
 * Branch and call targets are written `(LABEL) in the operands.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "gpu/sass/sass-internal.h"

const char *const gt_sass_class_names[GT_SASS__CLASSES] = {
#define X(A, id, name, desc) name,
	GT_GPU_INSN_CLASSES(X, _)
#undef X
};

/* Base opcodes (before the first '.') by class; the rest are OTHER. */
static const struct {
	const char *op;
	enum gt_sass_class cls;
} opcodes[] = {
	{ "FADD", GT_SASS_FP32 },    { "FADD32I", GT_SASS_FP32 }, { "FMUL", GT_SASS_FP32 },
	{ "FMUL32I", GT_SASS_FP32 }, { "FFMA", GT_SASS_FP32 },	  { "FFMA32I", GT_SASS_FP32 },
	{ "FMNMX", GT_SASS_FP32 },   { "FSET", GT_SASS_FP32 },	  { "FSETP", GT_SASS_FP32 },
	{ "FSEL", GT_SASS_FP32 },    { "FCHK", GT_SASS_FP32 },	  { "FSWZADD", GT_SASS_FP32 },
	{ "DADD", GT_SASS_FP64 },    { "DMUL", GT_SASS_FP64 },	  { "DFMA", GT_SASS_FP64 },
	{ "DSETP", GT_SASS_FP64 },   { "DMNMX", GT_SASS_FP64 },	  { "DSET", GT_SASS_FP64 },
	{ "HADD2", GT_SASS_FP16 },   { "HMUL2", GT_SASS_FP16 },	  { "HFMA2", GT_SASS_FP16 },
	{ "HSETP2", GT_SASS_FP16 },  { "HSET2", GT_SASS_FP16 },	  { "HMNMX2", GT_SASS_FP16 },
	{ "IADD3", GT_SASS_INT },    { "IADD", GT_SASS_INT },	  { "IMAD", GT_SASS_INT },
	{ "IMUL", GT_SASS_INT },     { "ISETP", GT_SASS_INT },	  { "ISCADD", GT_SASS_INT },
	{ "LOP3", GT_SASS_INT },     { "LOP", GT_SASS_INT },	  { "SHF", GT_SASS_INT },
	{ "SHL", GT_SASS_INT },	     { "SHR", GT_SASS_INT },	  { "LEA", GT_SASS_INT },
	{ "IABS", GT_SASS_INT },     { "IMNMX", GT_SASS_INT },	  { "VIMNMX", GT_SASS_INT },
	{ "POPC", GT_SASS_INT },     { "FLO", GT_SASS_INT },	  { "BREV", GT_SASS_INT },
	{ "BMSK", GT_SASS_INT },     { "SGXT", GT_SASS_INT },	  { "IDP", GT_SASS_INT },
	{ "PLOP3", GT_SASS_INT },    { "VABSDIFF", GT_SASS_INT }, { "MUFU", GT_SASS_SFU },
	{ "HMMA", GT_SASS_TENSOR },  { "IMMA", GT_SASS_TENSOR },  { "DMMA", GT_SASS_TENSOR },
	{ "BMMA", GT_SASS_TENSOR },  { "HGMMA", GT_SASS_TENSOR }, { "IGMMA", GT_SASS_TENSOR },
	{ "QGMMA", GT_SASS_TENSOR }, { "BGMMA", GT_SASS_TENSOR }, { "F2F", GT_SASS_CONVERT },
	{ "F2I", GT_SASS_CONVERT },  { "I2F", GT_SASS_CONVERT },  { "I2FP", GT_SASS_CONVERT },
	{ "F2FP", GT_SASS_CONVERT }, { "F2IP", GT_SASS_CONVERT }, { "I2I", GT_SASS_CONVERT },
	{ "I2IP", GT_SASS_CONVERT }, { "FRND", GT_SASS_CONVERT }, { "LDG", GT_SASS_GLOBAL },
	{ "STG", GT_SASS_GLOBAL },   { "LD", GT_SASS_GLOBAL },	  { "ST", GT_SASS_GLOBAL },
	{ "ATOM", GT_SASS_GLOBAL },  { "ATOMG", GT_SASS_GLOBAL }, { "RED", GT_SASS_GLOBAL },
	{ "LDGSTS", GT_SASS_GLOBAL }, { "CCTL", GT_SASS_GLOBAL }, { "UBLKCP", GT_SASS_GLOBAL },
	{ "UTMALDG", GT_SASS_GLOBAL }, { "UTMASTG", GT_SASS_GLOBAL }, { "LDS", GT_SASS_SHARED },
	{ "STS", GT_SASS_SHARED },   { "ATOMS", GT_SASS_SHARED }, { "LDSM", GT_SASS_SHARED },
	{ "STSM", GT_SASS_SHARED },  { "LDL", GT_SASS_LOCAL },	  { "STL", GT_SASS_LOCAL },
	{ "BRA", GT_SASS_CONTROL },  { "BRX", GT_SASS_CONTROL },  { "JMP", GT_SASS_CONTROL },
	{ "JMX", GT_SASS_CONTROL },  { "CALL", GT_SASS_CONTROL }, { "RET", GT_SASS_CONTROL },
	{ "EXIT", GT_SASS_CONTROL }, { "BSSY", GT_SASS_CONTROL }, { "BSYNC", GT_SASS_CONTROL },
	{ "BREAK", GT_SASS_CONTROL }, { "WARPSYNC", GT_SASS_CONTROL }, { "KILL", GT_SASS_CONTROL },
	{ "YIELD", GT_SASS_CONTROL }, { "BPT", GT_SASS_CONTROL },
};

static int lookup(const char *op, size_t n)
{
	for (size_t i = 0; i < sizeof(opcodes) / sizeof(opcodes[0]); i++)
		if (strlen(opcodes[i].op) == n && !memcmp(opcodes[i].op, op, n))
			return (int)opcodes[i].cls;
	return -1;
}

enum gt_sass_class gt_sass__class_of(const char *opcode)
{
	size_t n = strcspn(opcode, ". \t;");
	int c = lookup(opcode, n);

	/* The uniform datapath's forms (UIADD3, ULOP3, ...) do what their
	 * vector forms do; ULDC and UMOV are OTHER like LDC and MOV. */
	if (c < 0 && n > 1 && opcode[0] == 'U')
		c = lookup(opcode + 1, n - 1);
	return c < 0 ? GT_SASS_OTHER : (enum gt_sass_class)c;
}

struct label {
	char *name;
	uint32_t insn; /* the instruction after it */
};

struct parser {
	struct gt_sass *s;
	uint32_t cap_insns, cap_targets, cap_functions, cap_sections, cap_files, cap_labels, cap_names;
	struct label *labels;
	uint32_t n_labels;
	/* Names declared functions (.type), and which of them are kernels. */
	char **names;
	uint8_t *entry;
	uint32_t n_names;
	uint32_t section, file, line;
	/* The call sites the following instructions were inlined at,
	 * innermost first, and their node in s->inlines. */
	struct {
		uint32_t file, line;
	} chain[GT_SASS_MAX_INLINE];
	uint32_t n_chain, inl, cap_inlines;
	int marker_run, chain_dirty;
	/* Which kernels' sections to read (gt_sass__parse); skipping:
	 * the lines of a section left out, up to the next section. */
	gt_sass_keep_fn keep;
	void *keep_arg;
	int skipping;
	/* Branch and call targets by name, resolved at the end. */
	char **targets;
};

static char *dup_n(const char *p, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, p, n);
		d[n] = 0;
	}
	return d;
}

static uint32_t name_index(const struct parser *ps, const char *p, size_t n)
{
	for (uint32_t i = 0; i < ps->n_names; i++)
		if (strlen(ps->names[i]) == n && !memcmp(ps->names[i], p, n))
			return i;
	return GT_SASS_NONE;
}

static int declare(struct parser *ps, const char *p, size_t n, int entry)
{
	uint32_t i = name_index(ps, p, n);

	if (i == GT_SASS_NONE) {
		if (gt_array__grow((void **)&ps->names, &ps->cap_names, ps->n_names, sizeof(*ps->names), 64))
			return -ENOMEM;
		{
			uint8_t *e = realloc(ps->entry, ps->cap_names);

			if (!e)
				return -ENOMEM;
			ps->entry = e;
		}
		if (!(ps->names[ps->n_names] = dup_n(p, n)))
			return -ENOMEM;
		ps->entry[ps->n_names] = 0;
		i = ps->n_names++;
	}
	ps->entry[i] |= (uint8_t)entry;
	return 0;
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* The callee's own name: "$kernel$f" -> "f". */
static const char *own_name(const char *name)
{
	const char *d;

	if (name[0] != '$')
		return name;
	d = strchr(name + 1, '$');
	return d && d[1] ? d + 1 : name;
}

static int begin_function(struct parser *ps, const char *name, int entry)
{
	struct gt_sass *s = ps->s;
	struct gt_sass_function *f;

	if (gt_array__grow((void **)&s->functions, &ps->cap_functions, s->n_functions, sizeof(*s->functions), 64))
		return -ENOMEM;
	if (s->n_functions && s->functions[s->n_functions - 1].section == ps->section)
		s->functions[s->n_functions - 1].end = s->n_insns;
	f = &s->functions[s->n_functions];
	memset(f, 0, sizeof(*f));
	if (!(f->name = strdup(name)))
		return -ENOMEM;
	f->callee = own_name(f->name);
	f->section = ps->section;
	f->first = f->end = s->n_insns;
	f->entry = entry;
	s->n_functions++;
	return 0;
}

static void end_section(struct parser *ps)
{
	struct gt_sass *s = ps->s;

	if (ps->section == GT_SASS_NONE)
		return;
	s->sections[ps->section].end = s->n_insns;
	if (s->n_functions && s->functions[s->n_functions - 1].section == ps->section)
		s->functions[s->n_functions - 1].end = s->n_insns;
	ps->section = GT_SASS_NONE;
}

static int begin_section(struct parser *ps, const char *p, size_t n)
{
	struct gt_sass *s = ps->s;

	end_section(ps);
	if (gt_array__grow((void **)&s->sections, &ps->cap_sections, s->n_sections, sizeof(*s->sections), 64))
		return -ENOMEM;
	if (!(s->sections[s->n_sections].name = dup_n(p, n)))
		return -ENOMEM;
	s->sections[s->n_sections].first = s->sections[s->n_sections].end = s->n_insns;
	ps->section = s->n_sections++;
	ps->file = GT_SASS_NONE;
	ps->line = 0;
	ps->n_chain = 0;
	ps->inl = GT_SASS_NONE;
	ps->chain_dirty = 0;
	return 0;
}

static uint32_t file_index(struct parser *ps, const char *q, size_t n)
{
	struct gt_sass *s = ps->s;
	uint32_t i;

	for (i = 0; i < s->n_files; i++)
		if (strlen(s->files[i]) == n && !memcmp(s->files[i], q, n))
			return i;
	if (gt_array__grow((void **)&s->files, &ps->cap_files, s->n_files, sizeof(*s->files), 64) ||
	    !(s->files[s->n_files] = dup_n(q, n)))
		return GT_SASS_NONE;
	return s->n_files++;
}

/* `"PATH", line N` at or after @p: 0 with the place, or -1 (-ENOMEM). */
static int parse_place(struct parser *ps, const char *p, const char *end, uint32_t *file, uint32_t *line,
		       const char **after)
{
	const char *q = memchr(p, '"', (size_t)(end - p)), *r, *l;
	char *stop;

	if (!q || !(r = memchr(q + 1, '"', (size_t)(end - q - 1))) || !(l = memmem(r, (size_t)(end - r), ", line ", 7)))
		return -1;
	*line = (uint32_t)strtoul(l + 7, &stop, 10);
	*after = stop;
	if ((*file = file_index(ps, q + 1, (size_t)(r - q - 1))) == GT_SASS_NONE)
		return -ENOMEM;
	return 0;
}

/*
 * `//## File "A", line 1 inlined at "B", line 2`: the line of the
 * instructions that follow, and where the code was inlined. A chain of
 * inlining takes one marker per level, innermost first, each continuing
 * where the last was inlined ("B", line 2 inlined at ...).
 */
static int on_line_marker(struct parser *ps, const char *p, const char *end)
{
	uint32_t file, line, at_file, at_line;
	const char *after, *in;
	int err = parse_place(ps, p, end, &file, &line, &after), inlined;

	if (err)
		return err == -ENOMEM ? err : 0;
	in = memmem(after, (size_t)(end - after), "inlined at ", 11);
	inlined = in && !(err = parse_place(ps, in, end, &at_file, &at_line, &after));
	if (err == -ENOMEM)
		return err;
	if (ps->marker_run && inlined && ps->n_chain && ps->n_chain < GT_SASS_MAX_INLINE &&
	    ps->chain[ps->n_chain - 1].file == file && ps->chain[ps->n_chain - 1].line == line) {
		ps->chain[ps->n_chain].file = at_file;
		ps->chain[ps->n_chain++].line = at_line;
	} else {
		ps->file = file;
		ps->line = line;
		ps->n_chain = 0;
		if (inlined) {
			ps->chain[0].file = at_file;
			ps->chain[0].line = at_line;
			ps->n_chain = 1;
		}
	}
	ps->marker_run = 1;
	ps->chain_dirty = 1;
	return 0;
}

/* The parser's chain of inlining as a node of s->inlines (shared prefixes). */
static int intern_chain(struct parser *ps)
{
	struct gt_sass *s = ps->s;
	uint32_t parent = GT_SASS_NONE;

	for (uint32_t k = ps->n_chain; k-- > 0;) {
		uint32_t i;

		for (i = 0; i < s->n_inlines; i++)
			if (s->inlines[i].parent == parent && s->inlines[i].file == ps->chain[k].file &&
			    s->inlines[i].line == ps->chain[k].line)
				break;
		if (i == s->n_inlines) {
			if (gt_array__grow((void **)&s->inlines, &ps->cap_inlines, s->n_inlines, sizeof(*s->inlines), 64))
				return -ENOMEM;
			s->inlines[i] = (struct gt_sass_inline){ ps->chain[k].file, ps->chain[k].line, parent };
			s->n_inlines++;
		}
		parent = i;
	}
	ps->inl = parent;
	ps->chain_dirty = 0;
	return 0;
}

/* ---- registers read and written ---- */

static void add_reg(uint16_t *set, uint8_t *n, int max, int reg)
{
	for (int i = 0; i < *n; i++)
		if (set[i] == reg)
			return;
	if (reg >= 0 && reg < GT_SASS_REGS && *n < max)
		set[(*n)++] = (uint16_t)reg;
}

static int is_alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

/* The register named at @p ("R12", "P0", "UR4", "UP1", "B6"), its number
 * of 32-bit parts in *@width (R2.64: 2); -1 if none. */
static int reg_at(const char *p, const char *end, int *width, const char **after)
{
	int base, max;
	const char *q = p;
	long v;
	char *stop;

	if (q + 1 < end && q[0] == 'U' && q[1] == 'R')
		base = GT_SASS_REG_UR, max = 63, q += 2;
	else if (q + 1 < end && q[0] == 'U' && q[1] == 'P')
		base = GT_SASS_REG_UP, max = 7, q += 2;
	else if (q < end && q[0] == 'R')
		base = 0, max = 255, q += 1;
	else if (q < end && q[0] == 'P')
		base = GT_SASS_REG_P, max = 7, q += 1;
	else if (q < end && q[0] == 'B')
		base = GT_SASS_REG_B, max = 16, q += 1;
	else
		return -1;
	if (q >= end || *q < '0' || *q > '9')
		return -1; /* RZ, PT, URZ, UPT, or a word */
	v = strtol(q, &stop, 10);
	if (v < 0 || v >= max || (stop < end && is_alnum(*stop)))
		return -1;
	*width = 1;
	if (stop + 3 <= end && !memcmp(stop, ".64", 3))
		*width = 2;
	else if (stop + 4 <= end && !memcmp(stop, ".128", 4))
		*width = 4;
	*after = stop;
	return base + (int)v;
}

static int op_is(const char *op, size_t n, const char *const *list)
{
	for (; *list; list++)
		if (strlen(*list) == n && !memcmp(*list, op, n))
			return 1;
	return 0;
}

/*
 * The registers @in writes and reads, from its operands (@p to @end, the
 * text after the opcode @op of base length @n). The first operand is
 * written, but for stores, branches, barriers and the like; compares write
 * their first two operands when they are predicates. 64- and 128-bit forms
 * write and read register pairs and quads.
 */
static void operands(struct gt_sass_insn *in, const char *op, size_t n, const char *p, const char *end)
{
	static const char *const no_def[] = { "ST",	  "STG",  "STS",   "STL",   "RED",  "BRA",	"BRX",
					      "JMP",	  "JMX",  "CALL",  "RET",   "EXIT", "BAR",	"MEMBAR",
					      "WARPSYNC", "NOP",  "DEPBAR", "BSYNC", "YIELD", "KILL", "BPT",
					      "ERRBAR",	  "CCTL", "FENCE", "UTMASTG", "UBLKCP", "STSM", "BREAK", NULL };
	static const char *const compares[] = { "ISETP", "FSETP", "DSETP", "HSETP2", "PLOP3", "UISETP",
						"UPLOP3", "PSETP", "VOTE", "UVOTE", "FCHK", NULL };
	const char *mods = op + n, *op_end = op;
	int wide = 1, defs_left, k = 0;

	while (op_end < end && *op_end != ' ' && *op_end != '\t' && *op_end != ';')
		op_end++;
	if (memmem(mods, (size_t)(op_end - mods), ".64", 3) || memmem(mods, (size_t)(op_end - mods), ".WIDE", 5))
		wide = 2;
	if (memmem(mods, (size_t)(op_end - mods), ".128", 4))
		wide = 4;
	if (op[0] == 'D' && in->cls == GT_SASS_FP64)
		wide = 2;
	defs_left = op_is(op, n, no_def) ? 0 : op_is(op, n, compares) ? 2 : 1;
	while (p < end && *p != ';') {
		const char *q = p, *after;
		int width, r, depth = 0, first = 1;

		/* One operand: to the next comma outside brackets. */
		while (q < end && *q != ';' && (*q != ',' || depth)) {
			if (*q == '[')
				depth++;
			else if (*q == ']' && depth)
				depth--;
			q++;
		}
		for (const char *t = p; t < q; t++) {
			if (t > p && is_alnum(t[-1]))
				continue;
			if ((r = reg_at(t, q, &width, &after)) < 0)
				continue;
			if (r < GT_SASS_REG_P && width == 1)
				width = t[-1] == '[' ? 1 : wide;
			for (int w = 0; w < width && r + w < GT_SASS_REG_P; w++) {
				int is_def = k < defs_left && first && (defs_left == 1 || r >= GT_SASS_REG_P);

				if (is_def)
					add_reg(in->def, &in->n_def, GT_SASS_MAX_DEFS, r + w);
				else
					add_reg(in->use, &in->n_use, GT_SASS_MAX_USES, r + w);
			}
			if (r >= GT_SASS_REG_P) {
				int is_def = k < defs_left && first;

				if (is_def)
					add_reg(in->def, &in->n_def, GT_SASS_MAX_DEFS, r);
				else
					add_reg(in->use, &in->n_use, GT_SASS_MAX_USES, r);
			}
			first = 0;
			t = after - 1;
		}
		k++;
		p = q < end && *q == ',' ? q + 1 : q;
		if (p < end && *p == ';')
			break;
	}
}


/* "FFMA d, -a, b, 1 ;" (the operands from @p to the line's @end): the
 * Newton step 1 - a b of a reciprocal b of a. */
static int is_newton(const char *p, const char *end)
{
	const char *semi = memchr(p, ';', (size_t)(end - p)), *t;

	if (!semi || !(t = memmem(p, (size_t)(semi - p), ", -R", 4)))
		return 0;
	while (semi > p && (semi[-1] == ' ' || semi[-1] == '\t'))
		semi--;
	return semi - p >= 3 && !memcmp(semi - 3, ", 1", 3);
}

/* A hexadecimal immediate, "0x1f" or "-0x1f", from @p up to @end (spaces
 * after it allowed), in *@v; 0 if it is not one or does not fit 32 bits.
 * Reads nothing at or past @end: the text need not end in a NUL. */
static int hex_at(const char *p, const char *end, long *v)
{
	int neg = p < end && *p == '-', digits = 0;
	long x = 0;

	p += neg;
	if (end - p < 3 || p[0] != '0' || p[1] != 'x')
		return 0;
	for (p += 2; p < end && is_alnum(*p); p++, digits++) {
		int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;

		if (d < 0 || digits >= 8)
			return 0;
		x = x * 16 + d;
	}
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (!digits || p != end)
		return 0;
	*v = neg ? -x : x;
	return 1;
}

/*
 * The immediate of an integer add (@p to @end: the operands after an
 * unmodified IADD3 or VIADD) of one register and one immediate, the other
 * operands RZ: "R1, R2, 0x4" or "R1, R2, -0x1, RZ"; 0 for any other form.
 * @in's one register read must be that register (no guard), so that
 * gt_sass__blame can tell a counter's step from its uses.
 */
static int32_t add_immediate(const struct gt_sass_insn *in, const char *p, const char *end)
{
	long imm = 0;
	int regs = 0, imms = 0;

	if (in->n_use != 1 || (in->flags & GT_SASS_F_PRED))
		return 0;
	while (p < end && *p != ';') {
		const char *q = skip_ws(p, end), *t;

		/* One operand: to the next comma. */
		for (t = q; t < end && *t != ',' && *t != ';'; t++)
			if (*t == '[' || *t == '|' || *t == '~' || *t == '!')
				return 0;
		if (t - q >= 2 && (q[0] == '-' || q[0] == '0')) {
			if (!hex_at(q, t, &imm))
				return 0;
			imms++;
		} else if (t - q >= 2 && q[0] == 'R' && q[1] == 'Z' && (t - q == 2 || q[2] == ' ')) {
			;
		} else if (t - q >= 2 && q[0] == 'R' && q[1] >= '0' && q[1] <= '9') {
			regs++;
		} else if (t > q) {
			return 0;
		}
		p = t < end && *t == ',' ? t + 1 : t;
	}
	return regs == 2 && imms == 1 && imm >= INT32_MIN && imm <= INT32_MAX ? (int32_t)imm : 0;
}

static int on_insn(struct parser *ps, const char *p, const char *end)
{
	struct gt_sass *s = ps->s;
	struct gt_sass_insn *in;
	char *stop;
	unsigned long off = strtoul(p, &stop, 16);
	const char *op, *q, *t;
	size_t n;

	if (ps->section == GT_SASS_NONE || stop == p)
		return 0;
	/* Instructions before any function label belong to the section's. */
	if (!s->n_functions || s->functions[s->n_functions - 1].section != ps->section) {
		uint32_t k = name_index(ps, s->sections[ps->section].name, strlen(s->sections[ps->section].name));

		if (begin_function(ps, s->sections[ps->section].name, k != GT_SASS_NONE && ps->entry[k]))
			return -ENOMEM;
	}
	if (gt_array__grow((void **)&s->insns, &ps->cap_insns, s->n_insns, sizeof(*s->insns), 64) ||
	    gt_array__grow((void **)&ps->targets, &ps->cap_targets, s->n_insns, sizeof(*ps->targets), 64))
		return -ENOMEM;
	in = &s->insns[s->n_insns];
	memset(in, 0, sizeof(*in));
	ps->targets[s->n_insns] = NULL;
	in->offset = (uint32_t)off;
	in->function = s->n_functions - 1;
	in->file = ps->line ? ps->file : GT_SASS_NONE;
	in->line = ps->line;
	ps->marker_run = 0;
	if (ps->chain_dirty && intern_chain(ps))
		return -ENOMEM;
	in->inl = ps->inl;
	in->target = GT_SASS_NONE;
	in->loop = GT_SASS_NONE;
	p = stop;
	if (p + 2 <= end && p[0] == '*' && p[1] == '/')
		p += 2;
	p = skip_ws(p, end);
	if (p < end && *p == '{')
		p = skip_ws(p + 1, end);
	if (p < end && *p == '@') {
		int width, r;
		const char *after;

		q = p;
		while (p < end && *p != ' ' && *p != '\t')
			p++;
		/* @PT always holds. */
		if (!((size_t)(p - q) == 3 && !memcmp(q, "@PT", 3)))
			in->flags |= GT_SASS_F_PRED;
		r = reg_at(q + 1 + (q[1] == '!'), p, &width, &after);
		if (r >= 0)
			add_reg(in->use, &in->n_use, GT_SASS_MAX_USES, r);
		p = skip_ws(p, end);
	}
	op = p;
	while (p < end && *p != ' ' && *p != '\t' && *p != ';')
		p++;
	n = strcspn(op, ". \t;");
	if (op + n > p)
		n = (size_t)(p - op);
	in->cls = (uint16_t)gt_sass__class_of(op);
	operands(in, op, n, p, end);
#define IS(name) (n == sizeof(name) - 1 && !memcmp(op, name, n))
	if ((IS("IADD3") || IS("VIADD")) && op + n == p && in->n_def == 1)
		in->addi = add_immediate(in, p, end);
	if (IS("CALL"))
		in->flags |= GT_SASS_F_CALL;
	else if (IS("BRA") || IS("JMP"))
		in->flags |= GT_SASS_F_BRANCH;
	else if (IS("BRX") || IS("JMX"))
		in->flags |= GT_SASS_F_INDIRECT;
	else if (IS("EXIT") || IS("RET") || IS("KILL"))
		in->flags |= GT_SASS_F_END;
	else if (IS("I2F") && memmem(op + n, (size_t)(p - op) - n, ".RP", 3))
		in->flags |= GT_SASS_F_DIVISOR;
	else if ((IS("FMUL") && memmem(p, (size_t)(end - p), "0.63661974668502807617", 22)) ||
		 (IS("FFMA") && memmem(op + n, (size_t)(p - op) - n, ".RM", 3) &&
		  memmem(p, (size_t)(end - p), "12582913", 8)))
		in->flags |= GT_SASS_F_MATH;
	else if (IS("FFMA") && op + n == p && is_newton(p, end))
		in->flags |= GT_SASS_F_RECIP;
	else if (IS("IADD3") && memmem(p, (size_t)(end - p), ", -0xd000000,", 13))
		in->flags |= GT_SASS_F_SQRT;
	else if (IS("MUFU") && (size_t)(p - op) == 8 && !memcmp(op + 4, ".RSQ", 4))
		in->flags |= GT_SASS_F_RSQ;
	else if (IS("BSSY"))
		in->flags |= GT_SASS_F_SPLIT;
	else if (IS("BSYNC"))
		in->flags |= GT_SASS_F_JOIN;
	else if ((IS("MOV") || IS("HFMA2") || (IS("IMAD") && (size_t)(p - op) > 8 && !memcmp(op + 4, ".MOV", 4))) &&
		 in->n_def == 1 && in->def[0] < GT_SASS_REG_P && in->n_use == ((in->flags & GT_SASS_F_PRED) ? 1 : 0))
		in->flags |= GT_SASS_F_CONST;
#undef IS
	if ((in->flags & (GT_SASS_F_CALL | GT_SASS_F_BRANCH)) && p < end && (t = memmem(p, (size_t)(end - p), "`(", 2))) {
		q = memchr(t + 2, ')', (size_t)(end - t - 2));
		if (q && !(ps->targets[s->n_insns] = dup_n(t + 2, (size_t)(q - t - 2))))
			return -ENOMEM;
	}
	s->n_insns++;
	return 0;
}

static int on_label(struct parser *ps, const char *p, size_t n)
{
	struct gt_sass *s = ps->s;
	uint32_t k;

	if (n > 6 && !memcmp(p, ".text.", 6))
		return 0;
	k = name_index(ps, p, n);
	if (k != GT_SASS_NONE && ps->section != GT_SASS_NONE) {
		if (s->n_functions && s->functions[s->n_functions - 1].section == ps->section &&
		    s->functions[s->n_functions - 1].first == s->n_insns) {
			/* A second name at the same place: keep the first. */
			return 0;
		}
		return begin_function(ps, ps->names[k], ps->entry[k]);
	}
	if (gt_array__grow((void **)&ps->labels, &ps->cap_labels, ps->n_labels, sizeof(*ps->labels), 64))
		return -ENOMEM;
	if (!(ps->labels[ps->n_labels].name = dup_n(p, n)))
		return -ENOMEM;
	ps->labels[ps->n_labels++].insn = s->n_insns;
	return 0;
}

static int by_label(const void *a, const void *b)
{
	return strcmp(((const struct label *)a)->name, ((const struct label *)b)->name);
}

static void resolve(struct parser *ps)
{
	struct gt_sass *s = ps->s;

	if (ps->n_labels)
		qsort(ps->labels, ps->n_labels, sizeof(*ps->labels), by_label);
	for (uint32_t i = 0; i < s->n_insns; i++) {
		struct gt_sass_insn *in = &s->insns[i];
		const char *t = ps->targets[i];

		if (!t)
			continue;
		if (in->flags & GT_SASS_F_CALL) {
			for (uint32_t f = 0; f < s->n_functions; f++)
				if (!strcmp(s->functions[f].name, t)) {
					in->target = f;
					break;
				}
		} else {
			struct label key = { (char *)(uintptr_t)t, 0 };
			const struct label *l =
				ps->n_labels ? bsearch(&key, ps->labels, ps->n_labels, sizeof(key), by_label) : NULL;

			if (l && l->insn < s->n_insns)
				in->target = l->insn;
		}
	}
}

/* The declarations come before the code they name: a first pass. */
static int declarations(struct parser *ps, const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *q, *c;

		if (!eol)
			eol = end;
		q = skip_ws(p, eol);
		if ((size_t)(eol - q) > 6 && !memcmp(q, ".type", 5) && (c = memchr(q, ',', (size_t)(eol - q))) &&
		    (size_t)(eol - c) >= 10 && !memcmp(c, ",@function", 10)) {
			q = skip_ws(q + 5, c);
			if (declare(ps, q, (size_t)(c - q), 0))
				return -ENOMEM;
		} else if ((size_t)(eol - q) > 7 && !memcmp(q, ".other", 6) && (c = memchr(q, ',', (size_t)(eol - q))) &&
			   memmem(c, (size_t)(eol - c), "STO_CUDA_ENTRY", 14)) {
			q = skip_ws(q + 6, c);
			if (declare(ps, q, (size_t)(c - q), 1))
				return -ENOMEM;
		}
		p = eol + 1;
	}
	return 0;
}

/* A kernel's section the caller does not want: only kernels are left out,
 * since the functions of other sections may be called from any. */
static int section__left_out(const struct parser *ps, const char *p, size_t n)
{
	uint32_t i;

	if (!ps->keep)
		return 0;
	i = name_index(ps, p, n);
	return i != GT_SASS_NONE && ps->entry[i] && !ps->keep(p, n, ps->keep_arg);
}

static int parse_lines(struct parser *ps, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	int err = 0;

	while (!err && p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *q;
		size_t n;

		if (!eol)
			eol = end;
		q = skip_ws(p, eol);
		n = (size_t)(eol - q);
		if (n > 8 && !memcmp(q, ".section", 8)) {
			const char *a = skip_ws(q + 8, eol), *c = memchr(a, ',', (size_t)(eol - a));

			if (!c)
				c = eol;
			ps->skipping = (size_t)(c - a) > 6 && !memcmp(a, ".text.", 6) &&
				       section__left_out(ps, a + 6, (size_t)(c - a - 6));
			if (!ps->skipping && (size_t)(c - a) > 6 && !memcmp(a, ".text.", 6))
				err = begin_section(ps, a + 6, (size_t)(c - a - 6));
			else
				end_section(ps);
		} else if (ps->skipping) {
			/* a kernel left out: its code, labels and lines */
		} else if (n > 2 && q[0] == '/' && q[1] == '*') {
			err = on_insn(ps, q + 2, eol);
		} else if (n > 8 && !memcmp(q, "//## File", 9)) {
			if (ps->section != GT_SASS_NONE)
				err = on_line_marker(ps, q, eol);
		} else if (n > 1 && q[n - 1] == ':' && q[0] != '/' && !memchr(q, ' ', n)) {
			err = on_label(ps, q, n - 1);
		}
		p = eol + 1;
	}
	end_section(ps);
	return err;
}

static void parser__fini(struct parser *ps)
{
	for (uint32_t i = 0; i < ps->n_labels; i++)
		free(ps->labels[i].name);
	for (uint32_t i = 0; i < ps->n_names; i++)
		free(ps->names[i]);
	for (uint32_t i = 0; ps->targets && ps->s && i < ps->s->n_insns; i++)
		free(ps->targets[i]);
	free(ps->labels);
	free(ps->names);
	free(ps->entry);
	free(ps->targets);
}

struct gt_sass *gt_sass__parse(const char *text, size_t len, gt_sass_keep_fn keep, void *arg)
{
	struct parser ps = { .section = GT_SASS_NONE, .inl = GT_SASS_NONE, .keep = keep, .keep_arg = arg };
	int err;

	if (!(ps.s = calloc(1, sizeof(*ps.s))))
		return NULL;
	err = declarations(&ps, text, len);
	if (!err)
		err = parse_lines(&ps, text, len);
	if (!err) {
		resolve(&ps);
		err = gt_sass__loops(ps.s);
	}
	parser__fini(&ps);
	if (err || !ps.s->n_insns) {
		gt_sass__delete(ps.s);
		return NULL;
	}
	return ps.s;
}

void gt_sass__delete(struct gt_sass *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->n_functions; i++)
		free((char *)(uintptr_t)s->functions[i].name);
	for (uint32_t i = 0; i < s->n_sections; i++)
		free((char *)(uintptr_t)s->sections[i].name);
	for (uint32_t i = 0; i < s->n_files; i++)
		free(s->files[i]);
	free(s->files);
	free(s->insns);
	free(s->functions);
	free(s->sections);
	free(s->loops);
	free(s->inlines);
	free(s);
}

uint32_t gt_sass__section(const struct gt_sass *s, const char *name)
{
	for (uint32_t i = 0; s && name && i < s->n_sections; i++)
		if (!strcmp(s->sections[i].name, name))
			return i;
	return GT_SASS_NONE;
}

uint32_t gt_sass__find(const struct gt_sass *s, const char *name, uint64_t offset)
{
	uint32_t sec = gt_sass__section(s, name), lo, hi;

	if (sec == GT_SASS_NONE)
		return GT_SASS_NONE;
	lo = s->sections[sec].first;
	hi = s->sections[sec].end;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (s->insns[mid].offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->sections[sec].end && s->insns[lo].offset == offset ? lo : GT_SASS_NONE;
}
