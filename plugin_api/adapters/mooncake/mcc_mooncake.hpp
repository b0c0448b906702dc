/* SPDX-License-Identifier: MIT */
/*
 * mcc_mooncake.hpp - the Mooncake classic Transfer Engine adapter: each TE
 * call site becomes one call (INTEGRATION.md names the sites). Built on the
 * engine SDK (mcc_engine.h); its interface holds only plain values (strings,
 * integers, opaque pointers, raw ibv enum values as int) and mcc types, so it
 * builds and is tested without Mooncake. The templates at the end read
 * rdma-core structs by member name (duck typing): this header never includes
 * <infiniband/verbs.h>.
 *
 *   TE object / thread                     adapter
 *   -------------------------------------  -----------------------------------
 *   WorkerPool constructor / destructor    Pool(desc) / ~Pool
 *   the context's accessor                 or_inert(pool)    (never NULL)
 *   worker thread start                    pool.bind_thread(tid)
 *   post site, per QP chunk                route(), admit_prefix()
 *   post pass, per peer_nic_path group     reroute()         (AVOID / held: move)
 *   isRailAvailable                        avoided()         (selection skips it)
 *   ibv_post_send bad_wr                   unposted()
 *   end of a post pass                     end_post_pass()   (parks on DEFER)
 *   poll loop, per WC                      complete_wc()
 *   end of a poll pass                     end_poll_pass()   (notify, tick)
 *   async event, before ibv_ack            async_event()
 *   endpoint destroyed / rebuilt           endpoint_retired()
 *   handshake failed                       setup_failed()
 *   allocateBatchID / freeBatchID          batch_begin() / batch_free()
 *   caller's status query                  task_state()
 *   operator                               list(), summary() (and a periodic log)
 *
 * Model. One SDK engine per process (shared by every Pool, reference
 * counted); one Pool per TE WorkerPool (one local RDMA device: the device
 * domain); one lane per worker thread. With workers > 1, worker 0 only polls
 * and the others only post (TE's split); with 1 worker it does both. TENT's
 * workers each post and poll for every device: one Pool per TENT
 * RdmaContext with split_roles = false, lane(worker id) on both sides. A route
 * is (device, peer_nic_path); each lane caches the routes it posts on, so the
 * hot path takes no lock. Endpoints are told apart by an incarnation (the
 * endpoint pointer mixed with its first QP number), so a replaced endpoint or
 * one rebuilt in place with new QPs bumps the route's generation and late
 * feedback of the old one settles accounting only.
 *
 * Permits. TE's Slice has no spare field, so each Pool keeps its permits in
 * a fixed, lock-free side table keyed by the Slice pointer, sized from
 * max_outstanding (the context's CQ capacity) at construction. Nothing is
 * allocated on the hot path. A slice that finds no free slot is posted
 * without a permit (counted in Stats::passthrough), never refused.
 *
 * Reroute. At the post site admit() answers MCC_ADMIT or MCC_DEFER: a slice
 * refused there stays in TE's queue. When the refusal says the path should
 * not carry it now (MCC_AVOID: the route or device is quarantined or over
 * its probe budget; or a DEFER while the route or device is held near its
 * minimum window: gray loss, a sick local NIC, whose completions read as
 * queueing), the Pool marks the path, and TE's next post pass asks
 * reroute(), which answers where the group goes: another peer NIC from this
 * device (TE's own remote re-selection, which skips the marked path through
 * avoided()), another local NIC and a peer NIC it reaches (TE's local
 * hand-off with the peer NIC selected again, INTEGRATION.md site 11),
 * nowhere (MCC_SIG_NO_USABLE_PATH is reported for the slices' tasks, so
 * task queries read LONG_UNAVAILABLE; the slices wait, never fail), or stay
 * (an ordinary DEFER: the window is full). Neither TE's retry budget nor its
 * rail pause is touched: a rerouted slice was never posted.
 *
 * DEFER. A refused route is not asked again by the same lane
 * until room may be back: the device settled (completed or released) as
 * many bytes as the refused slice needs, or kGrowthEpochs epochs (or more,
 * below) passed (a tick may have grown a window), and, for a quarantined route, its cooldown
 * ended. A re-ask that settled bytes allowed asks for at most those bytes
 * (the slice after them waits without a call), except once per
 * kGrowthEpochs (doubled up to kGrowthEpochsMax while such asks find no
 * more room), when it asks until refused (a tick may have grown the
 * window). So a refused slice costs at most one try_acquire, not a spin,
 * and on a slow path (one slice per several epochs) not one per tick or
 * per settled slice either. A posting-only lane whose whole pass was
 * refused parks in end_post_pass() for at most one epoch (a poll pass that
 * settles bytes wakes it).
 *
 * Off. With mode = off (the default), or if the policy could not be loaded,
 * enabled() is false and every call admits everything and does nothing else.
 *
 * Errors never throw and never fail a slice: a call that cannot do its job
 * (no lane, no route, a full table, a policy error) lets the slice go
 * uncontrolled and counts it. Every member is noexcept.
 */
