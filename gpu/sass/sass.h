/* SPDX-License-Identifier: MIT */
#ifndef GT_GPU_SASS_H
#define GT_GPU_SASS_H

/*
 * The structure of a CUDA binary (cubin) from NVIDIA's disassembler: its
 * functions, their instructions with source lines and instruction classes,
 * the calls between functions and the loops of each function, and the GPU
 * calling contexts that PC samples imply (HPCToolkit ICS'20, algorithm 3).
 *
 * The input is what `nvdisasm -c -g -gi` prints (gt_sass__disassemble runs it);
 * NVIDIA documents no machine encoding, and nvdisasm is the vendor's own
 * reader of it. In a whole-program cubin every kernel's section holds the
 * kernel and its own copies of the device functions it calls
 * (`$kernel$callee`); CUPTI's PC offsets count from the section's start.
 *
 * One owner, no locking: built, read and freed by one thread.
 */
#include <stddef.h>
#include <stdint.h>

#include "core/metrics.h"

#define GT_SASS_NONE UINT32_MAX

/* Instruction classes (HPCToolkit ICS'20, equation 11), from the opcode: the list
 * in core/metrics.h, whose GPI_* metrics count their issued samples. */
#define GT_SASS_CLASS_ENUM(A, id, name, desc) GT_SASS_##id,
enum gt_sass_class { GT_GPU_INSN_CLASSES(GT_SASS_CLASS_ENUM, _) GT_SASS__CLASSES };
#undef GT_SASS_CLASS_ENUM

extern const char *const gt_sass_class_names[GT_SASS__CLASSES];

enum {
	GT_SASS_F_CALL = 1u << 0,     /* target: the called function */
	GT_SASS_F_BRANCH = 1u << 1,   /* target: the instruction branched to */
	GT_SASS_F_END = 1u << 2,      /* EXIT, RET, KILL: no successor */
	GT_SASS_F_PRED = 1u << 3,     /* guarded by a predicate: may fall through */
	GT_SASS_F_INDIRECT = 1u << 4, /* a branch to a register: successors unknown */
	GT_SASS_F_DIVISOR = 1u << 5,  /* I2F.*.RP: an integer divisor as a float rounded up, whose
				       * reciprocal the integer division idiom computes */
	GT_SASS_F_MATH = 1u << 6,     /* the start of a precise math function's inline code: sinf's,
				       * cosf's or tanf's argument times 2/pi (FMUL by 0.6366...),
				       * expf's rounding (FFMA.RM by 12582913) */
	GT_SASS_F_RECIP = 1u << 7,    /* FFMA d, -a, b, 1: a reciprocal's Newton step (1 - a b), with
				       * which precise float division refines MUFU.RCP (__fdividef
				       * and -use_fast_math multiply by MUFU.RCP's result alone) */
	GT_SASS_F_SQRT = 1u << 8,     /* IADD3 d, a, -0xd000000: precise sqrtf's range check of its
				       * argument, beside the MUFU.RSQ its fast path refines
				       * (-use_fast_math: MUFU.SQRT alone) */
	GT_SASS_F_RSQ = 1u << 9,      /* MUFU.RSQ */
	GT_SASS_F_CONST = 1u << 10,   /* a register set to an immediate (MOV, IMAD.MOV, HFMA2.MMA
				       * reading no register but its guard): a polynomial's
				       * coefficient, a constant operand */
	GT_SASS_F_SPLIT = 1u << 11,   /* BSSY Bn: where paths that meet again at a BSYNC Bn part */
	GT_SASS_F_JOIN = 1u << 12,    /* BSYNC Bn: where the paths that BSSY Bn parted meet */
};

/* Registers as numbers: R0-R254, then P0-P6, UR0-UR62, UP0-UP6, and a
 * barrier register B0-B15. RZ, PT, URZ and UPT are no register. */
enum {
	GT_SASS_REG_P = 256,
	GT_SASS_REG_UR = 264,
	GT_SASS_REG_UP = 328,
	GT_SASS_REG_B = 336,
	GT_SASS_REGS = 352,
};
#define GT_SASS_MAX_DEFS 4
#define GT_SASS_MAX_USES 12

