// SPDX-License-Identifier: MIT
// test_mooncake.cpp - the Mooncake classic TE adapter
// (plugin_api/adapters/mooncake/mcc_mooncake.hpp) driven the way TE drives it: a fake
// TE with two rails (two WorkerPools, each a poller worker 0 and a poster
// worker 1), slices in per-route queues, WCs (success, RETRY_EXC, flush),
// an endpoint rebuilt with new QPs, an async QP_FATAL before the ack, batch
// free and recycle, and DEFER without a spin, over the real aimd module in
// enforce mode with an injected engine clock.
#include "mcc_mooncake.hpp"

#include <algorithm>
#include <cstdarg>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "../check_cxx.h"

namespace mm = mcc::mooncake;


// The engine clock: like TE's CLOCK_REALTIME, in ns, set by the test.
static std::atomic<std::uint64_t> fake_ns{1700000000000000000ull};
static std::uint64_t fake_clock(void *) { return fake_ns.load(); }
static void advance_us(std::uint64_t us) { fake_ns.fetch_add(us * 1000); }
static void quiet_log(void *, int, const char *, ...) {}

// rdma-core look-alikes, with the member names the adapter's templates read.
enum { WC_SUCCESS = 0, WC_WR_FLUSH_ERR = 5, WC_RETRY_EXC_ERR = 12 };
enum { EV_CQ_ERR = 0, EV_QP_FATAL = 1, EV_PORT_ERR = 10 };
struct FakeQp {
	std::uint32_t qp_num;
};
struct FakeCq {
	int unused;
};
struct FakeWc {
	std::uint64_t wr_id;
	int status;
	int opcode;
	std::uint32_t vendor_err;
	std::uint32_t qp_num;
};
struct FakeAsync {
	union {
		FakeCq *cq;
		FakeQp *qp;
		int port_num;
	} element;
	int event_type;
};

// TE's objects, reduced to what the call sites read.
struct FakeTask {
	std::uint64_t batch_id;
};
struct FakeSlice {
	std::uint64_t length;
	std::uint64_t ts; // post time, engine clock
	FakeTask *task;
	std::uint32_t retry_cnt;
};
struct FakeEndpoint {
	std::vector<FakeQp *> qp_list;
	FakeQp qps[2];
	explicit FakeEndpoint(std::uint32_t first)
	{
		for (int i = 0; i < 2; i++) {
			qps[i].qp_num = first + (std::uint32_t)i;
			qp_list.push_back(&qps[i]);
		}
	}
};

// The WC of one posted slice (wr_id is the Slice pointer, as in TE).
static FakeWc fake_wc(const FakeSlice *slice, int status, std::uint32_t qp_num)
{
	FakeWc wc;
	std::memset(&wc, 0, sizeof(wc));
	wc.wr_id = (std::uint64_t)(std::uintptr_t)slice;
	wc.status = status;
	wc.qp_num = qp_num;
	return wc;
}

// One rail: a WorkerPool on a local device posting to one peer NIC.
struct Rail {
	mm::Pool pool;
	std::string peer;
	std::unique_ptr<FakeEndpoint> ep;
	std::deque<FakeSlice *> queue;     // the poster's queue for `peer`
	std::vector<FakeSlice *> inflight; // posted, WC not yet polled
	Rail(const char *dev, std::uint32_t idx, const char *peer_path, std::uint32_t qp0)
	    : pool(desc(dev, idx)), peer(peer_path), ep(new FakeEndpoint(qp0))
	{
	}
	static mm::PoolDesc desc(const char *dev, std::uint32_t idx)
	{
		mm::PoolDesc d;
		d.device_name = dev;
		d.device_index = idx;
		d.workers = 2;
		d.max_outstanding = 256;
		return d;
	}
	mm::Route *route() { return pool.route(pool.lane(1), peer, ep.get(), ep->qp_list); }
	// RdmaEndPoint::submitPostSend for one chunk of at most `chunk` slices.
	std::size_t post_pass(std::size_t chunk, std::size_t reject_from = ~(std::size_t)0)
	{
		mm::Lane *l = pool.lane(1);
		mm::Route *r = route();
		std::size_t n = std::min(chunk, queue.size());
		std::size_t k = pool.admit_prefix(l, r, queue.begin(), n, [](FakeSlice *s) {
			return mm::SliceInfo{s, s->length, s->task->batch_id, s->task, s->retry_cnt};
		});
		for (std::size_t i = 0; i < k; i++) {
			FakeSlice *s = queue.front();
			queue.pop_front();
			if (i >= reject_from) { // ibv_post_send's bad_wr and after
				pool.unposted(l, s);
				queue.push_back(s);
				continue;
			}
			s->ts = fake_ns.load();
			inflight.push_back(s);
		}
		pool.end_post_pass(l);
		return k;
	}
	// WorkerPool::performPollCq: one pass over every posted slice.
	std::size_t poll_pass(int status, std::size_t max = ~(std::size_t)0)
	{
		mm::Lane *l = pool.lane(0);
		std::size_t n = std::min(max, inflight.size());
		for (std::size_t i = 0; i < n; i++) {
			FakeWc wc = fake_wc(inflight[i], status, ep->qps[0].qp_num);
			CHECK(pool.complete_wc(l, wc, inflight[i]->ts) == 1);
		}
		inflight.erase(inflight.begin(), inflight.begin() + (std::ptrdiff_t)n);
		pool.end_poll_pass(l, (std::uint32_t)n);
		return n;
	}
	mcc_domain_stats_v1 route_stats()
	{
		mcc_domain_stats_v1 st;
		std::memset(&st, 0, sizeof(st));
		st.struct_size = sizeof(st);
		CHECK(pool.route_stats(route(), &st) == 0);
		return st;
	}
};

static std::string write_ini(const char *text)
{
	char path[] = "/tmp/mcc-mooncake-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return "";
	ssize_t n = (ssize_t)std::strlen(text);
	if (write(fd, text, (size_t)n) != n) {
		close(fd);
		return "";
	}
	close(fd);
	return path;
}

// The adapter's options of these tests: `ini` (kept alive by the caller),
// the polled tick on the fake clock, the environment ignored, quiet.
static mm::Options options_for(const char *moddir, const std::string &ini)
{
	mm::Options o;
	o.ini_path = ini.c_str();
	o.module_dir = moddir;
	o.ignore_env = true;
	o.tick = MCC_ENGINE_TICK_POLL;
	o.now_ns = fake_clock;
	o.log = quiet_log;
	return o;
}

