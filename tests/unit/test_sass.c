/* SPDX-License-Identifier: MIT */
/*
 * gpu/sass: nvdisasm's text read into functions, calls, lines and loops,
 * and the GPU calling contexts of algorithm 3, on small texts written here
 * (cycles, a function no call reaches, nested loops, propagation) and on
 * nvdisasm's real output for samples/cuda/gpucalls (test_sass FILE). Running
 * nvdisasm and keeping its text: test_sass_disasm.c.
 * `test_sass --class OPCODE...` prints the class of each opcode.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "gpu/sass/sass.h"
#include "tests/unit/test.h"

static const char small[] =
	"\t.section\t.text.k,\"ax\",@progbits\n"
	"        .type           k,@function\n"
	"        .other          k,@\"STO_CUDA_ENTRY STV_DEFAULT\"\n"
	"        .type           $k$f,@function\n"
	"        .type           $k$g,@function\n"
	"        .type           $k$h,@function\n"
	"        .type           $k$l,@function\n"
	"        .type           $k$i,@function\n"
	"k:\n"
	".text.k:\n"
	"\t//## File \"/src/a.cu\", line 10\n"
	"        /*0000*/                   CALL.REL.NOINC `($k$f) ;\n"
	"\t//## File \"/src/a.cu\", line 11\n"
	"        /*0010*/                   CALL.REL.NOINC `($k$l) ;\n"
	"        /*0020*/                   EXIT ;\n"
	"$k$f:\n"
	"\t//## File \"/src/a.cu\", line 20\n"
	"        /*0030*/                   CALL.REL.NOINC `($k$g) ;\n"
	"        /*0040*/                   RET.REL.NODEC R20 `(k) ;\n"
	"$k$g:\n"
	"\t//## File \"/src/a.cu\", line 30 inlined at \"/src/a.cu\", line 31\n"
	"        /*0050*/               @P0 CALL.REL.NOINC `($k$f) ;\n"
	"        /*0060*/                   FFMA R1, R1, R2, R3 ;\n"
	"        /*0070*/                   RET.REL.NODEC R20 `(k) ;\n"
	"$k$h:\n"
	"        /*0080*/                   MUFU.RCP R1, R2 ;\n"
	"        /*0090*/                   RET.REL.NODEC R20 `(k) ;\n"
	"$k$l:\n"
	"\t//## File \"/src/b.cu\", line 40\n"
	"        /*00a0*/                   MOV R1, RZ ;\n"
	".L_x_1:\n"
	"\t//## File \"/src/b.cu\", line 41\n"
	"        /*00b0*/                   LDG.E R2, desc[UR4][R4.64] ;\n"
	".L_x_2:\n"
	"\t//## File \"/src/b.cu\", line 42\n"
	"        /*00c0*/                   FADD R1, R1, R2 ;\n"
	"        /*00d0*/               @P1 BRA `(.L_x_2) ;\n"
	"\t//## File \"/src/b.cu\", line 41\n"
	"        /*00e0*/                   UIADD3 UR4, UR4, 0x1, URZ ;\n"
	"        /*00f0*/               @P0 BRA `(.L_x_1) ;\n"
	"        /*0100*/                   RET.REL.NODEC R20 `(k) ;\n"
	".L_x_3:\n"
	"        /*0110*/                   BRA `(.L_x_3);\n"
	"$k$i:\n"
	"\t//## File \"/src/c.cu\", line 1 inlined at \"/src/c.cu\", line 2\n"
	"\t//## File \"/src/c.cu\", line 2 inlined at \"/src/c.cu\", line 3\n"
	"        /*0120*/                   FMUL R1, R1, R1 ;\n"
	"\t//## File \"/src/c.cu\", line 5 inlined at \"/src/c.cu\", line 3\n"
	"        /*0130*/                   FMUL R1, R1, R1 ;\n"
	"\t//## File \"/src/c.cu\", line 3\n"
	"        /*0140*/                   RET.REL.NODEC R20 `(k) ;\n"
	"//--------------------- SYMBOLS --------------------------\n";

static uint32_t fn(const struct gt_sass *s, const char *callee)
{
	for (uint32_t i = 0; i < s->n_functions; i++)
		if (!strcmp(s->functions[i].callee, callee))
			return i;
	return GT_SASS_NONE;
}

