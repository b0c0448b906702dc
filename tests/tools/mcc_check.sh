#!/bin/sh
# SPDX-License-Identifier: MIT
# mcc_check.sh - the operator command mcc(1).
#   `mcc check`: rows of tests/stress/BAD_INPUTS.md (ini file, environment and
#   module rows), each must exit 1 and print exactly the message of the table
#   (the one an engine logs); a valid configuration prints every key with the
#   place its value came from (default, file:line, variable).
#   `mcc modules`: the shipped modules are accepted, the test-only broken
#   ones refused with the loader's own reason, a file no short name loads
#   (upper case) listed and refused.
#   A warning an engine would log (an unknown variable, a file with no
#   setting) fails the check; [module.*] sections are checked by their
#   modules; `mcc version`.
. "$MCC_TEST_SRCDIR/tests/loader/toolchain.sh"

mcc=$MCC_TEST_BUILDDIR/plugin_api/tools/mcc
mods=$MCC_TEST_MODULE_DIR
bad=$MCC_TEST_BUILDDIR/tests/loader/bad/.libs
s=$scratch
rows=0

# run_check INI [VAR=value ...]: `mcc check INI` (no INI argument when INI
# is "-") with the variables set; sets rc and got (its stderr), stdout in
# $s/out, and counts the row.
run_check() {
	ini=$1
	shift
	if test "x$ini" = x-; then
		env "$@" "$mcc" check > "$s/out" 2> "$s/err"
	else
		env "$@" "$mcc" check "$ini" > "$s/out" 2> "$s/err"
	fi
	rc=$?
	got=$(cat "$s/err")
	rows=$((rows + 1))
}

# bad ROW 'expected message' INI [VAR=value ...]: run_check must exit 1 and
# print exactly the message on stderr, and nothing on stdout.
bad() {
	row=$1 want=$2
	shift 2
	run_check "$@"
	if test $rc -ne 1 || test "x$got" != "x$want" || test -s "$s/out"; then
		failed "row $row: exit $rc, stderr:
  got:  $got
  want: $want"
	else
		echo "ok: row $row: $got"
	fi
}

# warned ROW 'expected warning' INI [VAR=value ...]: valid, but an engine
# would log the warning: exit 1, exactly "mcc: warning: <text>" on stderr,
# the effective configuration on stdout all the same.
warned() {
	row=$1 want=$2
	shift 2
	run_check "$@"
	if test $rc -ne 1 || test "x$got" != "xmcc: warning: $want" ||
		! grep -q '^; mcc check: valid, with 1 warning on stderr' "$s/out"; then
		failed "row $row: exit $rc, stderr:
  got:  $got
  want: mcc: warning: $want"
	else
		echo "ok: row $row: $got"
	fi
}

# ini NAME: a file from printf(1)'s format $2 (with \0 escapes), mode 0644.
ini() {
	printf "$2" > "$s/$1" && chmod 0644 "$s/$1"
}

