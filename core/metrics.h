/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_METRICS_H
#define GT_CORE_METRICS_H

/*
 * Every metric the tool records, written once:
 * X(ID, "NAME", unit, class, description). Values are unsigned 64-bit integers
 * (ns, bytes or counts), stored sparsely per calling-context node and summed
 * when threads and ranks are merged. The profile carries the names, units and
 * descriptions, so readers need no copy of this table.
 */
/*
 * What a metric measures, for the views that select metrics (the importance
 * metrics' G is the DEVICE class, a GPU operation's host column GPU_HOST):
 * a reader never decides by a metric's name. The profile carries each
 * metric's class (docs/PROFILE.md); its names are gt_metric_class_names.
 */
enum gt_metric_class {
	GT_MC_UNKNOWN = 0,  /* a metric this version does not know */
	GT_MC_CPU = 1,	    /* CPU time, sampled */
	GT_MC_DEVICE = 2,   /* time a device spent on an operation */
	GT_MC_GPU_HOST = 3, /* host time in a GPU operation: allocating, synchronizing, compiling */
	GT_MC_HOST = 4,	    /* host time in a programming model's constructs and operations */
	GT_MC_COUNT = 5,    /* a count, or a sum of launch facts */
	GT_MC_BYTES = 6,
	GT_MC_BLAME = 7,    /* CPU_IDLE, CPU_IDLE_CAUSE, GPU_IDLE_CAUSE, ... */
	GT_MC_ADVICE = 8,   /* occurrences of an inefficiency pattern */
	GT_MC_WALL = 9,     /* wall-clock time, sampled and measured in blocking waits */
	GT_MC__COUNT
};

extern const char *const gt_metric_class_names[GT_MC__COUNT];
/* The class this version gives a metric of that name; UNKNOWN if none. */
enum gt_metric_class gt_metric__class_by_name(const char *name);

/*
 * Classes of GPU instructions by opcode (HPCToolkit ICS'20, equation 11), for the
 * issued PC samples of each (GPI_* metrics) and for gpu/sass:
 * X(A, ID, "name", "what they do"), A passed through.
 */
#define GT_GPU_INSN_CLASSES(X, A)                                    \
	X(A, FP32, "fp32", "32-bit floating-point")                   \
	X(A, FP64, "fp64", "64-bit floating-point")                   \
	X(A, FP16, "fp16", "16-bit floating-point")                   \
	X(A, INT, "int", "integer and logic")                         \
	X(A, SFU, "sfu", "special-function (MUFU)")                   \
	X(A, TENSOR, "tensor", "tensor-core")                         \
	X(A, CONVERT, "convert", "conversion")                        \
	X(A, GLOBAL, "global", "global and generic memory")           \
	X(A, SHARED, "shared", "shared-memory")                       \
	X(A, LOCAL, "local", "local-memory (spill and stack)")        \
	X(A, CONTROL, "control", "branch, call and convergence")      \
	X(A, OTHER, "other", "other (moves, constants, barriers, ...)")
/*
 * The stall reasons of GPU PC sampling, each under its class (GPC_*):
 * X(A, ID, CLASS, "what the warp waited for"), A passed through. Their
 * samples are GPS_* metrics; CUPTI's reason names are in gpu/cupti/pcsamp.c.
 */
