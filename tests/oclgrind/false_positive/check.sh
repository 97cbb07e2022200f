#!/usr/bin/env bash
# Runs one of this folder's minimal programs under oclgrind's uninitialised-
# value check and checks two things: that its output is right, and whether
# the simulator reports it (EXPECT "reported": the known false positive is
# still there, so the project's workaround is still needed; "clean": the
# workaround's form is not reported).
#
#   check.sh reported|clean EXPECTED_OUTPUT --kernel SIMFILE
#   check.sh reported|clean EXPECTED_OUTPUT --program COMMAND [ARGS...]
set -u
expect=$1 want=$2 mode=$3
shift 3
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if [ "$mode" = --kernel ]; then
  out=$(oclgrind-kernel --uninitialized --log "$log" "$1" 2>&1)
  # oclgrind-kernel dumps the buffer as "  out[k] = v" lines: keep the values.
  out=$(printf '%s\n' "$out" | sed -n 's/^ *[a-z_]*\[[0-9]*\] = //p' | tr '\n' ' ' | sed 's/ $//')
else
  out=$(oclgrind --uninitialized --log "$log" "$@")
fi
rc=$?
n=$(grep -c '^Uninitialized value' "$log")
echo "output: '$out'; reports: $n"
[ $rc -eq 0 ] || { echo "FAIL: exit status $rc" >&2; exit 1; }
[ "$out" = "$want" ] || { echo "FAIL: output '$out', want '$want'" >&2; exit 1; }
if [ "$expect" = reported ] && [ "$n" -eq 0 ]; then
  echo "FAIL: oclgrind no longer reports this; the workaround it names may go (update docs/oclgrind-reports.md)" >&2
  exit 1
fi
if [ "$expect" = clean ] && [ "$n" -ne 0 ]; then
  echo "FAIL: the workaround's form is reported" >&2
  cat "$log" >&2
  exit 1
fi
exit 0
