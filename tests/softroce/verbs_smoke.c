// SPDX-License-Identifier: MIT
/*
 * verbs_smoke - first real-verbs test of the Soft-RoCE harness.
 *
 * One process opens two RDMA devices (topology (b) of tests/softroce: rxe0 on
 * eth0 and rxe1 on eth1 of one guest, wired through a QEMU hub), connects an
 * RC QP on each to the other, and streams RDMA WRITEs of fixed-size messages
 * (64 KiB by default) from the client device into the server device's memory.
 * Each message carries a pseudo-random payload derived from its sequence
 * number; its checksum is verified in the target buffer when its completion
 * arrives.
 *
 * Modes (-m):
 *   healthy     write -n messages; every WC must be IBV_WC_SUCCESS and every
 *               payload must verify.
 *   peer-cut    stream until -k messages succeeded, then run the fault command
 *               (-F; the harness passes "sr-mon set_link n1 off", a cable pull
 *               on the server's NIC done by QEMU).  With retry_cnt 6 and
 *               timeout 14 the client must see IBV_WC_RETRY_EXC_ERR and then
 *               only IBV_WC_WR_FLUSH_ERR.
 *   local-down  same, but the fault is "ip link set <client netdev> down".
 *               Expected: IBV_EVENT_PORT_ERR on the client device and
 *               IBV_WC_LOC_QP_OP_ERR (then flushes).  rxe sometimes delivers
 *               the WC only when the link comes back, so if no error WC has
 *               arrived -u seconds after the fault, the heal command (-H) is
 *               run and the WC is awaited again; either order passes.
 *
 * Output: one line per event, meant to be grepped by tests/softroce/run.sh:
 *   WC status=IBV_WC_RETRY_EXC_ERR vendor_err=0x0 dev=rxe0 ...   (every non-success WC)
 *   WC status=IBV_WC_SUCCESS count=N dev=rxe0                    (one summary line)
 *   ASYNC IBV_EVENT_PORT_ERR port=1 dev=rxe1 t=...               (every async event)
 *   FAULT / HEAL / INFO / VERIFY / RESULT lines
 * Exit status: 0 pass, 1 test failure, 2 setup error, 99 infrastructure
 * ("SR-INFRA: ..."; the guest is powered off if SR_INFRA_POWEROFF=1): WRs
 * outstanding and no WC for 8 s before any fault (rxe's TX stall under TCG),
 * peer-cut: no packet sent by the requester for 8 s after the fault with WRs
 * outstanding and no error completion (the same stall in its retransmit path),
 * or a heal command still running at the -W deadline (the guest's "ip" stuck).
 * A heal that finishes late gets 5 s of its own before the run gives up.
 *
 * Options:
 *   -m mode      healthy | peer-cut | local-down (healthy)
 *   -c dev       client (requester) device (rxe0)
 *   -s dev       server (responder) device (rxe1)
 *   -g idx       GID index on both devices (default: the IPv4 RoCE v2 GID)
 *   -n count     messages in healthy mode (256)
 *   -z bytes     message size (65536)
 *   -q depth     outstanding WRs (16)
 *   -t timeout   QP local ACK timeout exponent, 4.096 us * 2^t (14)
 *   -r retry     retry_cnt (6 for peer-cut, 7 otherwise; 7 = infinite in rxe)
 *   -k count     successful messages before the fault (64)
 *   -F cmd       fault command (sh -c), fault modes only
 *   -H cmd       heal command (sh -c), run after the error (or after -u s)
 *   -u sec       local-down: heal this long after the fault if no error WC (3)
 *   -W sec       give up this long after the fault / start (20 / 60)
 */
#define _DEFAULT_SOURCE /* sync, reboot */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/reboot.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

enum mode { MODE_HEALTHY, MODE_PEER_CUT, MODE_LOCAL_DOWN };

static struct {
	enum mode mode;
	const char *mode_name, *cdev, *sdev, *fault_cmd, *heal_cmd;
	int gid_idx, count, size, depth, timeout, retry, cut_after;
	double heal_after, wait_s;
} opt = {
	.mode = MODE_HEALTHY, .mode_name = "healthy", .cdev = "rxe0", .sdev = "rxe1",
	.gid_idx = -1, .count = 256, .size = 65536, .depth = 16, .timeout = 14,
	.retry = -1, .cut_after = 64, .heal_after = 3.0, .wait_s = -1.0,
};

