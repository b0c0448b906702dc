/* SPDX-License-Identifier: MIT */
/*
 * recorder.c - observe mode's bounded, lock-free, multi-producer ring of
 * normalised signals and state transitions, and its JSON-lines dump.
 *
 * Producers claim an index with one fetch_add on `head`, then claim the slot
 * by CAS of its sequence word from an older even value to 2*index+1, write
 * the payload, and publish 2*index+2. A producer that finds the slot busy or
 * already newer drops its record (counted); the ring keeps the newest
 * `entries` records. dump() reads a slot like a seqlock and skips slots that
 * are being written or were overwritten meanwhile.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

struct mcc_recorder *mcc_rec_create(uint32_t entries)
{
	uint64_t n = 16;
	while (n < entries && n < (1u << 24))
		n <<= 1;
	struct mcc_recorder *rec = aligned_alloc(MCC_LINE, sizeof(*rec));
	if (!rec)
		return NULL;
	memset(rec, 0, sizeof(*rec));
	rec->slots = calloc(n, sizeof(*rec->slots));
	if (!rec->slots) {
		free(rec);
		return NULL;
	}
	rec->mask = n - 1;
	return rec;
}

void mcc_rec_destroy(struct mcc_recorder *rec)
{
	if (!rec)
		return;
	free(rec->slots);
	free(rec);
}

void mcc_rec_put(struct mcc_recorder *rec, const struct mcc_rec_entry *e)
{
	if (!rec)
		return;
	uint64_t idx = atomic_fetch_add_explicit(&rec->head, 1, RLX);
	struct mcc_rec_slot *s = &rec->slots[idx & rec->mask];
	uint64_t mine = 2 * idx + 1;
	uint64_t cur = atomic_load_explicit(&s->seq, RLX);
	if ((cur & 1) || cur >= mine ||
	    !atomic_compare_exchange_strong_explicit(&s->seq, &cur, mine, ACQ, RLX)) {
		atomic_fetch_add_explicit(&rec->dropped, 1, RLX);
		return;
	}
	atomic_store_explicit(&s->w[0], e->ts, RLX);
	atomic_store_explicit(&s->w[1], e->route_id, RLX);
	atomic_store_explicit(&s->w[2], e->bytes, RLX);
	atomic_store_explicit(&s->w[3],
	                      (uint64_t)e->kind | (uint64_t)e->cls << 8 | (uint64_t)e->scope << 16 |
	                          (uint64_t)e->from << 24 | (uint64_t)e->to << 32 |
	                          (uint64_t)e->reason << 40 | (uint64_t)e->flags << 48,
	                      RLX);
	atomic_store_explicit(&s->w[4], (uint64_t)e->device_id | (uint64_t)e->generation << 32, RLX);
	atomic_store_explicit(&s->w[5], (uint64_t)(uint32_t)e->wc_status | (uint64_t)e->vendor_err << 32,
	                      RLX);
	atomic_store_explicit(&s->w[6], e->code, RLX);
	atomic_store_explicit(&s->seq, mine + 1, REL);
}

static const char *kind_str(uint32_t k)
{
	static const char *const n[] = { "unknown", "wc",    "async",   "signal",    "decision",
		                         "transition", "epoch", "release", "suppressed" };
	return k < sizeof(n) / sizeof(n[0]) ? n[k] : "unknown";
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* One JSON object per line; fields that do not apply are null. */
static int format(char *b, size_t cap, const uint64_t w[7])
{
	uint32_t kind = (uint32_t)(w[3] & 0xff), cls = (uint32_t)(w[3] >> 8 & 0xff),
	         scope = (uint32_t)(w[3] >> 16 & 0xff), from = (uint32_t)(w[3] >> 24 & 0xff),
	         to = (uint32_t)(w[3] >> 32 & 0xff), reason = (uint32_t)(w[3] >> 40 & 0xff),
	         flags = (uint32_t)(w[3] >> 48 & 0xff);
	char route[24] = "null", dev[16] = "null", wcs[16] = "null", verr[16] = "null";
	char sfrom[24] = "null", sto[24] = "null";
	if (flags & MCC_RECF_ROUTE)
		snprintf(route, sizeof(route), "%" PRIu64, w[1]);
	if (flags & MCC_RECF_DEVICE)
		snprintf(dev, sizeof(dev), "%" PRIu32, (uint32_t)w[4]);
	if (flags & MCC_RECF_WC) {
		snprintf(wcs, sizeof(wcs), "%" PRId32, (int32_t)(uint32_t)w[5]);
		snprintf(verr, sizeof(verr), "%" PRIu32, (uint32_t)(w[5] >> 32));
	}
	if (flags & MCC_RECF_STATES) {
		snprintf(sfrom, sizeof(sfrom), "\"%s\"", mcc_state_str(from));
		snprintf(sto, sizeof(sto), "\"%s\"", mcc_state_str(to));
	}
	return snprintf(b, cap,
	                "{\"ts\":%" PRIu64 ",\"kind\":\"%s\",\"class\":\"%s\",\"scope\":\"%s\","
	                "\"route_id\":%s,\"device\":%s,\"from\":%s,\"to\":%s,\"wc_status\":%s,"
	                "\"vendor_err\":%s,\"generation\":%" PRIu32 ",\"bytes\":%" PRIu64
	                ",\"reason\":\"%s\",\"code\":%" PRIu64 "}\n",
	                w[0], kind_str(kind), mcc_class_str(cls), mcc_scope_str(scope), route, dev,
	                sfrom, sto, wcs, verr, (uint32_t)(w[4] >> 32), w[2], mcc_reason_str(reason),
	                w[6]);
}

int mcc_rec_dump(struct mcc_recorder *rec, int fd)
{
	if (!rec)
		return -EOPNOTSUPP;
	if (fd < 0)
		return -EBADF;
	uint64_t head = atomic_load_explicit(&rec->head, ACQ);
	uint64_t n = rec->mask + 1, start = head > n ? head - n : 0;
	char line[512];
	int count = 0;
	for (uint64_t idx = start; idx < head; idx++) {
		struct mcc_rec_slot *s = &rec->slots[idx & rec->mask];
		uint64_t s1 = atomic_load_explicit(&s->seq, ACQ), w[7];
		if (s1 != 2 * idx + 2)
			continue; /* being written, dropped or overwritten */
		for (int i = 0; i < 7; i++)
			w[i] = atomic_load_explicit(&s->w[i], RLX);
		atomic_thread_fence(ACQ);
		if (atomic_load_explicit(&s->seq, RLX) != s1)
			continue;
		int len = format(line, sizeof(line), w);
		if (len < 0 || (size_t)len >= sizeof(line))
			continue;
		int rc = write_all(fd, line, (size_t)len);
		if (rc < 0)
			return rc;
		count++;
	}
	return count;
}

int mcc_core_dump(void *ctx, int fd)
{
	struct mcc_core *core = ctx;
	if (!core)
		return -EINVAL;
	return mcc_rec_dump(core->rec, fd);
}
