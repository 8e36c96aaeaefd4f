/*
 * gtnulltool: a null OMPT tool.
 *
 * Registers the same host and target callbacks that gputool registers, each
 * with an empty body.  Running a program with this tool measures what the OpenMP runtime
 * itself pays for having a tool attached (OMPT bookkeeping, indirect calls);
 * the difference between this tool and gputool is the cost of gputool's own
 * work in those callbacks (plus its sampling).
 *
 *   OMP_TOOL_LIBRARIES=/path/libgtnulltool.so ./app
 *
 * The list of callbacks is gputool's own: GT_OMPT_HOST_EVENTS and
 * GT_OMPT_TARGET_EVENTS (with GT_OMPT_TARGET_FALLBACK_EVENTS where the
 * runtime refuses an EMI callback) from ompt/ompt-events.h, so the two cannot
 * drift apart.  Built outside the
 * source tree, a copy of that list is used.  An empty handler exists for
 * every OMPT host callback type, so any host event added to the list builds.
 *
 * Environment:
 *   GTNULLTOOL_VERBOSE=1   print each registration result to stderr.
 * A registration the runtime refuses (ompt_set_error / ompt_set_never) is
 * always reported on stderr.
 */
#include <omp-tools.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__has_include)
#if __has_include("ompt/ompt-events.h")
#include "ompt/ompt-events.h"
#endif
#endif

#ifndef GT_OMPT_HOST_EVENTS
/* X(event, type): register for ompt_callback_<event> a handler of type
 * ompt_callback_<type>_t.  Same as gputool's ompt/ompt-events.h. */
#define GT_OMPT_HOST_EVENTS(X)            \
    X(thread_begin, thread_begin)         \
    X(thread_end, thread_end)             \
    X(parallel_begin, parallel_begin)     \
    X(parallel_end, parallel_end)         \
    X(implicit_task, implicit_task)       \
    X(work, work)                         \
    X(reduction, sync_region)             \
    X(sync_region_wait, sync_region)      \
    X(masked, masked)                     \
    X(task_create, task_create)           \
    X(task_schedule, task_schedule)
#endif

#define GT_EXPORT __attribute__((visibility("default")))
#define HANDLER static __attribute__((unused))
#define UNUSED(x) (void)(x)

/* ---- one empty handler per OMPT host callback type: on_<type> ---- */

HANDLER void on_thread_begin(ompt_thread_t thread_type, ompt_data_t *thread_data)
{
    UNUSED(thread_type);
    UNUSED(thread_data);
}

HANDLER void on_thread_end(ompt_data_t *thread_data)
{
    UNUSED(thread_data);
}

HANDLER void on_parallel_begin(ompt_data_t *encountering_task_data,
                               const ompt_frame_t *encountering_task_frame,
                               ompt_data_t *parallel_data, unsigned int requested_parallelism,
                               int flags, const void *codeptr_ra)
{
    UNUSED(encountering_task_data);
    UNUSED(encountering_task_frame);
    UNUSED(parallel_data);
    UNUSED(requested_parallelism);
    UNUSED(flags);
    UNUSED(codeptr_ra);
}

HANDLER void on_parallel_end(ompt_data_t *parallel_data, ompt_data_t *encountering_task_data,
                             int flags, const void *codeptr_ra)
{
    UNUSED(parallel_data);
    UNUSED(encountering_task_data);
    UNUSED(flags);
    UNUSED(codeptr_ra);
}

HANDLER void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
                              ompt_data_t *task_data, unsigned int actual_parallelism,
                              unsigned int index, int flags)
{
    UNUSED(endpoint);
    UNUSED(parallel_data);
    UNUSED(task_data);
    UNUSED(actual_parallelism);
    UNUSED(index);
    UNUSED(flags);
}

HANDLER void on_work(ompt_work_t work_type, ompt_scope_endpoint_t endpoint,
                     ompt_data_t *parallel_data, ompt_data_t *task_data, uint64_t count,
                     const void *codeptr_ra)
{
    UNUSED(work_type);
    UNUSED(endpoint);
    UNUSED(parallel_data);
    UNUSED(task_data);
    UNUSED(count);
    UNUSED(codeptr_ra);
}

