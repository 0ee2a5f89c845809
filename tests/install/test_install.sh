#!/usr/bin/env bash
# D53: `cmake --install` into a temporary prefix gives a program that runs from
# /tmp with GPUMUX_ROOT unset: --version, list, validate and a short run of a shipped config,
# its results only under --out (or, without --out, under the current folder), nothing written
# into the prefix; the same program copied alone says where it looked for its data.
# Usage: tests/install/test_install.sh BUILD_DIR
set -euo pipefail
build=$(realpath "$1")
unset GPUMUX_ROOT
work=$(mktemp -d /tmp/gpumux-install-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
gpumux="$prefix/bin/gpumux"
data="$prefix/share/gpumux"
fail() { echo "test_install: $*" >&2; exit 1; }

# The layout: the program, the marker, the data the program reads at run time.
for f in bin/gpumux share/gpumux/.gpumux-install share/gpumux/traces/models/resnet50.json \
         share/gpumux/traces/devices/v100-pcie3x16.json share/gpumux/traces/arrivals/SOURCE.txt \
         share/gpumux/experiments/configs/default.json share/gpumux/experiments/sweeps/default.json \
         share/doc/gpumux/README.md; do
  [ -e "$prefix/$f" ] || fail "missing $f after install"
done
[ ! -e "$data/traces/tools" ] || fail "traces/tools should not be installed"

# Everything below runs from a fresh folder under /tmp, far from the checkout.
cwd="$work/cwd"
mkdir -p "$cwd"
cd "$cwd"
touch "$work/stamp"
sleep 0.01

"$gpumux" --version | grep -q '^gpumux ' || fail "--version"
"$gpumux" list | grep -q '^models' || fail "list (categories)"
"$gpumux" list models | grep -q '^resnet50 ' || fail "list models (the installed zoo)"
"$gpumux" validate "$data/experiments/configs/default.json" > "$work/validate.log" 2>&1 ||
  fail "validate: $(cat "$work/validate.log")"
# The shipped default config: 30 simulated seconds, a few hundredths of a second of wall time.
"$gpumux" run "$data/experiments/configs/default.json" --out "$work/out" -q ||
  fail "run --out"
[ -s "$work/out/summary.json" ] || fail "run wrote no summary.json under --out"
# Nothing in the prefix or the current folder changed.
changed=$(find "$prefix" "$cwd" -newer "$work/stamp" -mindepth 1 | head -5)
[ -z "$changed" ] || fail "files written outside --out: $changed"
# Without --out, the default results/<name> is under the current folder, not the prefix.
"$gpumux" run "$data/experiments/configs/default.json" -q || fail "run"
[ -s "$cwd/results/default/summary.json" ] || fail "default results not under the current folder"
# A shipped sweep (its base named relative to the data folder), results under the current folder.
mkdir -p "$work/cwd2"
(cd "$work/cwd2" && "$gpumux" sweep "$data/experiments/sweeps/default.json" -q) \
  > "$work/sweep.log" 2>&1 || fail "sweep: $(cat "$work/sweep.log")"
[ -s "$work/cwd2/results/default/summary.csv" ] || fail "sweep tables not under the current folder"
changed=$(find "$prefix" -newer "$work/stamp" -mindepth 1 | head -5)
[ -z "$changed" ] || fail "files written into the prefix: $changed"

# The program alone, without its data: exit 2, naming every place it searched.
mkdir -p "$work/alone/bin"
cp "$gpumux" "$work/alone/bin/"
set +e
"$work/alone/bin/gpumux" list models > "$work/alone.log" 2>&1
rc=$?
set -e
[ "$rc" = 2 ] || fail "program without data: exit $rc, expected 2"
grep -q "searched:" "$work/alone.log" && grep -q "$work/alone/share/gpumux" "$work/alone.log" ||
  fail "program without data: $(cat "$work/alone.log")"
echo "test_install: ok ($prefix)"
