// SPDX-License-Identifier: MIT
// test_sdk_cxx.cpp - the C++ header (plugin_api/include/mcc.hpp): RAII engine,
// lane, route and permit over the enforce policy, every member noexcept,
// nothing leaked or left live when the objects go out of scope.
#include "mcc.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check_cxx.h"


static std::atomic<std::uint64_t> fake_ns{1000000000ull};
static std::uint64_t fake_clock(void *) { return fake_ns.load(); }
static void quiet_log(void *, int, const char *, ...) {}

static_assert(noexcept(mcc::Engine(std::declval<const mcc_engine_opts &>())), "noexcept");
static_assert(noexcept(std::declval<mcc::Permit &>().acquire(std::declval<const mcc::Route &>(), 1)),
              "noexcept");
static_assert(std::is_nothrow_destructible<mcc::Permit>::value, "noexcept destructor");
static_assert(!std::is_copy_constructible<mcc::Engine>::value, "move-only");
static_assert(std::is_nothrow_move_constructible<mcc::Lane>::value, "movable lane");
static_assert(!std::is_move_constructible<mcc::Permit>::value, "permit stays in place");

/* Run fn in a child; true when it died of abort() having printed `needle`
 * on stderr (the ordering rule of mcc.hpp is enforced, not undefined). */
template <class F> static bool aborts_with(const char *needle, F fn)
{
	int fds[2];
	if (pipe(fds) != 0)
		return false;
	std::fflush(stderr);
	pid_t pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		fn();
		_exit(0); /* not reached when the rule is enforced */
	}
	close(fds[1]);
	std::string err;
	char buf[512];
	ssize_t n;
	while ((n = read(fds[0], buf, sizeof(buf))) > 0)
		err.append(buf, (size_t)n);
	close(fds[0]);
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT && err.find(needle) != std::string::npos;
}

