/* SPDX-License-Identifier: MIT */
/*
 * test_stat.c - the live view (plugin_api/include/mcc_stat.h): the engine
 * SDK publishes its devices and routes with [engine] stat, mcc_stat_read and
 * `mcc stat` read them back; a reader racing a writer (and the file being
 * replaced by a larger one) never sees a torn record; bad and garbage files
 * get a clear error, never a crash. Publishes are explicit
 * (mcc_engine_stat_publish, with a period of an hour), so nothing waits
 * for a timer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cu_driver.h"
#include "lt_util.h"
#include "mcc_engine.h"

static struct lt_log logbuf;
static char tmpdir[512], viewdir[600], ini_stat[LT_PATH], ini_off[LT_PATH];
static char mcc_bin[LT_PATH];

static uint64_t fake_clock(void *arg)
{
	(void)arg;
	return 1000000000ull;
}

static int suite_init(void)
{
	char text[LT_PATH + 128];
	const char *b = getenv("MCC_TEST_BUILDDIR");

	if (!b)
		mcc_cu_skip("MCC_TEST_BUILDDIR not set (run from make check)");
	snprintf(mcc_bin, sizeof(mcc_bin), "%s/plugin_api/tools/mcc", b);
	/* ini_off: the engine without a live view */
	if (lt_suite_open(tmpdir, sizeof(tmpdir), &logbuf, ini_off) != 0)
		return -1;
	snprintf(viewdir, sizeof(viewdir), "%s/view", tmpdir);
	if (mkdir(viewdir, 0700) != 0)
		return -1;
	snprintf(text, sizeof(text),
	         "[policy]\nmode = enforce\n[engine]\nstat = %s\nstat_interval_ms = 3600000\n",
	         viewdir);
	return lt_write(tmpdir, "stat.ini", text, 0600, ini_stat, sizeof(ini_stat)) != 0 ? -1 : 0;
}

static int suite_clean(void)
{
	return lt_suite_close(tmpdir, &logbuf);
}

