/* SPDX-License-Identifier: MIT */
/*
 * runner.c - command-line scenario runner (mcc_scenario, te_host, tent_host
 * and their _nocc twins). Each arm of the comparison: compile-out (the
 * _nocc binary, spawned by the hooks-in binary), off, observe, enforce (the
 * mode written to a temporary ini file). Prints a table, writes CSV
 * timelines and, with gnuplot, PNG plots.
 *
 *   mcc_scenario [--scenario NAME[,NAME...]|all | --spec FILE]
 *                [--arms compile-out,off,observe,enforce[,MODE:MODULE]]
 *                [--engine te|tent|both] [--exec sim|threaded] [--seed N]
 *                [--duration S] [--quick] [--out DIR] [--module-dir DIR] [--machine]
 *                [--stat on|DIR] [--log FILE] [--legend]
 *
 * With --out, each arm's timeline is DIR/SCENARIO-ENGINE-ARM.csv and, with
 * gnuplot, every arm of a scenario and engine is drawn on one picture,
 * DIR/SCENARIO-ENGINE.png (one time axis and one scale per panel, in Gb/s,
 * MiB and ms; the window and state panels only for arms with a
 * controller). --log sends what libmcc and the engines log (stderr) to FILE,
 * so the table stays whole; --legend explains its columns after it.
 */
#include "scenario.h"

#include "../sim/exec.h"
#include "mcc_hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MCC_RUNNER_ENGINE
#define MCC_RUNNER_ENGINE "both"
#endif
#ifndef MCC_RUNNER_NOCC_NAME
#define MCC_RUNNER_NOCC_NAME "mcc_scenario_nocc"
#endif
#ifndef MCC_GNUPLOT
#define MCC_GNUPLOT ""
#endif

static void usage(const char *p)
{
	fprintf(stderr,
	        "usage: %s [--scenario NAME|all | --spec FILE] [--arms LIST] [--engine te|tent|both]\n"
	        "          [--exec sim|threaded] [--seed N] [--duration S] [--quick]\n"
	        "          [--out DIR] [--module-dir DIR] [--machine] [--stat on|DIR]\n"
	        "          [--log FILE] [--legend]\n"
	        "scenarios:",
	        p);
	for (const char *const *n = mcc_scn_names(); *n; n++)
		fprintf(stderr, " %s", *n);
	fprintf(stderr, "\n--scenario takes one name, a comma-separated list or all\n"
	                "--spec FILE: a scenario description (host_stubs/scenario/README.md)\n"
	                "--stat on|DIR: publish each engine's live view ([engine] stat; see `mcc stat`)\n"
	                "--log FILE: what libmcc and the engines log goes to FILE, not the terminal\n"
	                "--legend: explain the table's columns after it\n"
	                "arms: compile-out off observe enforce, or MODE:MODULE (e.g. enforce:delay)\n");
}

static int exe_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *s = strrchr(buf, '/');
	if (s)
		*s = 0;
	size_t l = strlen(buf);
	if (l >= 6 && !strcmp(buf + l - 6, "/.libs"))
		buf[l - 6] = 0; /* libtool wrapper layout */
	return 0;
}

/* The arms of one scenario and engine, drawn together. */
struct arm_set {
	char label[8][64]; /* file-name labels: off, enforce, enforce-delay, ... */
	int n;
	double dur_s;    /* the longest run */
	double pause_ms; /* the most PFC pause of an arm (0: no pause panel) */
};

/* An arm whose policy keeps windows and states (not off, not compile-out). */
static int has_controller(const char *label)
{
	return strcmp(label, "off") != 0 && strcmp(label, "compile-out") != 0;
}

/* An arm's colour, the same in every panel and picture. */
static const char *arm_color(const char *label, int i)
{
	static const char *const other[] = { "#7570b3", "#e7298a", "#66a61e", "#e6ab02" };
	if (!strcmp(label, "off"))
		return "#d95f02";
	if (!strcmp(label, "enforce"))
		return "#1b9e77";
	if (!strcmp(label, "compile-out"))
		return "#666666";
	return other[i % 4];
}

/* One gnuplot panel: `expr` of every arm's CSV (controller arms only when
 * `ctl_only`), each in its arm's colour. */
