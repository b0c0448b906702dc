# SPDX-License-Identifier: MIT
# toolchain.sh - sourced by the tests/loader shell tests: the compilers and
# tools configure chose (written by make into tests/loader/toolchain.env),
# and a private scratch directory removed on exit. Exit 77 = skip.
if test -z "${MCC_TEST_BUILDDIR:-}" || test -z "${MCC_TEST_SRCDIR:-}"; then
	echo "SKIP: MCC_TEST_BUILDDIR / MCC_TEST_SRCDIR not set (run from make check)"
	exit 77
fi
if ! test -r "$MCC_TEST_BUILDDIR/tests/loader/toolchain.env"; then
	echo "FAIL: $MCC_TEST_BUILDDIR/tests/loader/toolchain.env missing"
	exit 1
fi
. "$MCC_TEST_BUILDDIR/tests/loader/toolchain.env"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/mcc-sh-XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
fail=0
failed() {
	echo "FAIL: $*"
	fail=1
}