static mcc_engine *open_engine(const char *ini, const char *name)
{
	struct mcc_loader_opts lo;
	struct mcc_engine_opts o;
	mcc_engine *e = NULL;

	lt_opts(&lo, &logbuf, ini);
	lo.engine = name;
	lo.module_dir = lt_module_dir();
	memset(&o, 0, sizeof(o));
	o.struct_size = sizeof(o);
	o.tick = MCC_ENGINE_TICK_POLL;
	o.loader = &lo;
	o.now_ns = fake_clock;
	CU_ASSERT_EQUAL(mcc_engine_open(&o, &e), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	return e;
}

static mcc_device *open_device(mcc_engine *e, uint32_t id, const char *name)
{
	struct mcc_device_desc_v1 d = { sizeof(d), id, name, 1, 0, 100000000000ull, 0 };
	mcc_device *dev = NULL;

	CU_ASSERT_EQUAL_FATAL(mcc_engine_device_open(e, &d, &dev), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
	return dev;
}

static mcc_engine_route *open_route(mcc_engine *e, mcc_device *dev, const char *key)
{
	mcc_engine_route *r = NULL;

	CU_ASSERT_FATAL(mcc_engine_route_open(e, dev, key, strlen(key), 1, NULL, &r) >= 0);
	return r;
}

/* Run the mcc command with `args`; its stdout (and stderr) in out. */
static int run_mcc(const char *env, const char *args, char *out, size_t len)
{
	char cmd[3 * LT_PATH];
	size_t n = 0;
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "%s '%s' %s 2>&1", env ? env : "", mcc_bin, args);
	p = popen(cmd, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	while (n + 1 < len && (st = (int)fread(out + n, 1, len - n - 1, p)) > 0)
		n += (size_t)st;
	out[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int route_index(const struct mcc_stat_snapshot *s, const char *peer)
{
	for (uint32_t i = 0; i < s->hdr.route_count; i++)
		if (strcmp(s->routes[i].peer, peer) == 0)
			return (int)i;
	return -1;
}

/* ------------------------------------------------------------------ views */

/* stat = off (the default): no file, no thread of its own, publish says so;
 * the in-process snapshot works all the same. */
static void test_off_publishes_nothing(void)
{
	mcc_engine *e = open_engine(ini_off, "te");
	struct mcc_stat_snapshot *s = NULL;

	CU_ASSERT_STRING_EQUAL(mcc_engine_stat_path(e), "");
	CU_ASSERT_EQUAL(mcc_engine_stat_publish(e), -EOPNOTSUPP);
	mcc_device *dev = open_device(e, 0, "mlx5_0");
	mcc_engine_route *r = open_route(e, dev, "10.0.0.9:1@mlx5_3");
	CU_ASSERT_EQUAL_FATAL(mcc_engine_stat_snapshot(e, &s), 0);
	CU_ASSERT_EQUAL(s->hdr.device_count, 1u);
	CU_ASSERT_EQUAL(s->hdr.route_count, 1u);
	CU_ASSERT_STRING_EQUAL(s->routes[0].peer, "10.0.0.9:1@mlx5_3");
	CU_ASSERT_STRING_EQUAL(s->hdr.module, "aimd");
	mcc_stat_free(s);
	CU_ASSERT_EQUAL(mcc_engine_stat_snapshot(NULL, &s), -EINVAL);
	CU_ASSERT_EQUAL(mcc_engine_stat_snapshot(e, NULL), -EINVAL);
	mcc_engine_route_put(r);
	CU_ASSERT_EQUAL(mcc_engine_route_close(e, "10.0.0.9:1@mlx5_3", 17), 0);
	CU_ASSERT_EQUAL(mcc_engine_device_close(e, dev), 0);
	mcc_engine_close(e);
}

/* Devices and routes published with their state, window and in-flight
 * bytes, as the policy's domain_stats says; read back by the library and
 * by `mcc stat` (ss-like and Prometheus); the file goes at close. */
static void test_publish_and_read(void)
{
	mcc_engine *e = open_engine(ini_stat, "te");
	const struct mcc_policy_v1 *ops = mcc_engine_ops(e);
	struct mcc_stat_snapshot *s = NULL;
	char path[LT_PATH], err[1024], want[LT_PATH], env[2 * LT_PATH], args[2 * LT_PATH];
	static char out[65536];

	snprintf(want, sizeof(want), "%s/mcc.%ld.te", viewdir, (long)getpid());
	CU_ASSERT_STRING_EQUAL(mcc_engine_stat_path(e), want);
	snprintf(path, sizeof(path), "%s", mcc_engine_stat_path(e));
	/* published at open: nothing open yet */
	CU_ASSERT_EQUAL_FATAL(mcc_stat_read(path, &s, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(s->hdr.publish, 1u);
	CU_ASSERT_EQUAL(s->hdr.route_count, 0u);
	CU_ASSERT_EQUAL(s->hdr.pid, (uint64_t)getpid());
	CU_ASSERT_STRING_EQUAL(s->hdr.engine, "te");
	CU_ASSERT_STRING_EQUAL(s->hdr.module, "aimd");
	CU_ASSERT_EQUAL(s->hdr.mode, (uint32_t)MCC_MODE_ENFORCE);
	CU_ASSERT_EQUAL(s->hdr.interval_ms, 3600000u);
	mcc_stat_free(s);

	mcc_device *d0 = open_device(e, 0, "mlx5_0"), *d1 = open_device(e, 1, "mlx5_1");
	mcc_engine_route *ra = open_route(e, d0, "10.0.0.2:4791@mlx5_0");
	mcc_engine_route *rb = open_route(e, d0, "10.0.0.2:4791@mlx5_1");
	mcc_engine_route *rc = open_route(e, d1, "10.0.0.3:4791@mlx5_0");
	static const unsigned char bin[] = { 0x01, 0xff, 0x00, 0x7a };
	mcc_engine_route *rbin = NULL;
	CU_ASSERT_EQUAL_FATAL(mcc_engine_route_open(e, d1, bin, sizeof(bin), 7, NULL, &rbin), 0);
	/* bytes in flight on route a */
	mcc_lane_ref lr;
	mcc_lane *lane;
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL_FATAL(mcc_engine_lane_open(e, MCC_LANE_POST_POLL, &lr, &lane), 0);
	CU_ASSERT_EQUAL_FATAL(ops->try_acquire(lane, mcc_engine_route_cc(ra), 65536,
	                                       mcc_engine_route_generation(ra), NULL, &p),
	                      MCC_ADMIT);

	CU_ASSERT_EQUAL(mcc_engine_stat_publish(e), 0);
	CU_ASSERT_EQUAL_FATAL(mcc_stat_read(path, &s, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(s->hdr.publish, 2u);
	CU_ASSERT_EQUAL(s->hdr.flags, 0u);
	CU_ASSERT_EQUAL_FATAL(s->hdr.device_count, 2u);
	CU_ASSERT_EQUAL_FATAL(s->hdr.route_count, 4u);
	CU_ASSERT_EQUAL(s->hdr.lanes_open, 1u);
	CU_ASSERT_STRING_EQUAL(s->devices[0].name, "mlx5_0");
	CU_ASSERT_STRING_EQUAL(s->devices[1].name, "mlx5_1");
	CU_ASSERT_EQUAL(s->devices[1].device_id, 1u);
	CU_ASSERT_EQUAL(s->devices[1].link_rate_bps, 100000000000ull);
	CU_ASSERT_EQUAL(s->devices[0].named, 1u);
	int a = route_index(s, "10.0.0.2:4791@mlx5_0"), c = route_index(s, "10.0.0.3:4791@mlx5_0");
	CU_ASSERT_FATAL(a >= 0 && c >= 0);
	CU_ASSERT(route_index(s, "0x01ff007a") >= 0); /* a key that is not text, in hex */
	CU_ASSERT_EQUAL(s->routes[a].device, 0u);
	CU_ASSERT_EQUAL(s->routes[c].device, 1u);
	CU_ASSERT_EQUAL(s->routes[a].route_id, mcc_engine_route_id(ra));
	/* what the policy says, field for field */
	struct mcc_domain_stats_v1 ds;
	memset(&ds, 0, sizeof(ds));
	ds.struct_size = sizeof(ds);
	CU_ASSERT_EQUAL(ops->domain_stats(mcc_engine_ctx(e), MCC_DOMAIN_ROUTE,
	                                  mcc_engine_route_cc(ra), &ds),
	                0);
	CU_ASSERT_EQUAL(s->routes[a].d.valid, MCC_STAT_DOMAIN_VALID);
	CU_ASSERT_EQUAL(s->routes[a].d.state, ds.state);
	CU_ASSERT_EQUAL(s->routes[a].d.window_bytes, ds.window_bytes);
	CU_ASSERT(s->routes[a].d.window_bytes > 0);
	CU_ASSERT_EQUAL(s->routes[a].d.inflight_bytes, 65536u);
	CU_ASSERT_EQUAL(s->routes[c].d.inflight_bytes, 0u);
	CU_ASSERT_EQUAL(s->routes[a].d.admits, 1u);
	CU_ASSERT_EQUAL(s->devices[0].d.inflight_bytes, 65536u);
	mcc_stat_free(s);

	/* the command, as an operator runs it: by file, by directory, by pid
	 * (the directory from the configuration), as Prometheus text */
	snprintf(args, sizeof(args), "stat '%s'", path);
	CU_ASSERT_EQUAL(run_mcc(NULL, args, out, sizeof(out)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "engine te, module aimd (mode enforce"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "2 devices, 4 routes"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "10.0.0.2:4791@mlx5_0"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "mlx5_1       HEALTHY"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "inflight:64.0KiB"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "link 100.0Gb/s"));
	snprintf(args, sizeof(args), "stat '%s'", viewdir);
	CU_ASSERT_EQUAL(run_mcc(NULL, args, out, sizeof(out)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "10.0.0.3:4791@mlx5_0"));
	snprintf(env, sizeof(env), "MC_ADAPTIVE_CC_CONFIG='%s'", ini_stat);
	snprintf(args, sizeof(args), "stat %ld", (long)getpid());
	CU_ASSERT_EQUAL(run_mcc(env, args, out, sizeof(out)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "10.0.0.3:4791@mlx5_0"));
	CU_ASSERT_EQUAL(run_mcc(env, "stat 999999999", out, sizeof(out)), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "no live view of pid 999999999"));
	snprintf(args, sizeof(args), "stat --prometheus '%s'", path);
	CU_ASSERT_EQUAL(run_mcc(NULL, args, out, sizeof(out)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "# TYPE mcc_route_window_bytes gauge"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "# TYPE mcc_route_window_cuts_total counter"));
	snprintf(want, sizeof(want),
	         "mcc_route_inflight_bytes{pid=\"%ld\",engine=\"te\",route=\"%llu\",device=\"mlx5_0\","
	         "peer=\"10.0.0.2:4791@mlx5_0\"} 65536\n",
	         (long)getpid(), (unsigned long long)mcc_engine_route_id(ra));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "state=\"HEALTHY\"} 0\n"));
	CU_ASSERT_EQUAL(run_mcc(NULL, "stat --bogus", out, sizeof(out)), 2);

	CU_ASSERT_EQUAL(ops->release(lane, &p, 65536, MCC_REL_NOT_POSTED), 0);
	CU_ASSERT_EQUAL(mcc_engine_lane_close(e, lr), 0);
	mcc_engine_route_put(ra);
	mcc_engine_route_put(rb);
	mcc_engine_route_put(rc);
	mcc_engine_route_put(rbin);
	CU_ASSERT_EQUAL(mcc_engine_route_close(e, "10.0.0.2:4791@mlx5_0", 20), 0);
	CU_ASSERT_EQUAL(mcc_engine_route_close(e, "10.0.0.2:4791@mlx5_1", 20), 0);
	CU_ASSERT_EQUAL(mcc_engine_route_close(e, "10.0.0.3:4791@mlx5_0", 20), 0);
	CU_ASSERT_EQUAL(mcc_engine_route_close(e, bin, sizeof(bin)), 0);
	CU_ASSERT_EQUAL(mcc_engine_device_close(e, d0), 0);
	CU_ASSERT_EQUAL(mcc_engine_device_close(e, d0), -ENOENT); /* twice: nothing happens */
	CU_ASSERT_EQUAL(mcc_engine_device_close(e, d1), 0);
	mcc_engine_close(e);
	CU_ASSERT_EQUAL(access(path, F_OK), -1); /* removed at close */
}

/* Two engines of one process with the same name each get a file; more
 * routes than the first file holds move the view to a larger file, the
 * old one marked superseded; a device left open is closed at close. */
static void test_two_engines_and_growth(void)
{
	mcc_engine *a = open_engine(ini_stat, "te"), *b = open_engine(ini_stat, "te");
	struct mcc_stat_snapshot *s = NULL;
	char path[LT_PATH - 16], err[1024], key[64], want[LT_PATH];

	snprintf(want, sizeof(want), "%s/mcc.%ld.te-2", viewdir, (long)getpid());
	CU_ASSERT_STRING_EQUAL(mcc_engine_stat_path(b), want);
	snprintf(path, sizeof(path), "%s", mcc_engine_stat_path(a));
	mcc_device *dev = open_device(a, 0, "mlx5_0");
	enum { N = 300 };
	for (int i = 0; i < N; i++) {
		snprintf(key, sizeof(key), "10.1.%d.%d:4791@mlx5_0", i / 250, i % 250);
		mcc_engine_route_put(open_route(a, dev, key));
	}
	/* the first file is open here: it must see itself superseded */
	int fd = open(path, O_RDONLY);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(mcc_engine_stat_publish(a), 0);
	struct mcc_stat_header old;
	CU_ASSERT_EQUAL(pread(fd, &old, sizeof(old), 0), (ssize_t)sizeof(old));
	close(fd);
	CU_ASSERT(old.flags & MCC_STAT_F_MOVED);
	CU_ASSERT_EQUAL_FATAL(mcc_stat_read(path, &s, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(s->hdr.route_count, (uint32_t)N);
	CU_ASSERT(s->hdr.route_capacity >= (uint32_t)N);
	CU_ASSERT_EQUAL(s->hdr.flags & MCC_STAT_F_MOVED, 0u);
	CU_ASSERT(route_index(s, "10.1.1.49:4791@mlx5_0") >= 0);
	mcc_stat_free(s);
	snprintf(want, sizeof(want), "%s.new", path);
	CU_ASSERT_EQUAL(access(want, F_OK), -1);
	/* routes and the device left open: closed by mcc_engine_close */
	int warns = logbuf.count[MCC_LOG_WARN];
	mcc_engine_close(a);
	CU_ASSERT(logbuf.count[MCC_LOG_WARN] > warns);
	CU_ASSERT(lt_log_has(&logbuf, "device mlx5_0 was still open"));
	mcc_engine_close(b);
	CU_ASSERT_EQUAL(access(path, F_OK), -1);
}

/* A directory that cannot hold the file: the engine opens and works, with
 * one warning; stat_path is "" and publish says it publishes nothing. */
static void test_unwritable_dir(void)
{
	char ini[LT_PATH];
	mcc_engine *e;

	CU_ASSERT_EQUAL_FATAL(lt_write(tmpdir, "nodir.ini",
	                               "[policy]\nmode = enforce\n[engine]\n"
	                               "stat = /nonexistent/mcc-stat-test\n",
	                               0600, ini, sizeof(ini)),
	                      0);
	e = open_engine(ini, "te");
	CU_ASSERT_STRING_EQUAL(mcc_engine_stat_path(e), "");
	CU_ASSERT_EQUAL(mcc_engine_stat_publish(e), -EOPNOTSUPP);
	CU_ASSERT(lt_log_has(&logbuf, "live view: /nonexistent/mcc-stat-test/mcc."));
	mcc_engine_close(e);
}

/* The keys: validated with file:line like every other key. */
static void test_config_keys(void)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "[engine]\nstat = yes\n", "bad.ini:2: stat: invalid value 'yes'" },
		{ "[engine]\nstat = var/run\n", "bad.ini:2: stat: invalid value 'var/run'" },
		{ "[engine]\nstat_interval_ms = 5\n", "bad.ini:2: stat_interval_ms: 5 is out of range 10..3600000" },
		{ "[controller]\nstat = on\n", "bad.ini:2: stat: unknown key in [controller] (it belongs in [engine])" },
	};
	struct mcc_config cfg;
	char path[LT_PATH], err[1024];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CU_ASSERT_EQUAL_FATAL(lt_write(tmpdir, "bad.ini", bad[i].text, 0600, path, sizeof(path)), 0);
		CU_ASSERT_EQUAL(mcc_config_load(path, 1, &cfg, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].msg))
			fprintf(stderr, "\n  got: %s\n  want: %s\n", err, bad[i].msg);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].msg));
	}
	CU_ASSERT_EQUAL_FATAL(lt_write(tmpdir, "good.ini", "[engine]\nstat = on\nstat_interval_ms = 10\n",
	                               0600, path, sizeof(path)),
	                      0);
	CU_ASSERT_EQUAL(mcc_config_load(path, 1, &cfg, err, sizeof(err)), 0);
}