static void panel(FILE *f, const char *out, const char *base, const struct arm_set *a,
                  int ctl_only, const char *expr, const char *style)
{
	int first = 1;
	fprintf(f, "plot");
	for (int i = 0; i < a->n; i++) {
		if (ctl_only && !has_controller(a->label[i]))
			continue;
		fprintf(f, "%s '%s/%s-%s.csv' u %s w %s lw 1.5 lc rgb '%s' t '%s'", first ? "" : ",",
		        out, base, a->label[i], expr, style, arm_color(a->label[i], i), a->label[i]);
		first = 0;
	}
	fprintf(f, "\n");
}

/* DIR/BASE.png: every arm of BASE (SCENARIO-ENGINE) on one picture. */
static void plot(const char *out, const char *base, const struct arm_set *a)
{
	if (!MCC_GNUPLOT[0] || a->n == 0)
		return;
	int ctl = 0;
	for (int i = 0; i < a->n; i++)
		ctl |= has_controller(a->label[i]);
	char gp[PATH_MAX], cmd[PATH_MAX * 2 + 64], arms[600] = "";
	for (int i = 0; i < a->n; i++)
		snprintf(arms + strlen(arms), sizeof(arms) - strlen(arms), "%s%s", i ? " vs " : "",
		         a->label[i]);
	snprintf(gp, sizeof(gp), "%s/%s.gp", out, base);
	FILE *f = fopen(gp, "w");
	if (!f)
		return;
	/* one key, on top: the colours are the same in every panel */
	/* panels: goodput, queue, [PFC pause: when an arm paused], and for
	 * arms with a controller the watched route's window and state */
	int panels = 2 + (a->pause_ms > 0) + 2 * ctl;
	fprintf(f,
	        "set terminal png size 1000,%d\nset output '%s/%s.png'\nset datafile separator ','\n"
	        "set multiplot layout %d,1 title '%s: %s (goodput over 1 %% of the run, at least "
	        "5 ms%s)'\n"
	        "set grid\nset xrange [0:%.3f]\nset lmargin 16\nset yrange [0:*]\n"
	        "set key top right horizontal box opaque\n",
	        150 + 250 * panels, out, base, panels, base, arms,
	        ctl ? "; window and state: the watched route" : "", a->dur_s * 1e3);
	fprintf(f, "set ylabel 'goodput (Gb/s)'\n");
	panel(f, out, base, a, 0, "1:10", "l");
	fprintf(f, "unset key\nset ylabel 'receiver queue (MiB)'\n");
	if (panels == 2)
		fprintf(f, "set xlabel 't (ms)'\n");
	panel(f, out, base, a, 0, "1:($8/1048576.0)", "l");
	if (a->pause_ms > 0) {
		fprintf(f, "set ylabel 'PFC pause, total (ms)'\n");
		if (!ctl)
			fprintf(f, "set xlabel 't (ms)'\n");
		panel(f, out, base, a, 0, "1:9", "l");
	}
	if (ctl) {
		fprintf(f, "set ylabel 'route window (MiB)'\n");
		panel(f, out, base, a, 1, "1:($5/1048576.0)", "l");
		fprintf(f, "set ylabel 'route state'\nset xlabel 't (ms)'\nset yrange [-0.5:4.5]\n"
		           "set ytics ('HEALTHY' 0, 'CONGESTED' 1, 'SUSPECT' 2, 'QUARANTINED' 3, "
		           "'PROBING' 4)\n");
		panel(f, out, base, a, 1, "1:7", "steps");
	}
	fprintf(f, "unset multiplot\n");
	fclose(f);
	snprintf(cmd, sizeof(cmd), "'%s' '%s' >/dev/null 2>&1", MCC_GNUPLOT, gp);
	if (system(cmd) != 0)
		fprintf(stderr, "gnuplot failed for %s\n", gp);
}

