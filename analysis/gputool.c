/* SPDX-License-Identifier: MIT */
/*
 * The gputool command: `run` measures a program with libgputool.so,
 * `report` reads what it measured.
 *
 * Under an MPI launcher (`mpirun -np P gputool report DIR`), report hands
 * over to gputool-mpi, the same command linked with MPI, which splits the
 * profiles across the ranks; this binary never links MPI, so it runs where
 * there is none.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "core/config.h"
#include "core/output.h"
#include "core/profile.h"

#ifndef GT_VERSION
#define GT_VERSION "unknown"
#endif


struct command {
	const char *name;
	const char *args;
	const char *summary;
	int (*run)(int argc, char **argv); /* argv[0] is the command's name */
};

static int cmd_run(int argc, char **argv);
static int cmd_report(int argc, char **argv);
static int cmd_help(int argc, char **argv);

static const struct command commands[] = {
	{ "run", "[-o DIR] [--force] [--trace] [--sample-hz N] [--sample cpu|wall|cpu,wall] [--pc-sampling[=N]] [--sass-counts] [--backends LIST] [--] PROGRAM [ARGS...]",
	  "run PROGRAM measured by libgputool.so (works under mpirun; exits as PROGRAM does)", cmd_run },
	{ "report",
	  "PATH [--view top-down|bottom-up|flat] [--metric M] [--top N] [--width N] [--signatures] [--format text|json|folded|chrome|html|speedscope|hatchet|pprof] "
	  "[-o FILE] [--force]",
	  "report the run in the measurement directory PATH (all processes and threads merged), or one profile",
	  cmd_report },
	{ "help", "[run|report|env]", "show this help, or the GPUTOOL_* environment variables", cmd_help },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char run_help[] =
	"run options:\n"
	"  -o, --output DIR      where the profiles go (default gputool-<program>-<job id or pid>;\n"
	"                        under mpirun every rank uses the job's id, so all share one DIR;\n"
	"                        made absolute; every process the run starts writes there)\n"
	"  --force               write into DIR even if it holds another run's profiles or another\n"
	"                        run still going claimed it (by default gputool refuses: one run,\n"
	"                        one directory)\n"
	"  --trace               also record a trace (GPUTOOL_TRACE=1), for --format chrome\n"
	"  --sample-hz N         samples per second per thread (0: none; default 200)\n"
	"  --sample WHAT         cpu (CPU time, the default), wall (wall-clock time: waits in\n"
	"                        MPI, I/O, sleeps and locks too, as WALLTIME), or cpu,wall (both)\n"
	"  --pc-sampling[=N]     CUDA kernels: sample their warps' PCs (a sample every 2^N cycles\n"
	"                        per SM, N from 5 to 31; default: the period for GPUTOOL_PC_RATE\n"
	"                        samples a second, 2^12 on an H100) and report the hottest\n"
	"                        source lines and what their warps waited for (GPUTOOL_PC_SAMPLING)\n"
	"  --sass-counts         CUDA kernels: count every instruction's executions by warps and by\n"
	"                        threads, per source line, for divergence; the kernels run patched,\n"
	"                        one at a time, many times slower (GPUTOOL_SASS_COUNTS)\n"
	"  --backends LIST       which of omp,acc,cuda,opencl,nvtx,kokkos to enable (default all)\n"
	"  PROGRAM runs in gputool's place, with OMP_TOOL_LIBRARIES, ACC_PROFLIB, OPENCL_LAYERS\n"
	"  and CUDA_INJECTION64_PATH naming libgputool.so (settings of your own are kept), and\n"
	"  the library preloaded (LD_PRELOAD, GPUTOOL_PRELOAD=1) so that it measures from the start;\n"
	"  the exit status is PROGRAM's (125: gputool failed, 126/127: PROGRAM cannot run).\n";

static const char report_help[] =
	"report options:\n"
	"  --view V              top-down (default), bottom-up or flat (text; the page's first tab)\n"
	"  --metric M            the metric the views show: CPUTIME (default when measured), a\n"
	"                        GPU metric such as GKER, GPUOP (all GPU operations), any other\n"
	"  --top N               rows per list, lines of a tree (default 30)\n"
	"  --width N             text lines at most N columns (default: the terminal's, else 160)\n"
	"  --signatures          C++ functions with their parameter lists (default: f(…))\n"
	"  --format F            text (default), json (docs/report.schema.json), folded (flame\n"
	"                        graph stacks of the view's metric), chrome (trace-event JSON from\n"
	"                        recorded traces), html (one self-contained page); for other tools,\n"
	"                        with every metric: speedscope (speedscope's JSON), hatchet (JSON for\n"
	"                        Hatchet's GraphFrame.from_literal), pprof (gzipped profile.proto\n"
	"                        for go tool pprof; needs -o FILE on a terminal)\n"
	"  -o, --output FILE     write to FILE instead of standard output\n"
	"  --force               merge profiles that look like more than one run (a rank in two\n"
	"                        processes, different programs): by default the report refuses\n"
	"  A .gtprof file alone, in text or json without --view or --metric, is shown as it is:\n"
	"  its per-process report, or its JSON form (docs/PROFILE.md).\n"
	"  Under mpirun (mpirun -np P gputool report DIR) the ranks share the merge.\n";

static void usage(FILE *f)
{
	fputs("usage: gputool COMMAND [ARGS]\n       gputool --version\n\ncommands:\n", f);
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %s %s\n      %s\n", commands[i].name, commands[i].args, commands[i].summary);
	fprintf(f, "\n%s\n%s", run_help, report_help);
}

/* A subcommand's status, or its help when it was asked for. */
static int or_help(int rc, char **argv)
{
	char *topic[] = { argv[0], argv[0], NULL };

	return rc == GT_HELP_ASKED ? cmd_help(2, topic) : rc;
}

static int cmd_run(int argc, char **argv)
{
	return or_help(gt_launch__main(argc, argv), argv);
}

/* Under a launcher with several ranks, gputool-mpi (next to this binary)
 * takes over; without it, rank 0 merges alone and the others stand by. */
static int cmd_report(int argc, char **argv)
{
	struct gt_team solo = { .rank = 0, .size = 1 };
	char self[PATH_MAX], mpi[PATH_MAX + 16];

	gt_report__tune_malloc();
	if (gt_output__job_size() > 1) {
		char *slash;

		if (realpath("/proc/self/exe", self) && (slash = strrchr(self, '/'))) {
			*slash = '\0';
			snprintf(mpi, sizeof(mpi), "%s/gputool-mpi", self);
			if (!access(mpi, X_OK)) {
				char **args = calloc((size_t)argc + 2, sizeof(*args));

				if (args) {
					args[0] = mpi;
					memcpy(args + 1, argv, (size_t)argc * sizeof(*args));
					execv(mpi, args);
					free(args);
				}
			}
		}
		if (gt_output__rank() != 0)
			return 0;
		fprintf(stderr, "gputool: gputool-mpi is not installed next to gputool; rank 0 merges alone\n");
	}
	return or_help(gt_report__main(argc, argv, &solo), argv);
}

static int cmd_help(int argc, char **argv)
{
	if (argc > 2)
		return gt_usage_error(NULL, "help takes at most one topic");
	if (argc == 2 && !strcmp(argv[1], "env")) {
		fputs("gputool reads these environment variables when libgputool.so is loaded:\n", stdout);
		gt_config__describe(stdout);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "run")) {
		printf("usage: gputool run %s\n\n%s", commands[0].args, run_help);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "report")) {
		printf("usage: gputool report %s\n\n%s", commands[1].args, report_help);
		return 0;
	}
	if (argc == 2)
		return gt_usage_error(NULL, "no help on '%s' (topics: run, report, env)", argv[1]);
	usage(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return GT_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("gputool %s (profile format %u)\n", GT_VERSION, GT_PROFILE_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(1, argv + 1);
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	return gt_usage_error(NULL, "unknown command '%s'", argv[1]);
}
