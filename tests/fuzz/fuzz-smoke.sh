#!/bin/sh
# SPDX-License-Identifier: MIT
# fuzz-smoke.sh - build the libFuzzer targets with $FUZZ_CC and run each for
# $FUZZ_TIME seconds on its seed corpus; non-zero exit on any finding.
# Called by `make check-fuzz-smoke` (tests/fuzz/Makefile.inc), which passes
# the source lists of libmcc, modules/core and the modules from the
# Automake variables, so this script never hard-codes another area's files.
#
# Environment: FUZZ_CC FUZZ_TIME FUZZ_RSS FUZZ_TARGETS FUZZ_SRCDIR FUZZ_OUT
#   FUZZ_CPPFLAGS FUZZ_DEFS FUZZ_LIBS LIBMCC_SRCS CLASSIFY_SRCS CORE_SRCS
#   AIMD_SRCS OBSERVE_SRCS; optional FUZZ_EXTRA (more libFuzzer flags).
# The per-area preprocessor flags are repeated here (-I of the area,
# -DMCC_NULL_BUILTIN for libmcc's copy of the null module): the Automake
# *_CPPFLAGS contain quotes that cannot travel through the environment.
set -u

: "${FUZZ_CC:=clang}" "${FUZZ_TIME:=20}" "${FUZZ_RSS:=2048}"
: "${FUZZ_TARGETS:=fuzz_config fuzz_classify fuzz_events fuzz_sdk}"
: "${FUZZ_SRCDIR:?}" "${FUZZ_OUT:?}" "${FUZZ_EXTRA:=}"
: "${FUZZ_LIBS:=}" "${FUZZ_CPPFLAGS:=}"
LIBMCC_CPPFLAGS="-I$FUZZ_SRCDIR/plugin_api/include -I$FUZZ_SRCDIR/plugin_api/lib -I$FUZZ_SRCDIR/plugin_api/sdk -DMCC_NULL_BUILTIN"
MODULE_CPPFLAGS="-I$FUZZ_SRCDIR/plugin_api/lib -I$FUZZ_SRCDIR/modules/core"
: "${FUZZ_DEFS:=}" "${CLASSIFY_SRCS:=modules/core/classify.c}"

# configure's feature macros (-DHAVE_SECURE_GETENV=1 ...); the quoted
# PACKAGE_* strings of $(DEFS) would not survive the shell (PACKAGE_VERSION,
# which names.c needs, comes in FUZZ_CPPFLAGS).
for d in $FUZZ_DEFS; do
	case $d in -DHAVE_*) FUZZ_CPPFLAGS="$FUZZ_CPPFLAGS $d" ;; esac
done

SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
CFLAGS_F="-std=gnu11 -g -O1 -fno-omit-frame-pointer $SAN"

# The fuzzers compile the sources themselves: an Automake per-target
# CPPFLAGS names $(srcdir) relative to the top build directory, where make
# runs us.
say() { printf 'check-fuzz-smoke: %s\n' "$*"; }

probe="$FUZZ_OUT/probe"
mkdir -p "$FUZZ_OUT/bin" "$FUZZ_OUT/modules" "$FUZZ_OUT/work" "$FUZZ_OUT/artifacts" || exit 1
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ (void)d; (void)n; return 0; }\n' >"$probe.c"
if ! $FUZZ_CC -fsanitize=fuzzer,address,undefined "$probe.c" -o "$probe" >"$probe.log" 2>&1; then
	say "SKIP: $FUZZ_CC cannot link -fsanitize=fuzzer (no libFuzzer; install clang and"
	say "      libclang-rt-dev, or run 'make check-fuzz-smoke FUZZ_CC=clang-14')"
	exit 0
fi

