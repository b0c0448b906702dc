/* SPDX-License-Identifier: MIT */
/* spec.c - scenario description parser (see spec.h, README.md). */
#include "spec.h"

#include <ini.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ini_parse_stream reads one line per reader call: the count is the line
 * the handler is looking at. */
struct src {
	const char *p;   /* string source */
	FILE *f;         /* or a file */
	int line;
};

struct pctx {
	struct src *src;
	const char *file;
	struct mcc_spec *s;
	char *err;
	size_t errlen;
	int failed;
	int line_scenario, last_line;
	/* current [flow.X] / [fault.X] section */
	char cur[64];
	int cur_kind;  /* 0 other, 1 flow, 2 fault */
	int cur_idx;   /* flow: first index of the group; fault: index */
	int cur_n;     /* flow: flows in the group */
	int flow_lo, flow_hi;
	int seen_flow_keys;
};

static char *reader(char *str, int num, void *stream)
{
	struct src *s = stream;
	if (s->f) {
		char *r = fgets(str, num, s->f);
		if (r)
			s->line++;
		return r;
	}
	if (!*s->p)
		return NULL;
	int i = 0;
	while (i < num - 1 && s->p[i] && s->p[i] != '\n')
		i++;
	if (s->p[i] == '\n' && i < num - 1)
		i++;
	memcpy(str, s->p, (size_t)i);
	str[i] = 0;
	s->p += i;
	s->line++;
	return str;
}

__attribute__((format(printf, 3, 4))) static int fail(struct pctx *c, int line, const char *fmt, ...)
{
	if (c->failed)
		return 0;
	c->failed = 1;
	int n = snprintf(c->err, c->errlen, "%s:%d: ", c->file, line);
	if (n < 0 || (size_t)n >= c->errlen)
		return 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return 0;
}

static int parse_u64(const char *v, uint64_t *out)
{
	char *e;
	if (!*v || *v == '-' || !isdigit((unsigned char)*v))
		return -1;
	errno = 0;
	unsigned long long x = strtoull(v, &e, 10);
	if (errno || *e)
		return -1;
	*out = x;
	return 0;
}

static int parse_u32(const char *v, uint32_t *out, uint32_t max)
{
	uint64_t x;
	if (parse_u64(v, &x) || x > max)
		return -1;
	*out = (uint32_t)x;
	return 0;
}

static int parse_double(const char *v, double *out)
{
	char *e;
	if (!*v)
		return -1;
	errno = 0;
	double x = strtod(v, &e);
	if (errno || *e || !isfinite(x) || x < 0)
		return -1;
	*out = x;
	return 0;
}

/* Seconds as a decimal to exact nanoseconds ("2.6" is 2600000000). */
static int parse_secs_ns(const char *v, uint64_t *ns)
{
	uint64_t ip = 0, fp = 0;
	int nd = 0;
	const char *p = v;
	if (!isdigit((unsigned char)*p) && *p != '.')
		return -1;
	while (isdigit((unsigned char)*p)) {
		if (ip > 1000000000ull)
			return -1;
		ip = ip * 10 + (uint64_t)(*p++ - '0');
	}
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p)) {
			if (nd < 9) {
				fp = fp * 10 + (uint64_t)(*p - '0');
				nd++;
			}
			p++;
		}
	}
	if (*p) { /* an exponent or garbage: through strtod */
		double d;
		if (parse_double(v, &d) || d > 1e9)
			return -1;
		*ns = (uint64_t)llround(d * 1e9);
		return 0;
	}
	if (p == v || (p == v + 1 && *v == '.'))
		return -1;
	while (nd < 9) {
		fp *= 10;
		nd++;
	}
	*ns = ip * 1000000000ull + fp;
	return 0;
}

/* Bytes with an optional binary K/M/G suffix ("1M", "1.5M", "4096"). */
static int parse_size(const char *v, uint64_t *out)
{
	char buf[64];
	size_t l = strlen(v);
	if (!l || l >= sizeof(buf))
		return -1;
	memcpy(buf, v, l + 1);
	uint64_t mul = 1;
	char last = (char)toupper((unsigned char)buf[l - 1]);
	if (last == 'K' || last == 'M' || last == 'G') {
		mul = last == 'K' ? 1ull << 10 : last == 'M' ? 1ull << 20 : 1ull << 30;
		buf[--l] = 0;
	}
	uint64_t x;
	if (parse_u64(buf, &x) == 0) {
		if (x > (UINT64_MAX >> 31))
			return -1;
		*out = x * mul;
		return 0;
	}
	double d;
	if (parse_double(buf, &d) || d * (double)mul > 1e15)
		return -1;
	*out = (uint64_t)llround(d * (double)mul);
	return 0;
}

