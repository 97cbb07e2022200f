#!/usr/bin/env bash
# Runs one command under oclgrind, the OpenCL device simulator, with its
# data-race, uninitialised-value and API checks and an NVIDIA-like device
# (work-groups of at most 1024 items, 48 KiB of local memory), and fails on any
# report: PoCL runs a work-group's items one after another and cannot show what
# a GPU would turn into wrong results (docs/architecture.md, "Tests and verification"). The simulator's log goes
# to a file of its own, so that the command's stdout and stderr stay its own
# (a caller may compare them). Reports whose exact signature (message and the
# kernel source line) appears in the suppression file are not counted; each
# entry there names the minimal kernel that shows it to be the simulator's
# false positive.
#
#   oclgrind_check.sh [--max-wgsize N] [--local-mem-size B] [--global-mem-size B]
#                     [--log FILE] [--suppress FILE] -- COMMAND [ARGS...]
#
# Exit: the command's status when it failed, 3 when oclgrind reported anything,
# 2 for usage errors, 0 otherwise.
set -u
wg=1024 lmem=49152 gmem=1073741824 log="" supp=""
while [ $# -gt 0 ]; do
  case "$1" in
    --max-wgsize) wg=$2; shift 2 ;;
    --local-mem-size) lmem=$2; shift 2 ;;
    --global-mem-size) gmem=$2; shift 2 ;;
    --log) log=$2; shift 2 ;;
    --suppress) supp=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "error: oclgrind_check.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "error: oclgrind_check.sh: no command after --" >&2; exit 2; }
command -v oclgrind >/dev/null || { echo "error: oclgrind is not installed (scripts/setup installs it)" >&2; exit 2; }
[ -n "$log" ] || log=$(mktemp)

oclgrind --data-races --uninitialized --check-api --max-errors 50 \
  --max-wgsize "$wg" --local-mem-size "$lmem" --global-mem-size "$gmem" --log "$log" "$@"
rc=$?

# A report is a block that opens with a line at column 0; its signature is that
# line (addresses masked), the kernel's name and the source line quoted under
# "At line": "MESSAGE | KERNEL | SOURCE LINE", as the suppression file has it.
reports=$(awk -v supp="$supp" '
  BEGIN { if (supp != "") while ((getline l < supp) > 0) if (l !~ /^#/ && l != "") ok[l] = 1 }
  function flush() { if (msg != "") { sig = msg " | " src; if (!(sig in ok)) { n++; print sig > "/dev/stderr" } } msg = ""; src = "" }
  /^[^ \t]/ { flush(); msg = $0; gsub(/0x[0-9a-f]+/, "ADDR", msg); want = 0; next }
  /^\tKernel:/ { k = $0; sub(/^\tKernel: /, "", k); msg = msg " | " k; next }
  /^\tAt line/ { want = 1; next }
  want == 1 { sub(/^[ \t]+/, ""); src = $0; want = 0; next }
  END { flush(); print n + 0 }' "$log" 2>"$log.reports")
if [ "$reports" -gt 0 ]; then
  echo "oclgrind: $reports report(s) (full log: $log):" >&2
  sort "$log.reports" | uniq -c | sort -rn | head -20 >&2
  head -40 "$log" >&2
  [ $rc -eq 0 ] && rc=3
fi
rm -f "$log.reports"
exit $rc
