/* SPDX-License-Identifier: MIT */
/*
 * test_cupti replay-pc FILE SOURCE: the PC samples of samples/cuda/pcsamp,
 * recorded on a GPU machine (GPUTOOL_CUPTI_RECORD with GPUTOOL_PC_SAMPLING),
 * fed through the CUDA backend's real PC-sampling code (gpu/cupti/pcsamp.c)
 * by a CUPTI that hands back what was recorded: the stall reasons, each
 * GetData's PCs, the modules and the source lines CUPTI found. Each kernel
 * gets one launch context; then the tree must say what the GPU run said:
 * every sample placed, the streaming kernel's samples mostly memory stalls,
 * the FMA chain's mostly execution stalls, and the hot loop's lines (marked
 * "// HOT" in SOURCE) holding over 90 % of its kernel's samples.
 *
 * With SOURCE samples/cuda/gpucalls.cu (recorded with nvdisasm's text of
 * the module): the GPU calling contexts rebuilt from the samples, work()
 * under its two call sites 3:1, under pair() and under the recursive rec(),
 * its loop holding most (over 70 %) of its samples.
 *
 * replay-pc FILE SOURCE THIN: one sample in THIN kept, every THIN-th of the
 * recording's in its order (as a sampler of a THIN times longer period
 * would): few samples at work()'s calls, many in it. Its
 * two sites' split must then be 3:1 (within 10 %) or, where the calls'
 * samples are too few, an even split named "[split undetermined]"; never
 * a confident split that leaves a site out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cct.h"
#include "core/config.h"
#include "core/output.h"
#include "core/profile.h"
#include "core/thread.h"
#include "core/tool.h"
#include "gpu/cupti/cupti-internal.h"
#include "gpu/device-op.h"
#include "tests/cupti/cupti-test.h"
#include "tests/unit/test.h"

#define MAX_BATCHES 64
#define MAX_THINGS 8192

static struct {
	uint32_t *index;
	char **names;
	uint32_t n_reasons;
	CUpti_PCSamplingData batch[MAX_BATCHES]; /* deep copies */
	uint32_t n_batches, next;
	struct {
		uint64_t crc, size;
	} cubin[64];
	uint32_t n_cubins;
	uint64_t crc_now; /* what GetCubinCrc says for the module being loaded */
	struct {
		uint64_t pc;
		const char *function, *file;
		uint32_t line;
	} line[MAX_THINGS];
	uint32_t n_lines;
	struct {
		uint64_t crc;
		char *text;
		size_t len;
	} sass[16];
	uint32_t n_sass;
	CUpti_PCSamplingData *buf; /* the backend's, from its configuration */
	uint64_t recorded;	   /* samples of every reason that is a class's */
	uint32_t thin;		   /* one sample in thin kept */
	uint64_t kept;		   /* samples seen by the thinning, for its phase */
} rp;

/* ---- the recording ---- */

static void on_cubin(void *arg, uint64_t crc, uint64_t size)
{
	(void)arg;
	if (rp.n_cubins < 64) {
		rp.cubin[rp.n_cubins].crc = crc;
		rp.cubin[rp.n_cubins++].size = size;
	}
}

static void on_reasons(void *arg, const uint32_t *index, char *const *names, uint32_t n)
{
	(void)arg;
	if (rp.n_reasons)
		return; /* one context's are every context's */
	rp.index = malloc(n * sizeof(*rp.index));
	rp.names = malloc(n * sizeof(*rp.names));
	CHECK(rp.index && rp.names);
	for (uint32_t i = 0; i < n; i++) {
		rp.index[i] = index[i];
		rp.names[i] = strdup(names[i]);
	}
	rp.n_reasons = n;
}

