/* SPDX-License-Identifier: MIT */
/* hostenv.c - helpers shared by the engine stubs (no hook dependency). */
#include "hostenv.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

uint64_t mcc_host_checksum(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h ^ (h >> 32);
}

#define LANE_IDS 4096
static pthread_mutex_t lane_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned char lane_used[LANE_IDS];

int mcc_host_lane_id_alloc(void)
{
	int id = -1;
	pthread_mutex_lock(&lane_mu);
	for (int i = 0; i < LANE_IDS; i++)
		if (!lane_used[i]) {
			lane_used[i] = 1;
			id = i;
			break;
		}
	pthread_mutex_unlock(&lane_mu);
	return id;
}

uint32_t mcc_host_lane_budget(uint32_t own)
{
	uint32_t high = 0;
	pthread_mutex_lock(&lane_mu);
	for (int i = LANE_IDS - 1; i >= 0; i--)
		if (lane_used[i]) {
			high = (uint32_t)i + 1;
			break;
		}
	pthread_mutex_unlock(&lane_mu);
	uint32_t n = high + own;
	return n > LANE_IDS ? LANE_IDS : n;
}

void mcc_host_lane_id_free(int id)
{
	if (id < 0 || id >= LANE_IDS)
		return;
	pthread_mutex_lock(&lane_mu);
	lane_used[id] = 0;
	pthread_mutex_unlock(&lane_mu);
}

static pthread_mutex_t tick_mu = PTHREAD_MUTEX_INITIALIZER;
static const void *tick_inst;
static uint64_t tick_last;

int mcc_host_tick_claim(const void *inst, uint64_t now, uint64_t epoch)
{
	if (pthread_mutex_trylock(&tick_mu) != 0)
		return 0;
	if (tick_inst != inst) {
		tick_inst = inst;
		tick_last = 0;
	}
	if (tick_last && now - tick_last < epoch) {
		pthread_mutex_unlock(&tick_mu);
		return 0;
	}
	tick_last = now;
	return 1; /* held until mcc_host_tick_done */
}

void mcc_host_tick_done(void)
{
	pthread_mutex_unlock(&tick_mu);
}

void mcc_host_detail_unknown(struct mcc_task_detail *d)
{
	uint32_t sz = d->struct_size;
	memset(d, 0, sz < sizeof(*d) ? sz : sizeof(*d));
	d->struct_size = sz;
	d->state = MCC_TASK_UNKNOWN;
}

int mcc_host_task_query(const struct mcc_policy_v1 *ops, void *ctx, uint64_t batch_id,
                        uint64_t task_id, uint32_t facts, struct mcc_task_detail *d)
{
	struct mcc_task_ref ref = {batch_id, task_id, 0, 0};
	int rc = ops->task_query(ctx, &ref, facts, d);
	if (rc < 0) {
		d->state = MCC_TASK_UNKNOWN;
		return rc == -ENOENT ? 0 : rc;
	}
	d->state = (uint32_t)rc;
	return 0;
}

uint64_t mcc_host_fab_step(mcc_fab_model *m, mcc_exec *ex, uint64_t now)
{
	const uint64_t poll_ns = 200000;
	uint64_t next = mcc_fab_model_advance(m, now);
	if (mcc_exec_kind(ex) == MCC_EXEC_THREADED) /* real time: poll the model */
		return next == MCC_FAB_NEVER || next > now + poll_ns ? now + poll_ns : next;
	return next == MCC_FAB_NEVER ? MCC_EXEC_PARK : next;
}
