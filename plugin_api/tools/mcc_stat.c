/* SPDX-License-Identifier: MIT */
/*
 * mcc_stat.c - `mcc stat [--prometheus] [PID | FILE | DIR]` (mcc(1)): print
 * the live view that running engines publish (mcc_stat.h) as `ss -ti`
 * prints TCP's windows: one line per device and route, then an indented
 * line of its window, in-flight bytes, rates and counters; or, with
 * --prometheus, the same as Prometheus text exposition format (0.0.4).
 *
 *   PID    the files of that process in the live view's directory
 *   FILE   one record file
 *   DIR    every record file in DIR
 *   none   every record file in the directory of the configuration's
 *          [engine] stat (when it names one), else /dev/shm
 *
 * Files are read with mcc_stat_read() (libmcc), which validates them; a bad
 * file is reported with its reason and the others are still printed.
 * Exit status: 0 every file read; 1 a file unreadable or invalid, or none
 * found; 2 usage.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mcc_loader.h"
#include "mcc_stat.h"
#include "mcc_tool.h"

#define STAT_DIR_DEFAULT "/dev/shm"
#define EXIT_INVALID 1
#define EXIT_USAGE 2

struct target {
	char *path;
	struct mcc_stat_snapshot *s;
	int alive; /* the publishing process still exists */
};

static const char *const mode_names[] = { "off", "observe", "enforce" };

static const char *mode_name(uint32_t m)
{
	return m < sizeof(mode_names) / sizeof(mode_names[0]) ? mode_names[m] : "invalid";
}

/* The directory `mcc stat` looks in without a FILE or DIR: the effective
 * configuration's [engine] stat when it is a directory, else /dev/shm. */
static void default_dir(char *dir, size_t len)
{
	static struct mcc_config_provenance ex; /* 40 KiB: not on the stack */
	struct mcc_config cfg;
	char err[512];

	snprintf(dir, len, "%s", STAT_DIR_DEFAULT);
	ex.struct_size = sizeof(ex);
	if (mcc_config_explain(NULL, 0, &cfg, &ex, err, sizeof(err)) != 0)
		return; /* `mcc check` reports it; the default directory still works */
	for (unsigned i = 0; i < ex.count; i++)
		if (strcmp(ex.origin[i].key, "stat") == 0 && ex.origin[i].value[0] == '/')
			snprintf(dir, len, "%s", ex.origin[i].value);
}

/* "mcc.<digits>.<name>" (pid 0: any pid), not a "<path>.new" being written. */
static int is_stat_name(const char *n, long pid)
{
	const char *p = n + 4, *q;
	size_t len = strlen(n);

	if (strncmp(n, "mcc.", 4) != 0 || (len > 4 && strcmp(n + len - 4, ".new") == 0))
		return 0;
	for (q = p; *q >= '0' && *q <= '9'; q++)
		;
	if (q == p || *q != '.' || !q[1])
		return 0;
	return pid == 0 || strtol(p, NULL, 10) == pid;
}

static int add_target(struct target **v, size_t *n, const char *path)
{
	struct target *t = realloc(*v, (*n + 1) * sizeof(**v));

	if (!t)
		return -ENOMEM;
	*v = t;
	memset(&t[*n], 0, sizeof(t[*n]));
	t[*n].path = strdup(path);
	if (!t[*n].path)
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct target *)a)->path, ((const struct target *)b)->path);
}

/* The record files of `dir` (of process `pid`, 0: all), sorted. */
static int scan_dir(const char *dir, long pid, struct target **v, size_t *n)
{
	char path[4096 + 256];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d) {
		fprintf(stderr, "mcc stat: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (!is_stat_name(de->d_name, pid))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (add_target(v, n, path) != 0) {
			closedir(d);
			fprintf(stderr, "mcc stat: out of memory\n");
			return -1;
		}
	}
	closedir(d);
	if (*n > 1) /* an empty directory leaves *v NULL, which qsort may not take */
		qsort(*v, *n, sizeof(**v), by_path);
	return 0;
}

