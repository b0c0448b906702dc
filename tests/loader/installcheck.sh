#!/bin/sh
# SPDX-License-Identifier: MIT
# installcheck.sh - run by `make installcheck` (and so by `make distcheck`):
# a program built only against the installed headers and libmcc, found
# through the installed mcc.pc, loads the installed null module from an ini
# file and parses the installed sample configuration; the installed manual
# pages and configuration name real directories (no make variable left);
# without DESTDIR, the installed `mcc check` reads the installed
# configuration when nothing names another, and it passes.
# Environment (set by the installcheck-mcc-loader rule): CC, SAN_CFLAGS,
# PKG_CONFIG, DESTDIR, pkgconfigdir, libdir, pkglibdir, sysconfdir, bindir,
# mandir, includedir, pkgdatadir.
set -u
: "${PKG_CONFIG:=pkg-config}"
: "${CC:=cc}"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/mcc-installcheck-XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT

export PKG_CONFIG_PATH="${DESTDIR:-}$pkgconfigdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
if ! $PKG_CONFIG --exists mcc; then
	echo "FAIL: mcc.pc not found in ${DESTDIR:-}$pkgconfigdir"
	exit 1
fi
cflags=$($PKG_CONFIG --cflags mcc)
libs=$($PKG_CONFIG --libs mcc)
if test -n "${DESTDIR:-}"; then
	# pkg-config knows the final prefix; the files are under DESTDIR.
	cflags=$(echo "$cflags" | sed "s|-I/|-I$DESTDIR/|g")
	libs=$(echo "$libs" | sed "s|-L/|-L$DESTDIR/|g")
fi

cat > "$scratch/ini" <<EOI
[policy]
mode = off
module = null
module_dir = ${DESTDIR:-}$pkglibdir
EOI

cat > "$scratch/prog.c" <<'EOC'
#include <stdio.h>
#include <string.h>
#include <mcc_loader.h>

int main(int argc, char **argv)
{
	struct mcc_loader_opts o;
	struct mcc_config cfg;
	mcc_instance *inst;
	char err[1024];
	int rc;

	if (argc != 3)
		return 2;
	memset(&o, 0, sizeof(o));
	o.struct_size = sizeof(o);
	o.engine = "installcheck";
	o.ini_path = argv[1];
	o.ignore_env = 1;
	rc = mcc_instance_acquire(&o, &inst);
	if (rc != 0 || strcmp(mcc_instance_name(inst), "null") != 0 ||
	    mcc_instance_mode(inst) != MCC_MODE_OFF) {
		fprintf(stderr, "acquire: %d %s\n", rc, mcc_instance_error(inst));
		return 1;
	}
	mcc_instance_release(inst);
	rc = mcc_config_load(argv[2], 1, &cfg, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "installed sample configuration: %s\n", err);
		return 1;
	}
	printf("ok: installed libmcc loaded the installed null module\n");
	return 0;
}
EOC

# shellcheck disable=SC2086
$CC ${SAN_CFLAGS:-} $cflags "$scratch/prog.c" -o "$scratch/prog" $libs || {
	echo "FAIL: cannot build against the installed headers and library"
	exit 1
}
LD_LIBRARY_PATH="${DESTDIR:-}$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	"$scratch/prog" "$scratch/ini" "${DESTDIR:-}$sysconfdir/mcc/mcc.ini" || exit 1

fail=0
# Installed text names real directories: the pages and the ini, and every
# other text file the package installs (headers, the CMake and pkg-config
# files, the Mooncake adapter and its guide).
for f in "${DESTDIR:-}$sysconfdir/mcc/mcc.ini" "${DESTDIR:-}$mandir/man1/mcc.1" \
	"${DESTDIR:-}$mandir/man5/mcc.ini.5" "${DESTDIR:-}$mandir/man7/mcc_policy_v1.7" \
	"${DESTDIR:-}$pkgconfigdir/mcc.pc" "${DESTDIR:-}$libdir/cmake/mcc/mcc-config.cmake" \
	"${DESTDIR:-}$includedir/mcc/mcc_engine.h" "${DESTDIR:-}$pkgdatadir/mooncake/INTEGRATION.md"; do
	test -r "$f" || { echo "FAIL: $f is not installed"; fail=1; }
done
for f in $(find "${DESTDIR:-}$sysconfdir/mcc" "${DESTDIR:-}$mandir" "${DESTDIR:-}$pkgconfigdir/mcc.pc" \
	"${DESTDIR:-}$libdir/cmake/mcc" "${DESTDIR:-}$includedir/mcc" "${DESTDIR:-}$pkgdatadir" \
	-type f -name '*mcc*' -o -type f -path '*/mcc/*'); do
	if grep -Iq . "$f" && grep -n '\$(' "$f"; then
		echo "FAIL: $f: a make variable is left in an installed file"
		fail=1
	fi
done
grep -Fq "$sysconfdir/mcc/mcc.ini" "${DESTDIR:-}$sysconfdir/mcc/mcc.ini" || {
	echo "FAIL: the installed mcc.ini does not name its own path $sysconfdir/mcc/mcc.ini"
	fail=1
}
grep -Fq "$sysconfdir/mcc/mcc.ini" "${DESTDIR:-}$mandir/man5/mcc.ini.5" || {
	echo "FAIL: mcc.ini(5) does not name $sysconfdir/mcc/mcc.ini"
	fail=1
}

# The file every engine reads when nothing names another: only where the
# compiled-in path is the installed file (no DESTDIR).
if test -z "${DESTDIR:-}"; then
	if env -u MC_ADAPTIVE_CC_CONFIG LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		"$bindir/mcc" check > "$scratch/out" 2> "$scratch/err"; then
		head -n 1 "$scratch/out" |
			grep -Fq "; mcc check: valid ($sysconfdir/mcc/mcc.ini, the installed default," || {
			echo "FAIL: mcc check did not read $sysconfdir/mcc/mcc.ini by default: $(head -n 1 "$scratch/out")"
			fail=1
		}
	else
		echo "FAIL: mcc check of the installed configuration: $(cat "$scratch/err")"
		fail=1
	fi
	test $fail = 0 && echo "ok: installed mcc check reads $sysconfdir/mcc/mcc.ini by default"
else
	echo "note: DESTDIR set: the default configuration path is not checked"
fi
exit $fail