struct gt_sass_insn {
	uint16_t def[GT_SASS_MAX_DEFS]; /* the registers it writes */
	uint16_t use[GT_SASS_MAX_USES]; /* the registers it reads (its guard too) */
	uint8_t n_def, n_use;
	uint32_t offset;   /* from the start of its section */
	uint32_t function; /* index in functions */
	uint32_t file;     /* index in files, GT_SASS_NONE without a line */
	uint32_t line;     /* where inlined code is, its own line */
	uint32_t inl;      /* the innermost call site it was inlined at (in inlines), or GT_SASS_NONE */
	uint32_t target; /* see the flags; GT_SASS_NONE if not known */
	uint32_t loop;   /* innermost loop (index in loops), GT_SASS_NONE if none */
	uint16_t flags;
	uint16_t cls; /* enum gt_sass_class */
	/* An integer add of an immediate to one register (IADD3 Rd, Ra, imm
	 * [, RZ]; VIADD Rd, Ra, imm): the immediate, else 0. With Rd = Ra it
	 * steps a loop's counter, by the source's step times the copies of
	 * the body the compiler unrolled (gt_sass__blame). */
	int32_t addi;
};

struct gt_sass_function {
	const char *name; /* the symbol as written, mangled */
	const char *callee; /* the function's own name: for "$k$f", "f" */
	uint32_t section;
	uint32_t first, end; /* its instructions: [first, end) */
	int entry;	     /* a kernel (STO_CUDA_ENTRY) */
};

struct gt_sass_section {
	const char *name; /* the kernel's symbol: ".text.<name>" */
	uint32_t first, end;
};

/* A call site that code was inlined at; parent: the call site the
 * function holding it was itself inlined at. */
struct gt_sass_inline {
	uint32_t file, line;
	uint32_t parent;
};

#define GT_SASS_MAX_INLINE 32

struct gt_sass_loop {
	uint32_t header; /* the instruction that begins it */
	uint32_t parent; /* the loop around it, GT_SASS_NONE if none */
	uint32_t function;
};

struct gt_sass {
	struct gt_sass_insn *insns;
	struct gt_sass_function *functions;
	struct gt_sass_section *sections;
	struct gt_sass_loop *loops;
	struct gt_sass_inline *inlines;
	char **files;
	uint32_t n_insns, n_functions, n_sections, n_loops, n_files, n_inlines;
};

/* Parses nvdisasm's output; NULL on allocation failure or when @text holds
 * no instruction. Loops are found as it parses (gt_sass__loops). Of the
 * kernels it reads those @keep(name, length, @arg) wants, all with a NULL
 * @keep (at a program's exit: the kernels with samples of a module that
 * may hold many); the sections of device functions are all read, as any
 * kernel may call them. */
typedef int (*gt_sass_keep_fn)(const char *name, size_t n, void *arg);
struct gt_sass *gt_sass__parse(const char *text, size_t len, gt_sass_keep_fn keep, void *arg);
void gt_sass__delete(struct gt_sass *s);

/* The instruction at @offset of section @name, GT_SASS_NONE if none. */
uint32_t gt_sass__find(const struct gt_sass *s, const char *name, uint64_t offset);
/* The section named @name, GT_SASS_NONE if none. */
uint32_t gt_sass__section(const struct gt_sass *s, const char *name);
enum gt_sass_class gt_sass__class_of(const char *opcode);

/*
 * GPU calling contexts of one section's samples (HPCToolkit ICS'20, algorithm 3):
 * the call graph of the section's functions, its cycles folded into one
 * vertex each, call counts estimated from the samples of call instructions
 * and their return addresses (a function whose callers' calls were never
 * sampled, or from several sites sampled fewer than GT_SASS_MIN_SPLIT_SAMPLES
 * times, gets one call from each), and each function's cost shared among its calling contexts in
 * proportion to those counts. @weight holds the samples of each
 * instruction of the section, from the section's first, @issued those of
 * them in which it issued (gcct.c says why calls are counted by those);
 * calls outside the section are not followed. @min_split: the fewest
 * samples at a callee's calls and returns, from all its sites, that split
 * it among them (GT_SASS_MIN_SPLIT_SAMPLES; 1 where @weight holds counted
 * executions, which are exact).
 *
 * The result is a tree of contexts. Context 0 is the section's kernel; a
 * context has a parent, the call instruction it was called at (in the
 * parent's function), the function it runs and the vertex of the call
 * graph it stands for (a function, or a cycle of them: the cycle's
 * instructions all belong to the context of its vertex). An instruction
 * of vertex v gets, in each context of v, the part factor / (the sum of
 * the factors of v's contexts) of its samples. A vertex with samples that
 * no call reaches from the kernel (an indirect call) gets one context
 * under the kernel, with no call instruction.
 */
