/* SPDX-License-Identifier: MIT */
/*
 * scale.c - what the control plane costs against the number of open routes
 * (tests/bench/README.md "Scale"). One process per measurement: the aimd
 * module in enforce mode, loaded through the real loader, 8 devices (a
 * node's NICs), OPEN routes spread over them (names like a host's), one
 * lane. Each operation is wrapped in a function of its own, so callgrind
 * can count it alone (--toggle-collect=mcc_scale_measured_*); CPU time is
 * CLOCK_THREAD_CPUTIME_ID around the same calls.
 *
 * Usage:
 *   benchscale run OPEN ACTIVES NTICK NSTATS NPAIR MODULE_DIR
 *     one process per size: OPEN routes opened (each open counted), then for
 *     each number of busy routes in the comma-separated ACTIVES (at most
 *     OPEN), NTICK ticks; before each, every busy route completes its slice
 *     in flight (20 us after it was posted: a calm path) and admits the next,
 *     the others idle. Then NSTATS domain_stats() of the busy routes in turn,
 *     NPAIR admit + completion pairs on one route (the busy ones idle again),
 *     and 1,000 more route opens (after N/16 unmeasured ones: past the
 *     table doubling at a power of two, which "open" amortises). Prints "scale OP OPEN ACTIVE COUNT
 *     CPU_NS_PER_OP" per measurement; under callgrind each measurement is
 *     the inclusive cost of its own function (mcc_scale_m_*) over COUNT.
 *   benchscale lane ROUTES NPAIR MODULE_DIR
 *     NPAIR pairs on one lane that uses ROUTES routes in turn
 *     (MCC_SCALE_EXACT=1: no lane credit, every domain in exact mode).
 *   benchscale mem OPEN SLOTS MODULE_DIR
 *     bytes allocated (mallinfo2) per open route, idle, and per evidence
 *     slot (an instance of SLOTS against one of 1).
 * Pairs tick every 1,000 pairs (64 MB of slices per 1 ms epoch on one
 * lane), outside the measurement: what a lane's rings hold between ticks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "mcc_loader.h"

#define NDEV 8u
#define SLICE (64u * 1024u)
#define EPOCH_NS 1000000ull

struct scale {
	mcc_instance *inst;
	const struct mcc_policy_v1 *ops;
	void *ctx;
	mcc_device *dev[NDEV];
	mcc_route **route;
	uint32_t nroute;
	mcc_lane *lane;
	uint64_t now;
	/* the busy routes and the slice each holds in flight */
	uint32_t nact;
	mcc_route **act;
	struct mcc_permit_v1 *held;
	uint64_t refused;
};

static uint64_t clock_ns(void *arg)
{
	return ((struct scale *)arg)->now;
}

