/* SPDX-License-Identifier: MIT */
/*
 * mcc_verbs_run - a TE or TENT host stub on the real-verbs fabric backend
 * (host_stubs/fabric/verbs.h), under the threaded executor, moving real
 * payloads between real RDMA devices (Soft-RoCE in the test guests).
 *
 * Both machines live in this process: node 0 runs the host engine (its
 * rails are the first group of --devices), node 1 is the passive target
 * (second group): its buffer is registered on each of its devices and
 * published as segment 1. The application keeps --concurrency tasks of
 * --task-bytes in flight, verifies every completed task byte for byte,
 * queries the caller-visible congestion state of every task (in flight and
 * before freeing it), samples the policy's device and route domains
 * (domain_stats), runs fault commands at given times (the Soft-RoCE
 * harness's "sr-mon set_link nX off" cable pull, "ip link set ethX down",
 * "tc qdisc add ... tbf ..."), and checks a test's assertions at the end.
 *
 * Output (grep-friendly, see tests/softroce/README.md):
 *   WC status=IBV_WC_<NAME> vendor_err=0x.. dev=rxeN ...   every error WC
 *   WC status=IBV_WC_SUCCESS count=N dev=rxeN              summary per device
 *   ASYNC IBV_EVENT_<NAME> port=.. dev=rxeN ...            every async event
 *   STATE t=.. dom=route c0>n1.d0 state=.. window=.. ...   domain state changes
 *   TASK t=.. task=#.. state=.. reason=.. ...              task state changes
 *   FAULT t=.. cmd='...'                                   fault/heal commands
 *   CHECK ok: ... / FAIL: ...                              assertions
 *   RESULT verbs ...                                       measurements
 *   RESULT PASS | RESULT FAIL                              verdict (exit 0 / 1)
 *
 * Usage: mcc_verbs_run [options]   (--help lists them)
 */
#include "../fabric/model.h"
#include "../fabric/verbs.h"
#include "../sim/exec.h"
#include "../common/host_engine.h"
#include "mcc_hooks.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAXDEV MCC_FAB_VERBS_MAX_DEVS
#define MAXSLOT 64
#define MAXSTEP 16
#define MAXSAMPLES 20000
#define LATCAP (1u << 18)
#define SEG 1 /* the target segment = node 1 */
#define NSTATE 5
#define NWC 32

enum { ENG_TE = 0, ENG_TENT = 1 };
enum {
	CHK_NONE = 0, CHK_HEALTHY, CHK_PEER_CUT, CHK_BLACKHOLE, CHK_BLACKHOLE_LOCAL, CHK_LOCAL_DOWN,
	CHK_TBF, CHK_GRAY, CHK_GRAY_LOCAL, CHK_DUPREORDER, CHK_FLAP, CHK_BOTH_DOWN
};

struct opts {
	int engine;
	int model; /* --fabric model: the in-process fabric model instead of verbs */
	const char *devices, *ini, *module_dir, *expect_mode, *expect_module, *label;
	int opcode;
	uint64_t task_bytes, bytes;
	uint32_t conc;
	double duration, max_duration, drain_s, stall_s, after_s;
	int until_healthy;
	uint32_t sample_ms;
	uint32_t epoch_us; /* the ini's epoch_us (both-down check) */
	int check;
	uint32_t watch;
	int ib_timeout, ib_retry, poll;
	uint32_t workers, qps, lanes, rail_pause_s, rail_threshold, recovery_ms, retry, max_wr;
	int quiet;
	struct {
		double at;
		int after; /* 0: since the start; 'q': after the watched route's first
		            * QUARANTINED; 'e': after the first error WC or PORT_ERR;
		            * 'p': after every earlier step finished (steps_end) */
		const char *cmd;
	} step[MAXSTEP];
	uint32_t nsteps;
};

struct slot { /* W.slot_mu */
	int busy;
	uint64_t batch, seq;
	uint64_t t_submit;
	int last_state, last_reason; /* last in-flight query (-1 none) */
	uint64_t lu_since; /* first of the in-flight queries in a row that read
	                    * LONG_UNAVAILABLE (0: the last one did not) */
};

/* one sample of a domain */
struct dsample {
	uint64_t t;
	uint8_t state;
	uint32_t gen, hard;
	uint64_t window, inflight, drain_us, quarantines, probes, cuts, completed, errors, cooldown;
};

struct dom {
	char name[64];
	int kind; /* MCC_DOMAIN_DEVICE / MCC_DOMAIN_ROUTE */
	uint32_t c, d; /* local device (ctx) / peer device */
	int seen, gone; /* gone: no longer owned here (TE handed the route to another NIC) */
	struct mcc_domain_stats_v1 last;
	struct dsample *s;
	uint32_t ns;
};

struct lat {
	uint64_t t, lat;
	uint32_t dev;
};

struct world {
	struct opts o;
	mcc_exec *ex;
	mcc_fab_verbs *v;
	mcc_fab_model *model;
	mcc_actor *fab_actor;
	mcc_host_fab_tap *tap; /* hard-error WCs by route and endpoint generation */
	char names[2][MAXDEV][32];
	struct mcc_fab_handle fab;
	uint32_t ndev;
	struct mcc_host_engine eng; /* eng.te or eng.tent */
	mcc_actor *app, *sampler;
	/* node 1: passive target memory */
	mcc_fab_dev *rdev[MAXDEV];
	struct mcc_fab_mr rmr[MAXDEV];
	uint8_t *rbuf, *lbuf;
	size_t blen;
	pthread_mutex_t slot_mu; /* slots: the app submits/frees, the sampler queries */
	struct slot slot[MAXSLOT];
	/* workload */
	/* the app's counters: written under slot_mu (the sampler reads them so) */
	uint64_t seq, bytes_submitted, bytes_verified, bytes_bad, tasks_ok, tasks_failed;
	uint64_t t_first_submit, t_last_done;
	_Atomic int stopping; /* set by the sampler, read by the app */
	_Atomic int finished;
	uint64_t t_stop_reason;
	/* task states: final (at completion) and seen in flight */
	uint64_t final_state[4], inflight_seen[4], reason_seen[MCC_REASON_COUNT_];
	uint64_t post_recovery_tasks, post_recovery_normal, failed_normal;
	/* trace */
	_Atomic uint64_t wc[2][MAXDEV][NWC];
	_Atomic uint64_t first_err_ns;
	_Atomic uint64_t first_fault_ns; /* first error WC or PORT_ERR (node 0 or 1) */
	/* WRs outstanding on the watched device when its first PORT_ERR was
	 * read (before the host acts on it); -1 before */
	_Atomic int64_t porterr_outstanding;
	pthread_mutex_t out_mu;
	struct {
		uint64_t t;
		int type;
		uint32_t node, dev, port;
	} ev[256];
	_Atomic uint32_t nev;
	struct lat *lat;
	_Atomic uint32_t nlat;
	/* fault steps */
	uint64_t t0; /* start of the transfer phase */
	pid_t pid[MAXSTEP];
	char rsp[MAXSTEP][PATH_MAX]; /* mon: steps: the answer file */
	int step_done[MAXSTEP];
	uint64_t step_t[MAXSTEP], step_end[MAXSTEP]; /* started / finished (took effect) */
	uint32_t next_step;
	/* domains */
	struct dom dom[MAXDEV + MAXDEV * MAXDEV];
	uint32_t ndom;
	uint64_t last_timeline;
	_Atomic uint64_t recovered_at; /* the watched route HEALTHY after the last step */
	uint64_t t_quarantined; /* first QUARANTINED sample of the watched route */
	uint64_t wd_wcs, wd_t;  /* stall watchdog */
	/* fault checks (gray-local, dupreorder, flap, both-down): between the
	 * first step and the last, the longest stretch without a completed
	 * task and the in-flight reads of LONG_UNAVAILABLE; the first sample
	 * in which every route was QUARANTINED and the first LONG_UNAVAILABLE
	 * read from then on */
	uint64_t f_last_done, f_gap, f_lu_reads, f_t_allq, f_t_lu;
	uint64_t f_lu_run; /* longest time a task read LONG_UNAVAILABLE in a row */
	int f_allq;
	_Atomic int fails;
	char mode[16], module[64];
};

static struct world W;

/* ---------------------------------------------------------------- output */

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

static uint64_t now_ns(void)
{
	return mcc_exec_now(W.ex);
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&W.out_mu);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	pthread_mutex_unlock(&W.out_mu);
	va_end(ap);
}

static void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int ok, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!ok)
		W.fails++;
	say("%s %s", ok ? "CHECK ok:" : "FAIL:", buf);
}

static const char *state_name(int s)
{
	static const char *const n[] = {"HEALTHY", "CONGESTED", "SUSPECT", "QUARANTINED", "PROBING"};
	return s >= 0 && s < NSTATE ? n[s] : "?";
}

static const char *task_state_name(int s)
{
	static const char *const n[] = {"NORMAL", "CONGESTED", "LONG_UNAVAILABLE", "UNKNOWN"};
	return s >= 0 && s < 4 ? n[s] : "?";
}

static const char *reason_name(int r)
{
	static const char *const n[] = {"none", "byte_window", "receiver_pressure",
	                                "congestion_feedback", "route_timeout", "path_quarantined",
	                                "probe_failed", "no_usable_path", "local_configuration",
	                                "remote_metadata", "derived_flush", "fatal",
	                                "generation_changed", "poller_stall", "cancelled",
	                                "control_plane", "no_record"};
	_Static_assert(sizeof(n) / sizeof(n[0]) == MCC_REASON_COUNT_, "a name per reason");
	return r >= 0 && r < (int)(sizeof(n) / sizeof(n[0])) ? n[r] : "?";
}

static const char *dev_name(uint32_t node, uint32_t dev)
{
	return node < 2 && dev < MAXDEV && W.names[node][dev][0] ? W.names[node][dev] : "?";
}

/* ----------------------------------------------------------------- trace */

static void on_wc(void *arg, uint32_t node, uint32_t dev, const struct mcc_fab_wc *wc,
                  uint64_t lat_ns)
{
	(void)arg;
	uint64_t t = now_ns();
	if (node < 2 && dev < MAXDEV)
		atomic_fetch_add_explicit(&W.wc[node][dev][(uint32_t)wc->status % NWC], 1,
		                          memory_order_relaxed);
	if (wc->status == IBV_WC_SUCCESS) {
		uint32_t i = atomic_fetch_add_explicit(&W.nlat, 1, memory_order_relaxed);
		if (i < LATCAP && lat_ns) {
			W.lat[i].t = t;
			W.lat[i].lat = lat_ns;
			W.lat[i].dev = dev;
		}
		return;
	}
	uint64_t z = 0;
	atomic_compare_exchange_strong(&W.first_err_ns, &z, t);
	z = 0;
	atomic_compare_exchange_strong(&W.first_fault_ns, &z, t);
	say("WC status=%s vendor_err=0x%x dev=%s node=%u qp=%u lat_ms=%.1f t=%.3f",
	    mcc_fab_verbs_wc_status_name(wc->status), wc->vendor_err, dev_name(node, dev), node,
	    wc->qp_num, (double)lat_ns / 1e6, secs(t));
}

static void on_async(void *arg, uint32_t node, uint32_t dev, const struct mcc_fab_async_event *ev)
{
	(void)arg;
	uint64_t t = now_ns();
	uint32_t i = atomic_fetch_add(&W.nev, 1);
	if (i < 256) {
		W.ev[i].t = t;
		W.ev[i].type = ev->event_type;
		W.ev[i].node = node;
		W.ev[i].dev = dev;
		W.ev[i].port = ev->port_num;
	}
	if (ev->event_type == IBV_EVENT_PORT_ERR) {
		uint64_t z = 0;
		atomic_compare_exchange_strong(&W.first_fault_ns, &z, t);
		int64_t none = -1;
		if (node == 0 && dev == W.o.watch && W.v)
			atomic_compare_exchange_strong(
			        &W.porterr_outstanding, &none,
			        (int64_t)mcc_fab_verbs_dev_outstanding(W.v, node, dev));
	}
	say("ASYNC %s port=%u dev=%s node=%u qp=%u t=%.3f", mcc_fab_verbs_event_name(ev->event_type),
	    ev->port_num, dev_name(node, dev), node, ev->qp_num, secs(t));
}