static void test_small(void)
{
	struct gt_sass *s = gt_sass__parse(small, sizeof(small) - 1, NULL, NULL);
	uint64_t w[21] = { 0 };
	struct gt_sass_gcct g;
	uint32_t in, out, f, gg, h, l;

	CHECK(s);
	CHECK_EQ_U(s->n_sections, 1);
	CHECK(!strcmp(s->sections[0].name, "k"));
	CHECK_EQ_U(s->n_insns, 21);
	CHECK_EQ_U(s->n_functions, 6);
	CHECK(s->functions[0].entry && !s->functions[1].entry);
	f = fn(s, "f"), gg = fn(s, "g"), h = fn(s, "h"), l = fn(s, "l");
	CHECK(f != GT_SASS_NONE && gg != GT_SASS_NONE && h != GT_SASS_NONE && l != GT_SASS_NONE);
	CHECK_EQ_U(s->insns[0].target, f);
	CHECK_EQ_U(s->insns[5].target, f); /* @P0 CALL in g */
	CHECK(s->insns[5].flags & GT_SASS_F_PRED);
	/* Lines: the first of an inlined chain; files shared. */
	CHECK_EQ_U(s->insns[5].line, 30);
	CHECK_EQ_U(s->n_files, 3);
	CHECK(!strcmp(s->files[s->insns[10].file], "/src/b.cu"));
	CHECK(!strcmp(s->files[s->insns[9].file], "/src/a.cu"));
	/* Classes. */
	CHECK_EQ_U(s->insns[6].cls, GT_SASS_FP32);
	CHECK_EQ_U(s->insns[8].cls, GT_SASS_SFU);
	CHECK_EQ_U(s->insns[11].cls, GT_SASS_GLOBAL);
	CHECK_EQ_U(s->insns[14].cls, GT_SASS_INT); /* UIADD3: the uniform form */
	CHECK_EQ_U(s->insns[0].cls, GT_SASS_CONTROL);
	CHECK_EQ_U(gt_sass__class_of("HMMA.16816.F32"), GT_SASS_TENSOR);
	CHECK_EQ_U(gt_sass__class_of("STL.64"), GT_SASS_LOCAL);
	CHECK_EQ_U(gt_sass__class_of("ULDC.64"), GT_SASS_OTHER);
	CHECK_EQ_U(gt_sass__class_of("DFMA"), GT_SASS_FP64);
	/* Nested loops in l: .L_x_2 inside .L_x_1; the self-loop after the
	 * RET is unreachable and no loop. */
	CHECK_EQ_U(s->n_loops, 2);
	in = s->insns[12].loop; /* FADD */
	out = s->insns[11].loop; /* LDG */
	CHECK(in != GT_SASS_NONE && out != GT_SASS_NONE && in != out);
	CHECK_EQ_U(s->loops[in].parent, out);
	CHECK_EQ_U(s->loops[out].parent, GT_SASS_NONE);
	CHECK_EQ_U(s->insns[s->loops[in].header].offset, 0xc0);
	CHECK_EQ_U(s->insns[s->loops[out].header].offset, 0xb0);
	CHECK_EQ_U(s->insns[14].loop, out);
	CHECK_EQ_U(s->insns[15].loop, out); /* the back edge's branch */
	CHECK_EQ_U(s->insns[10].loop, GT_SASS_NONE);
	CHECK_EQ_U(s->insns[16].loop, GT_SASS_NONE);
	CHECK_EQ_U(s->insns[17].loop, GT_SASS_NONE);
	CHECK_EQ_U(gt_sass__find(s, "k", 0xc0), 12);
	/* Inlined code: its own line, then the call sites outward; the
	 * chains share their outer call site. */
	{
		const struct gt_sass_inline *a, *b;

		CHECK_EQ_U(s->insns[18].line, 1);
		CHECK(s->insns[18].inl != GT_SASS_NONE && s->insns[19].inl != GT_SASS_NONE);
		a = &s->inlines[s->insns[18].inl];
		CHECK(a->line == 2 && a->parent != GT_SASS_NONE);
		CHECK(s->inlines[a->parent].line == 3 && s->inlines[a->parent].parent == GT_SASS_NONE);
		CHECK_EQ_U(s->insns[19].line, 5);
		CHECK_EQ_U(s->insns[19].inl, a->parent);
		b = &s->inlines[s->insns[19].inl];
		CHECK(!strcmp(s->files[b->file], "/src/c.cu"));
		CHECK_EQ_U(s->insns[20].inl, GT_SASS_NONE);
		CHECK_EQ_U(s->insns[20].line, 3);
		CHECK_EQ_U(s->insns[12].inl, GT_SASS_NONE);
		CHECK_EQ_U(s->n_inlines, 3); /* and g's, at a.cu:31 */
	}
	CHECK_EQ_U(gt_sass__find(s, "k", 0xc8), GT_SASS_NONE);
	CHECK_EQ_U(gt_sass__find(s, "other", 0xc0), GT_SASS_NONE);

	/* Registers: written, then read (the guard and addresses too). */
	CHECK(s->insns[11].n_def == 1 && s->insns[11].def[0] == 2); /* LDG.E R2, desc[UR4][R4.64] */
	CHECK(s->insns[11].n_use == 3 && s->insns[11].use[0] == GT_SASS_REG_UR + 4 && s->insns[11].use[1] == 4 &&
	      s->insns[11].use[2] == 5);
	CHECK(s->insns[13].n_def == 0 && s->insns[13].n_use == 1 && s->insns[13].use[0] == GT_SASS_REG_P + 1);
	/* The blamer: a wait for the load's result goes to the load; a wait
	 * for R1 to its writers on both paths into the FADD (the MOV before
	 * the loop, the FADD itself around the loop), by issued samples + 1. */
	{
		uint64_t stalls[21 * GT_SASS__WAITS] = { 0 }, issued[21] = { 0 };
		double blame[21 * GT_SASS__BLAMES];

		stalls[12 * GT_SASS__WAITS + GT_SASS_WAIT_LONG] = 10;
		stalls[12 * GT_SASS__WAITS + GT_SASS_WAIT_FIXED] = 6;
		stalls[6 * GT_SASS__WAITS + GT_SASS_WAIT_SHORT] = 5; /* FFMA in g, after a call */
		stalls[8 * GT_SASS__WAITS + GT_SASS_WAIT_SHORT] = 3; /* MUFU in h: nothing before it */
		issued[12] = 1;
		CHECK(gt_sass__blame(s, 0, stalls, issued, blame, NULL, NULL) == 0);
		CHECK(blame[11 * GT_SASS__BLAMES + GT_SASS_BLAME_GLOBAL] == 10.0);
		CHECK(blame[10 * GT_SASS__BLAMES + GT_SASS_BLAME_ARITH] == 2.0);
		CHECK(blame[12 * GT_SASS__BLAMES + GT_SASS_BLAME_ARITH] == 4.0);
		CHECK(blame[5 * GT_SASS__BLAMES + GT_SASS_BLAME_OTHER] == 5.0); /* a call writes any register */
		CHECK(blame[8 * GT_SASS__BLAMES + GT_SASS_BLAME_SELF] == 3.0);
	}

	/* Samples in g (a cycle with f), in h (no call reaches it) and in l;
	 * no call instruction sampled: each caller gets one call. */
	w[6] = 10;  /* FFMA in g */
	w[8] = 4;   /* MUFU in h */
	w[12] = 20; /* FADD in l */
	CHECK(gt_sass__gcct(s, 0, w, w, GT_SASS_MIN_SPLIT_SAMPLES, &g) == 0);
	CHECK_EQ_U(g.n_insns, 21);
	CHECK_EQ_U(g.vertex[3], g.vertex[5]); /* f and g: one vertex */
	CHECK(g.vertex[0] != g.vertex[3]);
	/* kernel; the cycle, called as f at line 10; l at line 11; h under
	 * the kernel with no call. */
	CHECK_EQ_U(g.n_contexts, 4);
	CHECK_EQ_U(g.contexts[0].parent, GT_SASS_NONE);
	for (uint32_t c = 1; c < 4; c++) {
		const struct gt_sass_context *x = &g.contexts[c];

		CHECK_EQ_U(x->parent, 0);
		CHECK(x->factor == 1.0);
		if (x->function == f)
			CHECK_EQ_U(x->call, 0);
		else if (x->function == l)
			CHECK_EQ_U(x->call, 1);
		else
			CHECK(x->function == h && x->call == GT_SASS_NONE);
	}
	gt_sass__gcct_fini(&g);
	gt_sass__delete(s);
	CHECK(gt_sass__parse("no code here\n", 13, NULL, NULL) == NULL);
}

/* samples/cuda/gpucalls as nvdisasm printed it on the GPU machine. */
/* A loop of independent loads summed (the loads' waits overlap when it is
 * unrolled), with a chain v = v * x + y in it (a recurrence: they do not),
 * then a conversion waited for after the loop. */
static const char rolled[] =
	"\t.section\t.text.u,\"ax\",@progbits\n"
	"        .type           u,@function\n"
	"        .other          u,@\"STO_CUDA_ENTRY STV_DEFAULT\"\n"
	"u:\n"
	".text.u:\n"
	"\t//## File \"/src/u.cu\", line 1\n"
	"        /*0000*/                   MOV R1, RZ ;\n"
	"        /*0010*/                   MOV R4, RZ ;\n"
	".L_x_1:\n"
	"\t//## File \"/src/u.cu\", line 2\n"
	"        /*0020*/                   LDG.E R2, desc[UR4][R4.64] ;\n"
	"        /*0030*/                   IADD3 R4, R4, 0x4, RZ ;\n"
	"        /*0040*/                   FADD R1, R1, R2 ;\n"
	"\t//## File \"/src/u.cu\", line 3\n"
	"        /*0050*/                   FFMA R6, R6, R7, R8 ;\n"
	"        /*0060*/                   FFMA R6, R6, R7, R8 ;\n"
	"        /*0070*/                   ISETP.NE.AND P0, PT, R4, R9, PT ;\n"
	"        /*0080*/               @P0 BRA `(.L_x_1) ;\n"
	"\t//## File \"/src/u.cu\", line 4\n"
	"        /*0090*/                   I2F.U32.RP R12, R13 ;\n"
	"        /*00a0*/                   MUFU.RCP R12, R12 ;\n"
	"        /*00b0*/                   STG.E desc[UR4][R10.64], R1 ;\n"
	"        /*00c0*/                   EXIT ;\n"
	"//--------------------- SYMBOLS --------------------------\n";