#ifndef MCC_MOONCAKE_HPP
#define MCC_MOONCAKE_HPP

#include "mcc.hpp"

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

namespace mcc {
namespace mooncake {

/* Process-wide options, read when the first Pool opens the engine. */
struct Options {
	const char *ini_path = nullptr;   /* NULL: $MC_ADAPTIVE_CC_CONFIG, else defaults + env */
	const char *module_dir = nullptr; /* NULL: $MC_ADAPTIVE_CC_MODULE_DIR, else pkglibdir */
	bool ignore_env = false;          /* tests: ignore MC_ADAPTIVE_CC_* */
	/* enum mcc_engine_tick, or kTickAuto: the SDK's tick thread for TE's
	 * split roles, poll passes alone when the first Pool's lanes all poll
	 * (split_roles = false: TENT's workers poll without pause, so a thread
	 * waking every epoch only takes CPU from them) */
	std::uint32_t tick = kTickAuto;
	static const std::uint32_t kTickAuto = ~0u;
	/* The engine clock, the clock of the post timestamps given to
	 * complete(): NULL is CLOCK_REALTIME, TE's getCurrentTimeInNano. */
	std::uint64_t (*now_ns)(void *) = nullptr;
	void *clock_arg = nullptr;
	void (*log)(void *, int, const char *, ...) = nullptr; /* NULL: stderr */
	void *log_arg = nullptr;
	/* A summary line per Pool (summary()), logged at INFO every this many
	 * ms from a poll pass; 0: none. Unless ignore_env,
	 * MC_ADAPTIVE_CC_SUMMARY_MS overrides it. */
	std::uint32_t summary_ms = 0;
};

/* Replace the options (tests; an engine that wants its own clock). Returns
 * 0, or -EBUSY while a Pool is open (nothing changes). */
int configure(const Options &o) noexcept;

/* One TE WorkerPool: one local device (RdmaContext). */
struct PoolDesc {
	const char *device_name = nullptr; /* e.g. "mlx5_0"; required */
	std::uint32_t device_index = 0;    /* TE context index */
	std::uint32_t port_num = 1;        /* MC_IB_PORT */
	std::uint64_t link_rate_bps = 0;   /* 0: unknown */
	std::uint32_t workers = 2;         /* workers_per_ctx (1..64) */
	/* most WRs outstanding on the context (max_cqe x num_cq_per_ctx);
	 * the side table holds twice that (rounded up to a power of two) */
	std::uint32_t max_outstanding = 4096;
	bool park = true; /* posting-only lanes park when a whole pass was refused */
	/* true: TE's split (worker 0 only polls, the others only post); false:
	 * every worker posts and polls on its own thread (TENT's Workers), so
	 * no lane parks: a refused slice waits in the worker's queue while the
	 * same thread polls */
	bool split_roles = true;
};

/* What admit() needs of one TE Slice. */
struct SliceInfo {
	const void *slice;      /* the Slice pointer (also the WR's wr_id) */
	std::uint64_t bytes;    /* slice length */
	std::uint64_t batch_id; /* the task's batch id */
	const void *task;       /* the TransferTask: the task id the policy records */
	std::uint32_t attempt;  /* the slice's retry count */
};

struct Stats {
	std::uint64_t admitted;      /* try_acquire ADMIT */
	std::uint64_t refused_calls; /* try_acquire DEFER/AVOID (calls made) */
	std::uint64_t memo_skips;    /* refusals answered without calling the policy */
	std::uint64_t parks;         /* end_post_pass() waits */
	std::uint64_t passthrough;   /* slices posted without a permit */
	std::uint64_t completions;   /* WCs that settled a permit */
	std::uint64_t no_permit;     /* WCs of slices without a permit */
	std::uint64_t released;      /* permits released unposted */
	std::uint64_t reclaimed;     /* permits released by reclaim() */
	std::uint64_t renewals;      /* routes seen with a new incarnation */
	std::uint64_t route_errors;  /* routes that could not be resolved */
	std::uint64_t reroute_peer;  /* groups sent to another peer NIC (Reroute::kPeer) */
	std::uint64_t reroute_local; /* groups sent to another local NIC (Reroute::kLocal) */
	std::uint64_t no_usable_path;/* groups with nowhere to go (Reroute::kNoUsablePath) */
	std::uint64_t avoided_hits;  /* avoided() answers true (TE's selection passed over) */
	std::uint64_t hand_offs_ok;  /* hand_off_ok() answers true (a slice not failed) */
};

/* Where the slices refused on a path go (Pool::reroute()). */
enum class Reroute : int {
	kStay = 0,        /* leave them queued: an ordinary DEFER (the window is full) */
	kPeer = 1,        /* another peer NIC from this device: TE's remote
	                   * re-selection (WorkerPool::redispatch), which passes over
	                   * the marked path (avoided() in isRailAvailable); a held
	                   * device gets it only when no other local NIC can take
	                   * the group (kLocal first) */
	kLocal = 2,       /* another local NIC, which selects the peer NIC again
	                   * (tryHandoffToAnotherLocalWorker(slice, true), site 11:
	                   * from another local NIC the old peer NIC may be a
	                   * cross-rail path) */
	kNoUsablePath = 3 /* nowhere now: leave them queued (they are not failed);
	                   * MCC_SIG_NO_USABLE_PATH was reported for their tasks */
};
const char *reroute_name(Reroute v) noexcept;

/* One row of Pool::list(): the Pool's device, or one of its routes. */
struct PathView {
	std::string path;        /* peer_nic_path; empty for the device row */
	bool device = false;     /* the device domain of the Pool */
	mcc_domain_stats_v1 st;  /* state, window, in-flight, cuts, quarantines,
	                          * cooldown left, hard errors, generation, drain ... */
	int mark = 0;            /* 0 none, 1 avoided (AVOID), 2 held (DEFER near the floor) */
	std::uint64_t mark_left_ms = 0; /* until the mark lapses */
};

/* The engine's own answer for another path of the same device (sites 9
 * and 10): true when TE's selection would use `key` now as far as TE's own
 * state goes (for TE, the body of WorkerPool::isRailAvailable without the
 * avoided() call: its RailState pause; never isRailAvailable itself, which
 * would recurse). Called with no lock of the adapter held, only for the
 * other paths of a marked path's peer server. A path it refused is, for
 * kPausedMemoNs unless asked again, no target for a hand-off from another
 * local NIC (Reroute::kLocal, hand_off_ok()). */
typedef bool (*PathUsable)(void *arg, const char *key, std::size_t klen);

struct Lane;  /* one worker thread's state (opaque) */
struct Route; /* a lane's cached route (opaque; valid while the Pool lives) */

class Pool {
public:
	explicit Pool(const PoolDesc &d) noexcept;
	~Pool();
	Pool(const Pool &) = delete;
	Pool &operator=(const Pool &) = delete;

