/* SPDX-License-Identifier: MIT */
#ifndef GT_REPORT_PTREE_H
#define GT_REPORT_PTREE_H

/*
 * What the GPU sections and the advice read of one profile's tree: per-node
 * totals of a metric by name, a node's label and calling context as text,
 * and the kernel context above a node. Everything reads the profile only.
 */
#include <stddef.h>
#include <stdint.h>

#include "core/profile.h"

#define GT_PTREE_WHERE_COLS 96 /* a calling context is shortened to about this width */

/* Per-node totals of a metric, exclusive or inclusive; zeros when the
 * profile lacks it. malloc()ed, n_nodes long (at least 1); NULL: no memory. */
uint64_t *gt_ptree__excl(const struct gt_profile *p, const char *name);
uint64_t *gt_ptree__incl(const struct gt_profile *p, const char *name);

/* Appends to out (cap bytes, *len used): printable s. */
void gt_ptree__put(char *out, size_t cap, size_t *len, const char *s);
/* Appends node i's label: "function (file.c:12)", "module+0x1f", a
 * placeholder's or a name's text. */
void gt_ptree__label(const struct gt_profile *p, uint32_t i, char *out, size_t cap, size_t *len);
/* The context of node from, innermost first, at most GT_PTREE_WHERE_COLS
 * columns (report/paths.h; "<program>" for the root). */
void gt_ptree__where(const struct gt_profile *p, uint32_t from, char *out, size_t cap);

/* The type of a host device's node ("device 0 (generic-64bit)", as
 * ompt/target-devices.c names it; an x86_64 type from other runtimes):
 * "generic-64bit)", else NULL. The same types as the collector's
 * host_device() in ompt/target.c. */
const char *gt_ptree__host_device(const struct gt_profile *p, uint32_t i);
/* Whether node i is a host device's node or below one: its operations
 * ran on this CPU. */
int gt_ptree__on_host(const struct gt_profile *p, uint32_t i);
/* Whether the profile has device time (class device) outside host
 * devices: time of a real accelerator. */
int gt_ptree__device_time(const struct gt_profile *p);

/* Whether node i is the "<gpu kernel>" placeholder. */
int gt_ptree__is_kernel_ph(const struct gt_profile *p, uint32_t i);
/* The kernel context above GPU node i (a line, a loop, a GPU function), and
 * in path the GPU context between them, innermost first ("" if none);
 * GT_NONE when i is not under a kernel. */
uint32_t gt_ptree__kernel_of(const struct gt_profile *p, uint32_t i, char *path, size_t cap);
/* For each node, the kernel context it is in or is (GT_NONE else); malloc()ed. */
uint32_t *gt_ptree__kernels(const struct gt_profile *p);
/* The launch site of kernel context k: the node above its placeholder. */
uint32_t gt_ptree__launch_site(const struct gt_profile *p, uint32_t k);

/* Whether node i is the measurement's time, not the program's work: under
 * a "<tool: LIBRARY>" node, or its innermost frame in a measurement
 * library (core/modmap.c lists them; a profile written before they were
 * put under such nodes has them as frames). Advice names no such context. */
int gt_ptree__tool_time(const struct gt_profile *p, uint32_t i);

#endif
