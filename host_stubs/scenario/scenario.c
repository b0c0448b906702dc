/* SPDX-License-Identifier: MIT */
/* scenario.c - scenario definitions, workload, measurement (see scenario.h). */
#include "scenario.h"

#include "../fabric/model.h"
#include "../common/host_engine.h"
#include "mcc_hooks.h"
#include "spec.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SENDERS MCC_SPEC_MAX_SENDERS
#define MAX_SLOTS MCC_SPEC_MAX_SLOTS
#define MAX_FLOWS_PER_SENDER 8

struct flow;

/* One sender machine: an engine instance (TE or TENT). */
struct sender {
	struct mcc_host_engine eng; /* eng.te or eng.tent */
	uint32_t node;
	void *buf;
	size_t buflen;
	struct flow *flows[MAX_FLOWS_PER_SENDER];
	uint32_t nflows;
};

struct slot {
	uint64_t batch;
	uint64_t t_submit;
	uint64_t expect;
	uint64_t seq;
	int busy;
	_Atomic int done;
	uint64_t t_done;
};

struct flow {
	struct scn *sc;
	struct sender *snd;
	uint32_t idx;
	uint32_t target;     /* receiver node = segment id */
	uint64_t msg;
	uint32_t conc;
	uint64_t rate_bps;   /* 0: closed loop */
	uint64_t start_ns, stop_ns; /* no submission before / from (0: none) */
	int victim;
	int prio;            /* TENT request priority (MCC_SPEC_PRIO_*) */
	char *src;           /* conc * msg */
	uint64_t dst_off;    /* in the receiver buffer */
	struct slot slots[MAX_SLOTS];
	uint32_t outstanding;
	uint64_t seq;
	uint64_t next_send;
	uint64_t bytes_ok, tasks_ok, tasks_failed, bytes_failed, lost, corrupted;
	struct mcc_host_samples lat;
	uint64_t t_first, t_last; /* first submit, last completion */
	uint64_t fair_bytes;      /* verified bytes completed in the fairness interval */
	mcc_actor *actor;
	char name[24];
};

struct fault {
	uint64_t t;
	int kind;
	uint32_t node, dev, peer_node, peer_dev;
	uint64_t arg;
	int done;
};
enum { F_LINK_DOWN = 1, F_LINK_UP, F_PORT_DOWN, F_DEV_FATAL, F_QP_FATAL, F_REKEY, F_SLOW_RX,
       F_CQ_ERR, F_POLLER_STALL, F_PATH_MIG, F_LOSS };

struct receiver {
	uint32_t node;
	char *buf;
	size_t len;
	struct mcc_fab_mr mr[MCC_FAB_MAX_DEVS];
};

struct scn {
	const struct mcc_scn_opts *o;
	mcc_exec *ex;
	mcc_fab_model *model;
	struct mcc_fab_model_cfg mcfg;
	struct mcc_host_env env;
	struct sender snd[MAX_SENDERS];
	uint32_t nsnd;
	struct receiver rcv[4];
	uint32_t nrcv;
	struct flow flows[MCC_SCN_MAX_FLOWS];
	uint32_t nflows;
	struct fault faults[MCC_SPEC_MAX_FAULTS];
	uint32_t nfaults;
	uint64_t end_ns;
	int draining;
	/* watched route: sender 0, ctx watch_ctx, to (watch_seg, watch_dev) */
	int watch_ctx, watch_seg, watch_dev;
	uint32_t healthy_from_ctx; /* contexts >= this are "healthy" (multinic) */
	int last_state;
	int steady; /* queue peak reset done */
	char timeline[160];
	FILE *csv;
	/* goodput column: (time, verified bytes) of the last CSV_RING rows */
#define CSV_RING 256u
	uint64_t csv_t[CSV_RING], csv_bytes[CSV_RING];
	uint32_t csv_rows;
	uint64_t q_node, q_dev; /* receiver port sampled for the queue */
	uint32_t rx_node_queue;
	uint32_t healthy_quarantined;
	uint64_t states_seen[4];
	mcc_actor *sampler, *faulter;
	struct mcc_host_fab_actor fab; /* the model as the executor's actor */
	uint64_t digest;
	char ini_path[64];
	const char *ini_scn; /* the scenario's own policy settings */
	/* watched route's generations (scenarios with a fabric tap) */
	mcc_host_fab_tap *tap;
	int probed;
	uint32_t q_gen, q_failed_gen, rec_gen, rec_failed_gen;
	/* local-device hand-off (nicloss): last sample in which a route of
	 * sender 0's watched context entered QUARANTINED, first sample from
	 * then on with a hand-off counted since the sample before it */
	uint64_t t_allq, t_handoff, handoffs_at_allq, handoffs_prev;
	uint32_t q_mask;
	uint64_t sample_ns; /* sampler period (0: 1 ms quick, 0.5 ms otherwise) */
	/* grayloss: bytes delivered to the receiver's NIC 0 / NIC 1 at the
	 * first sample at or after onset + 1 s, end of the loss, end + 1 s */
	uint64_t gray_at[3][2];
	uint64_t gray_t[3];
	int gray_n;
	/* faults (`[measure] faults`): the window, sender 0's NIC tx bytes at its
	 * start and end, completions, LONG_UNAVAILABLE reads, every route of
	 * sender 0 to receiver 0 QUARANTINED, the watched route's cooldowns */
	uint64_t ft0, ft1, fwin0;
	uint64_t ftx[2][2];
	int ftx_n;
	uint64_t f_last_done, f_stall, f_lu_reads, f_t_allq, f_t_lu;
	int f_allq_prev, f_q_prev;
	uint64_t f_qcool[8];
	uint32_t f_nqcool;
	struct mcc_spec *spec;
	uint64_t fair_t0, fair_t1; /* fairness interval */
	uint64_t q_last_t;         /* qavg: last steady sample */
	double q_area, q_time;     /* sum of queue x dt, sum of dt */
};

/* --------------------------------------------------------------- workload */

static int get_segment(void *arg, uint32_t seg, struct mcc_seg_desc *out)
{
	struct scn *sc = arg;
	for (uint32_t i = 0; i < sc->nrcv; i++) {
		struct receiver *r = &sc->rcv[i];
		if (r->node != seg)
			continue;
		memset(out, 0, sizeof(*out));
		out->node = r->node;
		out->ndev = sc->mcfg.devs_per_node;
		out->nports = 1;
		out->base = (uint64_t)(uintptr_t)r->buf;
		out->length = r->len;
		for (uint32_t d = 0; d < out->ndev; d++) /* the current rkey (after a re-key) */
			out->rkey[d] = mcc_fab_model_lookup_rkey(sc->model, r->node, d, r->buf);
		return 0;
	}
	return -ENOENT;
}