# -- Configuration file rows.
head -c 10000000 /dev/zero | tr '\0' 1 > "$s/big"
{ printf '[controller]\nmin_window_bytes = '; cat "$s/big"; printf '\n'; } > "$s/r29.ini"
bad 29 "$s/r29.ini:2: (line): line too long (at most 197 characters)" "$s/r29.ini"
{ printf '; '; cat "$s/big"; printf '\n[policy]\n'; } > "$s/r30.ini"
bad 30 "$s/r30.ini:1: (line): line too long (at most 197 characters)" "$s/r30.ini"
pad=$(printf '%0197d' 0)
ini r31.ini "[policy]\nmode = off\nmodule_dir = /$pad""module = null\n"
bad 31 "$s/r31.ini:3: (line): line too long (at most 197 characters)" "$s/r31.ini"
ini r33.ini '[controller]\nmin_window_bytes = 1\0 31072\n'
bad 33 "$s/r33.ini:2: (line): contains a NUL byte" "$s/r33.ini"
ini r34.ini '[policy]\nmode = enforce\0garbage'
bad 34 "$s/r34.ini:2: (line): contains a NUL byte" "$s/r34.ini"
ini r35.ini '[policy]\nmodule = null\n\0mode = enforce\n'
bad 35 "$s/r35.ini:3: (line): contains a NUL byte" "$s/r35.ini"
ini r36.ini '\177ELF\002\001\001\000\377\376\300\200'
bad 36 "$s/r36.ini:1: (line): contains a NUL byte" "$s/r36.ini"
ini r37.ini '[controller]\nmin_window_bytes = 131072\nmin_window_bytes = 262144\n'
bad 37 "$s/r37.ini:3: min_window_bytes: duplicate key (first set on line 2)" "$s/r37.ini"
ini r38.ini '[policy]\nmode = off\n[controller]\nepoch_us = 500\n[policy]\nmode = off\n'
bad 38 "$s/r38.ini:6: mode: duplicate key (first set on line 2)" "$s/r38.ini"
ini r39.ini '[controller]\nmin_window_bytes = 131072kb\n'
bad 39 "$s/r39.ini:2: min_window_bytes: '131072kb' has trailing characters after the number (digits only, no unit)" "$s/r39.ini"
ini r40.ini '[controller]\nmax_window_bytes = 18446744073709551616\n'
bad 40 "$s/r40.ini:2: max_window_bytes: '18446744073709551616' overflows 64 bits (range 1..1099511627776)" "$s/r40.ini"
ini r41.ini '[controller]\nmin_window_bytes = -1\n'
bad 41 "$s/r41.ini:2: min_window_bytes: '-1' is negative: the value must be positive" "$s/r41.ini"
ini r42.ini '[controller]\ncooldown_ms = 4294967296\n'
bad 42 "$s/r42.ini:2: cooldown_ms: 4294967296 is out of range 1..86400000" "$s/r42.ini"
ini r43.ini '[policy]\nmode =\n'
bad 43 "$s/r43.ini:2: mode: invalid value '': expected off, observe or enforce" "$s/r43.ini"
ini r44.ini '[controller]\nrecorder_entries = 1000\n'
bad 44 "$s/r44.ini:2: recorder_entries: 1000 is not a power of two" "$s/r44.ini"
ini r45.ini '[controller]\nmin_window_bytes = 262144\nmax_window_bytes = 131072\n'
bad 45 "$s/r45.ini:3: max_window_bytes: 131072 is below min_window_bytes (262144)" "$s/r45.ini"
ini r46.ini '[policy]\nmode = off\n[controler]\n'
bad 46 "$s/r46.ini:3: [controler]: unknown section (expected [policy], [controller], [engine] or [module.<name>])" "$s/r46.ini"
ini r47.ini '[policy]\nmode = off # no\n'
bad 47 "$s/r47.ini:2: mode: invalid value 'off # no': expected off, observe or enforce" "$s/r47.ini"
ini r48.ini '[policy]\nmodule = ../evil\n'
bad 48 "$s/r48.ini:2: module: '../evil' is not a module: expected a short name ([a-z0-9_-], at most 32 characters), an absolute path (shorter than 256), or none" "$s/r48.ini"
ini r49.ini '[policy]\nmode = enforce\n[engine]\ntent_cc_plugin = tent_cc\n'
bad 49 "$s/r49.ini:4: tent_cc_plugin: 'tent_cc' would be a second congestion controller beside mode = enforce (single policy authority: set tent_cc_plugin = none or mode = off)" "$s/r49.ini"
bad 51 "$s/does-not-exist.ini: cannot open: No such file or directory" "$s/does-not-exist.ini"
mkdir "$s/ini-is-a-dir"
bad 52 "$s/ini-is-a-dir: is a directory, not a configuration file" "$s/ini-is-a-dir"
if mkfifo "$s/fifo.ini"; then
	bad 53 "$s/fifo.ini: not a regular file" "$s/fifo.ini"
fi
bad 54 "/dev/zero: not a regular file" /dev/zero
ini r55.ini '[policy]\nmode = off\n'
chmod 0666 "$s/r55.ini"
bad 55 "$s/r55.ini: writable by others: refusing a configuration anyone can change (chmod o-w)" "$s/r55.ini"

# -- Environment rows (the variables of every key, and MC_ADAPTIVE_CC_CONFIG).
bad 57 "MC_ADAPTIVE_CC_MIN_WINDOW_BYTES: '131072' has trailing characters after the number (digits only, no unit)" - \
	"MC_ADAPTIVE_CC_MIN_WINDOW_BYTES=131072 "
bad 58 "MC_ADAPTIVE_CC_MIN_WINDOW_BYTES: '99999999999999999999999' overflows 64 bits (range 1..1099511627776)" - \
	MC_ADAPTIVE_CC_MIN_WINDOW_BYTES=99999999999999999999999
bad 59 "MC_ADAPTIVE_CC_MODE: invalid value 'enforce;rm -rf /': expected off, observe or enforce" - \
	"MC_ADAPTIVE_CC_MODE=enforce;rm -rf /"
