#!/usr/bin/env bash
# Checks of nestcl as installed (tests/install/CMakeLists.txt runs one per test):
#   install       cmake --install BUILD --prefix SCRATCH/prefix
#   find_package  the consumer project (consumer/) configured with
#                 find_package(nestcl), built and run
#   pkg_config    the same consumer compiled with pkg-config --cflags --libs nestcl
#   relocated     the installed tree copied elsewhere, the source and build trees
#                 hidden (empty tmpfs over both, in a private mount namespace),
#                 and `nestcl run hpc_benchmark --scale 0.05` run from another
#                 directory; its repository profiles found beside it
#   reproducible  the models translated from copies at two different paths are
#                 byte-identical to each other and to the build's own, and no
#                 generated file of the build names the source or build path
#   deb           cpack -G DEB; the package installed with apt-get into an
#                 overlay of / (a private mount namespace, so the machine is not
#                 touched), nestcl-info run from it, then purged, leaving none
#                 of its files
# Usage: install_checks.sh CHECK SOURCE_DIR BUILD_DIR SCRATCH C_COMPILER
# Exit 0 pass, 1 fail, 77 skipped (said why).
set -euo pipefail
check=$1 src=$2 build=$3 scratch=$4 cc=$5
prefix=$scratch/prefix
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "skipped: $*"; exit 77; }
need_namespaces() {
  [ "$(id -u)" -eq 0 ] || skip "needs root for a private mount namespace (unshare -m)"
  command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
  unshare -m true 2>/dev/null || skip "this machine does not allow private mount namespaces"
}

case $check in
install)
  rm -rf "$prefix"
  cmake --install "$build" --prefix "$prefix"
  for f in bin/nestcl bin/nestcl-info bin/nestcl-translate include/nestcl/engine.h include/nestcl/kernels/nestcl_philox.h \
           lib/libnestcl.a lib/libnestcl.so.0 lib/libnestcl_models.so.0 lib/libnestcl_models.a \
           lib/cmake/nestcl/nestclConfig.cmake lib/cmake/nestcl/nestclConfigVersion.cmake lib/pkgconfig/nestcl.pc; do
    [ -e "$prefix/$f" ] || fail "the install lacks $f"
  done
  # The repository's performance profiles: a folder even while it holds none (docs/perfmodel.md, "Profiles").
  [ -d "$prefix/share/nestcl/perfmodel/profiles" ] || [ ! -d "$build/share/nestcl/perfmodel" ] ||
    fail "the install lacks share/nestcl/perfmodel/profiles"
  soname=$(readelf -d "$prefix/lib/libnestcl.so.0" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
  [ "$soname" = libnestcl.so.0 ] || fail "libnestcl's soname is '$soname', not libnestcl.so.0"
  echo "installed into $prefix"
  ;;
find_package)
  rm -rf "$scratch/consumer-cmake"
  cmake -S "$src/tests/install/consumer" -B "$scratch/consumer-cmake" -DCMAKE_PREFIX_PATH="$prefix" \
        -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Release
  cmake --build "$scratch/consumer-cmake"
  "$scratch/consumer-cmake/consumer"
  ;;
pkg_config)
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  flags=$(pkg-config --cflags --libs nestcl) || fail "pkg-config does not know nestcl"
  libdir=$(pkg-config --variable=libdir nestcl)
  echo "pkg-config --cflags --libs nestcl: $flags"
  mkdir -p "$scratch/consumer-pc"
  # shellcheck disable=SC2086  # the flags are words
  "$cc" -std=c11 -Wall -Wextra -Werror -o "$scratch/consumer-pc/consumer" "$src/tests/install/consumer/consumer.c" \
        $flags -Wl,-rpath,"$libdir"
  "$scratch/consumer-pc/consumer"
  ;;
relocated)
  need_namespaces
  away=$(mktemp -d /tmp/nestcl-relocated.XXXXXX)
  trap 'rm -rf "$away"' EXIT
  cp -a "$prefix" "$away/nestcl"
  mkdir -p "$away/work"
  # Inside the namespace the source and build trees are empty directories; the
  # program cache goes to the scratch folder, as a user's would go to ~/.cache.
  unshare -m --propagation private bash -c '
    set -e
    # The build tree first: it may lie inside the source tree, which then hides it.
    mount -t tmpfs none "$2" && mount -t tmpfs none "$1"
    for t in "$1" "$2"; do
      [ ! -e "$t" ] || [ -z "$(ls -A "$t")" ] || { echo "$t is still visible" >&2; exit 1; }
    done
    cd "$3/work"
    NESTCL_CACHE_DIR="$3/cache" POCL_CACHE_DIR="$3/pocl" \
      "$3/nestcl/bin/nestcl" run hpc_benchmark --scale 0.05 --simtime 100 --quiet --out result.json
    grep -q "\"mean_rate_hz\"" result.json
    # The repository profiles it would use lie beside it, not in the (hidden) trees it was built in.
    if [ -d "$3/nestcl/share/nestcl/perfmodel" ]; then
      NESTCL_CACHE_DIR="$3/cache" POCL_CACHE_DIR="$3/pocl" "$3/nestcl/bin/nestcl" perfmodel profiles |
        grep -q "\"repository\": \"$3/nestcl/share/nestcl/perfmodel/profiles\""
    fi' _ "$src" "$build" "$away" || fail "the relocated nestcl did not run, or did not find its profiles"
  echo "relocated install at $away ran hpc_benchmark with the source and build trees hidden"
  ;;