static int parse_bool(const char *v, int *out)
{
	if (!strcmp(v, "0") || !strcmp(v, "no") || !strcmp(v, "false")) {
		*out = 0;
		return 0;
	}
	if (!strcmp(v, "1") || !strcmp(v, "yes") || !strcmp(v, "true")) {
		*out = 1;
		return 0;
	}
	return -1;
}

static int parse_gbps(const char *v, uint64_t *bps)
{
	double d;
	if (parse_double(v, &d) || d > 100000)
		return -1;
	*bps = (uint64_t)llround(d * 1e9);
	return 0;
}

static const char *const fault_kinds[] = {NULL,       "link_down", "link_up",   "port_down",
                                          "dev_fatal", "qp_fatal", "rekey",     "slow_rx",
                                          "cq_err",   "poller_stall", "path_mig", "loss"};

#define BAD(what) return fail(c, line, "[%s] %s = '%s': %s", section, name, value, what)
#define NUM(expr) \
	do { \
		if (expr) \
			BAD("bad number"); \
	} while (0)

static int h_scenario(struct pctx *c, int line, const char *section, const char *name,
                      const char *value)
{
	struct mcc_spec *s = c->s;
	c->line_scenario = line;
	if (!strcmp(name, "name")) {
		size_t l = strlen(value);
		if (!l || l > 15)
			BAD("1 to 15 characters");
		for (size_t i = 0; i < l; i++)
			if (!islower((unsigned char)value[i]) && !isdigit((unsigned char)value[i]) &&
			    value[i] != '_' && value[i] != '-')
				BAD("only [a-z0-9_-]");
		memcpy(s->name, value, l + 1);
	} else if (!strcmp(name, "duration_s")) {
		NUM(parse_double(value, &s->duration_s) || s->duration_s <= 0 || s->duration_s > 3600);
	} else if (!strcmp(name, "quick_duration_s")) {
		NUM(parse_double(value, &s->quick_duration_s) || s->quick_duration_s <= 0 ||
		    s->quick_duration_s > 3600);
	} else if (!strcmp(name, "senders")) {
		NUM(parse_u32(value, &s->senders, MCC_SPEC_MAX_SENDERS) || !s->senders);
	} else if (!strcmp(name, "receivers")) {
		NUM(parse_u32(value, &s->receivers, MCC_SPEC_MAX_RECEIVERS) || !s->receivers);
	} else if (!strcmp(name, "nics")) {
		NUM(parse_u32(value, &s->nics, MCC_SPEC_MAX_NICS) || !s->nics);
	} else if (!strcmp(name, "sample_us")) {
		uint64_t us;
		NUM(parse_u64(value, &us) || !us || us > 1000000);
		s->sample_ns = us * 1000;
	} else {
		return fail(c, line, "[%s]: unknown key '%s'", section, name);
	}
	return 1;
}

static int h_fabric(struct pctx *c, int line, const char *section, const char *name,
                    const char *value)
{
	struct mcc_spec *s = c->s;
	if (!strcmp(name, "link_gbps"))
		NUM(parse_gbps(value, &s->link_bps) || !s->link_bps);
	else if (!strcmp(name, "prop_ns"))
		NUM(parse_u64(value, &s->prop_ns) || !s->prop_ns || s->prop_ns > 1000000000);
	else if (!strcmp(name, "switch_buf"))
		NUM(parse_size(value, &s->switch_buf) || !s->switch_buf);
	else if (!strcmp(name, "xoff"))
		NUM(parse_size(value, &s->xoff) || !s->xoff);
	else if (!strcmp(name, "xon"))
		NUM(parse_size(value, &s->xon) || !s->xon);
	else if (!strcmp(name, "rail_optimised"))
		NUM(parse_bool(value, &s->rail_optimised));
	else
		return fail(c, line, "[%s]: unknown key '%s'", section, name);
	return 1;
}