/* --------------------------------------------------------------- engines */

static void host_stats_line(void)
{
	if (W.o.engine == ENG_TE) {
		struct te_stats s;
		te_get_stats(W.eng.te, &s);
		say("STATS te posted=%" PRIu64 " completed=%" PRIu64 " failed=%" PRIu64
		    " retried=%" PRIu64 " wc_errors=%" PRIu64 " flushes=%" PRIu64 " post_rejects=%" PRIu64
		    " defers=%" PRIu64 " avoids=%" PRIu64 " admits=%" PRIu64 " eps_created=%" PRIu64
		    " eps_deleted=%" PRIu64 " rail_pauses=%" PRIu64 " handoffs=%" PRIu64
		    " rebinds=%" PRIu64 " async=%" PRIu64 " reclaimed=%" PRIu64 " permits_live=%" PRId64,
		    s.slices_posted, s.slices_completed, s.slices_failed, s.slices_retried, s.wc_errors,
		    s.flushes, s.post_rejects, s.defers, s.avoids, s.admits, s.endpoints_created,
		    s.endpoints_deleted, s.rail_pauses, s.handoffs, s.rebinds, s.async_events,
		    s.reclaimed, s.permits_live);
	} else {
		struct tent_stats s;
		tent_get_stats(W.eng.tent, &s);
		say("STATS tent posted=%" PRIu64 " completed=%" PRIu64 " failed=%" PRIu64
		    " retried=%" PRIu64 " wc_errors=%" PRIu64 " flushes=%" PRIu64 " timeouts=%" PRIu64
		    " post_rejects=%" PRIu64 " defers=%" PRIu64 " avoids=%" PRIu64 " admits=%" PRIu64
		    " eps_created=%" PRIu64 " eps_reset=%" PRIu64 " rail_pauses=%" PRIu64
		    " async=%" PRIu64 " reclaimed=%" PRIu64 " permits_live=%" PRId64,
		    s.slices_posted, s.slices_completed, s.slices_failed, s.slices_retried, s.wc_errors,
		    s.flushes, s.timeouts, s.post_rejects, s.defers, s.avoids, s.admits,
		    s.endpoints_created, s.endpoints_reset, s.rail_pauses, s.async_events, s.reclaimed,
		    s.permits_live);
	}
	struct mcc_fab_verbs_stats vs;
	if (!W.v)
		return;
	mcc_fab_verbs_stats(W.v, &vs);
	say("STATS verbs wrs=%" PRIu64 " post_errors=%" PRIu64 " wcs=%" PRIu64
	    " wc_errors=%" PRIu64 " async=%" PRIu64 " qps=%" PRIu64 " passive_qps=%" PRIu64
	    " connects=%" PRIu64 " reconnects=%" PRIu64 " resets=%" PRIu64 " destroys=%" PRIu64,
	    vs.wrs_posted, vs.post_errors, vs.wcs, vs.wc_errors, vs.async_events, vs.qps_created,
	    vs.passive_qps, vs.connects, vs.reconnects, vs.resets, vs.destroys);
}

static void on_task_done(void *arg, uint64_t batch, uint64_t task)
{
	(void)arg;
	(void)batch;
	(void)task;
	mcc_exec_wake(W.app, now_ns());
}

static int get_segment(void *arg, uint32_t seg, struct mcc_seg_desc *out)
{
	(void)arg;
	if (seg != SEG)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->node = SEG;
	out->ndev = W.ndev;
	out->nports = 1;
	out->base = (uint64_t)(uintptr_t)W.rbuf;
	out->length = W.blen;
	for (uint32_t d = 0; d < W.ndev; d++)
		out->rkey[d] = W.rmr[d].rkey;
	return 0;
}

/* ------------------------------------------------------------ workload */

