#!/bin/sh
# SPDX-License-Identifier: MIT
# quickstart.sh - everything on a fresh Debian 12 machine, in one command:
#   ./quickstart.sh demo   install missing Debian packages, build, run the main demo
#   ./quickstart.sh test   install missing Debian packages, build, run `make check`
# BUILD_DIR (default ./build) holds the out-of-tree build. MCC_CONFIGURE_FLAGS adds
# configure flags. SKIP_APT=1 skips package installation.
set -eu

cd "$(dirname "$0")"
SRC=$(pwd)
BUILD_DIR=${BUILD_DIR:-$SRC/build}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

DEBS="build-essential autoconf automake libtool pkg-config libibverbs-dev libinih-dev \
libcunit1-dev python3 gnuplot-nox valgrind clang cmake man-db groff-base"

install_deps() {
	[ "${SKIP_APT:-0}" = 1 ] && return 0
	missing=""
	for p in $DEBS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "quickstart: installing Debian packages:$missing"
	SUDO=""
	[ "$(id -u)" = 0 ] || SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
}

build() {
	./autogen.sh >/dev/null
	mkdir -p "$BUILD_DIR"
	cd "$BUILD_DIR"
	# shellcheck disable=SC2086
	"$SRC/configure" --enable-werror ${MCC_CONFIGURE_FLAGS:-} >configure.out ||
		{ cat configure.out; exit 1; }
	make -j"$JOBS"
}

case "${1:-}" in
demo)
	install_deps
	build
	make -j"$JOBS" demo
	;;
test)
	install_deps
	build
	make -j"$JOBS" check || { find . -name '*.log' -path '*tests*' -newer configure.out \
		-exec grep -l -E '^(FAIL|ERROR)' {} + 2>/dev/null | head -5; exit 1; }
	;;
*)
	echo "usage: $0 demo|test" >&2
	exit 2
	;;
esac
