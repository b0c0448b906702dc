/* SPDX-License-Identifier: MIT */
/*
 * fuzz_events.c - event-sequence fuzzer of the policy modules, through the
 * ABI only: the built aimd (enforce) and observe modules are dlopen()ed once
 * (RTLD_NOW | RTLD_LOCAL; never closed, so sanitizer coverage stays mapped)
 * and every input is a fresh init .. fini of one of them driven by an
 * arbitrary interleaving of lane/device/route open, try_acquire, partial
 * release, completion with any status and generation, async events,
 * signals, ticks of an injected clock, route rebind/close, task queries and
 * batch_free.
 *
 * The harness keeps shadow accounting (live bytes of every permit, summed
 * per domain) and checks after every step:
 *   - try_acquire returns a decision or a negative errno; DEFER/AVOID and
 *     errors reserve nothing; observe never returns DEFER/AVOID;
 *   - enforce admits only within max(window, one slice): the shadow bytes
 *     already live in the route (device) were 0, or shadow + bytes <= window
 *     (the window read just before; windows change only in slow-path calls);
 *   - a permit's bytes field equals its shadow live bytes; release of more
 *     than is live returns -EALREADY (double release), otherwise 0;
 *   - every domain's inflight_bytes is >= the shadow bytes live in it (never
 *     "negative", i.e. never below what is provably reserved) and at most
 *     shadow + the lanes' cached credit (MCC_FUZZ_CREDIT_SLACK per lane);
 *   - at the end, after settling every live permit and closing every lane,
 *     every domain reports inflight_bytes == 0;
 *   - task_query returns a legal enum mcc_task_state and a consistent
 *     detail; path/state/reason/scope fields are in range;
 *   - the hot-path callbacks read no clock and log nothing (the host table's
 *     now_ns and log abort when called from inside one);
 *   - vendor_err is diagnostic only: every input runs twice, the second time
 *     with each completion's vendor_err XOR-ed, and both runs must make the
 *     same decisions, answer the same task states and end with the same
 *     domain state (a digest of both).
 * Each run starts from the same injected clock, so an artifact replays alone.
 * MCC_FUZZ_TRACE=1 prints every step.
 * Module directory: $MCC_FUZZ_MODULE_DIR, else $MCC_TEST_MODULE_DIR.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "mcc_policy_v1.h"

/* Byte credit a lane may hold cached in one domain beyond its live permits:
 * modules/core caches at most one credit chunk (MCC_CHUNK_MAX, 1 MiB) per
 * lane and domain, counted in the domain's inflight_bytes (core.h, domain.c
 * "Credit"). The admission bound itself needs no slack: every increase of
 * the shared counter is a compare-and-swap against the window. */
#ifndef MCC_FUZZ_CREDIT_SLACK
#define MCC_FUZZ_CREDIT_SLACK (1ull << 20)
#endif

#define FZ_LANES 4
#define FZ_DEVS 3
#define FZ_ROUTES 6
#define FZ_PERMITS 40
#define FZ_MAX_STEPS 2048

enum { FZ_MOD_AIMD = 0, FZ_MOD_OBSERVE = 1, FZ_MOD_COUNT };

static const char *const fz_mod_names[FZ_MOD_COUNT] = { "aimd", "observe" };
static const struct mcc_policy_v1 *fz_mods[FZ_MOD_COUNT];

struct fz_dev {
	mcc_device *h;
	int open;
};

struct fz_route {
	mcc_route *h;
	int open;
	int dev;      /* device the route is bound to now */
	uint32_t gen; /* host endpoint generation */
	uint64_t route_id;
};

struct fz_permit {
	struct mcc_permit_v1 p;
	int used;       /* ever acquired (eligible for double-release checks) */
	mcc_route *rh;  /* route handle at admission */
	mcc_device *dh; /* device handle at admission */
	uint64_t live;  /* shadow: reserved and not yet settled */
};

struct fz_state {
	const struct mcc_policy_v1 *P;
	void *ctx;
	uint32_t mode;
	struct mcc_config_v1 cfg;
	struct mcc_init_out_v1 out;
	mcc_lane *lanes[FZ_LANES];
	unsigned nlanes;
	struct fz_dev devs[FZ_DEVS];
	struct fz_route routes[FZ_ROUTES];
	struct fz_permit permits[FZ_PERMITS];
	uint64_t admitted_total;
};

static struct fz_state S;
static uint64_t fz_now = 1000000000ull;
static int fz_in_hot_path;
static int fz_tracing; /* MCC_FUZZ_TRACE: print every step */
/* Differential pass: every completion's vendor_err is XOR-ed with this; the
 * run must end in the same observable state (vendor_err is diagnostic). */
static uint32_t fz_vendor_xor;
static uint64_t fz_digest; /* FNV-1a over decisions and the final state */

static void fz_mix(uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		fz_digest ^= (v >> (8 * i)) & 0xff;
		fz_digest *= 0x100000001b3ull;
	}
}
static int fz_dump_fd = -1;
static const char *fz_hot_name;

/* ---------------------------------------------------------------- host table */

static uint64_t fz_now_ns(void *arg)
{
	(void)arg;
	MCC_FUZZ_CHECK(!fz_in_hot_path, "clock read inside hot-path callback %s", fz_hot_name);
	return fz_now;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void fz_log(void *arg, int level, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	(void)arg;
	MCC_FUZZ_CHECK(!fz_in_hot_path, "log inside hot-path callback %s", fz_hot_name);
	MCC_FUZZ_CHECK(level >= MCC_LOG_ERROR && level <= MCC_LOG_DEBUG, "log level %d", level);
	MCC_FUZZ_CHECK(fmt != NULL, "NULL log format");
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap); /* exercises the arguments under ASan */
	va_end(ap);
	if (getenv("MCC_FUZZ_VERBOSE"))
		fprintf(stderr, "[module %d] %s\n", level, buf);
}