static void set_options(const char *moddir, const std::string &ini)
{
	CHECK(mm::configure(options_for(moddir, ini)) == 0);
}

// The adapter's options over an ini of `text`; returns its path (unlink it).
static std::string use_ini(const char *moddir, const char *text)
{
	std::string ini = write_ini(text);
	CHECK(!ini.empty());
	set_options(moddir, ini);
	return ini;
}

// Slices of 64 KiB; two batches of tasks as TE would hold them.
static FakeTask tasks[4] = {{0x1000}, {0x1000}, {0x2000}, {0x2000}};
static std::vector<std::unique_ptr<FakeSlice>> slices;
static void enqueue(Rail &r, std::size_t n, FakeTask *t)
{
	for (std::size_t i = 0; i < n; i++) {
		slices.emplace_back(new FakeSlice{65536, 0, t, 0});
		r.queue.push_back(slices.back().get());
	}
}

static void test_enforce(const char *moddir)
{
	std::string ini = use_ini(moddir, "[policy]\nmode = enforce\n");
	{
		Rail a("mlx5_0", 0, "10.0.0.2:12001@mlx5_0", 100);
		Rail b("mlx5_1", 1, "10.0.0.2:12001@mlx5_1", 200);
		CHECK(a.pool.enabled() && a.pool.error() == 0);
		CHECK(b.pool.enabled());
		CHECK(mm::configure(mm::Options()) == -EBUSY); // pools are open
		CHECK(mm::batch_begin(tasks[0].batch_id) == 0);
		CHECK(mm::batch_begin(tasks[2].batch_id) == 0);

		// 1. A chunk larger than the window: a prefix goes, the rest waits.
		enqueue(a, 64, &tasks[0]);
		std::size_t k = a.post_pass(16);
		CHECK(k > 0 && k < 16);
		mm::Stats s = a.pool.stats();
		CHECK(s.admitted == k && s.refused_calls == 1);
		// No room came back: the poster is not spinning on the policy.
		for (int i = 0; i < 5; i++)
			CHECK(a.post_pass(16) == 0);
		s = a.pool.stats();
		CHECK(s.refused_calls == 1);
		CHECK(s.memo_skips == 5);
		CHECK(s.parks == 5); // each fully refused pass parked (timed out: no poller)
		// 2. Drain: the poller settles, the poster goes on. One refused call
		// per pass at most, never more than one per admitted slice.
		for (int pass = 0; pass < 400 && (!a.queue.empty() || !a.inflight.empty()); pass++) {
			a.post_pass(16);
			advance_us(100);
			a.poll_pass(WC_SUCCESS);
			advance_us(900);
		}
		s = a.pool.stats();
		CHECK(a.queue.empty() && a.inflight.empty());
		CHECK(s.admitted == 64 && s.completions == 64);
		CHECK(s.refused_calls <= s.admitted);
		CHECK(s.passthrough == 0 && s.no_permit == 0 && s.route_errors == 0);
		mcc_domain_stats_v1 st = a.route_stats();
		CHECK(st.inflight_bytes == 0);
		CHECK(st.state == MCC_PATH_HEALTHY);
		std::printf("drain: admitted %llu refused calls %llu memo skips %llu parks %llu\n",
		            (unsigned long long)s.admitted, (unsigned long long)s.refused_calls,
		            (unsigned long long)s.memo_skips, (unsigned long long)s.parks);

		// 3. ibv_post_send bad_wr: the unposted permits are released.
		enqueue(b, 4, &tasks[2]);
		k = b.post_pass(4, 1);
		CHECK(k >= 2);
		CHECK(b.pool.stats().released == k - 1);
		CHECK(b.route_stats().inflight_bytes == 65536);
		b.poll_pass(WC_SUCCESS);
		CHECK(b.route_stats().inflight_bytes == 0);

		// 4. Async QP_FATAL on rail A's live endpoint, before the ack.
		FakeAsync ev;
		std::memset(&ev, 0, sizeof(ev));
		ev.event_type = EV_QP_FATAL;
		ev.element.qp = a.ep->qp_list[1];
		CHECK(a.pool.async_event(ev) >= 0);

		// 5. The peer NIC of rail A dies: RETRY_EXC, then flushes.
		std::uint32_t gen1 = a.pool.route_generation(a.route());
		enqueue(a, 8, &tasks[1]);
		std::size_t posted = a.post_pass(8);
		CHECK(posted >= 4);
		a.poll_pass(WC_RETRY_EXC_ERR, 3);
		advance_us(1000);
		a.poll_pass(WC_WR_FLUSH_ERR, 1); // a flush of the same endpoint
		advance_us(1000);
		b.poll_pass(WC_SUCCESS); // any poll pass ticks
		st = a.route_stats();
		CHECK(st.state == MCC_PATH_QUARANTINED);
		CHECK(st.quarantines >= 1);
		// TE deletes the endpoint: its QPs go, then a new one is built.
		std::unique_ptr<FakeEndpoint> old(std::move(a.ep));
		a.pool.endpoint_retired(old->qp_list);
		ev.event_type = EV_QP_FATAL;
		ev.element.qp = old->qp_list[0];
		CHECK(a.pool.async_event(ev) == -ENOENT); // torn down: a no-op
		old->qp_list[1] = nullptr; // a QP TE already destroyed: skipped
		a.pool.endpoint_retired(old->qp_list);
		a.ep.reset(new FakeEndpoint(300));
		CHECK(a.pool.route_generation(a.route()) == gen1 + 1);
		CHECK(a.pool.stats().renewals == 1);
		ev.element.qp = a.ep->qp_list[0];
		CHECK(a.pool.async_event(ev) >= 0); // the new QPs are registered
		// Late flushes of the old endpoint settle accounting only.
		std::uint64_t stale0 = a.route_stats().stale_feedback;
		a.poll_pass(WC_WR_FLUSH_ERR);
		st = a.route_stats();
		CHECK(st.inflight_bytes == 0);
		CHECK(st.stale_feedback > stale0);
		// Quarantined: one refused call, then quiet until the cooldown ends,
		// while rail B carries the traffic.
		s = a.pool.stats();
		std::uint64_t refused0 = s.refused_calls;
		enqueue(a, 8, &tasks[1]);
		enqueue(b, 16, &tasks[3]);
		for (int pass = 0; pass < 20; pass++) {
			CHECK(a.post_pass(8) == 0);
			b.post_pass(8);
			advance_us(20);
			b.poll_pass(WC_SUCCESS);
			a.poll_pass(WC_SUCCESS);
			advance_us(980);
		}
		std::printf("quarantine: refused %llu -> %llu\n", (unsigned long long)refused0,
		            (unsigned long long)a.pool.stats().refused_calls);
		CHECK(a.pool.stats().refused_calls == refused0 + 1);
		CHECK(b.queue.empty() && b.inflight.empty());
		// The task hit by the dead rail reads as such; batch 0x1000 is then
		// freed, and its id recycled without carrying the old evidence.
		mcc_task_detail_v1 det;
		std::memset(&det, 0, sizeof(det));
		det.struct_size = sizeof(det);
		int ts = mm::task_state(tasks[1].batch_id, &tasks[1], MCC_TASKQ_FAILED, &det);
		CHECK(ts == MCC_TASK_LONG_UNAVAILABLE || ts == MCC_TASK_UNKNOWN);
		CHECK(det.reason != MCC_REASON_NO_RECORD);
		std::memset(&det, 0, sizeof(det));
		det.struct_size = sizeof(det);
		ts = mm::task_state(tasks[3].batch_id, &tasks[3], MCC_TASKQ_SEEN_SUCCESS | MCC_TASKQ_FINISHED, &det);
		CHECK(ts == MCC_TASK_NORMAL);
		CHECK(mm::batch_free(tasks[1].batch_id) == 0);
		CHECK(mm::batch_free(tasks[1].batch_id) == -ENOENT); // freed twice
		std::memset(&det, 0, sizeof(det));
		det.struct_size = sizeof(det);
		mm::task_state(tasks[1].batch_id, &tasks[1], 0, &det);
		CHECK(det.reason == MCC_REASON_NO_RECORD);
		CHECK(mm::batch_begin(tasks[1].batch_id) == 0);      // recycled id
		CHECK(mm::batch_begin(tasks[2].batch_id) == -EEXIST); // its free was missed
		CHECK(mm::batch_free(tasks[1].batch_id) == 0);
		CHECK(mm::batch_free(tasks[2].batch_id) == 0);

		// 6. After the cooldown the policy probes rail A again.
		for (int pass = 0; pass < 3000 && !a.queue.empty(); pass++) {
			a.post_pass(8);
			advance_us(1000);
			a.poll_pass(WC_SUCCESS);
		}
		CHECK(a.queue.empty());
		s = a.pool.stats();
		CHECK(s.refused_calls <= s.admitted);
		std::printf("rail A: admitted %llu refused calls %llu memo skips %llu parks %llu\n",
		            (unsigned long long)s.admitted, (unsigned long long)s.refused_calls,
		            (unsigned long long)s.memo_skips, (unsigned long long)s.parks);

		// 7. Teardown with WRs still out: reclaimed, nothing leaks.
		enqueue(b, 2, &tasks[3]);
		CHECK(b.post_pass(2) == 2);
		CHECK(b.pool.reclaim() == 2);
		CHECK(b.route_stats().inflight_bytes == 0);
		CHECK(b.pool.stats().reclaimed == 2);
		b.inflight.clear();
		// Misuse: a slice without a permit, a NULL lane, an unknown key.
		FakeSlice stray = {4096, 0, &tasks[0], 0};
		CHECK(b.pool.complete(b.pool.lane(0), &stray, WC_SUCCESS, 0, 0, 0, 0) == 0);
		CHECK(b.pool.stats().no_permit == 1);
		CHECK(b.pool.lane(7) == nullptr);
		CHECK(b.pool.admit(nullptr, nullptr, mm::SliceInfo{&stray, 4096, 1, &tasks[0], 0}) ==
		      MCC_ADMIT);
		CHECK(b.pool.setup_failed(MCC_ENGINE_SETUP_HANDSHAKE, "10.0.0.9:1@mlx5_9", 17,
		                          -ETIMEDOUT) >= 0);
		CHECK(b.pool.setup_failed(99, nullptr, 0, -EIO) == -EINVAL);
		// Port and CQ events (they take rail B's device down: last).
		ev.event_type = EV_PORT_ERR;
		ev.element.port_num = 1;
		CHECK(b.pool.async_event(ev) >= 0);
		FakeCq cq = {0};
		ev.event_type = EV_CQ_ERR;
		ev.element.cq = &cq;
		CHECK(b.pool.async_event(ev) >= 0); // CQ ids are assigned by the adapter
		b.pool.bind_thread(1);
		CHECK(b.pool.this_lane() == b.pool.lane(1));
		CHECK(a.pool.this_lane() == nullptr);
	}
	mm::Pool bad(mm::PoolDesc{}); // no device name
	CHECK(!bad.enabled() && bad.error() == -EINVAL);
	CHECK(mm::batch_free(42) == 0); // no engine open: a no-op
	unlink(ini.c_str());
}