static void on_task_done(void *arg, uint64_t batch, uint64_t task)
{
	struct sender *s = arg;
	(void)task;
	for (uint32_t f = 0; f < s->nflows; f++) {
		struct flow *fl = s->flows[f];
		for (uint32_t i = 0; i < fl->conc; i++)
			if (fl->slots[i].busy && fl->slots[i].batch == batch) {
				fl->slots[i].t_done = mcc_exec_now(fl->sc->ex);
				atomic_store(&fl->slots[i].done, 1);
				mcc_exec_wake(fl->actor, fl->slots[i].t_done + 500);
				return;
			}
	}
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

/* The application: keeps `conc` transfers outstanding, verifies payloads,
 * queries the caller-visible congestion state before freeing each batch. */
static uint64_t flow_step(void *arg, uint64_t now)
{
	struct flow *f = arg;
	struct scn *sc = f->sc;
	for (uint32_t i = 0; i < f->conc; i++) {
		struct slot *sl = &f->slots[i];
		if (!sl->busy || !atomic_load(&sl->done))
			continue;
		int cs = 3;
		int st = mcc_host_eng_status(&f->snd->eng, sl->batch, NULL);
		mcc_host_eng_cstate(&f->snd->eng, sl->batch, &cs);
		if (cs >= 0 && cs < 4)
			sc->states_seen[cs]++;
		if (st == MCC_HOST_DONE && sc->spec->measure_faults && f->snd == &sc->snd[0]) {
			/* the longest stretch in [ft0, ft1] without a completion */
			uint64_t from = sc->f_last_done > sc->ft0 ? sc->f_last_done : sc->ft0;
			uint64_t to = sl->t_done < sc->ft1 ? sl->t_done : sc->ft1;
			if (to > from && to - from > sc->f_stall)
				sc->f_stall = to - from;
			if (sl->t_done > sc->f_last_done)
				sc->f_last_done = sl->t_done;
		}
		if (st == MCC_HOST_DONE) {
			uint64_t got = mcc_host_checksum(
			    sc->rcv[f->target - sc->rcv[0].node].buf + f->dst_off + (uint64_t)i * f->msg, f->msg);
			if (got != sl->expect)
				f->corrupted += f->msg;
			else {
				f->bytes_ok += f->msg;
				if (sl->t_done >= sc->fair_t0 && sl->t_done <= sc->fair_t1)
					f->fair_bytes += f->msg;
			}
			f->tasks_ok++;
			mcc_host_samples_add(&f->lat, sl->t_done - sl->t_submit);
			if (sl->t_done > f->t_last)
				f->t_last = sl->t_done;
		} else { /* the caller backs off before resubmitting (transferSync) */
			f->tasks_failed++;
			f->bytes_failed += f->msg;
			if (f->next_send < now + 1000000)
				f->next_send = now + 1000000;
		}
		sc->digest = mix(mix(mix(sc->digest, sl->t_done), (uint64_t)st), (uint64_t)cs);
		mcc_host_eng_free(&f->snd->eng, sl->batch);
		sl->busy = 0;
		atomic_store(&sl->done, 0);
		f->outstanding--;
	}
	if (sc->draining || now >= sc->end_ns || (f->stop_ns && now >= f->stop_ns))
		return MCC_EXEC_PARK;
	uint64_t next = MCC_EXEC_PARK;
	for (uint32_t i = 0; i < f->conc && f->outstanding < f->conc; i++) {
		struct slot *sl = &f->slots[i];
		if (sl->busy)
			continue;
		if (now < f->next_send) {
			next = f->next_send;
			break;
		}
		char *src = f->src + (uint64_t)i * f->msg;
		f->seq++;
		memcpy(src, &f->seq, sizeof(f->seq)); /* a fresh stamp per transfer */
		memcpy(src + f->msg - sizeof(f->seq), &now, sizeof(now));
		sl->expect = mcc_host_checksum(src, f->msg);
		sl->t_submit = now;
		if (!f->t_first)
			f->t_first = now;
		sl->busy = 1;
		atomic_store(&sl->done, 0);
		const struct mcc_host_xfer x = {TE_OPCODE_WRITE, src, f->target,
		                                f->dst_off + (uint64_t)i * f->msg, f->msg, f->prio};
		if (mcc_host_eng_submit(&f->snd->eng, &x, &sl->batch) != 0) {
			sl->busy = 0;
			f->tasks_failed++;
			continue;
		}
		f->outstanding++;
		if (f->rate_bps)
			f->next_send = (f->next_send > now ? f->next_send : now) +
			               f->msg * 8ull * 1000000000ull / f->rate_bps;
	}
	if (f->outstanding < f->conc && f->next_send > now)
		next = f->next_send;
	return next;
}

/* ----------------------------------------------------------- measurement */

static const char *st_abbr(int s)
{
	static const char *n[] = {"HEALTHY", "CONGESTED", "SUSPECT", "QUARANTINED", "PROBING"};
	return s >= 0 && s < 5 ? n[s] : "?";
}

/* `[measure] faults` (deterministic executor: the sampler reads the flows'
 * outstanding tasks, which only the flow actors change). */
static void fault_sample(struct scn *sc, uint64_t now, const struct mcc_domain_stats_v1 *rt)
{
	struct sender *s0 = &sc->snd[0];
	while (sc->ftx_n < 2 && now >= (sc->ftx_n ? sc->ft1 : sc->fwin0)) {
		for (uint32_t d = 0; d < 2 && d < sc->mcfg.devs_per_node; d++)
			sc->ftx[sc->ftx_n][d] = mcc_fab_model_tx_bytes(sc->model, s0->node, d, 1);
		sc->ftx_n++;
	}
	/* no route of sender 0 to receiver 0 usable: each QUARANTINED or
	 * PROBING (unproven), the sample of the last path's quarantine */
	int all = 1, any = 0;
	for (uint32_t c = 0; c < mcc_host_eng_nctx(&s0->eng); c++)
		for (uint32_t d = 0; d < sc->mcfg.devs_per_node; d++) {
			struct mcc_domain_stats_v1 x;
			if (mcc_host_eng_dstats(&s0->eng, c, (int)sc->rcv[0].node, (int)d, &x) != 0)
				continue;
			any = 1;
			all &= x.state >= MCC_PATH_QUARANTINED;
		}
	all &= any;
	if (all && !sc->f_allq_prev) {
		sc->f_t_allq = now;
		sc->f_t_lu = 0;
	}
	sc->f_allq_prev = all;
	if (now >= sc->ft0 && now <= sc->ft1) {
		int lu = 0;
		for (uint32_t i = 0; i < s0->nflows; i++) {
			struct flow *f = s0->flows[i];
			for (uint32_t k = 0; k < f->conc; k++) {
				int cs = -1;
				if (!f->slots[k].busy || atomic_load(&f->slots[k].done))
					continue;
				mcc_host_eng_cstate(&s0->eng, f->slots[k].batch, &cs);
				lu += cs == MCC_TASK_LONG_UNAVAILABLE;
			}
		}
		sc->f_lu_reads += (uint64_t)lu;
		if (lu && sc->f_t_allq && !sc->f_t_lu)
			sc->f_t_lu = now;
	}
	if (rt) {
		if (rt->state == MCC_PATH_QUARANTINED && sc->f_q_prev != MCC_PATH_QUARANTINED &&
		    sc->f_nqcool < 8)
			sc->f_qcool[sc->f_nqcool++] = rt->cooldown_ms;
		sc->f_q_prev = (int)rt->state;
	}
}

static uint64_t sampler_step(void *arg, uint64_t now)
{
	struct scn *sc = arg;
	struct sender *s0 = &sc->snd[0];
	struct mcc_domain_stats_v1 dv, rt;
	int have_dv = mcc_host_eng_dstats(&s0->eng, (uint32_t)sc->watch_ctx, -1, 0, &dv) == 0;
	int have_rt = mcc_host_eng_dstats(&s0->eng, (uint32_t)sc->watch_ctx, sc->watch_seg, sc->watch_dev, &rt) == 0;
	if (have_rt && (int)rt.state != sc->last_state) {
		size_t l = strlen(sc->timeline);
		snprintf(sc->timeline + l, sizeof(sc->timeline) - l, "%s%s", l ? ">" : "",
		         st_abbr((int)rt.state));
		sc->last_state = (int)rt.state;
	}
	if (have_rt && sc->tap) {
		uint32_t node = s0->node, c = (uint32_t)sc->watch_ctx, d = (uint32_t)sc->watch_dev;
		if (rt.state == MCC_PATH_QUARANTINED && !sc->q_gen) {
			sc->q_gen = rt.generation;
			sc->q_failed_gen = mcc_host_fab_tap_failed_gen(sc->tap, node, c, d, now, NULL);
		}
		sc->probed |= rt.state == MCC_PATH_PROBING;
		if (sc->probed && !sc->rec_gen &&
		    (rt.state == MCC_PATH_HEALTHY || rt.state == MCC_PATH_CONGESTED)) {
			sc->rec_gen = rt.generation;
			sc->rec_failed_gen = mcc_host_fab_tap_failed_gen(sc->tap, node, c, d, now, NULL);
		}
	}
	if (sc->spec->gray) {
		const uint64_t *at = sc->gray_t;
		uint32_t rn = sc->rcv[0].node;
		while (sc->gray_n < 3 && now >= at[sc->gray_n]) {
			for (uint32_t d = 0; d < 2; d++)
				sc->gray_at[sc->gray_n][d] = mcc_fab_model_rx_bytes(sc->model, rn, d, 1);
			sc->gray_n++;
		}
	}
	if (sc->spec->handoff) {
		/* the last of the watched device's routes to enter QUARANTINED
		 * (one the engine paused itself may never be), then the first
		 * hand-off counted from that sample on */
		struct mcc_host_eng_stats es;
		mcc_host_eng_stats(&s0->eng, &es);
		uint32_t q = 0;
		for (uint32_t d = 0; d < sc->mcfg.devs_per_node; d++) {
			struct mcc_domain_stats_v1 x;
			if (mcc_host_eng_dstats(&s0->eng, (uint32_t)sc->watch_ctx, sc->watch_seg, (int)d, &x) == 0 &&
			    x.state == MCC_PATH_QUARANTINED)
				q |= 1u << d;
		}
		if (q & ~sc->q_mask) { /* a route entered QUARANTINED since the last sample */
			sc->t_allq = now;
			sc->handoffs_at_allq = sc->handoffs_prev;
			sc->t_handoff = 0;
		}
		sc->q_mask = q;
		sc->handoffs_prev = es.handoffs;
		if (sc->t_allq && !sc->t_handoff && es.handoffs > sc->handoffs_at_allq)
			sc->t_handoff = now;
	}
	if (sc->spec->measure_faults && sc->o->exec == MCC_EXEC_SIM)
		fault_sample(sc, now, have_rt ? &rt : NULL);
	/* routes on healthy devices: ever quarantined? */
	for (uint32_t i = 0; i < sc->nsnd; i++)
		for (uint32_t c = sc->healthy_from_ctx; c < mcc_host_eng_nctx(&sc->snd[i].eng); c++)
			for (uint32_t r = 0; r < sc->nrcv; r++)
				for (uint32_t d = 0; d < sc->mcfg.devs_per_node; d++) {
					struct mcc_domain_stats_v1 x;
					if (mcc_host_eng_dstats(&sc->snd[i].eng, c, (int)sc->rcv[r].node, (int)d, &x) == 0 &&
					    x.state == MCC_PATH_QUARANTINED)
						sc->healthy_quarantined++;
				}
	if (!sc->steady && now >= sc->end_ns / 10 * 6) { /* steady state from here */
		mcc_fab_model_queue_peak_reset(sc->model);
		sc->steady = 1;
		sc->q_last_t = now;
	} else if (sc->steady && now <= sc->end_ns) { /* qavg: the queue held since the last sample */
		double q = (double)mcc_fab_model_queue_bytes(sc->model, sc->rx_node_queue,
		                                             (uint32_t)sc->watch_dev, 1);
		sc->q_area += q * (double)(now - sc->q_last_t);
		sc->q_time += (double)(now - sc->q_last_t);
		sc->q_last_t = now;
	}
	if (sc->csv) {
		struct mcc_fab_model_stats ms;
		mcc_fab_model_stats(sc->model, &ms);
		/* goodput: the verified bytes of every flow over the last 1 % of
		 * the run (at least 5 ms, at most the rows kept), so a plot of a
		 * long run shows its trend and a short one its detail */
		uint64_t bytes = 0, win = sc->end_ns / 100 > 5000000 ? sc->end_ns / 100 : 5000000;
		for (uint32_t i = 0; i < sc->nflows; i++)
			bytes += sc->flows[i].bytes_ok;
		uint32_t back = 0, kept = sc->csv_rows < CSV_RING ? sc->csv_rows : CSV_RING - 1;
		while (back < kept && now - sc->csv_t[(sc->csv_rows - back - 1) % CSV_RING] < win)
			back++;
		uint32_t o = (sc->csv_rows - back) % CSV_RING; /* the oldest row within the window */
		if (back < kept)
			o = (sc->csv_rows - back - 1) % CSV_RING; /* the first row at or past it */
		double gbps = sc->csv_rows && now > sc->csv_t[o]
		                      ? (double)(bytes - sc->csv_bytes[o]) * 8 / (double)(now - sc->csv_t[o])
		                      : 0;
		sc->csv_t[sc->csv_rows % CSV_RING] = now;
		sc->csv_bytes[sc->csv_rows % CSV_RING] = bytes;
		sc->csv_rows++;
		fprintf(sc->csv, "%.3f,%" PRIu64 ",%" PRIu64 ",%d,%" PRIu64 ",%" PRIu64 ",%d,%" PRIu64
		                 ",%.3f,%.3f\n",
		        (double)now / 1e6, have_dv ? dv.window_bytes : 0, have_dv ? dv.inflight_bytes : 0,
		        have_dv ? (int)dv.state : -1, have_rt ? rt.window_bytes : 0,
		        have_rt ? rt.inflight_bytes : 0, have_rt ? (int)rt.state : -1,
		        mcc_fab_model_queue_bytes(sc->model, sc->rx_node_queue, 0, 1),
		        (double)ms.pause_ns / 1e6, gbps);
	}
	return now + (sc->sample_ns ? sc->sample_ns : sc->o->quick ? 1000000 : 500000);
}

static uint64_t fault_step(void *arg, uint64_t now)
{
	struct scn *sc = arg;
	uint64_t next = MCC_EXEC_PARK;
	for (uint32_t i = 0; i < sc->nfaults; i++) {
		struct fault *f = &sc->faults[i];
		if (f->done)
			continue;
		uint64_t t = f->t;
		if (t > now) {
			if (t < next)
				next = t;
			continue;
		}
		f->done = 1;
		switch (f->kind) {
		case F_LINK_DOWN:
		case F_LINK_UP:
			mcc_fab_fault_link(sc->model, f->node, f->dev, 1, f->kind == F_LINK_UP);
			break;
		case F_PORT_DOWN:
			mcc_fab_fault_port(sc->model, f->node, f->dev, 1, 0);
			break;
		case F_DEV_FATAL:
			mcc_fab_fault_device(sc->model, f->node, f->dev);
			break;
		case F_QP_FATAL:
			mcc_fab_fault_qp_fatal(sc->model, f->node, f->dev, f->peer_node, f->peer_dev);
			break;
		case F_PATH_MIG:
			mcc_fab_fault_path_mig(sc->model, f->node, f->dev, f->peer_node, f->peer_dev);
			break;
		case F_REKEY:
			mcc_fab_fault_rekey(sc->model, f->node);
			break;
		case F_SLOW_RX:
			mcc_fab_fault_slow_receiver(sc->model, f->node, f->dev, f->arg, 256u << 10);
			break;
		case F_CQ_ERR:
			mcc_fab_fault_cq(sc->model, f->node, f->dev);
			break;
		case F_LOSS: /* arg: loss per million, 0 clears */
			mcc_fab_fault_loss(sc->model, f->node, f->dev, 1, (uint32_t)f->arg);
			break;
		case F_POLLER_STALL:
			mcc_host_eng_stall(&sc->snd[f->node].eng, f->dev, f->arg);
			break;
		}
	}
	return next;
}

static int all_idle(void *arg)
{
	struct scn *sc = arg;
	if (!sc->draining)
		return 0;
	for (uint32_t i = 0; i < sc->nflows; i++) {
		struct flow *f = &sc->flows[i];
		if (f->outstanding)
			return 0;
	}
	return 1;
}

/* ------------------------------------------------------------- scenarios */

const char *const *mcc_scn_names(void)
{
	return mcc_spec_builtin_names();
}

int mcc_scn_check_spec(const char *path, char *err, size_t errlen)
{
	struct mcc_spec *sp = malloc(sizeof(*sp));
	if (!sp) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	int rc = mcc_spec_parse_file(path, sp, err, errlen) ? -EINVAL : 0;
	free(sp);
	return rc;
}

static struct flow *add_flow(struct scn *sc, uint32_t sender, uint32_t target, uint64_t msg,
                             uint32_t conc, uint64_t rate, int victim)
{
	struct flow *f = &sc->flows[sc->nflows];
	f->sc = sc;
	f->idx = sc->nflows++;
	f->snd = &sc->snd[sender];
	f->target = target;
	f->msg = msg;
	f->conc = conc > MAX_SLOTS ? MAX_SLOTS : conc;
	f->rate_bps = rate;
	f->victim = victim;
	f->snd->flows[f->snd->nflows++] = f;
	return f;
}

struct scn_shape {
	uint32_t senders, receivers, devs;
	double dur;
	uint8_t ib_timeout;
	uint8_t ib_retry;
	uint8_t rnr_retry;
	uint32_t rail_pause_s;
	uint32_t tent_rail_cooldown_s; /* 0: TENT's default */
	uint64_t recovery_ns;
	int tap;                       /* record hard-error WCs by generation */
};

/* The spec of the run: a file (opts.spec_path) or a built-in by name. */
static int load_spec(const struct mcc_scn_opts *o, struct mcc_spec *sp)
{
	char err[512], file[64];
	int r;
	if (o->spec_path) {
		r = mcc_spec_parse_file(o->spec_path, sp, err, sizeof(err));
	} else {
		const char *text = o->scenario ? mcc_spec_builtin(o->scenario) : NULL;
		if (!text)
			return -EINVAL;
		snprintf(file, sizeof(file), "specs/%s.ini", o->scenario);
		r = mcc_spec_parse_string(file, text, sp, err, sizeof(err));
	}
	if (r) {
		fprintf(stderr, "%s\n", err);
		return -EINVAL;
	}
	return 0;
}

static void build(struct scn *sc, const struct mcc_spec *sp, struct scn_shape *sh)
{
	memset(sh, 0, sizeof(*sh));
	sh->senders = sp->senders;
	sh->receivers = sp->receivers;
	sh->devs = sp->nics;
	sh->dur = sc->o->quick && sp->quick_duration_s > 0 ? sp->quick_duration_s : sp->duration_s;
	sh->ib_timeout = (uint8_t)sp->ib_timeout;
	sh->ib_retry = (uint8_t)sp->ib_retry;
	sh->rnr_retry = (uint8_t)sp->rnr_retry;
	sh->rail_pause_s = sp->rail_pause_s;
	sh->tent_rail_cooldown_s = sp->tent_rail_cooldown_s;
	sh->recovery_ns = sp->recovery_ns;
	sh->tap = sp->tap;
	sc->healthy_from_ctx = sp->healthy_from_ctx;
	sc->watch_ctx = (int)sp->watch_ctx;
	sc->watch_dev = (int)sp->watch_dev;
	sc->sample_ns = sp->sample_ns;
	sc->ini_scn = sp->policy[0] ? sp->policy : NULL;
	if (sc->o->duration_s > 0)
		sh->dur = sc->o->duration_s;
}

static void add_workload(struct scn *sc, const struct mcc_spec *sp)
{
	uint32_t R0 = sc->nsnd; /* first receiver node */
	double d = (double)sc->end_ns / 1e9;
	for (uint32_t i = 0; i < sp->nflows; i++) {
		const struct mcc_spec_flow *sf = &sp->flows[i];
		struct flow *f = add_flow(sc, sf->sender, R0 + sf->receiver, sf->size, sf->outstanding,
		                          sf->rate_bps, sf->victim);
		f->start_ns = sf->start_ns;
		f->stop_ns = sf->stop_ns;
		f->prio = sf->priority;
		f->next_send = sf->start_ns;
	}
	for (uint32_t i = 0; i < sp->nfaults; i++) {
		const struct mcc_spec_fault *sf = &sp->faults[i];
		uint64_t t = sf->at_ns;
		if (sf->has_frac) /* a fraction of the run's length */
			t = (uint64_t)(sf->at_frac * d * 1e9);
		if (sc->o->engine == MCC_SCN_TE && sf->has_te)
			t = sf->at_te_ns;
		if (sc->o->engine == MCC_SCN_TENT && sf->has_tent)
			t = sf->at_tent_ns;
		sc->faults[sc->nfaults++] = (struct fault){t, sf->kind, sf->node, sf->dev, sf->peer_node,
		                                           sf->peer_dev, sf->arg, 0};
	}
	if (sp->gray) { /* onset + 1 s, end of the loss, end + 1 s: the first loss
	                 * fault with a rate and the first clearing one after it */
		uint64_t on = 0, off = 0;
		int have_on = 0;
		for (uint32_t i = 0; i < sc->nfaults; i++) {
			const struct fault *f = &sc->faults[i];
			if (f->kind != F_LOSS)
				continue;
			if (!have_on && f->arg) {
				on = f->t;
				have_on = 1;
			} else if (have_on && !f->arg && f->t > on && !off) {
				off = f->t;
			}
		}
		if (!off)
			off = sc->end_ns;
		sc->gray_t[0] = on + 1000000000ull;
		sc->gray_t[1] = off;
		sc->gray_t[2] = off + 1000000000ull;
	}
	if (sp->measure_faults) { /* the window: first fault (+ settle) to the last */
		sc->ft0 = UINT64_MAX;
		for (uint32_t i = 0; i < sc->nfaults; i++) {
			if (sc->faults[i].t < sc->ft0)
				sc->ft0 = sc->faults[i].t;
			if (sc->faults[i].t > sc->ft1)
				sc->ft1 = sc->faults[i].t;
		}
		if (!sc->nfaults)
			sc->ft0 = 0;
		if (sc->ft1 <= sc->ft0)
			sc->ft1 = sc->end_ns;
		sc->fwin0 = sc->ft0 + (sp->fault_settle_ns ? sp->fault_settle_ns : 1000000000ull);
		sc->f_q_prev = MCC_PATH_HEALTHY;
	}
	sc->watch_seg = (int)(R0 + sp->watch_receiver);
	sc->rx_node_queue = (uint32_t)sc->watch_seg;
	/* fairness interval: the last flow's start + the settling time, to the
	 * earliest bulk stop or the end */
	uint64_t t0 = 0, t1 = sc->end_ns;
	for (uint32_t i = 0; i < sc->nflows; i++) {
		const struct flow *f = &sc->flows[i];
		if (f->start_ns > t0)
			t0 = f->start_ns;
		if (!f->victim && f->stop_ns && f->stop_ns < t1)
			t1 = f->stop_ns;
	}
	sc->fair_t0 = t0 + sp->fair_settle_ns;
	sc->fair_t1 = t1;
}

static int write_ini(struct scn *sc)
{
	/* the fabric's base RTT as its operator would state it, rounded up
	 * to a microsecond ([host] base_rtt = 0: not stated) */
	char rtt[64] = "";
	if (sc->spec->base_rtt)
		snprintf(rtt, sizeof(rtt), "[engine]\nbase_rtt_us = %llu",
		         (unsigned long long)((mcc_fab_model_base_rtt_ns(&sc->mcfg) + 999) / 1000));
	const char *extra[] = {sc->ini_scn, sc->o->ini_extra,
	                       sc->spec->qos ? "[engine]\nqos = on" : NULL, rtt[0] ? rtt : NULL};
	strcpy(sc->ini_path, "/tmp/mcc-scn-XXXXXX");
	return mcc_host_policy_ini(sc->ini_path, sc->o->mode, sc->o->module_dir, sc->o->module, extra,
	                           4);
}

int mcc_scn_run(const struct mcc_scn_opts *o, struct mcc_scn_result *r)
{
	struct scn *sc = calloc(1, sizeof(*sc));
	struct mcc_spec *sp = malloc(sizeof(*sp));
	struct scn_shape sh;
	int rc = 0;
	memset(r, 0, sizeof(*r));
	if (!sc || !sp) {
		free(sc);
		free(sp);
		return -ENOMEM;
	}
	if ((rc = load_spec(o, sp)) != 0) {
		free(sp);
		free(sc);
		return rc;
	}
	sc->o = o;
	sc->spec = sp;
	sc->last_state = -1;
	build(sc, sp, &sh);
	double cpu0 = mcc_host_cpu_ms();
	sc->ex = mcc_exec_create(o->exec ? MCC_EXEC_SIM : MCC_EXEC_THREADED, o->seed);
	mcc_fab_model_cfg_defaults(&sc->mcfg);
	sc->mcfg.nodes = sh.senders + sh.receivers;
	sc->mcfg.devs_per_node = sh.devs;
	sc->mcfg.seed = o->seed;
	if (sp->link_bps)
		sc->mcfg.link_bps = sp->link_bps;
	if (sp->prop_ns)
		sc->mcfg.prop_ns = sp->prop_ns;
	if (sp->switch_buf)
		sc->mcfg.switch_buf_bytes = sp->switch_buf;
	sc->mcfg.xoff_bytes = sp->xoff; /* 0: the model's default */
	sc->mcfg.xon_bytes = sp->xon;
	sc->mcfg.rail_optimised = (uint32_t)sp->rail_optimised;
	sc->model = mcc_fab_model_create(&sc->mcfg);
	if (!sc->model) {
		rc = -EINVAL;
		goto out;
	}
	sc->nsnd = sh.senders;
	sc->end_ns = (uint64_t)(sh.dur * 1e9);
	/* receivers: passive memory, registered on each of their NICs */
	sc->nrcv = sh.receivers;
	for (uint32_t i = 0; i < sc->nrcv; i++) {
		struct receiver *rv = &sc->rcv[i];
		rv->node = sh.senders + i;
		/* the flows' disjoint regions (below), at least a page */
		rv->len = sp->rx_buf ? sp->rx_buf : 4096;
		uint64_t need = 0;
		for (uint32_t k = 0; k < sp->nflows; k++)
			if (sp->flows[k].receiver == i)
				need += (uint64_t)sp->flows[k].outstanding * sp->flows[k].size;
		if (need > rv->len)
			rv->len = need;
		rv->buf = calloc(1, rv->len);
		if (!rv->buf) {
			rc = -ENOMEM;
			goto out;
		}
		struct mcc_fab_handle h = mcc_fab_model_handle(sc->model);
		for (uint32_t d = 0; d < sh.devs; d++) {
			mcc_fab_dev *dv = h.ops->open_device(h.fab, rv->node, d);
			h.ops->reg_mr(dv, rv->buf, rv->len, &rv->mr[d]);
			h.ops->close_device(dv);
		}
	}
	if (MCC_CC_COMPILED_IN && (rc = write_ini(sc)) != 0)
		goto out;
	sc->env.ex = sc->ex;
	sc->env.fab = mcc_fab_model_handle(sc->model);
	if (sh.tap)
		sc->tap = mcc_host_fab_tap_create(&sc->env.fab, sc->ex);
	sc->env.get_segment = get_segment;
	sc->env.seg_arg = sc;
	sc->env.cc_ini_path = MCC_CC_COMPILED_IN ? sc->ini_path : NULL;
	sc->env.cc_ignore_env = 1;
	/* all senders share the process's one policy instance: declare every
	 * engine's lanes (TE: per context 2 workers + monitor; TENT: 6 lanes +
	 * monitor) */
	sc->env.cc_max_lanes = sh.senders * (o->engine == MCC_SCN_TE ? sh.devs * 3 : 7);
	mcc_host_fab_actor_add(&sc->fab, sc->model, sc->ex);
	for (uint32_t i = 0; i < sc->nsnd; i++) {
		struct sender *s = &sc->snd[i];
		s->node = i;
		struct mcc_host_eng_cfg c;
		mcc_host_eng_cfg_defaults(&c, o->engine != MCC_SCN_TE, i);
		mcc_host_eng_cfg_ib(&c, sh.ib_timeout, sh.ib_retry, sh.rnr_retry);
		c.te.rail_pause_s = sh.rail_pause_s;
		c.te.ctx_recovery_delay_ns = sh.recovery_ns;
		if (sh.tent_rail_cooldown_s)
			c.tent.rail_cooldown_secs = sh.tent_rail_cooldown_s;
		if ((rc = mcc_host_eng_create(&s->eng, &c, &sc->env, on_task_done, s)) != 0)
			goto out;
	}
	/* the engines read their configuration when they are created: the
	 * scratch file goes now, so a run that is killed leaves none behind */
	if (sc->ini_path[0]) {
		unlink(sc->ini_path);
		sc->ini_path[0] = '\0';
	}
	add_workload(sc, sp);
	/* source buffers: pseudo-random payload, registered with the engine */
	for (uint32_t i = 0; i < sc->nsnd; i++) {
		struct sender *s = &sc->snd[i];
		size_t len = 0;
		for (uint32_t f = 0; f < s->nflows; f++)
			len += s->flows[f]->conc * s->flows[f]->msg;
		if (!len)
			continue;
		s->buf = malloc(len);
		s->buflen = len;
		uint64_t x = o->seed * 31 + i + 1;
		for (size_t k = 0; k + 8 <= len; k += 8) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			memcpy((char *)s->buf + k, &x, 8);
		}
		mcc_host_eng_register(&s->eng, s->buf, len);
		size_t off = 0;
		for (uint32_t f = 0; f < s->nflows; f++) {
			s->flows[f]->src = (char *)s->buf + off;
			off += s->flows[f]->conc * s->flows[f]->msg;
		}
	}
	/* receiver regions: disjoint per flow */
	uint64_t roff[4] = {0};
	for (uint32_t i = 0; i < sc->nflows; i++) {
		struct flow *f = &sc->flows[i];
		uint32_t ri = f->target - sc->rcv[0].node;
		f->dst_off = roff[ri];
		roff[ri] += f->conc * f->msg;
		snprintf(f->name, sizeof(f->name), "app%u", i);
		uint64_t wake = 1000 + (uint64_t)i * 100; /* a start time: no earlier */
		f->actor = mcc_exec_add(sc->ex, f->name, flow_step, f,
		                        f->start_ns > wake ? f->start_ns : wake);
	}
	sc->sampler = mcc_exec_add(sc->ex, "sampler", sampler_step, sc, 0);
	sc->faulter = mcc_exec_add(sc->ex, "faults", fault_step, sc, 0);
	if (o->timeline_csv && (sc->csv = fopen(o->timeline_csv, "w")))
		fprintf(sc->csv, "t_ms,dev_window,dev_inflight,dev_state,route_window,route_inflight,"
		                 "route_state,rx_queue_bytes,pause_ms,goodput_gbps\n");

	/* run, then drain: stop submitting and let every transfer finish */
	mcc_exec_run(sc->ex, sc->end_ns, NULL, NULL);
	sc->draining = 1;
	for (uint32_t i = 0; i < sc->nflows; i++)
		mcc_exec_wake(sc->flows[i].actor, mcc_exec_now(sc->ex));
	uint64_t t_end = mcc_exec_now(sc->ex);
	mcc_exec_run(sc->ex, t_end + 40000000000ull, all_idle, sc);
	/* a few idle control epochs: lane credit goes stale (idle domains leave
	 * credit mode), so the domains' in-flight is back to the live bytes */
	mcc_exec_run(sc->ex, mcc_exec_now(sc->ex) + 5000000ull, NULL, NULL);
	if (mcc_exec_kind(sc->ex) == MCC_EXEC_THREADED) /* threads joined; reap */
		for (uint32_t i = 0; i < sc->nflows; i++)
			flow_step(&sc->flows[i], mcc_exec_now(sc->ex));

	/* results */
	snprintf(r->scenario, sizeof(r->scenario), "%s", sp->name);
	snprintf(r->arm, sizeof(r->arm), "%s%s%s",
	         MCC_CC_COMPILED_IN ? (o->mode ? o->mode : "off") : "compiled-out",
	         MCC_CC_COMPILED_IN && o->module ? ":" : "",
	         MCC_CC_COMPILED_IN && o->module ? o->module : "");
	snprintf(r->engine, sizeof(r->engine), "%s", o->engine == MCC_SCN_TE ? "te" : "tent");
	r->duration_s = sh.dur;
	struct mcc_host_samples all = {0};
	int have_victim = 0;
	for (uint32_t i = 0; i < sc->nflows; i++)
		have_victim |= sc->flows[i].victim;
	uint64_t bulk = 0, all_bytes = 0, t0 = UINT64_MAX, t1 = 0;
	for (uint32_t i = 0; i < sc->nflows; i++) {
		struct flow *f = &sc->flows[i];
		all_bytes += f->bytes_ok;
		r->bytes_corrupted += f->corrupted;
		r->bytes_failed += f->bytes_failed;
		r->tasks_done += f->tasks_ok;
		r->tasks_failed += f->tasks_failed;
		if (!f->victim) {
			bulk += f->bytes_ok;
			if (f->t_first && f->t_first < t0)
				t0 = f->t_first;
			if (f->t_last > t1)
				t1 = f->t_last;
		}
		if (r->nflows < MCC_SCN_MAX_FLOWS)
			r->flow_gbps[r->nflows++] =
			    f->t_last > f->t_first ? (double)f->bytes_ok * 8 / (double)(f->t_last - f->t_first)
			                           : 0;
		if (f->victim == have_victim)
			mcc_host_samples_merge(&all, &f->lat);
	}
	mcc_host_samples_sort(&all);
	r->p50_us = mcc_host_samples_pct_us(&all, 0.5);
	r->p99_us = mcc_host_samples_pct_us(&all, 0.99);
	r->p999_us = mcc_host_samples_pct_us(&all, 0.999);
	r->vp99_us = have_victim ? r->p99_us : 0; /* the victims' when there are */
	mcc_host_samples_free(&all);
	/* per priority: every flow of that priority, victims included */
	for (int p = 0; p < 3; p++) {
		struct mcc_host_samples ps = { 0 };
		for (uint32_t i = 0; i < sc->nflows; i++)
			if (sc->flows[i].prio == p)
				mcc_host_samples_merge(&ps, &sc->flows[i].lat);
		mcc_host_samples_sort(&ps);
		r->prio_p99_us[p] = mcc_host_samples_pct_us(&ps, 0.99);
		mcc_host_samples_free(&ps);
	}
	/* fairness: every bulk flow is active over [fair_t0, fair_t1] (t0 is
	 * after the last start, t1 no later than the first bulk stop) */
	r->fair_from_s = (double)sc->fair_t0 / 1e9;
	r->fair_to_s = (double)sc->fair_t1 / 1e9;
	r->jain = 1;
	if (sc->fair_t1 > sc->fair_t0) {
		double sum = 0, sq = 0, len = (double)(sc->fair_t1 - sc->fair_t0);
		for (uint32_t i = 0; i < sc->nflows && r->nfair < MCC_SCN_MAX_FLOWS; i++) {
			const struct flow *f = &sc->flows[i];
			if (f->victim)
				continue;
			double x = (double)f->fair_bytes * 8 / len; /* bits per ns = Gb/s */
			r->fair_gbps[r->nfair++] = x;
			sum += x;
			sq += x * x;
		}
		if (r->nfair >= 2) /* 0: no bulk flow completed anything in it */
			r->jain = sq > 0 ? sum * sum / ((double)r->nfair * sq) : 0;
	}
	r->qavg_bytes = sc->q_time > 0 ? sc->q_area / sc->q_time : 0;
	r->measured = (sp->gray ? MCC_SCN_MEAS_GRAY : 0) | (sp->handoff ? MCC_SCN_MEAS_HANDOFF : 0) |
	              (sp->measure_faults ? MCC_SCN_MEAS_FAULTS : 0);
	/* bits per ns = Gb/s, over the bulk flows' active interval */
	r->goodput_gbps = t1 > t0 ? (double)bulk * 8 / (double)(t1 - t0) : 0;
	r->total_gbps = t1 > t0 ? (double)all_bytes * 8 / (double)(t1 - t0) : 0;
	struct mcc_fab_model_stats ms;
	mcc_fab_model_stats(sc->model, &ms);
	r->queue_peak_bytes = ms.queue_peak_bytes;
	r->queue_peak_steady_bytes = mcc_fab_model_queue_peak_reset(sc->model);
	r->pause_ms = (double)ms.pause_ns / 1e6;
	for (uint32_t i = 0; i < sc->nsnd; i++) {
		struct mcc_host_eng_stats es;
		mcc_host_eng_stats(&sc->snd[i].eng, &es);
		r->defers += es.defers;
		r->avoids += es.avoids;
		r->admits += es.admits;
		r->posted += es.posted;
		r->rail_pauses += es.rail_pauses;
		r->wc_errors += es.wc_errors;
		r->flushes += es.flushes;
		r->vcpu_ms += (double)es.vcpu / 1e6;
		r->permits_leaked += es.permits_live;
		for (uint32_t c = 0; c < mcc_host_eng_nctx(&sc->snd[i].eng); c++) {
			struct mcc_domain_stats_v1 x;
			if (mcc_host_eng_dstats(&sc->snd[i].eng, c, -1, 0, &x) == 0)
				r->permits_leaked += (int64_t)x.inflight_bytes; /* must be 0 */
			for (uint32_t rr = 0; rr < sc->nrcv; rr++)
				for (uint32_t d = 0; d < sh.devs; d++)
					if (mcc_host_eng_dstats(&sc->snd[i].eng, c, (int)sc->rcv[rr].node, (int)d, &x) == 0) {
						r->quarantines += x.quarantines;
						r->probes += x.probes;
						r->permits_leaked += (int64_t)x.inflight_bytes;
					}
		}
	}
	{
		struct mcc_domain_stats_v1 x;
		r->watch_final_state = mcc_host_eng_dstats(&sc->snd[0].eng, (uint32_t)sc->watch_ctx, sc->watch_seg,
		                                  sc->watch_dev, &x) == 0
		                           ? x.state
		                           : 0;
	}
	r->healthy_quarantined = sc->healthy_quarantined;
	for (uint32_t i = 0; i < sc->nsnd; i++) {
		struct mcc_host_eng_stats es;
		mcc_host_eng_stats(&sc->snd[i].eng, &es);
		r->handoffs += es.handoffs;
	}
	if (sc->gray_n == 3) { /* NIC 1's share of the bytes in each interval */
		uint32_t rn = sc->rcv[0].node;
		uint64_t d0 = sc->gray_at[1][0] - sc->gray_at[0][0], d1 = sc->gray_at[1][1] - sc->gray_at[0][1];
		uint64_t a0 = mcc_fab_model_rx_bytes(sc->model, rn, 0, 1) - sc->gray_at[2][0],
		         a1 = mcc_fab_model_rx_bytes(sc->model, rn, 1, 1) - sc->gray_at[2][1];
		r->gray_during = d0 + d1 ? (double)d1 / (double)(d0 + d1) : -1;
		r->gray_after = a0 + a1 ? (double)a1 / (double)(a0 + a1) : -1;
		r->gray_bytes_during = d0 + d1;
	} else {
		r->gray_during = r->gray_after = -1;
	}
	if (sp->measure_faults) {
		uint64_t from = sc->f_last_done > sc->ft0 ? sc->f_last_done : sc->ft0;
		if (sc->ft1 > from && sc->ft1 - from > sc->f_stall)
			sc->f_stall = sc->ft1 - from; /* none since the last completion */
		r->fault_stall_ns = sc->f_stall;
		r->fault_lu_reads = sc->f_lu_reads;
		uint64_t d0 = sc->ftx_n == 2 ? sc->ftx[1][0] - sc->ftx[0][0] : 0,
		         d1 = sc->ftx_n == 2 ? sc->ftx[1][1] - sc->ftx[0][1] : 0;
		r->fault_share = d0 + d1 ? (double)d1 / (double)(d0 + d1) : -1;
		struct mcc_host_eng_stats es;
		mcc_host_eng_stats(&sc->snd[0].eng, &es);
		r->fault_nup = es.no_usable_path;
		r->lu_after_allq_ns = sc->f_t_lu ? (int64_t)(sc->f_t_lu - sc->f_t_allq) : -1;
		memcpy(r->q_cooldown_ms, sc->f_qcool, sizeof(r->q_cooldown_ms));
		r->nq_cooldown = sc->f_nqcool;
	} else {
		r->fault_share = -1;
		r->lu_after_allq_ns = -1;
	}
	r->allq_ns = sc->t_allq;
	r->handoff_ns = sc->t_handoff ? (int64_t)(sc->t_handoff - sc->t_allq) : -1;
	r->watch_q_gen = sc->q_gen;
	r->watch_q_failed_gen = sc->q_failed_gen;
	r->watch_rec_gen = sc->rec_gen;
	r->watch_rec_failed_gen = sc->rec_failed_gen;
	memcpy(r->task_states, sc->states_seen, sizeof(r->task_states));
	snprintf(r->state_timeline, sizeof(r->state_timeline), "%s",
	         sc->timeline[0] ? sc->timeline : "-");
	r->bytes_lost = (uint64_t)(r->tasks_done + r->tasks_failed) * 0; /* see below */
	/* lost = bytes reported complete but not delivered: verified per task
	 * against the source checksum, counted in bytes_corrupted; a transfer the
	 * engine never finished within the drain is lost. */
	for (uint32_t i = 0; i < sc->nflows; i++)
		r->bytes_lost += (uint64_t)sc->flows[i].outstanding * sc->flows[i].msg;
	r->digest = mix(sc->digest, ms.events);
	r->digest = mix(r->digest, ms.bytes_delivered);
	r->digest = mix(r->digest, ms.queue_peak_bytes);
	r->digest = mix(r->digest, mcc_exec_steps(sc->ex));
	r->cpu_ms = mcc_host_cpu_ms() - cpu0;
out:
	if (sc->csv)
		fclose(sc->csv);
	for (uint32_t i = 0; i < sc->nsnd; i++) {
		mcc_host_eng_destroy(&sc->snd[i].eng);
		free(sc->snd[i].buf);
	}
	for (uint32_t i = 0; i < sc->nflows; i++)
		mcc_host_samples_free(&sc->flows[i].lat);
	mcc_fab_model_destroy(sc->model);
	mcc_host_fab_tap_destroy(sc->tap);
	for (uint32_t i = 0; i < sc->nrcv; i++)
		free(sc->rcv[i].buf);
	mcc_exec_destroy(sc->ex);
	if (sc->ini_path[0])
		unlink(sc->ini_path);
	free(sp);
	free(sc);
	return rc;
}

