/* SPDX-License-Identifier: MIT */
/*
 * qos.c - try_acquire_qos (mcc_policy_v1.h, v1.2): one window served in
 * class order.
 *
 * A domain whose HIGH work is active (a HIGH call within the last
 * qos_hold_epochs epochs) keeps a reserve for HIGH beside its window: one
 * of HIGH's largest slices times qos_reserve_slices, at most
 * qos_reserve_percent of the window. A LOW slice is admitted only while it
 * leaves the reserve free (in-flight + slice + reserve <= window), a MEDIUM
 * slice while it leaves half of it; HIGH is never held back for them. So
 * when room comes back (a completion), it goes to HIGH first, and a HIGH
 * slice arriving at a full window finds its room at once. Work-conserving:
 * with no HIGH work there is no reserve, and an empty domain admits a slice
 * of any class (the empty-domain rule). The reserve is checked, then the
 * slice takes the ordinary admission (mcc_core_try_acquire), which alone
 * reserves bytes: the check is a gate in front of the window, not a second
 * window, and lanes racing on it can overshoot the reserve by their slices
 * in flight, never the window. Refusals by either are counted per class.
 *
 * Runs with one class behave as try_acquire: all HIGH only marks activity;
 * MEDIUM or LOW alone never sees a reserve.
 *
 * Hot path: a few relaxed loads; a HIGH call stores its epoch at most once
 * per epoch per domain and raises the largest slice when it grows.
 */
#include <errno.h>

#include "core.h"

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define COLD __attribute__((cold, noinline))

static inline void qos_mark(struct mcc_dom *d, uint64_t ep, uint64_t bytes)
{
	if (atomic_load_explicit(&d->qos_high_ep, RLX) != ep)
		atomic_store_explicit(&d->qos_high_ep, ep, RLX);
	if (UNLIKELY(bytes > atomic_load_explicit(&d->qos_high_slice, RLX)))
		mcc_raise_u64(&d->qos_high_slice, bytes);
}

/* The reserve of d at epoch `ep`: 0 while HIGH is idle there. */
static inline uint64_t qos_reserve_at(const struct mcc_core *core, const struct mcc_dom *d,
                                      uint64_t ep)
{
	uint64_t hep = atomic_load_explicit(&d->qos_high_ep, RLX);
	if (LIKELY(!hep || ep - hep > core->p.qos_hold_epochs))
		return 0;
	uint64_t r = (uint64_t)core->p.qos_reserve_slices *
	             atomic_load_explicit(&d->qos_high_slice, RLX);
	uint64_t cap = atomic_load_explicit(&d->window, RLX) * core->p.qos_reserve_percent / 100u;
	return r < cap ? r : cap;
}

uint64_t mcc_qos_reserve(const struct mcc_core *core, const struct mcc_dom *d)
{
	return qos_reserve_at(core, d, atomic_load_explicit(&core->epoch_no, RLX));
}

/* Whether `bytes` of a lower class leave `res` of d's window free. A
 * QUARANTINED or PROBING domain has no window to share: admission decides. */
static COLD bool qos_fits(const struct mcc_dom *d, uint64_t bytes, uint64_t res)
{
	if (mcc_ctl_state(atomic_load_explicit(&d->ctl, ACQ)) >= MCC_PATH_QUARANTINED)
		return true;
	uint64_t eff = mcc_dom_inflight_admission(d);
	return eff == 0 || eff + bytes + res <= atomic_load_explicit(&d->window, RLX);
}

/* try_acquire with the lane's class set, so its refusals count per class. */
static inline int qos_acquire(struct mcc_lane *lane, mcc_route *r, uint64_t bytes,
                              uint32_t generation, const struct mcc_task_ref_v1 *task,
                              uint32_t cls, struct mcc_permit_v1 *p)
{
	lane->qos_cls = cls + 1;
	int rc = mcc_core_try_acquire(lane, r, bytes, generation, task, p);
	lane->qos_cls = 0;
	return rc;
}

/* A lower-class slice over d's reserve: DEFER (observe: counted, admitted
 * and flagged OBSERVED). */
static COLD int qos_over(struct mcc_lane *lane, struct mcc_route *r, struct mcc_device *dv,
                         struct mcc_dom *d, uint64_t bytes, uint32_t generation,
                         const struct mcc_task_ref_v1 *task, uint32_t cls,
                         struct mcc_permit_v1 *p)
{
	/* bad input is try_acquire's -EINVAL, never a refusal */
	if (bytes - 1 >= MCC_BYTES_MAX || p->struct_size < sizeof(*p) ||
	    (p->flags & MCC_PERMIT_F_LIVE))
		return -EINVAL;
	lane->qos_cls = cls + 1;
	int dec = mcc_core_refuse(lane, r, dv, d, MCC_DEFER, bytes, generation, task, p);
	lane->qos_cls = 0;
	if (lane->core->mode != MCC_MODE_OBSERVE)
		return dec;
	int rc = mcc_core_try_acquire(lane, r, bytes, generation, task, p);
	if (rc == MCC_ADMIT)
		p->flags |= MCC_PERMIT_F_OBSERVED;
	return rc;
}

int mcc_core_try_acquire_qos(mcc_lane *lane, mcc_route *r, uint64_t bytes, uint32_t generation,
                             const struct mcc_task_ref_v1 *task, uint32_t cls,
                             struct mcc_permit_v1 *p)
{
	if (UNLIKELY(!lane || !r || !p || cls >= MCC_QOS_CLASS_COUNT_))
		return -EINVAL;
	struct mcc_device *dv = atomic_load_explicit(&r->dev, ACQ);
	uint64_t ep = atomic_load_explicit(&lane->core->epoch_no, RLX);
	if (cls == MCC_QOS_HIGH) {
		qos_mark(&dv->d, ep, bytes);
		qos_mark(&r->d, ep, bytes);
		return qos_acquire(lane, r, bytes, generation, task, cls, p);
	}
	unsigned shift = cls == MCC_QOS_MEDIUM; /* MEDIUM leaves half the reserve */
	uint64_t res = qos_reserve_at(lane->core, &dv->d, ep) >> shift;
	if (UNLIKELY(res) && !qos_fits(&dv->d, bytes, res))
		return qos_over(lane, r, dv, &dv->d, bytes, generation, task, cls, p);
	res = qos_reserve_at(lane->core, &r->d, ep) >> shift;
	if (UNLIKELY(res) && !qos_fits(&r->d, bytes, res))
		return qos_over(lane, r, dv, &r->d, bytes, generation, task, cls, p);
	return qos_acquire(lane, r, bytes, generation, task, cls, p);
}