int main()
{
	const char *moddir = std::getenv("MCC_TEST_MODULE_DIR");
	if (!moddir) {
		std::fprintf(stderr, "MCC_TEST_MODULE_DIR not set (run from make check): skipped\n");
		return 77;
	}
	char ini[] = "/tmp/mcc-sdk-cxx-XXXXXX";
	int fd = mkstemp(ini);
	if (fd < 0)
		return 1;
	const char text[] = "[policy]\nmode = enforce\n";
	if (write(fd, text, sizeof(text) - 1) != (ssize_t)(sizeof(text) - 1))
		return 1;
	close(fd);

	mcc_loader_opts lo;
	std::memset(&lo, 0, sizeof(lo));
	lo.struct_size = sizeof(lo);
	lo.engine = "cxx";
	lo.ini_path = ini;
	lo.module_dir = moddir;
	lo.ignore_env = 1;
	lo.log = quiet_log;
	mcc_engine_opts o;
	std::memset(&o, 0, sizeof(o));
	o.struct_size = sizeof(o);
	o.tick = MCC_ENGINE_TICK_POLL;
	o.loader = &lo;
	o.now_ns = fake_clock;
	{
		mcc::Engine eng(o);
		CHECK(eng);
		CHECK(eng.error() == 0);
		CHECK(eng.mode() == MCC_MODE_ENFORCE);
		mcc_device_desc_v1 dd = {sizeof(dd), 0, "mlx5_0", 1, 0, 0, 0};
		mcc_device *dev = nullptr;
		CHECK(eng.ops()->device_open(eng.ctx(), &dd, &dev) == 0);
		{
			mcc::Lane lane(eng, MCC_LANE_POST_POLL);
			CHECK(lane);
			mcc::Lane moved(std::move(lane));
			CHECK(!lane && moved);
			const std::string key = "10.0.0.2:12001@mlx5_1";
			mcc::Route r;
			CHECK(mcc::Route::open(eng, dev, key.data(), key.size(), 1, nullptr, r) ==
			      MCC_ENGINE_ROUTE_NEW);
			CHECK(r.generation() == 1 && r.id() == 1);
			mcc::Route again;
			CHECK(mcc::Route::open(eng, dev, key.data(), key.size(), 2, nullptr, again) ==
			      MCC_ENGINE_ROUTE_RENEWED);
			CHECK(r.generation() == 2);
			std::uint64_t retry = 0;
			CHECK(r.avoided(eng, &retry) == 0 && retry > 0); /* healthy: nothing to do */
			{
				mcc::Permit p(eng, moved);
				CHECK(p.acquire(r, 4096) == MCC_ADMIT);
				CHECK(p.live() && p.raw().generation == 2);
				mcc_completion_v1 wc;
				std::memset(&wc, 0, sizeof(wc));
				wc.struct_size = sizeof(wc);
				wc.generation = 2;
				wc.bytes = 1024;
				p.complete(moved, wc);
				CHECK(p.live() && p.raw().bytes == 3072);
			} // the destructor releases the 3072 live bytes
			{
				mcc::Permit p(eng, moved);
				CHECK(p.acquire(r, 4096) == MCC_ADMIT); // the room came back
				CHECK(p.release(MCC_REL_NOT_POSTED) == 0);
				CHECK(!p.live());
				CHECK(p.release(MCC_REL_NOT_POSTED) == 0); // nothing live: no-op
				mcc::Route none;
				CHECK(p.acquire(none, 1) == -EINVAL);
				CHECK(p.acquire_qos(none, 1, MCC_QOS_LOW) == -EINVAL);
				CHECK(p.acquire_qos(r, 4096, MCC_QOS_LOW) == MCC_ADMIT);
				CHECK(p.release(MCC_REL_NOT_POSTED) == 0);
			}
			mcc_domain_stats_v1 st;
			std::memset(&st, 0, sizeof(st));
			st.struct_size = sizeof(st);
			CHECK(eng.ops()->domain_stats(eng.ctx(), MCC_DOMAIN_ROUTE, r.cc(), &st) == 0);
			CHECK(st.inflight_bytes == 0);
			CHECK(st.generation == 2);
			mcc::Route look;
			CHECK(mcc::Route::lookup(eng, key.data(), key.size(), look) == 0 && look.get() == r.get());
			CHECK(mcc_engine_route_close(eng.get(), key.data(), key.size()) == 0);
			CHECK(mcc::Route::lookup(eng, key.data(), key.size(), look) == -ENOENT && !look);
			CHECK(moved.reset() == 0);
			CHECK(moved.reset() == 0); // already closed: nothing to do
		} // routes put (the last put closes the policy route), lanes closed
		CHECK(eng.tick_if_due(eng.now()));
		CHECK(!eng.tick_if_due(eng.now()));
		std::uint32_t seq = eng.room_seq();
		eng.room_notify();
		CHECK(eng.room_wait(seq, 1000000000ull) == 0);
		CHECK(eng.batch_begin(5) == 0 && eng.batch_free(5) == 0 && eng.batch_free(5) == -ENOENT);
		eng.ops()->device_close(eng.ctx(), dev);
		mcc::Engine other(std::move(eng));
		CHECK(other && !eng);
	}
	/* the ordering rule: a Permit outliving its Lane, a Route outliving
	 * its Engine, a Lane moved under a Permit: a message and abort() */
	CHECK(aborts_with("mcc: fatal: mcc::Lane closed while 1 object made with it", [&] {
		mcc::Engine eng(o);
		mcc::Lane *lane = new mcc::Lane(eng, MCC_LANE_POST_POLL);
		mcc::Permit p(eng, *lane);
		delete lane; /* before p */
	}));
	CHECK(aborts_with("mcc: fatal: mcc::Lane moved while 1 object", [&] {
		mcc::Engine eng(o);
		mcc::Lane lane(eng, MCC_LANE_POST_POLL);
		mcc::Permit p(eng, lane);
		mcc::Lane other(std::move(lane));
	}));
	CHECK(aborts_with("mcc: fatal: mcc::Engine closed while 1 object made with it", [&] {
		mcc::Engine *eng = new mcc::Engine(o);
		mcc_device_desc_v1 dd = {sizeof(dd), 0, "mlx5_0", 1, 0, 0, 0};
		mcc_device *dev = nullptr;
		eng->ops()->device_open(eng->ctx(), &dd, &dev);
		mcc::Route r;
		mcc::Route::open(*eng, dev, "k", 1, 1, nullptr, r);
		delete eng; /* before r */
	}));
	{ /* in order: nothing to say */
		mcc::Engine eng(o);
		mcc::Lane lane(eng, MCC_LANE_POST_POLL);
		{
			mcc::Permit p(eng, lane);
		}
		CHECK(lane.reset() == 0);
	}

	mcc::Engine none;
	CHECK(!none && none.error() == -EINVAL);
	mcc::Lane nolane(none, MCC_LANE_POST);
	CHECK(!nolane && nolane.error() == -EINVAL);
	unlink(ini);
	return check_cxx_result("test_sdk_cxx");
}