struct side {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	unsigned char *buf;
	size_t buf_len;
	union ibv_gid gid;
	int gid_idx;
	enum ibv_mtu mtu;
	uint32_t psn;
	pthread_t async_thread;
	int async_started;
	atomic_int port_err, port_active, other_events;
	atomic_llong first_port_err_us; /* rel() of the first PORT_ERR, in us */
};

#define PORT 1
#define NSLOTS_MIN 64

static struct side cli = { .name = NULL }, srv = { .name = NULL };
static atomic_int stop_async;
static double t_start;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double rel(void)
{
	return now() - t_start;
}

static void sleep_us(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static uint32_t next_psn(void)
{
	static uint64_t x;

	if (!x)
		x = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL) ^ 0x2545f4914f6cdd1dull;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return (uint32_t)(x & 0xffffff);
}

#define say(...) do { printf(__VA_ARGS__); putchar('\n'); fflush(stdout); } while (0)

static const char *wc_status_name(enum ibv_wc_status s)
{
	switch (s) {
#define C(x) case x: return #x
	C(IBV_WC_SUCCESS); C(IBV_WC_LOC_LEN_ERR); C(IBV_WC_LOC_QP_OP_ERR);
	C(IBV_WC_LOC_EEC_OP_ERR); C(IBV_WC_LOC_PROT_ERR); C(IBV_WC_WR_FLUSH_ERR);
	C(IBV_WC_MW_BIND_ERR); C(IBV_WC_BAD_RESP_ERR); C(IBV_WC_LOC_ACCESS_ERR);
	C(IBV_WC_REM_INV_REQ_ERR); C(IBV_WC_REM_ACCESS_ERR); C(IBV_WC_REM_OP_ERR);
	C(IBV_WC_RETRY_EXC_ERR); C(IBV_WC_RNR_RETRY_EXC_ERR); C(IBV_WC_LOC_RDD_VIOL_ERR);
	C(IBV_WC_REM_INV_RD_REQ_ERR); C(IBV_WC_REM_ABORT_ERR); C(IBV_WC_INV_EECN_ERR);
	C(IBV_WC_INV_EEC_STATE_ERR); C(IBV_WC_FATAL_ERR); C(IBV_WC_RESP_TIMEOUT_ERR);
	C(IBV_WC_GENERAL_ERR);
	default: return "IBV_WC_UNKNOWN";
	}
}

static const char *event_name(enum ibv_event_type e)
{
	switch (e) {
	C(IBV_EVENT_CQ_ERR); C(IBV_EVENT_QP_FATAL); C(IBV_EVENT_QP_REQ_ERR);
	C(IBV_EVENT_QP_ACCESS_ERR); C(IBV_EVENT_COMM_EST); C(IBV_EVENT_SQ_DRAINED);
	C(IBV_EVENT_PATH_MIG); C(IBV_EVENT_PATH_MIG_ERR); C(IBV_EVENT_DEVICE_FATAL);
	C(IBV_EVENT_PORT_ACTIVE); C(IBV_EVENT_PORT_ERR); C(IBV_EVENT_LID_CHANGE);
	C(IBV_EVENT_PKEY_CHANGE); C(IBV_EVENT_SM_CHANGE); C(IBV_EVENT_SRQ_ERR);
	C(IBV_EVENT_SRQ_LIMIT_REACHED); C(IBV_EVENT_QP_LAST_WQE_REACHED);
	C(IBV_EVENT_CLIENT_REREGISTER);
#undef C
	default: return "IBV_EVENT_UNKNOWN";
	}
}

