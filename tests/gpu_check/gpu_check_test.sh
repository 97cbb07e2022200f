#!/usr/bin/env bash
# The ctest gpu_check (tests/gpu_check/CMakeLists.txt): scripts/gpu-check
# bundle of the build under test, the bundle moved elsewhere, `run --small`
# from there in a bare environment (PATH, HOME, the library path limited to the
# bundle, PoCL's ICD as the driver), then check_gpu_check.cmake on its output.
# Exit 77 (skip) when this machine has no PoCL ICD or lacks the bundler's tools.
# With --perfmodel (the ctest gpu_check_perfmodel), the bundle gpu_check left in
# SCRATCH_DIR runs `run --small --perfmodel` instead: its toy sweep, fit and profile.
# usage: gpu_check_test.sh SOURCE_DIR BUILD_DIR SCRATCH_DIR [--perfmodel]
set -u
src=$1 build=$2 scratch=$3 mode=${4:-}
icd=/etc/OpenCL/vendors/pocl.icd

if [ ! -r "$icd" ]; then
  echo "gpu_check: skipped: no PoCL ICD file ($icd; scripts/setup installs pocl-opencl-icd)"
  exit 77
fi
for tool in readelf strip dpkg-query cmake; do
  command -v "$tool" >/dev/null || { echo "gpu_check: skipped: '$tool' is missing"; exit 77; }
done

if [ "$mode" = --perfmodel ]; then
  [ -x "$scratch/bundle/run" ] || { echo "gpu_check_perfmodel: no bundle in $scratch (the gpu_check test makes it)"; exit 1; }
  rm -rf "$scratch/out-perfmodel"
  env -i PATH="$PATH" HOME="${HOME:-/tmp}" LD_LIBRARY_PATH="$scratch/bundle/lib" NESTCL_GPU_CHECK_ICD="$icd" \
    bash "$scratch/bundle/run" "$scratch/out-perfmodel" --small --perfmodel
  rc=$?
  echo "gpu_check_perfmodel: run --small --perfmodel exited $rc"
  exec cmake -DDIR="$scratch/out-perfmodel" -DRUN_EXIT=$rc -DPERFMODEL=1 -DNESTCL="$build/bin/nestcl" \
    -DPOCL_ICD="$icd" -P "$src/tests/gpu_check/check_gpu_check.cmake"
fi

rm -rf "$scratch" && mkdir -p "$scratch" || exit 1
bash "$src/scripts/gpu-check" bundle "$scratch/made" --build-dir "$build" || exit 1
# Relocation: the copy runs after the original is gone.
cp -r "$scratch/made" "$scratch/bundle" && rm -rf "$scratch/made" || exit 1

# A few device tests of each family, not all: ctest runs every one of them in this build anyway, and the whole
# list took 5 of CI's minutes on PoCL (engine_stdp alone 2). The bundle's other steps all run.
tests=engine_determinism,engine_block,engine_block_plastic,engine_reference,unit.numeric_rkf45_opencl
tests=$tests,unit.numeric_libm,unit.history,models_trajectory_iaf_psc_alpha,models_trajectory_hh_psc_alpha
env -i PATH="$PATH" HOME="${HOME:-/tmp}" LD_LIBRARY_PATH="$scratch/bundle/lib" NESTCL_GPU_CHECK_ICD="$icd" \
  bash "$scratch/bundle/run" "$scratch/out" --small --tests "$tests"
rc=$?
echo "gpu_check: run --small --tests ... exited $rc"
cmake -DDIR="$scratch/out" -DRUN_EXIT=$rc "-DWANT_TESTS=${tests//,/;}" -P "$src/tests/gpu_check/check_gpu_check.cmake"