/* -------------------------------------------------------- reader vs writer */

struct race {
	mcc_engine *e;
	mcc_device *dev;
	char path[LT_PATH];
	_Atomic int done;
	int publishes, reads, errors, werrors;
	char err[1024];
};

/* Publishes while the route set changes size (and the file grows). No
 * CUnit assertion in a thread: failures are counted. */
static void *writer(void *arg)
{
	struct race *r = arg;
	mcc_engine_route *rt;
	char key[64];

	for (int i = 0; i < 400; i++) {
		snprintf(key, sizeof(key), "10.2.0.%d:4791@mlx5_0", i);
		if (mcc_engine_route_open(r->e, r->dev, key, strlen(key), 1, NULL, &rt) < 0)
			r->werrors++;
		else
			mcc_engine_route_put(rt);
		if (i % 3 == 2) { /* and shrinks: counts go both ways */
			snprintf(key, sizeof(key), "10.2.0.%d:4791@mlx5_0", i - 1);
			if (mcc_engine_route_close(r->e, key, strlen(key)) != 0)
				r->werrors++;
		}
		if (mcc_engine_stat_publish(r->e) == 0)
			r->publishes++;
	}
	atomic_store(&r->done, 1);
	return NULL;
}

/* Every copy consistent: mcc_stat_read checks each record's publish stamp
 * against the header's; here also the header's counts against the records
 * and the ids (distinct, each one a route that was opened). */