static const char *qp_state_name(struct ibv_qp *qp)
{
	static const char *n[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return "?";
	return (unsigned)a.qp_state <= IBV_QPS_ERR ? n[a.qp_state] : "?";
}

/* ---- async events: one thread per device, every event printed and acked ---- */

static void *async_main(void *arg)
{
	struct side *s = arg;
	int fl = fcntl(s->ctx->async_fd, F_GETFL);

	fcntl(s->ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	while (!atomic_load(&stop_async)) {
		struct pollfd p = { .fd = s->ctx->async_fd, .events = POLLIN };
		struct ibv_async_event ev;

		if (poll(&p, 1, 100) <= 0)
			continue;
		if (ibv_get_async_event(s->ctx, &ev))
			continue;
		switch (ev.event_type) {
		case IBV_EVENT_PORT_ERR:
		case IBV_EVENT_PORT_ACTIVE:
		case IBV_EVENT_LID_CHANGE:
		case IBV_EVENT_PKEY_CHANGE:
		case IBV_EVENT_SM_CHANGE:
		case IBV_EVENT_CLIENT_REREGISTER:
			say("ASYNC %s port=%d dev=%s t=%.3f", event_name(ev.event_type),
			    ev.element.port_num, s->name, rel());
			if (ev.event_type == IBV_EVENT_PORT_ERR) {
				if (atomic_fetch_add(&s->port_err, 1) == 0)
					atomic_store(&s->first_port_err_us, (long long)(rel() * 1e6));
			}
			else if (ev.event_type == IBV_EVENT_PORT_ACTIVE)
				atomic_fetch_add(&s->port_active, 1);
			else
				atomic_fetch_add(&s->other_events, 1);
			break;
		case IBV_EVENT_QP_FATAL:
		case IBV_EVENT_QP_REQ_ERR:
		case IBV_EVENT_QP_ACCESS_ERR:
		case IBV_EVENT_COMM_EST:
		case IBV_EVENT_SQ_DRAINED:
		case IBV_EVENT_PATH_MIG:
		case IBV_EVENT_PATH_MIG_ERR:
		case IBV_EVENT_QP_LAST_WQE_REACHED:
			say("ASYNC %s qp=0x%x dev=%s t=%.3f", event_name(ev.event_type),
			    ev.element.qp ? ev.element.qp->qp_num : 0, s->name, rel());
			atomic_fetch_add(&s->other_events, 1);
			break;
		default:
			say("ASYNC %s (%d) dev=%s t=%.3f", event_name(ev.event_type),
			    (int)ev.event_type, s->name, rel());
			atomic_fetch_add(&s->other_events, 1);
			break;
		}
		ibv_ack_async_event(&ev);
	}
	return NULL;
}

/* ---- setup ---- */

static int fail_setup(const char *what, int err)
{
	say("RESULT FAIL mode=%s reason=\"setup: %s: %s\"", opt.mode_name, what,
	    err ? strerror(err) : "failed");
	exit(2);
}

/* The IPv4-mapped RoCE v2 GID, found through sysfs (works on old rdma-core). */
static int find_gid_index(struct side *s)
{
	struct ibv_port_attr pa;

	if (ibv_query_port(s->ctx, PORT, &pa))
		return -1;
	for (int i = 0; i < pa.gid_tbl_len && i < 256; i++) {
		union ibv_gid g;
		char path[256], type[32] = "";
		FILE *f;

		if (ibv_query_gid(s->ctx, PORT, i, &g))
			continue;
		static const unsigned char v4pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
		if (memcmp(g.raw, v4pfx, sizeof v4pfx))
			continue;
		snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/%d/gid_attrs/types/%d",
			 s->name, PORT, i);
		f = fopen(path, "r");
		if (f) {
			if (!fgets(type, sizeof type, f))
				type[0] = 0;
			fclose(f);
		}
		if (strstr(type, "v2") || !f)
			return i;
	}
	return -1;
}

static void open_side(struct side *s, const char *name, size_t buf_len)
{
	struct ibv_device **list;
	struct ibv_port_attr pa;
	int n = 0;
	char gs[INET6_ADDRSTRLEN];

	s->name = name;
	list = ibv_get_device_list(&n);
	if (!list)
		fail_setup("ibv_get_device_list", errno);
	for (int i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			s->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!s->ctx) {
		say("INFO device %s not found or cannot be opened", name);
		fail_setup(name, errno);
	}
	/* the port can still be coming up right after "rdma link add" */
	for (int i = 0;; i++) {
		if (ibv_query_port(s->ctx, PORT, &pa))
			fail_setup("ibv_query_port", errno);
		if (pa.state == IBV_PORT_ACTIVE)
			break;
		if (i >= 100)
			fail_setup("port never became ACTIVE", 0);
		sleep_us(100000);
	}
	s->mtu = pa.active_mtu;
	s->gid_idx = opt.gid_idx >= 0 ? opt.gid_idx : find_gid_index(s);
	if (s->gid_idx < 0)
		fail_setup("no IPv4 RoCE v2 GID (is an IPv4 address configured?)", 0);
	if (ibv_query_gid(s->ctx, PORT, s->gid_idx, &s->gid))
		fail_setup("ibv_query_gid", errno);
	inet_ntop(AF_INET6, s->gid.raw, gs, sizeof gs);
	say("INFO dev=%s port=ACTIVE active_mtu=%d gid[%d]=%s", name, 128 << s->mtu, s->gid_idx, gs);

	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		fail_setup("ibv_alloc_pd", errno);
	s->buf_len = buf_len;
	s->buf = aligned_alloc(4096, (buf_len + 4095) & ~(size_t)4095);
	if (!s->buf)
		fail_setup("aligned_alloc", errno);
	memset(s->buf, 0, buf_len);
	s->mr = ibv_reg_mr(s->pd, s->buf, buf_len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!s->mr)
		fail_setup("ibv_reg_mr", errno);
	s->cq = ibv_create_cq(s->ctx, opt.depth * 2 + 16, NULL, NULL, 0);
	if (!s->cq)
		fail_setup("ibv_create_cq", errno);
	struct ibv_qp_init_attr ia = {
		.send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC, .sq_sig_all = 1,
		.cap = { .max_send_wr = (uint32_t)opt.depth, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	s->qp = ibv_create_qp(s->pd, &ia);
	if (!s->qp)
		fail_setup("ibv_create_qp", errno);
	s->psn = next_psn();
	if (pthread_create(&s->async_thread, NULL, async_main, s))
		fail_setup("pthread_create", 0);
	s->async_started = 1;
}

static void connect_qp(struct side *s, const struct side *peer)
{
	struct ibv_qp_attr a;
	int e;

	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_INIT;
	a.port_num = PORT;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	if ((e = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				       IBV_QP_ACCESS_FLAGS)))
		fail_setup("modify_qp INIT", e);

	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = s->mtu < peer->mtu ? s->mtu : peer->mtu;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = (uint8_t)s->gid_idx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = PORT;
	if ((e = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)))
		fail_setup("modify_qp RTR", e);

	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTS;
	a.timeout = (uint8_t)opt.timeout;
	a.retry_cnt = (uint8_t)opt.retry;
	a.rnr_retry = 7;
	a.sq_psn = s->psn;
	a.max_rd_atomic = 1;
	if ((e = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				       IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				       IBV_QP_MAX_QP_RD_ATOMIC)))
		fail_setup("modify_qp RTS", e);
}

