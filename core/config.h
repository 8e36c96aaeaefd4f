/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_CONFIG_H
#define GT_CORE_CONFIG_H

#include <stdint.h>

/*
 * Every GPUTOOL_* variable the tool reads, written once. Each entry:
 * X(field, NAME, kind, default, min, max, help). kind is UINT (a decimal in
 * [min, max]), BOOL (0/1/yes/no/on/off/true/false), STR (any text) or PATH
 * (a file or folder the tool writes to, reads or runs: ignored, left NULL,
 * in a setuid, setgid or otherwise privileged program (AT_SECURE), where
 * the user who set it is not who the program runs as).
 * Everything that enumerates variables (parsing, the unknown-variable check,
 * the documentation table printed by `gputool help env`) expands this list.
 */
#define GT_CONFIG_VARS(X)                                                              \
	X(disable, "GPUTOOL_DISABLE", BOOL, 0, 0, 1,                                   \
	  "switch the tool off: the application runs as if no tool were loaded")       \
	X(output, "GPUTOOL_OUTPUT", PATH, 0, 0, 0,                                       \
	  "output directory (default gputool-<exe>-<job or pid>)")                     \
	X(run, "GPUTOOL_RUN", STR, 0, 0, 0,                                            \
	  "the run a process belongs to, recorded in its profile; set by `gputool run` " \
	  "(every process it starts inherits it) and written in the directory's .gputool-run") \
	X(output_made, "GPUTOOL_OUTPUT_MADE", STR, 0, 0, 0,                            \
	  "the output directory when `gputool run` made it: a program that measured "  \
	  "nothing removes that directory again, never one that was there before")     \
	X(sample_hz, "GPUTOOL_SAMPLE_HZ", UINT, 200, 0, 10000,                         \
	  "CPU-time samples per second per thread; 0 disables sampling")               \
	X(sample, "GPUTOOL_SAMPLE", STR, 0, 0, 0,                                      \
	  "what is sampled: cpu (CPU time, the default), wall (wall-clock time, waits " \
	  "included; needs the library preloaded, as `gputool run` does) or cpu,wall") \
	X(log, "GPUTOOL_LOG", PATH, 0, 0, 0, "log destination: stderr (default) or a file path") \
	X(verbose, "GPUTOOL_VERBOSE", UINT, 1, 0, 3,                                   \
	  "log level: 0 errors, 1 warnings (default), 2 info, 3 debug")                \
	X(report_top, "GPUTOOL_REPORT_TOP", UINT, 30, 1, 100000,                       \
	  "rows per section of the text report")                                       \
	X(report_stderr, "GPUTOOL_REPORT_STDERR", BOOL, 0, 0, 1,                       \
	  "also print the text report on stderr at exit")                              \
	X(max_threads, "GPUTOOL_MAX_THREADS", UINT, 65536, 2, 65536,                   \
	  "threads measured at most; the report counts the others")                   \
	X(max_inflight, "GPUTOOL_MAX_INFLIGHT", UINT, 65536, 16, 16777216,            \
	  "OpenCL commands measured at once per device; the report counts the others") \
	X(max_depth, "GPUTOOL_MAX_DEPTH", UINT, 256, 8, 512,                          \
	  "deepest call path recorded; deeper frames are cut at the root side")        \
	X(cupti_path, "GPUTOOL_CUPTI_PATH", PATH, 0, 0, 0,                              \
	  "libcupti to use, or its folder (default: CUDA_HOME, /usr/local/cuda, the loader)") \
	X(cupti_record, "GPUTOOL_CUPTI_RECORD", PATH, 0, 0, 0,                          \
	  "folder to write CUPTI's activity buffers to, for tests (slow)")  \
	X(pc_sampling, "GPUTOOL_PC_SAMPLING", UINT, 0, 0, 31,                          \
	  "GPU PC sampling (CUDA): 0 off; 1 on, at the period of GPUTOOL_PC_RATE; 5-31 a " \
	  "sample every 2^N cycles per SM")                                           \
	X(pc_rate, "GPUTOOL_PC_RATE", UINT, 64000000, 1000, 4000000000,                \
	  "with GPUTOOL_PC_SAMPLING=1: the most PC samples a GPU takes per second it is busy; " \
	  "the period is the shortest power of two that keeps under it")             \
	X(sass_counts, "GPUTOOL_SASS_COUNTS", BOOL, 0, 0, 1,                           \
	  "CUDA kernels: count each instruction's executions by warps and by threads, per source " \
	  "line (CUPTI's SASS metrics; the kernels run patched and one at a time, many times " \
	  "slower): divergence")                                                     \
	X(nvdisasm, "GPUTOOL_NVDISASM", PATH, 0, 0, 0,                                 \
	  "with GPU PC sampling or instruction counts: NVIDIA's nvdisasm, for GPU calling " \
	  "contexts, loops and instruction classes (default: CUDA_HOME's, /usr/local/cuda's, " \
	  "PATH's); 0 off")                                                          \
	X(cache, "GPUTOOL_CACHE", PATH, 0, 0, 0,                                       \
	  "a folder for what is kept across runs: nvdisasm's text of each GPU binary, "  \
	  "by its contents (default $XDG_CACHE_HOME/gputool, else ~/.cache/gputool); 0 off") \
	X(exact_timing, "GPUTOOL_EXACT_TIMING", BOOL, 0, 0, 1,                         \
	  "time every OpenMP explicit task, taskwait and parallel region's team; by default a task " \
	  "or taskwait construct whose first 64 tasks or waits in the process mostly took under " \
	  "GPUTOOL_TASK_TIME_NS, and a context of a parallel construct whose first 16 regions " \
	  "average under GPUTOOL_REGION_TIME_NS, are then timed one in 16, the time scaled by 16 " \
	  "(counts stay exact; the report lists such constructs)")                    \
	X(task_time_ns, "GPUTOOL_TASK_TIME_NS", UINT, 5000, 0, 1000000000,             \
	  "median explicit-task (or taskwait) time (ns) from which a construct keeps every one timed") \
	X(region_time_ns, "GPUTOOL_REGION_TIME_NS", UINT, 20000, 0, 1000000000,        \
	  "mean parallel-region time (ns) from which a context of a parallel construct keeps its team's time " \
	  "measured at every region") \
	X(trace, "GPUTOOL_TRACE", BOOL, 0, 0, 1,                                       \
	  "record a trace (<exe>-<rank>-<pid>.gttrace) for `gputool report --format chrome`") \
	X(on_signal, "GPUTOOL_ON_SIGNAL", BOOL, 1, 0, 1,                               \
	  "write the profile when a termination signal (INT, TERM, HUP, QUIT, USR1/2) ends the " \
	  "program, then end of that signal")                                          \
	X(mpi_waits, "GPUTOOL_MPI_WAITS", BOOL, 1, 0, 1,                                 \
	  "compute MPI wait states across ranks (collectives of the tool's own on the program's " \
	  "communicators; every rank must run under the tool)")                                  \
	X(preload, "GPUTOOL_PRELOAD", BOOL, 0, 0, 1,                                   \
	  "start at load, with the library in LD_PRELOAD (`gputool run` sets both): CPU time " \
	  "is sampled from process start, and a program that loads no runtime is measured too")

#define GT_CONFIG_TYPE_UINT uint64_t
#define GT_CONFIG_TYPE_BOOL int
#define GT_CONFIG_TYPE_STR const char *
#define GT_CONFIG_TYPE_PATH const char *

struct gt_config {
#define X(field, name, kind, def, min, max, help) GT_CONFIG_TYPE_##kind field;
	GT_CONFIG_VARS(X)
#undef X
};

/* The process-wide configuration, filled once by gt_config__load(). */
extern struct gt_config gt_config;

/*
 * Parses the variables from envp (NULL: the process environment). Unknown
 * GPUTOOL_* names and malformed values each produce one line on stderr
 * (the value escaped) and the default is used. Returns the number of
 * problems found. Under AT_SECURE the PATH variables are left NULL.
 */
int gt_config__load(char **envp);

/* Prints "NAME  default  help" for every variable. */
void gt_config__describe(void *file);

#endif
