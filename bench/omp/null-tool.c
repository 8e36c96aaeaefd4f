/*
 * gtnulltool: a null OMPT tool.
 *
 * Registers the same host callbacks that gputool registers, each with an empty
 * body.  Running a program with this tool measures what the OpenMP runtime
 * itself pays for having a tool attached (OMPT bookkeeping, indirect calls);
 * the difference between this tool and gputool is the cost of gputool's own
 * work in those callbacks (plus its sampling).
 *
 *   OMP_TOOL_LIBRARIES=/path/libgtnulltool.so ./app
 *
 * Environment:
 *   GTNULLTOOL_VERBOSE=1   print each registration result to stderr.
 * A registration the runtime refuses (ompt_set_error / ompt_set_never) is
 * always reported on stderr.
 */
#include <omp-tools.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__GNUC__)
#define GT_EXPORT __attribute__((visibility("default")))
#else
#define GT_EXPORT
#endif

#define UNUSED(x) (void)(x)

static void on_thread_begin(ompt_thread_t thread_type, ompt_data_t *thread_data)
{
    UNUSED(thread_type);
    UNUSED(thread_data);
}

static void on_thread_end(ompt_data_t *thread_data)
{
    UNUSED(thread_data);
}

static void on_parallel_begin(ompt_data_t *encountering_task_data,
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

static void on_parallel_end(ompt_data_t *parallel_data, ompt_data_t *encountering_task_data,
                            int flags, const void *codeptr_ra)
{
    UNUSED(parallel_data);
    UNUSED(encountering_task_data);
    UNUSED(flags);
    UNUSED(codeptr_ra);
}

static void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
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

static void on_work(ompt_work_t work_type, ompt_scope_endpoint_t endpoint,
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

static void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
                           ompt_data_t *parallel_data, ompt_data_t *task_data,
                           const void *codeptr_ra)
{
    UNUSED(kind);
    UNUSED(endpoint);
    UNUSED(parallel_data);
    UNUSED(task_data);
    UNUSED(codeptr_ra);
}

static void on_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
                                ompt_data_t *parallel_data, ompt_data_t *task_data,
                                const void *codeptr_ra)
{
    UNUSED(kind);
    UNUSED(endpoint);
    UNUSED(parallel_data);
    UNUSED(task_data);
    UNUSED(codeptr_ra);
}

static void on_masked(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
                      ompt_data_t *task_data, const void *codeptr_ra)
{
    UNUSED(endpoint);
    UNUSED(parallel_data);
    UNUSED(task_data);
    UNUSED(codeptr_ra);
}

static void on_task_create(ompt_data_t *encountering_task_data,
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

static void on_task_schedule(ompt_data_t *prior_task_data, ompt_task_status_t prior_task_status,
                             ompt_data_t *next_task_data)
{
    UNUSED(prior_task_data);
    UNUSED(prior_task_status);
    UNUSED(next_task_data);
}

static void on_dispatch(ompt_data_t *parallel_data, ompt_data_t *task_data, ompt_dispatch_t kind,
                        ompt_data_t instance)
{
    UNUSED(parallel_data);
    UNUSED(task_data);
    UNUSED(kind);
    UNUSED(instance);
}

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

static void reg(ompt_set_callback_t set_cb, ompt_callbacks_t event, ompt_callback_t cb,
                const char *name, int verbose)
{
    ompt_set_result_t r = set_cb(event, cb);
    int ok = r == ompt_set_always || r == ompt_set_sometimes || r == ompt_set_sometimes_paired;
    if (ok)
        registered++;
    else
        refused++;
    if (verbose || !ok)
        fprintf(stderr, "gtnulltool: %-24s %s\n", name, set_result_name(r));
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

#define REG(ev, fn) reg(set_cb, ompt_callback_##ev, (ompt_callback_t)fn, #ev, verbose)
    REG(thread_begin, on_thread_begin);
    REG(thread_end, on_thread_end);
    REG(parallel_begin, on_parallel_begin);
    REG(parallel_end, on_parallel_end);
    REG(implicit_task, on_implicit_task);
    REG(work, on_work);
    REG(sync_region, on_sync_region);
    REG(sync_region_wait, on_sync_region_wait);
    REG(masked, on_masked);
    REG(task_create, on_task_create);
    REG(task_schedule, on_task_schedule);
    REG(dispatch, on_dispatch);
#undef REG

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
