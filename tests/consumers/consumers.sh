#!/bin/sh
# SPDX-License-Identifier: MIT
# consumers.sh - what an engine's build sees: `make install` into a staging
# directory inside the build tree (DESTDIR), then
#   1. a C program built with `pkg-config --cflags --libs mcc` only,
#   2. a C++ program built with Debian's cmake and find_package(mcc) only
#      (imported target mcc::mcc; the version rule is checked too),
#   3. every source of the engine stubs (host_stubs/) compiled with
#      `pkg-config --cflags mcc` and no other mcc include directory,
#   4. the installed `mcc` command, man pages and package files,
# each program loading an installed module through the installed libmcc.
# Both programs check that MCC_ENABLE_ADAPTIVE_CC reaches them exactly when
# the package was configured with --enable-adaptive-cc.
# Environment: tests/consumers/consumers.env (written by make).
. "$MCC_TEST_SRCDIR/tests/loader/toolchain.sh"
. "$MCC_TEST_BUILDDIR/tests/consumers/consumers.env"

here=$MCC_TEST_SRCDIR/tests/consumers
work=$MCC_TEST_BUILDDIR/tests/consumers
stage=$work/stage
case $MCC_CC_DEFINE in
-DMCC_ENABLE_ADAPTIVE_CC=1) expect=1 ;;
'') expect=0 ;;
*) echo "FAIL: unexpected MCC_CC_DEFINE '$MCC_CC_DEFINE'"; exit 1 ;;
esac

# 0. The installed tree. (make is this build's own; MAKEFLAGS come along.)
rm -rf "$stage" "$work/cmake-build"
if ! $MAKE -C "$MCC_TEST_BUILDDIR" install DESTDIR="$stage" > "$scratch/install.log" 2>&1; then
	tail -n 30 "$scratch/install.log"
	echo "FAIL: make install DESTDIR=$stage"
	exit 1
fi
for f in "$includedir/mcc/mcc_loader.h" "$libdir/libmcc.so" "$pkgconfigdir/mcc.pc" \
	"$cmakeconfigdir/mcc-config.cmake" "$cmakeconfigdir/mcc-config-version.cmake" \
	"$pkglibdir/mcc-policy-observe.so" "$pkglibdir/mcc-policy-aimd.so" \
	"$pkglibdir/mcc-policy-delay.so" "$bindir/mcc" \
	"$mandir/man1/mcc.1" "$mandir/man5/mcc.ini.5" "$mandir/man7/mcc_policy_v1.7"; do
	test -e "$stage$f" || failed "not installed: $f"
done
export LD_LIBRARY_PATH="$stage$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# 1. pkg-config: the sysroot maps the final prefix onto the staged tree.
export PKG_CONFIG_PATH="$stage$pkgconfigdir"
export PKG_CONFIG_SYSROOT_DIR="$stage"
cflags=$($PKG_CONFIG --cflags mcc) && libs=$($PKG_CONFIG --libs mcc) || {
	echo "FAIL: pkg-config cannot read the installed mcc.pc"
	exit 1
}
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
echo "pkg-config: $cflags $libs"
# shellcheck disable=SC2086
if $CC ${SAN_CFLAGS:-} -std=c11 -Wall -Wextra -Werror $cflags -DEXPECT_ADAPTIVE_CC=$expect \
	"$here/consumer.c" -o "$scratch/consumer_c" $libs; then
	"$scratch/consumer_c" "$scratch/c.ini" "$stage$pkglibdir" || failed "C consumer"
else
	failed "C consumer does not build with pkg-config --cflags --libs mcc"
fi

# 2. CMake.
if command -v "$CMAKE" > /dev/null 2>&1; then
	cm() {
		"$CMAKE" -S "$here/cmake" -B "$work/cmake-build" -DCMAKE_CXX_COMPILER="$CXX" \
			-DCMAKE_CXX_FLAGS="${SAN_CFLAGS:-}" -DCMAKE_EXE_LINKER_FLAGS="${SAN_CFLAGS:-}" \
			-DCMAKE_PREFIX_PATH="$stage$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
			-DEXPECT_ADAPTIVE_CC=$expect "$@" > "$scratch/cmake.log" 2>&1
	}
	if cm -DMCC_WANT_VERSION=0.1 && "$CMAKE" --build "$work/cmake-build" >> "$scratch/cmake.log" 2>&1
	then
		grep 'mcc 0' "$scratch/cmake.log"
		"$work/cmake-build/consumer" "$scratch/cxx.ini" || failed "C++ consumer"
	else
		cat "$scratch/cmake.log"
		failed "C++ consumer does not build with find_package(mcc) and mcc::mcc"
	fi
	# The version rule: a later major, and (while 0.x) another minor, refused.
	for v in 1.0 0.2 9; do
		if cm -DMCC_WANT_VERSION=$v; then
			failed "find_package(mcc $v) accepted version $version"
		elif ! grep -q "requested version \"$v\"" "$scratch/cmake.log"; then
			cat "$scratch/cmake.log"
			failed "find_package(mcc $v) failed for another reason than the version"
		else
			echo "ok: find_package(mcc $v) refused ($version installed)"
		fi
	done
else
	failed "cmake not found (Debian package cmake)"
fi

# 3. The engine stubs (TE-like, TENT-like, the scenario and verbs runners)
# need nothing but the installed headers: every source under host_stubs/,
# hooks in, compiles with pkg-config's flags and no -I into the source tree.
n=0
for f in "$MCC_TEST_SRCDIR"/host_stubs/*/*.c; do
	# shellcheck disable=SC2086
	$CC -std=gnu11 -Wall -Wextra -Werror -fsyntax-only $cflags -DMCC_ENABLE_ADAPTIVE_CC=1 \
		-DMCC_GNUPLOT='"gnuplot"' "$f" || failed "${f#"$MCC_TEST_SRCDIR"/} needs more than the installed headers"
	n=$((n + 1))
done
test $n -ge 8 || failed "only $n host_stubs sources found"
echo "ok: $n host_stubs sources compile against the installed headers alone"

# 4. The installed command judges the installed modules.
if out=$("$stage$bindir/mcc" modules "$stage$pkglibdir"); then
	echo "$out"
	for m in null observe aimd delay; do
		echo "$out" | grep -Eq "^$m +1\.[0-9]+ +[a-z]+ +yes" || failed "mcc modules: $m not accepted"
	done
else
	echo "$out"
	failed "installed mcc modules refused an installed module"
fi
exit $fail