#define GT_GPU_STALL_REASONS(X, A)                                                                   \
	X(A, LONG_SCOREBOARD, MEMORY, "a global or local memory result (long scoreboard)")                   \
	X(A, SHORT_SCOREBOARD, MEMORY, "a shared memory, special-function or other MIO result (short scoreboard)") \
	X(A, LG_THROTTLE, MEMORY, "room in the local/global memory queue (LG throttle)")                      \
	X(A, TEX_THROTTLE, MEMORY, "room in the texture queue (texture throttle)")                          \
	X(A, MIO_THROTTLE, MEMORY, "room in the MIO queue: shared memory, special functions (MIO throttle)") \
	X(A, DRAIN, MEMORY, "its stores to drain at exit")                                                  \
	X(A, WAIT, EXEC, "a fixed-latency result (wait)")                                                   \
	X(A, MATH_PIPE, EXEC, "a busy math pipe (math pipe throttle)")                                      \
	X(A, DISPATCH, EXEC, "the dispatcher (dispatch stall)")                                             \
	X(A, BRANCH, CONTROL, "a branch target (branch resolving)")                                         \
	X(A, NO_INSTRUCTIONS, CONTROL, "instructions: fetch or instruction cache miss (no instructions)")    \
	X(A, IMC_MISS, CONTROL, "the constant cache (IMC miss)")                                             \
	X(A, BARRIER, SYNC, "the other warps at a barrier (barrier)")                                       \
	X(A, MEMBAR, SYNC, "a memory barrier (membar)")                                                     \
	X(A, WARPGROUP, SYNC, "a warpgroup to arrive (warpgroup arrive)")                                   \
	X(A, SLEEPING, SYNC, "its sleep to end (sleeping)")                                                 \
	X(A, OTHER, OTHER, "another reason")
#define GT_GPS_METRIC(X, id, cls, desc) X(GPS_##id, "GPS_" #id, "count", COUNT, "PC samples of warps waiting for " desc)

/*
 * Where dependency stalls come from (GPA (CGO'21), the instruction blamer): the
 * samples of warps waiting for a result, moved to the instruction that
 * produces it, by what that instruction is. X(A, ID, "producer").
 */
#define GT_GPU_BLAME_KINDS(X, A)                                               \
	X(A, GLOBAL, "global or generic memory loads")                         \
	X(A, LOCAL, "local memory loads (register spills, stack)")             \
	X(A, SHARED, "shared memory accesses")                                 \
	X(A, SFU, "special-function (MUFU) operations")                        \
	X(A, CONVERT, "conversions and long-latency arithmetic idioms (I2F, F2I, F2F; an integer division, a precise math function)") \
	X(A, ARITH, "arithmetic and other fixed-latency instructions")         \
	X(A, OTHER, "other variable-latency instructions and calls")           \
	X(A, SELF, "no producer found: the waiting instruction itself")
/* The unrolling GPO_UNROLL estimates, and the advice suggests: a loop
 * unrolled this many times overlaps that many iterations' waits. */
#define GT_GPO_UNROLL_BY 4