// A poster thread and a poller thread on one rail, as TE runs them with
// workers_per_ctx = 2: the side table is shared between them, the poster
// parks on refusals and the poller's passes wake it. Run under TSan too.
static void test_threads(const char *moddir)
{
	std::string ini = use_ini(moddir, "[policy]\nmode = enforce\n");
	{
		Rail a("mlx5_0", 0, "10.0.0.3:12001@mlx5_0", 400);
		const std::size_t total = 2000;
		enqueue(a, total, &tasks[0]);
		std::mutex mu; // TE's per-QP depth / CQ handoff, reduced to a list
		std::vector<FakeSlice *> posted;
		std::atomic<std::size_t> done{0};
		// TE never has more WRs outstanding than its QPs take: the bound
		// the side table is sized from (PoolDesc.max_outstanding)
		const std::size_t depth = Rail::desc("mlx5_0", 0).max_outstanding;
		std::atomic<std::size_t> outstanding{0};
		std::thread poster([&] {
			mm::Lane *l = a.pool.lane(1);
			a.pool.bind_thread(1);
			mm::Route *r = a.pool.route(a.pool.this_lane(), a.peer, a.ep.get(), a.ep->qp_list);
			while (!a.queue.empty()) {
				std::size_t room = depth - outstanding.load();
				if (!room) { // the QPs are full: wait for the poller
					std::this_thread::yield();
					continue;
				}
				std::size_t n = std::min<std::size_t>({16, a.queue.size(), room});
				std::size_t k = a.pool.admit_prefix(l, r, a.queue.begin(), n, [](FakeSlice *s) {
					return mm::SliceInfo{s, s->length, s->task->batch_id, s->task, 0};
				});
				outstanding.fetch_add(k);
				{
					std::lock_guard<std::mutex> g(mu);
					for (std::size_t i = 0; i < k; i++) {
						a.queue.front()->ts = fake_ns.load();
						posted.push_back(a.queue.front());
						a.queue.pop_front();
					}
				}
				a.pool.end_post_pass(l);
			}
		});
		std::thread poller([&] {
			mm::Lane *l = a.pool.lane(0);
			while (done.load() < total) {
				std::vector<FakeSlice *> got;
				{
					std::lock_guard<std::mutex> g(mu);
					got.swap(posted);
				}
				if (!got.empty())
					advance_us(100);
				for (FakeSlice *s : got) {
					a.pool.complete_wc(l, fake_wc(s, WC_SUCCESS, 0), s->ts);
				}
				a.pool.end_poll_pass(l, (std::uint32_t)got.size());
				outstanding.fetch_sub(got.size());
				done.fetch_add(got.size());
				if (got.empty())
					std::this_thread::yield();
			}
		});
		poster.join();
		poller.join();
		mm::Stats s = a.pool.stats();
		CHECK(s.admitted == total && s.completions == total);
		CHECK(s.passthrough == 0 && s.no_permit == 0);
		CHECK(s.refused_calls <= 2 * s.admitted); // a spin makes thousands per slice
		CHECK(a.pool.reclaim() == 0); // no permit left behind in the side table
		std::printf("threads: admitted %llu refused calls %llu memo skips %llu parks %llu\n",
		            (unsigned long long)s.admitted, (unsigned long long)s.refused_calls,
		            (unsigned long long)s.memo_skips, (unsigned long long)s.parks);
	}
	unlink(ini.c_str());
}

