/* SPDX-License-Identifier: MIT */
#ifndef GT_TESTS_CUPTI_TEST_H
#define GT_TESTS_CUPTI_TEST_H

/* Shared by test_cupti's files (test_cupti.c, replay.c). */
#include <cupti_pcsampling.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cct.h"
#include "core/metrics.h"
#include "core/thread.h"

/* CUPTI's buffer buf[len] handed to the backend, its n records at offs. */
void deliver(uint8_t *buf, size_t len, const uint32_t *offs, size_t n);
/* Node n's value of m (0 for no node); parent's child of (kind, key), or NULL. */
uint64_t metric_at(struct gt_cct_node *n, enum gt_metric m);
struct gt_cct_node *child(struct gt_cct_node *parent, enum gt_node_kind kind, uint64_t key);
/* Metric m summed over t's placeholders ph and their children. */
uint64_t tree_sum(struct gt_thread *t, enum gt_placeholder ph, enum gt_metric m);

/* The modes on files; each returns 0 when its checks pass. */
int replay(const char *path, unsigned short_launches);
int replay_blame(const char *path);
int replay_pc(const char *path, const char *source, unsigned thin);
int replay_advice(const char *path, unsigned period_log2);
/* Replays a recording's activity alone into GT_REPLAY_PROFILE. */
int replay_profile(const char *path);
/* The activity side of a replay (replay.c): cb's activity callbacks set and
 * the monitor started, the thread the tree is built in; then, after
 * gt_cupti_record__replay, every activity applied to that tree. */
struct gt_cupti_replay;
struct gt_thread *replay_activity_begin(struct gt_cupti_replay *cb);
void replay_activity_end(void);
/* pcsamp-test.c: PC samples through a stand-in CUPTI. */
void test_pc_sampling(void);
void test_sass_counts(void);
int test_pc_bg(void);
void test_pc_period(void);
void test_pc_preload(void);
void test_counts_serial_kind(void);
/* smclock-test.c: the SM clock through a stand-in NVML. */
void test_smclock_idle(void);
void test_smclock_busy(void);
/* A CUPTI whose PC-sampling enable, disable and configuration succeed
 * (GPUTOOL_PC_SAMPLING on), and whose stall reasons, samples, modules'
 * CRCs and source lines come from data's functions; the data buffer the
 * backend configured. */
struct pc_fake {
	CUptiResult(CUPTIAPI *num_reasons)(CUpti_PCSamplingGetNumStallReasonsParams *p);
	CUptiResult(CUPTIAPI *get_reasons)(CUpti_PCSamplingGetStallReasonsParams *p);
	CUptiResult(CUPTIAPI *get_data)(CUpti_PCSamplingGetDataParams *p);
	CUptiResult(CUPTIAPI *cubin_crc)(CUpti_GetCubinCrcParams *p);
	CUptiResult(CUPTIAPI *sass_line)(CUpti_GetSassToSourceCorrelationParams *p);
};
void pc_fake_install(const struct pc_fake *data);
/* A launch of the kernel CUPTI names @cupti_name, @ns long, at call site
 * @site under @t's root; its kernel node. */
struct gt_cct_node *pc_kernel_launch(struct gt_thread *t, uint64_t site, const char *cupti_name, uint64_t ns);
CUpti_PCSamplingData *pc_fake_buffer(void);
int elide(const char *exe);

#endif