/* sync_region, sync_region_wait and reduction share this type. */
HANDLER void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
                            ompt_data_t *parallel_data, ompt_data_t *task_data,
                            const void *codeptr_ra)
{
    UNUSED(kind);
    UNUSED(endpoint);
    UNUSED(parallel_data);
    UNUSED(task_data);
    UNUSED(codeptr_ra);
}

HANDLER void on_masked(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
                       ompt_data_t *task_data, const void *codeptr_ra)
{
    UNUSED(endpoint);
    UNUSED(parallel_data);
    UNUSED(task_data);
    UNUSED(codeptr_ra);
}

HANDLER void on_task_create(ompt_data_t *encountering_task_data,
                            const ompt_frame_t *encountering_task_frame,
                            ompt_data_t *new_task_data, int flags, int has_dependences,
                            const void *codeptr_ra)
{
    UNUSED(encountering_task_data);
    UNUSED(encountering_task_frame);
    UNUSED(new_task_data);
    UNUSED(flags);
    UNUSED(has_dependences);
    UNUSED(codeptr_ra);
}

HANDLER void on_task_schedule(ompt_data_t *prior_task_data, ompt_task_status_t prior_task_status,
                              ompt_data_t *next_task_data)
{
    UNUSED(prior_task_data);
    UNUSED(prior_task_status);
    UNUSED(next_task_data);
}

HANDLER void on_dispatch(ompt_data_t *parallel_data, ompt_data_t *task_data, ompt_dispatch_t kind,
                         ompt_data_t instance)
{
    UNUSED(parallel_data);
    UNUSED(task_data);
    UNUSED(kind);
    UNUSED(instance);
}

HANDLER void on_dependences(ompt_data_t *task_data, const ompt_dependence_t *deps, int ndeps)
{
    UNUSED(task_data);
    UNUSED(deps);
    UNUSED(ndeps);
}

HANDLER void on_task_dependence(ompt_data_t *src_task_data, ompt_data_t *sink_task_data)
{
    UNUSED(src_task_data);
    UNUSED(sink_task_data);
}

/* mutex_acquire and lock_init share this type. */
HANDLER void on_mutex_acquire(ompt_mutex_t kind, unsigned int hint, unsigned int impl,
                              ompt_wait_id_t wait_id, const void *codeptr_ra)
{
    UNUSED(kind);
    UNUSED(hint);
    UNUSED(impl);
    UNUSED(wait_id);
    UNUSED(codeptr_ra);
}

/* mutex_acquired, mutex_released and lock_destroy share this type. */
HANDLER void on_mutex(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void *codeptr_ra)
{
    UNUSED(kind);
    UNUSED(wait_id);
    UNUSED(codeptr_ra);
}

HANDLER void on_nest_lock(ompt_scope_endpoint_t endpoint, ompt_wait_id_t wait_id,
                          const void *codeptr_ra)
{
    UNUSED(endpoint);
    UNUSED(wait_id);
    UNUSED(codeptr_ra);
}

HANDLER void on_flush(ompt_data_t *thread_data, const void *codeptr_ra)
{
    UNUSED(thread_data);
    UNUSED(codeptr_ra);
}

HANDLER void on_cancel(ompt_data_t *task_data, int flags, const void *codeptr_ra)
{
    UNUSED(task_data);
    UNUSED(flags);
    UNUSED(codeptr_ra);
}

HANDLER int on_control_tool(uint64_t command, uint64_t modifier, void *arg,
                            const void *codeptr_ra)
{
    UNUSED(command);
    UNUSED(modifier);
    UNUSED(arg);
    UNUSED(codeptr_ra);
    return 0;
}

HANDLER void on_error(ompt_severity_t severity, const char *message, size_t length,
                      const void *codeptr_ra)
{
    UNUSED(severity);
    UNUSED(message);
    UNUSED(length);
    UNUSED(codeptr_ra);
}

/* ---- one empty handler per OMPT target callback type ---- */