static void fill(uint8_t *p, size_t n, uint64_t seq)
{
	uint64_t x = seq * 0x9e3779b97f4a7c15ull ^ 0x5eed5eed5eed5eedull;
	for (size_t i = 0; i + 8 <= n; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
}

static int submit(uint32_t i)
{
	struct slot *s = &W.slot[i];
	size_t off = (size_t)i * W.o.task_bytes;
	uint8_t *src = W.lbuf + off, *dst = W.rbuf + off;
	s->seq = ++W.seq;
	if (W.o.opcode == TE_OPCODE_WRITE) {
		fill(src, W.o.task_bytes, s->seq);
		memset(dst, 0xa5, W.o.task_bytes);
	} else {
		fill(dst, W.o.task_bytes, s->seq);
		memset(src, 0xa5, W.o.task_bytes);
	}
	/* TENT's medium priority, as its bench submits */
	const struct mcc_host_xfer x = {W.o.opcode, src, SEG, off, W.o.task_bytes, TENT_PRIO_MEDIUM};
	int rc = mcc_host_eng_submit(&W.eng, &x, &s->batch);
	if (rc) {
		say("FAIL: submit of task #%" PRIu64 " failed: %s", s->seq, strerror(-rc));
		W.fails++;
		return rc;
	}
	s->t_submit = now_ns();
	if (!W.t_first_submit)
		W.t_first_submit = s->t_submit;
	s->last_state = -1;
	s->last_reason = -1;
	s->lu_since = 0;
	s->busy = 1;
	W.bytes_submitted += W.o.task_bytes;
	return 0;
}

static void note_task_state(struct slot *s, const struct mcc_task_detail_v1 *d, const char *when)
{
	int st = (int)d->state, rs = (d->observed & MCC_OBS_REASON) ? (int)d->reason : 0;
	if (st >= 0 && st < 4 && st != s->last_state)
		W.inflight_seen[st]++;
	if (rs > 0 && rs < MCC_REASON_COUNT_ && rs != s->last_reason)
		W.reason_seen[rs]++;
	if (st == s->last_state && rs == s->last_reason)
		return;
	s->last_state = st;
	s->last_reason = rs;
	/* quiet: only evidence (not NORMAL, nor UNKNOWN before any evidence) */
	if (!W.o.quiet || (st != MCC_TASK_NORMAL && (st != MCC_TASK_UNKNOWN || rs || d->observed)))
		say("TASK t=%.3f task=#%" PRIu64 " %s state=%s reason=%s resolved=%u scope=%u path=%s "
		    "gen=%u attempt=%u wc_status=%s window=%" PRIu64 " inflight=%" PRIu64
		    " cooldown_ms=%" PRIu64,
		    secs(now_ns()), s->seq, when, task_state_name(st), reason_name(rs), d->resolved,
		    d->scope, (d->observed & MCC_OBS_PATH) ? d->path : "-", d->generation, d->attempt,
		    (d->observed & MCC_OBS_WC) ? mcc_fab_verbs_wc_status_name(d->wc_status) : "-",
		    d->window_bytes, d->inflight_bytes, d->cooldown_ms);
}

static void finish_task(struct slot *s, uint32_t i)
{
	int st = mcc_host_eng_status(&W.eng, s->batch, NULL);
	struct mcc_task_detail_v1 d;
	mcc_host_eng_detail(&W.eng, s->batch, &d);
	note_task_state(s, &d, st == MCC_HOST_DONE ? "done" : "failed");
	if (d.state < 4)
		W.final_state[d.state]++;
	if (W.recovered_at && s->t_submit >= W.recovered_at) {
		W.post_recovery_tasks++;
		W.post_recovery_normal += d.state == MCC_TASK_NORMAL;
	}
	size_t off = (size_t)i * W.o.task_bytes;
	if (st == MCC_HOST_DONE) {
		if (!memcmp(W.lbuf + off, W.rbuf + off, W.o.task_bytes)) {
			W.bytes_verified += W.o.task_bytes;
		} else {
			W.bytes_bad += W.o.task_bytes;
			say("FAIL: task #%" PRIu64 " completed but its payload differs", s->seq);
		}
		W.tasks_ok++;
	} else {
		W.tasks_failed++;
		W.failed_normal += d.state == MCC_TASK_NORMAL;
		if (W.o.check != CHK_BOTH_DOWN || !W.o.quiet)
			say("%s task #%" PRIu64 " ended FAILED (engine status), caller state %s",
			    W.o.check == CHK_LOCAL_DOWN || W.o.check == CHK_BOTH_DOWN ? "INFO" : "FAIL:",
			    s->seq, task_state_name((int)d.state));
	}
	W.t_last_done = now_ns();
	if (st == MCC_HOST_DONE && W.o.nsteps && W.step_t[0]) { /* fault checks: the stall */
		uint64_t t = W.t_last_done, from = W.f_last_done > W.step_t[0] ? W.f_last_done : W.step_t[0];
		int ended = W.step_t[W.o.nsteps - 1] && t > W.step_t[W.o.nsteps - 1];
		uint64_t to = ended ? W.step_t[W.o.nsteps - 1] : t;
		if (to > from && to - from > W.f_gap)
			W.f_gap = to - from;
		W.f_last_done = t;
	}
	int rc = mcc_host_eng_free(&W.eng, s->batch);
	if (rc)
		say("INFO free_batch(#%" PRIu64 ") = %d", s->seq, rc);
	s->busy = 0;
}

static uint64_t app_step(void *arg, uint64_t now)
{
	(void)arg;
	uint32_t busy = 0;
	pthread_mutex_lock(&W.slot_mu);
	for (uint32_t i = 0; i < W.o.conc; i++) {
		struct slot *s = &W.slot[i];
		if (s->busy && mcc_host_eng_status(&W.eng, s->batch, NULL) != MCC_HOST_PENDING)
			finish_task(s, i);
		else if (s->busy && MCC_CC_COMPILED_IN) { /* the caller's query in flight */
			struct mcc_task_detail_v1 d;
			mcc_host_eng_detail(&W.eng, s->batch, &d);
			note_task_state(s, &d, "inflight");
		}
		if (!s->busy && !W.stopping &&
		    (!W.o.bytes || W.bytes_submitted + W.o.task_bytes <= W.o.bytes))
			submit(i);
		busy += s->busy != 0;
	}
	pthread_mutex_unlock(&W.slot_mu);
	if (W.stopping && !busy) {
		atomic_store(&W.finished, 1);
		return MCC_EXEC_PARK;
	}
	return now + 2000000;
}

/* ---------------------------------------------------------------- domains */

static void dom_add(int kind, uint32_t c, uint32_t d)
{
	struct dom *x = &W.dom[W.ndom++];
	x->kind = kind;
	x->c = c;
	x->d = d;
	if (kind == MCC_DOMAIN_DEVICE)
		snprintf(x->name, sizeof(x->name), "dev c%u(%s)", c, dev_name(0, c));
	else
		snprintf(x->name, sizeof(x->name), "route c%u>n1.d%u(%s>%s)", c, d, dev_name(0, c),
		         dev_name(1, d));
	x->s = calloc(MAXSAMPLES, sizeof(*x->s));
}

static void dom_sample(struct dom *x, uint64_t t)
{
	struct mcc_domain_stats_v1 st;
	int rc = x->kind == MCC_DOMAIN_DEVICE ? mcc_host_eng_dstats(&W.eng, x->c, -1, 0, &st)
	                                      : mcc_host_eng_dstats(&W.eng, x->c, SEG, (int)x->d, &st);
	if (rc) {
		if (x->seen && !x->gone)
			say("STATE t=%.3f dom=%s gone: the route domain now belongs to another local NIC",
			    secs(t), x->name);
		x->gone = x->seen;
		return;
	}
	x->gone = 0;
	if (x->s && x->ns < MAXSAMPLES) {
		struct dsample *p = &x->s[x->ns++];
		p->t = t;
		p->state = (uint8_t)st.state;
		p->gen = st.generation;
		p->hard = st.hard_errors;
		p->window = st.window_bytes;
		p->inflight = st.inflight_bytes;
		p->drain_us = st.drain_us;
		p->quarantines = st.quarantines;
		p->probes = st.probes;
		p->cuts = st.window_cuts;
		p->completed = st.completed_bytes;
		p->errors = st.errors;
		p->cooldown = st.cooldown_ms;
	}
	int changed = !x->seen || st.state != x->last.state || st.generation != x->last.generation ||
	              st.hard_errors != x->last.hard_errors || st.quarantines != x->last.quarantines;
	if (changed)
		say("STATE t=%.3f dom=%s state=%s gen=%u window=%" PRIu64 " inflight=%" PRIu64
		    " hard_errors=%u errors=%" PRIu64 " cooldown_ms=%" PRIu64 " drain_us=%" PRIu64
		    " quarantines=%" PRIu64 " probes=%" PRIu64 " cuts=%" PRIu64 " admits=%" PRIu64
		    " defers=%" PRIu64 " avoids=%" PRIu64 " would_defer=%" PRIu64 " completed=%" PRIu64,
		    secs(t), x->name, state_name((int)st.state), st.generation, st.window_bytes,
		    st.inflight_bytes, st.hard_errors, st.errors, st.cooldown_ms, st.drain_us,
		    st.quarantines, st.probes, st.window_cuts, st.admits, st.defers, st.avoids,
		    st.would_defer, st.completed_bytes);
	x->last = st;
	x->seen = 1;
}

static struct dom *route_dom(uint32_t c, uint32_t d)
{
	for (uint32_t i = 0; i < W.ndom; i++)
		if (W.dom[i].kind == MCC_DOMAIN_ROUTE && W.dom[i].c == c && W.dom[i].d == d)
			return &W.dom[i];
	return NULL;
}

/* ---------------------------------------------------------------- sampler */

/* "model:link|port NODE DEV up|down": a fault of the fabric model */
static int model_step(const char *cmd)
{
	char what[16], updown[16];
	unsigned node, dev;
	if (sscanf(cmd, "model:%15s %u %u %15s", what, &node, &dev, updown) != 4 || !W.model)
		return -EINVAL;
	int up = !strcmp(updown, "up");
	if (!strcmp(what, "link"))
		mcc_fab_fault_link(W.model, node, dev, 1, up);
	else if (!strcmp(what, "port"))
		mcc_fab_fault_port(W.model, node, dev, 1, up);
	else
		return -EINVAL;
	return 0;
}

/* "mon:CMD": a QEMU monitor command through the Soft-RoCE harness's request
 * files (the protocol of tests/softroce/guest/sr-mon, done here without a
 * shell, which takes seconds to start in a busy TCG guest): write
 * "<vm> <cmd>" to $SR_CTL/req.<id> (default /mnt/ctl), the host's relay
 * answers in rsp.<id>. VM: $SR_VM. */
static int mon_step(uint32_t k, const char *cmd)
{
	const char *ctl = getenv("SR_CTL"), *vm = getenv("SR_VM");
	char tmp[PATH_MAX + 8], req[PATH_MAX];
	if (!ctl || !*ctl)
		ctl = "/mnt/ctl";
	if (!vm || !*vm)
		return -EINVAL;
	snprintf(W.rsp[k], sizeof(W.rsp[k]), "%s/rsp.%s.verbs%d.%u", ctl, vm, (int)getpid(), k);
	snprintf(req, sizeof(req), "%s/req.%s.verbs%d.%u", ctl, vm, (int)getpid(), k);
	snprintf(tmp, sizeof(tmp), "%s.tmp", req);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fprintf(f, "%s %s\n", vm, cmd);
	if (fclose(f) || rename(tmp, req))
		return -errno;
	return 0;
}

static void run_step(uint32_t k, uint64_t t)
{
	if (!strncmp(W.o.step[k].cmd, "mon:", 4)) {
		int rc = mon_step(k, W.o.step[k].cmd + 4);
		W.step_t[k] = t;
		say("FAULT t=%.3f step=%u cmd='%s'%s", secs(t), k, W.o.step[k].cmd,
		    rc ? " (cannot write the request: SR_VM/SR_CTL)" : "");
		if (rc) {
			W.fails++;
			W.step_done[k] = 1;
		}
		return;
	}
	if (!strncmp(W.o.step[k].cmd, "model:", 6)) {
		int rc = model_step(W.o.step[k].cmd);
		W.step_t[k] = W.step_end[k] = t;
		W.step_done[k] = 1;
		say("FAULT t=%.3f step=%u cmd='%s'%s", secs(t), k, W.o.step[k].cmd, rc ? " (bad)" : "");
		if (rc)
			W.fails++;
		return;
	}
	const char *argv[] = {"/bin/sh", "-c", W.o.step[k].cmd, NULL};
	pid_t pid = 0;
	/* posix_spawn: no fork of a process holding RDMA registrations */
	int rc = posix_spawn(&pid, "/bin/sh", NULL, NULL, (char *const *)argv, environ);
	W.step_t[k] = t;
	if (rc) {
		say("FAIL: cannot run step %u '%s': %s", k, W.o.step[k].cmd, strerror(rc));
		W.fails++;
		W.step_done[k] = 1;
		return;
	}
	W.pid[k] = pid;
	say("FAULT t=%.3f step=%u cmd='%s'", secs(t), k, W.o.step[k].cmd);
}

static void reap_steps(uint64_t t)
{
	for (uint32_t k = 0; k < W.next_step; k++) {
		if (!W.step_done[k] && W.rsp[k][0]) { /* monitor request answered? */
			FILE *f = fopen(W.rsp[k], "r");
			if (!f)
				continue;
			char line[256] = "";
			if (!fgets(line, sizeof(line), f))
				line[0] = 0;
			fclose(f);
			unlink(W.rsp[k]);
			line[strcspn(line, "\n")] = 0;
			W.step_done[k] = 1;
			W.step_end[k] = t;
			say("FAULT-DONE t=%.3f step=%u monitor answered after %.2f s%s%s", secs(t), k,
			    secs(t - W.step_t[k]), line[0] ? ": " : "", line);
			if (!strncmp(line, "ERROR", 5)) {
				say("FAIL: monitor request '%s': %s", W.o.step[k].cmd, line);
				W.fails++;
			}
			continue;
		}
		if (W.step_done[k] || !W.pid[k])
			continue;
		int status = 0;
		pid_t r = waitpid(W.pid[k], &status, WNOHANG);
		if (r == W.pid[k]) {
			W.step_done[k] = 1;
			W.step_end[k] = t;
			int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
			say("FAULT-DONE t=%.3f step=%u rc=%d took_s=%.2f", secs(t), k, rc,
			    secs(t - W.step_t[k]));
			if (rc) {
				say("FAIL: step %u '%s' exited with status %d", k, W.o.step[k].cmd, rc);
				W.fails++;
			}
		}
	}
}

/* When the steps before k had all finished (their commands exited: a tc
 * command in a busy guest can take seconds to take effect); 0 while one
 * still runs. */
static uint64_t steps_end(uint32_t k)
{
	uint64_t t = W.t0;
	for (uint32_t i = 0; i < k; i++) {
		if (!W.step_done[i])
			return 0;
		if (W.step_end[i] > t)
			t = W.step_end[i];
	}
	return t;
}

static int steps_all_done(void)
{
	for (uint32_t k = 0; k < W.o.nsteps; k++)
		if (!W.step_done[k])
			return 0;
	return 1;
}

/* Under enforce, the sampled route c<wd> > n1.d<wd> whose controller state
 * a check reads; NULL otherwise (a failed check when it was not sampled). */
static struct dom *enforce_route(uint32_t wd)
{
	if (!MCC_CC_COMPILED_IN || strcmp(W.mode, "enforce"))
		return NULL;
	struct dom *r = route_dom(wd, wd);
	if (!r || !r->ns) {
		check(0, "route c%u>n1.d%u was sampled", wd, wd);
		return NULL;
	}
	return r;
}

/* the watched route (c<D> to n1.d<D>) and every device domain HEALTHY (a
 * route without traffic stays PROBING until a probe runs on it) */
static int watched_healthy(void)
{
	struct dom *r = route_dom(W.o.watch, W.o.watch);
	if (!r || !r->seen || (!r->gone && r->last.state != MCC_PATH_HEALTHY))
		return 0;
	for (uint32_t i = 0; i < W.ndom; i++)
		if (W.dom[i].kind == MCC_DOMAIN_DEVICE && W.dom[i].seen &&
		    W.dom[i].last.state != MCC_PATH_HEALTHY)
			return 0;
	return 1;
}

/* Watchdog: WRs outstanding and not one completion on any device for
 * --stall-s. rxe under TCG occasionally stops transmitting (the guest NIC's
 * TX path stalls; rxe then never retransmits nor errors, and destroying its
 * QPs hangs): an infrastructure failure, reported for the harness to retry
 * in a fresh guest, and the process leaves without touching verbs again. */
static void stall_watchdog(uint64_t now)
{
	if (!W.v || !W.o.stall_s)
		return;
	struct mcc_fab_verbs_stats vs;
	mcc_fab_verbs_stats(W.v, &vs);
	if (vs.wcs != W.wd_wcs || vs.wrs_posted == vs.wcs) {
		W.wd_wcs = vs.wcs;
		W.wd_t = now;
		return;
	}
	if (now - W.wd_t < (uint64_t)(W.o.stall_s * 1e9))
		return;
	say("SR-INFRA: verbs stall: %" PRIu64 " WRs outstanding, no completion on any device for "
	    "%.1f s and no error (rxe stall under TCG); leaving without teardown",
	    vs.wrs_posted - vs.wcs, secs(now - W.wd_t));
	host_stats_line();
	pthread_mutex_lock(&W.out_mu);
	mcc_fab_verbs_dump(W.v, stdout);
	fflush(stdout);
	pthread_mutex_unlock(&W.out_mu);
	/* Closing the verbs device with rxe QPs stuck blocks the exit for about
	 * a minute; in a throw-away test guest, power it off instead. */
	const char *po = getenv("SR_INFRA_POWEROFF");
	if (po && !strcmp(po, "1")) {
		say("SR-INFRA: powering the guest off (SR_INFRA_POWEROFF=1)");
		sync();
		reboot(RB_POWER_OFF);
	}
	_exit(99);
}

static uint64_t sampler_step(void *arg, uint64_t now)
{
	(void)arg;
	/* the passive node's async events (its own monitor, in a real world) */
	for (uint32_t d = 0; W.v && d < W.ndev; d++)
		mcc_fab_verbs_drain_async(W.v, 1, d);
	uint64_t rel = W.t0 && now > W.t0 ? now - W.t0 : 0;
	if (MCC_CC_COMPILED_IN)
		for (uint32_t i = 0; i < W.ndom; i++)
			dom_sample(&W.dom[i], now);
	if (MCC_CC_COMPILED_IN && W.o.nsteps && W.step_t[0]) { /* no route usable */
		int all = 1, any = 0;
		for (uint32_t i = 0; i < W.ndom; i++) {
			const struct dom *x = &W.dom[i];
			if (x->kind != MCC_DOMAIN_ROUTE || !x->seen || x->gone)
				continue;
			any = 1;
			all &= x->last.state >= MCC_PATH_QUARANTINED; /* or PROBING: unproven */
		}
		all &= any;
		if (all && !W.f_allq) {
			W.f_t_allq = now;
			W.f_t_lu = 0;
		}
		W.f_allq = all;
	}
	if (!W.t_quarantined) {
		struct dom *r = route_dom(W.o.watch, W.o.watch);
		if (r && r->seen && r->last.state == MCC_PATH_QUARANTINED)
			W.t_quarantined = now;
	}
	while (W.t0 && W.next_step < W.o.nsteps) {
		const double at = W.o.step[W.next_step].at;
		const int after = W.o.step[W.next_step].after;
		uint64_t since = after == 'q'   ? W.t_quarantined
		                 : after == 'e' ? atomic_load(&W.first_fault_ns)
		                 : after == 'p' ? steps_end(W.next_step)
		                                : W.t0;
		int due = since && now >= since && now - since >= (uint64_t)(at * 1e9);
		if (!due)
			break;
		run_step(W.next_step, now);
		W.next_step++;
	}
	reap_steps(now);
	stall_watchdog(now);
	/* caller queries of the tasks in flight */
	uint32_t unfinished = 0;
	pthread_mutex_lock(&W.slot_mu);
	for (uint32_t i = 0; i < W.o.conc; i++) {
		struct slot *s = &W.slot[i];
		if (!s->busy)
			continue;
		unfinished++;
		struct mcc_task_detail_v1 d;
		mcc_host_eng_detail(&W.eng, s->batch, &d);
		note_task_state(s, &d, "inflight");
		if (d.state != MCC_TASK_LONG_UNAVAILABLE) {
			s->lu_since = 0;
		} else if (W.o.nsteps && W.step_t[0] && !W.step_t[W.o.nsteps - 1]) {
			W.f_lu_reads++;
			if (W.f_t_allq && !W.f_t_lu)
				W.f_t_lu = now;
			if (!s->lu_since)
				s->lu_since = now;
			if (now - s->lu_since > W.f_lu_run)
				W.f_lu_run = now - s->lu_since;
		}
	}
	uint64_t submitted = W.bytes_submitted, verified = W.bytes_verified, tasks = W.tasks_ok;
	pthread_mutex_unlock(&W.slot_mu);
	int all_steps = steps_all_done() && W.next_step == W.o.nsteps;
	if (all_steps && MCC_CC_COMPILED_IN && !W.recovered_at && W.o.nsteps && watched_healthy()) {
		W.recovered_at = now;
		say("INFO t=%.3f every route and device is HEALTHY after the last step", secs(now));
	}
	if (now - W.last_timeline >= 1000000000ull) {
		W.last_timeline = now;
		char buf[256] = "";
		size_t n = 0;
		for (uint32_t i = 0; MCC_CC_COMPILED_IN && i < W.ndom && n < sizeof(buf) - 40; i++)
			if (W.dom[i].seen)
				n += (size_t)snprintf(buf + n, sizeof(buf) - n, " %s=%s", W.dom[i].name,
				                      state_name((int)W.dom[i].last.state));
		say("TIMELINE t=%.3f verified_mib=%.1f tasks=%" PRIu64 "%s", secs(now),
		    (double)verified / 1048576.0, tasks, buf);
	}
	/* stop condition */
	if (!W.stopping) {
		double el = secs(rel);
		int budget_done = W.o.bytes && submitted + W.o.task_bytes > W.o.bytes;
		int time_ok = el >= W.o.duration;
		/* after recovery, keep transferring a little so new tasks run on
		 * the recovered path */
		int rec_ok = !W.o.until_healthy || !MCC_CC_COMPILED_IN ||
		             (W.recovered_at && now - W.recovered_at >= (uint64_t)(W.o.after_s * 1e9));
		if ((budget_done || !W.o.bytes) && time_ok && all_steps && rec_ok) {
			W.stopping = 1;
			say("INFO t=%.3f stopping: workload done", secs(now));
		} else if (el >= W.o.max_duration) {
			W.stopping = 1;
			say("INFO t=%.3f stopping: --max-duration %.0f s reached", secs(now), W.o.max_duration);
			for (uint32_t i = 0; i < W.ndom; i++)
				if (W.dom[i].seen)
					say("INFO   %s %s%s", W.dom[i].name, state_name((int)W.dom[i].last.state),
					    W.dom[i].gone ? " (gone)" : "");
		}
		if (W.stopping) {
			W.t_stop_reason = now;
			mcc_exec_wake(W.app, now);
		}
	} else if (now - W.t_stop_reason > (uint64_t)(W.o.drain_s * 1e9)) {
		say("FAIL: %u tasks still unfinished %.0f s after the stop", unfinished, W.o.drain_s);
		W.fails++;
		pthread_mutex_lock(&W.slot_mu);
		for (uint32_t i = 0; i < W.o.conc; i++) {
			uint64_t moved = 0;
			if (!W.slot[i].busy)
				continue;
			mcc_host_eng_status(&W.eng, W.slot[i].batch, &moved);
			say("INFO unfinished task #%" PRIu64 ": %" PRIu64 " of %" PRIu64
			    " bytes transferred, submitted at t=%.3f",
			    W.slot[i].seq, moved, W.o.task_bytes, secs(W.slot[i].t_submit));
		}
		pthread_mutex_unlock(&W.slot_mu);
		host_stats_line();
		atomic_store(&W.finished, 1);
	}
	return now + (uint64_t)W.o.sample_ms * 1000000u;
}

static void fab_sched(void *arg, uint64_t at)
{
	(void)arg;
	mcc_exec_wake(W.fab_actor, at);
}

/* the fabric model's clock (real time: polled) */
static uint64_t fab_step(void *arg, uint64_t now)
{
	(void)arg;
	return mcc_host_fab_step(W.model, W.ex, now);
}

static int all_done(void *arg)
{
	(void)arg;
	return atomic_load(&W.finished);
}

/* ---------------------------------------------------------------- checks */

static uint64_t wc_count(uint32_t node, int status)
{
	uint64_t n = 0;
	for (uint32_t d = 0; d < MAXDEV; d++)
		n += atomic_load(&W.wc[node][d][(uint32_t)status % NWC]);
	return n;
}

static uint64_t wc_errors_total(void)
{
	uint64_t n = 0;
	for (uint32_t nd = 0; nd < 2; nd++)
		for (uint32_t d = 0; d < MAXDEV; d++)
			for (uint32_t s = 1; s < NWC; s++)
				n += atomic_load(&W.wc[nd][d][s]);
	return n;
}

static int async_seen(int type, uint32_t node, uint32_t dev, uint64_t *t)
{
	uint32_t n = atomic_load(&W.nev);
	for (uint32_t i = 0; i < n && i < 256; i++)
		if (W.ev[i].type == type && W.ev[i].node == node && W.ev[i].dev == dev) {
			if (t)
				*t = W.ev[i].t;
			return 1;
		}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* median WC latency (ns) of device `dev` (node 0) completed in [t1, t2) */
static uint64_t lat_p50(uint32_t dev, uint64_t t1, uint64_t t2, uint32_t *count)
{
	uint32_t n = atomic_load(&W.nlat);
	if (n > LATCAP)
		n = LATCAP;
	uint64_t *v = malloc((size_t)(n ? n : 1) * sizeof(*v));
	uint32_t k = 0;
	for (uint32_t i = 0; v && i < n; i++)
		if (W.lat[i].dev == dev && W.lat[i].t >= t1 && W.lat[i].t < t2 && W.lat[i].lat)
			v[k++] = W.lat[i].lat;
	uint64_t r = 0;
	if (k) {
		qsort(v, k, sizeof(*v), cmp_u64);
		r = v[k / 2];
	}
	free(v);
	*count = k;
	return r;
}

/* index of the first sample at or after t (x->ns when none) */
static uint32_t first_at(const struct dom *x, uint64_t t)
{
	uint32_t i = 0;
	while (i < x->ns && x->s[i].t < t)
		i++;
	return i;
}

static void checks_common(void)
{
	check(W.tasks_ok > 0 && W.bytes_verified == W.tasks_ok * W.o.task_bytes,
	      "payload verified byte for byte: %" PRIu64 " tasks, %" PRIu64 " bytes", W.tasks_ok,
	      W.bytes_verified);
	check(W.bytes_bad == 0, "no corrupted payload (%" PRIu64 " bad bytes)", W.bytes_bad);
	if (W.o.check == CHK_BOTH_DOWN && W.tasks_failed) {
		/* no path at all: the engine fails what its own rail pause leaves
		 * without a rail, as it does without the controller */
		say("INFO %" PRIu64 " tasks FAILED by the engine during the outage (every rail "
		    "paused); every other task verified", W.tasks_failed);
		check(W.failed_normal == 0, "no FAILED task reported NORMAL to the caller (%" PRIu64 ")",
		      W.failed_normal);
	} else if (W.o.check == CHK_LOCAL_DOWN && W.o.engine == ENG_TE && W.tasks_failed) {
		/* TE: between rxe failing the WRs of the downed NIC and the PORT_ERR
		 * that deactivates the context, reconnects on that NIC fail at once
		 * ("Network is unreachable"), every rail of the context gets paused,
		 * and dispatch fails the slices (all rails paused): the engine
		 * reports those tasks FAILED; none hangs, none is corrupted */
		say("INFO %" PRIu64 " tasks FAILED by TE (all rails of the context paused before "
		    "PORT_ERR deactivated it); every other task verified",
		    W.tasks_failed);
		check(W.failed_normal == 0, "no FAILED task reported NORMAL to the caller (%" PRIu64 ")",
		      W.failed_normal);
	} else {
		check(W.tasks_failed == 0, "nothing lost: %" PRIu64 " tasks failed", W.tasks_failed);
	}
	struct mcc_host_eng_stats es;
	mcc_host_eng_stats(&W.eng, &es);
	int64_t live = es.permits_live;
	check(live == 0, "every permit settled (permits_live=%" PRId64 ")", live);
	if (!MCC_CC_COMPILED_IN || !strcmp(W.mode, "off"))
		check(W.final_state[MCC_TASK_UNKNOWN] == W.tasks_ok + W.tasks_failed,
		      "controller off/compiled out: every task UNKNOWN (%" PRIu64 "/%" PRIu64 ")",
		      W.final_state[MCC_TASK_UNKNOWN], W.tasks_ok + W.tasks_failed);
	if (W.o.expect_mode)
		check(!strcmp(W.mode, W.o.expect_mode), "controller mode %s (expected %s)", W.mode,
		      W.o.expect_mode);
	if (W.o.expect_module)
		check(!strcmp(W.module, W.o.expect_module), "policy module %s (expected %s)", W.module,
		      W.o.expect_module);
}

static void checks_healthy(void)
{
	check(wc_errors_total() == 0, "no error WC (%" PRIu64 ")", wc_errors_total());
	if (MCC_CC_COMPILED_IN && strcmp(W.mode, "off")) {
		check(W.final_state[MCC_TASK_NORMAL] == W.tasks_ok,
		      "controller %s: every completed task NORMAL (%" PRIu64 "/%" PRIu64 ")", W.mode,
		      W.final_state[MCC_TASK_NORMAL], W.tasks_ok);
		uint64_t q = 0;
		for (uint32_t i = 0; i < W.ndom; i++)
			q += W.dom[i].last.quarantines;
		check(q == 0, "no quarantine (%" PRIu64 ")", q);
	}
}

/* Does the sample sequence of x (from index i0) pass through the states
 * in `want` in order (others may come between)? Returns the index of the
 * sample matching the last wanted state, or -1. */
static int seq_match(const struct dom *x, uint32_t i0, const int *want, int nwant, uint32_t *at)
{
	int k = 0;
	for (uint32_t i = i0; i < x->ns && k < nwant; i++)
		if (x->s[i].state == want[k]) {
			at[k] = i;
			k++;
		}
	return k == nwant ? (int)at[nwant - 1] : -1;
}

/* peer-cut: the cable of a peer NIC pulled, plugged back before the first
 * recovery probe. blackhole (probe_fails): every packet to and from that
 * NIC dropped with no link event, only timeouts tell; lifted only after the
 * first recovery probe has failed, so the route goes QUARANTINED again and
 * a later probe, on a newer endpoint generation, recovers it. local: the
 * blackhole is on the local NIC of the same rail instead, so the traffic
 * must move to the other local NIC. */
static void checks_peer_cut(int probe_fails, int local)
{
	uint32_t wd = W.o.watch; /* the peer device whose link was cut */
	uint64_t tcut = 0;
	if (W.v)
		check(wc_count(0, IBV_WC_RETRY_EXC_ERR) > 0,
		      "real IBV_WC_RETRY_EXC_ERR seen (%" PRIu64 ")", wc_count(0, IBV_WC_RETRY_EXC_ERR));
	else
		say("INFO --fabric model: no WC/async trace, those checks are skipped");
	int pe = async_seen(IBV_EVENT_PORT_ERR, 1, wd, &tcut);
	say("INFO peer %s: IBV_EVENT_PORT_ERR %s (t=%.3f)", dev_name(1, wd), pe ? "seen" : "not seen",
	    secs(tcut));
	if (probe_fails && W.v)
		check(!pe && !async_seen(IBV_EVENT_PORT_ERR, 0, wd, &tcut),
		      "silent: no IBV_EVENT_PORT_ERR on either side");
	/* the route from the same-rail local device to the cut peer NIC */
	struct dom *r = enforce_route(wd);
	if (!r)
		return;
	static const int want_cut[] = {MCC_PATH_SUSPECT, MCC_PATH_QUARANTINED, MCC_PATH_PROBING,
	                               MCC_PATH_HEALTHY};
	static const int want_bh[] = {MCC_PATH_SUSPECT, MCC_PATH_QUARANTINED, MCC_PATH_PROBING,
	                              MCC_PATH_QUARANTINED, MCC_PATH_PROBING, MCC_PATH_HEALTHY};
	const int *want = probe_fails ? want_bh : want_cut;
	const int nw = probe_fails ? 6 : 4;
	uint32_t at[6] = {0};
	int ok = seq_match(r, 0, want, nw, at) >= 0;
	check(ok, "%s: SUSPECT -> QUARANTINED -> PROBING -> %sHEALTHY", r->name,
	      probe_fails ? "QUARANTINED (the probe failed) -> PROBING -> " : "");
	if (!ok && r->last.state == MCC_PATH_PROBING && r->last.probes == 0)
		say("INFO %s stayed PROBING at generation %u with no probe admitted: the host never "
		    "built an endpoint newer than the quarantined generation",
		    r->name, r->last.generation);
	if (ok) {
		/* q, p: the first quarantine and probe; the last probe, h: recovery */
		const struct dsample *q = &r->s[at[1]], *p = &r->s[at[2]];
		const uint32_t lp = at[nw - 2], h = at[nw - 1];
		if (probe_fails)
			say("INFO %s: first probe t=%.3f gen=%u failed: QUARANTINED again t=%.3f gen=%u",
			    r->name, secs(p->t), p->gen, secs(r->s[at[3]].t), r->s[at[3]].gen);
		say("INFO %s: SUSPECT t=%.3f gen=%u, QUARANTINED t=%.3f gen=%u, PROBING t=%.3f gen=%u, "
		    "HEALTHY t=%.3f gen=%u",
		    r->name, secs(r->s[at[0]].t), r->s[at[0]].gen, secs(q->t), q->gen, secs(r->s[lp].t),
		    r->s[lp].gen, secs(r->s[h].t), r->s[h].gen);
		/* the probe ran on a newer generation than the quarantined one:
		 * the one the failures were seen on (what the policy fences), not
		 * the route's newest when the quarantine was sampled, which is the
		 * endpoint a host (TENT) rebuilt right after the error */
		uint32_t pgen = r->s[lp].gen;
		for (uint32_t i = lp; i <= h; i++)
			if (r->s[i].gen > pgen)
				pgen = r->s[i].gen;
		uint32_t nfail = 0;
		uint32_t fgen = mcc_host_fab_tap_failed_gen(W.tap, 0, wd, wd, r->s[h].t, &nfail);
		say("INFO %s: %u hard-error WCs before recovery, on generations up to %u; generation "
		    "%u when quarantined, %u at the recovery probe",
		    r->name, nfail, fgen, q->gen, pgen);
		uint32_t qgen = nfail ? fgen : q->gen; /* no attributed WC: the sampled one */
		check(pgen > qgen, "recovery probe on a new generation (%u > quarantined %u)", pgen,
		      qgen);
		/* while quarantined, the traffic went over the other rail */
		uint64_t other = 0, before = 0;
		for (uint32_t i = 0; i < W.ndom; i++) {
			struct dom *x = &W.dom[i];
			if (x->kind != MCC_DOMAIN_ROUTE || (local ? x->c : x->d) == wd || !x->ns)
				continue;
			uint32_t a = first_at(x, q->t), b = first_at(x, p->t);
			if (a < x->ns && b > 0 && b - 1 < x->ns && b > a) {
				before += x->s[a].completed;
				other += x->s[b - 1].completed;
			}
		}
		check(other > before, "traffic avoided onto the other %s while quarantined (%" PRIu64 " bytes)",
		      local ? "local NIC" : "rail", other - before);
		uint64_t av = r->last.avoids;
		check(av > 0, "admission answered AVOID on the quarantined route (%" PRIu64 ")", av);
	}
	/* caller-visible task states (RFC Caller Observability) */
	check(W.reason_seen[MCC_REASON_ROUTE_TIMEOUT] > 0,
	      "a task saw ROUTE_TIMEOUT evidence (CONGESTED before quarantine): %" PRIu64,
	      W.reason_seen[MCC_REASON_ROUTE_TIMEOUT]);
	check(W.reason_seen[MCC_REASON_PATH_QUARANTINED] > 0 && W.inflight_seen[MCC_TASK_LONG_UNAVAILABLE] > 0,
	      "a task saw PATH_QUARANTINED evidence and was LONG_UNAVAILABLE: %" PRIu64 " / %" PRIu64,
	      W.reason_seen[MCC_REASON_PATH_QUARANTINED], W.inflight_seen[MCC_TASK_LONG_UNAVAILABLE]);
	check(W.post_recovery_tasks > 0 && W.post_recovery_normal == W.post_recovery_tasks,
	      "tasks submitted after recovery are NORMAL (%" PRIu64 "/%" PRIu64 ")",
	      W.post_recovery_normal, W.post_recovery_tasks);
}

static void checks_local_down(void)
{
	uint32_t wd = W.o.watch; /* the local device whose link went down */
	uint64_t tpe = 0;
	if (!W.v) {
		say("INFO --fabric model: no WC/async trace, those checks are skipped");
		goto policy;
	}
	check(async_seen(IBV_EVENT_PORT_ERR, 0, wd, &tpe), "real IBV_EVENT_PORT_ERR on %s",
	      dev_name(0, wd));
	uint64_t loc = atomic_load(&W.wc[0][wd][IBV_WC_LOC_QP_OP_ERR]);
	uint64_t fl = atomic_load(&W.wc[0][wd][IBV_WC_WR_FLUSH_ERR]);
	/* rxe fails the head WR with LOC_QP_OP_ERR when it tries to send on the
	 * downed netdev (about 65 ms after PORT_ERR, sometimes only at link-up);
	 * TE resets every QP of the context on PORT_ERR (ctx_disconnect_all)
	 * within a monitor pass, and then the flush carries the failure; with
	 * nothing in flight there is nothing to fail */
	int64_t out = atomic_load(&W.porterr_outstanding);
	if (loc + fl == 0 && out == 0) {
		/* the precondition of the burst checks, not a verdict on the host:
		 * "ip link set down" ran late under TCG (seconds, at times) and
		 * the host had nothing on the device then; another guest may catch
		 * it busy */
		say("SR-INFRA: no WR was in flight on %s when its IBV_EVENT_PORT_ERR came, so "
		    "there was no burst to count; retrying", dev_name(0, wd));
	} else {
		check(loc + fl > 0, "real error WCs on %s: %" PRIu64 " IBV_WC_LOC_QP_OP_ERR, %" PRIu64
		      " IBV_WC_WR_FLUSH_ERR (the burst; %" PRId64 " WRs in flight at PORT_ERR)",
		      dev_name(0, wd), loc, fl, out);
	}
	if (!loc)
		say("INFO no IBV_WC_LOC_QP_OP_ERR on %s: the host reset its QPs on PORT_ERR first",
		    dev_name(0, wd));
	say("INFO IBV_EVENT_PORT_ACTIVE on %s %s", dev_name(0, wd),
	    async_seen(IBV_EVENT_PORT_ACTIVE, 0, wd, NULL) ? "seen" : "not seen");
policy:
	if (!MCC_CC_COMPILED_IN || strcmp(W.mode, "enforce"))
		return;
	uint32_t max_hard = 0, nroutes = 0, worst = 0;
	uint64_t errs = 0;
	int quarantined = 0;
	for (uint32_t i = 0; i < W.ndom; i++) {
		struct dom *x = &W.dom[i];
		if (x->kind != MCC_DOMAIN_ROUTE || !x->ns)
			continue;
		for (uint32_t k = 0; k < x->ns; k++)
			if (x->s[k].hard > max_hard)
				max_hard = x->s[k].hard;
		if (x->c != wd)
			continue;
		nroutes++;
		for (uint32_t k = 0; k < x->ns; k++)
			quarantined |= x->s[k].state == MCC_PATH_QUARANTINED;
		errs += x->last.errors;
		if (x->last.quarantines > worst)
			worst = (uint32_t)x->last.quarantines;
	}
	uint64_t rebinds = 0;
	if (W.o.engine == ENG_TE) {
		struct te_stats st;
		te_get_stats(W.eng.te, &st);
		rebinds = st.rebinds;
	}
	if (quarantined || !rebinds)
		check(quarantined, "routes of %s QUARANTINED by PORT_ERR (port scope)", dev_name(0, wd));
	else /* the handoff moved the route domain to the other NIC first */
		say("INFO no route of %s quarantined: TE handed its route off to the other local NIC "
		    "(route_rebind, %" PRIu64 ") before the PORT_ERR reached the policy",
		    dev_name(0, wd), rebinds);
	check(max_hard <= 1,
	      "the burst counted once: route hard_errors never above 1 (max %u) while %" PRIu64
	      " error WCs were fed on %s",
	      max_hard, errs, dev_name(0, wd));
	check(worst <= 1, "at most one quarantine per route for the whole burst (max %u, %u routes)",
	      worst, nroutes);
}

/* Bytes completed on the routes to node 1 from t1 to t2 (nearest samples at
 * or after each): over peer device wd, and over the others. */
static void rail_bytes(uint32_t wd, uint64_t t1, uint64_t t2, uint64_t *lossy, uint64_t *other)
{
	*lossy = *other = 0;
	for (uint32_t i = 0; i < W.ndom; i++) {
		const struct dom *x = &W.dom[i];
		if (x->kind != MCC_DOMAIN_ROUTE || !x->ns)
			continue;
		uint32_t a = first_at(x, t1), b = first_at(x, t2);
		if (b >= x->ns)
			b = x->ns - 1;
		if (a >= b)
			continue;
		*(x->d == wd ? lossy : other) += x->s[b].completed - x->s[a].completed;
	}
}

/* gray: steps 0 and 1 put a partial loss on peer device wd's link and take
 * it off. From 1 s after it took effect to its removal at least 70 % of the
 * bytes go over the other rail; from 1 s after the removal both rails carry
 * traffic again. */
static void checks_gray(void)
{
	uint32_t wd = W.o.watch;
	if (W.o.nsteps < 2) {
		check(0, "gray check needs the loss and its removal (--at twice)");
		return;
	}
	uint64_t on = (W.step_end[0] ? W.step_end[0] : W.step_t[0]) + 1000000000ull;
	uint64_t off = W.step_t[1], back = (W.step_end[1] ? W.step_end[1] : W.step_t[1]) + 1000000000ull;
	uint64_t l0, o0, l1, o1;
	rail_bytes(wd, on, off, &l0, &o0);
	rail_bytes(wd, back, UINT64_MAX, &l1, &o1);
	double during = l0 + o0 ? (double)o0 / (double)(l0 + o0) : -1;
	double after = l1 + o1 ? (double)o1 / (double)(l1 + o1) : -1;
	if (!MCC_CC_COMPILED_IN || !strcmp(W.mode, "off")) { /* no policy domains to sample */
		say("INFO gray: rail shares not measured (no policy domains in mode %s); the contrast "
		    "is the goodput", W.mode);
		return;
	}
	say("RESULT gray peer=%s other_rail_share_during=%.3f (%" PRIu64 " bytes) after=%.3f (%" PRIu64
	    " bytes)",
	    dev_name(1, wd), during, l0 + o0, after, l1 + o1);
	if (!MCC_CC_COMPILED_IN || strcmp(W.mode, "enforce"))
		return;
	check(l0 + o0 > 0, "bytes measured from 1 s after the loss took effect (t=%.3f) to its removal (t=%.3f)",
	      secs(on - 1000000000ull), secs(off));
	if (!(l0 + o0))
		return;
	check(during >= 0.70, "from 1 s after the loss began, %.0f %% of the bytes on the other rail",
	      100 * during);
	check(l1 > 0 && o1 > 0, "after the loss, both rails carry bytes again (%" PRIu64 " / %" PRIu64 ")",
	      l1, o1);
}

/* Completed bytes of the routes of local device wd and of the others
 * over [t1, t2). */
static void local_bytes(uint32_t wd, uint64_t t1, uint64_t t2, uint64_t *mine, uint64_t *other)
{
	*mine = *other = 0;
	for (uint32_t i = 0; i < W.ndom; i++) {
		const struct dom *x = &W.dom[i];
		if (x->kind != MCC_DOMAIN_ROUTE || !x->ns)
			continue;
		uint32_t a = first_at(x, t1), b = first_at(x, t2);
		if (b >= x->ns)
			b = x->ns - 1;
		if (a >= b)
			continue;
		*(x->c == wd ? mine : other) += x->s[b].completed - x->s[a].completed;
	}
}

/* A fault on local device wd between the first step and the last (gray
 * loss, duplication and reordering, flaps): the traffic moves to the
 * other local NIC (at least 70 % of the bytes from 1 s after the first
 * step), no second passes without a completed task, no group is left
 * without a usable path. flap: no group is left without a usable path and
 * the watched route is quarantined again and again with a growing cooldown
 * (each flap stalls the WRs in flight until their transport timeout, and
 * the rail carries its share while it is up: no share or stall check). both-down (every path dead): the
 * tasks read LONG_UNAVAILABLE within 2 epochs of the last route's
 * quarantine (plus one sample). */
static void checks_fault(int chk)
{
	uint32_t wd = W.o.watch;
	if (W.o.nsteps < 2 || !W.step_t[0] || !W.step_t[W.o.nsteps - 1]) {
		check(0, "the fault check needs its steps (--at, at least two) done");
		return;
	}
	uint64_t on = W.step_end[0] ? W.step_end[0] : W.step_t[0], off = W.step_t[W.o.nsteps - 1];
	uint64_t mine = 0, other = 0;
	local_bytes(wd, on + 1000000000ull, off, &mine, &other);
	double share = mine + other ? (double)other / (double)(mine + other) : -1;
	struct mcc_host_eng_stats es;
	mcc_host_eng_stats(&W.eng, &es);
	struct dom *r = route_dom(wd, wd);
	char cool[128] = "";
	uint32_t nq = 0, grows = 1;
	uint64_t prev = 0;
	for (uint32_t i = 1; r && i < r->ns; i++)
		if (r->s[i].state == MCC_PATH_QUARANTINED && r->s[i - 1].state != MCC_PATH_QUARANTINED) {
			size_t n = strlen(cool);
			snprintf(cool + n, sizeof(cool) - n, "%s%" PRIu64, nq ? "," : "", r->s[i].cooldown);
			grows &= !nq || r->s[i].cooldown > prev;
			prev = r->s[i].cooldown;
			nq++;
		}
	const uint64_t epoch_ns = (uint64_t)(W.o.epoch_us ? W.o.epoch_us : 1000) * 1000;
	say("RESULT fault dev=%s other_nic_share=%.3f (%" PRIu64 " bytes) longest_stall_ms=%.1f "
	    "lu_reads=%" PRIu64 " lu_longest_ms=%.1f no_usable_path=%" PRIu64 " lu_after_allq_ms=%.1f "
	    "cooldowns=%s",
	    dev_name(0, wd), share, mine + other, (double)W.f_gap / 1e6, W.f_lu_reads,
	    (double)W.f_lu_run / 1e6,
	    es.no_usable_path,
	    W.f_t_lu && W.f_t_allq ? (double)(W.f_t_lu - W.f_t_allq) / 1e6 : -1.0, nq ? cool : "-");
	if (!MCC_CC_COMPILED_IN || strcmp(W.mode, "enforce"))
		return;
	if (chk == CHK_BOTH_DOWN) {
		check(W.f_t_allq != 0, "every route QUARANTINED or PROBING at once during the outage");
		check(W.f_t_lu && W.f_t_lu - W.f_t_allq <= 2 * epoch_ns + (uint64_t)W.o.sample_ms * 1000000,
		      "tasks read LONG_UNAVAILABLE within 2 epochs (+ one sample) of the last route's "
		      "quarantine (%.1f ms)", W.f_t_lu ? (double)(W.f_t_lu - W.f_t_allq) / 1e6 : -1.0);
		return;
	}
	if (chk != CHK_FLAP) { /* a flap stalls what is in flight until its transport timeout */
		check(mine + other > 0 && share >= 0.70,
		      "from 1 s after the fault, %.0f %% of the bytes on the other local NIC",
		      100 * share);
		check(W.f_gap < 1000000000ull, "no second without a completed task (longest %.1f ms)",
		      (double)W.f_gap / 1e6);
	}
	check(es.no_usable_path == 0, "no group without a usable path while the other NIC works (%" PRIu64
	      ")", es.no_usable_path);
	if (chk == CHK_GRAY_LOCAL) {
		/* the RFC's AVOID row: a slice refused on the quarantined rail
		 * makes its task LONG_UNAVAILABLE (PATH_QUARANTINED) until a
		 * slice of it completes elsewhere; never for want of a path */
		check(W.reason_seen[MCC_REASON_NO_USABLE_PATH] == 0,
		      "no task read no_usable_path while the other NIC works (%" PRIu64 ")",
		      (uint64_t)W.reason_seen[MCC_REASON_NO_USABLE_PATH]);
		check(W.f_lu_run < 1000000000ull,
		      "a task read LONG_UNAVAILABLE only until its moved slices completed (at most "
		      "%.1f ms in a row, %" PRIu64 " reads)",
		      (double)W.f_lu_run / 1e6, W.f_lu_reads);
		check(W.final_state[MCC_TASK_LONG_UNAVAILABLE] == 0,
		      "no completed task ended LONG_UNAVAILABLE (%" PRIu64 ")",
		      (uint64_t)W.final_state[MCC_TASK_LONG_UNAVAILABLE]);
	}
	if (chk == CHK_FLAP)
		check(nq >= 2 && grows, "%s quarantined %u times with a growing cooldown (%s ms)",
		      r ? r->name : "the watched route", nq, nq ? cool : "-");
}

static void checks_tbf(void)
{
	uint32_t wd = W.o.watch; /* local device (rail) whose egress is shaped */
	if (!W.o.nsteps) {
		check(0, "tbf check needs the shaping step (--at)");
		return;
	}
	/* the shaping took effect when its command finished (starting tc in a
	 * busy guest takes seconds); compare with what came before it started */
	uint64_t ts = W.step_end[0] ? W.step_end[0] : W.step_t[0];
	uint64_t settle = 1000000000ull;
	uint32_t nb = 0, na = 0;
	uint64_t lb = lat_p50(wd, W.t0, W.step_t[0], &nb), la = lat_p50(wd, ts + settle, UINT64_MAX, &na);
	say("RESULT tbf dev=%s wc_latency_p50_ms_before=%.1f (%u WCs) after=%.1f (%u WCs)",
	    dev_name(0, wd), (double)lb / 1e6, nb, (double)la / 1e6, na);
	if (W.v)
		check(nb > 0 && na > 0 && la > 2 * lb, "completion latency rose (p50 %.1f -> %.1f ms)",
		      (double)lb / 1e6, (double)la / 1e6);
	check(wc_errors_total() == 0, "no error WC (%" PRIu64 ")", wc_errors_total());
	struct dom *r = enforce_route(wd);
	if (!r)
		return;
	uint32_t a = first_at(r, ts);
	uint64_t dmax_b = 0, dmax_a = 0, wmin_a = UINT64_MAX, w_at = a < r->ns ? r->s[a].window : 0;
	int cong = 0;
	for (uint32_t k = 0; k < r->ns; k++) {
		const struct dsample *p = &r->s[k];
		if (k < a) {
			if (p->drain_us > dmax_b)
				dmax_b = p->drain_us;
			continue;
		}
		if (p->drain_us > dmax_a)
			dmax_a = p->drain_us;
		if (p->window < wmin_a)
			wmin_a = p->window;
		cong |= p->state == MCC_PATH_CONGESTED;
	}
	uint64_t cuts_b = a < r->ns ? r->s[a].cuts : 0;
	say("RESULT tbf %s drain_us_max_before=%" PRIu64 " after=%" PRIu64 " window_at_shaping=%" PRIu64
	    " window_min_after=%" PRIu64 " cuts_before=%" PRIu64 " cuts_after=%" PRIu64,
	    r->name, dmax_b, dmax_a, w_at, wmin_a, cuts_b, r->last.window_cuts);
	check(dmax_a > dmax_b, "drain time rose (max %" PRIu64 " -> %" PRIu64 " us)", dmax_b, dmax_a);
	check(cong, "%s went CONGESTED", r->name);
	check(r->last.window_cuts > cuts_b && wmin_a < w_at,
	      "its window shrank (%" PRIu64 " -> %" PRIu64 ", %" PRIu64 " cuts)", w_at, wmin_a,
	      r->last.window_cuts - cuts_b);
	uint64_t q = 0;
	for (uint32_t i = 0; i < W.ndom; i++)
		q += W.dom[i].last.quarantines;
	check(q == 0, "no quarantine anywhere (%" PRIu64 ")", q);
}

/* ----------------------------------------------------------------- main */

static void usage(const char *p)
{
	fprintf(stderr,
	        "usage: %s [options]\n"
	        "  --engine te|tent          host stub (te)\n"
	        "  --fabric verbs|model      real verbs (default) or the in-process fabric model;\n"
	        "                            model faults: --at 'T:model:link|port NODE DEV up|down'\n"
	        "  --devices SPEC            node map, e.g. rxe0,rxe1;rxe2,rxe3 (node 0 = host)\n"
	        "  --ini PATH                policy configuration (mcc.ini)\n"
	        "  --module-dir DIR          policy modules (default: the build tree's)\n"
	        "  --opcode write|read       (write)\n"
	        "  --task-bytes N            bytes per task (1048576)\n"
	        "  --concurrency K           tasks in flight (4)\n"
	        "  --bytes N                 bytes to transfer, 0 = until the steps are done (33554432)\n"
	        "  --duration S              transfer for at least S seconds (0)\n"
	        "  --max-duration S          hard limit (60)\n"
	        "  --until-healthy           after the last step, run until the watched route and the\n"
	        "                            devices are HEALTHY, then --after-healthy S more (1.5)\n"
	        "  --at T:CMD                run sh -c CMD T seconds into the transfer (repeatable);\n"
	        "                            q+T:CMD: T seconds after the watched route (--watch D:\n"
	        "                            c<D> to n1.d<D>) was first seen QUARANTINED; e+T:CMD:\n"
	        "                            T seconds after the first error WC or IBV_EVENT_PORT_ERR;\n"
	        "                            p+T:CMD: T seconds after every earlier step's command\n"
	        "                            finished (a fault's length from when it took effect);\n"
	        "                            CMD mon:MONITOR-CMD: a QEMU monitor request of the\n"
	        "                            Soft-RoCE harness (guest/sr-mon protocol, no shell)\n"
	        "  --sample-ms N             domain/task sampling period (50)\n"
	        "  --check healthy|peer-cut|blackhole|blackhole-local|local-down|tbf|gray|\n"
	        "          gray-local|dupreorder|flap|both-down\n"
	        "                            assertions of a test\n"
	        "  --watch D                 device index the check is about (0)\n"
	        "  --epoch-us N              the ini's epoch_us, for the both-down check (1000)\n"
	        "  --expect-mode M --expect-module NAME\n"
	        "  --ib-timeout N --ib-retry N   QP timeout / retry_cnt (14 / 6; rxe: 7 = forever)\n"
	        "  --poll event|spin         poller pacing of the verbs backend (event)\n"
	        "  --workers N --qps N --lanes N --retry N --max-wr N\n"
	        "  --rail-pause-s N          TE rail pause / TENT rail cooldown (1)\n"
	        "  --rail-threshold N        TENT rail monitor: errors before a pause (3)\n"
	        "  --recovery-ms N           TE context recovery delay after PORT_ACTIVE (1000)\n"
	        "  --drain-s S               wait for outstanding tasks after the stop (20)\n"
	        "  --stall-s S               no WC at all for S s with WRs out: SR-INFRA, exit 99 (8)\n"
	        "  --label STR --quiet\n",
	        p);
}

static int parse(int argc, char **argv, struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->devices = getenv("MCC_VERBS_DEVICES");
	if (!o->devices || !*o->devices)
		o->devices = "rxe0,rxe1;rxe2,rxe3";
	o->opcode = TE_OPCODE_WRITE;
	o->task_bytes = 1u << 20;
	o->conc = 4;
	o->bytes = 32u << 20;
	o->max_duration = 60;
	o->drain_s = 20;
	o->stall_s = 8;
	o->after_s = 1.5;
	o->sample_ms = 50;
	o->ib_timeout = 14;
	o->ib_retry = 6;
	o->poll = -1;
	o->workers = 2;
	o->qps = 2;
	o->lanes = 2;
	o->rail_pause_s = 1;
	o->recovery_ms = 1000;
	o->retry = 16;
	o->label = "";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (!strcmp(a, name) && v && ++i)
		if (OPT("--engine"))
			o->engine = !strcmp(v, "tent") ? ENG_TENT : ENG_TE;
		else if (OPT("--fabric"))
			o->model = !strcmp(v, "model");
		else if (OPT("--devices"))
			o->devices = v;
		else if (OPT("--ini"))
			o->ini = v;
		else if (OPT("--module-dir"))
			o->module_dir = v;
		else if (OPT("--opcode"))
			o->opcode = !strcmp(v, "read") ? TE_OPCODE_READ : TE_OPCODE_WRITE;
		else if (OPT("--task-bytes"))
			o->task_bytes = strtoull(v, NULL, 0);
		else if (OPT("--concurrency"))
			o->conc = (uint32_t)strtoul(v, NULL, 0);
		else if (OPT("--bytes"))
			o->bytes = strtoull(v, NULL, 0);
		else if (OPT("--duration"))
			o->duration = strtod(v, NULL);
		else if (OPT("--max-duration"))
			o->max_duration = strtod(v, NULL);
		else if (OPT("--drain-s"))
			o->drain_s = strtod(v, NULL);
		else if (OPT("--stall-s"))
			o->stall_s = strtod(v, NULL);
		else if (OPT("--after-healthy"))
			o->after_s = strtod(v, NULL);
		else if (OPT("--sample-ms"))
			o->sample_ms = (uint32_t)strtoul(v, NULL, 0);
		else if (OPT("--watch"))
			o->watch = (uint32_t)strtoul(v, NULL, 0);
		else if (OPT("--expect-mode"))
			o->expect_mode = v;
		else if (OPT("--expect-module"))
			o->expect_module = v;
		else if (OPT("--label"))
			o->label = v;
		else if (OPT("--ib-timeout"))
			o->ib_timeout = atoi(v);
		else if (OPT("--ib-retry"))
			o->ib_retry = atoi(v);
		else if (OPT("--poll"))
			o->poll = !strcmp(v, "spin") ? MCC_FAB_VERBS_POLL_SPIN : MCC_FAB_VERBS_POLL_EVENT;
		else if (OPT("--workers"))
			o->workers = (uint32_t)strtoul(v, NULL, 0);
		else if (OPT("--qps"))
			o->qps = (uint32_t)strtoul(v, NULL, 0);
		else if (OPT("--lanes"))
			o->lanes = (uint32_t)strtoul(v, NULL, 0);
		else if (OPT("--retry"))
			o->retry = (uint32_t)strtoul(v, NULL, 0);
		else if (OPT("--epoch-us"))
			o->epoch_us = (uint32_t)strtoul(v, NULL, 0);
		else if (OPT("--max-wr"))
			o->max_wr = (uint32_t)strtoul(v, NULL, 0);
		else if (OPT("--rail-pause-s"))
			o->rail_pause_s = (uint32_t)strtoul(v, NULL, 0);
		else if (OPT("--rail-threshold"))
			o->rail_threshold = (uint32_t)strtoul(v, NULL, 0);
		else if (OPT("--recovery-ms"))
			o->recovery_ms = (uint32_t)strtoul(v, NULL, 0);
		else if (OPT("--check")) {
			o->check = !strcmp(v, "healthy")      ? CHK_HEALTHY
			           : !strcmp(v, "peer-cut")   ? CHK_PEER_CUT
			           : !strcmp(v, "blackhole")  ? CHK_BLACKHOLE
			           : !strcmp(v, "blackhole-local") ? CHK_BLACKHOLE_LOCAL
			           : !strcmp(v, "gray")       ? CHK_GRAY
			           : !strcmp(v, "gray-local") ? CHK_GRAY_LOCAL
			           : !strcmp(v, "dupreorder") ? CHK_DUPREORDER
			           : !strcmp(v, "flap")       ? CHK_FLAP
			           : !strcmp(v, "both-down")  ? CHK_BOTH_DOWN
			           : !strcmp(v, "local-down") ? CHK_LOCAL_DOWN
			           : !strcmp(v, "tbf")        ? CHK_TBF
			                                      : CHK_NONE;
		} else if (OPT("--at")) {
			char *end = NULL;
			int q = (v[0] == 'q' || v[0] == 'e' || v[0] == 'p') && v[1] == '+' ? v[0] : 0;
			double t = strtod(q ? v + 2 : v, &end);
			if (!end || *end != ':' || o->nsteps >= MAXSTEP) {
				fprintf(stderr, "bad --at '%s' (T:CMD)\n", v);
				return -1;
			}
			o->step[o->nsteps].at = t;
			o->step[o->nsteps].after = q;
			o->step[o->nsteps].cmd = end + 1;
			o->nsteps++;
		} else if (!strcmp(a, "--until-healthy"))
			o->until_healthy = 1;
		else if (!strcmp(a, "--quiet"))
			o->quiet = 1;
		else {
			usage(argv[0]);
			return -1;
		}
#undef OPT
	}
	if (!o->conc || o->conc > MAXSLOT || !o->task_bytes || o->task_bytes > (256u << 20) ||
	    !o->sample_ms) {
		fprintf(stderr, "bad --concurrency / --task-bytes / --sample-ms\n");
		return -1;
	}
	return 0;
}

static void default_module_dir(struct opts *o, char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (o->module_dir || n <= 0)
		return;
	exe[n] = 0;
	char *s = strrchr(exe, '/');
	if (s)
		*s = 0;
	size_t l = strlen(exe);
	if (l >= 6 && !strcmp(exe + l - 6, "/.libs"))
		exe[l - 6] = 0;
	struct stat st;
	snprintf(buf, len, "%s/../../modules/.libs", exe);
	if (stat(buf, &st) == 0)
		o->module_dir = buf;
}

static void cc_identify(const struct mcc_host_env *env)
{
	snprintf(W.mode, sizeof(W.mode), "%s",
	         mcc_host_eng_cc_mode(&W.eng));
	snprintf(W.module, sizeof(W.module), "%s", MCC_CC_COMPILED_IN ? "?" : "compiled-out");
#if MCC_CC_COMPILED_IN
	/* the process's instance is shared: acquiring it again with the same
	 * options names the module the engine loaded */
	struct mcc_loader_opts lo;
	memset(&lo, 0, sizeof(lo));
	lo.struct_size = sizeof(lo);
	lo.engine = W.o.engine == ENG_TE ? "te" : "tent";
	lo.ini_path = env->cc_ini_path;
	lo.module_dir = env->cc_module_dir;
	mcc_instance *inst = NULL;
	int rc = mcc_instance_acquire(&lo, &inst);
	if (inst) {
		snprintf(W.module, sizeof(W.module), "%s", mcc_instance_name(inst));
		if (rc)
			say("INFO policy instance: %s", mcc_instance_error(inst));
		mcc_instance_release(inst);
	}
#else
	(void)env;
#endif
}

int main(int argc, char **argv)
{
	char mdir[PATH_MAX + 32];
	struct opts *o = &W.o;
	setvbuf(stdout, NULL, _IOLBF, 0);
	pthread_mutex_init(&W.out_mu, NULL);
	atomic_store(&W.porterr_outstanding, -1);
	pthread_mutex_init(&W.slot_mu, NULL);
	if (parse(argc, argv, o))
		return 2;
	default_module_dir(o, mdir, sizeof(mdir));

	struct mcc_fab_verbs_cfg vc;
	mcc_fab_verbs_cfg_defaults(&vc);
	if (mcc_fab_verbs_cfg_devices(&vc, o->devices) || vc.nodes < 2) {
		fprintf(stderr, "bad --devices '%s' (two nodes: a,b;c,d)\n", o->devices);
		return 2;
	}
	vc.qp_timeout = o->ib_timeout < 0 ? MCC_FAB_VERBS_KEEP : (uint32_t)o->ib_timeout;
	vc.qp_retry_cnt = o->ib_retry < 0 ? MCC_FAB_VERBS_KEEP : (uint32_t)o->ib_retry;
	if (o->poll >= 0)
		vc.poll_mode = (uint32_t)o->poll;
	W.ndev = vc.devs_per_node;
	W.lat = calloc(LATCAP, sizeof(*W.lat));
	if (!W.lat)
		return 2;
	W.ex = mcc_exec_create(MCC_EXEC_THREADED, 1);
	if (o->model) {
		struct mcc_fab_model_cfg mc;
		mcc_fab_model_cfg_defaults(&mc);
		mc.nodes = 2;
		mc.devs_per_node = W.ndev;
		mc.link_bps = 1000000000ull; /* emulation-like speeds */
		W.model = mcc_fab_model_create(&mc);
		if (!W.model)
			return 2;
		W.fab = mcc_fab_model_handle(W.model);
		W.fab_actor = mcc_exec_add(W.ex, "fabric", fab_step, NULL, 0);
		mcc_fab_model_set_sched(W.model, fab_sched, NULL);
		for (uint32_t n = 0; n < 2; n++)
			for (uint32_t d = 0; d < W.ndev; d++)
				snprintf(W.names[n][d], sizeof(W.names[n][d]), "model%u.%u", n, d);
	} else {
		W.v = mcc_fab_verbs_create(&vc);
		if (!W.v)
			return 2;
		struct mcc_fab_verbs_trace tr = {on_wc, on_async, NULL};
		mcc_fab_verbs_set_trace(W.v, &tr);
		W.fab = mcc_fab_verbs_handle(W.v);
		for (uint32_t n = 0; n < 2; n++)
			for (uint32_t d = 0; d < W.ndev; d++)
				snprintf(W.names[n][d], sizeof(W.names[n][d]), "%s",
				         mcc_fab_verbs_dev_name(W.v, n, d));
	}
	W.tap = mcc_host_fab_tap_create(&W.fab, W.ex);

	/* node 1: the passive target memory, registered on each of its NICs */
	W.blen = (size_t)o->conc * o->task_bytes;
	if (posix_memalign((void **)&W.rbuf, 4096, W.blen) || posix_memalign((void **)&W.lbuf, 4096, W.blen))
		return 2;
	memset(W.rbuf, 0, W.blen);
	memset(W.lbuf, 0, W.blen);
	for (uint32_t d = 0; d < W.ndev; d++) {
		W.rdev[d] = W.fab.ops->open_device(W.fab.fab, 1, d);
		if (!W.rdev[d] || W.fab.ops->reg_mr(W.rdev[d], W.rbuf, W.blen, &W.rmr[d])) {
			printf("FAIL: cannot open/register %s (node 1)\nRESULT FAIL\n", dev_name(1, d));
			return 1;
		}
	}

	struct mcc_host_env env;
	memset(&env, 0, sizeof(env));
	env.ex = W.ex;
	env.fab = W.fab;
	env.get_segment = get_segment;
	env.cc_ini_path = o->ini;
	env.cc_module_dir = o->module_dir;
	struct mcc_host_eng_cfg ec;
	mcc_host_eng_cfg_defaults(&ec, o->engine != ENG_TE, 0);
	mcc_host_eng_cfg_ib(&ec, o->ib_timeout, o->ib_retry, -1);
	ec.te.num_devices = ec.tent.num_devices = W.ndev;
	if (o->max_wr)
		ec.te.max_wr = ec.tent.max_qp_wr = o->max_wr;
	ec.te.workers_per_ctx = o->workers;
	ec.te.num_qp_per_ep = o->qps;
	ec.te.retry_cnt = o->retry;
	ec.te.rail_pause_s = o->rail_pause_s;
	ec.te.ctx_recovery_delay_ns = (uint64_t)o->recovery_ms * 1000000u;
	ec.tent.num_lanes = o->lanes;
	ec.tent.max_retry_count = o->retry;
	ec.tent.rail_cooldown_secs = o->rail_pause_s;
	if (o->rail_threshold)
		ec.tent.rail_error_threshold = o->rail_threshold;
	ec.tent.cc_plugin_dir = o->module_dir;
	ec.tent.cc_config = o->ini;
	mcc_host_eng_create(&W.eng, &ec, &env, on_task_done, NULL);
	uint32_t nctx = W.eng.te || W.eng.tent ? mcc_host_eng_nctx(&W.eng) : 0;
	if (nctx != W.ndev) {
		printf("FAIL: %s engine on %s: %u of %u %s\nRESULT FAIL\n", ec.is_tent ? "TENT" : "TE",
		       o->devices, nctx, W.ndev, ec.is_tent ? "devices" : "contexts");
		return 1;
	}
	if (mcc_host_eng_register(&W.eng, W.lbuf, W.blen)) {
		printf("FAIL: %s_register_memory\nRESULT FAIL\n", ec.is_tent ? "tent" : "te");
		return 1;
	}
	cc_identify(&env);
	say("INFO engine=%s mode=%s module=%s devices=%s opcode=%s task_bytes=%" PRIu64
	    " concurrency=%u bytes=%" PRIu64 " ib_timeout=%u ib_retry_cnt=%u poll=%s ini=%s",
	    o->engine == ENG_TE ? "te" : "tent", W.mode, W.module, o->devices,
	    o->opcode == TE_OPCODE_READ ? "read" : "write", o->task_bytes, o->conc, o->bytes,
	    vc.qp_timeout, vc.qp_retry_cnt, vc.poll_mode ? "spin" : "event", o->ini ? o->ini : "-");
	if (MCC_CC_COMPILED_IN)
		for (uint32_t c = 0; c < W.ndev; c++) {
			dom_add(MCC_DOMAIN_DEVICE, c, 0);
			for (uint32_t d = 0; d < W.ndev; d++)
				dom_add(MCC_DOMAIN_ROUTE, c, d);
		}

	W.app = mcc_exec_add(W.ex, "app", app_step, NULL, 0);
	W.sampler = mcc_exec_add(W.ex, "sampler", sampler_step, NULL, 0);
	W.t0 = now_ns();
	mcc_exec_run(W.ex, W.t0 + (uint64_t)((o->max_duration + o->drain_s + 5) * 1e9), all_done, NULL);
	uint64_t t_end = now_ns();
	/* threads joined: settle what the last passes left, submit nothing */
	W.stopping = 1;
	app_step(NULL, t_end);
	for (uint32_t d = 0; W.v && d < W.ndev; d++)
		mcc_fab_verbs_drain_async(W.v, 1, d);
	reap_steps(t_end);
	for (uint32_t k = 0; k < W.next_step; k++)
		if (!W.step_done[k] && W.pid[k] > 0) {
			int status;
			waitpid(W.pid[k], &status, 0);
			W.step_done[k] = 1;
		}

	/* report */
	for (uint32_t nd = 0; nd < 2; nd++)
		for (uint32_t d = 0; d < W.ndev; d++) {
			uint64_t n = atomic_load(&W.wc[nd][d][IBV_WC_SUCCESS]);
			if (n)
				say("WC status=IBV_WC_SUCCESS count=%" PRIu64 " dev=%s", n, dev_name(nd, d));
		}
	uint64_t fe = atomic_load(&W.first_err_ns);
	if (fe)
		say("SUMMARY first_error=%.3f s into the run", secs(fe - W.t0));
	double el = W.t_last_done > W.t_first_submit ? secs(W.t_last_done - W.t_first_submit) : 0;
	struct mcc_fab_verbs_stats vs;
	memset(&vs, 0, sizeof(vs));
	if (W.v)
		mcc_fab_verbs_stats(W.v, &vs);
	struct mcc_host_eng_stats es;
	mcc_host_eng_stats(&W.eng, &es);
	const uint64_t avoids = es.avoids, defers = es.defers, retried = es.retried,
	               rails = es.rail_pauses;
	say("RESULT verbs label=%s engine=%s mode=%s module=%s bytes=%" PRIu64 " verified=%" PRIu64
	    " tasks=%" PRIu64 " failed=%" PRIu64 " secs=%.3f gbps=%.4f wrs=%" PRIu64 " wc_errors=%" PRIu64
	    " qps=%" PRIu64 " passive_qps=%" PRIu64 " async=%" PRIu64 " avoids=%" PRIu64
	    " defers=%" PRIu64 " retried=%" PRIu64 " rail_pauses=%" PRIu64,
	    o->label, o->engine == ENG_TE ? "te" : "tent", W.mode, W.module, W.bytes_submitted,
	    W.bytes_verified, W.tasks_ok, W.tasks_failed, el,
	    el > 0 ? (double)W.bytes_verified * 8 / el / 1e9 : 0.0, vs.wrs_posted, vs.wc_errors,
	    vs.qps_created, vs.passive_qps, vs.async_events, avoids, defers, retried, rails);
	say("RESULT tasks final NORMAL=%" PRIu64 " CONGESTED=%" PRIu64 " LONG_UNAVAILABLE=%" PRIu64
	    " UNKNOWN=%" PRIu64 " seen_inflight NORMAL=%" PRIu64 " CONGESTED=%" PRIu64
	    " LONG_UNAVAILABLE=%" PRIu64 " UNKNOWN=%" PRIu64 " reasons route_timeout=%" PRIu64
	    " path_quarantined=%" PRIu64 " byte_window=%" PRIu64 " receiver_pressure=%" PRIu64
	    " congestion_feedback=%" PRIu64 " local_configuration=%" PRIu64
	    " derived_flush=%" PRIu64 " no_usable_path=%" PRIu64,
	    W.final_state[0], W.final_state[1], W.final_state[2], W.final_state[3], W.inflight_seen[0],
	    W.inflight_seen[1], W.inflight_seen[2], W.inflight_seen[3],
	    W.reason_seen[MCC_REASON_ROUTE_TIMEOUT], W.reason_seen[MCC_REASON_PATH_QUARANTINED],
	    W.reason_seen[MCC_REASON_BYTE_WINDOW], W.reason_seen[MCC_REASON_RECEIVER_PRESSURE],
	    W.reason_seen[MCC_REASON_CONGESTION_FEEDBACK], W.reason_seen[MCC_REASON_LOCAL_CONFIGURATION],
	    W.reason_seen[MCC_REASON_DERIVED_FLUSH], W.reason_seen[MCC_REASON_NO_USABLE_PATH]);
	host_stats_line();
	for (uint32_t i = 0; i < W.ndom; i++) /* final states */
		if (W.dom[i].seen)
			say("FINAL dom=%s state=%s gen=%u window=%" PRIu64 " quarantines=%" PRIu64
			    " probes=%" PRIu64 " cuts=%" PRIu64 " errors=%" PRIu64 " completed=%" PRIu64,
			    W.dom[i].name, state_name((int)W.dom[i].last.state), W.dom[i].last.generation,
			    W.dom[i].last.window_bytes, W.dom[i].last.quarantines, W.dom[i].last.probes,
			    W.dom[i].last.window_cuts, W.dom[i].last.errors, W.dom[i].last.completed_bytes);

	checks_common();
	switch (o->check) {
	case CHK_HEALTHY:
		checks_healthy();
		break;
	case CHK_PEER_CUT:
	case CHK_BLACKHOLE:
	case CHK_BLACKHOLE_LOCAL:
		checks_peer_cut(o->check != CHK_PEER_CUT, o->check == CHK_BLACKHOLE_LOCAL);
		break;
	case CHK_LOCAL_DOWN:
		checks_local_down();
		break;
	case CHK_TBF:
		checks_tbf();
		break;
	case CHK_GRAY:
		checks_gray();
		break;
	case CHK_GRAY_LOCAL:
	case CHK_DUPREORDER:
	case CHK_FLAP:
	case CHK_BOTH_DOWN:
		checks_fault(o->check);
		break;
	default:
		break;
	}

	/* teardown: engine (its QPs, CQs, MRs, devices), then the target */
	mcc_host_eng_destroy(&W.eng);
	for (uint32_t d = 0; d < W.ndev; d++) {
		W.fab.ops->dereg_mr(&W.rmr[d]);
		W.fab.ops->close_device(W.rdev[d]);
	}
	if (W.v) {
		mcc_fab_verbs_stats(W.v, &vs);
		if (vs.qps_created != vs.destroys)
			say("INFO %" PRIu64 " QPs created, %" PRIu64 " destroyed", vs.qps_created,
			    vs.destroys);
		mcc_fab_verbs_destroy(W.v);
	}
	if (W.model)
		mcc_fab_model_destroy(W.model);
	mcc_exec_destroy(W.ex);
	mcc_host_fab_tap_destroy(W.tap);
	for (uint32_t i = 0; i < W.ndom; i++)
		free(W.dom[i].s);
	free(W.lat);
	free(W.rbuf);
	free(W.lbuf);
	say("RESULT %s%s%s", W.fails ? "FAIL" : "PASS", o->label[0] ? " " : "", o->label);
	return W.fails ? 1 : 0;
}
