# SPDX-License-Identifier: MIT
# prelude.sh - sourced first by the host-side soft-RoCE scripts (run.sh,
# bench.sh): re-runs the script under bash when it was started as
# "sh SCRIPT" (make's $(SHELL) is /bin/sh; exit 77 where there is no bash),
# then sets HERE (the script's folder) and exports BUILDDIR (default: the
# current folder) and SRCDIR (default: the tree two levels above HERE).
if [ -z "${BASH_VERSION:-}" ]; then
	command -v bash >/dev/null 2>&1 || { echo "${0##*/}: bash is required" >&2; exit 77; }
	exec bash "$0" "$@"
fi
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
export BUILDDIR=${BUILDDIR:-$PWD}
export SRCDIR=${SRCDIR:-$(cd "$HERE/../.." && pwd)}
