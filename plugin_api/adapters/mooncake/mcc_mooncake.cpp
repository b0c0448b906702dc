/* SPDX-License-Identifier: MIT */
/*
 * mcc_mooncake.cpp - the Mooncake classic TE adapter (mcc_mooncake.hpp).
 * Compiled into the engine (or a test) next to libmcc; C++11.
 */
#include "mcc_mooncake.hpp"

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>
#include <unordered_map>

namespace mcc {
namespace mooncake {

namespace {

const std::memory_order RLX = std::memory_order_relaxed;

std::uint64_t realtime_ns(void *)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (std::uint64_t)ts.tv_sec * 1000000000ull + (std::uint64_t)ts.tv_nsec;
}

/* The process's SDK engine, shared by every Pool. Lock order: mu, then a
 * Pool's mu_ (local_alternative); never the other way. */
struct Shared {
	std::mutex mu;
	unsigned refs = 0;
	mcc_engine *e = nullptr;
	Options opts;
	std::vector<const Pool *> pools; /* enabled Pools (reroute's local alternatives) */
};

Shared &shared()
{
	static Shared s;
	return s;
}

mcc_engine *engine_acquire(int *err, bool lanes_poll)
{
	Shared &s = shared();
	std::lock_guard<std::mutex> g(s.mu);
	if (s.refs == 0) {
		mcc_loader_opts lo;
		std::memset(&lo, 0, sizeof(lo));
		lo.struct_size = sizeof(lo);
		lo.engine = "te";
		lo.ini_path = s.opts.ini_path;
		lo.module_dir = s.opts.module_dir;
		lo.ignore_env = s.opts.ignore_env ? 1 : 0;
		lo.host_caps = MCC_HOST_CAP_ASYNC_EVENTS | MCC_HOST_CAP_POLLER_PROGRESS |
		               MCC_HOST_CAP_COMPLETION_TS;
		lo.log = s.opts.log;
		lo.log_arg = s.opts.log_arg;
		mcc_engine_opts eo;
		std::memset(&eo, 0, sizeof(eo));
		eo.struct_size = sizeof(eo);
		eo.tick = s.opts.tick;
		if (eo.tick == Options::kTickAuto)
			eo.tick = lanes_poll ? MCC_ENGINE_TICK_POLL : MCC_ENGINE_TICK_THREAD;
		eo.loader = &lo;
		eo.now_ns = s.opts.now_ns ? s.opts.now_ns : realtime_ns;
		eo.clock_arg = s.opts.clock_arg;
		*err = mcc_engine_open(&eo, &s.e);
		if (!s.e)
			return nullptr;
	}
	s.refs++;
	return s.e;
}

void engine_release()
{
	Shared &s = shared();
	std::lock_guard<std::mutex> g(s.mu);
	if (s.refs && --s.refs == 0) {
		mcc_engine_close(s.e);
		s.e = nullptr;
	}
}

std::uint64_t fnv1a(const char *k, std::size_t n)
{
	std::uint64_t h = 14695981039346656037ull;
	for (std::size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)k[i]) * 1099511628211ull;
	return h;
}

void bump(std::atomic<std::uint64_t> &c, std::uint64_t n = 1)
{
	c.store(c.load(RLX) + n, RLX); /* one writer: the lane's thread */
}

/* A log line through Options::log, else stderr as libmcc's default logger
 * writes it ("mcc: <level>: <message>"). */
void log_line(int level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	std::vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	Options o;
	{
		std::lock_guard<std::mutex> g(shared().mu);
		o = shared().opts;
	}
	if (o.log)
		o.log(o.log_arg, level, "%s", buf);
	else
		std::fprintf(stderr, "mcc: %s: %s\n",
		             level == MCC_LOG_ERROR ? "error" : level == MCC_LOG_WARN ? "warning" : "info",
		             buf);
}

/* The peer server of a peer_nic_path "<server>@<nic>" (TE's MakeNicPath). */
std::string server_of(const std::string &k)
{
	std::size_t at = k.rfind('@');
	return at == std::string::npos ? k : k.substr(0, at);
}

const char *state_name(std::uint32_t st)
{
	static const char *const n[] = { "HEALTHY", "CONGESTED", "SUSPECT", "QUARANTINED",
		                         "PROBING" };
	return st < 5 ? n[st] : "?";
}

/* Bytes as K/M/G for log lines. */
std::string human(std::uint64_t b)
{
	char buf[32];
	if (b >= (1ull << 20))
		std::snprintf(buf, sizeof(buf), "%.1fM", (double)b / (1 << 20));
	else if (b >= 1024)
		std::snprintf(buf, sizeof(buf), "%.0fK", (double)b / 1024);
	else
		std::snprintf(buf, sizeof(buf), "%llu", (unsigned long long)b);
	return buf;
}

} /* namespace */

/* A lane's cached route. */
struct Route {
	std::string key; /* peer_nic_path */
	std::uint64_t incarnation = 0;
	mcc_engine_route *r = nullptr; /* one reference */
	bool refused = false;          /* memo: refused at refused_seq */
	std::uint32_t refused_seq = 0;
	/* the Pool's settled bytes before the refusal: at the start of the
	 * pass that called, or at the re-ask whose budget ran out */
	std::uint64_t refused_settled = 0;
	std::uint64_t refused_bytes = 0;   /* what the refused slice needs */
	std::uint64_t refused_until = 0;   /* SDK time: ask again anyway */
	/* after a re-ask that settled bytes allowed, within `wait` epochs of
	 * the last refused call: the lane asks for at most what was settled
	 * since the refusal, `budget` (budgeted); else it asks until refused (a
	 * growth ask, `budget` left as settled), so a window a tick has grown
	 * is used. A growth ask that found no more room than was settled
	 * doubles `wait` (kGrowthEpochs to kGrowthEpochsMax); one that did
	 * resets it. */
	bool budgeted = false, growth = false;
	std::uint64_t budget = 0;
	std::uint32_t asked_seq = 0;     /* the room sequence at the re-ask */
	std::uint64_t asked_settled = 0; /* the Pool's settled bytes then (read after) */
	std::uint64_t refused_call_until = 0; /* SDK time */
	std::uint64_t wait = 0; /* 0: kGrowthEpochs */
	std::uint64_t growth_bytes = 0; /* admitted by the growth ask */
	std::uint64_t quiet_until = 0; /* AVOID: SDK time the cooldown ends */
};