# Prefix each relative .c of a list with the source directory (headers and
# absolute paths as given).
srcs() {
	for f in $1; do
		case $f in
		*.c) case $f in /*) printf '%s ' "$f" ;; *) printf '%s ' "$FUZZ_SRCDIR/$f" ;; esac ;;
		esac
	done
}

fail=0
build_module() { # name, sources
	if [ -z "$(srcs "$2")" ]; then
		say "module $1: no sources known (not in this tree yet)"
		return 1
	fi
	# shellcheck disable=SC2046
	$FUZZ_CC $CFLAGS_F -fsanitize=fuzzer-no-link -fPIC -shared -fvisibility=hidden \
		$FUZZ_CPPFLAGS $MODULE_CPPFLAGS \
		$(srcs "$2") -o "$FUZZ_OUT/modules/mcc-policy-$1.so" -lpthread -lm || return 1
}

build_target() { # name -> 0 built, 1 failed, 2 not buildable here
	t=$1
	case $t in
	fuzz_config)
		[ -n "$(srcs "${LIBMCC_SRCS:-}")" ] || { say "$t: libmcc sources unknown"; return 2; }
		# shellcheck disable=SC2046
		$FUZZ_CC $CFLAGS_F -fsanitize=fuzzer $FUZZ_CPPFLAGS $LIBMCC_CPPFLAGS \
			"$FUZZ_SRCDIR/tests/fuzz/fuzz_config.c" $(srcs "$LIBMCC_SRCS") \
			-o "$FUZZ_OUT/bin/$t" $FUZZ_LIBS -ldl -lpthread || return 1
		;;
	fuzz_classify)
		[ -n "$(srcs "$CLASSIFY_SRCS")" ] || { say "$t: classifier sources unknown"; return 2; }
		# shellcheck disable=SC2046
		$FUZZ_CC $CFLAGS_F -fsanitize=fuzzer $FUZZ_CPPFLAGS $MODULE_CPPFLAGS \
			"$FUZZ_SRCDIR/tests/fuzz/fuzz_classify.c" $(srcs "$CLASSIFY_SRCS") \
			-o "$FUZZ_OUT/bin/$t" -lm || return 1
		;;
	fuzz_events)
		build_module aimd "${AIMD_SRCS:-} ${CORE_SRCS:-}" || return 1
		build_module observe "${OBSERVE_SRCS:-} ${CORE_SRCS:-}" ||
			say "$t: observe module not built; fuzzing aimd only"
		$FUZZ_CC $CFLAGS_F -fsanitize=fuzzer $FUZZ_CPPFLAGS \
			"$FUZZ_SRCDIR/tests/fuzz/fuzz_events.c" -o "$FUZZ_OUT/bin/$t" -ldl || return 1
		;;
	fuzz_sdk)
		[ -n "$(srcs "${LIBMCC_SRCS:-}")" ] || { say "$t: libmcc sources unknown"; return 2; }
		build_module aimd "${AIMD_SRCS:-} ${CORE_SRCS:-}" || return 1
		# shellcheck disable=SC2046
		$FUZZ_CC $CFLAGS_F -fsanitize=fuzzer $FUZZ_CPPFLAGS $LIBMCC_CPPFLAGS \
			"$FUZZ_SRCDIR/tests/fuzz/fuzz_sdk.c" $(srcs "$LIBMCC_SRCS") \
			-o "$FUZZ_OUT/bin/$t" $FUZZ_LIBS -ldl -lpthread || return 1
		;;
	*)
		say "$t: unknown target"
		return 1
		;;
	esac
	return 0
}

for t in $FUZZ_TARGETS; do
	say "building $t"
	build_target "$t"
	rc=$?
	if [ $rc -eq 2 ]; then
		continue
	elif [ $rc -ne 0 ]; then
		say "FAIL: $t does not build"
		fail=1
		continue
	fi
	# New inputs go to a scratch corpus; the committed seeds stay read-only.
	work="$FUZZ_OUT/work/$t"
	mkdir -p "$work"
	dict=
	[ -f "$FUZZ_SRCDIR/tests/fuzz/$t.dict" ] && dict="-dict=$FUZZ_SRCDIR/tests/fuzz/$t.dict"
	say "running $t for ${FUZZ_TIME}s (rss limit ${FUZZ_RSS} MB)"
	MCC_FUZZ_MODULE_DIR="$FUZZ_OUT/modules" \
	"$FUZZ_OUT/bin/$t" -max_total_time="$FUZZ_TIME" -rss_limit_mb="$FUZZ_RSS" \
		-timeout=30 -print_final_stats=1 -artifact_prefix="$FUZZ_OUT/artifacts/$t-" \
		$dict $FUZZ_EXTRA "$work" "$FUZZ_SRCDIR/tests/fuzz/corpus/$t" \
		>"$FUZZ_OUT/$t.log" 2>&1
	rc=$?
	grep -E '^(stat::number_of_executed_units|stat::new_units_added|Done )' "$FUZZ_OUT/$t.log" |
		sed "s/^/check-fuzz-smoke: $t: /"
	if [ $rc -ne 0 ]; then
		say "FAIL: $t exited $rc; log $FUZZ_OUT/$t.log, artifacts $FUZZ_OUT/artifacts/"
		tail -n 60 "$FUZZ_OUT/$t.log"
		fail=1
	else
		say "$t: no finding in ${FUZZ_TIME}s"
	fi
done
exit $fail