static void *reader(void *arg)
{
	struct race *r = arg;

	while (!atomic_load(&r->done)) {
		struct mcc_stat_snapshot *s = NULL;
		/* never -ENOENT: the file is replaced by rename, atomically */
		int rc = mcc_stat_read(r->path, &s, r->err, sizeof(r->err));

		if (rc != 0) {
			r->errors++;
			continue;
		}
		r->reads++;
		if (s->hdr.route_count != s->hdr.routes_open)
			r->errors++;
		for (uint32_t i = 0; i < s->hdr.route_count; i++) {
			if (s->routes[i].route_id == 0 || strncmp(s->routes[i].peer, "10.2.0.", 7) ||
			    s->routes[i].device != 0 || s->routes[i].d.valid != MCC_STAT_DOMAIN_VALID)
				r->errors++;
			for (uint32_t j = 0; j < i; j++)
				if (s->routes[j].route_id == s->routes[i].route_id)
					r->errors++;
		}
		mcc_stat_free(s);
	}
	return NULL;
}

static void test_reader_races_writer(void)
{
	static struct race r;
	pthread_t w, rd;

	memset(&r, 0, sizeof(r));
	r.e = open_engine(ini_stat, "race");
	r.dev = open_device(r.e, 0, "mlx5_0");
	snprintf(r.path, sizeof(r.path), "%s", mcc_engine_stat_path(r.e));
	CU_ASSERT_EQUAL_FATAL(pthread_create(&rd, NULL, reader, &r), 0);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&w, NULL, writer, &r), 0);
	pthread_join(w, NULL);
	pthread_join(rd, NULL);
	if (r.errors)
		fprintf(stderr, "\n  %d bad reads of %d (last: %s)\n", r.errors, r.reads, r.err);
	CU_ASSERT_EQUAL(r.errors, 0);
	CU_ASSERT_EQUAL(r.werrors, 0);
	CU_ASSERT_EQUAL(r.publishes, 400);
	CU_ASSERT(r.reads > 0);
	mcc_engine_close(r.e);
}