struct Lane {
	mcc_lane *cc = nullptr;
	mcc_lane_ref ref = 0;
	std::uint32_t role = 0;
	std::unordered_map<std::uint64_t, std::unique_ptr<Route>> routes; /* by fnv1a(key) */
	Route *last = nullptr;
	/* the current post pass */
	bool in_pass = false;
	std::uint32_t pass_seq = 0;
	std::uint64_t pass_settled = 0; /* the Pool's settled bytes, read after pass_seq */
	std::uint32_t pass_admitted = 0, pass_refused = 0;
	/* the current poll pass */
	bool clock_valid = false, settled = false;
	std::uint64_t pass_sdk_ns = 0, pass_clock_ns = 0;
	std::atomic<std::uint64_t> admitted{0}, refused_calls{0}, memo_skips{0}, parks{0},
	    passthrough{0}, completions{0}, no_permit{0}, released{0}, renewals{0},
	    route_errors{0}, reroute_peer{0}, reroute_local{0}, no_usable_path{0};
};

struct Pool::Slot {
	std::atomic<std::uintptr_t> key{0}; /* 0 free, slice|1 being filled, slice */
	mcc_permit_v1 permit = MCC_PERMIT_INIT;
};

/* A peer path this Pool has seen, and its reroute mark (mu_). */
struct Pool::Mark {
	std::string key;         /* peer_nic_path */
	std::string server;      /* server_of(key) */
	int kind = 0;            /* 0 none, 1 avoided, 2 held */
	std::uint64_t until = 0; /* SDK time the mark lapses */
	std::uint64_t backoff = 0; /* AVOID without a cooldown: doubles per AVOID */
	bool signalled = false;  /* NO_USABLE_PATH reported under this mark */
	/* until when the engine's rail check was last seen to refuse this path
	 * (peer_alternative asks it; kPausedMemoNs) */
	std::uint64_t paused_until = 0;
	/* the mark at `now`: kind while it lasts, else 0 (none) */
	int kind_at(std::uint64_t now) const { return until > now ? kind : 0; }
};

const char *reroute_name(Reroute v) noexcept
{
	switch (v) {
	case Reroute::kStay:
		return "stay";
	case Reroute::kPeer:
		return "peer";
	case Reroute::kLocal:
		return "local";
	case Reroute::kNoUsablePath:
		return "no_usable_path";
	}
	return "?";
}

namespace {
struct Binding {
	const Pool *pool;
	Lane *lane;
};
thread_local Binding tl_bind = {nullptr, nullptr};
} /* namespace */

int configure(const Options &o) noexcept
{
	Shared &s = shared();
	std::lock_guard<std::mutex> g(s.mu);
	if (s.refs)
		return -EBUSY;
	s.opts = o;
	return 0;
}

Pool::Pool(const PoolDesc &d) noexcept
{
	if (!d.device_name || !d.workers || d.workers > 64 || !d.max_outstanding ||
	    d.max_outstanding > (1u << 24)) {
		err_ = -EINVAL;
		return;
	}
	e_ = engine_acquire(&err_, !d.split_roles);
	if (!e_)
		return;
	ops_ = mcc_engine_ops(e_);
	ctx_ = mcc_engine_ctx(e_);
	{
		std::lock_guard<std::mutex> g(shared().mu);
		clock_ = shared().opts.now_ns ? shared().opts.now_ns : realtime_ns;
		clock_arg_ = shared().opts.clock_arg;
	}
	if (mcc_instance_mode(mcc_engine_instance(e_)) == MCC_MODE_OFF)
		return; /* err_ says why when it was not asked for */
	park_ = d.park;
	port_ = d.port_num;
	enforce_ = mcc_instance_mode(mcc_engine_instance(e_)) == MCC_MODE_ENFORCE;
	{
		const mcc_config *cfg = mcc_instance_config(mcc_engine_instance(e_));
		min_window_ = cfg ? cfg->policy.min_window_bytes : 0;
		max_window_ = cfg ? cfg->policy.max_window_bytes : 0;
		std::lock_guard<std::mutex> g(shared().mu);
		std::uint64_t ms = shared().opts.summary_ms;
		const char *env = shared().opts.ignore_env ? nullptr
		                                           : std::getenv("MC_ADAPTIVE_CC_SUMMARY_MS");
		if (env && *env) {
			char *end = nullptr;
			unsigned long long v = std::strtoull(env, &end, 10);
			if (end && !*end && v <= 86400000ull)
				ms = v;
		}
		summary_ns_ = ms * 1000000ull;
	}
	try {
		dev_name_ = d.device_name;
		std::size_t cap = 1;
		while (cap < 2u * d.max_outstanding)
			cap <<= 1;
		slots_.reset(new Slot[cap]);
		mask_ = cap - 1;
		for (shift_ = 64; cap > 1; cap >>= 1)
			shift_--;
		lanes_.reserve(d.workers);
		for (std::uint32_t i = 0; i < d.workers; i++)
			lanes_.emplace_back(new Lane());
	} catch (...) {
		err_ = -ENOMEM;
		return;
	}
	mcc_device_desc_v1 dd;
	std::memset(&dd, 0, sizeof(dd));
	dd.struct_size = sizeof(dd);
	dd.device_id = d.device_index;
	dd.name = d.device_name;
	dd.num_ports = d.port_num;
	dd.link_rate_bps = d.link_rate_bps;
	dd.flags = mcc_engine_device_flags(nullptr, d.device_name);
	if ((err_ = mcc_engine_device_open(e_, &dd, &dev_)) != 0) { /* named in the live view */
		dev_ = nullptr;
		return;
	}
	for (std::uint32_t i = 0; i < d.workers; i++) {
		Lane &l = *lanes_[i];
		l.role = d.workers == 1 || !d.split_roles ? MCC_LANE_POST_POLL
		         : i == 0                         ? MCC_LANE_POLL
		                                          : MCC_LANE_POST;
		if ((err_ = mcc_engine_lane_open(e_, l.role, &l.ref, &l.cc)) != 0) {
			l.cc = nullptr;
			return; /* the destructor closes what was opened */
		}
	}
	enabled_ = true;
	err_ = 0;
	try {
		std::lock_guard<std::mutex> g(shared().mu);
		shared().pools.push_back(this);
	} catch (...) {
		/* not a reroute target for other Pools: no harm */
	}
}