static void on_pcs(void *arg, const CUpti_PCSamplingData *d)
{
	CUpti_PCSamplingData *b = &rp.batch[rp.n_batches];

	(void)arg;
	CHECK(rp.n_batches < MAX_BATCHES);
	*b = *d;
	b->pPcData = calloc(d->totalNumPcs ? d->totalNumPcs : 1, sizeof(*b->pPcData));
	CHECK(b->pPcData);
	for (size_t i = 0; i < d->totalNumPcs; i++) {
		b->pPcData[i] = d->pPcData[i];
		b->pPcData[i].stallReason = malloc((d->pPcData[i].stallReasonCount + 1) * sizeof(CUpti_PCSamplingStallReason));
		CHECK(b->pPcData[i].stallReason);
		memcpy(b->pPcData[i].stallReason, d->pPcData[i].stallReason,
		       d->pPcData[i].stallReasonCount * sizeof(CUpti_PCSamplingStallReason));
		for (size_t r = 0; rp.thin > 1 && r < d->pPcData[i].stallReasonCount; r++) {
			uint64_t n = b->pPcData[i].stallReason[r].samples;

			b->pPcData[i].stallReason[r].samples = (uint32_t)((rp.kept + n) / rp.thin - rp.kept / rp.thin);
			rp.kept += n;
		}
	}
	rp.n_batches++;
}

static void on_line(void *arg, uint64_t crc, uint64_t pc, const char *function, const char *file, uint32_t line)
{
	(void)arg, (void)crc;
	if (rp.n_lines < MAX_THINGS) {
		rp.line[rp.n_lines].pc = pc;
		rp.line[rp.n_lines].function = function;
		rp.line[rp.n_lines].file = strdup(file);
		rp.line[rp.n_lines++].line = line;
	}
}

static void on_sass(void *arg, uint64_t crc, const char *text, size_t len)
{
	(void)arg;
	if (rp.n_sass < 16) {
		rp.sass[rp.n_sass].crc = crc;
		rp.sass[rp.n_sass].text = malloc(len);
		CHECK(rp.sass[rp.n_sass].text);
		memcpy(rp.sass[rp.n_sass].text, text, len);
		rp.sass[rp.n_sass++].len = len;
	}
}

/* ---- a CUPTI that gives it back ---- */

struct gt_cct_node *pc_kernel_launch(struct gt_thread *t, uint64_t site, const char *cupti_name, uint64_t ns)
{
	struct gt_cct_node *n = gt_cct__child(&t->cct, t->cct.root, GT_NODE_FRAME, site, 0);
	struct gt_device_op op = { .kind = GT_DEVOP_KERNEL, .start_ns = 1000, .end_ns = 1000 + ns };

	op.name = gt_cupti__kernel_name(cupti_name);
	n = gt_cct__placeholder(&t->cct, n, GT_PH_GPU_KERNEL);
	CHECK(n && op.name && gt_device_op__attribute(&t->cct, n, &op) == 0);
	return child(n, GT_NODE_NAME, (uint64_t)(uintptr_t)op.name);
}

static CUptiResult CUPTIAPI ok_enable(CUpti_PCSamplingEnableParams *p);
static CUptiResult CUPTIAPI ok_disable(CUpti_PCSamplingDisableParams *p);
static CUptiResult CUPTIAPI configure(CUpti_PCSamplingConfigurationInfoParams *p);

void pc_fake_install(const struct pc_fake *data)
{
	gt_cupti_lib.cuptiPCSamplingGetNumStallReasons = data->num_reasons;
	gt_cupti_lib.cuptiPCSamplingGetStallReasons = data->get_reasons;
	gt_cupti_lib.cuptiPCSamplingGetData = data->get_data;
	gt_cupti_lib.cuptiGetCubinCrc = data->cubin_crc;
	gt_cupti_lib.cuptiGetSassToSourceCorrelation = data->sass_line;
	gt_config.pc_sampling = 1;
	gt_cupti_lib.cuptiPCSamplingEnable = ok_enable;
	gt_cupti_lib.cuptiPCSamplingDisable = ok_disable;
	gt_cupti_lib.cuptiPCSamplingSetConfigurationAttribute = configure;
}

CUpti_PCSamplingData *pc_fake_buffer(void)
{
	return rp.buf;
}