	/* false: mode off, or the engine/device could not be opened (error()) */
	bool enabled() const noexcept { return enabled_; }
	int error() const noexcept { return err_; }

	/* The process's inert Pool: never enabled (error() -ENODEV), opens no
	 * engine; every call on it admits everything and does nothing, as in
	 * mode off. For a context that has no Pool of its own: an engine object
	 * built on a context that was never constructed (TE's unit tests build
	 * WorkerPools so), a TENT context that is not an RDMA device. See
	 * or_inert(). */
	static Pool &inert() noexcept;

	/* The lane of worker `tid`, NULL when disabled or out of range. */
	Lane *lane(std::uint32_t tid) const noexcept;
	/* Worker thread start: later this_lane() calls on this thread return
	 * lane(tid). A thread serves one Pool. */
	void bind_thread(std::uint32_t tid) const noexcept;
	Lane *this_lane() const noexcept;

	/* ------------------------------------------------ post side (lane) */

	/* The route of `key` (TE's peer_nic_path) served by the endpoint
	 * `incarnation` (see incarnation()), registering its QPs for async
	 * events. NULL (slices then go uncontrolled) on a NULL lane or a
	 * policy error. A lane-cache hit is a hash and a compare. */
	Route *route(Lane *l, const char *key, std::size_t klen, std::uint64_t incarnation,
	             const std::uint32_t *qp_nums, std::size_t nqp) noexcept;
	static std::uint64_t incarnation(const void *endpoint, std::uint32_t first_qp_num) noexcept;