Pool::~Pool()
{
	if (enabled_) {
		std::lock_guard<std::mutex> g(shared().mu);
		auto &v = shared().pools;
		for (std::size_t i = 0; i < v.size(); i++)
			if (v[i] == this) {
				v.erase(v.begin() + (std::ptrdiff_t)i);
				break;
			}
	}
	if (enabled_)
		reclaim();
	for (auto &l : lanes_) {
		if (l->cc)
			mcc_engine_lane_close(e_, l->ref);
		for (auto &kv : l->routes)
			mcc_engine_route_put(kv.second->r);
	}
	for (const std::string &k : keys_)
		mcc_engine_route_close(e_, k.data(), k.size());
	if (dev_)
		mcc_engine_device_close(e_, dev_);
	if (e_)
		engine_release();
}

Pool::Pool(Inert) noexcept : err_(-ENODEV)
{
}

Pool &Pool::inert() noexcept
{
	static Pool p{Inert{}}; /* opens nothing */
	return p;
}

Pool *or_inert(Pool *p) noexcept
{
	return p ? p : &Pool::inert();
}

Lane *Pool::lane(std::uint32_t tid) const noexcept
{
	return enabled_ && tid < lanes_.size() ? lanes_[tid].get() : nullptr;
}

void Pool::bind_thread(std::uint32_t tid) const noexcept
{
	tl_bind.pool = this;
	tl_bind.lane = lane(tid);
}

Lane *Pool::this_lane() const noexcept
{
	return tl_bind.pool == this ? tl_bind.lane : nullptr;
}

std::uint64_t Pool::incarnation(const void *endpoint, std::uint32_t first_qp_num) noexcept
{
	return (std::uint64_t)(std::uintptr_t)endpoint ^ ((std::uint64_t)first_qp_num << 40) ^
	       first_qp_num;
}

std::string Pool::full_key(const char *key, std::size_t klen) const
{
	/* routes of every device share the process's registry: prefix the device */
	std::string k(dev_name_);
	k += '/';
	k.append(key, klen);
	return k;
}

Route *Pool::route(Lane *l, const char *key, std::size_t klen, std::uint64_t incarnation,
                   const std::uint32_t *qp_nums, std::size_t nqp) noexcept
{
	if (!l || !key || !klen)
		return nullptr;
	Route *rt = l->last;
	if (rt && rt->incarnation == incarnation && rt->key.size() == klen &&
	    std::memcmp(rt->key.data(), key, klen) == 0)
		return rt;
	std::uint64_t h = fnv1a(key, klen);
	try {
		auto it = l->routes.find(h);
		rt = it != l->routes.end() ? it->second.get() : nullptr;
		if (rt) {
			if (rt->key.size() != klen || std::memcmp(rt->key.data(), key, klen) != 0) {
				bump(l->route_errors); /* a 64-bit hash collision: uncontrolled */
				return nullptr;
			}
			if (rt->incarnation == incarnation)
				return l->last = rt;
		}
		/* slow path: a new route for this lane, or a new incarnation */
		std::string fk = full_key(key, klen);
		std::string peer(key, klen);
		mcc_route_desc_v1 rd;
		std::memset(&rd, 0, sizeof(rd));
		rd.struct_size = sizeof(rd);
		rd.port_num = port_;
		rd.peer_path = peer.c_str();
		mcc_engine_route *r = nullptr;
		int rc = mcc_engine_route_open(e_, dev_, fk.data(), fk.size(), incarnation, &rd, &r);
		if (rc < 0) {
			bump(l->route_errors);
			return nullptr;
		}
		if (rc == MCC_ENGINE_ROUTE_NEW) {
			std::lock_guard<std::mutex> g(mu_);
			keys_.push_back(fk);
			bool seen = false;
			for (auto &m : marks_)
				seen = seen || m->key == peer;
			if (!seen) {
				std::unique_ptr<Mark> m(new Mark());
				m->key = peer;
				m->server = server_of(peer);
				marks_.push_back(std::move(m));
			}
		} else if (rc == MCC_ENGINE_ROUTE_RENEWED) {
			bump(l->renewals);
		}
		for (std::size_t i = 0; i < nqp; i++) /* a reused QP number: move it */
			if (mcc_engine_qp_add(e_, r, qp_nums[i]) == -EEXIST &&
			    mcc_engine_qp_remove(e_, dev_, qp_nums[i]) == 0)
				mcc_engine_qp_add(e_, r, qp_nums[i]);
		if (!rt) {
			std::unique_ptr<Route> nr(new Route());
			nr->key = peer;
			rt = nr.get();
			l->routes[h] = std::move(nr);
		}
		mcc_engine_route_put(rt->r);
		rt->r = r;
		rt->incarnation = incarnation;
		rt->refused = false;
		rt->quiet_until = 0;
		return l->last = rt;
	} catch (...) {
		bump(l->route_errors);
		return nullptr;
	}
}

/* The first slot probed for a key: murmur3's 64-bit finaliser, then the
 * top bits. Slice pointers come in arithmetic progressions; with a single
 * golden-ratio multiply a 48-byte stride advances 0.666 of the table per
 * slice, so slices i and i + 3 land 1.6 slots apart, and in test_mooncake's
 * two-thread case 32 probes found no free slot at 47 % load (1 run in 5;
 * none in 40 with the full mix). */
std::size_t Pool::home(std::uintptr_t key) const noexcept
{
	std::uint64_t k = key;
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return shift_ < 64 ? (std::size_t)(k >> shift_) : 0; /* a one-slot table */
}

Pool::Slot *Pool::claim(const void *slice) noexcept
{
	std::uintptr_t k = (std::uintptr_t)slice;
	std::size_t h = home(k);
	for (std::size_t i = 0; i < 32; i++) {
		Slot *s = &slots_[(h + i) & mask_];
		std::uintptr_t z = 0;
		if (s->key.load(RLX) == 0 &&
		    s->key.compare_exchange_strong(z, k | 1, std::memory_order_acquire, RLX))
			return s;
	}
	return nullptr;
}

