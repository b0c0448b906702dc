#!/bin/sh
# SPDX-License-Identifier: MIT
# mcc_stat.sh - `mcc stat` on running engines, as an operator uses it: the
# TE and the TENT host stubs on the fabric model (mcc_scenario, flap, mode
# enforce) publish their live view to a scratch directory ([engine] stat,
# through the runner's --stat); `mcc stat` from another process must show
# their devices and routes, by directory and by pid (the directory from
# MC_ADAPTIVE_CC_STAT), in both forms. The runner is stopped once the view
# shows what is checked (it waits for that condition, with a deadline, not
# for a time); a run that ends normally leaves no file behind.
. "$MCC_TEST_SRCDIR/tests/loader/toolchain.sh"

mcc=$MCC_TEST_BUILDDIR/plugin_api/tools/mcc
scn=$MCC_TEST_BUILDDIR/host_stubs/scenario/mcc_scenario
s=$scratch
test -x "$scn" || { echo "SKIP: $scn not built"; exit 77; }
test -r "$MCC_TEST_MODULE_DIR/mcc-policy-aimd.so" || { echo "SKIP: aimd module not built"; exit 77; }
for v in $(env | sed -n 's/^\(MC_ADAPTIVE_CC_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done

# live ENGINE: run the flap scenario long enough to be seen, wait until the
# view shows a route on each local NIC, check it, stop the run.
live() {
	eng=$1 dir=$s/view-$1
	mkdir "$dir"
	"$scn" --engine "$eng" --scenario flap --arms enforce --duration 600 --stat "$dir" \
		--module-dir "$MCC_TEST_MODULE_DIR" > "$s/$eng.run" 2>&1 &
	pid=$!
	n=0
	while :; do
		"$mcc" stat "$dir" > "$s/$eng.out" 2> "$s/$eng.err"
		if grep -q '^route .* mlx5_0 .*@mlx5_' "$s/$eng.out" &&
			grep -q '^route .* mlx5_1 .*@mlx5_' "$s/$eng.out"; then
			break
		fi
		if ! kill -0 "$pid" 2> /dev/null; then
			failed "$eng: the run ended before its routes were seen: $(cat "$s/$eng.run" "$s/$eng.err")"
			return
		fi
		n=$((n + 1))
		if test "$n" -ge 1200; then
			kill "$pid"
			{ wait "$pid"; } 2> /dev/null
			failed "$eng: no route in the view after 120 s: $(cat "$s/$eng.out" "$s/$eng.err")"
			return
		fi
		sleep 0.1
	done
	# the ss-like form: the engine's header, both devices, routes with
	# their state and generation, the window line under each
	grep -q "^mcc\.$pid\.$eng: pid $pid, engine $eng, module aimd (mode enforce, ABI " "$s/$eng.out" ||
		failed "$eng: header line: $(head -2 "$s/$eng.out")"
	for d in mlx5_0 mlx5_1; do
		grep -Eq "^device +[0-9]+ $d +(HEALTHY|CONGESTED|SUSPECT|QUARANTINED|PROBING) " "$s/$eng.out" ||
			failed "$eng: no device row for $d: $(cat "$s/$eng.out")"
	done
	grep -Eq '^route +[0-9]+ mlx5_[01] +[A-Z]+ +[0-9]+ node[0-9]+:12345@mlx5_[01]$' "$s/$eng.out" ||
		failed "$eng: route rows: $(cat "$s/$eng.out")"
	grep -q '^	 window:[0-9.]*[KMG]*i*B inflight:' "$s/$eng.out" ||
		failed "$eng: no window line: $(cat "$s/$eng.out")"
	# by pid, the directory from the configuration (its variable here)
	MC_ADAPTIVE_CC_STAT=$dir "$mcc" stat "$pid" > "$s/$eng.pid" 2> "$s/err" ||
		failed "$eng: mcc stat $pid: $(cat "$s/err")"
	grep -q "^mcc\.$pid\.$eng: pid $pid" "$s/$eng.pid" || failed "$eng: mcc stat $pid: $(cat "$s/$eng.pid")"
	# Prometheus text: typed families, one sample per route
	"$mcc" stat --prometheus "$dir" > "$s/$eng.prom" 2> "$s/err" ||
		failed "$eng: --prometheus: $(cat "$s/err")"
	grep -q '^# TYPE mcc_route_window_bytes gauge$' "$s/$eng.prom" || failed "$eng: no TYPE line"
	grep -Eq "^mcc_route_window_bytes\{pid=\"$pid\",engine=\"$eng\",route=\"[0-9]+\",device=\"mlx5_[01]\",peer=\"node[0-9]+:12345@mlx5_[01]\"\} [0-9]+$" \
		"$s/$eng.prom" || failed "$eng: no route window sample: $(grep window_bytes "$s/$eng.prom")"
	grep -Eq "^mcc_route_state\{.*,state=\"[A-Z]+\"\} [0-4]$" "$s/$eng.prom" ||
		failed "$eng: no route state sample"
	grep -Eq "^mcc_policy_info\{pid=\"$pid\",engine=\"$eng\",module=\"aimd\",mode=\"enforce\"\} 1$" \
		"$s/$eng.prom" || failed "$eng: no policy info"
	# every sample line: name{labels} number
	bad=$(grep -v '^#' "$s/$eng.prom" | grep -Ev '^[a-z_]+\{[^}]*\} -?[0-9.e+-]+$' | head -3)
	test -z "$bad" || failed "$eng: malformed sample lines: $bad"
	kill "$pid"
	{ wait "$pid"; } 2> /dev/null
	echo "ok: $eng: $(grep -c '^route' "$s/$eng.out") routes seen in pid $pid"
}

live te
live tent

# A run that ends: its files are gone with it.
dir=$s/view-end
mkdir "$dir"
# (the publish line is an info line: the default level is warn)
MC_ADAPTIVE_CC_LOG_LEVEL=info "$scn" --engine te --scenario healthy --arms enforce --quick \
	--stat "$dir" --module-dir "$MCC_TEST_MODULE_DIR" > "$s/end.run" 2>&1 ||
	failed "quick run: $(cat "$s/end.run")"
grep -q 'live view: .*/view-end/mcc\.[0-9]*\.te every 100 ms' "$s/end.run" ||
	failed "the run did not publish: $(cat "$s/end.run")"
left=$(ls "$dir")
test -z "$left" || failed "files left after the run: $left"
"$mcc" stat "$dir" > /dev/null 2> "$s/err"
test $? -eq 1 || failed "mcc stat of an empty directory: not exit 1"
grep -q "no live view in $dir" "$s/err" || failed "empty directory: $(cat "$s/err")"
exit $fail