	/* Admission of one slice: MCC_ADMIT (post it; a permit is kept for it)
	 * or MCC_DEFER (leave it queued; AVOID is folded into DEFER). NULL l or
	 * r: MCC_ADMIT without a permit. */
	int admit(Lane *l, Route *r, const SliceInfo &s) noexcept;

	/* The admitted slice was not handed to hardware (bad_wr and after, or
	 * not posted after all): its permit is released. */
	void unposted(Lane *l, const void *slice,
	              std::uint32_t reason = MCC_REL_POST_REJECTED) noexcept;

	/* Site 9: the group of slices TE holds for `key` on lane `l`, at the start
	 * of its post pass: whether it may be posted here (Reroute::kStay) or
	 * must go elsewhere (see "Reroute" above). One relaxed load while this
	 * Pool has no marked path. `first` (optional) is one slice of the group,
	 * for the NO_USABLE_PATH evidence; the template below passes up to 16
	 * slices of distinct tasks. */
	Reroute reroute(Lane *l, const char *key, std::size_t klen,
	                const SliceInfo *slices = nullptr, std::size_t nslices = 0) noexcept;
	/* As above, Reroute::kPeer counting only another path that `usable`
	 * (the engine's rail state, see PathUsable) still allows: a path TE
	 * paused is no alternative. Without `usable` (NULL, or the call above)
	 * every unmarked path counts, which is right only for an engine that
	 * pauses no path of its own: TE pauses rails (RailState), so TE's
	 * wiring passes its rail check (the template below). */
	Reroute reroute(Lane *l, const char *key, std::size_t klen, const SliceInfo *slices,
	                std::size_t nslices, PathUsable usable, void *arg) noexcept;

	/* Site 10 (WorkerPool::isRailAvailable): true while the adapter moves
	 * traffic off `key` on this device and this device has another path to
	 * the same peer server (the part of `key` before its last '@') that it
	 * does not move traffic off and that `usable` (the engine's own rail
	 * state, see PathUsable) still allows: TE's selection then passes over
	 * `key`. False while this device is held or quarantined and another
	 * local NIC can take the traffic (the hand-off, Reroute::kLocal, moves
	 * it there). Never true for the last path to a peer that TE would use,
	 * so TE's selection never fails a slice ("all rails failed") because
	 * of the controller. Thread: any. One relaxed load while no path is
	 * marked. */
	bool avoided(const char *key, std::size_t klen, PathUsable usable, void *arg) const noexcept;
	/* avoided(key, te_usable): `te_usable(const std::string &path)` is a
	 * callable (a lambda) answering PathUsable's question. */
	template <class Usable, class = typename std::enable_if<!std::is_arithmetic<Usable>::value>::type>
	bool avoided(const std::string &key, const Usable &te_usable) const noexcept
	{
		return avoided(key.data(), key.size(), &usable_thunk<Usable>,
		               const_cast<void *>(static_cast<const void *>(&te_usable)));
	}
	/* Without the engine's answer: every path the adapter does not move
	 * traffic off counts as an alternative. Unsafe in an engine that
	 * pauses paths of its own (TE's RailState): the other path may be one
	 * TE paused, and its selection then finds no rail and fails the slice.
	 * Kept for wirings of engines without such pauses. */
	bool avoided(const char *key, std::size_t klen) const noexcept;
	bool avoided(const std::string &key) const noexcept
	{
		return avoided(key.data(), key.size());
	}

	/* Site 11: TE is about to fail a slice to `key` because it paused every
	 * rail of this device to the peer ("all rails failed", in
	 * submitPostSend and redispatch). True when another local NIC can take
	 * it (TE then hands it off instead: tryHandoffToAnotherLocalWorker(
	 * slice, true), where the other NIC selects the peer NIC again).
	 * Enforce mode only (observe changes nothing TE does); false while
	 * disabled. Thread: any. */
	bool hand_off_ok(const char *key, std::size_t klen) const noexcept;
	bool hand_off_ok(const std::string &key) const noexcept
	{
		return hand_off_ok(key.data(), key.size());
	}