static void test_inloop(void)
{
	struct gt_sass *s = gt_sass__parse(rolled, sizeof(rolled) - 1, NULL, NULL);
	uint64_t stalls[13 * GT_SASS__WAITS] = { 0 }, issued[13] = { 0 };
	double blame[13 * GT_SASS__BLAMES], inloop[13];

	CHECK(s);
	CHECK_EQ_U(s->n_insns, 13);
	CHECK_EQ_U(s->n_loops, 1);
	CHECK(s->insns[2].loop == 0 && s->insns[8].loop == 0 && s->insns[1].loop == GT_SASS_NONE);
	stalls[4 * GT_SASS__WAITS + GT_SASS_WAIT_LONG] = 10; /* FADD for the load */
	stalls[4 * GT_SASS__WAITS + GT_SASS_WAIT_FIXED] = 4; /* FADD for the last FADD, or the MOV */
	stalls[6 * GT_SASS__WAITS + GT_SASS_WAIT_FIXED] = 6; /* the chain's second FFMA for its first */
	stalls[10 * GT_SASS__WAITS + GT_SASS_WAIT_SHORT] = 3; /* MUFU for the conversion */
	CHECK(gt_sass__blame(s, 0, stalls, issued, blame, inloop, NULL) == 0);
	CHECK(blame[2 * GT_SASS__BLAMES + GT_SASS_BLAME_GLOBAL] == 10.0);
	CHECK(blame[0 * GT_SASS__BLAMES + GT_SASS_BLAME_ARITH] == 2.0);
	CHECK(blame[4 * GT_SASS__BLAMES + GT_SASS_BLAME_ARITH] == 2.0);
	CHECK(blame[5 * GT_SASS__BLAMES + GT_SASS_BLAME_ARITH] == 6.0);
	CHECK(blame[9 * GT_SASS__BLAMES + GT_SASS_BLAME_CONVERT] == 3.0);
	/* Only the load's waits are the loop's to overlap: the FADD and the
	 * FFMA wait for their own last results (recurrences), the MOV and the
	 * conversion are outside the loop. Unrolled 4 times, 3/4 of them go. */
	for (uint32_t i = 0; i < 13; i++)
		CHECK(inloop[i] == (i == 2 ? 7.5 : 0.0));
	gt_sass__delete(s);
}

/* A loop whose body is a load, then one chain of 1,000 additions through
 * 200 registers in turn, the first reading the last's result around the
 * back edge: a recurrence longer than any search the blamer bounds. Each
 * addition waits for the one before it (the recurrence's: not counted) and
 * the first also for the load, which the chain does not feed (counted). */
static void test_long_recurrence(void)
{
	enum { N = 1000 };
	size_t cap = 300 + (N + 8) * 64, len;
	char *text = malloc(cap);
	struct gt_sass *s;
	uint64_t *stalls = calloc((N + 4) * GT_SASS__WAITS, sizeof(*stalls)), *issued = calloc(N + 4, sizeof(*issued));
	double *blame = malloc((N + 4) * GT_SASS__BLAMES * sizeof(*blame)), *inloop = malloc((N + 4) * sizeof(*inloop));
	double counted = 0;

	CHECK(text && stalls && issued && blame && inloop);
	len = (size_t)snprintf(text, cap, "\t.section\t.text.r,\"ax\",@progbits\n        .type r,@function\n"
					  "        .other r,@\"STO_CUDA_ENTRY STV_DEFAULT\"\nr:\n.text.r:\n"
					  "        /*0000*/ MOV R1, RZ ;\n.L_x_1:\n"
					  "        /*0010*/ LDG.E R240, desc[UR4][R250.64] ;\n");
	for (int i = 0; i < N; i++)
		len += (size_t)snprintf(text + len, cap - len, "        /*%04x*/ FADD R%d, R%d, R240 ;\n", (i + 2) * 16,
					2 + i % 200, 2 + (i + N - 1) % 200);
	len += (size_t)snprintf(text + len, cap - len, "        /*%04x*/ @P0 BRA `(.L_x_1) ;\n        /*%04x*/ EXIT ;\n",
				(N + 2) * 16, (N + 3) * 16);
	CHECK((s = gt_sass__parse(text, len, NULL, NULL)));
	CHECK_EQ_U(s->n_insns, N + 4);
	CHECK_EQ_U(s->n_loops, 1);
	stalls[2 * GT_SASS__WAITS + GT_SASS_WAIT_LONG] = 7; /* the first addition, for the load */
	for (uint32_t i = 2; i < N + 2; i++)
		stalls[i * GT_SASS__WAITS + GT_SASS_WAIT_FIXED] = 4; /* each, for the addition before */
	CHECK(gt_sass__blame(s, 0, stalls, issued, blame, inloop, NULL) == 0);
	for (uint32_t i = 0; i < N + 4; i++)
		counted += inloop[i];
	CHECK(blame[1 * GT_SASS__BLAMES + GT_SASS_BLAME_GLOBAL] == 7.0);
	CHECK(inloop[1] == 5.25 && counted == 5.25);
	free(text);
	free(stalls);
	free(issued);
	free(blame);
	free(inloop);
	gt_sass__delete(s);
}

/* A loop unrolled @copies times already: that many loads of one source
 * line, each summed. Unrolling it 4 times hides 1 - copies / 4 of the
 * waits for the loads, nothing from 4 copies on. */
static void test_unrolled(int copies)
{
	char text[2048];
	size_t len;
	struct gt_sass *s;
	uint64_t stalls[16 * GT_SASS__WAITS] = { 0 }, issued[16] = { 0 };
	double blame[16 * GT_SASS__BLAMES], inloop[16], counted = 0, want;

	len = (size_t)snprintf(text, sizeof(text), "\t.section\t.text.v,\"ax\",@progbits\n        .type v,@function\n"
						   "        .other v,@\"STO_CUDA_ENTRY STV_DEFAULT\"\nv:\n.text.v:\n"
						   "\t//## File \"/src/v.cu\", line 1\n        /*0000*/ MOV R1, RZ ;\n"
						   ".L_x_1:\n\t//## File \"/src/v.cu\", line 2\n");
	for (int i = 0; i < copies; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "        /*%04x*/ LDG.E R%d, desc[UR4][R%d.64] ;\n",
					(1 + i) * 16, 10 + i, 20 + 2 * i);
	for (int i = 0; i < copies; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "        /*%04x*/ FADD R1, R1, R%d ;\n",
					(1 + copies + i) * 16, 10 + i);
	len += (size_t)snprintf(text + len, sizeof(text) - len,
				"\t//## File \"/src/v.cu\", line 3\n        /*%04x*/ @P0 BRA `(.L_x_1) ;\n"
				"        /*%04x*/ EXIT ;\n",
				(1 + 2 * copies) * 16, (2 + 2 * copies) * 16);
	CHECK((s = gt_sass__parse(text, len, NULL, NULL)));
	CHECK_EQ_U(s->n_insns, 3 + 2 * (uint32_t)copies);
	for (int i = 0; i < copies; i++)
		stalls[(size_t)(1 + copies + i) * GT_SASS__WAITS + GT_SASS_WAIT_LONG] = 8; /* each FADD, for its load */
	CHECK(gt_sass__blame(s, 0, stalls, issued, blame, inloop, NULL) == 0);
	for (int i = 0; i < copies; i++) {
		CHECK(blame[(size_t)(1 + i) * GT_SASS__BLAMES + GT_SASS_BLAME_GLOBAL] == 8.0);
		counted += inloop[1 + i];
	}
	want = copies >= 4 ? 0 : 8.0 * copies * (1.0 - copies / 4.0);
	CHECK(counted == want);
	gt_sass__delete(s);
}