/* ---- payload ---- */

static uint64_t fill_slot(unsigned char *p, size_t len, uint64_t seq)
{
	uint64_t x = seq * 0x9e3779b97f4a7c15ull ^ 0x5eed5eed5eed5eedull, h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i + 8 <= len; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
		h = (h ^ x) * 0x100000001b3ull;
	}
	return h;
}

static uint64_t checksum(const unsigned char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull, w;

	for (size_t i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
	}
	return h;
}

/* ---- helpers for the fault/heal commands ---- */

static pid_t spawn(const char *tag, const char *cmd)
{
	pid_t pid;

	say("%s cmd='%s' t=%.3f", tag, cmd, rel());
	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		say("%s fork failed: %s", tag, strerror(errno));
	return pid;
}

/* wait for a spawned command; returns 0 if it exited with status 0 */
static int reap(const char *tag, pid_t pid, double max_wait)
{
	int st = 0;
	double t0 = now();

	if (pid <= 0)
		return 0;
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 || now() - t0 > max_wait) {
			say("%s command still running after %.0f s; not waiting", tag, max_wait);
			return -1;
		}
		sleep_us(20000);
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		say("%s command exited with status %d", tag, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return -1;
	}
	say("INFO %s command done t=%.3f", tag, rel());
	return 0;
}

#define STALL_S 8.0
#define HEAL_GRACE_S 5.0

/* Leave without teardown: destroying an rxe QP stuck in a TX stall blocks for
 * about a minute. In a throw-away guest (SR_INFRA_POWEROFF=1), power it off. */
static void infra_exit(const char *why)
{
	const char *po = getenv("SR_INFRA_POWEROFF");

	say("SR-INFRA: %s; leaving without teardown", why);
	fflush(stdout);
	if (po && !strcmp(po, "1")) {
		sync();
		reboot(RB_POWER_OFF);
	}
	_exit(99);
}