bad 60 "$s/ini-is-a-dir: is a directory, not a configuration file" - MC_ADAPTIVE_CC_CONFIG="$s/ini-is-a-dir"
bad 61 "MC_ADAPTIVE_CC_MODULE_DIR: 'lib/mcc' is not an absolute directory path shorter than 256" - \
	MC_ADAPTIVE_CC_MODULE_DIR=lib/mcc
# The environment outranks the file: the cross-key error blames the variable.
ini r45e.ini '[controller]\nmin_window_bytes = 131072\n'
bad 45 "MC_ADAPTIVE_CC_MAX_WINDOW_BYTES: 65536 is below min_window_bytes (131072)" "$s/r45e.ini" \
	MC_ADAPTIVE_CC_MAX_WINDOW_BYTES=65536

# -- Module rows: `mcc check` loads the module the configuration selects.
modini() { # modini NAME MODE DIR
	ini "m-$1.ini" "[policy]\nmode = $2\nmodule = $1\nmodule_dir = $3\n"
}
modini badmajor off "$bad"
bad 12 "module 'badmajor': ABI version 2.0, this host implements major 1" "$s/m-badmajor.ini"
modini noinit off "$bad"
bad 8 "module 'noinit': descriptor has no init()" "$s/m-noinit.ini"
# Row 15: no capability bit at all (MCC_CAP_THREAD_SAFE is implied by v1): loads.
modini nocap off "$bad"
if "$mcc" check "$s/m-nocap.ini" > "$s/out" 2> "$s/err"; then
	tr -s ' ' < "$s/out" | grep -Fqx "; module: nocap, mode off, ABI 1.0" ||
		failed "row 15: mcc check does not name module nocap"
	echo "ok: row 15: module 'nocap' (caps 0) loads"
else
	failed "row 15: module without capabilities refused: $(cat "$s/err")"
fi
modini null enforce "$mods"
bad 17 "module 'null': the module implements mode off, but the configuration sets mode = enforce" "$s/m-null.ini"
modini initfail off "$bad"
bad 18 "module 'initfail': init() failed: Cannot allocate memory (-12)" "$s/m-initfail.ini"
modini aimd enforce "$s"
bad 20 "module 'aimd': $s/mcc-policy-aimd.so: not found (check [policy] module_dir / MC_ADAPTIVE_CC_MODULE_DIR)" "$s/m-aimd.ini"
mkdir "$s/ww" && cp "$mods/mcc-policy-null.so" "$s/ww/" && chmod 0777 "$s/ww"
modini null off "$s/ww"
bad 24 "module 'null': directory $s/ww is writable by others (mode 0777): refusing to load (chmod o-w)" "$s/m-null.ini"

# -- [module.*] sections, checked by their modules (ABI 1.2 config_check):
# the module the configuration selects and every other module named.
ini r50b.ini "[policy]\nmode = enforce\nmodule_dir = $mods\n[module.aimd]\ncredit_min_admit = 64\n"
bad 50b "$s/r50b.ini:5: credit_min_admit: unknown key in [module.aimd] (keys: credit_min_admits, qos_reserve_slices, qos_reserve_percent, qos_hold_epochs)" "$s/r50b.ini"
ini r50c.ini "[policy]\nmode = enforce\nmodule_dir = $mods\n[module.aimd]\ncredit_min_admits = 64k\n"
bad 50c "$s/r50c.ini:5: credit_min_admits: '64k' is not a decimal integer (digits only, no sign or unit)" "$s/r50c.ini"
ini r50c2.ini "[policy]\nmode = enforce\nmodule_dir = $mods\n[module.delay]\ncredit_min_admits = 2000000000\n"
bad 50c "$s/r50c2.ini:5: credit_min_admits: 2000000000 is out of range 0..1000000000" "$s/r50c2.ini"
ini r50d.ini "[policy]\nmode = enforce\nmodule_dir = $mods\n[module.aimd]\ncredit_min_admits = 64\n[module.obsreve]\n"
bad 50d "$s/r50d.ini:6: [module.obsreve]: no module 'obsreve' ($mods/mcc-policy-obsreve.so: not found): a misspelt section name?" "$s/r50d.ini"
ini r50e.ini "[policy]\nmode = off\n[module.null]\nanything = 1\n"
bad 50e "$s/r50e.ini:4: anything: unknown key in [module.null] (the null module takes no keys)" "$s/r50e.ini"
# A module's section is checked even when another module is selected.
ini r50f.ini "[policy]\nmode = enforce\nmodule_dir = $mods\n[module.observe]\ncredit_min_admits = -1\n"
bad 50f "$s/r50f.ini:5: credit_min_admits: '-1' is not a decimal integer (digits only, no sign or unit)" "$s/r50f.ini"
# A module built before ABI 1.2 has no config_check: a note, not a failure.
ini r50g.ini "[policy]\nmode = off\nmodule = nocap\nmodule_dir = $bad\n[module.nocap]\nwhatever = 1\n"
if "$mcc" check "$s/r50g.ini" > "$s/out" 2> "$s/err"; then
	grep -Fqx "mcc: note: $s/r50g.ini:5: [module.nocap]: not validated: module 'nocap' has ABI 1.0 (config_check came with 1.2)" "$s/err" ||
		failed "row 50g: no note: $(cat "$s/err")"
	echo "ok: row 50g: $(cat "$s/err")"
