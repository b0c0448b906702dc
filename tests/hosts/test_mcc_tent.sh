#!/bin/sh
# SPDX-License-Identifier: MIT
# Run the ctypes binding's unittest against the built libmcc_tent (77: skip).
: "${MCC_TEST_BUILDDIR:?}" "${MCC_TEST_SRCDIR:?}"
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null 2>&1 || { echo "SKIP: no python"; exit 77; }
lib="$MCC_TEST_BUILDDIR/host_stubs/tent/.libs/libmcc_tent.so.0"
[ -e "$lib" ] || { echo "SKIP: $lib not built"; exit 77; }
gen="$MCC_TEST_BUILDDIR/host_stubs/tent/python"
[ -e "$gen/mcc_tent.py" ] || { echo "SKIP: mcc_tent.py not generated"; exit 77; }
MCC_TENT_LIBRARY="$lib" PYTHONPATH="$gen${PYTHONPATH:+:$PYTHONPATH}" \
	exec "$PY" "$MCC_TEST_SRCDIR/tests/hosts/test_mcc_tent.py" -v
