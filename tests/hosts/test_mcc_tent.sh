#!/bin/sh
# SPDX-License-Identifier: MIT
# Run the ctypes binding's unittest against the built libmcc_tent (77: skip).
: "${MCC_TEST_BUILDDIR:?}" "${MCC_TEST_SRCDIR:?}"
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null 2>&1 || { echo "SKIP: no python"; exit 77; }
lib="$MCC_TEST_BUILDDIR/host_stubs/tent/.libs/libmcc_tent.so.0"
[ -e "$lib" ] || { echo "SKIP: $lib not built"; exit 77; }
# a sanitized libmcc_tent cannot be loaded into an uninstrumented python
# (gcc links the sanitizer runtime as a DSO; clang leaves its symbols undefined)
if { command -v ldd >/dev/null 2>&1 && ldd "$lib" 2>/dev/null | grep -q -e libasan -e libtsan; } ||
	{ command -v nm >/dev/null 2>&1 && nm -D "$lib" 2>/dev/null | grep -q -e ' __asan_' -e ' __tsan_'; }; then
	echo "SKIP: sanitized build"; exit 77
fi
gen="$MCC_TEST_BUILDDIR/host_stubs/tent/python"
[ -e "$gen/mcc_tent.py" ] || { echo "SKIP: mcc_tent.py not generated"; exit 77; }
MCC_TENT_LIBRARY="$lib" PYTHONPATH="$gen${PYTHONPATH:+:$PYTHONPATH}" \
	exec "$PY" "$MCC_TEST_SRCDIR/tests/hosts/test_mcc_tent.py" -v