void mcc_scn_result_write(FILE *f, const struct mcc_scn_result *r)
{
	char fair[MCC_SCN_MAX_FLOWS * 16 + 2] = "-";
	size_t l = 0;
	for (uint32_t i = 0; i < r->nfair && l + 16 < sizeof(fair); i++)
		l += (size_t)snprintf(fair + l, sizeof(fair) - l, "%s%.3f", i ? "," : "", r->fair_gbps[i]);
	fprintf(f,
	        "RESULT scenario=%s arm=%s engine=%s dur=%.6f goodput=%.6f cpu=%.3f vcpu=%.3f "
	        "p50=%.3f p99=%.3f p999=%.3f qpeak=%" PRIu64 " qsteady=%" PRIu64 " pause=%.6f lost=%" PRIu64
	        " corrupt=%" PRIu64 " failedb=%" PRIu64 " leaked=%" PRId64 " done=%" PRIu64
	        " failed=%" PRIu64 " s0=%" PRIu64 " s1=%" PRIu64 " s2=%" PRIu64 " s3=%" PRIu64
	        " defers=%" PRIu64 " avoids=%" PRIu64 " rail_pauses=%" PRIu64 " wcerr=%" PRIu64
	        " quar=%" PRIu64 " probes=%" PRIu64 " final=%u hq=%u digest=%" PRIu64
	        " jain=%.6f fair_from=%.6f fair_gbps=%s qavg=%.0f vp99=%.3f total=%.6f hp99=%.3f"
	        " mp99=%.3f lp99=%.3f timeline=%s\n",
	        r->scenario, r->arm, r->engine, r->duration_s, r->goodput_gbps, r->cpu_ms, r->vcpu_ms,
	        r->p50_us, r->p99_us, r->p999_us, r->queue_peak_bytes, r->queue_peak_steady_bytes,
	        r->pause_ms, r->bytes_lost,
	        r->bytes_corrupted, r->bytes_failed, r->permits_leaked, r->tasks_done, r->tasks_failed,
	        r->task_states[0], r->task_states[1], r->task_states[2], r->task_states[3], r->defers,
	        r->avoids, r->rail_pauses, r->wc_errors, r->quarantines, r->probes,
	        r->watch_final_state, r->healthy_quarantined, r->digest, r->jain, r->fair_from_s, fair,
	        r->qavg_bytes, r->vp99_us, r->total_gbps, r->prio_p99_us[0], r->prio_p99_us[1],
	        r->prio_p99_us[2], r->state_timeline);
}

