/* SPDX-License-Identifier: MIT */
/*
 * bench_setup.c - load a policy through the real loader (libmcc) from an ini
 * file, and open the devices, routes and lanes a benchmark arm needs.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "bench.h"

static const char *const mcc_bench_modes[] = {"off", "observe", "enforce"};

int mcc_bench_write_inis(const char *dir, const char *module_dir)
{
	for (size_t i = 0; i < sizeof(mcc_bench_modes) / sizeof(mcc_bench_modes[0]); i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/mcc-%s.ini", dir, mcc_bench_modes[i]);
		FILE *f = fopen(path, "w");
		if (!f)
			return -errno;
		fprintf(f,
		        "; written by tests/bench: one policy per arm, defaults otherwise\n"
		        "[policy]\nmode = %s\nmodule_dir = %s\n",
		        mcc_bench_modes[i], module_dir);
		if (fclose(f) != 0)
			return -errno;
	}
	return 0;
}

static void mcc_bench_log(void *arg, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void mcc_bench_log(void *arg, int level, const char *fmt, ...)
{
	(void)arg;
	if (level > MCC_LOG_WARN)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("microbench: mcc: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int mcc_bench_inst_open(struct mcc_bench_inst *b, const char *dir, const char *module_dir,
                        const char *mode, const char *want_name, unsigned ndev, unsigned nlanes,
                        char *err, size_t errlen)
{
	char ini[4096];
	struct mcc_loader_opts o;
	int rc;

	memset(b, 0, sizeof(*b));
	if (ndev > 2 || nlanes > 2 || ndev == 0 || nlanes == 0)
		return -EINVAL;
	snprintf(ini, sizeof(ini), "%s/mcc-%s.ini", dir, mode);
	memset(&o, 0, sizeof(o));
	o.struct_size = sizeof(o);
	o.max_lanes = 4;
	o.engine = "te";
	o.ini_path = ini;
	o.module_dir = module_dir;
	o.ignore_env = 1;
	o.log = mcc_bench_log;
	rc = mcc_instance_acquire(&o, &b->inst);
	if (rc < 0 || strcmp(mcc_instance_name(b->inst), want_name) != 0) {
		snprintf(err, errlen, "mode %s: loaded '%s' instead of '%s' (rc %d: %s)", mode,
		         mcc_instance_name(b->inst), want_name, rc, mcc_instance_error(b->inst));
		mcc_instance_release(b->inst);
		b->inst = NULL;
		return rc < 0 ? rc : -EPROTO;
	}
	b->ops = mcc_instance_ops(b->inst);
	b->ctx = mcc_instance_ctx(b->inst);
	for (unsigned d = 0; d < ndev; d++) {
		char name[16];
		snprintf(name, sizeof(name), "mlx5_%u", d);
		struct mcc_device_desc_v1 dd = {sizeof(dd), d, name, 1, 0, 400000000000ull, 0};
		rc = b->ops->device_open(b->ctx, &dd, &b->dev[d]);
		if (rc < 0)
			goto fail;
		b->ndev = d + 1;
		char peer[64];
		snprintf(peer, sizeof(peer), "10.0.0.2:12345@mlx5_%u", d);
		struct mcc_route_desc_v1 rd = {sizeof(rd), 1, d, 1, 100 + d, peer, 2, 0};
		rc = b->ops->route_open(b->ctx, b->dev[d], &rd, &b->route[d]);
		if (rc < 0)
			goto fail;
	}
	for (unsigned k = 0; k < nlanes; k++) {
		struct mcc_lane_desc_v1 ld = {sizeof(ld), k, MCC_LANE_POST_POLL, 0};
		rc = b->ops->lane_open(b->ctx, &ld, &b->lane[k]);
		if (rc < 0)
			goto fail;
		b->nlanes = k + 1;
	}
	return 0;
fail:
	snprintf(err, errlen, "mode %s: opening domains/lanes failed: %d", mode, rc);
	mcc_bench_inst_close(b, NULL);
	return rc;
}

void mcc_bench_inst_close(struct mcc_bench_inst *b, uint64_t *leftover_inflight)
{
	uint64_t left = 0;
	if (!b->inst)
		return;
	for (unsigned k = 0; k < b->nlanes; k++)
		if (b->lane[k])
			b->ops->lane_close(b->ctx, b->lane[k]);
	for (unsigned d = 0; d < b->ndev; d++) {
		struct mcc_domain_stats_v1 st;
		if (b->route[d]) {
			memset(&st, 0, sizeof(st));
			st.struct_size = sizeof(st);
			if (b->ops->domain_stats(b->ctx, MCC_DOMAIN_ROUTE, b->route[d], &st) == 0)
				left += st.inflight_bytes;
			b->ops->route_close(b->ctx, b->route[d]);
		}
		memset(&st, 0, sizeof(st));
		st.struct_size = sizeof(st);
		if (b->dev[d] &&
		    b->ops->domain_stats(b->ctx, MCC_DOMAIN_DEVICE, b->dev[d], &st) == 0)
			left += st.inflight_bytes;
		if (b->dev[d])
			b->ops->device_close(b->ctx, b->dev[d]);
	}
	mcc_instance_release(b->inst);
	memset(b, 0, sizeof(*b));
	if (leftover_inflight)
		*leftover_inflight = left;
}

void mcc_bench_lane_bind(struct mcc_bench_lane *l, const struct mcc_bench_inst *b, unsigned k,
                         unsigned r, int cc_on)
{
	struct mcc_permit_v1 init = MCC_PERMIT_INIT;
	l->ops = b->ops;
	l->lane = b->lane[k];
	l->route = b->route[r];
	l->generation = 1;
	l->cc_on = cc_on;
	l->permit = init;
}

void mcc_bench_rnr(struct mcc_bench_lane *l)
{
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	struct mcc_completion_v1 wc = { .struct_size = sizeof(wc),
		                        .wc_status = IBV_WC_RNR_RETRY_EXC_ERR,
		                        .generation = l->generation };
	if (l->ops->try_acquire(l->lane, l->route, MCC_BENCH_SLICE, l->generation, NULL, &p) ==
	    MCC_ADMIT)
		l->ops->on_completion(l->lane, &p, &wc);
}

/* Bulk steady state: windows start small (a bounded first burst) and grow
 * only while they are used, so a loop of one slice at a time never reaches
 * the state a busy engine runs in. Each epoch fills the route window with
 * slices and completes them many times over (delivery far faster than an
 * epoch, so scheduling jitter cannot read as queueing), then ends with the window
 * full, as a pipelined engine's would be at a tick; repeat until the window
 * stops growing (slow start, then additive increase: up to 0.5 s). Set-up,
 * not measurement: each tick waits out a real epoch (the policy reads the
 * monotonic clock too). */
