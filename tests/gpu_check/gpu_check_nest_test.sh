#!/usr/bin/env bash
# The ctest gpu_check_nest (tests/gpu_check/CMakeLists.txt): scripts/gpu-check
# bundle --nest of the build under test and of a patched NEST built by
# scripts/nest-check (NESTCL_NEST_WORK, default BUILD_DIR/nest-patched), with
# PyNEST's extension compiled for this machine's Python (the one NEST was
# built for) instead of the lent machine's; the bundle moved elsewhere; `run
# --nest --small` from there on PoCL, in a bare environment; then
# check_gpu_check_nest.cmake on its output. NESTCL_POTJANS_DIR names NEST
# <= 3.8's Potjans_2014 example, when there is one.
# Exit 77 (skip) without a NEST build (CI has none) or without PoCL.
# usage: gpu_check_nest_test.sh SOURCE_DIR BUILD_DIR SCRATCH_DIR
set -u
src=$1 build=$2 scratch=$3
icd=/etc/OpenCL/vendors/pocl.icd
work=${NESTCL_NEST_WORK:-$build/nest-patched}

if [ ! -d "$work/install" ] || [ ! -d "$work/build/pynest" ]; then
  echo "gpu_check_nest: skipped: no patched NEST in $work (scripts/nest-check builds one; NESTCL_NEST_WORK names it)"
  exit 77
fi
[ -r "$icd" ] || { echo "gpu_check_nest: skipped: no PoCL ICD file ($icd)"; exit 77; }
py=$(sed -n 's/^Python_EXECUTABLE:[A-Z]*=//p' "$work/build/CMakeCache.txt")
[ -x "$py" ] || { echo "gpu_check_nest: skipped: NEST's Python ($py) is gone"; exit 77; }

rm -rf "$scratch" && mkdir -p "$scratch" || exit 1
extra=()
[ -n "${NESTCL_POTJANS_DIR:-}" ] && extra=(--potjans "$NESTCL_POTJANS_DIR")
bash "$src/scripts/gpu-check" bundle "$scratch/made" --build-dir "$build" --nest "$work" --nest-python "$py" \
  "${extra[@]}" || exit 1
cp -r "$scratch/made" "$scratch/bundle" && rm -rf "$scratch/made" || exit 1

env -i PATH="$PATH" HOME="${HOME:-/tmp}" NESTCL_GPU_CHECK_ICD="$icd" NESTCL_NEST_PYTHON="$py" \
  bash "$scratch/bundle/run" "$scratch/out" --nest --small
rc=$?
echo "gpu_check_nest: run --nest --small exited $rc"
cmake -DDIR="$scratch/out" -DRUN_EXIT=$rc -DPOTJANS="${NESTCL_POTJANS_DIR:-}" \
  -P "$src/tests/gpu_check/check_gpu_check_nest.cmake"