static void test_off(const char *moddir)
{
	std::string ini = use_ini(moddir, "[policy]\nmode = off\n");
	{
		Rail a("mlx5_0", 0, "10.0.0.2:12001@mlx5_0", 100);
		CHECK(!a.pool.enabled());
		CHECK(a.pool.lane(0) == nullptr);
		enqueue(a, 8, &tasks[0]);
		CHECK(a.post_pass(8) == 8); // everything goes, nothing is kept
		FakeAsync ev;
		std::memset(&ev, 0, sizeof(ev));
		ev.event_type = EV_QP_FATAL;
		ev.element.qp = a.ep->qp_list[0];
		CHECK(a.pool.async_event(ev) == 0);
		CHECK(mm::batch_begin(7) == 0 && mm::batch_free(7) == 0);
		CHECK(a.pool.stats().admitted == 0);
	}
	unlink(ini.c_str());
}

// The inert Pool an engine's accessor returns for a context without a Pool
// of its own (or_inert(nullptr)): Mooncake's unit tests build WorkerPools
// on contexts that were never constructed, TENT keeps non-RDMA contexts.
// Every call site's call on it admits, settles nothing and never crashes,
// while a real Pool of an enforcing engine is open beside it.
static void test_inert(const char *moddir)
{
	std::string ini = use_ini(moddir, "[policy]\nmode = enforce\n");
	{
		Rail a("mlx5_0", 0, "10.0.0.2:12001@mlx5_0", 100);
		CHECK(a.pool.enabled());
		CHECK(mm::or_inert(&a.pool) == &a.pool);
		mm::Pool *p = mm::or_inert(nullptr);
		CHECK(p == &mm::Pool::inert() && p != &a.pool);
		CHECK(!p->enabled() && p->error() == -ENODEV);
		p->bind_thread(0); // TE's transferWorker
		CHECK(p->lane(0) == nullptr && p->this_lane() == nullptr);
		FakeEndpoint ep(500);
		mm::Route *r = p->route(p->this_lane(), std::string("10.0.0.5:1@mlx5_0"), &ep, ep.qp_list);
		CHECK(r == nullptr);
		FakeSlice sl[4] = {{65536, 1, &tasks[0], 0}, {65536, 1, &tasks[0], 0},
		                   {65536, 1, &tasks[0], 0}, {65536, 1, &tasks[0], 0}};
		FakeSlice *list[4] = {&sl[0], &sl[1], &sl[2], &sl[3]};
		CHECK(p->admit_prefix(p->this_lane(), r, list, 4, [](FakeSlice *s) {
			return mm::SliceInfo{s, s->length, s->task->batch_id, s->task, 0};
		}) == 4);
		p->unposted(p->this_lane(), &sl[3]);
		CHECK(p->end_post_pass(p->this_lane()) == 0);
		CHECK(p->complete_wc(p->lane(0), fake_wc(&sl[0], WC_SUCCESS, 500), 1) == 0);
		p->end_poll_pass(p->lane(0), 1);
		FakeAsync ev;
		std::memset(&ev, 0, sizeof(ev));
		ev.event_type = EV_QP_FATAL;
		ev.element.qp = ep.qp_list[0];
		CHECK(p->async_event(ev) == 0);
		ev.element.qp = nullptr; // TE's drain test injects events like this
		CHECK(p->async_event(ev) == 0);
		CHECK(a.pool.async_event(ev) == -EINVAL);
		p->endpoint_retired(ep.qp_list);
		CHECK(p->setup_failed(MCC_ENGINE_SETUP_HANDSHAKE, "x", 1, -EIO) == 0);
		CHECK(p->reclaim() == 0);
		mm::Stats st = p->stats();
		CHECK(st.admitted == 0 && st.refused_calls == 0 && st.completions == 0);
		// the real Pool beside it is untouched: it still admits and settles
		enqueue(a, 2, &tasks[0]);
		CHECK(a.post_pass(2) == 2 && a.poll_pass(WC_SUCCESS) == 2);
		CHECK(a.pool.stats().admitted == 2 && a.pool.stats().completions == 2);
	}
	unlink(ini.c_str());
}

