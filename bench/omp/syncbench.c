/*
 * syncbench: OpenMP construct overhead microbenchmark (EPCC syncbench method).
 *
 * For each construct a reference loop runs `inner` calls of delay(); the test
 * loop runs the same delay() work wrapped in the construct.  The overhead of
 * one construct instance is (test time - reference time) / inner.  Each
 * construct is measured over `outer` repetitions; reference and test
 * repetitions are interleaved so slow drifts of the machine hit both alike.
 *
 * Output (stdout), one line per construct:
 *   NAME MEAN us (sd SD, min MIN, ref REF, inner N, outer M)
 * MEAN and MIN are overheads in microseconds per construct instance, SD is the
 * standard deviation of the per-repetition overheads, REF is the reference
 * time per inner repetition.  Lines starting with '#' are informational.
 *
 * Thread count: OMP_NUM_THREADS (omp_get_max_threads()).
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_OUTER 1000

static int nthreads;
static int delaylength;       /* delay() loop trip count */
static double delay_us = 0.1; /* target length of one delay() call */
static double target_us = 1000.0; /* target length of one test repetition */
static int outer = 20;
static double warmup_ms = 500.0;  /* busy warm-up before measuring */

/* Shared with the REDUCTION test so the work cannot be optimised away. */
static int reduction_sink;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* The EPCC delay: a dependent floating-point chain the compiler must keep. */
static void delay(int len)
{
    double a = 0.0;
    for (int i = 0; i < len; i++)
        a += (double)i;
    if (a < 0)
        printf("%f\n", a);
}

/* ---- reference and test kernels; each runs `reps` construct instances ---- */

static void ref_plain(int reps)
{
    for (int j = 0; j < reps; j++)
        delay(delaylength);
}

static void ref_reduction(int reps)
{
    int aaaa = 0;
    for (int j = 0; j < reps; j++) {
        delay(delaylength);
        aaaa += 1;
    }
    reduction_sink += aaaa;
}

static void test_parallel(int reps)
{
    for (int j = 0; j < reps; j++) {
#pragma omp parallel
        delay(delaylength);
    }
}

static void test_for(int reps)
{
#pragma omp parallel
    for (int j = 0; j < reps; j++) {
#pragma omp for
        for (int i = 0; i < nthreads; i++)
            delay(delaylength);
    }
}

static void test_barrier(int reps)
{
#pragma omp parallel
    for (int j = 0; j < reps; j++) {
        delay(delaylength);
#pragma omp barrier
    }
}

static void test_single(int reps)
{
#pragma omp parallel
    for (int j = 0; j < reps; j++) {
#pragma omp single
        delay(delaylength);
    }
}

/* EPCC: each thread enters the critical section reps/nthreads times, so the
 * team as a whole executes `reps` critical sections, serialised. */
static void test_critical(int reps)
{
#pragma omp parallel
    {
        int n = reps / omp_get_num_threads();
        for (int j = 0; j < n; j++) {
#pragma omp critical
            delay(delaylength);
        }
    }
}

static void test_reduction(int reps)
{
    int aaaa = 0;
    for (int j = 0; j < reps; j++) {
#pragma omp parallel reduction(+ : aaaa)
        {
            delay(delaylength);
            aaaa += 1;
        }
    }
    reduction_sink += aaaa;
}

struct construct {
    const char *name;
    void (*test)(int);
    void (*ref)(int);
};

static const struct construct constructs[] = {
    {"PARALLEL", test_parallel, ref_plain},   {"FOR", test_for, ref_plain},
    {"BARRIER", test_barrier, ref_plain},     {"SINGLE", test_single, ref_plain},
    {"CRITICAL", test_critical, ref_plain},   {"REDUCTION", test_reduction, ref_reduction},
};
#define NCONSTRUCTS (int)(sizeof constructs / sizeof constructs[0])

static double time_once(void (*fn)(int), int reps)
{
    double t0 = now_us();
    fn(reps);
    return now_us() - t0;
}

/* Choose delaylength so one delay() call lasts about delay_us. */
static void calibrate_delay(void)
{
    const int calls = 1000;
    int len = 1;
    for (;;) {
        double best = 1e30;
        for (int k = 0; k < 3; k++) {
            double t0 = now_us();
            for (int j = 0; j < calls; j++)
                delay(len);
            double t = (now_us() - t0) / calls;
            if (t < best)
                best = t;
        }
        if (best >= delay_us || len > (1 << 28)) {
            /* Scale down linearly to hit the target more closely. */
            if (best > 0)
                len = (int)(len * (delay_us / best));
            delaylength = len < 1 ? 1 : len;
            return;
        }
        len *= 2;
    }
}

/* EPCC: double the inner repetition count until one test takes target_us.
 * Each candidate is timed twice and the faster time counts, so one hiccup
 * does not leave the construct with a tiny inner count.  Starting from the
 * thread count keeps CRITICAL's reps a multiple of it. */