else
	failed "row 50g: a v1.0 module's section refused: $(cat "$s/err")"
fi
# The example files of the modules pass their own module's check.
for mi in "$MCC_TEST_SRCDIR"/modules/*/*.ini; do
	MC_ADAPTIVE_CC_MODULE_DIR=$mods "$mcc" check "$mi" > "$s/out" 2> "$s/err" ||
		failed "mcc check $mi: $(cat "$s/err")"
done

# -- What an engine only warns about fails the check (row 55b, 61a).
ini r55b.ini ''
warned 55b "$s/r55b.ini: no setting in the file (empty: every value is the default or from the environment)" "$s/r55b.ini"
ini r55c.ini '; only a comment\n[policy]\n'
warned 55b "$s/r55c.ini: no setting in the file (empty: every value is the default or from the environment)" "$s/r55c.ini"
warned 61a "MC_ADAPTIVE_CC_EPOCH_MS: unknown variable, ignored (did you mean MC_ADAPTIVE_CC_EPOCH_US?)" - \
	MC_ADAPTIVE_CC_EPOCH_MS=5
warned 61a "MC_ADAPTIVE_CC_FOO: unknown variable, ignored (known: MC_ADAPTIVE_CC_CONFIG, MC_ADAPTIVE_CC_LOG_LEVEL and MC_ADAPTIVE_CC_<KEY> for every key of [policy], [controller], [engine])" - \
	MC_ADAPTIVE_CC_FOO=1
bad 61b "MC_ADAPTIVE_CC_LOG_LEVEL: invalid value 'verbose': expected error, warn, info or debug" - \
	MC_ADAPTIVE_CC_LOG_LEVEL=verbose
test "$rows" -ge 20 || failed "only $rows rows of BAD_INPUTS.md checked"
echo "ok: $rows bad-input rows"

# -- Provenance of a valid configuration: file lines, variables, defaults.
ini good.ini "[policy]\nmode = observe\nmodule_dir = $mods\n[controller]\nepoch_us = 2000\nmd_percent = 30\n"
# has 'key = value ; source': one line of the output, blanks squeezed.
has() {
	tr -s ' ' < "$s/out" | grep -Fqx "$1" || failed "mcc check: no line '$1'"
}
if MC_ADAPTIVE_CC_EPOCH_US=500 MC_ADAPTIVE_CC_AI_BYTES=65536 "$mcc" check "$s/good.ini" \
	> "$s/out" 2> "$s/err"; then
	has "; module: observe, mode observe, ABI 1.3"
	has "mode = observe ; $s/good.ini:2"
	has "module_dir = $mods ; $s/good.ini:3"
	has "epoch_us = 500 ; MC_ADAPTIVE_CC_EPOCH_US"
	has "md_percent = 30 ; $s/good.ini:6"
	has "ai_bytes = 65536 ; MC_ADAPTIVE_CC_AI_BYTES"
	has "min_window_bytes = 131072 ; default"
	has "; probe_window_bytes = (unset) ; default"
	has "qos = off ; default"
	has "[controller]"
	test -s "$s/err" && failed "mcc check wrote to stderr: $(cat "$s/err")"
	# The output is itself a valid configuration with the same values.
	sed 's/ *;.*//' "$s/out" > "$s/again.ini"
	chmod 0644 "$s/again.ini"
	"$mcc" check "$s/again.ini" > "$s/out2" || failed "mcc check of its own output"
	grep -q "^md_percent = 30 .*again.ini:" "$s/out2" || failed "own output not read back"
else
	cat "$s/err"
	failed "mcc check refused a valid configuration"
fi
# The file named by MC_ADAPTIVE_CC_CONFIG, as an engine reads it.
if MC_ADAPTIVE_CC_CONFIG="$s/good.ini" "$mcc" check > "$s/out" 2> "$s/err"; then
	has "; mcc check: valid ($s/good.ini, from MC_ADAPTIVE_CC_CONFIG, MC_ADAPTIVE_CC_* environment applied)"
	has "epoch_us = 2000 ; $s/good.ini:5"