/*
 * A loop that holds 4 loads of one source line, as if unrolled 4 times,
 * whose counter steps by @step: two 16-byte fields of one element in each
 * of two copies (step 2) read 4 loads of one line, but the counter says 2
 * copies, and unrolling it 4 times hides half of the waits; with step 4,
 * none. @via: the compare reads the counter plus 3 (as a loop unrolled by
 * the compiler compares its last copy's index), not the counter itself,
 * made after the counter's step (1) or before it (2).
 */
static void test_counter(int step, int via)
{
	char text[2048];
	size_t len;
	struct gt_sass *s;
	uint64_t stalls[16 * GT_SASS__WAITS] = { 0 }, issued[16] = { 0 };
	double blame[16 * GT_SASS__BLAMES], inloop[16], counted = 0;
	uint32_t n = via ? 12 : 11;
	char counter[64], plus3[64];

	snprintf(counter, sizeof(counter), "IADD3 R0, R0, 0x%x, RZ", step);
	snprintf(plus3, sizeof(plus3), "VIADD R37, R0, 0x3");
	len = (size_t)snprintf(text, sizeof(text),
			       "\t.section\t.text.w,\"ax\",@progbits\n        .type w,@function\n"
			       "        .other w,@\"STO_CUDA_ENTRY STV_DEFAULT\"\nw:\n.text.w:\n"
			       "\t//## File \"/src/w.cu\", line 1\n        /*0000*/ MOV R1, RZ ;\n"
			       ".L_x_1:\n\t//## File \"/src/w.cu\", line 2\n"
			       "        /*0010*/ LDS.128 R12, [R4] ;\n"
			       "        /*0020*/ LDS.128 R16, [R4+0x10] ;\n"
			       "        /*0030*/ LDS.128 R20, [R4+0x20] ;\n"
			       "        /*0040*/ LDS.128 R24, [R4+0x30] ;\n"
			       "        /*0050*/ FADD R30, R12, R13 ;\n"
			       "        /*0060*/ FADD R31, R20, R21 ;\n"
			       "\t//## File \"/src/w.cu\", line 3\n"
			       "        /*0070*/ %s ;\n",
			       via == 2 ? plus3 : counter);
	if (via)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"        /*0080*/ %s ;\n"
					"        /*0090*/ ISETP.NE.AND P0, PT, R37, 0x64, PT ;\n"
					"        /*00a0*/ @P0 BRA `(.L_x_1) ;\n        /*00b0*/ EXIT ;\n",
					via == 2 ? counter : plus3);
	else
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"        /*0080*/ ISETP.NE.AND P0, PT, R0, 0x64, PT ;\n"
					"        /*0090*/ @P0 BRA `(.L_x_1) ;\n        /*00a0*/ EXIT ;\n");
	CHECK((s = gt_sass__parse(text, len, NULL, NULL)));
	CHECK_EQ_U(s->n_insns, n);
	CHECK_EQ_U(s->n_loops, 1);
	CHECK(s->insns[via == 2 ? 8 : 7].addi == step && s->insns[5].addi == 0);
	CHECK(!via || s->insns[via == 2 ? 7 : 8].addi == 3);
	stalls[5 * GT_SASS__WAITS + GT_SASS_WAIT_SHORT] = 8; /* each FADD, for its copy's first field */
	stalls[6 * GT_SASS__WAITS + GT_SASS_WAIT_SHORT] = 8;
	CHECK(gt_sass__blame(s, 0, stalls, issued, blame, inloop, NULL) == 0);
	for (uint32_t i = 0; i < n; i++)
		counted += inloop[i];
	CHECK(counted == (step >= 4 ? 0.0 : 16.0 * (1.0 - step / 4.0)));
	gt_sass__delete(s);
}

/* The immediates of integer adds (gt_sass_insn.addi): one register and
 * one immediate, the others RZ; anything else is 0. */
static void test_addi(void)
{
	static const char text[] = "\t.section\t.text.a,\"ax\",@progbits\n        .type a,@function\n"
				   "        .other a,@\"STO_CUDA_ENTRY STV_DEFAULT\"\na:\n.text.a:\n"
				   "        /*0000*/ IADD3 R1, R2, -0x1, RZ ;\n"
				   "        /*0010*/ VIADD R3, R3.reuse, 0x100 ;\n"
				   "        /*0020*/ IADD3 R4, R5, R6, RZ ;\n"
				   "        /*0030*/ IADD3.X R7, R7, 0x1, RZ ;\n"
				   "        /*0040*/ VIADD R8, R8, UR4 ;\n"
				   "        /*0050*/ @P0 IADD3 R9, R9, 0x2, RZ ;\n"
				   "        /*0060*/ IADD3 R10, R10, 0x123456789, RZ ;\n"
				   "        /*0070*/ IADD3 R11, R11, 0x7fffffff, RZ ;\n"
				   "        /*0080*/ EXIT ;\n";
	struct gt_sass *s = gt_sass__parse(text, sizeof(text) - 1, NULL, NULL);
	static const int32_t want[] = { -1, 0x100, 0, 0, 0, 0, 0, 0x7fffffff, 0 };

	CHECK(s);
	CHECK_EQ_U(s->n_insns, 9);
	for (uint32_t i = 0; s && i < 9; i++)
		CHECK(s->insns[i].addi == want[i]);
	gt_sass__delete(s);
}

/* The same 4 loads of one line, stepped by 1, in a loop around another:
 * they are taken as an inner loop's peeled iterations, which copies of
 * the outer loop would not overlap, and the loads' count stands. */
static void test_counter_outer(void)
{
	static const char text[] = "\t.section\t.text.o,\"ax\",@progbits\n        .type o,@function\n"
				   "        .other o,@\"STO_CUDA_ENTRY STV_DEFAULT\"\no:\n.text.o:\n"
				   "\t//## File \"/src/o.cu\", line 1\n        /*0000*/ MOV R1, RZ ;\n"
				   ".L_x_1:\n\t//## File \"/src/o.cu\", line 2\n"
				   "        /*0010*/ LDG.E R12, desc[UR4][R4.64] ;\n"
				   "        /*0020*/ LDG.E R13, desc[UR4][R4.64+0x4] ;\n"
				   "        /*0030*/ LDG.E R14, desc[UR4][R4.64+0x8] ;\n"
				   "        /*0040*/ LDG.E R15, desc[UR4][R4.64+0xc] ;\n"
				   "\t//## File \"/src/o.cu\", line 3\n"
				   ".L_x_2:\n"
				   "        /*0050*/ FADD R30, R30, 1 ;\n"
				   "        /*0060*/ @P1 BRA `(.L_x_2) ;\n"
				   "\t//## File \"/src/o.cu\", line 2\n"
				   "        /*0070*/ FADD R31, R12, R13 ;\n"
				   "        /*0080*/ FADD R32, R14, R15 ;\n"
				   "\t//## File \"/src/o.cu\", line 4\n"
				   "        /*0090*/ IADD3 R0, R0, 0x1, RZ ;\n"
				   "        /*00a0*/ ISETP.NE.AND P0, PT, R0, 0x64, PT ;\n"
				   "        /*00b0*/ @P0 BRA `(.L_x_1) ;\n        /*00c0*/ EXIT ;\n";
	struct gt_sass *s = gt_sass__parse(text, sizeof(text) - 1, NULL, NULL);
	uint64_t stalls[16 * GT_SASS__WAITS] = { 0 }, issued[16] = { 0 };
	double blame[16 * GT_SASS__BLAMES], inloop[16], counted = 0;

	CHECK(s);
	CHECK_EQ_U(s->n_insns, 13);
	CHECK_EQ_U(s->n_loops, 2);
	CHECK(s->insns[7].loop != GT_SASS_NONE && s->insns[7].loop == s->insns[1].loop);
	stalls[7 * GT_SASS__WAITS + GT_SASS_WAIT_LONG] = 8; /* each FADD, for its loads */
	stalls[8 * GT_SASS__WAITS + GT_SASS_WAIT_LONG] = 8;
	CHECK(gt_sass__blame(s, 0, stalls, issued, blame, inloop, NULL) == 0);
	for (uint32_t i = 0; i < 13; i++)
		counted += inloop[i];
	CHECK(counted == 0.0);
	gt_sass__delete(s);
}