// A slow path beside a fast one: rail a's window is full and one of its
// slices completes every 3 ms (Soft-RoCE under TCG: ~3 ms per 64 KiB),
// while rail b, another device, settles slices every 250 us. Each of b's
// poll passes (and each tick) moves the process-wide room sequence, but
// none of them frees room on a's device: a's poster must not ask again for
// them, and once a's own slice has settled it asks for that slice's bytes
// only, not for one more that would be refused; its asks beyond that back
// off while they find nothing. Refused try_acquire calls at most one per
// admitted slice. 40 admitted cost 456 refused calls with a re-ask on every
// room change, 38 with one per settled slice, 19 with the settled bytes as
// budget, 5 with the back-off while the law took a route's first standing
// queue as its base; 20 since it does not: a's 16 slices of 3 ms each are a
// 48 ms queue, the law cuts a's window, and after each cut a settled slice
// does not free room until in-flight is back under the window.
static void test_slow_path(const char *moddir)
{
	std::string ini = use_ini(moddir, "[policy]\nmode = enforce\n");
	{
		Rail a("mlx5_0", 0, "10.0.0.2:12001@mlx5_0", 500);
		Rail b("mlx5_1", 1, "10.0.0.2:12001@mlx5_1", 600);
		CHECK(a.pool.enabled() && b.pool.enabled());
		CHECK(mm::batch_begin(tasks[2].batch_id) == 0);
		enqueue(a, 40, &tasks[2]);
		enqueue(b, 400, &tasks[2]);
		std::uint64_t done = 0;
		for (int step = 0; step < 600 && !a.queue.empty(); step++) { // 250 us steps
			a.post_pass(16);
			b.post_pass(16);
			done += a.poll_pass(WC_SUCCESS, step % 12 == 11 ? 1 : 0);
			b.poll_pass(WC_SUCCESS);
			if (b.queue.empty())
				enqueue(b, 64, &tasks[2]);
			advance_us(250);
		}
		mm::Stats s = a.pool.stats();
		CHECK(done >= 30);
		CHECK(s.admitted >= done);
		CHECK(s.refused_calls <= s.admitted);
		std::printf("slow path: admitted %llu completed %llu refused calls %llu memo skips %llu\n",
		            (unsigned long long)s.admitted, (unsigned long long)done,
		            (unsigned long long)s.refused_calls, (unsigned long long)s.memo_skips);
		while (!a.inflight.empty())
			a.poll_pass(WC_SUCCESS);
		while (!b.inflight.empty())
			b.poll_pass(WC_SUCCESS);
		CHECK(mm::batch_free(tasks[2].batch_id) == 0);
	}
	unlink(ini.c_str());
}

// TENT's Workers: every worker posts and polls on its own thread
// (split_roles = false). A fully refused pass never parks (the same thread
// must go on polling), and the worker settles what it posted itself.
static void test_tent_roles(const char *moddir)
{
	std::string ini = use_ini(moddir, "[policy]\nmode = enforce\n");
	{
		mm::PoolDesc d = Rail::desc("mlx5_0", 0);
		d.split_roles = false;
		mm::Pool pool(d);
		CHECK(pool.enabled());
		CHECK(mm::batch_begin(tasks[0].batch_id) == 0);
		FakeEndpoint ep(300);
		const std::string peer = "10.0.0.2:12001@mlx5_0";
		mm::Lane *l = pool.lane(1);
		mm::Route *r = pool.route(l, peer, &ep, ep.qp_list);
		CHECK(r != nullptr);
		std::vector<std::unique_ptr<FakeSlice>> own;
		std::vector<FakeSlice *> queue;
		for (int i = 0; i < 64; i++) {
			own.emplace_back(new FakeSlice{65536, 0, &tasks[0], 0});
			queue.push_back(own.back().get());
		}
		auto info = [](FakeSlice *s) {
			return mm::SliceInfo{s, s->length, s->task->batch_id, s->task, s->retry_cnt};
		};
		std::size_t k = pool.admit_prefix(l, r, queue.begin(), queue.size(), info);
		CHECK(k > 0 && k < queue.size());
		CHECK(pool.end_post_pass(l) == 0);
		CHECK(pool.admit_prefix(l, r, queue.begin() + (std::ptrdiff_t)k, 1, info) == 0);
		CHECK(pool.end_post_pass(l) == 0); // refused, not parked
		CHECK(pool.stats().parks == 0);
		advance_us(100);
		for (std::size_t i = 0; i < k; i++) {
			CHECK(pool.complete_wc(l, fake_wc(queue[i], WC_SUCCESS, ep.qps[0].qp_num), 0) == 1);
		}
		pool.end_poll_pass(l, (std::uint32_t)k);
		advance_us(900);
		CHECK(pool.admit_prefix(l, r, queue.begin() + (std::ptrdiff_t)k, 1, info) == 1);
		pool.unposted(l, queue[k]);
		mm::Stats s = pool.stats();
		CHECK(s.completions == k && s.parks == 0 && s.passthrough == 0);
		CHECK(mm::batch_free(tasks[0].batch_id) == 0);
	}
	unlink(ini.c_str());
}