/* ------------------------------------------------------------ bad files */

/* A well-formed file of 1 device and 2 routes, one publish. */
static size_t good_file(unsigned char *buf, size_t len)
{
	struct mcc_stat_header h;
	struct mcc_stat_device d;
	struct mcc_stat_route r;
	size_t n = sizeof(h) + sizeof(d) + 2 * sizeof(r);

	CU_ASSERT_FATAL(n <= len);
	memset(buf, 0, n);
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MCC_STAT_MAGIC, 8);
	h.version_major = MCC_STAT_VERSION_MAJOR;
	h.header_size = sizeof(h);
	h.device_size = sizeof(d);
	h.route_size = sizeof(r);
	h.device_capacity = 1;
	h.route_capacity = 2;
	h.file_size = n;
	h.seq = 2;
	h.publish = 1;
	h.pid = 1;
	h.device_count = 1;
	h.route_count = 2;
	snprintf(h.engine, sizeof(h.engine), "te");
	memcpy(buf, &h, sizeof(h));
	memset(&d, 0, sizeof(d));
	d.publish = 1;
	memset(d.name, 'x', sizeof(d.name)); /* no NUL: the reader adds one */
	memcpy(buf + sizeof(h), &d, sizeof(d));
	for (int i = 0; i < 2; i++) {
		memset(&r, 0, sizeof(r));
		r.publish = 1;
		r.route_id = (uint64_t)i + 1;
		snprintf(r.peer, sizeof(r.peer), "peer%d", i);
		memcpy(buf + sizeof(h) + sizeof(d) + (size_t)i * sizeof(r), &r, sizeof(r));
	}
	return n;
}