struct gt_sass_context {
	uint32_t parent;   /* GT_SASS_NONE for the kernel */
	uint32_t call;     /* the call instruction in the parent, GT_SASS_NONE if none */
	uint32_t function; /* the function it runs; for a cycle, the one called */
	uint32_t vertex;
	double factor;
	/* Its callee is called from several sites whose calls had fewer than
	 * GT_SASS_MIN_SPLIT_SAMPLES samples: its factor is an even split
	 * among them, not an estimate. */
	int undetermined;
};

/* The fewest samples at a callee's calls and their returns, from all its
 * sites, that split it among them: with 20 samples of sites called 3 : 1,
 * a share's standard error is 0.1, and the rarer site goes unsampled with
 * probability 0.75^20 = 0.3 %. */
#define GT_SASS_MIN_SPLIT_SAMPLES 20

struct gt_sass_gcct {
	struct gt_sass_context *contexts;
	uint32_t *vertex; /* per instruction of the section, from its first */
	uint32_t n_contexts, n_insns, n_vertices;
};

int gt_sass__gcct(const struct gt_sass *s, uint32_t section, const uint64_t *weight, const uint64_t *issued,
		  double min_split, struct gt_sass_gcct *out);
void gt_sass__gcct_fini(struct gt_sass_gcct *g);

/*
 * The instruction blamer (GPA (CGO'21), section 4, simplified): the samples of
 * an instruction that waited for a result are moved to the instructions
 * that produce its operands, found backwards along the control flow (up
 * to the first write of each register on each path, over at most a few
 * hundred instructions), kept to the producers that fit the wait (a long
 * scoreboard wait: memory loads; a short one: shared memory, special
 * functions and other variable-latency units; a fixed-latency wait:
 * arithmetic), and shared among them in proportion to their issued
 * samples plus one. A wait with no such producer stays where it was seen
 * (SELF). @stalls holds per instruction of the section its samples of
 * each kind of wait, @issued its issued samples; @blame gets per
 * instruction of the section the samples it caused, by GT_SASS_BLAME_*
 * kind (the instruction's own class decides the kind).
 *
 * The long-latency arithmetic idioms: the integer division (from a
 * divisor's I2F.RP, GT_SASS_F_DIVISOR) and the precise math functions'
 * inline code (from GT_SASS_F_MATH). An instruction is part of one when it
 * is the start, or reads, directly or not, what the start wrote (a write
 * that reaches it along the control flow), within GT_SASS_IDIOM_SPAN
 * instructions after it in program order, in its function and its
 * innermost loop (a loop's use of a reciprocal computed before it is the
 * cheap form); memory accesses, calls and branches are not part of one.
 * Precise float division's and sqrtf's inline fast paths
 * (GT_SASS_F_RECIP, GT_SASS_F_SQRT with the MUFU.RSQ of the same argument
 * within two instructions) are short: at most 4 and 5 instructions after
 * the start, whose own result is the idiom's, not its consumers'.
 * An idiom's slow path goes with it: where the innermost paths that a BSSY
 * parts and its BSYNC joins hold an idiom's start, and a guarded branch
 * after the start is decided by a comparison between them that reads the
 * start's operand or an idiom's result (the range check: sinf's |x|
 * against 105615, FCHK, sqrtf's), the BSSY, the BSYNC, those branches and
 * comparisons are part of it. So are the constants set into registers
 * (GT_SASS_F_CONST) that only the idiom reads, in its loop (a polynomial's
 * coefficients).
 * The fast forms (32-bit integer operands, a reciprocal computed once,
 * __expf, __sinf, -use_fast_math) have none of these starts. The idioms'
 * instructions cause CONVERT waits, whatever their class; @idiom (NULL:
 * not wanted) gets per instruction of the section 1 for those the cheaper
 * form removes: all but the start and the first instruction that reads
 * it, which stand for the cheaper form's one or two instructions (a shift
 * and a mask; a reciprocal and a multiplication; MUFU.SIN and its scaling).
 *
 * @inloop (NULL: not wanted) gets per instruction of the section the part
 * of those samples that unrolling its loop GT_GPO_UNROLL_BY times would
 * hide (GPA's (CGO'21) loop unrolling optimizer): waits of instructions in the
 * producer's own innermost loop, not on local memory nor a call, and not a
 * recurrence (the producer does not depend, through the loop's
 * instructions and around its back edge, on the waiting instruction's
 * result: v = f(v) waits whatever the unrolling), times 1 - u /
 * GT_GPO_UNROLL_BY for a loop unrolled u times already (the most loads of
 * one source line in it, but, in a loop with no loop inside, no more
 * than the step of the counter its back edge tests where that reads
 * GT_GPO_UNROLL_BY or more; none for
 * u >= GT_GPO_UNROLL_BY). Recurrences are
 * the strongly connected components of each loop's data dependences, found
 * once per call.
 */