static const struct mcc_host_v1 fz_host = {
	.abi_version = MCC_POLICY_ABI_V1,
	.struct_size = sizeof(struct mcc_host_v1),
	.engine = "fuzz",
	.caps = MCC_HOST_CAP_ASYNC_EVENTS | MCC_HOST_CAP_CQ_IDENTITY |
	        MCC_HOST_CAP_POLLER_PROGRESS | MCC_HOST_CAP_DEVICE_TELEMETRY |
	        MCC_HOST_CAP_RDMA_CM | MCC_HOST_CAP_COMPLETION_TS,
	.now_ns = fz_now_ns,
	.clock_arg = NULL,
	.log = fz_log,
	.log_arg = NULL,
	.max_lanes = FZ_LANES,
};

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static void fz_trace(const char *fmt, ...)
{
	va_list ap;

	if (!fz_tracing)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#define HOT_BEGIN(name) (fz_in_hot_path = 1, fz_hot_name = (name))
#define HOT_END() (fz_in_hot_path = 0)

static const char *fz_module_get(const struct mcc_config_v1 *cfg, const char *key)
{
	(void)cfg;
	MCC_FUZZ_CHECK(key != NULL, "module_get(NULL)");
	return NULL;
}

/* --------------------------------------------------------------- loading */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("MCC_FUZZ_MODULE_DIR");
	char path[4096];

	(void)argc;
	(void)argv;
	fz_tracing = getenv("MCC_FUZZ_TRACE") != NULL;
	if (!dir || !*dir)
		dir = getenv("MCC_TEST_MODULE_DIR");
	if (!dir || !*dir)
		dir = "modules/.libs";
	for (int i = 0; i < FZ_MOD_COUNT; i++) {
		void *h;

		snprintf(path, sizeof(path), "%s/mcc-policy-%s.so", dir, fz_mod_names[i]);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "fuzz_events: cannot load %s: %s\n", path, dlerror());
			continue;
		}
		fz_mods[i] = dlsym(h, MCC_POLICY_V1_SYMBOL);
		if (!fz_mods[i])
			fprintf(stderr, "fuzz_events: %s has no %s\n", path, MCC_POLICY_V1_SYMBOL);
		/* Deliberately never dlclose()d: sanitizer coverage counters of
		 * the module must stay mapped for the whole run. */
	}
	fz_dump_fd = memfd_create("mcc-fuzz-dump", MFD_CLOEXEC);
	if (!fz_mods[FZ_MOD_AIMD]) {
		fprintf(stderr, "fuzz_events: the aimd module is required "
		                "(set MCC_FUZZ_MODULE_DIR or MCC_TEST_MODULE_DIR)\n");
		return 1;
	}
	return 0;
}

/* -------------------------------------------------------------- checking */

static int fz_stats(int kind, const void *dom, struct mcc_domain_stats_v1 *st)
{
	memset(st, 0xa5, sizeof(*st));
	st->struct_size = sizeof(*st);
	if (!S.P->domain_stats)
		return -EOPNOTSUPP;
	return S.P->domain_stats(S.ctx, kind, dom, st);
}

/* Shadow bytes live in a domain. By handle: a route_open of an open
 * (device, route_id) returns the same, reference-counted handle, so two
 * harness slots may alias one route. */
/* The live bytes of the shadow's permits on route slot x (dev = 0) or
 * device slot x (dev = 1). */
static uint64_t fz_shadow(int dev, int x)
{
	const void *h = dev ? (const void *)S.devs[x].h : (const void *)S.routes[x].h;
	uint64_t sum = 0;

	for (int i = 0; i < FZ_PERMITS; i++) {
		const void *ph = dev ? (const void *)S.permits[i].dh : (const void *)S.permits[i].rh;
		if (S.permits[i].live && ph == h)
			sum += S.permits[i].live;
	}
	return sum;
}

static uint64_t fz_shadow_route(int r)
{
	return fz_shadow(0, r);
}

static uint64_t fz_shadow_dev(int d)
{
	return fz_shadow(1, d);
}

/* Another open slot holding the same route handle as slot r. */
static int fz_route_aliased(int r)
{
	for (int k = 0; k < FZ_ROUTES; k++)
		if (k != r && S.routes[k].open && S.routes[k].h == S.routes[r].h)
			return 1;
	return 0;
}

static void fz_check_domain(int kind, const void *dom, uint64_t shadow, const char *what, int idx)
{
	struct mcc_domain_stats_v1 st;
	int rc = fz_stats(kind, dom, &st);

	if (rc == -EOPNOTSUPP)
		return;
	MCC_FUZZ_CHECK(rc == 0, "domain_stats(%s %d) = %d", what, idx, rc);
	MCC_FUZZ_CHECK(st.state <= MCC_PATH_PROBING, "%s %d: state %u", what, idx, st.state);
	MCC_FUZZ_CHECK(st.inflight_bytes <= S.admitted_total + (uint64_t)MCC_FUZZ_CREDIT_SLACK * FZ_LANES,
	               "%s %d: inflight %llu exceeds everything ever admitted (%llu): negative?",
	               what, idx, (unsigned long long)st.inflight_bytes,
	               (unsigned long long)S.admitted_total);
	MCC_FUZZ_CHECK(st.inflight_bytes >= shadow,
	               "%s %d: inflight %llu < live permit bytes %llu", what, idx,
	               (unsigned long long)st.inflight_bytes, (unsigned long long)shadow);
	MCC_FUZZ_CHECK(st.inflight_bytes - shadow <= (uint64_t)MCC_FUZZ_CREDIT_SLACK * FZ_LANES,
	               "%s %d: inflight %llu > live permit bytes %llu + credit slack", what, idx,
	               (unsigned long long)st.inflight_bytes, (unsigned long long)shadow);
	MCC_FUZZ_CHECK(st.window_bytes <= S.cfg.max_window_bytes,
	               "%s %d: window %llu above max_window_bytes %llu", what, idx,
	               (unsigned long long)st.window_bytes,
	               (unsigned long long)S.cfg.max_window_bytes);
}