	/* End of a post pass: when the pass admitted nothing and refused
	 * something, a posting-only lane parks until room may be back (at most
	 * one epoch). Returns 1 when it parked. */
	int end_post_pass(Lane *l) noexcept;

	/* ------------------------------------------------ poll side (lane) */

	/* One polled WC of `slice`; post_clock_ns is the slice's post time on
	 * the engine clock (TE's slice->ts), 0 if unknown. Returns 1 when a
	 * permit was settled, 0 when the slice had none. */
	int complete(Lane *l, const void *slice, int wc_status, std::uint32_t vendor_err,
	             std::uint32_t qp_num, int opcode, std::uint64_t post_clock_ns) noexcept;

	/* End of a poll pass that reaped ncqe WCs: poller progress, wakes parked
	 * posters if bytes were settled, ticks the policy if an epoch is due. */
	void end_poll_pass(Lane *l, std::uint32_t ncqe) noexcept;

	/* ---------------------------------------------- monitor, resolver */

	/* One async event (raw enum ibv_event_type), before ibv_ack_async_event.
	 * The element is chosen from the type; qp_num, port_num or cq are read
	 * accordingly. Returns mcc_engine_async_event's result (1 delivered,
	 * 0 not wanted, -ENOENT unknown QP/CQ) or 0 when disabled. */
	int async_event(int event_type, std::uint32_t qp_num, std::uint32_t port_num,
	                std::uintptr_t cq) noexcept;

	/* The endpoint's QPs are about to be destroyed: events naming them
	 * become no-ops. */
	void endpoint_retired(const std::uint32_t *qp_nums, std::size_t nqp) noexcept;

	/* Connection set-up / handshake / segment-descriptor failure towards
	 * `key` (enum mcc_engine_setup_stage, errno). Returns the signal kind
	 * delivered, 0, or a negative errno. */
	int setup_failed(std::uint32_t stage, const char *key, std::size_t klen, int error) noexcept;

	/* Release every live permit (MCC_REL_RECLAIMED), e.g. after an endpoint
	 * was destroyed without flushing. Only while no worker runs. Returns the
	 * count. The destructor calls it. */
	std::size_t reclaim() noexcept;

	/* ------------------------------------------------- diagnostics */
	Stats stats() const noexcept;
	/* The device and every route of this Pool with its state, window,
	 * in-flight bytes, cuts, quarantines and reroute mark (operators; takes
	 * locks, not for the data path). Returns the rows, or -ENOMEM / -ENODEV
	 * (disabled; `out` is then empty). */
	int list(std::vector<PathView> &out) const noexcept;
	/* One line: the device's state, window, in-flight, cuts, quarantines;
	 * routes per state; admissions, refusals, reroutes. The line of the
	 * periodic log (Options::summary_ms). */
	std::string summary() const noexcept;
	int route_stats(const Route *r, mcc_domain_stats_v1 *out) const noexcept;
	std::uint32_t route_generation(const Route *r) const noexcept;

	/* -------------------------------------- rdma-core conveniences */