/* This thread's CPU time, or the monotonic clock (wall = 1), in ns. */
static uint64_t real_clock_ns(int wall)
{
	struct timespec ts;
	clock_gettime(wall ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	return real_clock_ns(0);
}

static void quiet(void *arg, int level, const char *fmt, ...)
{
	(void)arg;
	(void)level;
	(void)fmt;
}

static int scale_open(struct scale *s, const char *module_dir, uint32_t evidence_tasks)
{
	char dir[] = "/tmp/mcc-scale-XXXXXX", ini[4200];
	if (!mkdtemp(dir))
		return -errno;
	snprintf(ini, sizeof(ini), "%s/mcc.ini", dir);
	FILE *f = fopen(ini, "w");
	if (!f)
		return -errno;
	fprintf(f, "[policy]\nmode = enforce\nmodule = aimd\nmodule_dir = %s\n", module_dir);
	if (evidence_tasks)
		fprintf(f, "[controller]\nevidence_tasks = %u\n", evidence_tasks);
	if (getenv("MCC_SCALE_EXACT")) /* no lane credit: every domain in exact mode */
		fprintf(f, "[module.aimd]\ncredit_min_admits = 1000000000\n");
	fclose(f);
	struct mcc_loader_opts o;
	memset(&o, 0, sizeof(o));
	o.struct_size = sizeof(o);
	o.max_lanes = 4;
	o.engine = "te";
	o.ini_path = ini;
	o.module_dir = module_dir;
	o.ignore_env = 1;
	o.log = quiet;
	o.now_ns = clock_ns;
	o.clock_arg = s;
	s->now = EPOCH_NS;
	int rc = mcc_instance_acquire(&o, &s->inst);
	unlink(ini);
	rmdir(dir);
	if (rc < 0 || strcmp(mcc_instance_name(s->inst), "aimd") != 0) {
		fprintf(stderr, "benchscale: no aimd module in %s (%d: %s)\n", module_dir, rc,
		        mcc_instance_error(s->inst));
		return rc < 0 ? rc : -EPROTO;
	}
	s->ops = mcc_instance_ops(s->inst);
	s->ctx = mcc_instance_ctx(s->inst);
	for (uint32_t d = 0; d < NDEV; d++) {
		char name[16];
		snprintf(name, sizeof(name), "mlx5_%u", d);
		struct mcc_device_desc_v1 dd = { sizeof(dd), d, name, 1, 0, 400000000000ull, 0 };
		if ((rc = s->ops->device_open(s->ctx, &dd, &s->dev[d])) < 0)
			return rc;
	}
	struct mcc_lane_desc_v1 ld = { sizeof(ld), 0, MCC_LANE_POST_POLL, 0 };
	return s->ops->lane_open(s->ctx, &ld, &s->lane);
}

/* Route i: on device i % 8, a peer path as a host names it. */
static void route_desc(uint32_t i, char *peer, size_t len, struct mcc_route_desc_v1 *rd)
{
	snprintf(peer, len, "10.%u.%u.%u:12345@mlx5_%u", (i >> 16) & 255, (i >> 8) & 255, i & 255,
	         (i / NDEV) % NDEV);
	*rd = (struct mcc_route_desc_v1){ sizeof(*rd), 1, i % NDEV, 1, i, peer, i / NDEV, 0 };
}

/* The functions callgrind counts (--toggle-collect=mcc_scale_m_*): each
 * measurement is the inclusive cost of one of them over its count. */
#define MEASURED __attribute__((noinline))
MEASURED int mcc_scale_m_open(struct scale *s, mcc_device *d, const struct mcc_route_desc_v1 *rd,
                              mcc_route **out);
MEASURED int mcc_scale_m_open(struct scale *s, mcc_device *d, const struct mcc_route_desc_v1 *rd,
                              mcc_route **out)
{
	return s->ops->route_open(s->ctx, d, rd, out);
}
MEASURED int mcc_scale_m_open_more(struct scale *s, mcc_device *d,
                                   const struct mcc_route_desc_v1 *rd, mcc_route **out);
MEASURED int mcc_scale_m_open_more(struct scale *s, mcc_device *d,
                                   const struct mcc_route_desc_v1 *rd, mcc_route **out)
{
	return s->ops->route_open(s->ctx, d, rd, out);
}
static int open_plain(struct scale *s, mcc_device *d, const struct mcc_route_desc_v1 *rd,
                      mcc_route **out)
{
	return s->ops->route_open(s->ctx, d, rd, out);
}
MEASURED void mcc_scale_m_tick_0(struct scale *s);
MEASURED void mcc_scale_m_tick_0(struct scale *s)
{
	s->ops->tick(s->ctx, s->now);
}
MEASURED void mcc_scale_m_tick_1(struct scale *s);
MEASURED void mcc_scale_m_tick_1(struct scale *s)
{
	s->ops->tick(s->ctx, s->now);
}
MEASURED void mcc_scale_m_tick_2(struct scale *s);
MEASURED void mcc_scale_m_tick_2(struct scale *s)
{
	s->ops->tick(s->ctx, s->now);
}
static void (*const measured_tick[3])(struct scale *) = { mcc_scale_m_tick_0, mcc_scale_m_tick_1,
	                                                   mcc_scale_m_tick_2 };
MEASURED void mcc_scale_m_stats(struct scale *s, mcc_route *r, struct mcc_domain_stats_v1 *st);
MEASURED void mcc_scale_m_stats(struct scale *s, mcc_route *r, struct mcc_domain_stats_v1 *st)
{
	s->ops->domain_stats(s->ctx, MCC_DOMAIN_ROUTE, r, st);
}

static const struct mcc_completion_v1 wc_ok = { sizeof(struct mcc_completion_v1), IBV_WC_SUCCESS,
	                                         0, 1, SLICE, 0, 0, 1, IBV_WC_RDMA_WRITE };

/* n pairs on the routes in turn (one route: the same one every time). */
static inline uint64_t pairs(struct scale *s, mcc_route **r, uint32_t nr, uint64_t n)
{
	struct mcc_task_ref_v1 task = { 1, 0, 0, 0 };
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	uint64_t refused = 0;
	uint32_t k = 0;
	for (uint64_t i = 0; i < n; i++) {
		task.task_id = i >> 4;
		if (s->ops->try_acquire(s->lane, r[k], SLICE, 1, &task, &p) == MCC_ADMIT)
			s->ops->on_completion(s->lane, &p, &wc_ok);
		else
			refused++;
		if (++k == nr)
			k = 0;
	}
	return refused;
}
MEASURED uint64_t mcc_scale_m_pair(struct scale *s, mcc_route **r, uint32_t nr, uint64_t n);
MEASURED uint64_t mcc_scale_m_pair(struct scale *s, mcc_route **r, uint32_t nr, uint64_t n)
{
	return pairs(s, r, nr, n);
}
MEASURED uint64_t mcc_scale_m_lane(struct scale *s, mcc_route **r, uint32_t nr, uint64_t n);
MEASURED uint64_t mcc_scale_m_lane(struct scale *s, mcc_route **r, uint32_t nr, uint64_t n)
{
	return pairs(s, r, nr, n);
}

typedef int (*open_fn)(struct scale *, mcc_device *, const struct mcc_route_desc_v1 *,
                       mcc_route **);

/* n more routes; the CPU time of the opens alone into *ns. */
static int open_routes(struct scale *s, uint32_t n, open_fn fn, uint64_t *ns)
{
	mcc_route **v = realloc(s->route, ((size_t)s->nroute + n) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->route = v;
	uint64_t sum = 0;
	for (uint32_t k = 0; k < n; k++, s->nroute++) {
		char peer[64];
		struct mcc_route_desc_v1 rd;
		route_desc(s->nroute, peer, sizeof(peer), &rd);
		uint64_t c0 = ns ? cpu_ns() : 0;
		int rc = fn(s, s->dev[s->nroute % NDEV], &rd, &s->route[s->nroute]);
		if (ns)
			sum += cpu_ns() - c0;
		if (rc < 0)
			return rc;
	}
	if (ns)
		*ns = sum;
	return 0;
}

/* One epoch (not measured). */
static void tick(struct scale *s)
{
	s->now += EPOCH_NS;
	s->ops->tick(s->ctx, s->now);
}

/* One epoch of the busy routes: each completes its slice (20 us after it
 * was posted: a calm path) and admits the next. */
static void busy_epoch(struct scale *s)
{
	struct mcc_completion_v1 wc = wc_ok;
	wc.complete_ns = s->now;
	wc.post_ns = s->now - 20000;
	for (uint32_t i = 0; i < s->nact; i++) {
		struct mcc_permit_v1 *p = &s->held[i];
		if (p->flags & MCC_PERMIT_F_LIVE)
			s->ops->on_completion(s->lane, p, &wc);
		*p = (struct mcc_permit_v1)MCC_PERMIT_INIT;
		if (s->ops->try_acquire(s->lane, s->act[i], SLICE, 1, NULL, p) != MCC_ADMIT)
			s->refused++;
	}
}

/* The busy routes finish their slices (and stay idle from here). */
static void busy_end(struct scale *s)
{
	for (uint32_t i = 0; i < s->nact; i++)
		if (s->held[i].flags & MCC_PERMIT_F_LIVE)
			s->ops->on_completion(s->lane, &s->held[i], &wc_ok);
	s->nact = 0;
}

/* `nact` busy routes spread over the open ones. */
static int pick_active(struct scale *s, uint32_t nact)
{
	busy_end(s);
	if (nact > s->nroute)
		nact = s->nroute;
	free(s->act);
	free(s->held);
	s->act = calloc(nact ? nact : 1, sizeof(*s->act));
	s->held = calloc(nact ? nact : 1, sizeof(*s->held));
	if (!s->act || !s->held)
		return -ENOMEM;
	s->nact = nact;
	for (uint32_t i = 0; i < nact; i++)
		s->act[i] = s->route[(uint64_t)i * s->nroute / nact];
	return 0;
}

static uint64_t heap_used(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

static void scale_close(struct scale *s)
{
	busy_end(s);
	if (s->lane)
		s->ops->lane_close(s->ctx, s->lane);
	for (uint32_t i = 0; i < s->nroute; i++)
		s->ops->route_close(s->ctx, s->route[i]);
	for (uint32_t d = 0; d < NDEV; d++)
		if (s->dev[d])
			s->ops->device_close(s->ctx, s->dev[d]);
	mcc_instance_release(s->inst);
	free(s->route);
	free(s->act);
	free(s->held);
	memset(s, 0, sizeof(*s));
}

/* The end of a measurement: the pairs the policy refused (if any) said,
 * the instance closed; 0 (the command's success). */
static int scale_done(struct scale *s, uint64_t refused)
{
	if (refused)
		fprintf(stderr, "benchscale: %" PRIu64 " pairs refused\n", refused);
	scale_close(s);
	return 0;
}

static void say(const char *op, uint32_t open, uint32_t active, uint64_t count, uint64_t ns)
{
	printf("scale %s %u %u %" PRIu64 " %.1f\n", op, open, active, count,
	       count ? (double)ns / (double)count : 0.0);
	fflush(stdout);
}

/* Pairs in chunks of 1,000 with a tick after each (not measured). */
static uint64_t pair_run(struct scale *s, mcc_route **r, uint32_t nr, uint64_t n,
                         uint64_t (*fn)(struct scale *, mcc_route **, uint32_t, uint64_t),
                         uint64_t *refused)
{
	for (int e = 0; e < 3; e++) { /* warm: the steady state, windows grown */
		pairs(s, r, nr, 2000);
		tick(s);
	}
	uint64_t sum = 0;
	for (uint64_t done = 0; done < n;) {
		uint64_t k = n - done < 1000 ? n - done : 1000;
		uint64_t c0 = cpu_ns();
		*refused += fn(s, r, nr, k);
		sum += cpu_ns() - c0;
		done += k;
		tick(s);
	}
	return sum;
}

static int run(const char *module_dir, uint32_t nopen, const char *actives, uint64_t ntick,
               uint64_t nstats, uint64_t npair)
{
	static struct scale s;
	if (scale_open(&s, module_dir, 0) < 0)
		return 1;
	uint64_t c0, w0 = real_clock_ns(1), ns = 0;
	if (open_routes(&s, nopen, mcc_scale_m_open, &ns) < 0)
		return 1;
	say("open", nopen, 0, nopen, ns);
	printf("scale open_wall_ms %u 0 1 %.1f\n", nopen, (double)(real_clock_ns(1) - w0) / 1e6);
	for (int e = 0; e < 3; e++) /* the new routes' first epochs */
		tick(&s);
	int level = 0;
	for (const char *a = actives; *a && level < 3; level++) {
		uint32_t nact = (uint32_t)strtoul(a, NULL, 10);
		a = strchr(a, ',') ? strchr(a, ',') + 1 : a + strlen(a);
		if (nact > nopen)
			continue;
		if (pick_active(&s, nact) < 0)
			return 1;
		for (int e = 0; e < 40; e++) { /* slow start: windows grow while used */
			busy_epoch(&s);
			tick(&s);
		}
		s.refused = 0;
		uint64_t sum = 0;
		for (uint64_t e = 0; e < ntick; e++) {
			busy_epoch(&s);
			s.now += EPOCH_NS;
			c0 = cpu_ns();
			measured_tick[level](&s);
			sum += cpu_ns() - c0;
		}
		char op[16];
		snprintf(op, sizeof(op), "tick_%d", level);
		say(op, nopen, nact, ntick, sum);
		if (s.refused)
			fprintf(stderr, "benchscale: %" PRIu64 " refusals among the busy routes\n",
			        s.refused);
	}
	struct mcc_domain_stats_v1 st = { .struct_size = sizeof(st) };
	uint32_t nst = s.nact ? s.nact : 1;
	mcc_route **sr = s.nact ? s.act : s.route;
	c0 = cpu_ns();
	for (uint64_t i = 0; i < nstats; i++)
		mcc_scale_m_stats(&s, sr[i % nst], &st);
	say("stats", nopen, s.nact, nstats, cpu_ns() - c0);
	uint32_t was = s.nact;
	busy_end(&s);
	uint64_t refused = 0;
	uint64_t sum = pair_run(&s, s.route, 1, npair, mcc_scale_m_pair, &refused);
	say("pair", nopen, was, npair, sum);
	/* 1,000 more at N, past the table doubling that N (a power of two
	 * here) would trigger: the marginal cost, the doubling amortised in
	 * "open" */
	if (open_routes(&s, nopen / 16 + 1, open_plain, NULL) < 0 ||
	    open_routes(&s, 1000, mcc_scale_m_open_more, &ns) < 0)
		return 1;
	say("open_more", nopen, 0, 1000, ns);
	return scale_done(&s, refused);
}

static int lane(const char *module_dir, uint32_t nroutes, uint64_t npair)
{
	static struct scale s;
	if (scale_open(&s, module_dir, 0) < 0 || open_routes(&s, nroutes, open_plain, NULL) < 0)
		return 1;
	tick(&s);
	uint64_t refused = 0;
	pairs(&s, s.route, nroutes, 1000);
	uint64_t sum = pair_run(&s, s.route, nroutes, npair, mcc_scale_m_lane, &refused);
	say(getenv("MCC_SCALE_EXACT") ? "lane_exact" : "lane", nroutes, nroutes, npair, sum);
	return scale_done(&s, refused);
}

static int mem(const char *module_dir, uint32_t nopen, uint32_t slots)
{
	static struct scale s;
	uint64_t h0 = heap_used();
	if (scale_open(&s, module_dir, 1) < 0)
		return 1;
	uint64_t h1 = heap_used();
	scale_close(&s);
	uint64_t h2 = heap_used();
	if (scale_open(&s, module_dir, slots) < 0)
		return 1;
	uint64_t h3 = heap_used();
	double per_slot = ((double)(h3 - h2) - (double)(h1 - h0)) / (double)(slots - 1);
	mcc_route **v = malloc((size_t)nopen * sizeof(*v)); /* the bench's own array first */
	if (!v)
		return 1;
	s.route = v;
	uint64_t r0 = heap_used();
	for (uint32_t i = 0; i < nopen; i++, s.nroute++) {
		char peer[64];
		struct mcc_route_desc_v1 rd;
		route_desc(i, peer, sizeof(peer), &rd);
		if (open_plain(&s, s.dev[i % NDEV], &rd, &s.route[i]) < 0)
			return 1;
	}
	for (int e = 0; e < 3; e++) /* their first epochs: then at rest */
		tick(&s);
	uint64_t r1 = heap_used();
	printf("scale mem_route %u 0 %u %.1f\n", nopen, nopen, (double)(r1 - r0) / nopen);
	printf("scale mem_slot %u 0 %u %.1f\n", nopen, slots, per_slot);
	printf("scale mem_instance %u 0 %u %" PRIu64 "\n", nopen, slots, h3 - h2);
	scale_close(&s);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 8 && !strcmp(argv[1], "run"))
		return run(argv[7], (uint32_t)strtoul(argv[2], NULL, 10), argv[3],
		           strtoull(argv[4], NULL, 10), strtoull(argv[5], NULL, 10),
		           strtoull(argv[6], NULL, 10));
	if (argc >= 5 && !strcmp(argv[1], "lane"))
		return lane(argv[4], (uint32_t)strtoul(argv[2], NULL, 10), strtoull(argv[3], NULL, 10));
	if (argc >= 5 && !strcmp(argv[1], "mem"))
		return mem(argv[4], (uint32_t)strtoul(argv[2], NULL, 10),
		           (uint32_t)strtoul(argv[3], NULL, 10));
	fprintf(stderr, "usage: benchscale run OPEN ACTIVES NTICK NSTATS NPAIR MODULE_DIR\n"
	                "       benchscale lane ROUTES NPAIR MODULE_DIR\n"
	                "       benchscale mem OPEN SLOTS MODULE_DIR\n");
	return 2;
}