/* ------------------------------------------------------------ human form */

static void fmt_bytes(char *buf, size_t len, uint64_t v)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double d = (double)v;
	unsigned u = 0;

	while (d >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		d /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%lluB", (unsigned long long)v);
	else
		snprintf(buf, len, "%.1f%s", d, unit[u]);
}

/* bits per second, readable: Gb/s, Mb/s, kb/s */
static void fmt_bits(char *buf, size_t len, double bps)
{
	if (bps >= 1e9)
		snprintf(buf, len, "%.1fGb/s", bps / 1e9);
	else if (bps >= 1e6)
		snprintf(buf, len, "%.1fMb/s", bps / 1e6);
	else if (bps >= 1e3)
		snprintf(buf, len, "%.1fkb/s", bps / 1e3);
	else
		snprintf(buf, len, "%.0fb/s", bps);
}

static void print_domain(const struct mcc_stat_domain *d)
{
	char w[32], in[32], done[32], rate[32];

	if (!(d->valid & MCC_STAT_DOMAIN_VALID)) {
		printf("\t no counters (device opened without mcc_engine_device_open)\n");
		return;
	}
	fmt_bytes(w, sizeof(w), d->window_bytes);
	fmt_bytes(in, sizeof(in), d->inflight_bytes);
	fmt_bytes(done, sizeof(done), d->completed_bytes);
	fmt_bits(rate, sizeof(rate), (double)d->rate_bps * 8);
	printf("\t window:%s inflight:%s drain:%lluus rate:%s delivered:%s cuts:%llu "
	       "quarantines:%llu probes:%llu hard_errors:%u cooldown:%llums\n"
	       "\t admits:%llu defers:%llu avoids:%llu would_defer:%llu would_avoid:%llu "
	       "completions:%llu errors:%llu stale:%llu double_release:%llu\n",
	       w, in, (unsigned long long)d->drain_us, rate, done,
	       (unsigned long long)d->window_cuts, (unsigned long long)d->quarantines,
	       (unsigned long long)d->probes, d->hard_errors, (unsigned long long)d->cooldown_ms,
	       (unsigned long long)d->admits, (unsigned long long)d->defers,
	       (unsigned long long)d->avoids, (unsigned long long)d->would_defer,
	       (unsigned long long)d->would_avoid, (unsigned long long)d->completions,
	       (unsigned long long)d->errors, (unsigned long long)d->stale_feedback,
	       (unsigned long long)d->double_release);
}

static const char *state_of(const struct mcc_stat_domain *d)
{
	return d->valid & MCC_STAT_DOMAIN_VALID ? mcc_path_state_name((int)d->state) : "-";
}

