/* SPDX-License-Identifier: MIT */
#ifndef GT_CORE_METRICS_H
#define GT_CORE_METRICS_H

/*
 * Every metric the tool records, written once:
 * X(ID, "NAME", unit, description). Values are unsigned 64-bit integers
 * (ns, bytes or counts), stored sparsely per calling-context node and summed
 * when threads and ranks are merged. The profile carries the names, units and
 * descriptions, so readers need no copy of this table.
 */
#define GT_METRICS(X)                                                                  \
	X(CPUTIME, "CPUTIME", "ns", "CPU time, from per-thread CPU-time samples")      \
	X(SAMPLES, "SAMPLES", "count", "CPU-time samples taken")                       \
	X(OMP_PAR_TIME, "OMP_PAR_TIME", "ns",                                          \
	  "wall time of parallel region instances, on the thread that started them")   \
	X(OMP_PAR_COUNT, "OMP_PAR_COUNT", "count", "parallel region instances")        \
	X(OMP_PAR_THREADS, "OMP_PAR_THREADS", "count",                                 \
	  "team members summed over instances (divide by OMP_PAR_COUNT for the mean)")  \
	X(OMP_TASK_TIME, "OMP_TASK_TIME", "ns",                                        \
	  "time threads spent in a region's implicit tasks (work + wait)")             \
	X(OMP_WORK, "OMP_WORK", "ns",                                                  \
	  "time threads spent in a region's implicit tasks, not waiting")              \
	X(OMP_WAIT, "OMP_WAIT", "ns",                                                  \
	  "time threads spent waiting at barriers, taskwaits and taskgroups")          \
	X(OMP_WAIT_COUNT, "OMP_WAIT_COUNT", "count", "waits at barriers, taskwaits and taskgroups") \
	X(OMP_EXPLICIT_TASK_TIME, "OMP_EXPLICIT_TASK_TIME", "ns",                      \
	  "time spent executing explicit tasks")                                       \
	X(OMP_EXPLICIT_TASKS, "OMP_EXPLICIT_TASKS", "count", "explicit tasks created")  \
	X(OMP_WS_TIME, "OMP_WS_TIME", "ns", "time in worksharing constructs (loop, sections, single)") \
	X(OMP_WS_COUNT, "OMP_WS_COUNT", "count", "worksharing constructs entered")      \
	X(OMP_MASKED_COUNT, "OMP_MASKED_COUNT", "count", "masked/master constructs executed") \
	X(OMP_REDUCTION_TIME, "OMP_REDUCTION_TIME", "ns", "time combining reduction results")     \
	X(OMP_REDUCTION_COUNT, "OMP_REDUCTION_COUNT", "count", "reductions")            \
	X(ACC_TIME, "ACC_TIME", "ns", "time in OpenACC constructs (compute, data, update, wait)") \
	X(ACC_COUNT, "ACC_COUNT", "count", "OpenACC constructs executed")                   \
	X(ACC_LAUNCHES, "ACC_LAUNCHES", "count", "OpenACC kernel launches")                 \
	X(ACC_LAUNCH_TIME, "ACC_LAUNCH_TIME", "ns", "time enqueueing OpenACC kernel launches") \
	X(ACC_GANGS, "ACC_GANGS", "count", "gangs summed over launches")                    \
	X(ACC_WORKERS, "ACC_WORKERS", "count", "workers summed over launches")              \
	X(ACC_VECTOR_LENGTH, "ACC_VECTOR_LENGTH", "count", "vector length summed over launches") \
	X(ACC_UP_BYTES, "ACC_UP_BYTES", "bytes", "bytes uploaded to the device")            \
	X(ACC_UP_COUNT, "ACC_UP_COUNT", "count", "uploads to the device")                   \
	X(ACC_UP_TIME, "ACC_UP_TIME", "ns", "time enqueueing uploads")                      \
	X(ACC_DOWN_BYTES, "ACC_DOWN_BYTES", "bytes", "bytes downloaded from the device")    \
	X(ACC_DOWN_COUNT, "ACC_DOWN_COUNT", "count", "downloads from the device")           \
	X(ACC_DOWN_TIME, "ACC_DOWN_TIME", "ns", "time enqueueing downloads")                \
	X(ACC_CREATE_BYTES, "ACC_CREATE_BYTES", "bytes", "bytes of device data created")    \
	X(ACC_CREATE_COUNT, "ACC_CREATE_COUNT", "count", "device data created")             \
	X(ACC_DELETE_BYTES, "ACC_DELETE_BYTES", "bytes", "bytes of device data deleted")    \
	X(ACC_DELETE_COUNT, "ACC_DELETE_COUNT", "count", "device data deleted")             \
	X(ACC_ALLOC_BYTES, "ACC_ALLOC_BYTES", "bytes", "device memory allocated")           \
	X(ACC_ALLOC_COUNT, "ACC_ALLOC_COUNT", "count", "device allocations")                \
	X(ACC_FREE_BYTES, "ACC_FREE_BYTES", "bytes", "device memory freed")                 \
	X(ACC_FREE_COUNT, "ACC_FREE_COUNT", "count", "device frees")                        \
	X(ACC_DEVICE_INIT_TIME, "ACC_DEVICE_INIT_TIME", "ns", "time initializing OpenACC devices") \
	X(GKER, "GKER", "ns", "GPU kernel execution time")                              \
	X(GKER_COUNT, "GKER_COUNT", "count", "GPU kernel launches")                     \
	X(GKER_BLKS, "GKER_BLKS", "count",                                              \
	  "blocks per grid, summed over launches (divide by GKER_COUNT for the mean)")  \
	X(GKER_BLK_THR, "GKER_BLK_THR", "count",                                        \
	  "threads per block, summed over launches (divide by GKER_COUNT)")             \
	X(GKER_THR_REG, "GKER_THR_REG", "count",                                        \
	  "registers per thread, summed over launches (divide by GKER_COUNT)")          \
	X(GKER_STMEM, "GKER_STMEM", "bytes",                                            \
	  "static shared memory per block, summed over launches (divide by GKER_COUNT)") \
	X(GKER_DYMEM, "GKER_DYMEM", "bytes",                                            \
	  "dynamic shared memory per block, summed over launches (divide by GKER_COUNT)") \
	X(GKER_OCC_THR, "GKER_OCC_THR", "permille",                                     \
	  "theoretical occupancy in 1/1000, summed over launches (divide by GKER_COUNT)") \
	X(GXCOPY_H2D, "GXCOPY_H2D", "ns", "GPU copy time, host to device")              \
	X(GXCOPY_H2D_BYTES, "GXCOPY_H2D_BYTES", "bytes",                                \
	  "bytes copied host to device")                                                \
	X(GXCOPY_H2D_COUNT, "GXCOPY_H2D_COUNT", "count", "copies host to device")       \
	X(GXCOPY_D2H, "GXCOPY_D2H", "ns", "GPU copy time, device to host")              \
	X(GXCOPY_D2H_BYTES, "GXCOPY_D2H_BYTES", "bytes",                                \
	  "bytes copied device to host")                                                \
	X(GXCOPY_D2H_COUNT, "GXCOPY_D2H_COUNT", "count", "copies device to host")       \
	X(GXCOPY_D2D, "GXCOPY_D2D", "ns",                                               \
	  "GPU copy time, device to device (same or peer device)")                      \
	X(GXCOPY_D2D_BYTES, "GXCOPY_D2D_BYTES", "bytes",                                \
	  "bytes copied device to device")                                              \
	X(GXCOPY_D2D_COUNT, "GXCOPY_D2D_COUNT", "count", "copies device to device")     \
	X(GXCOPY_OTHER, "GXCOPY_OTHER", "ns",                                           \
	  "GPU copy time, other or unknown direction (host to host, arrays)")           \
	X(GXCOPY_OTHER_BYTES, "GXCOPY_OTHER_BYTES", "bytes",                            \
	  "bytes copied in other or unknown directions")                                \
	X(GXCOPY_OTHER_COUNT, "GXCOPY_OTHER_COUNT", "count",                            \
	  "copies in other or unknown directions")                                      \
	X(GMSET, "GMSET", "ns", "GPU memset time")                                      \
	X(GMSET_COUNT, "GMSET_COUNT", "count", "GPU memsets")                           \
	X(GMSET_BYTES, "GMSET_BYTES", "bytes", "bytes set by GPU memsets")              \
	X(GMEM, "GMEM", "ns", "GPU memory allocation and release time")                 \
	X(GMEM_COUNT, "GMEM_COUNT", "count", "GPU memory allocations and releases")     \
	X(GMEM_BYTES, "GMEM_BYTES", "bytes", "bytes of GPU memory allocated")           \
	X(GSYNC, "GSYNC", "ns", "time in GPU synchronization operations")               \
	X(GSYNC_COUNT, "GSYNC_COUNT", "count", "GPU synchronization operations")      \
	X(OMP_TGT_COUNT, "OMP_TGT_COUNT", "count",                                      \
	  "OpenMP target constructs (target, target enter/exit data, target update)")   \
	X(OMP_TGT_TIME, "OMP_TGT_TIME", "ns",                                           \
	  "time from begin to end of OpenMP target constructs, on the thread running them") \
	X(OMP_TGT_ALLOC_COUNT, "OMP_TGT_ALLOC_COUNT", "count",                          \
	  "device allocations by the OpenMP runtime")                                   \
	X(OMP_TGT_ALLOC_BYTES, "OMP_TGT_ALLOC_BYTES", "bytes",                          \
	  "bytes allocated on devices by the OpenMP runtime")                           \
	X(OMP_TGT_ALLOC_TIME, "OMP_TGT_ALLOC_TIME", "ns",                               \
	  "host time in device allocations by the OpenMP runtime")                      \
	X(OMP_TGT_DELETE_COUNT, "OMP_TGT_DELETE_COUNT", "count",                        \
	  "device memory releases by the OpenMP runtime")                               \
	X(OMP_TGT_DELETE_TIME, "OMP_TGT_DELETE_TIME", "ns",                             \
	  "host time in device memory releases by the OpenMP runtime")                  \
	X(OMP_TGT_H2D_COUNT, "OMP_TGT_H2D_COUNT", "count",                              \
	  "OpenMP transfers host to device")                                            \
	X(OMP_TGT_H2D_BYTES, "OMP_TGT_H2D_BYTES", "bytes",                              \
	  "bytes OpenMP transferred host to device")                                    \
	X(OMP_TGT_H2D_TIME, "OMP_TGT_H2D_TIME", "ns",                                   \
	  "host time in OpenMP transfers host to device")                               \
	X(OMP_TGT_D2H_COUNT, "OMP_TGT_D2H_COUNT", "count",                              \
	  "OpenMP transfers device to host")                                            \
	X(OMP_TGT_D2H_BYTES, "OMP_TGT_D2H_BYTES", "bytes",                              \
	  "bytes OpenMP transferred device to host")                                    \
	X(OMP_TGT_D2H_TIME, "OMP_TGT_D2H_TIME", "ns",                                   \
	  "host time in OpenMP transfers device to host")                               \
	X(OMP_TGT_D2D_COUNT, "OMP_TGT_D2D_COUNT", "count",                              \
	  "OpenMP transfers device to device")                                          \
	X(OMP_TGT_D2D_BYTES, "OMP_TGT_D2D_BYTES", "bytes",                              \
	  "bytes OpenMP transferred device to device")                                  \
	X(OMP_TGT_D2D_TIME, "OMP_TGT_D2D_TIME", "ns",                                   \
	  "host time in OpenMP transfers device to device")                             \
	X(OMP_TGT_KERNEL_COUNT, "OMP_TGT_KERNEL_COUNT", "count",                        \
	  "OpenMP target kernels submitted")                                            \
	X(OMP_TGT_KERNEL_TIME, "OMP_TGT_KERNEL_TIME", "ns",                             \
	  "host time from submit begin to end of OpenMP target kernels (the launch only, where it is asynchronous)") \
	X(OMP_TGT_KERNEL_TEAMS, "OMP_TGT_KERNEL_TEAMS", "count",                        \
	  "teams requested, summed over kernels (divide by OMP_TGT_KERNEL_COUNT)")      \
	X(OMP_TGT_OTHER_COUNT, "OMP_TGT_OTHER_COUNT", "count",                          \
	  "other OpenMP data operations (associate, disassociate)")                     \
	X(OMP_TGT_OTHER_TIME, "OMP_TGT_OTHER_TIME", "ns",                               \
	  "host time in other OpenMP data operations")                                  \
	X(GJIT, "GJIT", "ns", "host time compiling device code at run time (OpenCL program builds)") \
	X(GJIT_COUNT, "GJIT_COUNT", "count", "run-time compilations of device code")      \
	X(SINGLE_DEVICE_USE_AOT_COMPILATION, "SINGLE_DEVICE_USE_AOT_COMPILATION", "count", \
	  "programs compiled from source or IL at run time while the process used one device") \
	X(OUTPUT_OF_KERNEL_INPUT_TO_ANOTHER_KERNEL, "OUTPUT_OF_KERNEL_INPUT_TO_ANOTHER_KERNEL", "count", \
	  "host-to-device transfers of data read back from a device and not changed since") \
	X(KERNEL_PARAMS_NOT_ALIASED, "KERNEL_PARAMS_NOT_ALIASED", "count",              \
	  "kernel launches whose buffer arguments do not overlap, the kernel not declaring them restrict") \
	X(KERNEL_TO_MULTIPLE_QUEUES_MULTIPLE_CONTEXTS, "KERNEL_TO_MULTIPLE_QUEUES_MULTIPLE_CONTEXTS", "count", \
	  "first launches of a kernel in a context other than the first it ran in")     \
	X(INORDER_QUEUE, "INORDER_QUEUE", "count", "in-order command queues created")    \
	X(ALL_DEVICES_NOT_USED, "ALL_DEVICES_NOT_USED", "count",                        \
	  "contexts created while devices of the platforms stayed unused")              \
	X(CPU_IDLE, "CPU_IDLE", "ns",                                                   \
	  "time threads waited in GPU synchronizations, at the sync's call site")       \
	X(CPU_IDLE_CAUSE, "CPU_IDLE_CAUSE", "ns",                                       \
	  "CPU_IDLE charged to the launch sites of the GPU operations that ran during the wait") \
	X(CPU_IDLE_OVERHEAD, "CPU_IDLE_OVERHEAD", "ns",                                 \
	  "part of CPU_IDLE when none of the awaited GPU operations ran, at the sync's call site") \
	X(GPU_IDLE_CAUSE, "GPU_IDLE_CAUSE", "ns",                                       \
	  "CPU time sampled while no GPU the process used had anything in flight")      \
	X(GPU_IDLE_CAUSE_D0, "GPU_IDLE_CAUSE_D0", "ns",                                 \
	  "CPU time sampled while GPU 0 had nothing in flight (processes using several GPUs)") \
	X(GPU_IDLE_CAUSE_D1, "GPU_IDLE_CAUSE_D1", "ns",                                 \
	  "CPU time sampled while GPU 1 had nothing in flight (processes using several GPUs)") \
	X(GPU_IDLE_CAUSE_D2, "GPU_IDLE_CAUSE_D2", "ns",                                 \
	  "CPU time sampled while GPU 2 had nothing in flight (processes using several GPUs)") \
	X(GPU_IDLE_CAUSE_D3, "GPU_IDLE_CAUSE_D3", "ns",                                 \
	  "CPU time sampled while GPU 3 had nothing in flight (processes using several GPUs)")

enum gt_metric {
#define X(id, name, unit, desc) GT_M_##id,
	GT_METRICS(X)
#undef X
	GT_M__COUNT
};

struct gt_metric_desc {
	const char *name;
	const char *unit;
	const char *desc;
};

extern const struct gt_metric_desc gt_metric_descs[GT_M__COUNT];

#endif