Pool::Slot *Pool::find(const void *slice) const noexcept
{
	std::uintptr_t k = (std::uintptr_t)slice;
	std::size_t h = home(k);
	for (std::size_t i = 0; i < 32; i++) {
		Slot *s = &slots_[(h + i) & mask_];
		if (s->key.load(std::memory_order_acquire) == k)
			return s;
	}
	return nullptr;
}

void Pool::remember_refusal(const Lane *l, Route *rt, std::uint64_t bytes, bool called) const noexcept
{
	rt->refused = true;
	/* The room sequence and the settled bytes from one instant before the
	 * refusal: the start of the pass that called, or the re-ask whose
	 * budget ran out. So no wake-up and no settled byte is lost: those of
	 * the last slices in flight, completing between the refusal and now,
	 * count towards the re-ask (else a route with nothing left in flight
	 * would wait out its epochs). */
	rt->refused_seq = called ? l->pass_seq : rt->asked_seq;
	rt->refused_settled = called ? l->pass_settled : rt->asked_settled;
	rt->refused_bytes = bytes;
	if (called && rt->growth) {
		bool more = rt->growth_bytes > rt->budget;
		std::uint64_t cur = rt->wait ? rt->wait : kGrowthEpochs;
		rt->wait = more ? kGrowthEpochs : 2 * cur < kGrowthEpochsMax ? 2 * cur : kGrowthEpochsMax;
		rt->growth = false;
	}
	std::uint64_t wait = rt->wait ? rt->wait : kGrowthEpochs;
	rt->refused_until = mcc_engine_now(e_) + wait * mcc_engine_retry_after_ns(e_);
	if (called)
		rt->refused_call_until = rt->refused_until;
	rt->budgeted = false;
	rt->quiet_until = 0;
}

bool Pool::refusal_stands(const Route *rt) const noexcept
{
	std::uint64_t now = mcc_engine_now(e_);
	if (rt->quiet_until && now < rt->quiet_until)
		return true; /* quarantined: the cooldown has not ended */
	return settled_.load(RLX) - rt->refused_settled < rt->refused_bytes &&
	       now < rt->refused_until;
}

int Pool::admit(Lane *l, Route *rt, const SliceInfo &si) noexcept
{
	if (!l || !rt || !si.slice || ((std::uintptr_t)si.slice & 1)) {
		if (l)
			bump(l->passthrough);
		return MCC_ADMIT;
	}
	if (!l->in_pass) {
		l->in_pass = true;
		l->pass_seq = mcc_engine_room_seq(e_);
		l->pass_settled = settled_.load(RLX);
	}
	if (rt->refused) {
		/* no room can be back since this lane was refused here: do not ask
		 * again. Room comes back when the device settles as many bytes as
		 * the slice needs, or when a tick grows a window (at most once per
		 * epoch, and only after a run of clean epochs). */
		if (mcc_engine_room_seq(e_) == rt->refused_seq || refusal_stands(rt)) {
			bump(l->memo_skips);
			l->pass_refused++;
			return MCC_DEFER;
		}
		rt->refused = false;
		rt->asked_seq = mcc_engine_room_seq(e_);
		rt->asked_settled = settled_.load(RLX);
		rt->budget = rt->asked_settled - rt->refused_settled;
		rt->budgeted = rt->budget >= rt->refused_bytes && /* else the epochs passed */
		               mcc_engine_now(e_) < rt->refused_call_until;
		rt->growth = !rt->budgeted;
		rt->growth_bytes = 0;
	}
	if (rt->budgeted && si.bytes > rt->budget && mcc_engine_now(e_) < rt->refused_call_until) {
		/* what was settled is used up: the next slice would most likely be
		 * refused, so wait for more settled bytes (or the epochs) instead */
		remember_refusal(l, rt, si.bytes, false);
		bump(l->memo_skips);
		l->pass_refused++;
		return MCC_DEFER;
	}
	Slot *s = claim(si.slice);
	if (!s) {
		bump(l->passthrough); /* the table is full: post uncontrolled */
		l->pass_admitted++;
		return MCC_ADMIT;
	}
	mcc_task_ref_v1 t;
	t.batch_id = si.batch_id;
	t.task_id = (std::uint64_t)(std::uintptr_t)si.task;
	t.attempt = si.attempt;
	t.reserved0 = 0;
	mcc_engine_route *r = rt->r;
	int d = ops_->try_acquire(l->cc, mcc_engine_route_cc(r), si.bytes,
	                          mcc_engine_route_generation(r), &t, &s->permit);
	if (d == MCC_ADMIT) {
		if (rt->budgeted)
			rt->budget -= si.bytes;
		rt->growth_bytes += si.bytes;
		s->key.store((std::uintptr_t)si.slice, std::memory_order_release);
		bump(l->admitted);
		l->pass_admitted++;
		return MCC_ADMIT;
	}
	s->key.store(0, std::memory_order_release);
	if (d < 0) { /* the contract: pass through without a permit */
		bump(l->passthrough);
		l->pass_admitted++;
		return MCC_ADMIT;
	}
	bump(l->refused_calls);
	l->pass_refused++;
	remember_refusal(l, rt, si.bytes, true);
	mark_refusal(rt, d, si.bytes);
	return MCC_DEFER;
}

/* A refusal the policy answered (slow path: at most one per refused route
 * and lane until room may be back): the route's quiet time (AVOID with a
 * cooldown) and the path's reroute mark. */