static void print_human(const struct target *t)
{
	const struct mcc_stat_snapshot *s = t->s;
	const struct mcc_stat_header *h = &s->hdr;
	struct timespec now;
	double age;
	const char *base = strrchr(t->path, '/');

	clock_gettime(CLOCK_REALTIME, &now);
	age = ((double)now.tv_sec * 1e9 + (double)now.tv_nsec - (double)h->publish_unix_ns) / 1e9;
	printf("%s: pid %llu%s, engine %s, module %s (mode %s, ABI %u.%u), lanes %u, ticks %llu\n",
	       base ? base + 1 : t->path, (unsigned long long)h->pid,
	       t->alive ? "" : " (gone: a stale file)", h->engine, h->module, mode_name(h->mode),
	       MCC_ABI_MAJOR(h->policy_abi), MCC_ABI_MINOR(h->policy_abi), h->lanes_open,
	       (unsigned long long)h->ticks);
	printf("  published %.1f s ago (#%llu, every %u ms)%s%s%s; %u devices, %u routes\n",
	       age < 0 ? 0.0 : age, (unsigned long long)h->publish, h->interval_ms,
	       h->flags & MCC_STAT_F_TRUNCATED ? "; TRUNCATED" : "",
	       h->flags & MCC_STAT_F_CLOSED ? "; engine closed" : "",
	       h->flags & MCC_STAT_F_MOVED ? "; superseded" : "", h->devices_open, h->routes_open);
	if (h->device_count + h->route_count == 0) {
		printf("  (no device or route open yet)\n");
		return;
	}
	printf("%-7s %10s %-12s %-12s %5s %s\n", "KIND", "ID", "DEVICE", "STATE", "GEN", "PEER");
	for (uint32_t i = 0; i < h->device_count; i++) {
		const struct mcc_stat_device *d = &s->devices[i];
		char link[32] = "", id[16] = "-";

		if (d->link_rate_bps)
			fmt_bits(link, sizeof(link), (double)d->link_rate_bps);
		if (d->named)
			snprintf(id, sizeof(id), "%u", d->device_id);
		printf("%-7s %10s %-12s %-12s %5u %s%s%s%s\n", "device", id, d->name, state_of(&d->d),
		       d->d.generation, link[0] ? "link " : "", link,
		       d->flags & 1 ? (link[0] ? ", software" : "software") : "",
		       d->named ? "" : "(unnamed)");
		print_domain(&d->d);
	}
	for (uint32_t i = 0; i < h->route_count; i++) {
		const struct mcc_stat_route *r = &s->routes[i];
		const char *dev = r->device < h->device_count ? s->devices[r->device].name : "-";

		printf("%-7s %10llu %-12s %-12s %5u %s\n", "route", (unsigned long long)r->route_id,
		       dev, state_of(&r->d), r->d.generation, r->peer);
		print_domain(&r->d);
	}
}

/* ------------------------------------------------------- prometheus form */

/* A label value: backslash, double quote and line feed escaped. */
static void label(const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			printf("\\%c", *v);
		else if (*v == '\n')
			printf("\\n");
		else
			putchar(*v);
	}
}

struct metric {
	const char *name, *type, *help;
	size_t off; /* in struct mcc_stat_domain */
	int size;   /* 4 or 8 */
	double scale;
};

#define DOM(field, name_, type_, scale_, help_)                                                 \
	{ name_, type_, help_, offsetof(struct mcc_stat_domain, field),                          \
	  (int)sizeof(((struct mcc_stat_domain *)0)->field), scale_ }

static const struct metric dom_metrics[] = {
	DOM(state, "state", "gauge", 1, "path state (0 HEALTHY, 1 CONGESTED, 2 SUSPECT, 3 QUARANTINED, 4 PROBING; also the state label)"),
	DOM(generation, "generation", "gauge", 1, "endpoint generation"),
	DOM(hard_errors, "hard_errors", "gauge", 1, "hard errors counted toward hard_error_threshold"),
	DOM(window_bytes, "window_bytes", "gauge", 1, "congestion window"),
	DOM(inflight_bytes, "inflight_bytes", "gauge", 1, "bytes admitted and not yet settled"),
	DOM(cooldown_ms, "cooldown_seconds", "gauge", 1e-3, "quarantine time left"),
	DOM(drain_us, "drain_seconds", "gauge", 1e-6, "last epoch's drain-time estimate"),
	DOM(rate_bps, "rate_bytes_per_second", "gauge", 1, "measured delivery rate"),
	DOM(admits, "admits_total", "counter", 1, "slices admitted"),
	DOM(defers, "defers_total", "counter", 1, "slices deferred"),
	DOM(avoids, "avoids_total", "counter", 1, "slices told to avoid the path"),
	DOM(would_defer, "would_defer_total", "counter", 1, "observe mode: slices enforce would defer"),
	DOM(would_avoid, "would_avoid_total", "counter", 1, "observe mode: slices enforce would avoid"),
	DOM(completed_bytes, "completed_bytes_total", "counter", 1, "bytes completed"),
	DOM(completions, "completions_total", "counter", 1, "completions"),
	DOM(errors, "errors_total", "counter", 1, "non-success completions"),
	DOM(stale_feedback, "stale_feedback_total", "counter", 1, "feedback of an older generation"),
	DOM(double_release, "double_release_total", "counter", 1, "settles beyond the live bytes"),
	DOM(quarantines, "quarantines_total", "counter", 1, "quarantines entered"),
	DOM(probes, "probes_total", "counter", 1, "probes admitted"),
	DOM(window_cuts, "window_cuts_total", "counter", 1, "multiplicative window cuts"),
	DOM(suppressed_deadlines, "suppressed_deadlines_total", "counter", 1, "deadlines dropped for a stalled poller"),
};

