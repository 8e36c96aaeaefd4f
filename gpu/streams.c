/* SPDX-License-Identifier: MIT */
/*
 * The streams' last busy times (gpu/streams.h): an open-addressing table
 * keyed by (device, stream), linear probing, grown at half full, never
 * shrunk. Monitor thread only.
 */
#include "gpu/streams.h"

#include <stdlib.h>

struct stream_slot {
	uint64_t stream;
	uint32_t device;
	uint32_t used;
	uint64_t end_ns; /* the end of the stream's latest operation */
};

static struct {
	struct stream_slot *slots;
	uint32_t cap, size; /* cap: a power of two, or 0 */
} tab;

static uint32_t slot_hash(uint32_t device, uint64_t stream)
{
	uint64_t h = (stream ^ ((uint64_t)device << 40)) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 32);
}

static struct stream_slot *probe(struct stream_slot *slots, uint32_t cap, uint32_t device, uint64_t stream)
{
	uint32_t i = slot_hash(device, stream) & (cap - 1);

	while (slots[i].used && (slots[i].device != device || slots[i].stream != stream))
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int grow(void)
{
	uint32_t cap = tab.cap ? tab.cap * 2 : 64;
	struct stream_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -1;
	for (uint32_t i = 0; i < tab.cap; i++)
		if (tab.slots[i].used)
			*probe(slots, cap, tab.slots[i].device, tab.slots[i].stream) = tab.slots[i];
	free(tab.slots);
	tab.slots = slots;
	tab.cap = cap;
	return 0;
}

uint64_t gt_streams__idle_before(const struct gt_device_op *op, uint64_t issued_ns, int single)
{
	struct stream_slot *s;
	uint64_t prev, idle = 0;

	if (op->kind != GT_DEVOP_KERNEL && op->kind != GT_DEVOP_COPY && op->kind != GT_DEVOP_MEMSET)
		return 0;
	if (!op->start_ns || op->end_ns < op->start_ns)
		return 0;
	if ((tab.size + 1) * 2 > tab.cap && grow())
		return 0; /* no memory: no launch-bound figures, nothing else lost */
	s = probe(tab.slots, tab.cap, op->device, op->stream);
	if (!s->used) {
		*s = (struct stream_slot){ .stream = op->stream, .device = op->device, .used = 1 };
		tab.size++;
	}
	prev = s->end_ns;
	if (op->kind == GT_DEVOP_KERNEL && single && prev && issued_ns && issued_ns < prev && op->start_ns > prev)
		idle = op->start_ns - prev;
	if (op->end_ns > prev)
		s->end_ns = op->end_ns;
	return idle;
}

void gt_streams__fini(void)
{
	free(tab.slots);
	tab.slots = NULL;
	tab.cap = tab.size = 0;
}