/* The integer division idiom: the divisor's I2F.RP, its reciprocal, and
 * what reads them up to the quotient and the remainder cause CONVERT
 * waits; an instruction beside them that does not read them (the
 * divisor's negation), and the load that uses the result, do not. */
static const char divide[] =
	"\t.section\t.text.d,\"ax\",@progbits\n"
	"        .type           d,@function\n"
	"        .other          d,@\"STO_CUDA_ENTRY STV_DEFAULT\"\n"
	"d:\n"
	".text.d:\n"
	"        /*0000*/                   I2F.U32.RP R2, R3 ;\n"
	"        /*0010*/                   MUFU.RCP R2, R2 ;\n"
	"        /*0020*/                   IADD3 R4, R2, 0xffffffe, RZ ;\n"
	"        /*0030*/                   F2I.FTZ.U32.TRUNC.NTZ R5, R4 ;\n"
	"        /*0040*/                   IMAD.MOV R6, RZ, RZ, -R3 ;\n"
	"        /*0050*/                   IMAD R7, R6, R5, RZ ;\n"
	"        /*0060*/                   IMAD.HI.U32 R8, R5, R7, R4 ;\n"
	"        /*0070*/                   IMAD.HI.U32 R9, R8, R10, RZ ;\n"
	"        /*0080*/                   IMAD R13, R9, R3, R10 ;\n"
	"        /*0090*/                   IMAD.WIDE R14, R13, 0x4, R16 ;\n"
	"        /*00a0*/                   LDG.E R11, desc[UR4][R14.64] ;\n"
	"        /*00b0*/                   FADD R12, R11, R11 ;\n"
	"        /*00c0*/                   EXIT ;\n";

static void test_divide(void)
{
	struct gt_sass *s = gt_sass__parse(divide, sizeof(divide) - 1, NULL, NULL);
	uint64_t stalls[13 * GT_SASS__WAITS] = { 0 }, issued[13] = { 0 };
	double blame[13 * GT_SASS__BLAMES];

	CHECK(s);
	CHECK_EQ_U(s->n_insns, 13);
	CHECK(s->insns[0].flags & GT_SASS_F_DIVISOR);
	CHECK(!(s->insns[3].flags & GT_SASS_F_DIVISOR));
	stalls[1 * GT_SASS__WAITS + GT_SASS_WAIT_SHORT] = 3;  /* the reciprocal, for the conversion */
	stalls[5 * GT_SASS__WAITS + GT_SASS_WAIT_FIXED] = 2;  /* for the negation and the reciprocal */
	stalls[8 * GT_SASS__WAITS + GT_SASS_WAIT_FIXED] = 6;  /* the remainder, for the quotient */
	stalls[10 * GT_SASS__WAITS + GT_SASS_WAIT_FIXED] = 5; /* the load, for its address */
	stalls[11 * GT_SASS__WAITS + GT_SASS_WAIT_LONG] = 4;  /* the addition, for the load */
	CHECK(gt_sass__blame(s, 0, stalls, issued, blame, NULL, NULL) == 0);
	CHECK(blame[0 * GT_SASS__BLAMES + GT_SASS_BLAME_CONVERT] == 3.0);
	CHECK(blame[4 * GT_SASS__BLAMES + GT_SASS_BLAME_ARITH] == 1.0);
	CHECK(blame[3 * GT_SASS__BLAMES + GT_SASS_BLAME_CONVERT] == 1.0);
	CHECK(blame[7 * GT_SASS__BLAMES + GT_SASS_BLAME_CONVERT] == 6.0);
	CHECK(blame[9 * GT_SASS__BLAMES + GT_SASS_BLAME_CONVERT] == 5.0); /* the address of the remainder */
	CHECK(blame[10 * GT_SASS__BLAMES + GT_SASS_BLAME_GLOBAL] == 4.0);
	gt_sass__delete(s);
}

/* The idioms' starts and extents: a precise sinf's reduction (times 2/pi)
 * and expf's rounding (FFMA.RM by 12582913) start one, their fast forms
 * (MUFU.SIN, MUFU.EX2 alone) none; a reciprocal computed before a loop
 * starts one that the loop's multiplications by it do not join; a path
 * around the idiom that writes its result (sinf's slow path) neither joins
 * it nor cuts it off from the code after the paths meet. */
static const char idioms[] =
	"\t.section\t.text.m,\"ax\",@progbits\n"
	"        .type           m,@function\n"
	"        .other          m,@\"STO_CUDA_ENTRY STV_DEFAULT\"\n"
	"m:\n"
	".text.m:\n"
	"        /*0000*/                   I2F.U32.RP R2, R3 ;\n"
	"        /*0010*/                   MUFU.RCP R2, R2 ;\n"
	"        /*0020*/                   F2I.FTZ.U32.TRUNC.NTZ R5, R2 ;\n"
	".L_x_1:\n"
	"        /*0030*/                   IMAD.HI.U32 R8, R5, R7, RZ ;\n"
	"        /*0040*/                   FMUL R6, R4, 0.63661974668502807617 ;\n"
	"        /*0050*/                   F2I.NTZ R6, R6 ;\n"
	"        /*0060*/                   I2FP.F32.S32 R9, R6 ;\n"
	"        /*0070*/                   FFMA R0, R9, -1.5707962512969970703, R4 ;\n"
	"        /*0080*/              @!P0 BRA `(.L_x_2) ;\n"
	"        /*0090*/                   FMUL R0, R10, R11 ;\n"
	".L_x_2:\n"
	"        /*00a0*/                   FMUL R14, R0, R0 ;\n"
	"        /*00b0*/                   FFMA.RM R8, R12, R13, 12582913 ;\n"
	"        /*00c0*/                   FADD R15, R8, -12583039 ;\n"
	"        /*00d0*/                   MUFU.SIN R16, R17 ;\n"
	"        /*00e0*/                   MUFU.EX2 R18, R19 ;\n"
	"        /*00f0*/                   FMUL R20, R16, R18 ;\n"
	"        /*0100*/              @P1 BRA `(.L_x_1) ;\n"
	"        /*0110*/                   EXIT ;\n";

static void test_idioms(void)
{
	struct gt_sass *s = gt_sass__parse(idioms, sizeof(idioms) - 1, NULL, NULL);
	/* Marked: the reciprocal before the loop (0-2); in the loop, the
	 * reduction (4-7) and what reads its result where the paths meet
	 * (10), expf's rounding and its use (11, 12). Not: the loop's
	 * multiply-high by the reciprocal (3), the branch (8), the slow path's
	 * write (9), the fast forms (13-15), the loop's branch and the exit.
	 * Of the marked ones, each idiom's start and the first instruction
	 * that reads it (0-1, 4-5, 11-12) stand for the cheaper form's one or
	 * two: @idiom has the others, which the cheaper form removes. */
	static const uint8_t want[18] = { 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0 };
	uint64_t stalls[18 * GT_SASS__WAITS] = { 0 }, issued[18] = { 0 };
	double blame[18 * GT_SASS__BLAMES];
	uint8_t mark[18];

	CHECK(s);
	CHECK_EQ_U(s->n_insns, 18);
	CHECK_EQ_U(s->n_loops, 1);
	CHECK((s->insns[4].flags & GT_SASS_F_MATH) && (s->insns[11].flags & GT_SASS_F_MATH));
	CHECK(!(s->insns[9].flags & GT_SASS_F_MATH) && !(s->insns[14].flags & GT_SASS_F_MATH));
	CHECK(gt_sass__blame(s, 0, stalls, issued, blame, NULL, mark) == 0);
	for (uint32_t i = 0; i < 18; i++)
		CHECK(mark[i] == want[i]);
	gt_sass__delete(s);
}