static double dom_value(const struct mcc_stat_domain *d, const struct metric *m)
{
	const char *p = (const char *)d + m->off;

	if (m->size == 4) {
		uint32_t v;
		memcpy(&v, p, sizeof(v));
		return (double)v * m->scale;
	}
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return (double)v * m->scale;
}

static void base_labels(const struct mcc_stat_header *h)
{
	printf("pid=\"%llu\",engine=\"", (unsigned long long)h->pid);
	label(h->engine);
	putchar('"');
}

static void print_prometheus(const struct target *t, size_t n)
{
	static const struct {
		const char *name, *type, *help;
	} eng[] = {
		{ "mcc_stat_publish_timestamp_seconds", "gauge", "when the engine published this view" },
		{ "mcc_stat_publishes_total", "counter", "publishes of the live view" },
		{ "mcc_engine_lanes_open", "gauge", "lanes open in the engine" },
		{ "mcc_engine_devices_open", "gauge", "devices known to the engine" },
		{ "mcc_engine_routes_open", "gauge", "routes open in the engine" },
		{ "mcc_policy_ticks_total", "counter", "policy ticks run" },
		{ "mcc_policy_info", "gauge", "the policy in force (module, mode)" },
	};

	for (size_t k = 0; k < sizeof(eng) / sizeof(eng[0]); k++) {
		printf("# HELP %s %s\n# TYPE %s %s\n", eng[k].name, eng[k].help, eng[k].name,
		       eng[k].type);
		for (size_t i = 0; i < n; i++) {
			const struct mcc_stat_header *h;
			double v;

			if (!t[i].s || !t[i].alive)
				continue;
			h = &t[i].s->hdr;
			printf("%s{", eng[k].name);
			base_labels(h);
			switch (k) {
			case 0: v = (double)h->publish_unix_ns / 1e9; break;
			case 1: v = (double)h->publish; break;
			case 2: v = h->lanes_open; break;
			case 3: v = h->devices_open; break;
			case 4: v = h->routes_open; break;
			case 5: v = (double)h->ticks; break;
			default:
				printf(",module=\"");
				label(h->module);
				printf("\",mode=\"%s\"", mode_name(h->mode));
				v = 1;
				break;
			}
			printf("} %.17g\n", v);
		}
	}
	for (int kind = 0; kind < 2; kind++) {
		for (size_t k = 0; k < sizeof(dom_metrics) / sizeof(dom_metrics[0]); k++) {
			const struct metric *m = &dom_metrics[k];
			const char *what = kind ? "route" : "device";

			printf("# HELP mcc_%s_%s %s, per %s\n# TYPE mcc_%s_%s %s\n", what, m->name,
			       m->help, what, what, m->name, m->type);
			for (size_t i = 0; i < n; i++) {
				const struct mcc_stat_snapshot *s = t[i].s;
				uint32_t cnt;

				if (!s || !t[i].alive)
					continue;
				cnt = kind ? s->hdr.route_count : s->hdr.device_count;
				for (uint32_t j = 0; j < cnt; j++) {
					const struct mcc_stat_domain *d =
					        kind ? &s->routes[j].d : &s->devices[j].d;
					const char *dev;

					if (!(d->valid & MCC_STAT_DOMAIN_VALID))
						continue;
					dev = kind ? (s->routes[j].device < s->hdr.device_count
					                      ? s->devices[s->routes[j].device].name
					                      : "")
					           : s->devices[j].name;
					printf("mcc_%s_%s{", what, m->name);
					base_labels(&s->hdr);
					if (kind)
						printf(",route=\"%llu\"",
						       (unsigned long long)s->routes[j].route_id);
					printf(",device=\"");
					label(dev);
					putchar('"');
					if (kind) {
						printf(",peer=\"");
						label(s->routes[j].peer);
						putchar('"');
					}
					if (m->off == offsetof(struct mcc_stat_domain, state))
						printf(",state=\"%s\"", mcc_path_state_name((int)d->state));
					printf("} %.17g\n", dom_value(d, m));
				}
			}
		}
	}
}