	/* route() of an RdmaEndPoint: `qps` is its vector of ibv_qp pointers. */
	template <class QpList>
	Route *route(Lane *l, const std::string &peer_nic_path, const void *endpoint,
	             const QpList &qps) noexcept
	{
		if (!l || qps.empty() || !qps[0])
			return nullptr;
		std::uint64_t inc = incarnation(endpoint, qps[0]->qp_num);
		std::uint32_t nums[kMaxQps];
		std::size_t n = 0;
		for (auto *q : qps)
			if (q && n < kMaxQps)
				nums[n++] = q->qp_num;
		return route(l, peer_nic_path.data(), peer_nic_path.size(), inc, nums, n);
	}
	/* Admit a prefix of `n` slices from `first`; info(*it) gives the
	 * SliceInfo. Returns how many may be posted (stops at the first
	 * refusal, keeping TE's order). */
	template <class It, class Info>
	std::size_t admit_prefix(Lane *l, Route *r, It first, std::size_t n, Info info) noexcept
	{
		if (!l || !r)
			return n;
		std::size_t k = 0;
		for (; k < n; ++k, ++first)
			if (admit(l, r, info(*first)) != MCC_ADMIT)
				break;
		return k;
	}
	/* One ibv_wc (wr_id is the Slice pointer). */
	template <class Wc>
	int complete_wc(Lane *l, const Wc &wc, std::uint64_t post_clock_ns) noexcept
	{
		return complete(l, reinterpret_cast<const void *>(static_cast<std::uintptr_t>(wc.wr_id)),
		                static_cast<int>(wc.status), wc.vendor_err, wc.qp_num,
		                static_cast<int>(wc.opcode), post_clock_ns);
	}
	/* One ibv_async_event. Disabled: reads nothing of it (TE's unit tests
	 * inject events whose element is not a live object). A QP event with
	 * a NULL qp: -EINVAL. */
	template <class Ev>
	int async_event(const Ev &ev) noexcept
	{
		if (!enabled_)
			return 0;
		int t = static_cast<int>(ev.event_type);
		switch (element_of(t)) {
		case MCC_ENGINE_EL_QP:
			if (!ev.element.qp)
				return -EINVAL;
			return async_event(t, ev.element.qp->qp_num, 0, 0);
		case MCC_ENGINE_EL_CQ:
			return async_event(t, 0, 0, reinterpret_cast<std::uintptr_t>(ev.element.cq));
		case MCC_ENGINE_EL_PORT:
			return async_event(t, 0, static_cast<std::uint32_t>(ev.element.port_num), 0);
		default:
			return async_event(t, 0, 0, 0);
		}
	}
	/* reroute() of a TE peer_nic_path group (vector<Slice*>): `info(s)`
	 * gives the SliceInfo of a slice. */
	template <class Group, class Info>
	Reroute reroute(Lane *l, const std::string &peer_nic_path, const Group &group,
	                Info info) noexcept
	{
		return reroute_group(l, peer_nic_path, group, info, nullptr, nullptr);
	}
	/* The same with the engine's rail check (see PathUsable): TE's wiring. */
	template <class Group, class Info, class Usable,
	          class = typename std::enable_if<!std::is_arithmetic<Usable>::value>::type>
	Reroute reroute(Lane *l, const std::string &peer_nic_path, const Group &group, Info info,
	                const Usable &te_usable) noexcept
	{
		return reroute_group(l, peer_nic_path, group, info, &usable_thunk<Usable>,
		                     const_cast<void *>(static_cast<const void *>(&te_usable)));
	}
	template <class Group, class Info>
	Reroute reroute_group(Lane *l, const std::string &peer_nic_path, const Group &group,
	                      Info info, PathUsable usable, void *arg) noexcept
	{
		if (!l || group.empty() || !marked_.load(std::memory_order_relaxed))
			return Reroute::kStay;
		SliceInfo si[16];
		std::size_t n = 0;
		for (auto it = group.begin(); it != group.end() && n < 16; ++it) {
			SliceInfo x = info(*it);
			bool seen = false;
			for (std::size_t i = 0; i < n && !seen; i++)
				seen = si[i].task == x.task && si[i].batch_id == x.batch_id;
			if (!seen)
				si[n++] = x;
		}
		return reroute(l, peer_nic_path.data(), peer_nic_path.size(), si, n, usable, arg);
	}
	template <class QpList>
	void endpoint_retired(const QpList &qps) noexcept
	{
		for (auto *q : qps) { /* NULL: destroyed by an earlier call */
			if (!q)
				continue;
			std::uint32_t n = q->qp_num;
			endpoint_retired(&n, 1);
		}
	}

	/* enum mcc_engine_element of a raw ibv_event_type value */
	static std::uint32_t element_of(int event_type) noexcept;