/* An rxe port counter from sysfs (ports/1/hw_counters), or -1. */
static long rxe_counter(const char *dev, const char *name)
{
	char path[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/%d/hw_counters/%s", dev, PORT, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static void infra_stall(long posted, long completed, int outstanding)
{
	char why[200];

	snprintf(why, sizeof why, "verbs stall: %d WRs outstanding (posted=%ld completed=%ld), "
		 "no completion for %.0f s before any fault (rxe TX stall under TCG)",
		 outstanding, posted, completed, STALL_S);
	infra_exit(why);
}

/* wait until cond(side) or timeout; returns 1 if the condition became true */
static int wait_event(atomic_int *ctr, int above, double secs)
{
	double t0 = now();

	while (now() - t0 < secs) {
		if (atomic_load(ctr) > above)
			return 1;
		sleep_us(20000);
	}
	return atomic_load(ctr) > above;
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [-m healthy|peer-cut|local-down] [-c dev] [-s dev] [-g gid]\n"
			"       [-n count] [-z size] [-q depth] [-t timeout] [-r retry] [-k count]\n"
			"       [-F fault-cmd] [-H heal-cmd] [-u sec] [-W sec]   (see the source header)\n",
		argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	t_start = now();
	while ((c = getopt(argc, argv, "m:c:s:g:n:z:q:t:r:k:F:H:u:W:")) != -1) {
		switch (c) {
		case 'm':
			opt.mode_name = optarg;
			if (!strcmp(optarg, "healthy"))
				opt.mode = MODE_HEALTHY;
			else if (!strcmp(optarg, "peer-cut"))
				opt.mode = MODE_PEER_CUT;
			else if (!strcmp(optarg, "local-down"))
				opt.mode = MODE_LOCAL_DOWN;
			else
				usage(argv[0]);
			break;
		case 'c': opt.cdev = optarg; break;
		case 's': opt.sdev = optarg; break;
		case 'g': opt.gid_idx = atoi(optarg); break;
		case 'n': opt.count = atoi(optarg); break;
		case 'z': opt.size = atoi(optarg); break;
		case 'q': opt.depth = atoi(optarg); break;
		case 't': opt.timeout = atoi(optarg); break;
		case 'r': opt.retry = atoi(optarg); break;
		case 'k': opt.cut_after = atoi(optarg); break;
		case 'F': opt.fault_cmd = optarg; break;
		case 'H': opt.heal_cmd = optarg; break;
		case 'u': opt.heal_after = atof(optarg); break;
		case 'W': opt.wait_s = atof(optarg); break;
		default: usage(argv[0]);
		}
	}
	if (optind != argc || opt.count < 1 || opt.size < 64 || opt.size % 8 ||
	    opt.depth < 1 || opt.depth > 1024 || opt.timeout < 0 || opt.timeout > 31)
		usage(argv[0]);
	const int faulty = opt.mode != MODE_HEALTHY;
	if (faulty && !opt.fault_cmd) {
		fprintf(stderr, "%s: mode %s needs -F fault-cmd\n", argv[0], opt.mode_name);
		return 2;
	}
	if (opt.retry < 0)
		opt.retry = opt.mode == MODE_PEER_CUT ? 6 : 7;
	if (opt.wait_s < 0)
		opt.wait_s = faulty ? 20.0 : 60.0;

	const int nslots = opt.depth * 2 > NSLOTS_MIN ? opt.depth * 2 : NSLOTS_MIN;
	const size_t msg = (size_t)opt.size;
	uint64_t *expect = calloc((size_t)nslots, sizeof *expect);
	uint64_t *slot_seq = calloc((size_t)nslots, sizeof *slot_seq);
	if (!expect || !slot_seq)
		return 2;

	open_side(&cli, opt.cdev, msg * (size_t)nslots);
	open_side(&srv, opt.sdev, msg * (size_t)nslots);
	connect_qp(&cli, &srv);
	connect_qp(&srv, &cli);
	say("INFO mode=%s client=%s qpn=0x%x server=%s qpn=0x%x msg=%d depth=%d timeout=%d (%.1f ms) "
	    "retry_cnt=%d", opt.mode_name, cli.name, cli.qp->qp_num, srv.name, srv.qp->qp_num,
	    opt.size, opt.depth, opt.timeout,
	    opt.timeout ? 4.096e-3 * (double)(1u << opt.timeout) : 0.0, opt.retry);

	long wc_count[32] = { 0 };
	long posted = 0, ok = 0, completed = 0, bad_verify = 0, unexpected = 0;
	int outstanding = 0, in_error = 0;
	enum ibv_wc_status first_err = IBV_WC_SUCCESS;
	double t_fault = -1, t_fault_done = -1, t_heal = -1, t_err = -1, t_first_ok = -1, t_last_ok = -1;
	double t_heal_done = -1;
	pid_t fault_pid = -1, heal_pid = -1;
	int heal_status = 0;
	int heal_before_err = 0, timed_out = 0, fault_failed = 0;
	const double t0 = now();
	double t_last_wc = t0;
	/* peer-cut: the requester's sent_pkts, sampled while it should be retrying */
	long tx_pkts = -1;
	double t_tx_moved = -1, t_tx_sampled = -1;

	for (;;) {
		/* keep the send queue full */
		while (!in_error && outstanding < opt.depth && (faulty || posted < opt.count)) {
			const int slot = (int)(posted % nslots);
			unsigned char *src = cli.buf + (size_t)slot * msg;
			struct ibv_sge sge = { .addr = (uintptr_t)src, .length = (uint32_t)msg,
					       .lkey = cli.mr->lkey };
			struct ibv_send_wr wr = {
				.wr_id = (uint64_t)posted, .sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
			}, *bad = NULL;
			int e;

			wr.wr.rdma.remote_addr = (uintptr_t)(srv.buf + (size_t)slot * msg);
			wr.wr.rdma.rkey = srv.mr->rkey;
			expect[slot] = fill_slot(src, msg, (uint64_t)posted);
			slot_seq[slot] = (uint64_t)posted;
			e = ibv_post_send(cli.qp, &wr, &bad);
			if (e) {
				say("POST ibv_post_send failed: %s qp=%s t=%.3f", strerror(e),
				    qp_state_name(cli.qp), rel());
				if (!in_error) {
					in_error = 1;
					t_err = now();
				}
				unexpected++;
				break;
			}
			posted++;
			outstanding++;
		}

		struct ibv_wc wc[32];
		int n = ibv_poll_cq(cli.cq, 32, wc);

		if (n < 0) {
			say("RESULT FAIL mode=%s reason=\"ibv_poll_cq failed\"", opt.mode_name);
			return 1;
		}
		for (int i = 0; i < n; i++) {
			const uint64_t seq = wc[i].wr_id;
			const int slot = (int)(seq % (uint64_t)nslots);

			outstanding--;
			completed++;
			wc_count[(unsigned)wc[i].status < 32 ? wc[i].status : 31]++;
			if (wc[i].status == IBV_WC_SUCCESS) {
				ok++;
				t_last_ok = now();
				if (t_first_ok < 0)
					t_first_ok = t_last_ok;
				if (in_error)
					unexpected++; /* success after an error: not expected on RC */
				if (slot_seq[slot] != seq ||
				    checksum(srv.buf + (size_t)slot * msg, msg) != expect[slot]) {
					if (bad_verify++ < 5)
						say("VERIFY mismatch seq=%" PRIu64 " slot=%d", seq, slot);
				}
				continue;
			}
			say("WC status=%s vendor_err=0x%x dev=%s qp=0x%x wr_id=%" PRIu64
			    " t=%.3f%s%.3f qp_state=%s", wc_status_name(wc[i].status),
			    wc[i].vendor_err, cli.name, wc[i].qp_num, seq, rel(),
			    t_fault >= 0 ? " since_fault=" : " since_last_ok=",
			    now() - (t_fault >= 0 ? t_fault : t_last_ok), qp_state_name(cli.qp));
			if (!in_error) {
				in_error = 1;
				first_err = wc[i].status;
				t_err = now();
				if (t_heal >= 0)
					heal_before_err = 1;
			} else if (wc[i].status != IBV_WC_WR_FLUSH_ERR) {
				unexpected++;
			}
		}
		/* the responder gets no completions for RDMA WRITE; report any */
		const int nsrv = ibv_poll_cq(srv.cq, 32, wc);
		for (int i = 0; i < nsrv; i++) {
			say("WC status=%s vendor_err=0x%x dev=%s qp=0x%x wr_id=%" PRIu64 " t=%.3f (responder)",
			    wc_status_name(wc[i].status), wc[i].vendor_err, srv.name, wc[i].qp_num,
			    (uint64_t)wc[i].wr_id, rel());
			unexpected++;
		}

		if (faulty && t_fault < 0 && ok >= opt.cut_after) {
			t_fault = now();
			fault_pid = spawn("FAULT", opt.fault_cmd);
		}
		if (fault_pid > 0 && t_fault_done < 0) {
			int st;

			if (waitpid(fault_pid, &st, WNOHANG) == fault_pid) {
				t_fault_done = now();
				fault_pid = -1;
				say("INFO fault command done t=%.3f (%.3f s after it was started), exit status %d, "
				    "%s sent_pkts=%ld", t_fault_done - t_start, t_fault_done - t_fault,
				    WIFEXITED(st) ? WEXITSTATUS(st) : -1, cli.name,
				    rxe_counter(cli.name, "sent_pkts"));
				if (!WIFEXITED(st) || WEXITSTATUS(st))
					fault_failed = 1;
			}
		}
		if (heal_pid > 0 && waitpid(heal_pid, &heal_status, WNOHANG) == heal_pid) {
			t_heal_done = now();
			heal_pid = -1;
			say("INFO heal command done t=%.3f (%.3f s after it was started), exit status %d",
			    t_heal_done - t_start, t_heal_done - t_heal,
			    WIFEXITED(heal_status) ? WEXITSTATUS(heal_status) : -1);
		}
		if (opt.mode == MODE_LOCAL_DOWN && t_fault >= 0 && t_heal < 0 && !in_error &&
		    now() - t_fault > opt.heal_after) {
			say("INFO no error WC %.1f s after the fault; bringing the link back", opt.heal_after);
			t_heal = now();
			if (opt.heal_cmd)
				heal_pid = spawn("HEAL", opt.heal_cmd);
		}

		if (!faulty && completed >= opt.count)
			break;
		if (in_error && outstanding == 0)
			break;
		/* A heal command that takes seconds ("ip" waiting on the guest's
		 * rtnl lock under TCG, seen once for 17 s) leaves the link down
		 * for that long: give the QP HEAL_GRACE_S after it finishes, and
		 * a heal still running at the deadline is the guest's, not rxe's. */
		if (faulty && t_fault >= 0 && now() - t_fault > opt.wait_s) {
			if (heal_pid > 0) {
				char why[160];

				snprintf(why, sizeof why, "heal command still running %.1f s after it was "
					 "started (guest network stack stalled under TCG)", now() - t_heal);
				infra_exit(why);
			}
		}
		if ((faulty && t_fault >= 0 && now() - t_fault > opt.wait_s &&
		     (t_heal_done < 0 || now() - t_heal_done > HEAL_GRACE_S)) ||
		    (!(faulty && t_fault >= 0) && now() - t0 > (faulty ? 60.0 : opt.wait_s))) {
			timed_out = 1;
			say("INFO giving up: posted=%ld completed=%ld outstanding=%d qp_state=%s",
			    posted, completed, outstanding, qp_state_name(cli.qp));
			break;
		}
		/* Before any fault, WRs outstanding and no WC for STALL_S is rxe's
		 * TX stall under TCG (see README "Stall watchdog"), not a verdict on
		 * the link: report it for vm.sh to retry in a fresh guest. */
		if (n > 0 || outstanding == 0)
			t_last_wc = now();
		else if (t_fault < 0 && now() - t_last_wc > STALL_S)
			infra_stall(posted, completed, outstanding);
		/* After a peer cut the requester retransmits every timeout until
		 * retry_cnt is spent (under a second here). If it sends nothing
		 * for STALL_S with WRs outstanding and no error completion, the
		 * retransmit path has stalled (the same rxe TX stall as above,
		 * after the fault): an infrastructure verdict, not the link's. */
		if (opt.mode == MODE_PEER_CUT && t_fault >= 0 && !in_error && outstanding > 0 &&
		    now() - t_tx_sampled > 0.5) {
			const long tx = rxe_counter(cli.name, "sent_pkts");

			t_tx_sampled = now();
			if (tx != tx_pkts || t_tx_moved < 0) {
				tx_pkts = tx;
				t_tx_moved = t_tx_sampled;
			} else if (tx >= 0 && t_tx_sampled - t_tx_moved > STALL_S) {
				char why[200];

				snprintf(why, sizeof why, "rxe requester stall after the fault: %d WRs outstanding, "
					 "no packet sent on %s for %.0f s (sent_pkts=%ld, QP %s) and no error completion",
					 outstanding, cli.name, STALL_S, tx, qp_state_name(cli.qp));
				infra_exit(why);
			}
		}
		if (n == 0)
			sleep_us(100);
	}
	const double t_stream_end = now();

	/* let late async events arrive, then heal (if not done) and watch for PORT_ACTIVE */
	if (faulty) {
		if (opt.mode == MODE_LOCAL_DOWN && !atomic_load(&cli.port_err))
			wait_event(&cli.port_err, 0, 3.0);
		else
			sleep_us(500000);
		if (t_heal < 0 && opt.heal_cmd) {
			t_heal = now();
			heal_pid = spawn("HEAL", opt.heal_cmd);
		}
		struct side *healed = opt.mode == MODE_LOCAL_DOWN ? &cli : &srv;
		if (opt.heal_cmd && atomic_load(&healed->port_err) > 0)
			wait_event(&healed->port_active, 0, 5.0);
		if (reap("FAULT", fault_pid, 15.0))
			fault_failed = 1;
		reap("HEAL", heal_pid, 15.0);
	}

	/* ---- summary and verdict ---- */
	const double el = t_stream_end - t0;
	say("WC status=IBV_WC_SUCCESS count=%ld dev=%s", ok, cli.name);
	for (int s = 1; s < 32; s++)
		if (wc_count[s])
			say("SUMMARY wc %s=%ld", wc_status_name((enum ibv_wc_status)s), wc_count[s]);
	say("SUMMARY posted=%ld completed=%ld ok=%ld verified=%ld bad_verify=%ld outstanding=%d "
	    "Gb/s=%.3f elapsed=%.3f", posted, completed, ok, ok - bad_verify, bad_verify, outstanding,
	    t_last_ok > t_first_ok ? (double)ok * (double)msg * 8 / (t_last_ok - t0) / 1e9 : 0.0, el);
	say("SUMMARY async %s: PORT_ERR=%d PORT_ACTIVE=%d other=%d; %s: PORT_ERR=%d PORT_ACTIVE=%d other=%d",
	    cli.name, atomic_load(&cli.port_err), atomic_load(&cli.port_active),
	    atomic_load(&cli.other_events), srv.name, atomic_load(&srv.port_err),
	    atomic_load(&srv.port_active), atomic_load(&srv.other_events));
	if (faulty && t_fault >= 0 && t_err >= 0) {
		char done[128] = "";

		if (t_fault_done >= 0 && t_fault_done <= t_err) /* as noticed by the poll loop */
			snprintf(done, sizeof done, ", %.3f s after it completed", t_err - t_fault_done);
		const struct side *cut = opt.mode == MODE_LOCAL_DOWN ? &cli : &srv;
		if (atomic_load(&cut->port_err)) {
			const double pe = (double)atomic_load(&cut->first_port_err_us) / 1e6;
			const size_t l = strlen(done);

			snprintf(done + l, sizeof done - l, ", %.3f s after PORT_ERR on %s",
				 t_err - t_start - pe, cut->name);
		}
		say("SUMMARY first_error=%s %.3f s after the fault command started%s%s",
		    wc_status_name(first_err), t_err - t_fault, done,
		    opt.mode != MODE_LOCAL_DOWN ? "" : heal_before_err ?
		    " (arrived only after the link came back up)" : " (arrived while the link was down)");
	}

	const char *why = NULL;
	char buf[160];
	if (bad_verify)
		why = "payload checksum mismatch";
	else if (timed_out)
		why = faulty && t_fault >= 0 ? "no error completion after the fault" : "stream timed out";
	else if (unexpected)
		why = "unexpected completion, post failure or responder completion";
	else if (opt.mode == MODE_HEALTHY) {
		if (ok != opt.count || in_error)
			why = "not every WR succeeded";
		else if (atomic_load(&cli.port_err) || atomic_load(&srv.port_err))
			why = "port error on a healthy link";
	} else if (t_fault < 0 || fault_failed) {
		why = "the fault was never injected (fault command failed)";
	} else if (ok < opt.cut_after) {
		why = "too few successes before the fault";
	} else if (opt.mode == MODE_PEER_CUT && first_err != IBV_WC_RETRY_EXC_ERR) {
		snprintf(buf, sizeof buf, "first error %s, expected IBV_WC_RETRY_EXC_ERR",
			 wc_status_name(first_err));
		why = buf;
	} else if (opt.mode == MODE_LOCAL_DOWN && first_err != IBV_WC_LOC_QP_OP_ERR) {
		snprintf(buf, sizeof buf, "first error %s, expected IBV_WC_LOC_QP_OP_ERR",
			 wc_status_name(first_err));
		why = buf;
	} else if (opt.mode == MODE_LOCAL_DOWN && !atomic_load(&cli.port_err)) {
		why = "no IBV_EVENT_PORT_ERR on the client device";
	}

	/* ---- teardown ---- */
	atomic_store(&stop_async, 1);
	struct side *sides[2] = { &cli, &srv };
	for (int i = 0; i < 2; i++) {
		struct side *s = sides[i];
		if (s->async_started)
			pthread_join(s->async_thread, NULL);
		if (s->qp)
			ibv_destroy_qp(s->qp);
		if (s->cq)
			ibv_destroy_cq(s->cq);
		if (s->mr)
			ibv_dereg_mr(s->mr);
		if (s->pd)
			ibv_dealloc_pd(s->pd);
		if (s->ctx)
			ibv_close_device(s->ctx);
		free(s->buf);
	}
	free(expect);
	free(slot_seq);

	if (why) {
		say("RESULT FAIL mode=%s reason=\"%s\"", opt.mode_name, why);
		return 1;
	}
	say("RESULT PASS mode=%s", opt.mode_name);
	return 0;
}