static int calibrate_inner(void (*fn)(int))
{
    int reps = nthreads;
    for (;;) {
        double t = time_once(fn, reps);
        double t2 = time_once(fn, reps);
        if (t2 < t)
            t = t2;
        if (t >= target_us || reps >= (1 << 26))
            return reps;
        reps *= 2;
    }
}

static void run_construct(const struct construct *c)
{
    static double ovh[MAX_OUTER];
    int inner = calibrate_inner(c->test);
    double ref_sum = 0.0;

    /* Warm the test once after calibration so the first timed repetition
     * does not pay for first-touch effects. */
    c->test(inner);
    for (int k = 0; k < outer; k++) {
        double tr = time_once(c->ref, inner) / inner;
        double tt = time_once(c->test, inner) / inner;
        ref_sum += tr;
        ovh[k] = tt - tr;
    }

    double mean = 0.0, min = ovh[0], var = 0.0;
    for (int k = 0; k < outer; k++) {
        mean += ovh[k];
        if (ovh[k] < min)
            min = ovh[k];
    }
    mean /= outer;
    for (int k = 0; k < outer; k++)
        var += (ovh[k] - mean) * (ovh[k] - mean);
    double sd = outer > 1 ? sqrt(var / (outer - 1)) : 0.0;

    printf("%s %.4f us (sd %.4f, min %.4f, ref %.4f, inner %d, outer %d)\n", c->name, mean, sd,
           min, ref_sum / outer, inner, outer);
    fflush(stdout);
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [-o OUTER] [-t TEST_US] [-d DELAY_US] [-w WARMUP_MS] [CONSTRUCT...]\n"
            "  -o OUTER    outer repetitions per construct (default 20, max %d)\n"
            "  -t TEST_US  target time of one test repetition in us (default 1000)\n"
            "  -d DELAY_US length of the delay() work unit in us (default 0.1)\n"
            "  -w WARMUP_MS busy warm-up of all threads before measuring (default 500)\n"
            "  CONSTRUCT   any of PARALLEL FOR BARRIER SINGLE CRITICAL REDUCTION"
            " (default: all)\n"
            "Threads: OMP_NUM_THREADS.\n",
            argv0, MAX_OUTER);
}

int main(int argc, char **argv)
{
    int selected[NCONSTRUCTS];
    int any_selected = 0;
    memset(selected, 0, sizeof selected);

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if ((!strcmp(a, "-o") || !strcmp(a, "-t") || !strcmp(a, "-d") || !strcmp(a, "-w")) &&
            i + 1 < argc) {
            char *end;
            double v = strtod(argv[++i], &end);
            if (*end != '\0' || !(v >= 0) || (a[1] != 'w' && v == 0)) {
                usage(argv[0]);
                return 2;
            }
            if (a[1] == 'o')
                outer = v > MAX_OUTER ? MAX_OUTER : (int)v;
            else if (a[1] == 't')
                target_us = v;
            else if (a[1] == 'w')
                warmup_ms = v;
            else
                delay_us = v;
            continue;
        }
        int found = 0;
        for (int c = 0; c < NCONSTRUCTS; c++) {
            if (!strcmp(a, constructs[c].name)) {
                selected[c] = found = any_selected = 1;
            }
        }
        if (!found) {
            usage(argv[0]);
            return 2;
        }
    }
    if (outer < 1)
        outer = 1;

    nthreads = omp_get_max_threads();

    /* omp_control_tool answers omp_control_tool_notool only when no OMPT
     * tool is attached; any other answer means a tool is active.  A tool that
     * registered the control_tool callback sees one "flush" request here,
     * before any measurement. */
    int tool = omp_control_tool(omp_control_tool_flush, 0, NULL);

    /* Start the thread team, then keep every thread busy with fork/join and
     * barrier traffic for warmup_ms before anything is timed.  On virtual
     * machines an idle vCPU is descheduled or parked by the host, and the
     * first few hundred milliseconds after idling run constructs several
     * times slower than steady state. */
#pragma omp parallel
    delay(1);
    {
        double t_end = now_us() + warmup_ms * 1e3;
        while (now_us() < t_end) {
            test_parallel(64);
            test_barrier(64);
        }
    }

    calibrate_delay();

    printf("# syncbench threads %d delaylength %d delay_us %.3f target_us %.0f outer %d"
           " warmup_ms %.0f\n",
           nthreads, delaylength, delay_us, target_us, outer, warmup_ms);
    printf("# ompt-tool %s\n", tool == omp_control_tool_notool ? "none" : "attached");
    fflush(stdout);

    for (int c = 0; c < NCONSTRUCTS; c++)
        if (!any_selected || selected[c])
            run_construct(&constructs[c]);

    if (reduction_sink < 0)
        printf("# %d\n", reduction_sink);
    return 0;
}