static void fz_check_all(void)
{
	for (int d = 0; d < FZ_DEVS; d++)
		if (S.devs[d].open)
			fz_check_domain(MCC_DOMAIN_DEVICE, S.devs[d].h, fz_shadow_dev(d), "device", d);
	for (int r = 0; r < FZ_ROUTES; r++)
		if (S.routes[r].open)
			fz_check_domain(MCC_DOMAIN_ROUTE, S.routes[r].h, fz_shadow_route(r), "route", r);
	for (int i = 0; i < FZ_PERMITS; i++) {
		struct fz_permit *fp = &S.permits[i];

		if (!fp->used)
			continue;
		MCC_FUZZ_CHECK(fp->p.bytes == fp->live, "permit %d: bytes %llu, shadow live %llu", i,
		               (unsigned long long)fp->p.bytes, (unsigned long long)fp->live);
		MCC_FUZZ_CHECK(!fp->live == !(fp->p.flags & MCC_PERMIT_F_LIVE),
		               "permit %d: LIVE flag %#x with %llu live bytes", i, fp->p.flags,
		               (unsigned long long)fp->live);
	}
}

/* Window of an open domain (UINT64_MAX when stats are not available). */
static uint64_t fz_window(int kind, const void *dom)
{
	struct mcc_domain_stats_v1 st;

	if (fz_stats(kind, dom, &st) != 0)
		return UINT64_MAX;
	return st.window_bytes;
}

/* ----------------------------------------------------------------- steps */

static mcc_lane *fz_lane(struct mcc_fuzz_in *in)
{
	return S.lanes[mcc_fuzz_u8(in) % S.nlanes];
}

/* An open route (dev = 0) or device (dev = 1) slot chosen by the input:
 * the first open one from an input byte on, or -1. */
static int fz_pick(struct mcc_fuzz_in *in, int dev)
{
	const int n = dev ? FZ_DEVS : FZ_ROUTES;
	int start = mcc_fuzz_u8(in) % n;

	for (int k = 0; k < n; k++) {
		int x = (start + k) % n;
		if (dev ? S.devs[x].open : S.routes[x].open)
			return x;
	}
	return -1;
}

static int fz_pick_route(struct mcc_fuzz_in *in)
{
	return fz_pick(in, 0);
}

static int fz_pick_dev(struct mcc_fuzz_in *in)
{
	return fz_pick(in, 1);
}

/* A used permit chosen by the input (live or settled), or -1. */
static int fz_pick_permit(struct mcc_fuzz_in *in, int want_live)
{
	int start = mcc_fuzz_u8(in) % FZ_PERMITS;

	for (int k = 0; k < FZ_PERMITS; k++) {
		int i = (start + k) % FZ_PERMITS;
		if (S.permits[i].used && (!want_live || S.permits[i].live))
			return i;
	}
	return -1;
}

/* A 64-bit value shifted right by an input-chosen amount (reads in order:
 * C leaves the order of two reads in one expression unspecified). */
static uint64_t fz_shifted(struct mcc_fuzz_in *in)
{
	uint64_t v = mcc_fuzz_u64(in);
	unsigned sh = mcc_fuzz_u8(in) % 64;

	return v >> sh;
}

static uint64_t fz_bytes(struct mcc_fuzz_in *in)
{
	static const uint64_t sizes[] = { 1, 4096, 65536, 131072, 1 << 20, 4 << 20, 16 << 20,
	                                  (16 << 20) + 1, 64 << 20 };
	uint8_t sel = mcc_fuzz_u8(in);

	if (sel < 200)
		return sizes[sel % (sizeof(sizes) / sizeof(sizes[0]))];
	if (sel < 250)
		return 1 + mcc_fuzz_u32(in);
	return fz_shifted(in); /* may be 0 or huge */
}

static uint32_t fz_generation(struct mcc_fuzz_in *in, uint32_t cur)
{
	switch (mcc_fuzz_u8(in) % 6) {
	case 0:
	case 1:
	case 2:
		return cur;
	case 3:
		return cur + 1; /* a new endpoint */
	case 4:
		return cur ? cur - 1 : 0; /* stale */
	default:
		return mcc_fuzz_u32(in);
	}
}

static struct mcc_task_ref_v1 fz_task(struct mcc_fuzz_in *in)
{
	struct mcc_task_ref_v1 t = { 0, 0, 0, 0 };
	uint8_t b = mcc_fuzz_u8(in);

	t.batch_id = b & 3;   /* 0: no batch */
	t.task_id = (b >> 2) & 7;
	t.attempt = b >> 5;
	return t;
}

static void fz_device_open(struct mcc_fuzz_in *in)
{
	int d = mcc_fuzz_u8(in) % FZ_DEVS;
	struct mcc_device_desc_v1 desc;
	char name[16];
	int rc;

	if (S.devs[d].open || !S.P->device_open)
		return;
	snprintf(name, sizeof(name), "mlx5_%d", d);
	memset(&desc, 0, sizeof(desc));
	desc.struct_size = sizeof(desc);
	desc.device_id = (uint32_t)d;
	desc.name = name;
	desc.num_ports = 1 + mcc_fuzz_u8(in) % 2;
	desc.link_rate_bps = (mcc_fuzz_u8(in) & 1) ? 400000000000ull : 0;
	rc = S.P->device_open(S.ctx, &desc, &S.devs[d].h);
	fz_trace("device_open(%d) -> %d", d, rc);
	memset(name, 'X', sizeof(name) - 1); /* the module must have copied it */
	MCC_FUZZ_CHECK(rc <= 0, "device_open = %d", rc);
	if (rc == 0) {
		MCC_FUZZ_CHECK(S.devs[d].h != NULL, "device_open returned 0 and NULL");
		S.devs[d].open = 1;
	}
}