/* What the table's columns mean (--legend). */
static void legend(void)
{
	printf("\n"
	       "legend (one row per scenario, engine and arm):\n"
	       "  arm            off: controller off (the null module); observe: records, never "
	       "defers;\n"
	       "                 enforce: the aimd module; compile-out: the hooks compiled out\n"
	       "  Gb/s           goodput: verified bytes of the bulk flows / their active time\n"
	       "  jain           Jain's fairness index of the bulk flows' Gb/s (1 = equal shares)\n"
	       "  cpu_ms         CPU time of the process for the run\n"
	       "  p50/p99/p999_us  completion latency percentiles (of the victim flow, if any)\n"
	       "  qpeakKiB       peak egress queue at the watched receiver port; qsteadyKiB: the "
	       "peak\n"
	       "                 over the last 40 %% of the run\n"
	       "  pause_ms       PFC pause time, summed over the fabric's ports\n"
	       "  lost corr leak bytes reported done but not delivered / delivered wrong; permits\n"
	       "                 never settled (each must be 0)\n"
	       "  tasks N/C/L/U  tasks whose caller read NORMAL / CONGESTED / LONG_UNAVAILABLE / "
	       "UNKNOWN\n"
	       "  route states   the watched route's successive path states ('-': no controller)\n");
}

/* Is `name` one of the comma-separated `list`? */
static int in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		const char *c = strchr(p, ',');
		size_t l = c ? (size_t)(c - p) : strlen(p);
		if (l == n && !strncmp(p, name, n))
			return 1;
		p += l + (c != NULL);
	}
	return 0;
}

static void table_header(void)
{
	printf("%-10s %-4s %-12s %8s %6s %8s %9s %9s %9s %9s %9s %8s %6s %6s %6s %16s %s\n", "scenario",
	       "eng", "arm", "Gb/s", "jain", "cpu_ms", "p50_us", "p99_us", "p999_us", "qpeakKiB",
	       "qsteadyKiB", "pause_ms", "lost",
	       "corr", "leak", "tasks N/C/L/U", "route states");
}

static void table_row(const struct mcc_scn_result *r)
{
	char st[48];
	snprintf(st, sizeof(st), "%" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64, r->task_states[0],
	         r->task_states[1], r->task_states[2], r->task_states[3]);
	printf("%-10s %-4s %-12s %8.2f %6.3f %8.1f %9.1f %9.1f %9.1f %9" PRIu64 " %9" PRIu64 " %8.2f %6" PRIu64
	       " %6" PRIu64 " %6" PRId64 " %16s %s\n",
	       r->scenario, r->engine, r->arm, r->goodput_gbps, r->jain, r->cpu_ms, r->p50_us, r->p99_us,
	       r->p999_us, r->queue_peak_bytes >> 10, r->queue_peak_steady_bytes >> 10, r->pause_ms, r->bytes_lost, r->bytes_corrupted,
	       r->permits_leaked, st, r->state_timeline);
	if (r->nflows > 1 && r->nflows <= 4) { /* e.g. rxpressure: the other receivers' share */
		printf("%-10s %-4s %-12s flows Gb/s:", "", "", "");
		for (uint32_t i = 0; i < r->nflows; i++)
			printf(" %.2f", r->flow_gbps[i]);
		printf("\n");
	}
}

