#!/usr/bin/env bash
# The ctest gpu_check (tests/gpu_check/CMakeLists.txt): scripts/gpu-check
# bundle of the build under test, the bundle moved elsewhere, `run --small`
# from there in a bare environment (PATH, HOME, the library path limited to the
# bundle, PoCL's ICD as the driver), then check_gpu_check.cmake on its output.
# Exit 77 (skip) when this machine has no PoCL ICD or lacks the bundler's tools.
# usage: gpu_check_test.sh SOURCE_DIR BUILD_DIR SCRATCH_DIR
set -u
src=$1 build=$2 scratch=$3
icd=/etc/OpenCL/vendors/pocl.icd

if [ ! -r "$icd" ]; then
  echo "gpu_check: skipped: no PoCL ICD file ($icd; scripts/setup installs pocl-opencl-icd)"
  exit 77
fi
for tool in readelf strip dpkg-query cmake; do
  command -v "$tool" >/dev/null || { echo "gpu_check: skipped: '$tool' is missing"; exit 77; }
done

rm -rf "$scratch" && mkdir -p "$scratch" || exit 1
bash "$src/scripts/gpu-check" bundle "$scratch/made" --build-dir "$build" || exit 1
# Relocation: the copy runs after the original is gone.
cp -r "$scratch/made" "$scratch/bundle" && rm -rf "$scratch/made" || exit 1

env -i PATH="$PATH" HOME="${HOME:-/tmp}" LD_LIBRARY_PATH="$scratch/bundle/lib" NESTCL_GPU_CHECK_ICD="$icd" \
  bash "$scratch/bundle/run" "$scratch/out" --small
rc=$?
echo "gpu_check: run --small exited $rc"
cmake -DDIR="$scratch/out" -DRUN_EXIT=$rc -P "$src/tests/gpu_check/check_gpu_check.cmake"