void Pool::mark_refusal(Route *rt, int d, std::uint64_t bytes) noexcept
{
	const std::uint64_t now = mcc_engine_now(e_), epoch = mcc_engine_retry_after_ns(e_);
	mcc_domain_stats_v1 st, ds;
	std::memset(&st, 0, sizeof(st));
	st.struct_size = sizeof(st);
	ds = st;
	bool rok = ops_->domain_stats(ctx_, MCC_DOMAIN_ROUTE, mcc_engine_route_cc(rt->r), &st) == 0;
	bool dok = ops_->domain_stats(ctx_, MCC_DOMAIN_DEVICE, dev_, &ds) == 0;
	if (d == MCC_AVOID) { /* quarantined (mcc_engine.h: the engine's one duty) */
		std::uint64_t retry = 0;
		if (mcc_engine_route_avoided(e_, rt->r, &retry) == 1) {
			rt->refused_until = 0; /* the cooldown is over: the next try is the probe */
			rt->quiet_until = 0;
		} else if (retry > epoch) {
			rt->quiet_until = now + retry; /* nothing to ask before */
		}
	}
	/* held near the floor: its completions read as queueing (gray loss, a
	 * sick NIC), or it is SUSPECT; not merely full at a large window, and
	 * not a route with room whose device refused (a route held for no
	 * traffic of its own would never complete anything to regrow by) */
	/* (a policy whose windows never leave the floor holds nothing there) */
	const std::uint64_t floor = 2 * min_window_ < max_window_ ? 2 * min_window_ : 0;
	bool dev_held = dok && (ds.state >= MCC_PATH_QUARANTINED ||
	                        (d == MCC_DEFER && ds.window_bytes <= floor));
	bool held = d == MCC_DEFER &&
	            ((rok && (st.state == MCC_PATH_SUSPECT ||
	                      (st.window_bytes <= floor && st.inflight_bytes + bytes > st.window_bytes))) ||
	             dev_held);
	if (dev_held)
		dev_held_until_.store(now + kGrowthEpochs * epoch, RLX);
	if (d != MCC_AVOID && !held)
		return;
	try {
		std::lock_guard<std::mutex> g(mu_);
		Mark *m = nullptr;
		for (auto &x : marks_)
			if (x->key == rt->key)
				m = x.get();
		if (!m) {
			marks_.emplace_back(new Mark());
			m = marks_.back().get();
			m->key = rt->key;
			m->server = server_of(rt->key);
		}
		std::uint64_t until;
		if (d == MCC_AVOID && rt->quiet_until > now) {
			until = rt->quiet_until;
			m->backoff = 0;
		} else if (d == MCC_AVOID) { /* PROBING over its budget: a short backoff */
			bool again = m->kind == 1 && m->until + 2 * (m->backoff ? m->backoff : epoch) > now;
			m->backoff = !again || !m->backoff ? epoch
			             : 2 * m->backoff > 64 * epoch ? 64 * epoch : 2 * m->backoff;
			until = now + m->backoff;
		} else {
			until = now + kGrowthEpochs * epoch;
		}
		if (m->until <= now || m->kind != (d == MCC_AVOID ? 1 : 2))
			m->signalled = false; /* a new mark: report again */
		m->kind = d == MCC_AVOID ? 1 : 2;
		m->until = until;
		marked_.store(1, RLX);
	} catch (...) {
	}
}

/* The mark of `key` at `now` (mu_ held): 0 none, 1 avoided, 2 held. */
int Pool::mark_of(const std::string &key, std::uint64_t now) const noexcept
{
	for (auto &m : marks_)
		if (m->key == key)
			return m->kind_at(now);
	return 0;
}

/* A target for traffic leaving a path marked `kind`: from an AVOIDed path
 * (it carries nothing now) any path not itself AVOIDed will do, a held (slow
 * or congested) one included; from a held path only an unmarked one. */
static bool target_ok(int target_kind, int kind)
{
	return target_kind == 0 || (kind == 1 && target_kind == 2);
}

/* The device cannot take traffic moved off a path marked `kind`: it is
 * quarantined or probing; or, for a held path's traffic, held near its
 * floor itself. */
bool Pool::device_bad(std::uint64_t now, int kind) const noexcept
{
	if (kind == 2 && dev_held_until_.load(RLX) > now)
		return true;
	mcc_domain_stats_v1 ds;
	std::memset(&ds, 0, sizeof(ds));
	ds.struct_size = sizeof(ds);
	return ops_->domain_stats(ctx_, MCC_DOMAIN_DEVICE, dev_, &ds) == 0 &&
	       ds.state >= MCC_PATH_QUARANTINED;
}

/* Another enabled Pool (another local NIC) whose device can take the
 * traffic of a path to `key` marked `kind`. The hand-off lets that NIC's
 * selection pick the peer NIC, so one of its paths to the server of `key`
 * must be a target (target_ok) that the engine's rail check was not last
 * seen to refuse (paused_until), or it has none yet (a fresh selection).
 * A path of its own that is held, or paused, would send the traffic back
 * at its next post pass (a ping-pong). */
bool Pool::local_alternative(const std::string &key, int kind) const noexcept
{
	const std::string srv = server_of(key);
	std::lock_guard<std::mutex> g(shared().mu);
	for (const Pool *q : shared().pools) {
		if (q == this || !q->enabled_)
			continue;
		std::uint64_t now = mcc_engine_now(q->e_);
		if (q->device_bad(now, kind))
			continue;
		bool seen = false;
		std::lock_guard<std::mutex> gq(q->mu_);
		for (auto &m : q->marks_) {
			if (m->server != srv)
				continue;
			seen = true;
			if (target_ok(m->kind_at(now), kind) && m->paused_until <= now)
				return true;
		}
		if (!seen)
			return true;
	}
	return false;
}

/* Another path of this Pool to the server of `k` that can take the
 * traffic of `k` (marked `kind`): seen here, a target (target_ok), and,
 * when `usable` is given, one the engine's own selection would take now
 * (its rail state: a path TE paused is no alternative, whatever its mark;
 * remembered in the path's paused_until for local_alternative).
 * Takes mu_; calls `usable` with no lock of the adapter held. */
bool Pool::peer_alternative(const std::string &k, int kind, std::uint64_t now, PathUsable usable,
                            void *arg) const
{
	std::vector<std::string> cand;
	{
		std::lock_guard<std::mutex> g(mu_);
		std::string srv = server_of(k);
		for (auto &m : marks_)
			if (m->key != k && m->server == srv &&
			    target_ok(m->kind_at(now), kind)) {
				if (!usable)
					return true;
				cand.push_back(m->key);
			}
	}
	for (auto &c : cand) {
		bool ok = usable(arg, c.data(), c.size());
		{
			std::lock_guard<std::mutex> g(mu_);
			for (auto &m : marks_)
				if (m->key == c)
					m->paused_until = ok ? 0 : now + kPausedMemoNs;
		}
		if (ok)
			return true;
	}
	return false;
}

Reroute Pool::reroute(Lane *l, const char *key, std::size_t klen, const SliceInfo *slices,
                      std::size_t nslices) noexcept
{
	return reroute(l, key, klen, slices, nslices, nullptr, nullptr);
}