HANDLER void on_device_initialize(int device_num, const char *type, ompt_device_t *device,
                                  ompt_function_lookup_t lookup, const char *documentation)
{
    UNUSED(device_num);
    UNUSED(type);
    UNUSED(device);
    UNUSED(lookup);
    UNUSED(documentation);
}

HANDLER void on_device_finalize(int device_num)
{
    UNUSED(device_num);
}

HANDLER void on_device_load(int device_num, const char *filename, int64_t offset_in_file,
                            void *vma_in_file, size_t bytes, void *host_addr, void *device_addr,
                            uint64_t module_id)
{
    UNUSED(device_num);
    UNUSED(filename);
    UNUSED(offset_in_file);
    UNUSED(vma_in_file);
    UNUSED(bytes);
    UNUSED(host_addr);
    UNUSED(device_addr);
    UNUSED(module_id);
}

HANDLER void on_device_unload(int device_num, uint64_t module_id)
{
    UNUSED(device_num);
    UNUSED(module_id);
}

HANDLER void on_target_emi(ompt_target_t kind, ompt_scope_endpoint_t endpoint, int device_num,
                           ompt_data_t *task_data, ompt_data_t *target_task_data,
                           ompt_data_t *target_data, const void *codeptr_ra)
{
    UNUSED(kind);
    UNUSED(endpoint);
    UNUSED(device_num);
    UNUSED(task_data);
    UNUSED(target_task_data);
    UNUSED(target_data);
    UNUSED(codeptr_ra);
}

HANDLER void on_target_data_op_emi(ompt_scope_endpoint_t endpoint, ompt_data_t *target_task_data,
                                   ompt_data_t *target_data, ompt_id_t *host_op_id,
                                   ompt_target_data_op_t optype, void *src_addr,
                                   int src_device_num, void *dest_addr, int dest_device_num,
                                   size_t bytes, const void *codeptr_ra)
{
    UNUSED(endpoint);
    UNUSED(target_task_data);
    UNUSED(target_data);
    UNUSED(host_op_id);
    UNUSED(optype);
    UNUSED(src_addr);
    UNUSED(src_device_num);
    UNUSED(dest_addr);
    UNUSED(dest_device_num);
    UNUSED(bytes);
    UNUSED(codeptr_ra);
}

HANDLER void on_target_submit_emi(ompt_scope_endpoint_t endpoint, ompt_data_t *target_data,
                                  ompt_id_t *host_op_id, unsigned int requested_num_teams)
{
    UNUSED(endpoint);
    UNUSED(target_data);
    UNUSED(host_op_id);
    UNUSED(requested_num_teams);
}

HANDLER void on_target_map_emi(ompt_data_t *target_data, unsigned int nitems, void **host_addr,
                               void **device_addr, size_t *bytes, unsigned int *mapping_flags,
                               const void *codeptr_ra)
{
    UNUSED(target_data);
    UNUSED(nitems);
    UNUSED(host_addr);
    UNUSED(device_addr);
    UNUSED(bytes);
    UNUSED(mapping_flags);
    UNUSED(codeptr_ra);
}

HANDLER void on_target(ompt_target_t kind, ompt_scope_endpoint_t endpoint, int device_num,
                       ompt_data_t *task_data, ompt_id_t target_id, const void *codeptr_ra)
{
    UNUSED(kind);
    UNUSED(endpoint);
    UNUSED(device_num);
    UNUSED(task_data);
    UNUSED(target_id);
    UNUSED(codeptr_ra);
}

HANDLER void on_target_data_op(ompt_id_t target_id, ompt_id_t host_op_id,
                               ompt_target_data_op_t optype, void *src_addr, int src_device_num,
                               void *dest_addr, int dest_device_num, size_t bytes,
                               const void *codeptr_ra)
{
    UNUSED(target_id);
    UNUSED(host_op_id);
    UNUSED(optype);
    UNUSED(src_addr);
    UNUSED(src_device_num);
    UNUSED(dest_addr);
    UNUSED(dest_device_num);
    UNUSED(bytes);
    UNUSED(codeptr_ra);
}

HANDLER void on_target_submit(ompt_id_t target_id, ompt_id_t host_op_id,
                              unsigned int requested_num_teams)
{
    UNUSED(target_id);
    UNUSED(host_op_id);
    UNUSED(requested_num_teams);
}