/* Set a header field of a good file (offset, 2/4/8 bytes). */
#define SET(buf, field, v)                                                                        \
	do {                                                                                       \
		__typeof__(((struct mcc_stat_header *)0)->field) v_ = (v);                         \
		memcpy((buf) + offsetof(struct mcc_stat_header, field), &v_, sizeof(v_));         \
	} while (0)

static void expect_bad(const unsigned char *buf, size_t n, int want_rc, const char *want_msg)
{
	struct mcc_stat_snapshot *s = (struct mcc_stat_snapshot *)1;
	char path[LT_PATH], err[1024], args[LT_PATH + 16];
	static char out[8192];

	CU_ASSERT_EQUAL_FATAL(lt_write_bytes(tmpdir, "mcc.1.bad", buf, n, 0600, path, sizeof(path)), 0);
	int rc = mcc_stat_read(path, &s, err, sizeof(err));
	if (rc != want_rc || !strstr(err, want_msg))
		fprintf(stderr, "\n  rc %d, want %d: %s (want \"%s\")\n", rc, want_rc, err, want_msg);
	CU_ASSERT_EQUAL(rc, want_rc);
	CU_ASSERT_PTR_NULL(s);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, want_msg));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, path)); /* every message names the file */
	/* the command: the same message, exit status 1 */
	snprintf(args, sizeof(args), "stat '%s'", path);
	CU_ASSERT_EQUAL(run_mcc(NULL, args, out, sizeof(out)), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, want_msg));
	unlink(path);
}