static int h_host(struct pctx *c, int line, const char *section, const char *name,
                  const char *value)
{
	struct mcc_spec *s = c->s;
	if (!strcmp(name, "ib_timeout"))
		NUM(parse_u32(value, &s->ib_timeout, 31));
	else if (!strcmp(name, "ib_retry"))
		NUM(parse_u32(value, &s->ib_retry, 7));
	else if (!strcmp(name, "rnr_retry"))
		NUM(parse_u32(value, &s->rnr_retry, 7));
	else if (!strcmp(name, "rail_pause_s"))
		NUM(parse_u32(value, &s->rail_pause_s, 86400));
	else if (!strcmp(name, "tent_rail_cooldown_s"))
		NUM(parse_u32(value, &s->tent_rail_cooldown_s, 86400));
	else if (!strcmp(name, "recovery_s"))
		NUM(parse_secs_ns(value, &s->recovery_ns));
	else if (!strcmp(name, "tap"))
		NUM(parse_bool(value, &s->tap));
	else if (!strcmp(name, "qos"))
		NUM(parse_bool(value, &s->qos));
	else if (!strcmp(name, "base_rtt"))
		NUM(parse_bool(value, &s->base_rtt));
	else
		return fail(c, line, "[%s]: unknown key '%s'", section, name);
	return 1;
}

static int h_policy(struct pctx *c, int line, const char *section, const char *name,
                    const char *value)
{
	struct mcc_spec *s = c->s;
	size_t l = strlen(s->policy);
	if (!l)
		l = (size_t)snprintf(s->policy, sizeof(s->policy), "[controller]");
	int n = snprintf(s->policy + l, sizeof(s->policy) - l, "\n%s = %s", name, value);
	if (n < 0 || (size_t)n >= sizeof(s->policy) - l)
		return fail(c, line, "[%s]: more than %d characters", section, MCC_SPEC_POLICY_MAX - 1);
	return 1;
}

static int h_flow(struct pctx *c, int line, const char *section, const char *name,
                  const char *value)
{
	struct mcc_spec *s = c->s;
	if (!strcmp(name, "senders") || !strcmp(name, "sender")) {
		if (c->seen_flow_keys)
			return fail(c, line, "[%s]: senders given twice", section);
		uint32_t lo, hi;
		const char *dash = strchr(value, '-');
		char a[32];
		if (dash) {
			size_t l = (size_t)(dash - value);
			if (l >= sizeof(a))
				BAD("bad range");
			memcpy(a, value, l);
			a[l] = 0;
			if (parse_u32(a, &lo, 1000) || parse_u32(dash + 1, &hi, 1000) || hi < lo)
				BAD("bad range (a-b)");
		} else {
			NUM(parse_u32(value, &lo, 1000));
			hi = lo;
		}
		/* expand the section's flows: one per sender, defaults copied */
		struct mcc_spec_flow proto = s->flows[c->cur_idx];
		uint32_t n = hi - lo + 1;
		if (c->cur_idx + n > MCC_SPEC_MAX_FLOWS)
			return fail(c, line, "[%s]: more than %d flows in the scenario", section,
			            MCC_SPEC_MAX_FLOWS);
		for (uint32_t i = 0; i < n; i++) {
			s->flows[c->cur_idx + i] = proto;
			s->flows[c->cur_idx + i].sender = lo + i;
		}
		c->cur_n = (int)n;
		s->nflows = (uint32_t)c->cur_idx + n;
		c->seen_flow_keys = 1;
		return 1;
	}
	for (int i = 0; i < c->cur_n; i++) {
		struct mcc_spec_flow *f = &s->flows[c->cur_idx + i];
		if (!strcmp(name, "receiver"))
			NUM(parse_u32(value, &f->receiver, 1000));
		else if (!strcmp(name, "nic"))
			NUM(parse_u32(value, &f->nic, 1000));
		else if (!strcmp(name, "size"))
			NUM(parse_size(value, &f->size) || !f->size || f->size > (1ull << 30));
		else if (!strcmp(name, "outstanding")) {
			NUM(parse_u32(value, &f->outstanding, MCC_SPEC_MAX_SLOTS) || !f->outstanding);
		} else if (!strcmp(name, "rate_gbps"))
			NUM(parse_gbps(value, &f->rate_bps));
		else if (!strcmp(name, "start_s"))
			NUM(parse_secs_ns(value, &f->start_ns));
		else if (!strcmp(name, "stop_s"))
			NUM(parse_secs_ns(value, &f->stop_ns));
		else if (!strcmp(name, "victim"))
			NUM(parse_bool(value, &f->victim));
		else if (!strcmp(name, "priority")) {
			if (!strcmp(value, "high"))
				f->priority = MCC_SPEC_PRIO_HIGH;
			else if (!strcmp(value, "medium"))
				f->priority = MCC_SPEC_PRIO_MEDIUM;
			else if (!strcmp(value, "low"))
				f->priority = MCC_SPEC_PRIO_LOW;
			else
				BAD("expected high, medium or low");
		} else
			return fail(c, line, "[%s]: unknown key '%s'", section, name);
	}
	return 1;
}