int mcc_scn_result_parse(const char *line, struct mcc_scn_result *r)
{
	memset(r, 0, sizeof(*r));
	r->handoff_ns = -1; /* not in the line: not measured */
	r->gray_during = r->gray_after = -1;
	char fair[MCC_SCN_MAX_FLOWS * 16 + 2];
	int n = sscanf(line,
	               "RESULT scenario=%15s arm=%15s engine=%7s dur=%lf goodput=%lf cpu=%lf vcpu=%lf "
	               "p50=%lf p99=%lf p999=%lf qpeak=%" SCNu64 " qsteady=%" SCNu64 " pause=%lf lost=%" SCNu64
	               " corrupt=%" SCNu64 " failedb=%" SCNu64 " leaked=%" SCNd64 " done=%" SCNu64
	               " failed=%" SCNu64 " s0=%" SCNu64 " s1=%" SCNu64 " s2=%" SCNu64 " s3=%" SCNu64
	               " defers=%" SCNu64 " avoids=%" SCNu64 " rail_pauses=%" SCNu64 " wcerr=%" SCNu64
	               " quar=%" SCNu64 " probes=%" SCNu64 " final=%u hq=%u digest=%" SCNu64
	               " jain=%lf fair_from=%lf fair_gbps=%1281s qavg=%lf vp99=%lf total=%lf hp99=%lf"
	               " mp99=%lf lp99=%lf timeline=%159s",
	               r->scenario, r->arm, r->engine, &r->duration_s, &r->goodput_gbps, &r->cpu_ms,
	               &r->vcpu_ms, &r->p50_us, &r->p99_us, &r->p999_us, &r->queue_peak_bytes,
	               &r->queue_peak_steady_bytes,
	               &r->pause_ms, &r->bytes_lost, &r->bytes_corrupted, &r->bytes_failed,
	               &r->permits_leaked, &r->tasks_done, &r->tasks_failed, &r->task_states[0],
	               &r->task_states[1], &r->task_states[2], &r->task_states[3], &r->defers,
	               &r->avoids, &r->rail_pauses, &r->wc_errors, &r->quarantines, &r->probes,
	               &r->watch_final_state, &r->healthy_quarantined, &r->digest, &r->jain,
	               &r->fair_from_s, fair, &r->qavg_bytes, &r->vp99_us, &r->total_gbps,
	               &r->prio_p99_us[0], &r->prio_p99_us[1], &r->prio_p99_us[2], r->state_timeline);
	if (n != 42)
		return -EINVAL;
	if (strcmp(fair, "-")) {
		char *save = NULL;
		for (char *t = strtok_r(fair, ",", &save); t && r->nfair < MCC_SCN_MAX_FLOWS;
		     t = strtok_r(NULL, ",", &save))
			r->fair_gbps[r->nfair++] = strtod(t, NULL);
	}
	return 0;
}