/* Precise float division's and sqrtf's inline fast paths: the
 * reciprocal's Newton steps after MUFU.RCP, and the refinement of MUFU.RSQ
 * beside the argument's range check. Each ends with its result: the
 * multiplication that uses the quotient and the root (13) is not part.
 * __fdividef's MUFU.RCP and multiplication (14, 15) start none. */
static const char fast_paths[] =
	"\t.section\t.text.f,\"ax\",@progbits\n"
	"        .type           f,@function\n"
	"        .other          f,@\"STO_CUDA_ENTRY STV_DEFAULT\"\n"
	"f:\n"
	".text.f:\n"
	"        /*0000*/                   MUFU.RCP R5, R32 ;\n"
	"        /*0010*/                   FFMA R0, -R32, R5, 1 ;\n"
	"        /*0020*/                   FFMA R15, R5, R0, R5 ;\n"
	"        /*0030*/                   FFMA R0, R2, R15, RZ ;\n"
	"        /*0040*/                   FFMA R4, -R32, R0, R2 ;\n"
	"        /*0050*/                   FFMA R15, R15, R4, R0 ;\n"
	"        /*0060*/                   MUFU.RSQ R3, R10 ;\n"
	"        /*0070*/                   IADD3 R6, R10, -0xd000000, RZ ;\n"
	"        /*0080*/                   ISETP.GT.U32.AND P0, PT, R6, 0x727fffff, PT ;\n"
	"        /*0090*/                   FMUL.FTZ R23, R10, R3 ;\n"
	"        /*00a0*/                   FMUL.FTZ R3, R3, 0.5 ;\n"
	"        /*00b0*/                   FFMA R7, -R23, R23, R10 ;\n"
	"        /*00c0*/                   FFMA R23, R7, R3, R23 ;\n"
	"        /*00d0*/                   FMUL R24, R15, R23 ;\n"
	"        /*00e0*/                   MUFU.RCP R8, R9 ;\n"
	"        /*00f0*/                   FMUL R25, R8, R24 ;\n"
	"        /*0100*/                   EXIT ;\n";

static void test_fast_paths(void)
{
	struct gt_sass *s = gt_sass__parse(fast_paths, sizeof(fast_paths) - 1, NULL, NULL);
	/* What the cheaper forms remove: four of the five Newton steps (the
	 * first stands for the multiplication by MUFU.RCP's result), the
	 * range check, its comparison and the root's refinement (MUFU.RSQ
	 * stands for MUFU.SQRT). */
	static const uint8_t want[17] = { 0, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0 };
	uint64_t stalls[17 * GT_SASS__WAITS] = { 0 }, issued[17] = { 0 };
	double blame[17 * GT_SASS__BLAMES];
	uint8_t mark[17];

	CHECK(s);
	CHECK_EQ_U(s->n_insns, 17);
	CHECK(s->insns[1].flags & GT_SASS_F_RECIP);
	CHECK(!(s->insns[4].flags & GT_SASS_F_RECIP)); /* -a b + c: no reciprocal's step */
	CHECK((s->insns[7].flags & GT_SASS_F_SQRT) && (s->insns[6].flags & GT_SASS_F_RSQ));
	CHECK(gt_sass__blame(s, 0, stalls, issued, blame, NULL, mark) == 0);
	for (uint32_t i = 0; i < 17; i++)
		CHECK(mark[i] == want[i]);
	gt_sass__delete(s);
}

/* An idiom's slow path and the constants only it reads: sinf's paths
 * (BSSY B0 ... BSYNC B0) around its start, with the branch after it that
 * the range check of its argument (|R4| against 105615) decides, and a
 * polynomial coefficient set into a register. Not: the program's own
 * condition around the idiom (B1, its branch tested before the start), a
 * constant that the program's code reads too, the accumulator's start
 * set outside the loop. */
static const char slow_paths[] =
	"\t.section\t.text.p,\"ax\",@progbits\n"
	"        .type           p,@function\n"
	"        .other          p,@\"STO_CUDA_ENTRY STV_DEFAULT\"\n"
	"p:\n"
	".text.p:\n"
	"        /*0000*/                   HFMA2.MMA R3, -RZ, RZ, 0, 0 ;\n"
	".L_x_1:\n"
	"        /*0010*/                   ISETP.GE.AND P2, PT, R30, 0x1, PT ;\n"
	"        /*0020*/                   BSSY B1, `(.L_x_4) ;\n"
	"        /*0030*/              @!P2 BRA `(.L_x_4) ;\n"
	"        /*0040*/                   BSSY B0, `(.L_x_3) ;\n"
	"        /*0050*/                   FMUL R6, R4, 0.63661974668502807617 ;\n"
	"        /*0060*/                   FSETP.GE.AND P0, PT, |R4|, 105615, PT ;\n"
	"        /*0070*/                   F2I.NTZ R6, R6 ;\n"
	"        /*0080*/                   I2FP.F32.S32 R9, R6 ;\n"
	"        /*0090*/                   FFMA R0, R9, -1.5707962512969970703, R4 ;\n"
	"        /*00a0*/              @!P0 BRA `(.L_x_2) ;\n"
	"        /*00b0*/                   FMUL R0, RZ, R4 ;\n"
	".L_x_2:\n"
	"        /*00c0*/                   BSYNC B0 ;\n"
	".L_x_3:\n"
	"        /*00d0*/                   HFMA2.MMA R7, -RZ, RZ, 3.7421875, 0 ;\n"
	"        /*00e0*/                   IMAD.MOV.U32 R12, RZ, RZ, 0x3c0885e4 ;\n"
	"        /*00f0*/                   FMUL R14, R0, R0 ;\n"
	"        /*0100*/                   FFMA R14, R14, R7, R12 ;\n"
	"        /*0110*/                   FADD R21, R12, R22 ;\n"
	"        /*0120*/                   FFMA R3, R14, R5, R3 ;\n"
	"        /*0130*/                   BSYNC B1 ;\n"
	".L_x_4:\n"
	"        /*0140*/               @P1 BRA `(.L_x_1) ;\n"
	"        /*0150*/                   EXIT ;\n";

static void test_slow_paths(void)
{
	struct gt_sass *s = gt_sass__parse(slow_paths, sizeof(slow_paths) - 1, NULL, NULL);
	/* What the cheaper form removes: the idiom's BSSY (4), its range
	 * check (6) and branch (10), its BSYNC (12) and the coefficient (13),
	 * besides the reduction and what reads it (8, 9, 15, 16, 18; 5 and 7
	 * stand for __sinf's two). */
	static const uint8_t want[22] = { 0, 0, 0, 0, 1, 0, 1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 0, 0, 0 };
	uint64_t stalls[22 * GT_SASS__WAITS] = { 0 }, issued[22] = { 0 };
	double blame[22 * GT_SASS__BLAMES];
	uint8_t mark[22];

	CHECK(s);
	CHECK_EQ_U(s->n_insns, 22);
	CHECK_EQ_U(s->n_loops, 1);
	CHECK((s->insns[4].flags & GT_SASS_F_SPLIT) && (s->insns[12].flags & GT_SASS_F_JOIN));
	CHECK((s->insns[0].flags & GT_SASS_F_CONST) && (s->insns[13].flags & GT_SASS_F_CONST) &&
	      (s->insns[14].flags & GT_SASS_F_CONST) && !(s->insns[17].flags & GT_SASS_F_CONST));
	CHECK(gt_sass__blame(s, 0, stalls, issued, blame, NULL, mark) == 0);
	for (uint32_t i = 0; i < 22; i++)
		CHECK(mark[i] == want[i]);
	gt_sass__delete(s);
}