static int node_key(struct pctx *c, int line, const char *section, const char *name,
                    const char *value, uint32_t *node, int *rcv)
{
	if (parse_u32(value, node, 1000))
		return fail(c, line, "[%s] %s = '%s': bad number", section, name, value);
	*rcv = !!strstr(name, "receiver");
	return 1;
}

static int h_fault(struct pctx *c, int line, const char *section, const char *name,
                   const char *value)
{
	struct mcc_spec_fault *f = &c->s->faults[c->cur_idx];
	if (!strcmp(name, "at_s")) {
		NUM(parse_secs_ns(value, &f->at_ns));
		f->has_at = 1;
	} else if (!strcmp(name, "at_s_te")) {
		NUM(parse_secs_ns(value, &f->at_te_ns));
		f->has_te = 1;
	} else if (!strcmp(name, "at_s_tent")) {
		NUM(parse_secs_ns(value, &f->at_tent_ns));
		f->has_tent = 1;
	} else if (!strcmp(name, "at_frac")) {
		NUM(parse_double(value, &f->at_frac) || f->at_frac > 1);
		f->has_frac = 1;
	} else if (!strcmp(name, "kind")) {
		f->kind = 0;
		for (int k = 1; k < (int)(sizeof(fault_kinds) / sizeof(fault_kinds[0])); k++)
			if (!strcmp(value, fault_kinds[k]))
				f->kind = k;
		if (!f->kind)
			BAD("unknown kind (link_down link_up port_down dev_fatal qp_fatal path_mig rekey "
			    "slow_rx cq_err poller_stall loss)");
	} else if (!strcmp(name, "node") || !strcmp(name, "receiver")) {
		if (f->has_node)
			return fail(c, line, "[%s]: node given twice", section);
		f->has_node = 1;
		return node_key(c, line, section, name, value, &f->node, &f->node_rcv);
	} else if (!strcmp(name, "peer_node") || !strcmp(name, "peer_receiver")) {
		return node_key(c, line, section, name, value, &f->peer_node, &f->peer_rcv);
	} else if (!strcmp(name, "dev")) {
		NUM(parse_u32(value, &f->dev, 1000));
	} else if (!strcmp(name, "peer_dev")) {
		NUM(parse_u32(value, &f->peer_dev, 1000));
	} else if (!strcmp(name, "arg")) {
		NUM(parse_u64(value, &f->arg));
	} else {
		return fail(c, line, "[%s]: unknown key '%s'", section, name);
	}
	return 1;
}