static void fz_route_open(struct mcc_fuzz_in *in)
{
	int r = mcc_fuzz_u8(in) % FZ_ROUTES;
	int d = fz_pick_dev(in);
	struct mcc_route_desc_v1 desc;
	char peer[64];
	int rc;

	if (S.routes[r].open || d < 0 || !S.P->route_open)
		return;
	memset(&desc, 0, sizeof(desc));
	desc.struct_size = sizeof(desc);
	desc.port_num = 1;
	desc.cq_id = mcc_fuzz_u8(in) % 3;
	desc.generation = mcc_fuzz_u8(in) % 3;
	desc.route_id = mcc_fuzz_u8(in) % 4; /* small: collisions with open routes happen */
	snprintf(peer, sizeof(peer), "10.0.0.%u:12345@mlx5_%u", (unsigned)desc.route_id,
	         (unsigned)(desc.route_id % 2));
	desc.peer_path = peer;
	desc.remote_id = desc.route_id;
	rc = S.P->route_open(S.ctx, S.devs[d].h, &desc, &S.routes[r].h);
	fz_trace("route_open(slot %d, dev %d, id %llu, gen %u) -> %d (%p)", r, d,
	         (unsigned long long)desc.route_id, desc.generation, rc, (void *)S.routes[r].h);
	memset(peer, 'Y', sizeof(peer) - 1);
	MCC_FUZZ_CHECK(rc <= 0, "route_open = %d", rc);
	if (rc == 0) {
		MCC_FUZZ_CHECK(S.routes[r].h != NULL, "route_open returned 0 and NULL");
		/* A handle already open must be the same (device, route_id): the
		 * documented reference-counted re-open. */
		for (int k = 0; k < FZ_ROUTES; k++)
			if (k != r && S.routes[k].open && S.routes[k].h == S.routes[r].h)
				MCC_FUZZ_CHECK(S.routes[k].route_id == desc.route_id &&
				                   S.devs[S.routes[k].dev].h == S.devs[d].h,
				               "route_open returned the handle of another route");
		S.routes[r].open = 1;
		S.routes[r].dev = d;
		S.routes[r].gen = desc.generation;
		S.routes[r].route_id = desc.route_id;
	}
}

static void fz_try_acquire(struct mcc_fuzz_in *in)
{
	int r = fz_pick_route(in);
	int slot = mcc_fuzz_u8(in) % FZ_PERMITS;
	mcc_lane *lane = fz_lane(in);
	uint64_t bytes = fz_bytes(in);
	struct mcc_task_ref_v1 task = fz_task(in);
	uint64_t wr, wd, sr, sd;
	struct fz_permit *fp;
	uint32_t gen;
	int d, rc;

	if (r < 0)
		return;
	gen = fz_generation(in, S.routes[r].gen);
	/* A free slot: never a live permit (the host never re-acquires one). */
	for (int k = 0; k < FZ_PERMITS && S.permits[slot].live; k++)
		slot = (slot + 1) % FZ_PERMITS;
	fp = &S.permits[slot];
	if (fp->live)
		return;
	d = S.routes[r].dev;
	wr = fz_window(MCC_DOMAIN_ROUTE, S.routes[r].h);
	wd = fz_window(MCC_DOMAIN_DEVICE, S.devs[d].h);
	sr = fz_shadow_route(r);
	sd = fz_shadow_dev(d);

	{
		struct mcc_permit_v1 init = MCC_PERMIT_INIT;
		fp->p = init;
	}
	HOT_BEGIN("try_acquire");
	rc = S.P->try_acquire(lane, S.routes[r].h, bytes, gen, (mcc_fuzz_u8(in) & 7) ? &task : NULL,
	                      &fp->p);
	HOT_END();
	fp->used = 1;
	fz_mix((uint64_t)(int64_t)rc);
	fz_mix(fp->p.reason);
	fz_trace("try_acquire(lane %p, route %d, dev %d, %llu bytes, gen %u) -> %d [permit %d; "
	         "shadow r %llu d %llu, window r %llu d %llu]",
	         (void *)lane, r, d, (unsigned long long)bytes, gen, rc, slot,
	         (unsigned long long)sr, (unsigned long long)sd, (unsigned long long)wr,
	         (unsigned long long)wd);
	MCC_FUZZ_CHECK(rc < 0 || rc == MCC_ADMIT || rc == MCC_DEFER || rc == MCC_AVOID,
	               "try_acquire = %d", rc);
	if (bytes == 0)
		MCC_FUZZ_CHECK(rc < 0, "try_acquire admitted/refused 0 bytes (rc %d), want -EINVAL",
		               rc);
	if (rc != MCC_ADMIT) {
		MCC_FUZZ_CHECK(!(fp->p.flags & MCC_PERMIT_F_LIVE) && fp->p.bytes == 0,
		               "try_acquire %d left the permit live (%llu bytes)", rc,
		               (unsigned long long)fp->p.bytes);
		MCC_FUZZ_CHECK(!(rc == MCC_DEFER || rc == MCC_AVOID) || S.mode == MCC_MODE_ENFORCE,
		               "mode %u returned %s", S.mode, rc == MCC_DEFER ? "DEFER" : "AVOID");
		if (rc == MCC_DEFER || rc == MCC_AVOID)
			MCC_FUZZ_CHECK(fp->p.reason > MCC_REASON_NONE && fp->p.reason < MCC_REASON_COUNT_,
			               "refusal without a reason (%u)", fp->p.reason);
		fp->live = 0;
		return;
	}
	MCC_FUZZ_CHECK(fp->p.flags & MCC_PERMIT_F_LIVE, "ADMIT without MCC_PERMIT_F_LIVE");
	MCC_FUZZ_CHECK(fp->p.bytes == bytes, "ADMIT reserved %llu of %llu bytes",
	               (unsigned long long)fp->p.bytes, (unsigned long long)bytes);
	MCC_FUZZ_CHECK(fp->p.route == S.routes[r].h, "permit route is not the admitted route");
	MCC_FUZZ_CHECK(fp->p.device == S.devs[d].h, "permit device is not the route's device");
	if (S.mode == MCC_MODE_ENFORCE && !(fp->p.flags & MCC_PERMIT_F_OBSERVED)) {
		/* Adaptive bound: max(window, one slice). */
		MCC_FUZZ_CHECK(sr == 0 || sr + bytes <= wr,
		               "route %d admitted %llu with %llu live over window %llu", r,
		               (unsigned long long)bytes, (unsigned long long)sr,
		               (unsigned long long)wr);
		MCC_FUZZ_CHECK(sd == 0 || sd + bytes <= wd,
		               "device %d admitted %llu with %llu live over window %llu", d,
		               (unsigned long long)bytes, (unsigned long long)sd,
		               (unsigned long long)wd);
	}
	fp->live = bytes;
	fp->rh = S.routes[r].h;
	fp->dh = S.devs[d].h;
	S.admitted_total += bytes;
}