// A path of a Pool that has several (one local NIC, several peer NICs): the
// poster's queue for one peer_nic_path, as TE's performPostSend holds it.
struct Path {
	mm::Pool &pool;
	std::string peer;
	std::unique_ptr<FakeEndpoint> ep;
	std::vector<FakeSlice *> queue;
	std::vector<FakeSlice *> inflight;
	Path(mm::Pool &p, const char *peer_path, std::uint32_t qp0)
	    : pool(p), peer(peer_path), ep(new FakeEndpoint(qp0))
	{
	}
	mm::Route *route() { return pool.route(pool.lane(1), peer, ep.get(), ep->qp_list); }
	static mm::SliceInfo info(FakeSlice *s)
	{
		return mm::SliceInfo{s, s->length, s->task->batch_id, s->task, s->retry_cnt};
	}
	// Site 9 then site 3: where the group goes, and what was posted.
	mm::Reroute verdict() { return pool.reroute(pool.lane(1), peer, queue, info); }
	std::size_t post_pass()
	{
		mm::Lane *l = pool.lane(1);
		std::size_t k = pool.admit_prefix(l, route(), queue.begin(), queue.size(), info);
		for (std::size_t i = 0; i < k; i++) {
			queue[i]->ts = fake_ns.load();
			inflight.push_back(queue[i]);
		}
		queue.erase(queue.begin(), queue.begin() + (std::ptrdiff_t)k);
		pool.end_post_pass(l);
		return k;
	}
	std::size_t poll_pass(int status, std::size_t max = ~(std::size_t)0)
	{
		mm::Lane *l = pool.lane(0);
		std::size_t n = std::min(max, inflight.size());
		for (std::size_t i = 0; i < n; i++)
			CHECK(pool.complete_wc(l, fake_wc(inflight[i], status, ep->qps[0].qp_num),
			                       inflight[i]->ts) == 1);
		inflight.erase(inflight.begin(), inflight.begin() + (std::ptrdiff_t)n);
		pool.end_poll_pass(l, (std::uint32_t)n);
		return n;
	}
	void add(std::size_t n, FakeTask *t)
	{
		for (std::size_t i = 0; i < n; i++) {
			slices.emplace_back(new FakeSlice{65536, 0, t, 0});
			queue.push_back(slices.back().get());
		}
	}
	// Adds n slices of t and makes a post pass: what it posted.
	std::size_t add_and_post(std::size_t n, FakeTask *t)
	{
		add(n, t);
		return post_pass();
	}
	// Healthy traffic: everything posted completes within the ms.
	void deliver(std::size_t n, FakeTask *t)
	{
		add(n, t);
		for (int i = 0; i < 50 && (!queue.empty() || !inflight.empty()); i++) {
			post_pass();
			advance_us(100);
			poll_pass(WC_SUCCESS);
			advance_us(900);
		}
		CHECK(queue.empty() && inflight.empty());
	}
	// What was moved here drains: posted, completed within the ms.
	void drain()
	{
		for (int i = 0; i < 20 && !queue.empty(); i++) {
			post_pass();
			advance_us(1000);
			poll_pass(WC_SUCCESS);
		}
		CHECK(queue.empty());
	}
	// The path fails: a WR of each of three endpoints ends with RETRY_EXC
	// (TE deletes the endpoint at each and builds a new one).
	void fail()
	{
		for (int g = 0; g < 3 && state() != MCC_PATH_QUARANTINED; g++) {
			add(1, &tasks[1]);
			CHECK(post_pass() == 1);
			poll_pass(WC_RETRY_EXC_ERR);
			pool.endpoint_retired(ep->qp_list);
			ep.reset(new FakeEndpoint(ep->qps[0].qp_num + 10));
			advance_us(1000);
			pool.end_poll_pass(pool.lane(0), 0); // a tick
		}
		CHECK(state() == MCC_PATH_QUARANTINED);
	}
	std::uint32_t state()
	{
		mcc_domain_stats_v1 st;
		std::memset(&st, 0, sizeof(st));
		st.struct_size = sizeof(st);
		CHECK(pool.route_stats(route(), &st) == 0);
		return st.state;
	}
	// TE moves the group (redispatch or hand-off): the retry count stays.
	void move_to(Path &o)
	{
		for (FakeSlice *s : queue) {
			CHECK(s->retry_cnt == 0);
			o.queue.push_back(s);
		}
		queue.clear();
	}
};

// Site 9 and site 10: an AVOIDed group goes to another peer NIC from the
// same device, then to another local NIC, then nowhere (NO_USABLE_PATH, the
// task reads LONG_UNAVAILABLE); a group DEFERred near the floor (a held,
// gray-loss path) moves too; a full window stays. TE's selection passes
// over a marked path only while the device has another. Operators list
// routes and devices with state, window, in-flight, cuts and quarantines.
static void test_reroute(const char *moddir)
{
	std::string ini = use_ini(moddir, "[policy]\nmode = enforce\n");
	{
		mm::Pool A(Rail::desc("mlx5_0", 0)), B(Rail::desc("mlx5_1", 1));
		CHECK(A.enabled() && B.enabled());
		Path a0(A, "10.0.0.2:12001@mlx5_0", 700), a1(A, "10.0.0.2:12001@mlx5_1", 720);
		Path b0(B, "10.0.0.2:12001@mlx5_0", 740);
		CHECK(mm::batch_begin(tasks[0].batch_id) == 0);
		a0.deliver(4, &tasks[0]);
		a1.deliver(4, &tasks[0]);
		b0.deliver(4, &tasks[0]);
		CHECK(a0.verdict() == mm::Reroute::kStay); // nothing marked
		CHECK(!A.avoided(a0.peer));

		// 1. Peer NIC 0 fails: a0 is AVOIDed; another peer NIC from A.
		a0.fail();
		CHECK(a0.add_and_post(8, &tasks[0]) == 0);
		CHECK(a0.verdict() == mm::Reroute::kPeer);
		CHECK(A.avoided(a0.peer) && !A.avoided(a1.peer));
		a0.move_to(a1);
		a1.drain();
		// 2. a1 fails too: local NIC 0 is the fault; B's path is used.
		a1.fail();
		CHECK(a0.add_and_post(8, &tasks[0]) == 0);
		CHECK(a1.add_and_post(1, &tasks[0]) == 0);
		CHECK(a0.verdict() == mm::Reroute::kLocal);
		CHECK(!A.avoided(a0.peer)); // no unmarked sibling: TE keeps its last path
		CHECK(A.hand_off_ok(a0.peer)); // site 11: B can take what TE would fail
		a0.move_to(b0);
		a1.move_to(b0);
		b0.drain();
		// 3. Nowhere: b0 fails as well. The slices wait, their task reads
		// LONG_UNAVAILABLE (reported once per mark).
		b0.fail();
		CHECK(b0.add_and_post(1, &tasks[2]) == 0);
		a0.add(4, &tasks[2]);
		CHECK(mm::batch_begin(tasks[2].batch_id) == 0);
		CHECK(a0.post_pass() == 0);
		CHECK(a0.verdict() == mm::Reroute::kNoUsablePath);
		CHECK(a0.verdict() == mm::Reroute::kNoUsablePath);
		CHECK(!A.hand_off_ok(a0.peer)); // nowhere: TE fails it as stock TE does
		mm::Stats s = A.stats();
		CHECK(s.reroute_peer == 1 && s.reroute_local == 1 && s.no_usable_path == 2);
		CHECK(s.avoided_hits >= 1 && s.hand_offs_ok == 1);
		mcc_task_detail_v1 det;
		std::memset(&det, 0, sizeof(det));
		det.struct_size = sizeof(det);
		CHECK(mm::task_state(tasks[2].batch_id, &tasks[2], 0, &det) ==
		      MCC_TASK_LONG_UNAVAILABLE);
		CHECK(det.reason == MCC_REASON_NO_USABLE_PATH || det.reason == MCC_REASON_PATH_QUARANTINED);
		// Operators: the device and both routes, quarantined and marked.
		std::vector<mm::PathView> v;
		CHECK(A.list(v) == 3);
		CHECK(v.size() == 3 && v[0].device && v[0].path.empty());
		for (std::size_t i = 1; i < v.size(); i++) {
			CHECK(v[i].st.state == MCC_PATH_QUARANTINED);
			CHECK(v[i].st.quarantines >= 1);
			CHECK(v[i].mark == 1 && v[i].mark_left_ms > 0);
			CHECK(v[i].st.window_bytes > 0);
		}
		std::string line = A.summary();
		std::printf("%s\n", line.c_str());
		CHECK(line.find("mlx5_0") != std::string::npos);
		CHECK(line.find("quarantined 2") != std::string::npos);
		CHECK(line.find("no_usable_path 2") != std::string::npos);
		// 4. The cooldowns end: the marks lapse, the group stays to probe.
		advance_us(1100000);
		a0.poll_pass(WC_SUCCESS, 0);
		CHECK(a0.verdict() == mm::Reroute::kStay);
		CHECK(!A.avoided(a0.peer));
		a0.queue.clear();
		a1.queue.clear();
		b0.queue.clear();
		CHECK(mm::batch_free(tasks[0].batch_id) == 0);
		CHECK(mm::batch_free(tasks[2].batch_id) == 0);
		mm::Pool off(mm::PoolDesc{});
		CHECK(off.list(v) == -ENODEV && v.empty());
		CHECK(off.reroute(nullptr, "x", 1) == mm::Reroute::kStay && !off.avoided("x", 1));
		CHECK(std::strcmp(mm::reroute_name(mm::Reroute::kLocal), "local") == 0);
	}
	unlink(ini.c_str());
}