	static const std::size_t kMaxQps = 64;

private:
	template <class Usable>
	static bool usable_thunk(void *arg, const char *key, std::size_t klen) noexcept
	{
		try {
			return (*static_cast<const Usable *>(arg))(std::string(key, klen));
		} catch (...) {
			return false; /* unknown: not an alternative */
		}
	}
	struct Inert {};
	explicit Pool(Inert) noexcept;
	struct Slot;
	struct Mark; /* a peer path's reroute mark (mu_) */
	void mark_refusal(Route *rt, int decision, std::uint64_t bytes) noexcept;
	int mark_of(const std::string &key, std::uint64_t now) const noexcept;
	bool local_alternative(const std::string &key, int kind) const noexcept;
	bool peer_alternative(const std::string &key, int kind, std::uint64_t now, PathUsable usable,
	                      void *arg) const;
	bool device_bad(std::uint64_t now, int kind) const noexcept;
	void no_usable_path(Lane *l, const std::string &key, const SliceInfo *s,
	                    std::size_t n) noexcept;
	void log_summary(std::uint64_t now) noexcept;
	std::size_t home(std::uintptr_t key) const noexcept;
	Slot *claim(const void *slice) noexcept;
	Slot *find(const void *slice) const noexcept;
	bool refusal_stands(const Route *rt) const noexcept;
	void remember_refusal(const Lane *l, Route *rt, std::uint64_t bytes,
	                      bool called) const noexcept;
	std::string full_key(const char *key, std::size_t klen) const;

	mcc_engine *e_ = nullptr;
	const mcc_policy_v1 *ops_ = nullptr;
	void *ctx_ = nullptr;
	mcc_device *dev_ = nullptr;
	bool enabled_ = false;
	bool park_ = true;
	int err_ = 0;
	std::uint32_t port_ = 1;
	std::uint64_t (*clock_)(void *) = nullptr; /* the engine clock */
	void *clock_arg_ = nullptr;
	std::string dev_name_;
	std::vector<std::unique_ptr<Lane>> lanes_;
	std::unique_ptr<Slot[]> slots_;
	std::size_t mask_ = 0;
	unsigned shift_ = 0;
	mutable std::mutex mu_; /* keys_, marks_ */
	std::vector<std::string> keys_; /* route keys this pool published */
	std::vector<std::unique_ptr<Mark>> marks_; /* every peer path seen (mu_) */
	std::atomic<std::uint32_t> marked_{0};     /* marks set (may lag: a hint) */
	std::uint64_t min_window_ = 0, max_window_ = 0; /* the policy's window range */
	std::atomic<std::uint64_t> dev_held_until_{0}; /* SDK time: device held near its floor */
	std::uint64_t summary_ns_ = 0;
	std::atomic<std::uint64_t> next_summary_{0};
	mutable std::atomic<std::uint64_t> avoided_hits_{0}, hand_offs_ok_{0};
	bool enforce_ = false; /* mode enforce (hand_off_ok) */
	std::atomic<std::uint64_t> reclaimed_{0};
	std::atomic<std::uint64_t> settled_{0}; /* bytes settled on this device */
	/* epochs before a refused route is asked again without settled bytes
	 * (a growth ask); doubled up to the max while such asks find nothing */
	static const std::uint64_t kGrowthEpochs = 4, kGrowthEpochsMax = 64;
	/* how long a path the engine's rail check refused stays no target for
	 * a hand-off from another NIC (local_alternative), unless asked again:
	 * TE pauses a rail for seconds */
	static const std::uint64_t kPausedMemoNs = 250000000;
};

/* p, or the inert Pool when p is NULL: an engine's accessor returns
 * or_inert(member.get()), so no call site needs a NULL check. Declared here
 * (not inline) so that a header that only forward-declares Pool can
 * declare it too. */
Pool *or_inert(Pool *p) noexcept;

/* --------------------------------------------------- process-wide calls */

/* MultiTransport::allocateBatchID / freeBatchID. No-ops (0) while no Pool
 * is open. begin: 0 or -EEXIST (the id's previous free was missed; its old
 * evidence was dropped). free: 0 or -ENOENT (freed twice or never begun). */
int batch_begin(std::uint64_t batch_id) noexcept;
int batch_free(std::uint64_t batch_id) noexcept;

/* The caller's task query: the enum mcc_task_state of the task `task`
 * (its TransferTask pointer, as admitted) of `batch_id`, given TE's facts
 * (MCC_TASKQ_*: SEEN_SUCCESS when success_slice_count > 0, FINISHED, FAILED
 * when failed_slice_count > 0). `out` (optional, struct_size set) gets the
 * detail. MCC_TASK_UNKNOWN while no Pool is open. */
int task_state(std::uint64_t batch_id, const void *task, std::uint32_t host_flags,
               mcc_task_detail_v1 *out = nullptr) noexcept;

} /* namespace mooncake */
} /* namespace mcc */

#endif /* MCC_MOONCAKE_HPP */