static void test_bad_files(void)
{
	static unsigned char buf[4096], b[4096];
	struct mcc_stat_snapshot *s = NULL;
	char path[LT_PATH], err[1024];
	size_t n = good_file(buf, sizeof(buf));
	uint64_t u64;

	/* the good one reads, strings terminated */
	CU_ASSERT_EQUAL_FATAL(lt_write_bytes(tmpdir, "good", buf, n, 0600, path, sizeof(path)), 0);
	CU_ASSERT_EQUAL_FATAL(mcc_stat_read(path, &s, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(strlen(s->devices[0].name), 63u);
	CU_ASSERT_STRING_EQUAL(s->routes[1].peer, "peer1");
	mcc_stat_free(s);
	/* a newer minor with larger records and header: read, the tail ignored */
	{
		size_t hs = sizeof(struct mcc_stat_header) + 64, ds = sizeof(struct mcc_stat_device) + 8,
		       rs = sizeof(struct mcc_stat_route) + 16, m = hs + ds + 2 * rs;
		memset(b, 0xee, sizeof(b));
		memcpy(b, buf, sizeof(struct mcc_stat_header));
		memcpy(b + hs, buf + sizeof(struct mcc_stat_header), sizeof(struct mcc_stat_device));
		for (int i = 0; i < 2; i++)
			memcpy(b + hs + ds + (size_t)i * rs,
			       buf + sizeof(struct mcc_stat_header) + sizeof(struct mcc_stat_device) +
			               (size_t)i * sizeof(struct mcc_stat_route),
			       sizeof(struct mcc_stat_route));
		SET(b, version_minor, 7);
		SET(b, header_size, (uint32_t)hs);
		SET(b, device_size, (uint32_t)ds);
		SET(b, route_size, (uint32_t)rs);
		SET(b, file_size, (uint64_t)m);
		CU_ASSERT_EQUAL_FATAL(lt_write_bytes(tmpdir, "newer", b, m, 0600, path, sizeof(path)), 0);
		CU_ASSERT_EQUAL_FATAL(mcc_stat_read(path, &s, err, sizeof(err)), 0);
		CU_ASSERT_STRING_EQUAL(s->routes[1].peer, "peer1");
		CU_ASSERT_EQUAL(s->routes[1].route_id, 2u);
		mcc_stat_free(s);
	}

	expect_bad(buf, 0, -EINVAL, "shorter than the 256-byte header");
	expect_bad(buf, 100, -EINVAL, "shorter than the 256-byte header");
	memset(b, 0, sizeof(b));
	expect_bad(b, 512, -EINVAL, "not an mcc stat file (no \"MCCSTAT\" magic");
	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (unsigned char)(i * 131 + 7); /* garbage */
	expect_bad(b, sizeof(b), -EINVAL, "not an mcc stat file");
	memcpy(b, buf, n);
	SET(b, version_major, 2);
	expect_bad(b, n, -EPROTONOSUPPORT, "format version 2.0, this reader knows major 1");
	memcpy(b, buf, n);
	SET(b, header_size, 100);
	expect_bad(b, n, -EINVAL, "corrupt header: sizes header 100");
	memcpy(b, buf, n);
	SET(b, route_size, 321);
	expect_bad(b, n, -EINVAL, "corrupt header: sizes");
	memcpy(b, buf, n);
	SET(b, route_capacity, 0xffffffffu);
	expect_bad(b, n, -EINVAL, "corrupt header: 1 device and 4294967295 route slots");
	memcpy(b, buf, n);
	SET(b, file_size, 12);
	expect_bad(b, n, -EINVAL, "corrupt header: file_size 12, but the slots need");
	memcpy(b, buf, n);
	expect_bad(b, n - 8, -EINVAL, "truncated:");
	memcpy(b, buf, n);
	SET(b, route_count, 3);
	expect_bad(b, n, -EINVAL, "corrupt header: 1 devices and 3 routes in 1 and 2 slots");
	memcpy(b, buf, n);
	u64 = 5;
	memcpy(b + sizeof(struct mcc_stat_header) + sizeof(struct mcc_stat_device), &u64, 8);
	expect_bad(b, n, -EINVAL, "corrupt record: route 0 carries publish 5, the header 1");
	/* a writer that died in a publish (seq odd for good): refused after 1 s */
	memcpy(b, buf, n);
	SET(b, seq, 3);
	expect_bad(b, n, -EAGAIN, "a publish never finished");

	/* not a file, no file */
	CU_ASSERT_EQUAL(mcc_stat_read(tmpdir, &s, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a regular file"));
	snprintf(path, sizeof(path), "%s/fifo", tmpdir);
	CU_ASSERT_EQUAL_FATAL(mkfifo(path, 0600), 0);
	CU_ASSERT_EQUAL(mcc_stat_read(path, &s, err, sizeof(err)), -EINVAL); /* no block */
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a regular file"));
	snprintf(path, sizeof(path), "%s/none", tmpdir);
	CU_ASSERT_EQUAL(mcc_stat_read(path, &s, err, sizeof(err)), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "No such file"));
	CU_ASSERT_EQUAL(mcc_stat_read(NULL, &s, err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(mcc_stat_read(path, NULL, NULL, 0), -EINVAL);
	mcc_stat_free(NULL);
}

MCC_CU_SUITE(t_init_stat_tests, "stat", suite_init, suite_clean,
             test_off_publishes_nothing,
             test_publish_and_read,
             test_two_engines_and_growth,
             test_unwritable_dir,
             test_config_keys,
             test_reader_races_writer,
             test_bad_files)

MCC_CU_MAIN(t_init_stat_tests)