// Site 9 and site 10 against TE's own rail pauses (RailState): on a
// rail-optimised fabric TE pauses the device's cross-rail path at the first
// try. When the same-rail path is then AVOIDed, the paused path is no
// alternative: avoided() must stay false (TE's selection would otherwise find
// no rail and fail the slice, "all peer rails are paused") and reroute() must
// not answer kPeer (the move would find nothing). The engine's answer comes
// from the callback (TE's rail check without avoided()); it is asked only
// about the other paths, never about the marked one.
static std::vector<std::string> te_asked;
static void test_reroute_te_paused(const char *moddir)
{
	std::string ini = use_ini(moddir, "[policy]\nmode = enforce\n");
	{
		mm::Pool A(Rail::desc("mlx5_0", 0));
		CHECK(A.enabled());
		Path a0(A, "10.0.0.7:12001@mlx5_0", 900), a1(A, "10.0.0.7:12001@mlx5_1", 920);
		std::vector<std::string> paused;
		auto te_usable = [&paused](const std::string &p) {
			te_asked.push_back(p);
			for (auto &x : paused)
				if (x == p)
					return false;
			return true;
		};
		CHECK(mm::batch_begin(tasks[0].batch_id) == 0);
		a0.deliver(4, &tasks[0]);
		a1.deliver(4, &tasks[0]);
		paused.push_back(a1.peer); // TE paused the cross-rail path (30 s)
		a0.fail();                 // the same-rail path fails: AVOIDed
		CHECK(a0.add_and_post(8, &tasks[0]) == 0);
		te_asked.clear();
		CHECK(!A.avoided(a0.peer, te_usable)); // TE's last rail: it keeps it
		CHECK(te_asked.size() == 1 && te_asked[0] == a1.peer);
		mm::Stats s0 = A.stats();
		mm::Reroute v = A.reroute(A.lane(1), a0.peer, a0.queue, Path::info, te_usable);
		CHECK(v != mm::Reroute::kPeer);
		CHECK(v == mm::Reroute::kNoUsablePath); // one local NIC: nowhere else
		for (auto &q : te_asked)
			CHECK(q != a0.peer); // never asked about the marked path itself
		mm::Stats s1 = A.stats();
		CHECK(s1.reroute_peer == s0.reroute_peer);
		CHECK(s1.avoided_hits == s0.avoided_hits);
		// The old calls cannot see TE's pause (documented as unsafe with it).
		CHECK(A.avoided(a0.peer));
		// TE's pause ends: the other path is an alternative again.
		paused.clear();
		CHECK(A.avoided(a0.peer, te_usable));
		CHECK(A.reroute(A.lane(1), a0.peer, a0.queue, Path::info, te_usable) ==
		      mm::Reroute::kPeer);
		// the raw-pointer form, as a C wiring would call it
		CHECK(A.avoided(a0.peer.data(), a0.peer.size(), nullptr, nullptr));
		a0.queue.clear();
		CHECK(mm::batch_free(tasks[0].batch_id) == 0);
		mm::Pool off(mm::PoolDesc{});
		CHECK(!off.avoided(a0.peer, te_usable));
	}
	unlink(ini.c_str());
}