int main(int argc, char **argv)
{
	const char *scen = "all", *spec = NULL, *arms = NULL, *eng = MCC_RUNNER_ENGINE, *out = NULL, *mdir = NULL;
	const char *log_path = NULL;
	char stat_ini[512] = "";
	int want_legend = 0;
	int exec = MCC_EXEC_SIM, quick = 0, machine = 0;
	uint64_t seed = 1;
	double dur = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (!strcmp(a, name) && v && ++i)
		if (OPT("--scenario"))
			scen = v;
		else if (OPT("--spec"))
			spec = v;
		else if (OPT("--arms"))
			arms = v;
		else if (OPT("--engine"))
			eng = v;
		else if (OPT("--exec"))
			exec = !strcmp(v, "threaded") ? MCC_EXEC_THREADED : MCC_EXEC_SIM;
		else if (OPT("--seed"))
			seed = strtoull(v, NULL, 0);
		else if (OPT("--duration"))
			dur = strtod(v, NULL);
		else if (OPT("--out"))
			out = v;
		else if (OPT("--module-dir"))
			mdir = v;
		else if (OPT("--log"))
			log_path = v;
		else if (!strcmp(a, "--legend"))
			want_legend = 1;
		else if (OPT("--stat"))
			snprintf(stat_ini, sizeof(stat_ini), "[engine]\nstat = %s\nstat_interval_ms = 100\n", v);
		else if (!strcmp(a, "--quick"))
			quick = 1;
		else if (!strcmp(a, "--machine"))
			machine = 1;
		else {
			usage(argv[0]);
			return 2;
		}
#undef OPT
	}
	if (!arms)
		arms = MCC_CC_COMPILED_IN ? "compile-out,off,observe,enforce" : "compile-out";
	char dir[PATH_MAX], mbuf[PATH_MAX + 32], mabs[PATH_MAX];
	if (mdir) { /* the configuration takes an absolute path only */
		if (!realpath(mdir, mabs)) {
			fprintf(stderr, "%s: --module-dir %s: %s\n", argv[0], mdir, strerror(errno));
			return 2;
		}
		mdir = mabs;
	}
	if (exe_dir(dir, sizeof(dir)) == 0 && !mdir) {
		struct stat stt;
		snprintf(mbuf, sizeof(mbuf), "%s/../../modules/.libs", dir);
		if (stat(mbuf, &stt) == 0)
			mdir = mbuf;
	}
	if (out)
		mkdir(out, 0755);
	if (spec) { /* parse it once here: a bad file fails before any arm */
		char err[512];
		if (mcc_scn_check_spec(spec, err, sizeof(err)) != 0) {
			fprintf(stderr, "%s\n", err);
			return 2;
		}
	} else if (strcmp(scen, "all")) { /* NAME[,NAME...] */
		char list[256], *save = NULL;
		snprintf(list, sizeof(list), "%s", scen);
		for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
			const char *const *n = mcc_scn_names();
			while (*n && strcmp(*n, w))
				n++;
			if (!*n) {
				fprintf(stderr, "unknown scenario '%s'\n", w);
				usage(argv[0]);
				return 2;
			}
		}
	}
	/* the log to a file: stderr of this process (libmcc's and the engines'
	 * default logger) and of the compile-out arm's; the runner's own
	 * errors still reach the terminal */
	FILE *errf = stderr;
	if (log_path) {
		int lfd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int keep = lfd >= 0 ? fcntl(2, F_DUPFD_CLOEXEC, 3) : -1;
		if (lfd < 0 || keep < 0 || !(errf = fdopen(keep, "w")) || dup2(lfd, 2) < 0) {
			fprintf(stderr, "%s: %s\n", log_path, strerror(errno));
			return 2;
		}
		close(lfd);
	}
	if (!machine)
		table_header();
	int rc = 0;
	/* a spec runs once, its files named after the file (less .ini) */
	char spec_label[64] = "spec";
	if (spec) {
		const char *b = strrchr(spec, '/');
		snprintf(spec_label, sizeof(spec_label), "%s", b ? b + 1 : spec);
		char *dot = strstr(spec_label, ".ini");
		if (dot && dot != spec_label)
			*dot = 0;
	}
	const char *const spec_only[] = {spec_label, NULL};
	for (const char *const *n = spec ? spec_only : mcc_scn_names(); *n; n++) {
		if (!spec && strcmp(scen, "all") && !in_list(scen, *n))
			continue;
		for (int en = 0; en < 2; en++) {
			if ((en == 0 && !strcmp(eng, "tent")) || (en == 1 && !strcmp(eng, "te")))
				continue;
			struct arm_set set;
			memset(&set, 0, sizeof(set));
			char list[128];
			snprintf(list, sizeof(list), "%s", arms);
			for (char *save = NULL, *arm = strtok_r(list, ",", &save); arm;
			     arm = strtok_r(NULL, ",", &save)) {
				struct mcc_scn_result r;
				int is_out = !strcmp(arm, "compile-out");
				if (is_out && MCC_CC_COMPILED_IN) {
					/* the compile-out arm is a separate binary */
					char cmd[PATH_MAX * 3 + 256], line[4096];
					snprintf(cmd, sizeof(cmd),
					         "'%s/%s' --machine --arms compile-out %s '%s' --engine %s "
					         "--exec %s --seed %" PRIu64 " --duration %g %s %s %s",
					         dir, MCC_RUNNER_NOCC_NAME, spec ? "--spec" : "--scenario",
					         spec ? spec : *n, en ? "tent" : "te",
					         exec == MCC_EXEC_SIM ? "sim" : "threaded", seed, dur,
					         quick ? "--quick" : "", out ? "--out" : "", out ? out : "");
					FILE *p = popen(cmd, "r");
					int got = 0;
					while (p && fgets(line, sizeof(line), p))
						if (!strncmp(line, "RESULT ", 7) && mcc_scn_result_parse(line, &r) == 0)
							got = 1;
					if (p)
						pclose(p);
					if (!got) {
						fprintf(errf, "%s: compile-out arm unavailable (%s)\n", *n, cmd);
						continue;
					}
					if (out && set.n < 8)
						snprintf(set.label[set.n++], sizeof(set.label[0]), "compile-out");
				} else if (is_out || MCC_CC_COMPILED_IN) {
					char csv[PATH_MAX];
					/* MODE:MODULE runs MODE with that module (enforce:delay);
					 * its files are named MODE-MODULE */
					char label[64], *module = strchr(arm, ':');
					snprintf(label, sizeof(label), "%s", arm);
					if (module) {
						label[module - arm] = '-';
						*module++ = '\0';
					}
					struct mcc_scn_opts o = {*n, arm, en, exec, seed, dur, quick, mdir, NULL, module,
					                         stat_ini[0] ? stat_ini : NULL, spec};
					if (out) {
						snprintf(csv, sizeof(csv), "%s/%s-%s-%s.csv", out, *n, en ? "tent" : "te",
						         label);
						o.timeline_csv = csv;
					}
					int e = mcc_scn_run(&o, &r);
					if (e) {
						fprintf(errf, "%s/%s: %s\n", *n, arm, strerror(-e));
						rc = 1;
						continue;
					}
					if (out && set.n < 8)
						snprintf(set.label[set.n++], sizeof(set.label[0]), "%s", label);
				} else {
					continue; /* hooks compiled out: only the compile-out arm */
				}
				if (machine)
					mcc_scn_result_write(stdout, &r);
				else
					table_row(&r);
				if (r.measured & MCC_SCN_MEAS_HANDOFF) /* local-device hand-off figures */
					printf("HANDOFF engine=%s arm=%s avoids=%" PRIu64 " admits=%" PRIu64
					       " handoffs=%" PRIu64 " allq_ms=%.3f handoff_ms=%.3f failed=%" PRIu64
					       "\n",
					       r.engine, r.arm, r.avoids, r.admits, r.handoffs,
					       (double)r.allq_ns / 1e6,
					       r.handoff_ns < 0 ? -1.0 : (double)r.handoff_ns / 1e6, r.tasks_failed);
				if (r.measured & MCC_SCN_MEAS_GRAY) /* rail shares under gray loss */
					printf("GRAY engine=%s arm=%s healthy_share_during=%.3f "
					       "healthy_share_after=%.3f bytes_during=%" PRIu64 "\n",
					       r.engine, r.arm, r.gray_during, r.gray_after,
					       r.gray_bytes_during);
				if (r.measured & MCC_SCN_MEAS_FAULTS) { /* fault figures */
					printf("FAULTS engine=%s arm=%s nic1_share=%.3f stall_ms=%.1f "
					       "lu_reads=%" PRIu64 " no_usable_path=%" PRIu64
					       " lu_after_allq_ms=%.3f failed=%" PRIu64 " cooldowns=",
					       r.engine, r.arm, r.fault_share, (double)r.fault_stall_ns / 1e6,
					       r.fault_lu_reads, r.fault_nup,
					       r.lu_after_allq_ns < 0 ? -1.0 : (double)r.lu_after_allq_ns / 1e6,
					       r.tasks_failed);
					for (uint32_t q = 0; q < r.nq_cooldown; q++)
						printf("%s%" PRIu64, q ? "," : "", r.q_cooldown_ms[q]);
					printf("%s\n", r.nq_cooldown ? "" : "-");
				}
				fflush(stdout);
				if (r.bytes_lost || r.bytes_corrupted || r.permits_leaked)
					rc = 1;
				if (r.duration_s > set.dur_s)
					set.dur_s = r.duration_s;
				if (r.pause_ms > set.pause_ms)
					set.pause_ms = r.pause_ms;
			}
			if (out && !machine) { /* the arms on one picture (the parent draws) */
				char base[128];
				snprintf(base, sizeof(base), "%s-%s", *n, en ? "tent" : "te");
				plot(out, base, &set);
			}
		}
	}
	if (!machine && want_legend)
		legend();
	if (log_path) {
		fflush(stderr);
		printf("\nlog (libmcc, engines): %s\n", log_path);
	}
	return rc;
}