deb)
  need_namespaces
  command -v apt-get >/dev/null || skip "not a Debian system (no apt-get)"
  rm -rf "$scratch/deb"
  (cd "$build" && cpack -G DEB -B "$scratch/deb" >/dev/null)
  deb=$(ls "$scratch"/deb/nestcl_*.deb)
  echo "package: $(basename "$deb")"
  echo "Depends: $(dpkg-deb -f "$deb" Depends)"
  dpkg-deb -f "$deb" Depends | grep -q ocl-icd-libopencl1 || fail "the package does not depend on the OpenCL ICD loader"
  root=$scratch/overlay
  rm -rf "$root"; mkdir -p "$root/upper" "$root/work" "$root/merged"
  unshare -m --propagation private bash -c '
    set -e
    r=$1 deb=$2
    mount -t overlay overlay -o "lowerdir=/,upperdir=$r/upper,workdir=$r/work" "$r/merged"
    mount --bind /proc "$r/merged/proc"; mount --rbind /dev "$r/merged/dev"; mount --rbind /sys "$r/merged/sys"
    mkdir -p "$r/merged/tmp/nestcl-deb" && cp "$deb" "$r/merged/tmp/nestcl-deb/"
    chroot "$r/merged" dpkg-query -W nestcl >/dev/null 2>&1 && { echo "nestcl is already installed on this machine" >&2; exit 1; }
    chroot "$r/merged" sh -c "cd /tmp/nestcl-deb && DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -q ./$(basename "$deb")"
    chroot "$r/merged" dpkg -L nestcl > "$r/files"
    chroot "$r/merged" env POCL_CACHE_DIR=/tmp/nestcl-deb/pocl NESTCL_CACHE_DIR=/tmp/nestcl-deb/cache nestcl-info
    chroot "$r/merged" nestcl --version
    chroot "$r/merged" env DEBIAN_FRONTEND=noninteractive apt-get purge -y -q nestcl
    left=0
    while read -r f; do
      if [ -f "$r/merged$f" ] || [ -L "$r/merged$f" ]; then echo "left behind: $f" >&2; left=1; fi
    done < "$r/files"
    exit $left' _ "$root" "$deb" || fail "the package did not install, run and uninstall cleanly"
  rm -rf "$root"
  echo "the package installed with apt-get, nestcl-info ran, and it uninstalled cleanly"
  ;;
reproducible)
  tr=$build/bin/nestcl-translate
  rm -rf "$scratch/clone-a" "$scratch/elsewhere"
  for d in "$scratch/clone-a" "$scratch/elsewhere/deeper/clone-b"; do
    mkdir -p "$d" && cp -r "$src/models" "$d/models"
    # Less the models models/CMakeLists.txt keeps from the translator for now (NESTCL_TRANSLATE_EXCLUDE).
    if [ -f "$build/models/translate_exclude.txt" ]; then
      while read -r m; do
        [ -z "$m" ] || rm -f "$d/models/$m.h" "$d/models/$m.cpp"
      done < "$build/models/translate_exclude.txt"
    fi
    "$tr" "$d/models" -o "$d/gen" -I "$d/models/shim" -std=c++17 --report json --report-file "$d/gen/report.json" \
      || fail "translating the copy in $d failed"
  done
  diff -r "$scratch/clone-a/gen" "$scratch/elsewhere/deeper/clone-b/gen" || fail "copies at two paths translate differently"
  diff -r "$scratch/clone-a/gen" "$build/models/gen" || fail "a copy translates differently from the build's own models"
  hits=$(grep -rlF -e "$src" -e "$build" "$build/models/gen" "$build"/host/*_source.c "$scratch/clone-a/gen" || true)
  [ -z "$hits" ] || fail "generated files name a path of this machine: $hits"
  echo "$(ls "$build/models/gen" | wc -l) generated files, byte-identical from two paths, naming no absolute path"
  ;;
*) echo "unknown check '$check'" >&2; exit 2 ;;
esac