// Sites 9 and 11 hand a group to another local NIC whose own selection
// picks the peer NIC (tryHandoffToAnotherLocalWorker(slice, true)). On a
// rail-optimised pair with both rails failing from each side (A's same-rail
// path AVOIDed and its cross-rail path paused by TE; B the mirror image) no
// NIC can take the other's traffic: a kLocal from each would send the
// slices back and forth at every post pass. The paths TE's rail check
// refused when asked are no target for a hand-off to that NIC.
static void test_reroute_no_ping_pong(const char *moddir)
{
	std::string ini = use_ini(moddir, "[policy]\nmode = enforce\n");
	{
		mm::Pool A(Rail::desc("mlx5_0", 0)), B(Rail::desc("mlx5_1", 1));
		Path a0(A, "10.0.0.9:12001@mlx5_0", 1000), a1(A, "10.0.0.9:12001@mlx5_1", 1020);
		Path b0(B, "10.0.0.9:12001@mlx5_0", 1040), b1(B, "10.0.0.9:12001@mlx5_1", 1060);
		std::vector<std::string> paused_a{a1.peer}, paused_b{b0.peer}; // cross-rail
		auto not_in = [](const std::vector<std::string> &paused) {
			return [&paused](const std::string &p) {
				return std::find(paused.begin(), paused.end(), p) == paused.end();
			};
		};
		auto usable_a = not_in(paused_a), usable_b = not_in(paused_b);
		CHECK(mm::batch_begin(tasks[0].batch_id) == 0);
		a0.deliver(4, &tasks[0]);
		a1.deliver(4, &tasks[0]);
		b0.deliver(4, &tasks[0]);
		b1.deliver(4, &tasks[0]);
		// B alone is fine: A's AVOIDed group goes to B, whose selection
		// takes b1 (its same-rail path)
		a0.fail();
		CHECK(a0.add_and_post(4, &tasks[0]) == 0);
		CHECK(A.reroute(A.lane(1), a0.peer, a0.queue, Path::info, usable_a) ==
		      mm::Reroute::kLocal);
		CHECK(A.hand_off_ok(a0.peer));
		a0.queue.clear();
		// B's same-rail path fails too: B has asked TE about b0 (paused), A
		// about a1 (paused); neither NIC is a target for the other
		b1.fail();
		CHECK(b1.add_and_post(4, &tasks[0]) == 0);
		mm::Reroute vb = B.reroute(B.lane(1), b1.peer, b1.queue, Path::info, usable_b);
		mm::Reroute va = A.reroute(A.lane(1), a0.peer, b1.queue, Path::info, usable_a);
		std::printf("no ping-pong: A %s, B %s\n", mm::reroute_name(va), mm::reroute_name(vb));
		CHECK(vb == mm::Reroute::kNoUsablePath);
		CHECK(va == mm::Reroute::kNoUsablePath);
		CHECK(!A.hand_off_ok(a0.peer) && !B.hand_off_ok(b1.peer));
		// TE resumes B's cross-rail path and B's check sees it: B takes A's
		// traffic again (over b0)
		paused_b.clear();
		CHECK(B.reroute(B.lane(1), b1.peer, b1.queue, Path::info, usable_b) == mm::Reroute::kPeer);
		CHECK(A.reroute(A.lane(1), a0.peer, b1.queue, Path::info, usable_a) ==
		      mm::Reroute::kLocal);
		b1.queue.clear();
		CHECK(mm::batch_free(tasks[0].batch_id) == 0);
	}
	unlink(ini.c_str());
}

// A path held near its minimum window (its completions trickle in: gray
// loss) DEFERs with little in flight: that group moves to another peer NIC;
// a path DEFERred at a large window (merely full) keeps its group.
static void test_reroute_held(const char *moddir)
{
	std::string ini = use_ini(moddir, "[policy]\nmode = enforce\n");
	{
		mm::Pool A(Rail::desc("mlx5_0", 0));
		Path a0(A, "10.0.0.5:12001@mlx5_0", 800), a1(A, "10.0.0.5:12001@mlx5_1", 820);
		CHECK(mm::batch_begin(tasks[0].batch_id) == 0);
		a1.deliver(4, &tasks[0]);
		// full, not held: a large window DEFERs and the group stays
		a0.add(400, &tasks[0]);
		CHECK(a0.post_pass() > 0);
		CHECK(a0.post_pass() == 0);
		CHECK(a0.verdict() == mm::Reroute::kStay);
		// held: one completion per 5 ms cuts the window to its floor
		std::uint32_t st = MCC_PATH_HEALTHY;
		mm::Reroute r = mm::Reroute::kStay;
		for (int ms = 0; ms < 600 && r == mm::Reroute::kStay; ms++) {
			a0.post_pass();
			a0.poll_pass(WC_SUCCESS, ms % 5 == 4 ? 1 : 0);
			advance_us(1000);
			r = a0.verdict();
			st = a0.state();
		}
		std::printf("held: verdict %s, route state %u\n", mm::reroute_name(r), st);
		CHECK(r == mm::Reroute::kPeer);
		CHECK(A.avoided(a0.peer));
		a0.queue.clear();
		while (!a0.inflight.empty()) {
			a0.poll_pass(WC_SUCCESS);
			advance_us(1000);
		}
		advance_us(10000); // the mark lapses
		a0.poll_pass(WC_SUCCESS, 0);
		CHECK(!A.avoided(a0.peer));
		CHECK(mm::batch_free(tasks[0].batch_id) == 0);
	}
	unlink(ini.c_str());
}

// The periodic summary line (Options::summary_ms) through the log callback.
static std::atomic<int> summary_lines{0};
static void count_log(void *, int level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char buf[1024];
	std::vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (level == MCC_LOG_INFO && std::strstr(buf, "mlx5_7: device ") == buf)
		summary_lines++;
}

static void test_summary_log(const char *moddir)
{
	std::string ini = write_ini("[policy]\nmode = enforce\n");
	mm::Options o = options_for(moddir, ini);
	o.log = count_log;
	o.summary_ms = 10;
	CHECK(mm::configure(o) == 0);
	{
		mm::Pool A(Rail::desc("mlx5_7", 0));
		Path p(A, "10.0.0.6:12001@mlx5_0", 900);
		CHECK(mm::batch_begin(tasks[0].batch_id) == 0);
		for (int i = 0; i < 10; i++)
			p.deliver(4, &tasks[0]); // 10 x 4+ ms
		std::printf("summary lines: %d\n", summary_lines.load());
		CHECK(summary_lines.load() >= 2 && summary_lines.load() <= 6);
		CHECK(mm::batch_free(tasks[0].batch_id) == 0);
	}
	unlink(ini.c_str());
}

int main()
{
	const char *moddir = std::getenv("MCC_TEST_MODULE_DIR");
	if (!moddir) {
		std::fprintf(stderr, "MCC_TEST_MODULE_DIR not set (run from make check): skipped\n");
		return 77;
	}
	test_enforce(moddir);
	test_threads(moddir);
	test_tent_roles(moddir);
	test_slow_path(moddir);
	test_reroute(moddir);
	test_reroute_te_paused(moddir);
	test_reroute_no_ping_pong(moddir);
	test_reroute_held(moddir);
	test_summary_log(moddir);
	test_off(moddir);
	test_inert(moddir);
	return check_cxx_result("test_mooncake");
}