static uint64_t fz_part(struct mcc_fuzz_in *in, uint64_t live)
{
	switch (mcc_fuzz_u8(in) % 6) {
	case 0:
	case 1:
		return live;
	case 2:
		return live / 2;
	case 3:
		return live ? live - 1 : 0;
	case 4:
		return live + 1; /* more than live: a double settle */
	default:
		return fz_shifted(in);
	}
}

static void fz_release(struct mcc_fuzz_in *in)
{
	int want_live = mcc_fuzz_u8(in) & 1;
	int i = fz_pick_permit(in, want_live);
	struct fz_permit *fp;
	uint64_t bytes;
	uint32_t reason;
	int rc;

	if (i < 0)
		return;
	fp = &S.permits[i];
	bytes = fz_part(in, fp->live);
	reason = mcc_fuzz_u8(in);
	reason = reason < 200 ? reason % 5 : reason;
	HOT_BEGIN("release");
	rc = S.P->release(fz_lane(in), &fp->p, bytes, reason);
	HOT_END();
	fz_trace("release(permit %d, %llu of %llu live, reason %u) -> %d", i,
	         (unsigned long long)bytes, (unsigned long long)fp->live, reason, rc);
	if (bytes > fp->live) {
		MCC_FUZZ_CHECK(rc == -EALREADY, "release(%llu) of a permit with %llu live = %d",
		               (unsigned long long)bytes, (unsigned long long)fp->live, rc);
		fp->live = 0;
	} else if (bytes == 0) {
		MCC_FUZZ_CHECK(rc == 0 || rc == -EINVAL, "release(0) = %d", rc);
	} else {
		MCC_FUZZ_CHECK(rc == 0, "release(%llu) of %llu live = %d", (unsigned long long)bytes,
		               (unsigned long long)fp->live, rc);
		fp->live -= bytes;
	}
}

static int32_t fz_wc_status(struct mcc_fuzz_in *in)
{
	uint8_t b = mcc_fuzz_u8(in);

	if (b < 96)
		return 0; /* IBV_WC_SUCCESS dominates real traffic */
	if (b < 240)
		return b % 24; /* the known statuses 0..23 */
	return (int32_t)mcc_fuzz_u32(in); /* unknown, negative, huge */
}

static void fz_completion(struct mcc_fuzz_in *in)
{
	int want_live = mcc_fuzz_u8(in) % 8 != 0;
	int i = fz_pick_permit(in, want_live);
	struct mcc_completion_v1 wc;
	struct fz_permit *fp;
	uint64_t settle;

	if (i < 0)
		return;
	fp = &S.permits[i];
	memset(&wc, 0, sizeof(wc));
	wc.struct_size = sizeof(wc);
	wc.wc_status = fz_wc_status(in);
	wc.vendor_err = ((mcc_fuzz_u8(in) & 1) ? mcc_fuzz_u32(in) : 0) ^ fz_vendor_xor;
	wc.generation = fz_generation(in, fp->p.generation);
	wc.bytes = fz_part(in, fp->live);
	if (mcc_fuzz_u8(in) & 1) {
		wc.post_ns = fz_now - (mcc_fuzz_u16(in) * 1000ull);
		wc.complete_ns = fz_now;
	}
	wc.qp_num = mcc_fuzz_u8(in);
	wc.opcode = mcc_fuzz_u8(in) % 4;
	HOT_BEGIN("on_completion");
	S.P->on_completion(fz_lane(in), &fp->p, &wc);
	HOT_END();
	fz_trace("on_completion(permit %d, status %d, vendor %u, gen %u (permit %u), %llu of %llu "
	         "live)",
	         i, wc.wc_status, wc.vendor_err, wc.generation, fp->p.generation,
	         (unsigned long long)wc.bytes, (unsigned long long)fp->live);
	if (wc.bytes == 0 && fp->live) {
		/* The ABI says a WC settles wc->bytes (null: nothing); modules/core
		 * reads 0 as "the whole permit". Both keep the accounting exact;
		 * follow what the module did, and nothing else. */
		MCC_FUZZ_CHECK(fp->p.bytes == fp->live || fp->p.bytes == 0,
		               "0-byte WC settled %llu of %llu",
		               (unsigned long long)(fp->live - fp->p.bytes),
		               (unsigned long long)fp->live);
		fp->live = fp->p.bytes;
		return;
	}
	settle = wc.bytes < fp->live ? wc.bytes : fp->live;
	fp->live -= settle;
}

static void fz_async(struct mcc_fuzz_in *in)
{
	int d = fz_pick_dev(in);
	struct mcc_async_event_v1 ev;
	uint8_t b;

	if (d < 0 || !S.P->on_async_event)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.struct_size = sizeof(ev);
	b = mcc_fuzz_u8(in);
	ev.event_type = b < 230 ? b % 20 : (int32_t)mcc_fuzz_u32(in);
	ev.device = S.devs[d].h;
	if (mcc_fuzz_u8(in) & 1) {
		int r = fz_pick_route(in);
		ev.route = r >= 0 ? S.routes[r].h : NULL;
		ev.generation = r >= 0 ? fz_generation(in, S.routes[r].gen) : 0;
	}
	ev.port_num = mcc_fuzz_u8(in) % 3;
	ev.cq_id = mcc_fuzz_u8(in) % 3;
	ev.qp_num = mcc_fuzz_u8(in);
	ev.now_ns = fz_now;
	fz_trace("on_async_event(type %d, dev %d, route %p, gen %u)", ev.event_type, d,
	         (void *)ev.route, ev.generation);
	S.P->on_async_event(S.ctx, &ev);
}

