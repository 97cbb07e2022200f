#!/usr/bin/env bash
# expect_signal.sh SIGNAL OUT_PREFIX COMMAND...
#
# A run stopped by a signal (issue 13): starts COMMAND, waits until it
# simulates (its first progress line, "... ms (  25 %) ..."), lets it simulate
# for a while, sends SIGNAL (INT or TERM), and expects exit 128 + the signal's
# number, one "error: stopped by SIG<SIGNAL> at t = <ms> ms ..." line, and no file
# beginning with OUT_PREFIX: no results, spikes or plots, not even temporary
# ones.
set -u
sig=$1 prefix=$2
shift 2
rm -f "$prefix"*
err=$(mktemp)
"$@" 2>"$err" &
pid=$!
# Not before: a signal while the OpenCL compiler runs meets LLVM's own handler,
# which deletes the compiler's temporary files, and the build fails instead
# (seen once in CI with a cold PoCL cache under load, 2 s after "building").
for _ in $(seq 2400); do
  grep -Eq "^nestcl: .* ms \( *[0-9]+ %\)" "$err" && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
sleep 1
kill -s "$sig" $pid
wait $pid
rc=$?
msg=$(cat "$err")
rm -f "$err"
case $sig in INT) want=130 ;; TERM) want=143 ;; *) echo "expect_signal: signal $sig?"; exit 1 ;; esac
fail=0
if [ "$rc" != "$want" ]; then echo "expect_signal: exit $rc, want $want"; fail=1; fi
if ! grep -Eq "^error: stopped by SIG$sig at t = [0-9.]+ ms of [0-9.]+ ms \(the end of a super step\); no output written" <<<"$msg"; then
  echo "expect_signal: no 'error: stopped by SIG$sig at t = ...' line"; fail=1
fi
left=$(ls -d "$prefix"* 2>/dev/null)
if [ -n "$left" ]; then echo "expect_signal: files left behind: $left"; fail=1; fi
echo "$msg" | tail -3
exit $fail
