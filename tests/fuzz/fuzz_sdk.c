/* SPDX-License-Identifier: MIT */
/*
 * fuzz_sdk.c - libFuzzer target: random call sequences of the engine SDK
 * (plugin_api/include/mcc_engine.h) through libmcc and the aimd module (or
 * the controller off), correct use and misuse mixed: engines opened and
 * closed (twice, and used after close), lanes opened and closed (twice,
 * stale references, the policy's lane handle after its close), routes
 * opened, looked up, renewed, avoided, closed and put (a put too many, calls on a
 * freed route), QPs added and removed, async events, admissions on any
 * lane, ticks, batches, set-up failures and statistics of any struct size.
 *
 * A model predicts every return value: the reference rule of routes (each
 * open and lookup owes a put, close gives none back, the grave keeps a
 * freed route's memory for the engine's 64 latest frees), lane references
 * and generations, the core's lane memory per id. Any difference aborts;
 * ASan/UBSan report memory errors, and LeakSanitizer anything left behind
 * once every engine is closed at the end of the input.
 *
 * The model only makes calls the SDK defines: a freed route is touched
 * only within 32 frees of its engine (half the grave), an engine pointer
 * after close only while no open engine has the same address, a policy
 * lane handle only while its instance lives.
 *
 * Module directory: $MCC_FUZZ_MODULE_DIR, else $MCC_TEST_MODULE_DIR.
 * MCC_FUZZ_TRACE=1 prints each step.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "mcc_engine.h"

#define NE 2    /* engines */
#define NL 6    /* lane slots */
#define NRT 12  /* route objects */
#define NK 4    /* keys */
#define NQ 4    /* QP numbers */
#define NP 3    /* permits */
#define GRAVE_SAFE 32u
#define STEPS_MAX 400

static const char *const keys[NK] = {"10.0.0.2:1@mlx5_0", "10.0.0.3:1@mlx5_0", "k", "\x01\x02"};
static char moddir[4096], ini_enforce[4096];
static char scratch[] = "/tmp/mcc-fuzz-sdk-XXXXXX"; /* the configuration's folder */

/* At exit: the scratch folder and its file go with the run. */
static void scratch_remove(void)
{
	if (ini_enforce[0])
		unlink(ini_enforce);
	rmdir(scratch);
}
static int tracing;
static uint64_t now_ns = 1000000000ull;