HANDLER void on_target_map(ompt_id_t target_id, unsigned int nitems, void **host_addr,
                           void **device_addr, size_t *bytes, unsigned int *mapping_flags,
                           const void *codeptr_ra)
{
    UNUSED(target_id);
    UNUSED(nitems);
    UNUSED(host_addr);
    UNUSED(device_addr);
    UNUSED(bytes);
    UNUSED(mapping_flags);
    UNUSED(codeptr_ra);
}

/* ---- registration ---- */

static const char *set_result_name(ompt_set_result_t r)
{
    switch (r) {
    case ompt_set_error:
        return "error";
    case ompt_set_never:
        return "never";
    case ompt_set_impossible:
        return "impossible";
    case ompt_set_sometimes:
        return "sometimes";
    case ompt_set_sometimes_paired:
        return "sometimes_paired";
    case ompt_set_always:
        return "always";
    }
    return "unknown";
}

static int registered;
static int refused;

/* Returns 1 when the runtime took the callback. */
static int reg(ompt_set_callback_t set_cb, ompt_callbacks_t event, ompt_callback_t cb,
               const char *name, int verbose, int quiet_refusal)
{
    ompt_set_result_t r = set_cb(event, cb);
    int ok = r == ompt_set_always || r == ompt_set_sometimes || r == ompt_set_sometimes_paired;
    if (ok)
        registered++;
    else if (!quiet_refusal)
        refused++;
    if (verbose || (!ok && !quiet_refusal))
        fprintf(stderr, "gtnulltool: %-24s %s\n", name, set_result_name(r));
    return ok || r == ompt_set_impossible;
}

static int tool_initialize(ompt_function_lookup_t lookup, int initial_device_num,
                           ompt_data_t *tool_data)
{
    UNUSED(initial_device_num);
    UNUSED(tool_data);

    const char *v = getenv("GTNULLTOOL_VERBOSE");
    int verbose = v && *v && *v != '0';

    ompt_set_callback_t set_cb = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set_cb) {
        fprintf(stderr, "gtnulltool: runtime has no ompt_set_callback\n");
        return 0;
    }

    /* The typed local checks each handler against the event's type at
     * compile time, as gputool does. */
#define X(event, type)                                                                    \
    {                                                                                     \
        ompt_callback_##type##_t typed = on_##type;                                       \
        reg(set_cb, ompt_callback_##event, (ompt_callback_t)typed, #event, verbose, 0);   \
    }
    GT_OMPT_HOST_EVENTS(X)
#undef X
#ifdef GT_OMPT_TARGET_EVENTS
    /* Target callbacks, as gputool registers them: a runtime without
     * offloading support refuses some, which is not worth a line. */
    {
        int took[64] = {0};
#define X(event, type)                                                                    \
    {                                                                                     \
        ompt_callback_##type##_t typed = on_##type;                                       \
        took[ompt_callback_##event] =                                                     \
            reg(set_cb, ompt_callback_##event, (ompt_callback_t)typed, #event, verbose, 1); \
    }
        GT_OMPT_TARGET_EVENTS(X)
#undef X
#define X(event, type, emi)                                                               \
    if (!took[ompt_callback_##emi]) {                                                     \
        ompt_callback_##type##_t typed = on_##type;                                       \
        reg(set_cb, ompt_callback_##event, (ompt_callback_t)typed, #event, verbose, 1);   \
    }
        GT_OMPT_TARGET_FALLBACK_EVENTS(X)
#undef X
    }
#endif

    if (verbose || refused)
        fprintf(stderr, "gtnulltool: %d callbacks registered, %d refused\n", registered, refused);
    return 1; /* keep the tool active */
}

static void tool_finalize(ompt_data_t *tool_data)
{
    UNUSED(tool_data);
}

GT_EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
                                                    const char *runtime_version);

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version)
{
    UNUSED(omp_version);
    UNUSED(runtime_version);
    static ompt_start_tool_result_t result = {tool_initialize, tool_finalize, {0}};
    return &result;
}