#define GT_GPB_METRIC(X, id, desc) \
	X(GPB_##id, "GPB_" #id, "count", COUNT, "dependency stall samples caused by this line's " desc)

#define GT_GPI_METRIC(X, id, name, desc) \
	X(GPI_##id, "GPI_" #id, "count", COUNT, "PC samples issuing " desc " instructions (part of GPC_ISSUED)")

#define GT_METRICS(X)                                                                  \
	X(CPUTIME, "CPUTIME", "ns", CPU, "CPU time, from per-thread CPU-time samples")      \
	X(SAMPLES, "SAMPLES", "count", COUNT, "CPU-time samples taken")                       \
	X(WALLTIME, "WALLTIME", "ns", WALL,                                                   \
	  "wall-clock time (GPUTOOL_SAMPLE=wall): samples, and the blocking waits measured whole") \
	X(OMP_PAR_TIME, "OMP_PAR_TIME", "ns", HOST,                                          \
	  "wall time of parallel region instances, on the thread that started them")   \
	X(OMP_PAR_COUNT, "OMP_PAR_COUNT", "count", COUNT, "parallel region instances")        \
	X(OMP_PAR_THREADS, "OMP_PAR_THREADS", "count", COUNT,                                 \
	  "team members summed over instances (divide by OMP_PAR_COUNT for the mean)")  \
	X(OMP_PAR_TIME_SAMPLES, "OMP_PAR_TIME_SAMPLES", "count", COUNT,                       \
	  "parallel region instances whose team was timed as samples of a construct of very " \
	  "short regions, each standing for 16: the team's OMP_TASK_TIME, OMP_WORK, OMP_WAIT, " \
	  "OMP_WS_TIME and OMP_REDUCTION_TIME under it are estimates (GPUTOOL_EXACT_TIMING)") \
	X(OMP_TASK_TIME, "OMP_TASK_TIME", "ns", HOST,                                        \
	  "time threads spent in a region's implicit tasks (work + wait)")             \
	X(OMP_WORK, "OMP_WORK", "ns", HOST,                                                  \
	  "time threads spent in a region's implicit tasks, not waiting")              \
	X(OMP_WAIT, "OMP_WAIT", "ns", HOST,                                                  \
	  "time threads spent waiting at barriers, taskwaits and taskgroups")          \
	X(OMP_WAIT_COUNT, "OMP_WAIT_COUNT", "count", COUNT, "waits at barriers, taskwaits and taskgroups") \
	X(OMP_WAIT_TIME_SAMPLES, "OMP_WAIT_TIME_SAMPLES", "count", COUNT,                     \
	  "waits timed as samples of a taskwait or taskgroup construct of very short waits, each standing " \
	  "for 16: OMP_WAIT there is an estimate (GPUTOOL_EXACT_TIMING)")                 \
	X(OMP_EXPLICIT_TASK_TIME, "OMP_EXPLICIT_TASK_TIME", "ns", HOST,                      \
	  "time spent executing explicit tasks; an estimate where OMP_TASK_TIME_SAMPLES is counted") \
	X(OMP_EXPLICIT_TASKS, "OMP_EXPLICIT_TASKS", "count", COUNT, "explicit tasks created")  \
	X(OMP_TASK_TIME_SAMPLES, "OMP_TASK_TIME_SAMPLES", "count", COUNT,                     \
	  "explicit tasks timed as samples of a site of very short tasks, each standing for 16: " \
	  "OMP_EXPLICIT_TASK_TIME there is an estimate (GPUTOOL_EXACT_TIMING)")        \
	X(OMP_WS_TIME, "OMP_WS_TIME", "ns", HOST, "time in worksharing constructs (loop, sections, single)") \
	X(OMP_WS_COUNT, "OMP_WS_COUNT", "count", COUNT, "worksharing constructs entered")      \
	X(OMP_MASKED_COUNT, "OMP_MASKED_COUNT", "count", COUNT, "masked/master constructs executed") \
	X(OMP_REDUCTION_TIME, "OMP_REDUCTION_TIME", "ns", HOST, "time combining reduction results")     \
	X(OMP_REDUCTION_COUNT, "OMP_REDUCTION_COUNT", "count", COUNT, "reductions")            \
	X(ACC_TIME, "ACC_TIME", "ns", HOST, "time in OpenACC constructs (compute, data, update, wait)") \
	X(ACC_COUNT, "ACC_COUNT", "count", COUNT, "OpenACC constructs executed")                   \
	X(ACC_LAUNCHES, "ACC_LAUNCHES", "count", COUNT, "OpenACC kernel launches")                 \
	X(ACC_LAUNCH_TIME, "ACC_LAUNCH_TIME", "ns", HOST, "time enqueueing OpenACC kernel launches") \
	X(ACC_GANGS, "ACC_GANGS", "count", COUNT, "gangs summed over launches")                    \
	X(ACC_WORKERS, "ACC_WORKERS", "count", COUNT, "workers summed over launches")              \
	X(ACC_VECTOR_LENGTH, "ACC_VECTOR_LENGTH", "count", COUNT, "vector length summed over launches") \
	X(ACC_UP_BYTES, "ACC_UP_BYTES", "bytes", BYTES, "bytes uploaded to the device")            \
	X(ACC_UP_COUNT, "ACC_UP_COUNT", "count", COUNT, "uploads to the device")                   \
	X(ACC_UP_TIME, "ACC_UP_TIME", "ns", HOST, "time enqueueing uploads")                      \
	X(ACC_DOWN_BYTES, "ACC_DOWN_BYTES", "bytes", BYTES, "bytes downloaded from the device")    \
	X(ACC_DOWN_COUNT, "ACC_DOWN_COUNT", "count", COUNT, "downloads from the device")           \
	X(ACC_DOWN_TIME, "ACC_DOWN_TIME", "ns", HOST, "time enqueueing downloads")                \
	X(ACC_CREATE_BYTES, "ACC_CREATE_BYTES", "bytes", BYTES, "bytes of device data created")    \
	X(ACC_CREATE_COUNT, "ACC_CREATE_COUNT", "count", COUNT, "device data created")             \
	X(ACC_DELETE_BYTES, "ACC_DELETE_BYTES", "bytes", BYTES, "bytes of device data deleted")    \
	X(ACC_DELETE_COUNT, "ACC_DELETE_COUNT", "count", COUNT, "device data deleted")             \
	X(ACC_ALLOC_BYTES, "ACC_ALLOC_BYTES", "bytes", BYTES, "device memory allocated")           \
	X(ACC_ALLOC_COUNT, "ACC_ALLOC_COUNT", "count", COUNT, "device allocations")                \
	X(ACC_FREE_BYTES, "ACC_FREE_BYTES", "bytes", BYTES, "device memory freed")                 \
	X(ACC_FREE_COUNT, "ACC_FREE_COUNT", "count", COUNT, "device frees")                        \
	X(ACC_DEVICE_INIT_TIME, "ACC_DEVICE_INIT_TIME", "ns", HOST, "time initializing OpenACC devices") \
	X(REGION_TIME, "REGION_TIME", "ns", HOST,                                            \
	  "wall-clock time inside regions the program names (NVTX ranges, Kokkos kernels and regions, MPI calls)") \
	X(REGION_COUNT, "REGION_COUNT", "count", COUNT, "times a named region was entered")        \
	X(NVTX_MARKS, "NVTX_MARKS", "count", COUNT, "NVTX marks (nvtxMark) made in the range above")  \
	X(NVTX_ENDED_ELSEWHERE, "NVTX_ENDED_ELSEWHERE", "count", COUNT,                         \
	  "NVTX ranges ended on another thread than the one that started them")                  \
	X(KOKKOS_COPY_BYTES, "KOKKOS_COPY_BYTES", "bytes", BYTES, "bytes Kokkos::deep_copy copied")    \
	X(KOKKOS_ALLOC_BYTES, "KOKKOS_ALLOC_BYTES", "bytes", BYTES,                            \
	  "bytes Kokkos allocated for Views (per memory space and label)")                       \
	X(KOKKOS_FREE_BYTES, "KOKKOS_FREE_BYTES", "bytes", BYTES, "bytes of Kokkos Views freed")      \
	X(MPI_BYTES_SENT, "MPI_BYTES_SENT", "bytes", BYTES,                                      \
	  "bytes MPI calls sent (type size x count; a non-blocking send's at its start)")          \
	X(MPI_BYTES_RECV, "MPI_BYTES_RECV", "bytes", BYTES,                                      \
	  "bytes MPI calls received (a receive's from its status; a non-blocking one's at its start)") \
	X(MPI_COMM_RANKS, "MPI_COMM_RANKS", "count", COUNT,                                      \
	  "communicator sizes summed over MPI calls: divided by REGION_COUNT, the mean size")      \
	X(MPI_IDLE, "MPI_IDLE", "ns", BLAME,                                                     \
	  "time an MPI call waited for another rank: the last into a collective, a late sender")  \
	X(MPI_IDLE_CAUSE, "MPI_IDLE_CAUSE", "ns", BLAME,                                         \
	  "MPI_IDLE of the other ranks, charged to the work of the rank they waited for")          \
	X(GKER, "GKER", "ns", DEVICE, "GPU kernel execution time")                              \
	X(GKER_COUNT, "GKER_COUNT", "count", COUNT, "GPU kernel launches")                     \
	X(GKER_BLKS, "GKER_BLKS", "count", COUNT,                                              \
	  "blocks per grid, summed over launches (divide by GKER_COUNT for the mean)")  \
	X(GKER_BLK_THR, "GKER_BLK_THR", "count", COUNT,                                        \
	  "threads per block, summed over launches (divide by GKER_COUNT)")             \
	X(GKER_THR_REG, "GKER_THR_REG", "count", COUNT,                                        \
	  "registers per thread, summed over launches (divide by GKER_COUNT)")          \
	X(GKER_STMEM, "GKER_STMEM", "bytes", BYTES,                                            \
	  "static shared memory per block, summed over launches (divide by GKER_COUNT)") \
	X(GKER_DYMEM, "GKER_DYMEM", "bytes", BYTES,                                            \
	  "dynamic shared memory per block, summed over launches (divide by GKER_COUNT)") \
	X(GKER_OCC_THR, "GKER_OCC_THR", "permille", COUNT,                                     \
	  "theoretical occupancy in 1/1000, summed over launches (divide by GKER_COUNT)") \
	X(GKER_OCC_SLOTS, "GKER_OCC_SLOTS", "permille", COUNT,                                 \
	  "occupancy the block size alone allows (warp and block slots), in 1/1000, summed over launches") \
	X(GKER_OCC_REGS, "GKER_OCC_REGS", "permille", COUNT,                                   \
	  "occupancy the registers per thread allow, in 1/1000, summed over launches")  \
	X(GKER_OCC_SMEM, "GKER_OCC_SMEM", "permille", COUNT,                                   \
	  "occupancy the shared memory per block allows, in 1/1000, summed over launches") \
	X(GKER_LAUNCH_GAP, "GKER_LAUNCH_GAP", "ns", BLAME,                                     \
	  "time the kernel's stream stood idle right before it, the kernel already issued: its launch's own cost") \
	X(GKER_LAUNCH_GAP_COUNT, "GKER_LAUNCH_GAP_COUNT", "count", COUNT,                      \
	  "launches whose stream stood idle before the kernel began, the kernel already issued") \
	X(GPC_SAMPLES, "GPC_SAMPLES", "count", COUNT,                                          \
	  "GPU PC samples: warps sampled at this source line of the kernel")            \
	X(GPC_MEMORY, "GPC_MEMORY", "count", COUNT,                                            \
	  "PC samples stalled on memory: loads (long/short scoreboard), memory, texture and MIO throttles, drain") \
	X(GPC_EXEC, "GPC_EXEC", "count", COUNT,                                                \
	  "PC samples stalled on execution: a fixed-latency result (wait), a busy math pipe, dispatch") \
	X(GPC_CONTROL, "GPC_CONTROL", "count", COUNT,                                          \
	  "PC samples stalled on control: branch resolution, instruction fetch, constant cache misses") \
	X(GPC_SYNC, "GPC_SYNC", "count", COUNT,                                                \
	  "PC samples stalled on synchronization: barriers, memory barriers, warpgroup arrival, sleep") \
	X(GPC_ISSUED, "GPC_ISSUED", "count", COUNT, "PC samples of warps selected to issue (not stalled)") \
	X(GPC_NOT_SELECTED, "GPC_NOT_SELECTED", "count", COUNT,                                \
	  "PC samples of eligible warps the scheduler did not select (another warp issued)") \
	X(GPC_OTHER, "GPC_OTHER", "count", COUNT, "PC samples with another stall reason")         \
	X(GPC_LATENCY, "GPC_LATENCY", "count", COUNT,                                          \
	  "PC samples in which the warp's scheduler issued nothing (latency samples, part of GPC_SAMPLES)") \
	X(GSC_INST, "GSC_INST", "count", COUNT,                                                \
	  "warp instructions executed at this source line of the kernel (GPUTOOL_SASS_COUNTS)") \
	X(GSC_THREAD_INST, "GSC_THREAD_INST", "count", COUNT,                                  \
	  "thread instructions executed at this line: each warp instruction counts its active threads") \
	GT_GPU_INSN_CLASSES(GT_GPI_METRIC, X)                                                  \
	GT_GPU_STALL_REASONS(GT_GPS_METRIC, X)                                                 \
	GT_GPU_BLAME_KINDS(GT_GPB_METRIC, X)                                                   \
	X(GPO_UNROLL, "GPO_UNROLL", "count", COUNT,                                                \
	  "dependency stall samples caused by this line that unrolling its loop 4 times would hide (part of GPB_*)") \
	X(GPO_IDIOM_ISSUED, "GPO_IDIOM_ISSUED", "count", COUNT,                                    \
	  "PC samples issuing this line's instructions of long-latency arithmetic idioms: integer division, precise math functions (part of GPC_ISSUED)") \
	X(GXCOPY_H2D, "GXCOPY_H2D", "ns", DEVICE, "GPU copy time, host to device")              \
	X(GXCOPY_H2D_BYTES, "GXCOPY_H2D_BYTES", "bytes", BYTES,                                \
	  "bytes copied host to device")                                                \
	X(GXCOPY_H2D_COUNT, "GXCOPY_H2D_COUNT", "count", COUNT, "copies host to device")       \
	X(GXCOPY_D2H, "GXCOPY_D2H", "ns", DEVICE, "GPU copy time, device to host")              \
	X(GXCOPY_D2H_BYTES, "GXCOPY_D2H_BYTES", "bytes", BYTES,                                \
	  "bytes copied device to host")                                                \
	X(GXCOPY_D2H_COUNT, "GXCOPY_D2H_COUNT", "count", COUNT, "copies device to host")       \
	X(GXCOPY_D2D, "GXCOPY_D2D", "ns", DEVICE,                                               \
	  "GPU copy time, device to device (same or peer device)")                      \
	X(GXCOPY_D2D_BYTES, "GXCOPY_D2D_BYTES", "bytes", BYTES,                                \
	  "bytes copied device to device")                                              \
	X(GXCOPY_D2D_COUNT, "GXCOPY_D2D_COUNT", "count", COUNT, "copies device to device")     \
	X(GXCOPY_OTHER, "GXCOPY_OTHER", "ns", DEVICE,                                           \
	  "GPU copy time, other or unknown direction (host to host, arrays)")           \
	X(GXCOPY_OTHER_BYTES, "GXCOPY_OTHER_BYTES", "bytes", BYTES,                            \
	  "bytes copied in other or unknown directions")                                \
	X(GXCOPY_OTHER_COUNT, "GXCOPY_OTHER_COUNT", "count", COUNT,                            \
	  "copies in other or unknown directions")                                      \
	X(GXCOPY_PAGEABLE_BYTES, "GXCOPY_PAGEABLE_BYTES", "bytes", BYTES,                      \
	  "bytes copied between a device and pageable (not pinned) host memory")        \
	X(GXCOPY_RESENT_BYTES, "GXCOPY_RESENT_BYTES", "bytes", BYTES,                          \
	  "bytes copied host to device again unchanged: the host buffer held the same bytes at its previous upload") \
	X(GXCOPY_RESENT_COUNT, "GXCOPY_RESENT_COUNT", "count", ADVICE,                         \
	  "host-to-device copies of the same bytes as the buffer's previous upload")    \
	X(GMSET, "GMSET", "ns", DEVICE, "GPU memset time")                                      \
	X(GMSET_COUNT, "GMSET_COUNT", "count", COUNT, "GPU memsets")                           \
	X(GMSET_BYTES, "GMSET_BYTES", "bytes", BYTES, "bytes set by GPU memsets")              \
	X(GMEM, "GMEM", "ns", GPU_HOST, "GPU memory allocation and release time")                 \
	X(GMEM_COUNT, "GMEM_COUNT", "count", COUNT, "GPU memory allocations and releases")     \
	X(GMEM_BYTES, "GMEM_BYTES", "bytes", BYTES, "bytes of GPU memory allocated")           \
	X(GSYNC, "GSYNC", "ns", GPU_HOST, "time in GPU synchronization operations")               \
	X(GSYNC_COUNT, "GSYNC_COUNT", "count", COUNT, "GPU synchronization operations")      \
	X(GSYNC_SERIAL, "GSYNC_SERIAL", "ns", BLAME,                                           \
	  "after this wait for one stream, the thread's next operation ran on another stream: the time it could have run beside the waited work") \
	X(GSYNC_SERIAL_COUNT, "GSYNC_SERIAL_COUNT", "count", COUNT,                            \
	  "waits for one stream followed by an operation on another stream")            \
	X(OMP_TGT_COUNT, "OMP_TGT_COUNT", "count", COUNT,                                      \
	  "OpenMP target constructs (target, target enter/exit data, target update)")   \
	X(OMP_TGT_TIME, "OMP_TGT_TIME", "ns", HOST,                                           \
	  "time from begin to end of OpenMP target constructs, on the thread running them") \
	X(OMP_TGT_ALLOC_COUNT, "OMP_TGT_ALLOC_COUNT", "count", COUNT,                          \
	  "device allocations by the OpenMP runtime")                                   \
	X(OMP_TGT_ALLOC_BYTES, "OMP_TGT_ALLOC_BYTES", "bytes", BYTES,                          \
	  "bytes allocated on devices by the OpenMP runtime")                           \
	X(OMP_TGT_ALLOC_TIME, "OMP_TGT_ALLOC_TIME", "ns", HOST,                               \
	  "host time in device allocations by the OpenMP runtime")                      \
	X(OMP_TGT_DELETE_COUNT, "OMP_TGT_DELETE_COUNT", "count", COUNT,                        \
	  "device memory releases by the OpenMP runtime")                               \
	X(OMP_TGT_DELETE_TIME, "OMP_TGT_DELETE_TIME", "ns", HOST,                             \
	  "host time in device memory releases by the OpenMP runtime")                  \
	X(OMP_TGT_H2D_COUNT, "OMP_TGT_H2D_COUNT", "count", COUNT,                              \
	  "OpenMP transfers host to device")                                            \
	X(OMP_TGT_H2D_BYTES, "OMP_TGT_H2D_BYTES", "bytes", BYTES,                              \
	  "bytes OpenMP transferred host to device")                                    \
	X(OMP_TGT_H2D_TIME, "OMP_TGT_H2D_TIME", "ns", HOST,                                   \
	  "host time in OpenMP transfers host to device")                               \
	X(OMP_TGT_D2H_COUNT, "OMP_TGT_D2H_COUNT", "count", COUNT,                              \
	  "OpenMP transfers device to host")                                            \
	X(OMP_TGT_D2H_BYTES, "OMP_TGT_D2H_BYTES", "bytes", BYTES,                              \
	  "bytes OpenMP transferred device to host")                                    \
	X(OMP_TGT_D2H_TIME, "OMP_TGT_D2H_TIME", "ns", HOST,                                   \
	  "host time in OpenMP transfers device to host")                               \
	X(OMP_TGT_D2D_COUNT, "OMP_TGT_D2D_COUNT", "count", COUNT,                              \
	  "OpenMP transfers device to device")                                          \
	X(OMP_TGT_D2D_BYTES, "OMP_TGT_D2D_BYTES", "bytes", BYTES,                              \
	  "bytes OpenMP transferred device to device")                                  \
	X(OMP_TGT_D2D_TIME, "OMP_TGT_D2D_TIME", "ns", HOST,                                   \
	  "host time in OpenMP transfers device to device")                             \
	X(OMP_TGT_KERNEL_COUNT, "OMP_TGT_KERNEL_COUNT", "count", COUNT,                        \
	  "OpenMP target kernels submitted")                                            \
	X(OMP_TGT_KERNEL_TIME, "OMP_TGT_KERNEL_TIME", "ns", HOST,                             \
	  "host time from submit begin to end of OpenMP target kernels (the launch only, where it is asynchronous)") \
	X(OMP_TGT_KERNEL_TEAMS, "OMP_TGT_KERNEL_TEAMS", "count", COUNT,                        \
	  "teams requested, summed over kernels (divide by OMP_TGT_KERNEL_COUNT)")      \
	X(OMP_TGT_OTHER_COUNT, "OMP_TGT_OTHER_COUNT", "count", COUNT,                          \
	  "other OpenMP data operations (associate, disassociate)")                     \
	X(OMP_TGT_OTHER_TIME, "OMP_TGT_OTHER_TIME", "ns", HOST,                               \
	  "host time in other OpenMP data operations")                                  \
	X(GJIT, "GJIT", "ns", GPU_HOST, "host time compiling device code at run time (OpenCL program builds)") \
	X(GJIT_COUNT, "GJIT_COUNT", "count", COUNT, "run-time compilations of device code")      \
	X(SINGLE_DEVICE_USE_AOT_COMPILATION, "SINGLE_DEVICE_USE_AOT_COMPILATION", "count", ADVICE, \
	  "programs compiled from source or IL at run time while the process used one device") \
	X(OUTPUT_OF_KERNEL_INPUT_TO_ANOTHER_KERNEL, "OUTPUT_OF_KERNEL_INPUT_TO_ANOTHER_KERNEL", "count", ADVICE, \
	  "host-to-device transfers of data read back from a device and not changed since") \
	X(KERNEL_PARAMS_NOT_ALIASED, "KERNEL_PARAMS_NOT_ALIASED", "count", ADVICE,              \
	  "kernel launches whose buffer arguments do not overlap, the kernel not declaring them restrict") \
	X(KERNEL_TO_MULTIPLE_QUEUES_MULTIPLE_CONTEXTS, "KERNEL_TO_MULTIPLE_QUEUES_MULTIPLE_CONTEXTS", "count", ADVICE, \
	  "first launches of a kernel in a context other than the first it ran in")     \
	X(INORDER_QUEUE, "INORDER_QUEUE", "count", ADVICE, "in-order command queues created")    \
	X(ALL_DEVICES_NOT_USED, "ALL_DEVICES_NOT_USED", "count", ADVICE,                        \
	  "contexts created while devices of the platforms stayed unused")              \
	X(CPU_IDLE, "CPU_IDLE", "ns", BLAME,                                                   \
	  "time threads waited in GPU synchronizations, at the sync's call site")       \
	X(CPU_IDLE_CAUSE, "CPU_IDLE_CAUSE", "ns", BLAME,                                       \
	  "CPU_IDLE charged to the launch sites of the GPU operations that ran during the wait") \
	X(CPU_IDLE_OVERHEAD, "CPU_IDLE_OVERHEAD", "ns", BLAME,                                 \
	  "part of CPU_IDLE when none of the awaited GPU operations ran, at the sync's call site") \
	X(GPU_IDLE_CAUSE, "GPU_IDLE_CAUSE", "ns", BLAME,                                       \
	  "CPU time sampled while no GPU the process used had anything in flight")      \
	X(GPU_IDLE_CAUSE_D0, "GPU_IDLE_CAUSE_D0", "ns", BLAME,                                 \
	  "CPU time sampled while GPU 0 had nothing in flight (processes using several GPUs)") \
	X(GPU_IDLE_CAUSE_D1, "GPU_IDLE_CAUSE_D1", "ns", BLAME,                                 \
	  "CPU time sampled while GPU 1 had nothing in flight (processes using several GPUs)") \
	X(GPU_IDLE_CAUSE_D2, "GPU_IDLE_CAUSE_D2", "ns", BLAME,                                 \
	  "CPU time sampled while GPU 2 had nothing in flight (processes using several GPUs)") \
	X(GPU_IDLE_CAUSE_D3, "GPU_IDLE_CAUSE_D3", "ns", BLAME,                                 \
	  "CPU time sampled while GPU 3 had nothing in flight (processes using several GPUs)")

enum gt_metric {
#define X(id, name, unit, cls, desc) GT_M_##id,
	GT_METRICS(X)
#undef X
	GT_M__COUNT
};

struct gt_metric_desc {
	const char *name;
	const char *unit;
	const char *desc;
	enum gt_metric_class cls;
};

extern const struct gt_metric_desc gt_metric_descs[GT_M__COUNT];

#endif
