/* SPDX-License-Identifier: MIT */
/*
 * mcc.hpp - C++11 RAII wrappers over the engine SDK (mcc_engine.h) and the
 * policy's hot path (mcc_policy_v1.h), for C++ engines.
 *
 * Every member is noexcept and nothing throws: errors come back as the C
 * API's negative errno (error(), return values), exactly as documented in
 * mcc_engine.h; nothing allocates beyond what the C calls do. The wrappers
 * own what they open and close it in their destructor:
 *
 *   mcc::Engine  eng(opts);               mcc_engine_open / _close
 *   mcc::Lane    lane(eng, MCC_LANE_POST); mcc_engine_lane_open / _close
 *   mcc::Route   r;  mcc::Route::open(eng, dev, key, len, inc, &desc, r);
 *                                          one route reference / _put
 *   mcc::Permit  p(eng, lane);             a slice's permit; its destructor
 *                                          releases live bytes (CANCELLED)
 *
 * Engine, Lane and Route are move-only; Permit is neither copyable nor
 * movable (the policy writes it in place). Thread rules are those of the C
 * calls.
 *
 * Ordering rule: a Permit must not outlive the Lane it was made with, and
 * a Route must not outlive its Engine (destroy permits, then lanes and
 * routes, then the engine). Both are enforced: a Lane closed (reset() or
 * destroyed) or moved while a Permit made with it still exists, and an
 * Engine closed or moved while a Route it opened still exists, print
 * "mcc: fatal: ..." and abort(), instead of a later use of freed memory.
 * The count behind it is one relaxed atomic add when a Permit or Route is
 * made and one release subtract when it goes. A Lane destroyed after its
 * Engine is harmless (the C call answers -EBADF).
 */
#ifndef MCC_HPP
#define MCC_HPP