static void fz_signal(struct mcc_fuzz_in *in)
{
	struct mcc_signal_v1 sig;
	int r = -1;
	uint8_t b;

	if (!S.P->on_signal)
		return;
	memset(&sig, 0, sizeof(sig));
	sig.struct_size = sizeof(sig);
	sig.kind = 1 + mcc_fuzz_u8(in) % (MCC_SIG_KIND_COUNT_ - 1);
	/* The host delivers only subscribed kinds. */
	if (!(S.out.signal_mask & (1ull << sig.kind)))
		return;
	b = mcc_fuzz_u8(in);
	if (b & 1) {
		r = fz_pick_route(in);
		if (r >= 0) {
			sig.route = S.routes[r].h;
			sig.device = S.devs[S.routes[r].dev].h;
		}
	} else if (b & 2) {
		int d = fz_pick_dev(in);
		sig.device = d >= 0 ? S.devs[d].h : NULL;
	}
	sig.task = fz_task(in);
	sig.generation = fz_generation(in, r >= 0 ? S.routes[r].gen : 0);
	if (sig.kind == MCC_SIG_ENDPOINT_REBUILT && r >= 0) {
		sig.generation = S.routes[r].gen + 1;
		S.routes[r].gen = sig.generation;
	}
	sig.error = (int32_t)mcc_fuzz_u8(in) - 128;
	sig.raw = (mcc_fuzz_u8(in) & 1) ? (int32_t)(mcc_fuzz_u8(in) % 16) : (int32_t)mcc_fuzz_u32(in);
	sig.value0 = fz_shifted(in);
	sig.value1 = fz_shifted(in);
	sig.now_ns = fz_now;
	fz_trace("on_signal(kind %u, route %d, gen %u, error %d, raw %d)", sig.kind, r,
	         sig.generation, sig.error, sig.raw);
	S.P->on_signal(S.ctx, &sig);
}

static void fz_tick(struct mcc_fuzz_in *in)
{
	static const uint64_t steps[] = { 1000, 100000, 1000000, 10000000, 1000000000ull,
	                                  60000000000ull };
	uint8_t b = mcc_fuzz_u8(in);

	fz_now += b < 200 ? steps[b % 6] : (uint64_t)mcc_fuzz_u32(in);
	fz_trace("tick(%llu)", (unsigned long long)fz_now);
	if (S.P->tick)
		S.P->tick(S.ctx, fz_now);
}

static void fz_check_detail(int rc, const struct mcc_task_detail_v1 *dt)
{
	MCC_FUZZ_CHECK(rc < 0 || rc <= MCC_TASK_UNKNOWN, "task_query = %d", rc);
	if (rc < 0)
		return;
	MCC_FUZZ_CHECK(dt->state == (uint32_t)rc, "detail.state %u != %d", dt->state, rc);
	MCC_FUZZ_CHECK(dt->reason < MCC_REASON_COUNT_, "detail.reason %u", dt->reason);
	MCC_FUZZ_CHECK(dt->scope <= MCC_SCOPE_DEVICE, "detail.scope %u", dt->scope);
	MCC_FUZZ_CHECK(dt->resolved <= 1, "detail.resolved %u", dt->resolved);
	MCC_FUZZ_CHECK(memchr(dt->path, 0, sizeof(dt->path)) != NULL, "detail.path unterminated");
	if (dt->observed & MCC_OBS_PATH)
		MCC_FUZZ_CHECK(dt->path_state <= MCC_PATH_PROBING, "detail.path_state %u",
		               dt->path_state);
	if (dt->observed & MCC_OBS_TIME)
		MCC_FUZZ_CHECK(dt->observed_ns <= fz_now, "detail.observed_ns in the future");
}

static void fz_task_query(struct mcc_fuzz_in *in)
{
	struct mcc_task_ref_v1 t = fz_task(in);
	struct mcc_task_detail_v1 dt;
	uint8_t b = mcc_fuzz_u8(in);
	uint32_t flags = mcc_fuzz_u8(in) & 7;
	int rc;

	if (!S.P->task_query)
		return;
	memset(&dt, 0x5a, sizeof(dt));
	/* Sometimes a caller with a detail struct shorter than its v1.0 size:
	 * refused whole, nothing written. */
	dt.struct_size = (b & 1) ? (uint32_t)offsetof(struct mcc_task_detail_v1, route_id)
	                         : (uint32_t)sizeof(dt);
	rc = S.P->task_query(S.ctx, &t, flags, &dt);
	if (b & 1) {
		MCC_FUZZ_CHECK(rc == -EINVAL, "task_query of a short detail = %d", rc);
		MCC_FUZZ_CHECK(dt.state == 0x5a5a5a5au && dt.route_id == 0x5a5a5a5a5a5a5a5aull,
		               "task_query wrote into a short detail");
		return;
	}
	fz_check_detail(rc, &dt);
	fz_mix((uint64_t)(int64_t)rc);
	if (rc >= 0) {
		fz_mix(dt.reason);
		fz_mix(dt.scope);
		fz_mix(dt.resolved);
		fz_mix(dt.observed);
		fz_mix(dt.route_id);
		fz_mix(dt.path_state);
	}
	if (flags & MCC_TASKQ_UNSUPPORTED)
		MCC_FUZZ_CHECK(rc < 0 || rc == MCC_TASK_UNKNOWN,
		               "unsupported transport must be UNKNOWN, got %d", rc);
}

static void fz_route_rebind(struct mcc_fuzz_in *in)
{
	int r = fz_pick_route(in), d = fz_pick_dev(in);
	uint32_t port = mcc_fuzz_u8(in) % 3, cq = mcc_fuzz_u8(in) % 3;
	int rc;

	if (r < 0 || d < 0 || !S.P->route_rebind)
		return;
	rc = S.P->route_rebind(S.ctx, S.routes[r].h, S.devs[d].h, port, cq);
	fz_trace("route_rebind(route %d -> dev %d) -> %d", r, d, rc);
	MCC_FUZZ_CHECK(rc <= 0, "route_rebind = %d", rc);
	if (rc == 0) {
		mcc_route *h = S.routes[r].h;
		for (int k = 0; k < FZ_ROUTES; k++) /* every alias of the route */
			if (S.routes[k].open && S.routes[k].h == h)
				S.routes[k].dev = d;
	}
}

/* Settle every live permit of route r (teardown reclaim), as the host must
 * before route_close. */