static CUptiResult CUPTIAPI ok_enable(CUpti_PCSamplingEnableParams *p)
{
	(void)p;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI ok_disable(CUpti_PCSamplingDisableParams *p)
{
	(void)p;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI num_reasons(CUpti_PCSamplingGetNumStallReasonsParams *p)
{
	*p->numStallReasons = rp.n_reasons;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI get_reasons(CUpti_PCSamplingGetStallReasonsParams *p)
{
	for (size_t i = 0; i < p->numStallReasons && i < rp.n_reasons; i++) {
		p->stallReasonIndex[i] = rp.index[i];
		snprintf(p->stallReasons[i], CUPTI_STALL_REASON_STRING_SIZE, "%s", rp.names[i]);
	}
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI configure(CUpti_PCSamplingConfigurationInfoParams *p)
{
	for (size_t i = 0; i < p->numAttributes; i++)
		if (p->pPCSamplingConfigurationInfo[i].attributeType ==
		    CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER)
			rp.buf = p->pPCSamplingConfigurationInfo[i].attributeData.samplingDataBufferData.samplingDataBuffer;
	return CUPTI_SUCCESS;
}

/* The next recorded batch into the backend's buffer, as CUPTI fills it. */
static CUptiResult CUPTIAPI get_data(CUpti_PCSamplingGetDataParams *p)
{
	const CUpti_PCSamplingData *b;

	CHECK(p->pcSamplingData == rp.buf);
	if (rp.next == rp.n_batches) {
		rp.buf->totalNumPcs = 0;
		rp.buf->remainingNumPcs = 0;
		return CUPTI_SUCCESS;
	}
	b = &rp.batch[rp.next++];
	CHECK(b->totalNumPcs <= rp.buf->collectNumPcs);
	for (size_t i = 0; i < b->totalNumPcs; i++) {
		CUpti_PCSamplingStallReason *keep = rp.buf->pPcData[i].stallReason;

		CHECK(b->pPcData[i].stallReasonCount <= rp.n_reasons);
		rp.buf->pPcData[i] = b->pPcData[i];
		rp.buf->pPcData[i].stallReason = keep;
		memcpy(keep, b->pPcData[i].stallReason,
		       b->pPcData[i].stallReasonCount * sizeof(CUpti_PCSamplingStallReason));
	}
	rp.buf->totalNumPcs = b->totalNumPcs;
	rp.buf->remainingNumPcs = rp.next < rp.n_batches;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI cubin_crc(CUpti_GetCubinCrcParams *p)
{
	p->cubinCrc = rp.crc_now;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI sass_line(CUpti_GetSassToSourceCorrelationParams *p)
{
	for (uint32_t i = 0; i < rp.n_lines; i++) {
		if (rp.line[i].pc != p->pcOffset || strcmp(rp.line[i].function, p->functionName))
			continue;
		p->fileName = strdup(rp.line[i].file);
		p->dirName = NULL;
		p->lineNumber = rp.line[i].line;
		return CUPTI_SUCCESS;
	}
	return CUPTI_ERROR_INVALID_PARAMETER;
}

/* ---- the checks ---- */

struct kernel_sums {
	const char *name;
	uint64_t samples, cls[7], hot;
	uint64_t reasons[7]; /* the GPS_* samples of each class's reasons */
};

/* Each stall reason's metric and the index of its class in classes[]. */
enum { C_MEMORY = 0, C_EXEC = 1, C_CONTROL = 2, C_SYNC = 3, C_OTHER = 6 };
static const struct {
	enum gt_metric metric;
	int cls;
} stall_reasons[] = {
#define X(A, id, cls, desc) { GT_M_GPS_##id, C_##cls },
	GT_GPU_STALL_REASONS(X, _)
#undef X
};

static const enum gt_metric classes[7] = {
	GT_M_GPC_MEMORY, GT_M_GPC_EXEC,	      GT_M_GPC_CONTROL, GT_M_GPC_SYNC,
	GT_M_GPC_ISSUED, GT_M_GPC_NOT_SELECTED, GT_M_GPC_OTHER,
};

static int hot_line(const char *line, const int *hot, int n_hot)
{
	const char *colon = strrchr(line, ':');
	int l = colon ? atoi(colon + 1) : 0;

	for (int i = 0; i < n_hot; i++)
		if (hot[i] == l)
			return 1;
	return 0;
}

static struct kernel_sums *find(struct kernel_sums *k, int n, const char *part)
{
	struct kernel_sums *got = NULL;

	for (int i = 0; i < n; i++)
		if (strstr(k[i].name, part)) {
			CHECK(!got);
			got = &k[i];
		}
	CHECK(got);
	return got;
}

static int dominant(const struct kernel_sums *k)
{
	int best = 0;

	/* Among the stalls: issued and not-selected warps are not stalled. */
	for (int c = 1; c < 7; c++)
		if (c != 4 && c != 5 && k->cls[c] > k->cls[best])
			best = c;
	return best;
}

/* Every GPU line under @n (lines sit under loops and GPU functions too). */
static void sum_lines(struct kernel_sums *s, const struct gt_cct_node *n, const int *hot, int n_hot)
{
	for (const struct gt_cct_node *ln = n->children; ln; ln = ln->sibling) {
		uint64_t v = gt_cct__get(ln, GT_M_GPC_SAMPLES);

		s->samples += v;
		for (int c = 0; c < 7; c++)
			s->cls[c] += gt_cct__get(ln, classes[c]);
		for (size_t r = 0; r < sizeof(stall_reasons) / sizeof(stall_reasons[0]); r++)
			s->reasons[stall_reasons[r].cls] += gt_cct__get(ln, stall_reasons[r].metric);
		if (v && hot_line((const char *)(uintptr_t)ln->key, hot, n_hot))
			s->hot += v;
		sum_lines(s, ln, hot, n_hot);
	}
}

static uint64_t incl_samples(const struct gt_cct_node *n)
{
	uint64_t v = gt_cct__get(n, GT_M_GPC_SAMPLES);

	for (const struct gt_cct_node *c = n->children; c; c = c->sibling)
		v += incl_samples(c);
	return v;
}

/* The samples under the nodes reached from @n by the names @path[d..n),
 * loop nodes skipped between. */
static uint64_t under(const struct gt_cct_node *n, const char *const *path, int d, int n_path)
{
	uint64_t v = 0;

	if (d == n_path)
		return incl_samples(n);
	for (const struct gt_cct_node *c = n->children; c; c = c->sibling) {
		const char *name = c->kind == GT_NODE_NAME ? (const char *)(uintptr_t)c->key : "";

		if (!strcmp(name, path[d]))
			v += under(c, path, d + 1, n_path);
		else if (!strncmp(name, "loop at ", 8))
			v += under(c, path, d, n_path);
	}
	return v;
}

/* "gpucalls.cu:N" for the line of SOURCE that ends with "// TAG". */
static const char *marked(const char *source, const char *tag, char *out, size_t cap)
{
	char text[512], want[64];
	int lineno = 0;
	FILE *f = fopen(source, "r");

	CHECK(f);
	snprintf(want, sizeof(want), "// %s\n", tag);
	out[0] = 0;
	while (fgets(text, sizeof(text), f)) {
		size_t n = strlen(text), w = strlen(want);

		lineno++;
		if (n >= w && !strcmp(text + n - w, want)) {
			snprintf(out, cap, "gpucalls.cu:%d", lineno);
			break;
		}
	}
	fclose(f);
	CHECK(out[0]);
	return out;
}

static uint64_t kernel_under(struct gt_thread *t, const char *kernel, const char *const *path, int n_path)
{
	uint64_t v = 0;

	for (struct gt_cct_node *site = t->cct.root->children; site; site = site->sibling) {
		struct gt_cct_node *ph = child(site, GT_NODE_PLACEHOLDER, GT_PH_GPU_KERNEL);

		for (struct gt_cct_node *kn = ph ? ph->children : NULL; kn; kn = kn->sibling)
			if (strstr((const char *)(uintptr_t)kn->key, kernel))
				v += under(kn, path, 0, n_path);
	}
	return v;
}

static uint64_t kernel_samples(struct gt_thread *t, const char *kernel)
{
	return kernel_under(t, kernel, NULL, 0);
}

static int check_gpucalls(struct gt_thread *t, const char *source, struct kernel_sums *k, int n_k)
{
	char a[64], b[64], root[64], rw[64], nested[64], p1[64], wk[64], loop[80];
	/* GPU functions are named by their symbols in the tree, as kernels. */
	const char *work = "_Z4workfii", *pair = "_Z4pairfii", *rec = "_Z3recfii";
	uint64_t at_a, at_b, in_loop, n1, r;

	CHECK(rp.n_sass);
	marked(source, "SITE_A", a, sizeof(a));
	marked(source, "SITE_B", b, sizeof(b));
	marked(source, "ROOT", root, sizeof(root));
	marked(source, "REC_WORK", rw, sizeof(rw));
	marked(source, "NESTED", nested, sizeof(nested));
	marked(source, "PAIR_1", p1, sizeof(p1));
	snprintf(loop, sizeof(loop), "loop at %s", marked(source, "WORK", wk, sizeof(wk)));
	{
		const char *pa[] = { a, work }, *pb[] = { b, work }, *la[] = { a, work, loop }, *lb[] = { b, work, loop };
		const char *pn[] = { nested, pair, p1, work }, *pr[] = { root, rec, rw, work };

		at_a = kernel_under(t, "two_sites", pa, 2);
		at_b = kernel_under(t, "two_sites", pb, 2);
		in_loop = kernel_under(t, "two_sites", la, 3) + kernel_under(t, "two_sites", lb, 3);
		n1 = kernel_under(t, "nested", pn, 4);
		r = kernel_under(t, "recursive", pr, 4);
	}
	printf("  work() at %s: %llu, at %s: %llu (%.3f : 1); in %s: %llu; nested: %llu; recursive: %llu\n", a,
	       (unsigned long long)at_a, b, (unsigned long long)at_b, at_b ? (double)at_a / (double)at_b : 0.0, loop,
	       (unsigned long long)in_loop, (unsigned long long)n1, (unsigned long long)r);
	if (rp.thin > 1) {
		char wu[128];
		const char *pa[] = { a, wu }, *pb[] = { b, wu };
		uint64_t ua, ub, all = kernel_samples(t, "two_sites");

		snprintf(wu, sizeof(wu), "%s" GT_GPU_NODE_SPLIT, work);
		ua = kernel_under(t, "two_sites", pa, 2);
		ub = kernel_under(t, "two_sites", pb, 2);
		printf("  thinned %u times: two_sites %llu samples; work() at %s: %llu, at %s: %llu; "
		       "split undetermined: %llu, %llu\n",
		       rp.thin, (unsigned long long)all, a, (unsigned long long)at_a, b, (unsigned long long)at_b,
		       (unsigned long long)ua, (unsigned long long)ub);
		/* Either it was split by the calls' samples, SITE_A's share 3/4
		 * within the error of GT_SASS_MIN_SPLIT_SAMPLES samples (two
		 * standard errors, 0.2), or evenly, and says so: both sites
		 * named undetermined, with all of work()'s samples. */
		if (ua || ub)
			CHECK(!at_a && !at_b && ua && ub);
		else
			CHECK(at_a && at_b && at_a * 100 >= (at_a + at_b) * 55 && at_a * 100 <= (at_a + at_b) * 95);
		return 0;
	}
	CHECK(at_b && at_a * 10 >= at_b * 27 && at_a * 10 <= at_b * 33);
	CHECK(in_loop * 10 > (at_a + at_b) * 7);
	CHECK(n1 > 0 && r > 0);
	(void)k, (void)n_k;
	printf("replay-pc: %u batches, GPU calling contexts of %u disassembled modules\n", rp.n_batches, rp.n_sass);
	return 0;
}

/* A CUPTI that hands back what was recorded. */
static void pc_fake_cupti(void)
{
	static const struct pc_fake recorded = {
		.num_reasons = num_reasons, .get_reasons = get_reasons, .get_data = get_data,
		.cubin_crc = cubin_crc, .sass_line = sass_line,
	};

	pc_fake_install(&recorded);
}

/* The recorded samples through the backend: a context, its modules, the
 * modules' disassembly, then the samples placed in the trees. */
static void pc_feed(void)
{
	gt_cupti_pcsamp__context_created((CUcontext)0x1);
	CHECK(rp.buf);
	for (uint32_t i = 0; i < rp.n_cubins; i++) {
		static const uint8_t module[16] = { 0x7f, 'E', 'L', 'F' };

		rp.crc_now = rp.cubin[i].crc;
		gt_cupti_pcsamp__module_loaded(module, sizeof(module));
	}
	for (uint32_t i = 0; i < rp.n_sass; i++)
		gt_cupti_pcsamp__disassembly(rp.sass[i].crc, rp.sass[i].text, rp.sass[i].len);
	gt_cupti_pcsamp__finish();
	CHECK(rp.next == rp.n_batches);
	gt_cupti_pcsamp__settle();
}

static void write_profile(const char *path)
{
	struct gt_profile prof;
	FILE *out = fopen(path, "w");

	/* The facts the report reads of the run, as the profile at exit has them. */
	static const char *const facts[] = {
		"cuda_devices",	    "gpu_dram_bytes_per_s", "gpu_warps_per_sm", "pc_period_cycles",
		"pc_sm_clock_khz", "pc_sm_count",	   "pc_schedulers",	"pc_sampling",
	};

	gt_profile__init(&prof);
	for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++)
		if (gt_tool__fact(facts[i]))
			gt_profile__set_meta(&prof, facts[i], gt_tool__fact(facts[i]));
	CHECK(out && gt_output__build(&prof) == 0 && gt_profile__write(&prof, out) == 0);
	fclose(out);
	gt_profile__fini(&prof);
}

/*
 * A recording of a run's activity alone: the tree as at the run, written
 * to GT_REPLAY_PROFILE for `gputool report` (the advice that needs no PC
 * samples: launch-bound kernels, copies).
 */
int replay_profile(const char *path)
{
	struct gt_cupti_replay cb = { 0 };
	const char *prof = getenv("GT_REPLAY_PROFILE");

	CHECK(prof);
	replay_activity_begin(&cb);
	CHECK(gt_cupti_record__replay(path, &cb) == 0);
	replay_activity_end();
	gt_cupti__devices_fact();
	write_profile(prof);
	printf("replay-profile: %s\n", prof);
	return 0;
}

/*
 * A recording of a whole run, activity and PC samples: the activity builds
 * the tree as at the run (kernels under their call sites, with their times
 * and launch facts), the samples go under the kernels, and the profile is
 * written to GT_REPLAY_PROFILE for `gputool report` (its advice). The run
 * sampled every 2^period_log2 cycles.
 */
int replay_advice(const char *path, unsigned period_log2)
{
	struct gt_cupti_replay cb = {
		.cubin = on_cubin, .reasons = on_reasons, .pcs = on_pcs, .line = on_line, .sass = on_sass,
	};
	const char *prof = getenv("GT_REPLAY_PROFILE");

	CHECK(prof);
	replay_activity_begin(&cb);
	CHECK(gt_cupti_record__replay(path, &cb) == 0);
	replay_activity_end();
	CHECK(rp.n_reasons && rp.n_batches && rp.n_cubins && rp.n_sass);
	pc_fake_cupti();
	/* The recording does not hold the sampling period: the run's, as told. */
	gt_config.pc_sampling = (int)period_log2;
	pc_feed();
	gt_cupti__devices_fact();
	write_profile(prof);
	printf("replay-advice: %u batches, %u disassembled modules\n", rp.n_batches, rp.n_sass);
	return 0;
}

int replay_pc(const char *path, const char *source, unsigned thin)
{
	static const struct gt_cupti_replay cb = {
		.cubin = on_cubin, .reasons = on_reasons, .pcs = on_pcs, .line = on_line, .sass = on_sass,
	};
	struct kernel_sums k[16];
	int n_k = 0, hot[16], n_hot = 0, lineno = 0;
	struct gt_thread *t = gt_thread__self(GT_THREAD_INITIAL);
	uint64_t placed = 0;
	char text[512];
	FILE *f = fopen(source, "r");

	CHECK(f);
	while (fgets(text, sizeof(text), f) && n_hot < 16)
		if (++lineno, strstr(text, "// HOT"))
			hot[n_hot++] = lineno;
	fclose(f);
	rp.thin = thin;
	CHECK(gt_cupti_record__replay(path, &cb) == 0);
	CHECK(rp.n_reasons && rp.n_batches && rp.n_cubins && rp.n_lines && (n_hot || strstr(source, "gpucalls")));
	/* What the backend will count: the samples of the class-giving reasons. */
	for (uint32_t b = 0; b < rp.n_batches; b++)
		for (size_t i = 0; i < rp.batch[b].totalNumPcs; i++)
			for (size_t s = 0; s < rp.batch[b].pPcData[i].stallReasonCount; s++)
				for (uint32_t j = 0; j < rp.n_reasons; j++)
					if (rp.index[j] == rp.batch[b].pPcData[i].stallReason[s].pcSamplingStallReasonIndex &&
					    gt_cupti_pcsamp__class_of(rp.names[j]) >= 0 &&
					    gt_cupti_pcsamp__class_of(rp.names[j]) < 7)
						rp.recorded += rp.batch[b].pPcData[i].stallReason[s].samples;

	pc_fake_cupti();
	/* One launch per kernel sampled, under a call site of its own. */
	for (uint32_t b = 0; b < rp.n_batches; b++) {
		for (size_t i = 0; i < rp.batch[b].totalNumPcs; i++) {
			const char *name = gt_cupti__kernel_name(rp.batch[b].pPcData[i].functionName);
			int seen = 0;

			for (int j = 0; j < n_k; j++)
				seen |= k[j].name == name;
			if (seen)
				continue;
			CHECK(n_k < 16);
			memset(&k[n_k], 0, sizeof(k[n_k]));
			k[n_k].name = name;
			CHECK(pc_kernel_launch(t, 0x100 + (uint64_t)n_k, rp.batch[b].pPcData[i].functionName, 1000));
			n_k++;
		}
	}
	pc_feed();
	/* GT_REPLAY_PROFILE=FILE: the trees as a profile, for `gputool report`. */
	if (getenv("GT_REPLAY_PROFILE"))
		write_profile(getenv("GT_REPLAY_PROFILE"));

	/* Sums per kernel, from the lines under each kernel's node. */
	for (struct gt_cct_node *site = t->cct.root->children; site; site = site->sibling) {
		struct gt_cct_node *ph = child(site, GT_NODE_PLACEHOLDER, GT_PH_GPU_KERNEL);

		for (struct gt_cct_node *kn = ph ? ph->children : NULL; kn; kn = kn->sibling) {
			struct kernel_sums *s = NULL;

			for (int j = 0; j < n_k; j++)
				if ((uint64_t)(uintptr_t)k[j].name == kn->key)
					s = &k[j];
			CHECK(s);
			sum_lines(s, kn, hot, n_hot);
		}
	}
	for (int j = 0; j < n_k; j++) {
		placed += k[j].samples;
		printf("  %-60.60s %8llu samples, memory %llu, exec %llu\n", k[j].name,
		       (unsigned long long)k[j].samples, (unsigned long long)k[j].cls[0],
		       (unsigned long long)k[j].cls[1]);
	}
	CHECK_EQ_U(placed, rp.recorded);
	/* The stall reasons' samples add up to their classes', exactly. */
	for (int j = 0; j < n_k; j++)
		for (int c = 0; c < 7; c++)
			if (c != 4 && c != 5)
				CHECK_EQ_U(k[j].reasons[c], k[j].cls[c]);
	if (strstr(source, "gpucalls"))
		return check_gpucalls(t, source, k, n_k);
	CHECK(dominant(find(k, n_k, "stream_copy")) == 0);
	CHECK(dominant(find(k, n_k, "fma_chain")) == 1);
	{
		const struct kernel_sums *h = find(k, n_k, "hot_loop");

		printf("  hot_loop: %llu of %llu samples on its HOT lines\n", (unsigned long long)h->hot,
		       (unsigned long long)h->samples);
		CHECK(h->samples && h->hot * 10 > h->samples * 9);
	}
	printf("replay-pc: %u batches, %llu samples placed, %u lines recorded\n", rp.n_batches,
	       (unsigned long long)placed, rp.n_lines);
	return 0;
}