#include "mcc_engine.h"

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace mcc {

namespace detail {
/* The ordering rule was broken: say what and stop (noexcept context). */
[[noreturn]] inline void misuse(const char *what, unsigned n) noexcept
{
	std::fprintf(stderr, "mcc: fatal: %s while %u %s\n", what, n,
	             n == 1 ? "object made with it still exists (mcc.hpp ordering rule)"
	                    : "objects made with it still exist (mcc.hpp ordering rule)");
	std::abort();
}
/* Objects made with an owner and not yet destroyed. */
struct Held {
	mutable std::atomic<unsigned> n{0};
	void take() const noexcept { n.fetch_add(1, std::memory_order_relaxed); }
	void give() const noexcept { n.fetch_sub(1, std::memory_order_release); }
	void none_or_die(const char *what) const noexcept
	{
		unsigned k = n.load(std::memory_order_acquire);
		if (k)
			misuse(what, k);
	}
};
} /* namespace detail */

class Engine {
public:
	Engine() noexcept {}
	explicit Engine(const mcc_engine_opts &opts) noexcept { err_ = mcc_engine_open(&opts, &e_); }
	~Engine()
	{
		routes_.none_or_die("mcc::Engine closed");
		mcc_engine_close(e_);
	}
	Engine(Engine &&o) noexcept : e_(o.e_), err_(o.err_)
	{
		o.routes_.none_or_die("mcc::Engine moved");
		o.e_ = nullptr;
	}
	Engine &operator=(Engine &&o) noexcept
	{
		if (this != &o) {
			routes_.none_or_die("mcc::Engine closed");
			o.routes_.none_or_die("mcc::Engine moved");
			mcc_engine_close(e_);
			e_ = o.e_;
			err_ = o.err_;
			o.e_ = nullptr;
		}
		return *this;
	}
	Engine(const Engine &) = delete;
	Engine &operator=(const Engine &) = delete;

	/* true when usable (possibly with the null policy: see error()) */
	explicit operator bool() const noexcept { return e_ != nullptr; }
	/* mcc_engine_open's result: 0, or the loader's / SDK's negative errno */
	int error() const noexcept { return err_; }
	mcc_engine *get() const noexcept { return e_; }
	const mcc_policy_v1 *ops() const noexcept { return mcc_engine_ops(e_); }
	void *ctx() const noexcept { return mcc_engine_ctx(e_); }
	mcc_mode mode() const noexcept { return mcc_instance_mode(mcc_engine_instance(e_)); }
	std::uint64_t now() const noexcept { return mcc_engine_now(e_); }
	bool tick_if_due(std::uint64_t now_ns) const noexcept
	{
		return mcc_engine_tick_if_due(e_, now_ns) == 1;
	}
	std::uint64_t retry_after_ns() const noexcept { return mcc_engine_retry_after_ns(e_); }
	std::uint32_t room_seq() const noexcept { return mcc_engine_room_seq(e_); }
	int room_wait(std::uint32_t seq, std::uint64_t timeout_ns) const noexcept
	{
		return mcc_engine_room_wait(e_, seq, timeout_ns);
	}
	void room_notify() const noexcept { mcc_engine_room_notify(e_); }
	int batch_begin(std::uint64_t id) const noexcept { return mcc_engine_batch_begin(e_, id); }
	int batch_free(std::uint64_t id) const noexcept { return mcc_engine_batch_free(e_, id); }

private:
	friend class Route;
	mcc_engine *e_ = nullptr;
	int err_ = -EINVAL;
	detail::Held routes_; /* Routes opened with this engine */
};

class Lane {
public:
	Lane() noexcept {}
	Lane(const Engine &eng, std::uint32_t role) noexcept : e_(eng.get())
	{
		err_ = e_ ? mcc_engine_lane_open(e_, role, &ref_, &lane_) : -EINVAL;
	}
	~Lane() { reset(); }
	Lane(Lane &&o) noexcept : e_(o.e_), ref_(o.ref_), lane_(o.lane_), err_(o.err_)
	{
		o.permits_.none_or_die("mcc::Lane moved");
		o.ref_ = 0;
		o.lane_ = nullptr;
	}
	Lane &operator=(Lane &&o) noexcept
	{
		if (this != &o) {
			o.permits_.none_or_die("mcc::Lane moved");
			reset();
			e_ = o.e_;
			ref_ = o.ref_;
			lane_ = o.lane_;
			err_ = o.err_;
			o.ref_ = 0;
			o.lane_ = nullptr;
		}
		return *this;
	}
	Lane(const Lane &) = delete;
	Lane &operator=(const Lane &) = delete;

	explicit operator bool() const noexcept { return lane_ != nullptr; }
	int error() const noexcept { return err_; }
	mcc_lane *get() const noexcept { return lane_; }
	mcc_lane_ref ref() const noexcept { return ref_; }
	mcc_engine *engine() const noexcept { return e_; }
	/* close now (the destructor then does nothing); every Permit made
	 * with this lane must be gone */
	int reset() noexcept
	{
		permits_.none_or_die("mcc::Lane closed");
		int rc = ref_ ? mcc_engine_lane_close(e_, ref_) : 0;
		ref_ = 0;
		lane_ = nullptr;
		return rc;
	}

private:
	friend class Permit;
	mcc_engine *e_ = nullptr;
	mcc_lane_ref ref_ = 0;
	mcc_lane *lane_ = nullptr;
	int err_ = -EINVAL;
	detail::Held permits_; /* Permits made with this lane */
};

class Route {
public:
	Route() noexcept {}
	~Route() { drop(); }
	Route(Route &&o) noexcept : r_(o.r_), held_(o.held_)
	{
		o.r_ = nullptr;
		o.held_ = nullptr;
	}
	Route &operator=(Route &&o) noexcept
	{
		if (this != &o) {
			drop();
			r_ = o.r_;
			held_ = o.held_;
			o.r_ = nullptr;
			o.held_ = nullptr;
		}
		return *this;
	}
	Route(const Route &) = delete;
	Route &operator=(const Route &) = delete;

	/* mcc_engine_route_open into `out` (its old reference is dropped):
	 * enum mcc_engine_route_open_result or a negative errno */
	static int open(const Engine &eng, mcc_device *dev, const void *key, std::size_t len,
	                std::uint64_t incarnation, const mcc_route_desc_v1 *desc, Route &out) noexcept
	{
		mcc_engine_route *r = nullptr;
		int rc = mcc_engine_route_open(eng.get(), dev, key, len, incarnation, desc, &r);
		out = Route(r, eng);
		return rc;
	}
	/* mcc_engine_route_lookup: 0 or -ENOENT */
	static int lookup(const Engine &eng, const void *key, std::size_t len, Route &out) noexcept
	{
		mcc_engine_route *r = nullptr;
		int rc = mcc_engine_route_lookup(eng.get(), key, len, &r);
		out = Route(r, eng);
		return rc;
	}

	explicit operator bool() const noexcept { return r_ != nullptr; }
	mcc_engine_route *get() const noexcept { return r_; }
	mcc_route *cc() const noexcept { return r_ ? mcc_engine_route_cc(r_) : nullptr; }
	std::uint32_t generation() const noexcept { return r_ ? mcc_engine_route_generation(r_) : 0; }
	/* after an MCC_AVOID on this route: mcc_engine_route_avoided */
	int avoided(const Engine &eng, std::uint64_t *retry_ns = nullptr) const noexcept
	{
		return r_ ? mcc_engine_route_avoided(eng.get(), r_, retry_ns) : -EINVAL;
	}
	std::uint64_t id() const noexcept { return r_ ? mcc_engine_route_id(r_) : 0; }

private:
	Route(mcc_engine_route *r, const Engine &eng) noexcept : r_(r)
	{
		if (r_) {
			held_ = &eng.routes_;
			held_->take();
		}
	}
	void drop() noexcept
	{
		mcc_engine_route_put(r_);
		if (held_)
			held_->give();
		r_ = nullptr;
		held_ = nullptr;
	}
	mcc_engine_route *r_ = nullptr;
	const detail::Held *held_ = nullptr; /* the engine's count */
};

class Permit {
public:
	Permit(const Engine &eng, const Lane &lane) noexcept
	    : eng_(eng.get()), ops_(eng.ops()), lane_(lane.get()), held_(&lane.permits_)
	{
		held_->take();
	}
	~Permit()
	{
		release(MCC_REL_CANCELLED);
		held_->give();
	}
	Permit(const Permit &) = delete;
	Permit &operator=(const Permit &) = delete;

	/* try_acquire on the route's current generation: enum mcc_decision or
	 * a negative errno (-EINVAL also for a closed lane or an empty route) */
	int acquire(const Route &r, std::uint64_t bytes, const mcc_task_ref_v1 *task = nullptr) noexcept
	{
		if (!lane_ || !r)
			return -EINVAL;
		return ops_->try_acquire(lane_, r.cc(), bytes, r.generation(), task, &p_);
	}
	/* the same for a slice of QoS class qos_class (enum mcc_qos_class):
	 * mcc_engine_try_acquire_qos, whose class counts only with
	 * [engine] qos = on */
	int acquire_qos(const Route &r, std::uint64_t bytes, std::uint32_t qos_class,
	                const mcc_task_ref_v1 *task = nullptr) noexcept
	{
		if (!lane_ || !r)
			return -EINVAL;
		return mcc_engine_try_acquire_qos(eng_, lane_, r.cc(), bytes, r.generation(), task,
		                                  qos_class, &p_);
	}
	/* release every live byte (no WC will come for them): 0, or 0 when
	 * nothing is live */
	int release(std::uint32_t reason) noexcept
	{
		if (!live())
			return 0;
		return ops_->release(lane_, &p_, p_.bytes, reason);
	}
	/* settle posted bytes with a polled WC (on the poller's lane) */
	void complete(const Lane &poller, const mcc_completion_v1 &wc) noexcept
	{
		ops_->on_completion(poller.get(), &p_, &wc);
	}
	bool live() const noexcept { return (p_.flags & MCC_PERMIT_F_LIVE) != 0; }
	mcc_permit_v1 &raw() noexcept { return p_; }
	const mcc_permit_v1 &raw() const noexcept { return p_; }

private:
	const mcc_engine *eng_;
	const mcc_policy_v1 *ops_;
	mcc_lane *lane_;
	const detail::Held *held_; /* the lane's count */
	mcc_permit_v1 p_ = MCC_PERMIT_INIT;
};

} /* namespace mcc */

#endif /* MCC_HPP */