static void test_gpucalls(const char *path)
{
	FILE *fp = fopen(path, "r");
	char *text = malloc(1 << 22);
	size_t len;
	struct gt_sass *s;
	uint32_t sec, n_calls = 0, calls_seen = 0, a_line = 0, b_line = 0, n_a = 0, n_b = 0;
	struct gt_sass_gcct g;
	uint64_t *w, *zero;

	CHECK(fp && text);
	len = fread(text, 1, (1 << 22) - 1, fp);
	fclose(fp);
	text[len] = 0;
	for (const char *p = text; (p = strstr(p, "CALL.REL")); p++)
		n_calls++;
	CHECK((s = gt_sass__parse(text, len, NULL, NULL)));
	CHECK_EQ_U(s->n_sections, 3);
	for (uint32_t i = 0; i < s->n_sections; i++) {
		const struct gt_sass_function *k = &s->functions[s->insns[s->sections[i].first].function];

		CHECK(k->entry && !strcmp(k->name, s->sections[i].name));
	}
	for (uint32_t i = 0; i < s->n_insns; i++) {
		const struct gt_sass_insn *in = &s->insns[i];

		if (!(in->flags & GT_SASS_F_CALL))
			continue;
		calls_seen++;
		CHECK(in->target != GT_SASS_NONE);
		CHECK_EQ_U(s->functions[in->target].section, s->functions[in->function].section);
	}
	CHECK_EQ_U(calls_seen, n_calls);
	/* work() has its loop in every kernel's copy. */
	for (uint32_t f = 0; f < s->n_functions; f++) {
		int loops = 0;

		if (strcmp(s->functions[f].callee, "_Z4workfii"))
			continue;
		for (uint32_t l = 0; l < s->n_loops; l++)
			loops += s->loops[l].function == f;
		CHECK(loops > 0);
	}

	/* two_sites: work() called at two lines; every call sampled 3 times
	 * at the first line, once at the second, at its instruction and at
	 * its return: work()'s cost goes 3:1 per call instruction. */
	sec = gt_sass__section(s, "_Z9two_sitesPfii");
	CHECK(sec != GT_SASS_NONE);
	w = calloc(s->sections[sec].end - s->sections[sec].first, sizeof(*w));
	zero = calloc(s->sections[sec].end - s->sections[sec].first, sizeof(*zero));
	CHECK(w && zero);
	for (uint32_t i = s->sections[sec].first; i < s->sections[sec].end; i++) {
		const struct gt_sass_insn *in = &s->insns[i];

		if (!w[i - s->sections[sec].first])
			w[i - s->sections[sec].first] = 1;
		if (!(in->flags & GT_SASS_F_CALL))
			continue;
		if (!a_line || in->line == a_line) {
			a_line = in->line;
			w[i - s->sections[sec].first] = w[i + 1 - s->sections[sec].first] = 3;
			n_a++;
		} else {
			CHECK(!b_line || in->line == b_line);
			b_line = in->line;
			w[i + 1 - s->sections[sec].first] = 1;
			n_b++;
		}
	}
	CHECK(n_a && n_b);
	CHECK(gt_sass__gcct(s, sec, w, zero, GT_SASS_MIN_SPLIT_SAMPLES, &g) == 0);
	CHECK_EQ_U(g.n_contexts, 3);
	{
		double fa = 0, fb = 0, want = 3.0 * n_a / (3.0 * n_a + n_b);

		for (uint32_t c = 1; c < 3; c++) {
			CHECK_EQ_U(g.contexts[c].parent, 0);
			if (s->insns[g.contexts[c].call].line == a_line)
				fa = g.contexts[c].factor;
			else
				fb = g.contexts[c].factor;
		}
		printf("  two_sites: work() at line %u: %.4f, at line %u: %.4f\n", a_line, fa, b_line, fb);
		CHECK(fa > want - 1e-9 && fa < want + 1e-9 && fa + fb > 1 - 1e-9 && fa + fb < 1 + 1e-9);
		CHECK(!g.contexts[1].undetermined && !g.contexts[2].undetermined);
	}
	gt_sass__gcct_fini(&g);
	/* Issued samples count the calls where there are enough: ten per
	 * call instruction, whatever their stall samples. */
	for (uint32_t i = s->sections[sec].first; i < s->sections[sec].end; i++)
		zero[i - s->sections[sec].first] = (s->insns[i].flags & GT_SASS_F_CALL) ? 10 : 0;
	CHECK(gt_sass__gcct(s, sec, w, zero, GT_SASS_MIN_SPLIT_SAMPLES, &g) == 0);
	CHECK_EQ_U(g.n_contexts, 3);
	for (uint32_t c = 1; c < 3; c++) {
		double want = (s->insns[g.contexts[c].call].line == a_line ? n_a : n_b) / (double)(n_a + n_b);

		CHECK(g.contexts[c].factor > want - 1e-9 && g.contexts[c].factor < want + 1e-9);
	}
	gt_sass__gcct_fini(&g);
	memset(zero, 0, (s->sections[sec].end - s->sections[sec].first) * sizeof(*zero));
	/* No call sampled: each call site gets one call, and says it is a
	 * guess. */
	for (uint32_t i = s->sections[sec].first; i < s->sections[sec].end; i++)
		if (s->insns[i].flags & GT_SASS_F_CALL)
			w[i - s->sections[sec].first] = w[i + 1 - s->sections[sec].first] = 0;
	CHECK(gt_sass__gcct(s, sec, w, zero, GT_SASS_MIN_SPLIT_SAMPLES, &g) == 0);
	CHECK_EQ_U(g.n_contexts, 3);
	CHECK(g.contexts[1].factor == 0.5 && g.contexts[2].factor == 0.5);
	CHECK(g.contexts[1].undetermined && g.contexts[2].undetermined);
	gt_sass__gcct_fini(&g);
	/* A few samples at the calls, thousands in work(): one of the sites'
	 * calls sampled once, no other. That sample does not make a split of
	 * 0 : 1 (it did); too few to tell the sites apart, it is an even one,
	 * marked undetermined. */
	{
		uint32_t first = s->sections[sec].first, one = GT_SASS_NONE, sampled = 0;

		for (uint32_t i = first; i < s->sections[sec].end; i++) {
			w[i - first] = zero[i - first] = 0;
			if (!strcmp(s->functions[s->insns[i].function].callee, "_Z4workfii"))
				w[i - first] = 100, sampled += 100;
			else if ((s->insns[i].flags & GT_SASS_F_CALL) && s->insns[i].line == b_line && one == GT_SASS_NONE)
				one = i;
		}
		CHECK(one != GT_SASS_NONE && sampled >= 5000);
		w[one - first] = zero[one - first] = 1;
		CHECK(gt_sass__gcct(s, sec, w, zero, GT_SASS_MIN_SPLIT_SAMPLES, &g) == 0);
		CHECK_EQ_U(g.n_contexts, 3);
		printf("  two_sites, one call sample of %u: %.4f, %.4f\n", sampled + 1, g.contexts[1].factor,
		       g.contexts[2].factor);
		CHECK(g.contexts[1].factor == 0.5 && g.contexts[2].factor == 0.5);
		CHECK(g.contexts[1].undetermined && g.contexts[2].undetermined);
		gt_sass__gcct_fini(&g);
		/* Counted executions (min_split 1) are exact: one call counted
		 * at one site, none at the other, is 0 : 1. */
		CHECK(gt_sass__gcct(s, sec, w, zero, 1, &g) == 0);
		CHECK_EQ_U(g.n_contexts, 2);
		CHECK(g.contexts[1].factor == 1.0 && !g.contexts[1].undetermined);
		gt_sass__gcct_fini(&g);
		/* GT_SASS_MIN_SPLIT_SAMPLES of them, all at one site: a site never
		 * called is a finding, 0 : 1. */
		w[one - first] = zero[one - first] = GT_SASS_MIN_SPLIT_SAMPLES;
		CHECK(gt_sass__gcct(s, sec, w, zero, GT_SASS_MIN_SPLIT_SAMPLES, &g) == 0);
		CHECK_EQ_U(g.n_contexts, 2);
		CHECK(g.contexts[1].factor == 1.0 && !g.contexts[1].undetermined);
		CHECK_EQ_U(s->insns[g.contexts[1].call].line, b_line);
		gt_sass__gcct_fini(&g);
	}
	free(w);
	free(zero);

	/* recursive: rec() calls itself (a cycle of one) and work(). */
	sec = gt_sass__section(s, "_Z9recursivePfii");
	CHECK(sec != GT_SASS_NONE);
	w = calloc(s->sections[sec].end - s->sections[sec].first, sizeof(*w));
	zero = calloc(s->sections[sec].end - s->sections[sec].first, sizeof(*zero));
	CHECK(w && zero);
	for (uint32_t i = 0; i < s->sections[sec].end - s->sections[sec].first; i++)
		w[i] = 2;
	CHECK(gt_sass__gcct(s, sec, w, zero, GT_SASS_MIN_SPLIT_SAMPLES, &g) == 0);
	CHECK_EQ_U(g.n_contexts, 3);
	CHECK(!strcmp(s->functions[g.contexts[1].function].callee, "_Z3recfii"));
	CHECK_EQ_U(g.contexts[1].parent, 0);
	CHECK(!strcmp(s->functions[g.contexts[2].function].callee, "_Z4workfii"));
	CHECK_EQ_U(g.contexts[2].parent, 1);
	gt_sass__gcct_fini(&g);
	free(w);
	free(zero);
	printf("  %s: %u instructions, %u functions, %u loops, %u calls\n", path, s->n_insns, s->n_functions,
	       s->n_loops, n_calls);
	gt_sass__delete(s);
	free(text);
}

