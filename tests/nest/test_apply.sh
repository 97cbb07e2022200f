#!/usr/bin/env bash
# nest_patch/apply on copies of a NEST 3.10 tree (NEST_SOURCE_DIR): --check,
# apply, apply again (a no-op), --revert restores the tree byte for byte, a
# tree of another NEST version and a tree whose hook lines differ are refused
# with one clear line and left untouched. Usage: test_apply.sh NEST_SOURCE_DIR SCRATCH
set -u
src=$1 scratch=$2
apply=$(cd "$(dirname "$0")/../.." && pwd)/nest_patch/apply
fails=0 passes=0
ok() { echo "PASS $*"; passes=$((passes + 1)); }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
copy() { rm -rf "$1" && mkdir -p "$1" && tar -C "$src" --exclude=.git -cf - . | tar -C "$1" -xf -; }
same() { diff -r -x .git "$1" "$2" >/dev/null; }

t=$scratch/apply-tree
copy "$t"
"$apply" --check "$t" >/dev/null; [ $? -eq 1 ] && ok "--check on a fresh tree says not applied (exit 1)" || bad "--check on a fresh tree"
"$apply" "$t" && ok "apply" || bad "apply"
"$apply" --check "$t" >/dev/null && ok "--check after apply (exit 0)" || bad "--check after apply"
out=$("$apply" "$t") && echo "$out" | grep -q "already applied" && ok "a second apply is a no-op" || bad "second apply: $out"
grep -c "// nestcl" "$t/nestkernel/simulation_manager.cpp" | grep -qx 5 && ok "simulation_manager.cpp has its five hook lines" \
  || bad "hook lines in simulation_manager.cpp"
"$apply" --revert "$t" && same "$src" "$t" && ok "--revert restores the tree exactly" || bad "--revert"

copy "$t"
echo "3.9.0" > "$t/VERSION"
cp -a "$t" "$t.before"
out=$("$apply" "$t" 2>&1); rc=$?
if [ $rc -eq 2 ] && echo "$out" | grep -q "NEST 3.9.0 found.*supports NEST 3.10" && same "$t" "$t.before"; then
  ok "NEST 3.9.0 refused, tree untouched: $out"
else
  bad "other version: exit $rc: $out"
fi
rm -rf "$t.before"

copy "$t"
sed -i 's/if ( not( node )->is_frozen() )/if ( not node->is_frozen() )/' "$t/nestkernel/simulation_manager.cpp"
cp -a "$t" "$t.before"
out=$("$apply" "$t" 2>&1); rc=$?
if [ $rc -eq 2 ] && echo "$out" | grep -q "simulation_manager.cpp.*occurs 0 times" && same "$t" "$t.before"; then
  ok "a tree whose hook line differs is refused untouched"
else
  bad "changed anchor: exit $rc: $out"
fi
rm -rf "$t" "$t.before"
echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