static int h_measure(struct pctx *c, int line, const char *section, const char *name,
                     const char *value)
{
	struct mcc_spec *s = c->s;
	if (!strcmp(name, "watch_ctx"))
		NUM(parse_u32(value, &s->watch_ctx, 1000));
	else if (!strcmp(name, "watch_receiver"))
		NUM(parse_u32(value, &s->watch_receiver, 1000));
	else if (!strcmp(name, "watch_dev"))
		NUM(parse_u32(value, &s->watch_dev, 1000));
	else if (!strcmp(name, "healthy_from_ctx"))
		NUM(parse_u32(value, &s->healthy_from_ctx, 1000));
	else if (!strcmp(name, "fair_settle_ms")) {
		double ms;
		NUM(parse_double(value, &ms) || ms > 3600e3);
		s->fair_settle_ns = (uint64_t)llround(ms * 1e6);
	} else if (!strcmp(name, "gray"))
		NUM(parse_bool(value, &s->gray));
	else if (!strcmp(name, "handoff"))
		NUM(parse_bool(value, &s->handoff));
	else if (!strcmp(name, "faults"))
		NUM(parse_bool(value, &s->measure_faults));
	else if (!strcmp(name, "fault_settle_ms")) {
		double ms;
		NUM(parse_double(value, &ms) || ms < 0 || ms > 3600e3);
		s->fault_settle_ns = (uint64_t)llround(ms * 1e6);
	}
	else if (!strcmp(name, "rx_buf"))
		NUM(parse_size(value, &s->rx_buf) || !s->rx_buf);
	else
		return fail(c, line, "[%s]: unknown key '%s'", section, name);
	return 1;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct pctx *c = user;
	int line = c->src->line;
	struct mcc_spec *s = c->s;
	if (c->failed)
		return 0;
	c->last_line = line;
	if (strcmp(section, c->cur)) { /* a new section */
		snprintf(c->cur, sizeof(c->cur), "%s", section);
		c->cur_kind = 0;
		if (!strncmp(section, "flow.", 5) && section[5]) {
			for (uint32_t i = 0; i < s->nflows; i++)
				if (!strcmp(s->flows[i].name, section + 5))
					return fail(c, line, "[%s]: section given twice", section);
			if (s->nflows >= MCC_SPEC_MAX_FLOWS)
				return fail(c, line, "[%s]: more than %d flows", section, MCC_SPEC_MAX_FLOWS);
			struct mcc_spec_flow *f = &s->flows[s->nflows];
			memset(f, 0, sizeof(*f));
			snprintf(f->name, sizeof(f->name), "%s", section + 5);
			f->size = 1u << 20;
			f->outstanding = 4;
			f->line = line;
			c->cur_kind = 1;
			c->cur_idx = (int)s->nflows++;
			c->cur_n = 1;
			c->seen_flow_keys = 0;
		} else if (!strncmp(section, "fault.", 6) && section[6]) {
			if (s->nfaults >= MCC_SPEC_MAX_FAULTS)
				return fail(c, line, "[%s]: more than %d faults", section, MCC_SPEC_MAX_FAULTS);
			struct mcc_spec_fault *f = &s->faults[s->nfaults];
			memset(f, 0, sizeof(*f));
			f->line = line;
			c->cur_kind = 2;
			c->cur_idx = (int)s->nfaults++;
		}
	}
	if (!strcmp(section, "scenario"))
		return h_scenario(c, line, section, name, value);
	if (!strcmp(section, "fabric"))
		return h_fabric(c, line, section, name, value);
	if (!strcmp(section, "host"))
		return h_host(c, line, section, name, value);
	if (!strcmp(section, "policy"))
		return h_policy(c, line, section, name, value);
	if (!strcmp(section, "measure"))
		return h_measure(c, line, section, name, value);
	if (c->cur_kind == 1)
		return h_flow(c, line, section, name, value);
	if (c->cur_kind == 2)
		return h_fault(c, line, section, name, value);
	if (!*section)
		return fail(c, line, "key '%s' outside any section", name);
	return fail(c, line, "unknown section [%s] (scenario fabric host policy measure flow.NAME "
	                     "fault.NAME)",
	            section);
}

static void spec_defaults(struct mcc_spec *s)
{
	static const struct mcc_spec defaults = {
	    .senders = 1,
	    .receivers = 1,
	    .nics = 1,
	    .ib_timeout = 14,
	    .ib_retry = 7,
	    .rnr_retry = 7,
	    .rail_pause_s = 30,
	    .recovery_ns = 30000000000ull,
	    .fair_settle_ns = 50000000ull,
	    .base_rtt = 1,
	};
	*s = defaults;
}