Reroute Pool::reroute(Lane *l, const char *key, std::size_t klen, const SliceInfo *slices,
                      std::size_t nslices, PathUsable usable, void *arg) noexcept
{
	if (!l || !key || !klen || !marked_.load(RLX))
		return Reroute::kStay;
	const std::uint64_t now = mcc_engine_now(e_);
	try {
		std::string k(key, klen);
		int kind;
		{
			std::lock_guard<std::mutex> g(mu_);
			kind = mark_of(k, now);
			bool any = dev_held_until_.load(RLX) > now;
			for (auto &m : marks_)
				any = any || m->until > now;
			if (!any)
				marked_.store(0, RLX); /* every mark lapsed */
		}
		if (!kind)
			return Reroute::kStay;
		/* another peer NIC from this device when the device itself can
		 * carry it (a fault of the local NIC is not left by another peer);
		 * from a bad device another local NIC first, and another peer NIC
		 * only when no local NIC can take the group (a device held because
		 * its one busy route met a faulty peer NIC is not itself the fault) */
		const bool bad = device_bad(now, kind);
		const bool peer = peer_alternative(k, kind, now, usable, arg);
		const bool local = (!peer || bad) && local_alternative(k, kind);
		if (peer && !local) {
			bump(l->reroute_peer);
			return Reroute::kPeer;
		}
		if (local) {
			bump(l->reroute_local);
			return Reroute::kLocal;
		}
		if (kind != 1)
			return Reroute::kStay; /* held, nowhere better: wait here */
		bump(l->no_usable_path);
		no_usable_path(l, k, slices, nslices);
		return Reroute::kNoUsablePath;
	} catch (...) {
		return Reroute::kStay;
	}
}

/* MCC_SIG_NO_USABLE_PATH for the tasks of `s` on `key`, once per mark. */
void Pool::no_usable_path(Lane *l, const std::string &key, const SliceInfo *s,
                          std::size_t n) noexcept
{
	{
		std::lock_guard<std::mutex> g(mu_);
		Mark *m = nullptr;
		for (auto &x : marks_)
			if (x->key == key)
				m = x.get();
		if (!m || m->signalled)
			return;
		m->signalled = true;
	}
	if (!(mcc_instance_signal_mask(mcc_engine_instance(e_)) &
	      (1ull << MCC_SIG_NO_USABLE_PATH)))
		return;
	auto it = l->routes.find(fnv1a(key.data(), key.size()));
	Route *rt = it != l->routes.end() ? it->second.get() : nullptr;
	mcc_signal_v1 sig;
	std::memset(&sig, 0, sizeof(sig));
	sig.struct_size = sizeof(sig);
	sig.kind = MCC_SIG_NO_USABLE_PATH;
	sig.device = dev_;
	sig.route = rt && rt->r ? mcc_engine_route_cc(rt->r) : nullptr;
	sig.generation = rt && rt->r ? mcc_engine_route_generation(rt->r) : 0;
	sig.now_ns = mcc_engine_now(e_);
	for (std::size_t i = 0; i < (n ? n : 1); i++) {
		if (n) {
			sig.task.batch_id = s[i].batch_id;
			sig.task.task_id = (std::uint64_t)(std::uintptr_t)s[i].task;
			sig.task.attempt = s[i].attempt;
		}
		ops_->on_signal(ctx_, &sig);
	}
}

bool Pool::avoided(const char *key, std::size_t klen) const noexcept
{
	return avoided(key, klen, nullptr, nullptr);
}

bool Pool::avoided(const char *key, std::size_t klen, PathUsable usable, void *arg) const noexcept
{
	if (!enabled_ || !key || !klen || !marked_.load(RLX))
		return false;
	const std::uint64_t now = mcc_engine_now(e_);
	try {
		std::string k(key, klen);
		int kind;
		{
			std::lock_guard<std::mutex> g(mu_);
			kind = mark_of(k, now);
		}
		if (!kind)
			return false;
		/* a bad device whose traffic another local NIC can take: that
		 * hand-off (kLocal), not another path of this device; with none,
		 * another path of it beats the marked one (reroute()'s kPeer) */
		if (device_bad(now, kind) && local_alternative(k, kind))
			return false;
		if (peer_alternative(k, kind, now, usable, arg)) {
			avoided_hits_.fetch_add(1, RLX);
			return true; /* another path to the peer can take it */
		}
	} catch (...) {
	}
	return false;
}

bool Pool::hand_off_ok(const char *key, std::size_t klen) const noexcept
{
	if (!enabled_ || !enforce_ || !key || !klen)
		return false;
	try {
		/* every rail of this device to the peer is paused: as AVOIDed */
		if (!local_alternative(std::string(key, klen), 1))
			return false;
	} catch (...) {
		return false;
	}
	hand_offs_ok_.fetch_add(1, RLX);
	return true;
}

void Pool::unposted(Lane *l, const void *slice, std::uint32_t reason) noexcept
{
	if (!l)
		return;
	Slot *s = find(slice);
	if (!s)
		return;
	if (s->permit.flags & MCC_PERMIT_F_LIVE) {
		settled_.fetch_add(s->permit.bytes, RLX);
		ops_->release(l->cc, &s->permit, s->permit.bytes, reason);
	}
	s->key.store(0, std::memory_order_release);
	bump(l->released);
	l->settled = true;
}

int Pool::end_post_pass(Lane *l) noexcept
{
	if (!l || !l->in_pass)
		return 0;
	bool stuck = l->pass_refused && !l->pass_admitted;
	l->in_pass = false;
	l->pass_admitted = l->pass_refused = 0;
	if (l->settled) { /* released bytes: room for the other lanes */
		l->settled = false;
		mcc_engine_room_notify(e_);
	}
	if (!stuck || !park_ || l->role != MCC_LANE_POST)
		return 0; /* a lane that also polls must keep polling */
	bump(l->parks);
	mcc_engine_room_wait(e_, l->pass_seq, mcc_engine_retry_after_ns(e_));
	return 1;
}