/* gt_sass__disassemble with stand-ins for nvdisasm: the cubin reaches it
 * as a file, its output comes back, the tool's variables do not reach it. */
/* Two kernels and a device function of their own section (separate
 * compilation): reading only the kernel with samples leaves the other out,
 * keeps the device function, and reads the kept kernel as a full parse
 * does. */
static const char two[] =
	"\t.section\t.text.dev,\"ax\",@progbits\n"
	"        .type           dev,@function\n"
	"dev:\n"
	".text.dev:\n"
	"        /*0000*/                   FMUL R1, R1, R1 ;\n"
	"        /*0010*/                   RET.ABS.NODEC R20 0x0 ;\n"
	"\t.section\t.text.ka,\"ax\",@progbits\n"
	"        .type           ka,@function\n"
	"        .other          ka,@\"STO_CUDA_ENTRY STV_DEFAULT\"\n"
	"ka:\n"
	".text.ka:\n"
	"\t//## File \"/src/a.cu\", line 5\n"
	"        /*0000*/                   CALL.ABS.NOINC `(dev) ;\n"
	".L_x_0:\n"
	"        /*0010*/                   FADD R1, R1, R2 ;\n"
	"        /*0020*/               @P0 BRA `(.L_x_0) ;\n"
	"        /*0030*/                   EXIT ;\n"
	"\t.section\t.text.kb,\"ax\",@progbits\n"
	"        .type           kb,@function\n"
	"        .other          kb,@\"STO_CUDA_ENTRY STV_DEFAULT\"\n"
	"kb:\n"
	".text.kb:\n"
	"\t//## File \"/src/b.cu\", line 9\n"
	"        /*0000*/                   MOV R1, RZ ;\n"
	".L_x_1:\n"
	"        /*0010*/               @P0 BRA `(.L_x_1) ;\n"
	"        /*0020*/                   EXIT ;\n";

static int only_ka(const char *name, size_t n, void *arg)
{
	(*(int *)arg)++;
	return n == 2 && !memcmp(name, "ka", 2);
}

static void test_parse_some(void)
{
	struct gt_sass *all = gt_sass__parse(two, sizeof(two) - 1, NULL, NULL), *some;
	int asked = 0;

	some = gt_sass__parse(two, sizeof(two) - 1, only_ka, &asked);
	CHECK(all && some);
	CHECK_EQ_U(all->n_sections, 3);
	CHECK_EQ_U(all->n_loops, 2);
	CHECK_EQ_U(some->n_sections, 2);
	CHECK_EQ_U(some->n_loops, 1);
	CHECK_EQ_U(asked, 2); /* each kernel's section once; never dev's */
	CHECK(gt_sass__section(some, "kb") == GT_SASS_NONE);
	CHECK(gt_sass__find(some, "kb", 0x10) == GT_SASS_NONE);
	CHECK(gt_sass__section(some, "ka") != GT_SASS_NONE && gt_sass__section(some, "dev") != GT_SASS_NONE);
	/* ka reads the same: its call's target, its loop, its line. */
	for (uint64_t off = 0; off <= 0x30; off += 0x10) {
		uint32_t a = gt_sass__find(all, "ka", off), b = gt_sass__find(some, "ka", off);

		CHECK(a != GT_SASS_NONE && b != GT_SASS_NONE);
		CHECK_EQ_U(all->insns[a].line, some->insns[b].line);
		CHECK_EQ_U(all->insns[a].flags, some->insns[b].flags);
		CHECK_EQ_U(all->insns[a].loop == GT_SASS_NONE, some->insns[b].loop == GT_SASS_NONE);
	}
	{
		uint32_t call = gt_sass__find(some, "ka", 0);

		CHECK(some->insns[call].target != GT_SASS_NONE &&
		      !strcmp(some->functions[some->insns[call].target].name, "dev"));
	}
	gt_sass__delete(all);
	gt_sass__delete(some);
}

int main(int argc, char **argv)
{
	/* test_sass --class OPCODE...: each opcode's class, for comparing
	 * with another tool's counts per opcode (tests/gpu/compare_ncu.py). */
	if (argc > 1 && !strcmp(argv[1], "--class")) {
		for (int i = 2; i < argc; i++)
			printf("%s %s\n", argv[i], gt_sass_class_names[gt_sass__class_of(argv[i])]);
		return 0;
	}
	test_small();
	test_inloop();
	test_long_recurrence();
	for (int copies = 1; copies <= 5; copies++)
		test_unrolled(copies);
	for (int via = 0; via < 3; via++) {
		test_counter(2, via);
		test_counter(4, via);
	}
	test_counter_outer();
	test_addi();
	test_divide();
	test_idioms();
	test_fast_paths();
	test_slow_paths();
	test_parse_some();
	if (argc > 1)
		test_gpucalls(argv[1]);
	printf("ok\n");
	return 0;
}