static int validate(struct pctx *c)
{
	struct mcc_spec *s = c->s;
	if (!s->name[0])
		return fail(c, c->line_scenario ? c->line_scenario : 1, "[scenario] name is missing");
	if (s->duration_s <= 0)
		return fail(c, c->line_scenario ? c->line_scenario : 1, "[scenario] duration_s is missing");
	if (!s->nflows)
		return fail(c, c->last_line ? c->last_line : 1, "no flows (a [flow.NAME] section)");
	if (s->senders + s->receivers > 72)
		return fail(c, c->line_scenario, "more than 72 nodes");
	uint32_t per_sender[MCC_SPEC_MAX_SENDERS] = {0};
	for (uint32_t i = 0; i < s->nflows; i++) {
		struct mcc_spec_flow *f = &s->flows[i];
		if (f->sender >= s->senders)
			return fail(c, f->line, "[flow.%s]: sender %u out of range (senders = %u)", f->name,
			            f->sender, s->senders);
		if (f->receiver >= s->receivers)
			return fail(c, f->line, "[flow.%s]: receiver %u out of range (receivers = %u)",
			            f->name, f->receiver, s->receivers);
		if (f->nic >= s->nics)
			return fail(c, f->line, "[flow.%s]: nic %u out of range (nics = %u)", f->name, f->nic,
			            s->nics);
		if (f->size < 16)
			return fail(c, f->line, "[flow.%s]: size below 16 bytes", f->name);
		if (f->stop_ns && f->stop_ns <= f->start_ns)
			return fail(c, f->line, "[flow.%s]: stop_s not after start_s", f->name);
		if (++per_sender[f->sender] > 8)
			return fail(c, f->line, "[flow.%s]: more than 8 flows on sender %u", f->name,
			            f->sender);
	}
	uint32_t nodes = s->senders + s->receivers;
	for (uint32_t i = 0; i < s->nfaults; i++) {
		struct mcc_spec_fault *f = &s->faults[i];
		if (!f->kind)
			return fail(c, f->line, "fault: kind is missing");
		if (!f->has_at && !f->has_frac && !(f->has_te && f->has_tent))
			return fail(c, f->line, "fault: at_s is missing");
		if (f->node_rcv) {
			if (f->node >= s->receivers)
				return fail(c, f->line, "fault: receiver %u out of range", f->node);
			f->node += s->senders;
			f->node_rcv = 0;
		}
		if (f->peer_rcv) {
			if (f->peer_node >= s->receivers)
				return fail(c, f->line, "fault: peer_receiver %u out of range", f->peer_node);
			f->peer_node += s->senders;
			f->peer_rcv = 0;
		}
		if (f->node >= nodes || f->peer_node >= nodes)
			return fail(c, f->line, "fault: node out of range (%u nodes)", nodes);
		if (f->kind == MCC_SPEC_F_POLLER_STALL && f->node >= s->senders)
			return fail(c, f->line, "fault: poller_stall needs a sender node");
		if (f->dev >= s->nics || f->peer_dev >= s->nics)
			return fail(c, f->line, "fault: dev out of range (nics = %u)", s->nics);
	}
	if (s->watch_receiver >= s->receivers)
		return fail(c, c->last_line, "[measure] watch_receiver out of range");
	if (s->watch_dev >= s->nics)
		return fail(c, c->last_line, "[measure] watch_dev out of range");
	if (s->xon && s->xoff && s->xon > s->xoff)
		return fail(c, c->last_line, "[fabric] xon above xoff");
	return 0;
}

static int parse(struct src *src, const char *file, struct mcc_spec *s, char *err, size_t errlen)
{
	struct pctx c = {.src = src, .file = file, .s = s, .err = err, .errlen = errlen};
	spec_defaults(s);
	int r = ini_parse_stream(reader, src, handler, &c);
	if (c.failed)
		return -1;
	if (r > 0) { /* a syntax error inih found itself */
		snprintf(err, errlen, "%s:%d: syntax error (not [section] or key = value)", file, r);
		return -1;
	}
	if (r < 0) {
		snprintf(err, errlen, "%s: cannot read", file);
		return -1;
	}
	return validate(&c) ? -1 : c.failed ? -1 : 0;
}

int mcc_spec_parse_string(const char *file, const char *text, struct mcc_spec *s, char *err,
                          size_t errlen)
{
	struct src src = {.p = text};
	return parse(&src, file, s, err, errlen);
}

int mcc_spec_parse_file(const char *path, struct mcc_spec *s, char *err, size_t errlen)
{
	struct src src = {0};
	src.f = fopen(path, "r");
	if (!src.f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	int r = parse(&src, path, s, err, errlen);
	fclose(src.f);
	return r;
}

const char *mcc_spec_builtin(const char *name)
{
	for (const struct mcc_spec_builtin_ent *b = mcc_spec_builtins; b->name; b++)
		if (!strcmp(b->name, name))
			return b->text;
	return NULL;
}

const char *const *mcc_spec_builtin_names(void)
{
	return mcc_spec_builtin_name_list;
}