else
	failed "mcc check with MC_ADAPTIVE_CC_CONFIG: $(cat "$s/err")"
fi
# The file an engine reads without a path: MC_ADAPTIVE_CC_CONFIG=none reads
# none; unset, the installed default (absent from a build tree).
MC_ADAPTIVE_CC_CONFIG=none "$mcc" check > "$s/out" 2> "$s/err" || failed "MC_ADAPTIVE_CC_CONFIG=none refused"
has "; mcc check: valid (no ini file: MC_ADAPTIVE_CC_CONFIG=none, MC_ADAPTIVE_CC_* environment applied)"
if ! test -e "$SYSCONFDIR/mcc/mcc.ini"; then
	env -u MC_ADAPTIVE_CC_CONFIG "$mcc" check > "$s/out" 2> "$s/err" || failed "no default file refused"
	has "; mcc check: valid (no ini file: $SYSCONFDIR/mcc/mcc.ini does not exist, MC_ADAPTIVE_CC_* environment applied)"
else
	echo "note: $SYSCONFDIR/mcc/mcc.ini exists on this machine: installcheck.sh checks that it is read"
fi
# mcc version: the command, the libmcc it runs with, its policy ABI.
"$mcc" version > "$s/out" 2>&1 || failed "mcc version: exit $?"
has "mcc $(sed -n 's/^Version: //p' "$MCC_TEST_BUILDDIR/mcc.pc")"
has "libmcc $(sed -n 's/^Version: //p' "$MCC_TEST_BUILDDIR/mcc.pc")"
has "policy ABI 1.3"
# Usage errors: exit 2.
"$mcc" chek > /dev/null 2>&1
test $? -eq 2 || failed "mcc chek: exit status is not 2"
"$mcc" check a b > /dev/null 2>&1
test $? -eq 2 || failed "mcc check a b: exit status is not 2"

# -- mcc modules.
if "$mcc" modules "$mods" > "$s/out" 2> "$s/err"; then
	for m in null observe aimd delay; do
		grep -Eq "^$m +1\.[0-9]+ +[a-z]+ +yes" "$s/out" || failed "mcc modules: $m not accepted"
	done
else
	cat "$s/out" "$s/err"
	failed "mcc modules refused a shipped module"
fi
# The directory an engine searches, from the environment.
MC_ADAPTIVE_CC_MODULE_DIR=$mods "$mcc" modules > "$s/out" 2>&1 &&
	grep -Eq "^aimd +1\.[0-9]+ +enforce +yes$" "$s/out" ||
	failed "mcc modules without DIR does not search MC_ADAPTIVE_CC_MODULE_DIR"
"$mcc" modules "$bad" > "$s/out" 2> "$s/err"
test $? -eq 1 || failed "mcc modules $bad: exit status is not 1"
row() {
	tr -s ' ' < "$s/out" | grep -Fqx "$1" || failed "mcc modules: no row '$1'"
}
row "baseline 1.0 off yes"
row "nocap 1.0 off yes"
row "badmajor - - no module 'badmajor': ABI version 2.0, this host implements major 1"
row "noinit - - no module 'noinit': descriptor has no init()"
row "initfail - - no module 'initfail': init() failed: Cannot allocate memory (-12)"
row "small - - no module 'small': descriptor struct_size 100 is smaller than the v1.0 descriptor (200 bytes)"
grep -q "^unresolved .* no .*undefined symbol: mcc_test_undefined_function" "$s/out" ||
	failed "mcc modules: unresolved module not refused by dlopen"
# A file no short name loads (upper case) is listed and refused, not skipped.
mkdir "$s/uc" && cp "$mods/mcc-policy-null.so" "$s/uc/" && cp "$mods/mcc-policy-null.so" "$s/uc/MCC-POLICY-AIMD.SO" &&
	cp "$mods/mcc-policy-null.so" "$s/uc/mcc-policy-Null.so" && chmod 0755 "$s/uc"
"$mcc" modules "$s/uc" > "$s/out" 2> "$s/err"
test $? -eq 1 || failed "mcc modules $s/uc: exit status is not 1"
row "null 1.3 off yes"
row "Null - - no mcc-policy-Null.so: no short name loads this file (a module file is mcc-policy-<name>.so, <name> of [a-z0-9_-], at most 32 characters): rename it, or name its absolute path in [policy] module"
tr -s ' ' < "$s/out" | grep -q "^AIMD - - no MCC-POLICY-AIMD.SO: no short name loads this file" ||
	failed "mcc modules: MCC-POLICY-AIMD.SO not listed as refused"

cat "$s/out"
exit $fail