int Pool::complete(Lane *l, const void *slice, int wc_status, std::uint32_t vendor_err,
                   std::uint32_t qp_num, int opcode, std::uint64_t post_clock_ns) noexcept
{
	if (!l)
		return 0;
	Slot *s = find(slice);
	if (!s) {
		bump(l->no_permit);
		return 0;
	}
	if (!l->clock_valid) { /* one clock pair per poll pass */
		l->pass_sdk_ns = mcc_engine_now(e_);
		l->pass_clock_ns = clock_(clock_arg_);
		l->clock_valid = true;
	}
	mcc_completion_v1 wc;
	std::memset(&wc, 0, sizeof(wc));
	wc.struct_size = sizeof(wc);
	wc.wc_status = wc_status;
	wc.vendor_err = vendor_err;
	wc.generation = s->permit.generation;
	wc.bytes = 0; /* all it holds: one WR per slice */
	std::uint64_t age = l->pass_clock_ns - post_clock_ns;
	if (post_clock_ns && post_clock_ns <= l->pass_clock_ns && age < l->pass_sdk_ns)
		wc.post_ns = l->pass_sdk_ns - age;
	wc.complete_ns = l->pass_sdk_ns;
	wc.qp_num = qp_num;
	wc.opcode = (std::uint32_t)opcode;
	settled_.fetch_add(s->permit.bytes, RLX);
	ops_->on_completion(l->cc, &s->permit, &wc);
	s->key.store(0, std::memory_order_release);
	bump(l->completions);
	l->settled = true;
	return 1;
}

void Pool::end_poll_pass(Lane *l, std::uint32_t ncqe) noexcept
{
	if (!l)
		return;
	ops_->poller_progress(l->cc, dev_, ncqe);
	if (l->settled)
		mcc_engine_room_notify(e_);
	std::uint64_t now = l->clock_valid ? l->pass_sdk_ns : mcc_engine_now(e_);
	mcc_engine_tick_if_due(e_, now);
	l->settled = false;
	l->clock_valid = false;
	if (summary_ns_) {
		std::uint64_t due = next_summary_.load(RLX);
		if (now >= due && next_summary_.compare_exchange_strong(due, now + summary_ns_, RLX))
			log_summary(now);
	}
}

void Pool::log_summary(std::uint64_t now) noexcept
{
	if (!next_summary_.load(RLX) || now < summary_ns_)
		return; /* the first pass only arms it */
	std::string line = summary();
	if (!line.empty())
		log_line(MCC_LOG_INFO, "%s", line.c_str());
}

std::uint32_t Pool::element_of(int t) noexcept
{
	/* raw enum ibv_event_type values (stable rdma-core ABI) */
	switch (t) {
	case 0: /* CQ_ERR */
		return MCC_ENGINE_EL_CQ;
	case 1: case 2: case 3: case 4: case 5: case 6: case 7: /* QP_FATAL .. PATH_MIG_ERR */
	case 16: /* QP_LAST_WQE_REACHED */
		return MCC_ENGINE_EL_QP;
	case 9: case 10: case 11: case 12: case 13: /* PORT_ACTIVE .. SM_CHANGE */
	case 17: case 18: /* CLIENT_REREGISTER, GID_CHANGE */
		return MCC_ENGINE_EL_PORT;
	default: /* DEVICE_FATAL, SRQ and WQ events, unknown values */
		return MCC_ENGINE_EL_DEVICE;
	}
}

int Pool::async_event(int event_type, std::uint32_t qp_num, std::uint32_t port_num,
                      std::uintptr_t cq) noexcept
{
	if (!enabled_)
		return 0;
	mcc_engine_async ev;
	std::memset(&ev, 0, sizeof(ev));
	ev.struct_size = sizeof(ev);
	ev.event_type = event_type;
	ev.element = element_of(event_type);
	ev.qp_num = qp_num;
	ev.port_num = port_num;
	ev.cq_key = cq;
	if (ev.element == MCC_ENGINE_EL_CQ) /* TE cannot name CQ ids: assign one */
		mcc_engine_cq_id(e_, dev_, cq);
	return mcc_engine_async_event(e_, dev_, &ev);
}

void Pool::endpoint_retired(const std::uint32_t *qp_nums, std::size_t nqp) noexcept
{
	if (!enabled_)
		return;
	for (std::size_t i = 0; i < nqp; i++)
		mcc_engine_qp_remove(e_, dev_, qp_nums[i]);
}

int Pool::setup_failed(std::uint32_t stage, const char *key, std::size_t klen,
                       int error) noexcept
{
	if (!enabled_)
		return 0;
	mcc_engine_route *r = nullptr;
	try {
		if (key && klen) {
			std::string fk = full_key(key, klen);
			mcc_engine_route_lookup(e_, fk.data(), fk.size(), &r);
		}
	} catch (...) {
		r = nullptr;
	}
	int rc = mcc_engine_setup_failed(e_, dev_, r, stage, error, nullptr);
	mcc_engine_route_put(r);
	return rc;
}

std::size_t Pool::reclaim() noexcept
{
	if (!enabled_ || lanes_.empty())
		return 0;
	std::size_t n = 0;
	mcc_lane *lane = lanes_[0]->cc;
	for (std::size_t i = 0; i <= mask_; i++) {
		Slot &s = slots_[i];
		if (!s.key.load(std::memory_order_acquire))
			continue;
		if (s.permit.flags & MCC_PERMIT_F_LIVE) {
			settled_.fetch_add(s.permit.bytes, RLX);
			ops_->release(lane, &s.permit, s.permit.bytes, MCC_REL_RECLAIMED);
			n++;
		}
		s.key.store(0, std::memory_order_release);
	}
	reclaimed_.fetch_add(n, RLX);
	if (n)
		mcc_engine_room_notify(e_);
	return n;
}

Stats Pool::stats() const noexcept
{
	Stats t;
	std::memset(&t, 0, sizeof(t));
	for (auto &lp : lanes_) {
		const Lane &l = *lp;
		t.admitted += l.admitted.load(RLX);
		t.refused_calls += l.refused_calls.load(RLX);
		t.memo_skips += l.memo_skips.load(RLX);
		t.parks += l.parks.load(RLX);
		t.passthrough += l.passthrough.load(RLX);
		t.completions += l.completions.load(RLX);
		t.no_permit += l.no_permit.load(RLX);
		t.released += l.released.load(RLX);
		t.renewals += l.renewals.load(RLX);
		t.route_errors += l.route_errors.load(RLX);
		t.reroute_peer += l.reroute_peer.load(RLX);
		t.reroute_local += l.reroute_local.load(RLX);
		t.no_usable_path += l.no_usable_path.load(RLX);
	}
	t.reclaimed = reclaimed_.load(RLX);
	t.avoided_hits = avoided_hits_.load(RLX);
	t.hand_offs_ok = hand_offs_ok_.load(RLX);
	return t;
}