/* ---------------------------------------------------------------- command */

static int stat_usage(void)
{
	fputs("usage: mcc stat [--prometheus] [PID | FILE | DIR]\n", stderr);
	return EXIT_USAGE;
}

int mcc_cmd_stat(int argc, char **argv)
{
	struct target *t = NULL;
	size_t n = 0;
	const char *arg = NULL;
	char dir[4096], err[4096 + 512];
	int prom = 0, rc = 0, all_digits = 0;
	long pid = 0;
	struct stat st;

	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--prometheus") == 0)
			prom = 1;
		else if (argv[i][0] == '-' || arg)
			return stat_usage();
		else
			arg = argv[i];
	}
	if (arg) {
		all_digits = arg[0] != '\0';
		for (const char *c = arg; *c; c++)
			all_digits &= *c >= '0' && *c <= '9';
	}
	if (arg && !all_digits) {
		if (stat(arg, &st) != 0) {
			fprintf(stderr, "mcc stat: %s: %s\n", arg, strerror(errno));
			return EXIT_INVALID;
		}
		if (S_ISDIR(st.st_mode)) {
			if (scan_dir(arg, 0, &t, &n) != 0)
				rc = EXIT_INVALID;
			snprintf(dir, sizeof(dir), "%s", arg);
		} else if (add_target(&t, &n, arg) != 0) {
			fprintf(stderr, "mcc stat: out of memory\n");
			rc = EXIT_INVALID;
		}
	} else {
		if (arg) {
			pid = strtol(arg, NULL, 10);
			if (pid <= 0) {
				fprintf(stderr, "mcc stat: %s: not a process id\n", arg);
				return EXIT_USAGE;
			}
		}
		default_dir(dir, sizeof(dir));
		if (scan_dir(dir, pid, &t, &n) != 0)
			rc = EXIT_INVALID;
	}
	if (!rc && n == 0) {
		if (pid)
			fprintf(stderr,
			        "mcc stat: no live view of pid %ld in %s (does the engine's ini set "
			        "[engine] stat = on?)\n",
			        pid, dir);
		else
			fprintf(stderr,
			        "mcc stat: no live view in %s (engines publish one with [engine] "
			        "stat = on)\n",
			        dir);
		rc = EXIT_INVALID;
	}
	for (size_t i = 0; i < n; i++) {
		int e = mcc_stat_read(t[i].path, &t[i].s, err, sizeof(err));

		if (e != 0) {
			fprintf(stderr, "mcc stat: %s\n", err);
			rc = EXIT_INVALID;
			continue;
		}
		t[i].alive = t[i].s->hdr.pid > 0 && t[i].s->hdr.pid <= 0x7fffffff &&
		             (kill((pid_t)t[i].s->hdr.pid, 0) == 0 || errno == EPERM);
	}
	if (prom) {
		print_prometheus(t, n);
	} else {
		int first = 1;

		for (size_t i = 0; i < n; i++) {
			if (!t[i].s)
				continue;
			if (!first)
				putchar('\n');
			first = 0;
			print_human(&t[i]);
		}
	}
	for (size_t i = 0; i < n; i++) {
		mcc_stat_free(t[i].s);
		free(t[i].path);
	}
	free(t);
	return rc;
}