static uint64_t mcc_bench_epoch_later(void)
{
	struct timespec ts = { 0, 1100000 };
	nanosleep(&ts, NULL);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static unsigned mcc_bench_fill(struct mcc_bench_lane *l, struct mcc_permit_v1 *p, unsigned max)
{
	unsigned n = 0;
	while (n < max) {
		struct mcc_permit_v1 pi = MCC_PERMIT_INIT;
		p[n] = pi;
		if (l->ops->try_acquire(l->lane, l->route, MCC_BENCH_SLICE, l->generation, NULL,
		                        &p[n]) != MCC_ADMIT)
			break;
		n++;
	}
	return n;
}

static void mcc_bench_complete(struct mcc_bench_lane *l, struct mcc_permit_v1 *p, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct mcc_completion_v1 wc = { .struct_size = sizeof(wc),
			                        .wc_status = IBV_WC_SUCCESS,
			                        .generation = l->generation };
		l->ops->on_completion(l->lane, &p[i], &wc);
	}
}

uint64_t mcc_bench_warm(const struct mcc_bench_inst *b, struct mcc_bench_lane *l)
{
	static struct mcc_permit_v1 p[1024];
	unsigned n = 0;
	uint64_t last = 0;
	struct mcc_domain_stats_v1 st = { .struct_size = sizeof(st) };

	for (int e = 0, still = 0; e < 400 && still < 16; e++) {
		for (int k = 0; k < 32; k++) {
			mcc_bench_complete(l, p, n);
			n = mcc_bench_fill(l, p, 1024);
		}
		b->ops->tick(b->ctx, mcc_bench_epoch_later());
		if (b->ops->domain_stats(b->ctx, MCC_DOMAIN_ROUTE, l->route, &st) < 0)
			break;
		still = st.window_bytes == last ? still + 1 : 0;
		last = st.window_bytes;
	}
	mcc_bench_complete(l, p, n);
	l->refused = 0;
	return last;
}

uint32_t mcc_bench_route_state(const struct mcc_bench_inst *b, const struct mcc_bench_lane *l)
{
	struct mcc_domain_stats_v1 st = { .struct_size = sizeof(st) };
	if (b->ops->domain_stats(b->ctx, MCC_DOMAIN_ROUTE, l->route, &st) < 0)
		return UINT32_MAX;
	return st.state;
}