int Pool::list(std::vector<PathView> &out) const noexcept
{
	out.clear();
	if (!enabled_)
		return -ENODEV;
	try {
		const std::uint64_t now = mcc_engine_now(e_);
		PathView dv;
		std::memset(&dv.st, 0, sizeof(dv.st));
		dv.st.struct_size = sizeof(dv.st);
		dv.device = true;
		ops_->domain_stats(ctx_, MCC_DOMAIN_DEVICE, dev_, &dv.st);
		std::uint64_t held = dev_held_until_.load(RLX);
		if (held > now) {
			dv.mark = 2;
			dv.mark_left_ms = (held - now + 999999) / 1000000;
		}
		out.push_back(dv);
		std::vector<std::pair<std::string, std::pair<int, std::uint64_t>>> paths;
		{
			std::lock_guard<std::mutex> g(mu_);
			for (auto &m : marks_)
				paths.push_back({ m->key, { m->kind_at(now),
				                            m->until > now ? m->until - now : 0 } });
		}
		for (auto &p : paths) {
			PathView v;
			std::memset(&v.st, 0, sizeof(v.st));
			v.st.struct_size = sizeof(v.st);
			v.path = p.first;
			v.mark = p.second.first;
			v.mark_left_ms = (p.second.second + 999999) / 1000000;
			std::string fk = full_key(p.first.data(), p.first.size());
			mcc_engine_route *r = nullptr;
			if (mcc_engine_route_lookup(e_, fk.data(), fk.size(), &r) == 0 && r) {
				ops_->domain_stats(ctx_, MCC_DOMAIN_ROUTE, mcc_engine_route_cc(r), &v.st);
				mcc_engine_route_put(r);
			} else {
				continue; /* closed */
			}
			out.push_back(v);
		}
		return (int)out.size();
	} catch (...) {
		out.clear();
		return -ENOMEM;
	}
}

std::string Pool::summary() const noexcept
{
	try {
		std::vector<PathView> v;
		if (list(v) <= 0)
			return std::string();
		const mcc_domain_stats_v1 &d = v[0].st;
		unsigned per[5] = { 0, 0, 0, 0, 0 };
		std::uint64_t cuts = 0, quar = 0, marked = 0;
		for (std::size_t i = 1; i < v.size(); i++) {
			if (v[i].st.state < 5)
				per[v[i].st.state]++;
			cuts += v[i].st.window_cuts;
			quar += v[i].st.quarantines;
			marked += v[i].mark != 0;
		}
		Stats s = stats();
		char buf[768];
		std::snprintf(buf, sizeof(buf),
		              "%s: device %s window %s inflight %s cuts %llu quarantines %llu; "
		              "routes %u (healthy %u congested %u suspect %u quarantined %u probing %u, "
		              "route cuts %llu quarantines %llu, marked %llu); admitted %llu refused %llu "
		              "reroutes peer %llu local %llu no_usable_path %llu; avoided_hits %llu "
		              "hand_offs_ok %llu completions %llu passthrough %llu no_permit %llu "
		              "route_errors %llu renewals %llu",
		              dev_name_.c_str(), state_name(d.state), human(d.window_bytes).c_str(),
		              human(d.inflight_bytes).c_str(), (unsigned long long)d.window_cuts,
		              (unsigned long long)d.quarantines, (unsigned)(v.size() - 1), per[0], per[1],
		              per[2], per[3], per[4], (unsigned long long)cuts, (unsigned long long)quar,
		              (unsigned long long)marked, (unsigned long long)s.admitted,
		              (unsigned long long)s.refused_calls, (unsigned long long)s.reroute_peer,
		              (unsigned long long)s.reroute_local, (unsigned long long)s.no_usable_path,
		              (unsigned long long)s.avoided_hits, (unsigned long long)s.hand_offs_ok,
		              (unsigned long long)s.completions, (unsigned long long)s.passthrough,
		              (unsigned long long)s.no_permit, (unsigned long long)s.route_errors,
		              (unsigned long long)s.renewals);
		return buf;
	} catch (...) {
		return std::string();
	}
}

int Pool::route_stats(const Route *r, mcc_domain_stats_v1 *out) const noexcept
{
	if (!enabled_ || !r || !r->r || !out)
		return -EINVAL;
	return ops_->domain_stats(ctx_, MCC_DOMAIN_ROUTE, mcc_engine_route_cc(r->r), out);
}

std::uint32_t Pool::route_generation(const Route *r) const noexcept
{
	return r && r->r ? mcc_engine_route_generation(r->r) : 0;
}

/* ------------------------------------------------------ process-wide */

int batch_begin(std::uint64_t batch_id) noexcept
{
	Shared &s = shared();
	std::lock_guard<std::mutex> g(s.mu);
	return s.e ? mcc_engine_batch_begin(s.e, batch_id) : 0;
}

int batch_free(std::uint64_t batch_id) noexcept
{
	Shared &s = shared();
	std::lock_guard<std::mutex> g(s.mu);
	return s.e ? mcc_engine_batch_free(s.e, batch_id) : 0;
}

int task_state(std::uint64_t batch_id, const void *task, std::uint32_t host_flags,
               mcc_task_detail_v1 *out) noexcept
{
	Shared &s = shared();
	std::lock_guard<std::mutex> g(s.mu);
	if (!s.e)
		return MCC_TASK_UNKNOWN;
	mcc_task_ref_v1 t;
	std::memset(&t, 0, sizeof(t));
	t.batch_id = batch_id;
	t.task_id = (std::uint64_t)(std::uintptr_t)task;
	mcc_task_detail_v1 tmp;
	if (!out) {
		std::memset(&tmp, 0, sizeof(tmp));
		tmp.struct_size = sizeof(tmp);
		out = &tmp;
	}
	const mcc_policy_v1 *ops = mcc_engine_ops(s.e);
	return ops->task_query(mcc_engine_ctx(s.e), &t, host_flags, out);
}

} /* namespace mooncake */
} /* namespace mcc */