static void fz_settle_route(int r, mcc_lane *lane)
{
	for (int i = 0; i < FZ_PERMITS; i++) {
		struct fz_permit *fp = &S.permits[i];
		int rc;

		if (!fp->live || fp->rh != S.routes[r].h)
			continue;
		HOT_BEGIN("release");
		rc = S.P->release(lane, &fp->p, fp->live, MCC_REL_RECLAIMED);
		HOT_END();
		MCC_FUZZ_CHECK(rc == 0, "reclaim release = %d", rc);
		fp->live = 0;
	}
}

static void fz_route_close(struct mcc_fuzz_in *in)
{
	int r = fz_pick_route(in);

	if (r < 0)
		return;
	fz_settle_route(r, fz_lane(in));
	fz_trace("route_close(slot %d)", r);
	if (S.P->route_close)
		S.P->route_close(S.ctx, S.routes[r].h);
	/* Settled permits of a route whose last reference closed are
	 * forgotten: their handle is gone. */
	if (!fz_route_aliased(r))
		for (int i = 0; i < FZ_PERMITS; i++)
			if (S.permits[i].used && S.permits[i].rh == S.routes[r].h)
				S.permits[i].used = 0;
	S.routes[r].open = 0;
	S.routes[r].h = NULL;
}

static void fz_device_close(struct mcc_fuzz_in *in)
{
	int d = fz_pick_dev(in);

	if (d < 0)
		return;
	for (int r = 0; r < FZ_ROUTES; r++)
		if (S.routes[r].open && S.routes[r].dev == d)
			return; /* routes first */
	for (int i = 0; i < FZ_PERMITS; i++)
		if (S.permits[i].live && S.permits[i].dh == S.devs[d].h)
			return; /* permits admitted on it first */
	/* Permits still naming it (settled) are forgotten with it. */
	for (int i = 0; i < FZ_PERMITS; i++)
		if (S.permits[i].used && S.permits[i].dh == S.devs[d].h)
			S.permits[i].used = 0;
	fz_trace("device_close(%d)", d);
	if (S.P->device_close)
		S.P->device_close(S.ctx, S.devs[d].h);
	S.devs[d].open = 0;
	S.devs[d].h = NULL;
}

static void fz_poller_progress(struct mcc_fuzz_in *in)
{
	int d = fz_pick_dev(in);

	if (d < 0 || !S.P->poller_progress)
		return;
	HOT_BEGIN("poller_progress");
	S.P->poller_progress(fz_lane(in), S.devs[d].h, mcc_fuzz_u8(in) % 17);
	HOT_END();
}

/* ---------------------------------------------------------------- config */

static void fz_config(struct mcc_fuzz_in *in, uint32_t mode)
{
	static const uint64_t mins[] = { 4096, 65536, 131072, 1 << 20 };
	static const uint32_t mult[] = { 1, 2, 16, 128 };
	static const uint32_t cool[] = { 1, 10, 1000, 5000 };
	static const uint32_t md[] = { 1, 50, 75, 99 };
	/* Small bounds exercise eviction; 65536 (the default) would only make
	 * every init allocate a multi-MiB table. */
	static const uint32_t ev[] = { 1, 4, 16, 1024 };
	static const uint32_t rec[] = { 1, 2, 64, 4096 };
	uint8_t a = mcc_fuzz_u8(in), b = mcc_fuzz_u8(in), c = mcc_fuzz_u8(in);
	struct mcc_config_v1 *cfg = &S.cfg;

	memset(cfg, 0, sizeof(*cfg));
	cfg->struct_size = sizeof(*cfg);
	cfg->mode = mode;
	cfg->min_window_bytes = mins[a & 3];
	cfg->max_window_bytes = cfg->min_window_bytes * mult[(a >> 2) & 3];
	cfg->probe_window_bytes = (a & 0x10) ? cfg->min_window_bytes / (1 + (a >> 5)) : 0;
	cfg->target_drain_us = 200;
	cfg->high_pressure_epochs = 1 + (b & 3);
	cfg->low_pressure_epochs = 1 + ((b >> 2) & 3);
	cfg->hard_error_threshold = 1 + ((b >> 4) & 3);
	cfg->cooldown_ms = cool[(b >> 6) & 3];
	cfg->cooldown_max_ms = cfg->cooldown_ms * (1 + (c & 3) * 10);
	cfg->flap_window_ms = 60000;
	cfg->epoch_us = 1000;
	cfg->md_percent = md[(c >> 2) & 3];
	cfg->fast_recovery_epochs = 1 + ((c >> 4) & 3);
	cfg->ai_bytes = 262144;
	cfg->probe_successes = 1 + ((c >> 6) & 1);
	cfg->evidence_tasks = ev[(c >> 7) | ((a >> 6) & 2)];
	cfg->recorder_entries = rec[(b >> 3) & 3];
	cfg->module_get = fz_module_get;
	cfg->module_arg = NULL;
}

/* ------------------------------------------------------------------ main */