static uint64_t fz_clock(void *arg)
{
	(void)arg;
	return now_ns;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void fz_log(void *arg, int level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	(void)arg;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (tracing)
		fprintf(stderr, "  [log %d] %s\n", level, buf);
}

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static void tr(const char *fmt, ...)
{
	va_list ap;
	if (!tracing)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#define EXPECT(got, want, what)                                                                  \
	MCC_FUZZ_CHECK((long long)(got) == (long long)(want), "%s: got %lld, model %lld", what, \
	               (long long)(got), (long long)(want))

/* ------------------------------------------------------------------ model */

struct rt {
	int used;      /* slot in use */
	int eng;
	int key;
	mcc_engine_route *r;
	mcc_device *dev;
	uint64_t inc;
	uint32_t gen;
	unsigned holds; /* references the harness holds */
	unsigned qps;   /* QPs registered on it */
	int published;
	int freed;
	unsigned freed_at; /* the engine's free count when it was freed */
};

struct lane {
	int used;
	int eng;
	mcc_lane_ref ref;
	mcc_lane *cc;
	int open;
	const mcc_instance *inst;
};

struct eng {
	mcc_engine *e; /* the pointer, kept after close */
	int open, closed;
	int enforce;   /* the policy in force is the core (the instance's mode) */
	const struct mcc_policy_v1 *ops;
	void *ctx;
	const mcc_instance *inst;
	mcc_device *dev[2];
	unsigned frees; /* routes freed so far (the grave) */
	int key_rt[NK]; /* published route object of each key, or -1 */
	int qp_rt[2][NQ]; /* (device, qp) -> route object, or -1 */
	int batch[4];   /* live batch ids 1..4 */
};

static struct eng E[NE];
static struct rt R[NRT];
static struct lane L[NL];
static struct {
	struct mcc_permit_v1 p;
	int live;
	int rt;
} P[NP];

static int fresh_rt(void)
{
	for (int i = 0; i < NRT; i++)
		if (!R[i].used)
			return i;
	/* reuse the oldest-freed slot that is out of reach */
	for (int i = 0; i < NRT; i++)
		if (R[i].freed && E[R[i].eng].frees - R[i].freed_at >= GRAVE_SAFE)
			return i;
	return -1;
}

/* A freed route the model may still touch (its memory is in the grave). */
static int rt_touchable(int i)
{
	const struct rt *x = &R[i];
	return x->used && E[x->eng].open && (!x->freed || E[x->eng].frees - x->freed_at < GRAVE_SAFE);
}

static void rt_maybe_free(int i)
{
	struct rt *x = &R[i];
	if (!x->freed && !x->published && !x->holds && !x->qps) {
		x->freed = 1;
		x->freed_at = E[x->eng].frees++;
	}
}

static int instance_alive(const mcc_instance *inst)
{
	for (int i = 0; i < NE; i++)
		if (E[i].open && E[i].inst == inst)
			return 1;
	return 0;
}

/* A policy lane handle is live when an open lane has it (the core keeps
 * each id's memory and reuses it). */
static int lane_ptr_open(mcc_lane *p)
{
	for (int i = 0; i < NL; i++)
		if (L[i].used && L[i].open && L[i].cc == p)
			return 1;
	return 0;
}

/* The model's index of a device: the null policy has one device for all. */
static int dix(const struct eng *x, int d)
{
	return x->dev[d] == x->dev[0] ? 0 : d;
}

/* ---------------------------------------------------------------- engines */

static void eng_open(int i, int enforce)
{
	struct eng *x = &E[i];
	if (x->open)
		return;
	struct mcc_loader_opts lo;
	memset(&lo, 0, sizeof(lo));
	lo.struct_size = sizeof(lo);
	lo.engine = "fuzz";
	lo.ini_path = enforce ? ini_enforce : NULL;
	lo.module_dir = moddir;
	lo.ignore_env = 1;
	lo.log = fz_log;
	struct mcc_engine_opts o = {sizeof(o), MCC_ENGINE_TICK_POLL, &lo, fz_clock, NULL};
	mcc_engine *e = NULL;
	int rc = mcc_engine_open(&o, &e);
	tr("engine_open(%d, %s) = %d %p", i, enforce ? "enforce" : "off", rc, (void *)e);
	MCC_FUZZ_CHECK(e != NULL, "engine_open gave no engine (%d)", rc);
	memset(x, 0, sizeof(*x));
	x->e = e;
	x->open = 1;
	x->inst = mcc_engine_instance(e);
	x->enforce = mcc_instance_mode(x->inst) == MCC_MODE_ENFORCE;
	MCC_FUZZ_CHECK(rc == 0 || (rc == -EBUSY && !x->enforce), "engine_open = %d", rc);
	x->ops = mcc_engine_ops(e);
	x->ctx = mcc_engine_ctx(e);
	for (int d = 0; d < 2; d++) {
		struct mcc_device_desc_v1 dd = {sizeof(dd), (uint32_t)d, d ? "mlx5_1" : "mlx5_0", 1, 0,
		                                0, 0};
		EXPECT(x->ops->device_open(x->ctx, &dd, &x->dev[d]), 0, "device_open");
	}
	for (int k = 0; k < NK; k++)
		x->key_rt[k] = -1;
	for (int d = 0; d < 2; d++)
		for (int q = 0; q < NQ; q++)
			x->qp_rt[d][q] = -1;
}

static void permits_settle_on(int eng);

static void eng_close(int i)
{
	struct eng *x = &E[i];
	if (!x->open)
		return;
	permits_settle_on(-1); /* its lanes go: settle everything while lanes are open */
	tr("engine_close(%d)", i);
	/* lanes left open are the engine's to close (with a warning) */
	for (int l = 0; l < NL; l++)
		if (L[l].used && L[l].eng == i)
			L[l].open = 0;
	mcc_engine_close(x->e);
	x->open = 0;
	x->closed = 1;
	for (int r = 0; r < NRT; r++)
		if (R[r].used && R[r].eng == i)
			memset(&R[r], 0, sizeof(R[r])); /* route pointers die with it */
	/* lane handles die with their instance */
	for (int l = 0; l < NL; l++)
		if (L[l].used && !instance_alive(L[l].inst) && L[l].inst != NULL)
			memset(&L[l], 0, sizeof(L[l]));
}

/* A closed engine's pointer, when no open engine has its address. */
static mcc_engine *stale_engine(int i)
{
	if (!E[i].closed || E[i].open)
		return NULL;
	for (int j = 0; j < NE; j++)
		if (E[j].open && E[j].e == E[i].e)
			return NULL;
	return E[i].e;
}

static void eng_misuse(int i, uint8_t what)
{
	mcc_engine *e = stale_engine(i);
	if (!e)
		return;
	mcc_lane_ref ref;
	mcc_lane *lane;
	mcc_engine_route *r;
	struct mcc_engine_stats st;
	memset(&st, 0, sizeof(st));
	st.struct_size = sizeof(st);
	mcc_device *dev = (mcc_device *)&st; /* never read */
	tr("misuse of closed engine %d: %u", i, what % 9);
	switch (what % 9) {
	case 0:
		mcc_engine_close(e); /* closed twice: logged, ignored */
		break;
	case 1:
		EXPECT(mcc_engine_lane_open(e, MCC_LANE_POST, &ref, &lane), -EBADF, "lane_open");
		break;
	case 2:
		EXPECT(mcc_engine_lane_close(e, 1), -EBADF, "lane_close");
		break;
	case 3:
		EXPECT(mcc_engine_route_open(e, dev, "k", 1, 1, NULL, &r), -EBADF, "route_open");
		break;
	case 4:
		EXPECT(mcc_engine_route_lookup(e, "k", 1, &r), -EBADF, "route_lookup");
		break;
	case 5:
		EXPECT(mcc_engine_route_close(e, "k", 1), -EBADF, "route_close");
		break;
	case 6:
		EXPECT(mcc_engine_batch_begin(e, 1), -EBADF, "batch_begin");
		break;
	case 7:
		EXPECT(mcc_engine_get_stats(e, &st), -EBADF, "get_stats");
		break;
	default:
		EXPECT(mcc_engine_qp_remove(e, dev, 1), -EBADF, "qp_remove");
		break;
	}
}

/* ------------------------------------------------------------------ lanes */

static void lane_open(int slot, int eng)
{
	struct eng *x = &E[eng];
	struct lane *l = &L[slot];
	if (!x->open || (l->used && l->open))
		return;
	mcc_lane_ref ref;
	mcc_lane *cc;
	int rc = mcc_engine_lane_open(x->e, MCC_LANE_POST_POLL, &ref, &cc);
	tr("lane_open(%d, eng %d) = %d", slot, eng, rc);
	EXPECT(rc, 0, "lane_open");
	memset(l, 0, sizeof(*l));
	l->used = 1;
	l->eng = eng;
	l->ref = ref;
	l->cc = cc;
	l->open = 1;
	l->inst = x->inst;
}

static void lane_close(int slot, int via)
{
	struct lane *l = &L[slot];
	if (!l->used)
		return;
	struct eng *x = &E[l->eng];
	if (!x->open)
		return;
	if (via == 1 && l->open && x->enforce) {
		/* the policy's own close, twice: the second is a no-op */
		permits_settle_on(-1);
		tr("lane %d: policy lane_close twice after the SDK's", slot);
		EXPECT(mcc_engine_lane_close(x->e, l->ref), 0, "lane_close");
		x->ops->lane_close(x->ctx, l->cc);
		l->open = 0;
		return;
	}
	int other = (l->eng + 1) % NE;
	if (via == 2 && E[other].open && stale_engine(l->eng) == NULL) {
		int rc = mcc_engine_lane_close(E[other].e, l->ref);
		tr("lane_close(%d) by the other engine = %d", slot, rc);
		EXPECT(rc, l->open ? -EPERM : -ESTALE, "lane_close other");
		return;
	}
	if (l->open)
		permits_settle_on(-1);
	int rc = mcc_engine_lane_close(x->e, l->ref);
	tr("lane_close(%d) = %d", slot, rc);
	EXPECT(rc, l->open ? 0 : -ESTALE, "lane_close");
	EXPECT(mcc_engine_lane_get(x->e, l->ref) == NULL, 1, "lane_get after close");
	l->open = 0;
}

/* ----------------------------------------------------------------- routes */

static void route_open(int eng, int key, int d, uint64_t inc)
{
	struct eng *x = &E[eng];
	if (!x->open)
		return;
	int i = x->key_rt[key];
	int slot = i >= 0 ? i : fresh_rt();
	if (slot < 0)
		return;
	mcc_engine_route *r = NULL;
	struct mcc_route_desc_v1 rd = {sizeof(rd), 1, 0, 0, 0, NULL, 0, 0};
	int rc = mcc_engine_route_open(x->e, x->dev[d], keys[key], strlen(keys[key]), inc, &rd, &r);
	tr("route_open(eng %d, key %d, dev %d, inc %llu) = %d", eng, key, d,
	   (unsigned long long)inc, rc);
	if (i < 0) {
		EXPECT(rc, MCC_ENGINE_ROUTE_NEW, "route_open new");
		struct rt *n = &R[slot];
		memset(n, 0, sizeof(*n));
		n->used = 1;
		n->eng = eng;
		n->key = key;
		n->r = r;
		n->dev = x->dev[d];
		n->inc = inc;
		n->gen = 1;
		n->holds = 1;
		n->published = 1;
		x->key_rt[key] = slot;
	} else {
		struct rt *o = &R[i];
		MCC_FUZZ_CHECK(r == o->r, "route_open gave another route for an open key");
		EXPECT(rc, inc == o->inc ? MCC_ENGINE_ROUTE_SAME : MCC_ENGINE_ROUTE_RENEWED,
		       "route_open known");
		if (inc != o->inc)
			o->gen++;
		o->inc = inc;
		o->dev = x->dev[d];
		o->holds++;
	}
	EXPECT(mcc_engine_route_generation(r), R[slot].gen, "generation");
}

static void route_lookup(int eng, int key)
{
	struct eng *x = &E[eng];
	if (!x->open)
		return;
	mcc_engine_route *r = NULL;
	int rc = mcc_engine_route_lookup(x->e, keys[key], strlen(keys[key]), &r);
	tr("route_lookup(eng %d, key %d) = %d", eng, key, rc);
	int i = x->key_rt[key];
	EXPECT(rc, i >= 0 ? 0 : -ENOENT, "route_lookup");
	if (i >= 0) {
		MCC_FUZZ_CHECK(r == R[i].r, "lookup gave another route");
		R[i].holds++;
	}
}

static void route_close(int eng, int key)
{
	struct eng *x = &E[eng];
	if (!x->open)
		return;
	int i = x->key_rt[key];
	if (i >= 0)
		permits_settle_on(-1); /* permits are settled before a route closes */
	int rc = mcc_engine_route_close(x->e, keys[key], strlen(keys[key]));
	tr("route_close(eng %d, key %d) = %d", eng, key, rc);
	EXPECT(rc, i >= 0 ? 0 : -ENOENT, "route_close");
	if (i < 0)
		return;
	x->key_rt[key] = -1;
	R[i].published = 0;
	R[i].qps = 0; /* its QPs are unregistered */
	for (int d = 0; d < 2; d++)
		for (int q = 0; q < NQ; q++)
			if (x->qp_rt[d][q] == i)
				x->qp_rt[d][q] = -1;
	rt_maybe_free(i);
}

static void route_put(int i)
{
	if (!rt_touchable(i))
		return;
	struct rt *x = &R[i];
	if (x->holds == 1 && !x->published && !x->qps)
		permits_settle_on(-1); /* the last hold closes the policy route */
	int rc = mcc_engine_route_put(x->r);
	tr("route_put(rt %d: holds %u, %s) = %d", i, x->holds,
	   x->freed ? "freed" : x->published ? "published" : "closed", rc);
	if (x->freed || !x->holds) {
		EXPECT(rc, -EBADF, "put too many");
		EXPECT(mcc_engine_route_generation(x->r), x->freed ? 0 : x->gen, "generation");
		EXPECT(mcc_engine_route_cc(x->r) == NULL, x->freed, "cc");
		return;
	}
	EXPECT(rc, 0, "route_put");
	x->holds--;
	rt_maybe_free(i);
}

static void route_renew(int i, uint64_t inc)
{
	if (!rt_touchable(i))
		return;
	struct rt *x = &R[i];
	int64_t rc = mcc_engine_route_renew(E[x->eng].e, x->r, inc);
	tr("route_renew(rt %d) = %lld", i, (long long)rc);
	if (x->freed) {
		EXPECT(rc, -EBADF, "renew freed");
	} else if (!x->published) {
		EXPECT(rc, -ESTALE, "renew closed");
	} else {
		x->gen++;
		x->inc = inc;
		EXPECT(rc, x->gen, "renew");
	}
}

static void route_avoided(int i)
{
	if (!rt_touchable(i))
		return;
	struct rt *x = &R[i];
	uint64_t retry = 7;
	int rc = mcc_engine_route_avoided(E[x->eng].e, x->r, &retry);
	tr("route_avoided(rt %d) = %d, retry %llu", i, rc, (unsigned long long)retry);
	if (x->freed) {
		EXPECT(rc, -EBADF, "avoided freed");
	} else if (!x->published) {
		EXPECT(rc, -ESTALE, "avoided closed");
	} else {
		MCC_FUZZ_CHECK(rc == 0 || rc == 1, "route_avoided = %d", rc);
		MCC_FUZZ_CHECK(rc == 0 ? retry > 0 : retry == 0, "retry %llu", (unsigned long long)retry);
		if (rc == 1) /* the SDK gave the policy's probe a generation */
			x->gen++;
		EXPECT(mcc_engine_route_generation(x->r), x->gen, "generation");
	}
}

static void qp_add(int i, int q)
{
	if (!rt_touchable(i))
		return;
	struct rt *x = &R[i];
	struct eng *en = &E[x->eng];
	int d = x->dev == en->dev[0] ? 0 : 1;
	int rc = mcc_engine_qp_add(en->e, x->r, (uint32_t)q + 1);
	tr("qp_add(rt %d, qp %d) = %d", i, q + 1, rc);
	if (x->freed) {
		EXPECT(rc, -EBADF, "qp_add freed");
	} else if (!x->published) {
		EXPECT(rc, -ESTALE, "qp_add closed");
	} else if (en->qp_rt[d][q] >= 0) {
		EXPECT(rc, -EEXIST, "qp_add twice");
	} else {
		EXPECT(rc, 0, "qp_add");
		en->qp_rt[d][q] = i;
		x->qps++;
	}
}

static void qp_remove(int eng, int d, int q)
{
	struct eng *x = &E[eng];
	if (!x->open)
		return;
	int i = x->qp_rt[dix(x, d)][q];
	if (i >= 0 && R[i].qps == 1 && R[i].holds == 0 && !R[i].published)
		permits_settle_on(-1);
	int rc = mcc_engine_qp_remove(x->e, x->dev[d], (uint32_t)q + 1);
	tr("qp_remove(eng %d, dev %d, qp %d) = %d", eng, d, q + 1, rc);
	EXPECT(rc, i >= 0 ? 0 : -ENOENT, "qp_remove");
	if (i < 0)
		return;
	x->qp_rt[dix(x, d)][q] = -1;
	R[i].qps--;
	rt_maybe_free(i);
}

static void async_qp(int eng, int d, int q, int32_t type)
{
	struct eng *x = &E[eng];
	if (!x->open)
		return;
	struct mcc_engine_async ev = {sizeof(ev), type, MCC_ENGINE_EL_QP, 1, (uint32_t)q + 1, 0, 0};
	int rc = mcc_engine_async_event(x->e, x->dev[d], &ev);
	tr("async(eng %d, dev %d, qp %d, type %d) = %d", eng, d, q + 1, type, rc);
	EXPECT(rc, x->qp_rt[dix(x, d)][q] >= 0 ? x->enforce : -ENOENT, "async_event");
}

/* --------------------------------------------------------------- permits */

/* Settle every live permit on an open lane of its engine (any engine when
 * eng < 0), as a host does before closing a route, a lane or the engine. */
static void permits_settle_on(int eng)
{
	for (int p = 0; p < NP; p++) {
		if (!P[p].live)
			continue;
		struct rt *x = &R[P[p].rt];
		if (eng >= 0 && x->eng != eng)
			continue;
		int l;
		for (l = 0; l < NL; l++)
			if (L[l].used && L[l].open && L[l].inst == E[x->eng].inst)
				break;
		MCC_FUZZ_CHECK(l < NL, "a live permit and no open lane to settle it");
		EXPECT(E[x->eng].ops->release(L[l].cc, &P[p].p, P[p].p.bytes, MCC_REL_CANCELLED), 0,
		       "release");
		P[p].live = 0;
	}
}

static void acquire(int p, int l, int i, uint64_t bytes)
{
	if (P[p].live || !L[l].used || !rt_touchable(i) || R[i].freed)
		return;
	struct rt *x = &R[i];
	struct eng *en = &E[x->eng];
	if (L[l].inst != en->inst || !instance_alive(L[l].inst))
		return;
	int open = lane_ptr_open(L[l].cc);
	if (!open && !en->enforce)
		return; /* the null policy's lane is static: nothing to tell */
	int have_open = 0;
	for (int k = 0; k < NL; k++)
		have_open |= L[k].used && L[k].open && L[k].inst == en->inst;
	if (!have_open)
		return; /* nobody could settle it */
	P[p].p = (struct mcc_permit_v1)MCC_PERMIT_INIT;
	int rc = en->ops->try_acquire(L[l].cc, mcc_engine_route_cc(x->r), bytes,
	                              mcc_engine_route_generation(x->r), NULL, &P[p].p);
	tr("try_acquire(permit %d, lane %d%s, rt %d, %llu) = %d", p, l, open ? "" : " closed", i,
	   (unsigned long long)bytes, rc);
	if (!open) {
		EXPECT(rc, -EBADF, "try_acquire on a closed lane");
		return;
	}
	MCC_FUZZ_CHECK(rc == MCC_ADMIT || rc == MCC_DEFER || rc == MCC_AVOID, "try_acquire = %d",
	               rc);
	if (rc == MCC_ADMIT) {
		P[p].live = 1;
		P[p].rt = i;
	}
}

static void settle(int p, int l, int by_wc, int status)
{
	if (!P[p].live || !L[l].used)
		return;
	struct rt *x = &R[P[p].rt];
	struct eng *en = &E[x->eng];
	if (L[l].inst != en->inst || !instance_alive(L[l].inst))
		return;
	int open = lane_ptr_open(L[l].cc);
	if (!open && !en->enforce)
		return;
	uint64_t before = P[p].p.bytes;
	if (by_wc) {
		struct mcc_completion_v1 wc = {sizeof(wc), status, 0, P[p].p.generation, 0, 0, 0, 1, 0};
		en->ops->on_completion(L[l].cc, &P[p].p, &wc);
		tr("on_completion(permit %d, lane %d%s, status %d)", p, l, open ? "" : " closed",
		   status);
		EXPECT(P[p].p.bytes, open ? 0 : before, "completion settles");
	} else {
		int rc = en->ops->release(L[l].cc, &P[p].p, before, MCC_REL_NOT_POSTED);
		tr("release(permit %d, lane %d%s) = %d", p, l, open ? "" : " closed", rc);
		EXPECT(rc, open ? 0 : -EBADF, "release");
	}
	if (open)
		P[p].live = 0;
}

/* ------------------------------------------------------------------- misc */

static void stats(int eng, uint32_t size)
{
	struct eng *x = &E[eng];
	if (!x->open)
		return;
	unsigned char *b = malloc(size > 4 ? size : 4);
	if (!b)
		abort();
	memset(b, 0x5a, size > 4 ? size : 4);
	memcpy(b, &size, 4);
	int rc = mcc_engine_get_stats(x->e, (struct mcc_engine_stats *)(void *)b);
	EXPECT(rc, size >= MCC_ENGINE_STATS_V1_0_SIZE ? 0 : -EINVAL, "get_stats");
	free(b);
}

static void batch(int eng, int id, int begin)
{
	struct eng *x = &E[eng];
	if (!x->open)
		return;
	if (begin) {
		EXPECT(mcc_engine_batch_begin(x->e, (uint64_t)id + 1), x->batch[id] ? -EEXIST : 0,
		       "batch_begin");
		x->batch[id] = 1;
	} else {
		EXPECT(mcc_engine_batch_free(x->e, (uint64_t)id + 1), x->batch[id] ? 0 : -ENOENT,
		       "batch_free");
		x->batch[id] = 0;
	}
}

static void setup_failed(int eng, int i, uint32_t stage, int err)
{
	struct eng *x = &E[eng];
	if (!x->open)
		return;
	mcc_engine_route *r = NULL;
	int want_badf = 0;
	if (i >= 0 && rt_touchable(i) && R[i].eng == eng) {
		r = R[i].r;
		want_badf = R[i].freed;
	}
	int rc = mcc_engine_setup_failed(x->e, x->dev[0], r, stage, err, NULL);
	tr("setup_failed(eng %d, stage %u) = %d", eng, stage, rc);
	if (want_badf)
		EXPECT(rc, -EBADF, "setup_failed freed route");
	else if (stage < MCC_ENGINE_SETUP_CONNECT || stage > MCC_ENGINE_SETUP_SEGMENT_DESC)
		EXPECT(rc, -EINVAL, "setup_failed stage");
	else
		MCC_FUZZ_CHECK(rc >= 0, "setup_failed = %d", rc);
}

static void tick(int eng, uint32_t adv_us)
{
	struct eng *x = &E[eng];
	if (!x->open)
		return;
	now_ns += (uint64_t)adv_us * 1000u;
	int rc = mcc_engine_tick_if_due(x->e, mcc_engine_now(x->e));
	MCC_FUZZ_CHECK(rc == 0 || rc == 1, "tick_if_due = %d", rc);
	mcc_engine_room_notify(x->e);
}

/* --------------------------------------------------------------- driving */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (ini_enforce[0]) /* libFuzzer or the replay called it already */
		return 0;
	tracing = getenv("MCC_FUZZ_TRACE") != NULL;
	const char *dir = getenv("MCC_FUZZ_MODULE_DIR");
	if (!dir || !*dir)
		dir = getenv("MCC_TEST_MODULE_DIR");
	if (!dir || !*dir)
		dir = "modules/.libs";
	if (dir[0] != '/') {
		char cwd[2048];
		if (!getcwd(cwd, sizeof(cwd)))
			return 1;
		snprintf(moddir, sizeof(moddir), "%s/%s", cwd, dir);
	} else {
		snprintf(moddir, sizeof(moddir), "%s", dir);
	}
	/* Keep the module mapped for the whole run: its coverage counters must
	 * survive every instance's dlclose. */
	char so[4200];
	snprintf(so, sizeof(so), "%s/mcc-policy-aimd.so", moddir);
	if (!dlopen(so, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)) {
		fprintf(stderr, "fuzz_sdk: cannot load %s: %s (set MCC_FUZZ_MODULE_DIR)\n", so,
		        dlerror());
		return 1;
	}
	if (!mkdtemp(scratch))
		return 1;
	atexit(scratch_remove);
	snprintf(ini_enforce, sizeof(ini_enforce), "%s/enforce.ini", scratch);
	FILE *f = fopen(ini_enforce, "w");
	if (!f)
		return 1;
	/* a small evidence table: an instance per input stays cheap */
	fputs("[policy]\nmode = enforce\n[controller]\nevidence_tasks = 64\n", f);
	fclose(f);
	chmod(ini_enforce, 0600);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	if (!ready) {
		if (LLVMFuzzerInitialize(NULL, NULL) != 0)
			abort();
		ready = 1;
	}
	struct mcc_fuzz_in in = {data, size};
	memset(E, 0, sizeof(E));
	memset(R, 0, sizeof(R));
	memset(L, 0, sizeof(L));
	memset(P, 0, sizeof(P));
	for (int steps = 0; in.left && steps < STEPS_MAX; steps++) {
		uint8_t op = mcc_fuzz_u8(&in), a = mcc_fuzz_u8(&in), b = mcc_fuzz_u8(&in);
		int eng = a & 1;
		switch (op % 20) {
		case 0:
			eng_open(eng, !(b & 3) ? 0 : 1);
			break;
		case 1:
			if ((b & 7) == 0)
				eng_close(eng);
			break;
		case 2:
			eng_misuse(eng, b);
			break;
		case 3:
			lane_open(b % NL, eng);
			break;
		case 4:
			lane_close(b % NL, (a >> 1) % 3);
			break;
		case 5:
		case 6:
			route_open(eng, b % NK, (a >> 1) & 1, (a >> 2) & 1 ? 0x1000 : 0x2000 + (b >> 4));
			break;
		case 7:
			route_lookup(eng, b % NK);
			break;
		case 8:
			route_close(eng, b % NK);
			break;
		case 9:
		case 10:
			route_put(b % NRT);
			break;
		case 11:
			if (a & 1)
				route_avoided(b % NRT);
			else
				route_renew(b % NRT, (uint64_t)a << 8);
			break;
		case 12:
			if (a & 2)
				qp_add(b % NRT, (a >> 2) % NQ);
			else
				qp_remove(eng, (a >> 2) & 1, b % NQ);
			break;
		case 13:
			async_qp(eng, (a >> 1) & 1, b % NQ, (int32_t)(b >> 2) % 20);
			break;
		case 14:
			acquire(a % NP, b % NL, (a >> 2) % NRT, 1 + (uint64_t)b * 4096);
			break;
		case 15:
			settle(a % NP, b % NL, (a >> 2) & 1, (b >> 4) == 1 ? 12 : 0);
			break;
		case 16:
			stats(eng, (uint32_t)b % (MCC_ENGINE_STATS_V1_0_SIZE + 17));
			break;
		case 17:
			batch(eng, b & 3, (b >> 2) & 1);
			break;
		case 18:
			setup_failed(eng, (int)(b % (NRT + 1)) - 1, (uint32_t)(a >> 1) % 5, -(int)(b % 120));
			break;
		default:
			tick(eng, (uint32_t)b * 100u);
			break;
		}
	}
	/* the end of the input: every engine closed, nothing left (LSan) */
	for (int i = 0; i < NE; i++)
		eng_close(i);
	return 0;
}