enum gt_sass_wait { GT_SASS_WAIT_LONG, GT_SASS_WAIT_SHORT, GT_SASS_WAIT_FIXED, GT_SASS__WAITS };
#define GT_SASS_BLAME_ENUM(A, id, desc) GT_SASS_BLAME_##id,
enum gt_sass_blame { GT_GPU_BLAME_KINDS(GT_SASS_BLAME_ENUM, _) GT_SASS__BLAMES };
#undef GT_SASS_BLAME_ENUM

#define GT_SASS_IDIOM_SPAN 128
int gt_sass__blame(const struct gt_sass *s, uint32_t section, const uint64_t *stalls, const uint64_t *issued,
		   double *blame, double *inloop, uint8_t *idiom);

/* Runs nvdisasm on @cubin: its output in *@text (malloc'ed), or a negative
 * errno (-ENOENT: no nvdisasm, or none of @kernels in @cubin; -ECANCELED:
 * @program is "0" or "off"). The program is @program, else the CUDA
 * toolkit's (CUDA_HOME, /usr/local/cuda), else nvdisasm on PATH. With
 * @n_kernels > 0, only the kernels named in @kernels and every function
 * that is not a kernel (the callees, which may have sections of their own)
 * are disassembled (nvdisasm's -fun): 0.5 s for a module of 53 functions
 * that takes 1.8 s whole. */
int gt_sass__disassemble(const char *program, const void *cubin, size_t size, const char *const *kernels,
			 size_t n_kernels, char **text, size_t *len);
/* Ends the runs of nvdisasm begun so far (-ECANCELED): at exit, one for a
 * module that has no samples. */
void gt_sass__cancel(void);
/* What the cache holds of @cubin: 2 its whole disassembly, 1 a part (some
 * kernels), 0 nothing. */
int gt_sass__cached(const char *program, const void *cubin, size_t size);
/*
 * The disassembly of @cubin by @prog kept from an earlier run
 * (gpu/sass/cache.c, GPUTOOL_CACHE): 0 and *text (malloc()ed,
 * NUL-terminated) and *len, or -ENOENT. @variant: NULL for the whole
 * module, else what tells a part of it apart. gt_sass__disassemble asks it
 * first and puts what nvdisasm wrote; _put writes nothing when there is no
 * cache folder. Normal context.
 */
int gt_sass_cache__get(const char *prog, const void *cubin, size_t size, const char *variant, char **text,
		       size_t *len);
void gt_sass_cache__put(const char *prog, const void *cubin, size_t size, const char *variant, const char *text,
			size_t len);
int gt_sass_cache__has(const char *prog, const void *cubin, size_t size, const char *variant);

#endif