static void fz_teardown(int do_dump)
{
	/* Settle everything still live, on lane 0, as a host teardown would. */
	for (int r = 0; r < FZ_ROUTES; r++)
		if (S.routes[r].open)
			fz_settle_route(r, S.lanes[0]);
	for (int i = 0; i < FZ_PERMITS; i++)
		MCC_FUZZ_CHECK(S.permits[i].live == 0, "permit %d still live at teardown", i);
	/* A settled permit released again is a double release. */
	for (int i = 0; i < FZ_PERMITS; i++) {
		struct fz_permit *fp = &S.permits[i];
		int rc;

		if (!fp->used)
			continue;
		HOT_BEGIN("release");
		rc = S.P->release(S.lanes[0], &fp->p, 1, MCC_REL_CANCELLED);
		HOT_END();
		MCC_FUZZ_CHECK(rc == -EALREADY, "double release of settled permit %d = %d", i, rc);
	}
	for (unsigned l = 0; l < S.nlanes; l++)
		if (S.P->lane_close)
			S.P->lane_close(S.ctx, S.lanes[l]);
	S.nlanes = 0;
	/* Everything settled and every lane's cached credit returned: zero. */
	for (int d = 0; d < FZ_DEVS; d++) {
		struct mcc_domain_stats_v1 st;
		if (S.devs[d].open && fz_stats(MCC_DOMAIN_DEVICE, S.devs[d].h, &st) == 0)
			MCC_FUZZ_CHECK(st.inflight_bytes == 0, "device %d: %llu bytes in flight at end",
			               d, (unsigned long long)st.inflight_bytes);
	}
	for (int r = 0; r < FZ_ROUTES; r++) {
		struct mcc_domain_stats_v1 st;
		if (S.routes[r].open && fz_stats(MCC_DOMAIN_ROUTE, S.routes[r].h, &st) == 0)
			MCC_FUZZ_CHECK(st.inflight_bytes == 0, "route %d: %llu bytes in flight at end",
			               r, (unsigned long long)st.inflight_bytes);
	}
	if (S.P->dump && fz_dump_fd >= 0 && do_dump) {
		/* The recorder's writer, on a memfd truncated per input. */
		int n;
		if (ftruncate(fz_dump_fd, 0) == 0 && lseek(fz_dump_fd, 0, SEEK_SET) == 0) {
			n = S.P->dump(S.ctx, fz_dump_fd);
			MCC_FUZZ_CHECK(n >= 0 || n == -EOPNOTSUPP, "dump = %d", n);
		}
	}
	for (int r = 0; r < FZ_ROUTES; r++)
		if (S.routes[r].open && S.P->route_close)
			S.P->route_close(S.ctx, S.routes[r].h);
	for (int d = 0; d < FZ_DEVS; d++)
		if (S.devs[d].open && S.P->device_close)
			S.P->device_close(S.ctx, S.devs[d].h);
	if (S.P->fini)
		S.P->fini(S.ctx);
}

/* Digest of every open domain's observable state (vendor_err excluded:
 * domain stats do not carry it). */
static void fz_digest_state(void)
{
	for (int k = 0; k < FZ_DEVS + FZ_ROUTES; k++) {
		struct mcc_domain_stats_v1 st;
		int dev = k < FZ_DEVS;
		const void *h = dev ? (const void *)S.devs[k].h : (const void *)S.routes[k - FZ_DEVS].h;

		if (!h || fz_stats(dev ? MCC_DOMAIN_DEVICE : MCC_DOMAIN_ROUTE, h, &st) != 0)
			continue;
		fz_mix(st.state);
		fz_mix(st.window_bytes);
		fz_mix(st.inflight_bytes);
		fz_mix(st.generation);
		fz_mix(st.hard_errors);
		fz_mix(st.cooldown_ms);
		fz_mix(st.admits);
		fz_mix(st.defers);
		fz_mix(st.avoids);
		fz_mix(st.errors);
		fz_mix(st.quarantines);
		fz_mix(st.probes);
		fz_mix(st.window_cuts);
	}
}

static uint64_t fz_run(const uint8_t *data, size_t size, uint32_t vendor_xor)
{
	struct mcc_fuzz_in in = { data, size };
	uint8_t sel = mcc_fuzz_u8(&in);
	int rc;

	memset(&S, 0, sizeof(S));
	fz_now = 1000000000ull; /* the same clock for every run of an input */
	fz_vendor_xor = vendor_xor;
	fz_digest = 0xcbf29ce484222325ull;
	S.P = fz_mods[sel % FZ_MOD_COUNT];
	if (!S.P)
		S.P = fz_mods[FZ_MOD_AIMD];
	S.mode = S.P->mode;
	MCC_FUZZ_CHECK(S.P->try_acquire && S.P->release && S.P->on_completion && S.P->init,
	               "module %s lacks a hot-path callback or init", S.P->name);
	fz_config(&in, S.mode);
	S.out.struct_size = sizeof(S.out);
	rc = S.P->init(&fz_host, &S.cfg, &S.out, &S.ctx);
	MCC_FUZZ_CHECK(rc == 0, "init(valid config) = %d", rc);

	S.nlanes = 1 + mcc_fuzz_u8(&in) % FZ_LANES;
	for (unsigned l = 0; l < S.nlanes; l++) {
		struct mcc_lane_desc_v1 ld = { sizeof(ld), l, l == 0 ? MCC_LANE_POST_POLL : MCC_LANE_POST,
		                               0 };
		if (S.P->lane_open) {
			rc = S.P->lane_open(S.ctx, &ld, &S.lanes[l]);
			MCC_FUZZ_CHECK(rc == 0, "lane_open = %d", rc);
		}
	}
	/* One device and one route to start with, so short inputs do work. */
	{
		uint8_t boot[] = { 0, 1, 1, 0, 0, 0, 0, 1 };
		struct mcc_fuzz_in b = { boot, sizeof(boot) };
		fz_device_open(&b);
		fz_route_open(&b);
	}
	for (unsigned step = 0; step < FZ_MAX_STEPS && in.left; step++) {
		switch (mcc_fuzz_u8(&in) % 20) {
		case 0:
		case 1:
		case 2:
		case 3:
			fz_try_acquire(&in);
			break;
		case 4:
		case 5:
			fz_release(&in);
			break;
		case 6:
		case 7:
		case 8:
			fz_completion(&in);
			break;
		case 9:
			fz_async(&in);
			break;
		case 10:
			fz_signal(&in);
			break;
		case 11:
		case 12:
			fz_tick(&in);
			break;
		case 13:
			fz_task_query(&in);
			break;
		case 14:
			if (S.P->batch_free)
				S.P->batch_free(S.ctx, mcc_fuzz_u8(&in) & 3);
			break;
		case 15:
			fz_poller_progress(&in);
			break;
		case 16:
			fz_route_rebind(&in);
			break;
		case 17:
			if (mcc_fuzz_u8(&in) & 1)
				fz_route_close(&in);
			else
				fz_device_close(&in);
			break;
		case 18:
			fz_device_open(&in);
			break;
		default:
			fz_route_open(&in);
			break;
		}
		fz_check_all();
	}
	fz_digest_state();
	fz_teardown((sel & 2) && !vendor_xor);
	return fz_digest;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t a = fz_run(data, size, 0);
	uint64_t b = fz_run(data, size, 0xa5a5a5a5u);

	MCC_FUZZ_CHECK(a == b, "vendor_err changed decisions, task state or domain state "
	                       "(digest %016llx vs %016llx)",
	               (unsigned long long)a, (unsigned long long)b);
	return 0;
}
