#!/usr/bin/env bash
# ctest gpu_session_dry_run (CUDA builds, D54): experiments/gpu/session.sh's plumbing on
# the CUDA test double. `calibrate switch diagnose` run in dry mode (GPUMUX_SESSION_DRY=1: short
# horizons, two calibrated models) with the real gpumux program, its CUDA module replaced by the
# double; everything is written under a temporary folder, none of it in the source tree.
# Checks: exit 0, one log per step, the calibrated profile (with fp32 in it), a summary.json in
# each sim and cuda run folder, the tarball. Not the numbers: the double is no GPU.
# Usage: session_dry_run.sh GPUMUX_BINARY FAKE_MODULE   (from the repository root)
set -uo pipefail
gpumux="$1"
module="$2"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# A private data root: the checkout's traces, linked, but a devices folder of its own, so that
# calibrate writes its profile here (a committed calibrated profile is left out: calibrate will
# not replace a link).
root="$scratch/root"
mkdir -p "$root/traces/devices"
for f in traces/*; do [ "$f" = traces/devices ] || ln -s "$PWD/$f" "$root/$f"; done
for f in traces/devices/*.json; do
  case $f in *.calibrated.json) ;; *) ln -s "$PWD/$f" "$root/$f" ;; esac
done
# Nothing may land in the source tree: its git status and the committed profile are compared.
tree_state() {
  git status --porcelain 2>/dev/null
  cksum traces/devices/*.calibrated.json 2>/dev/null
}
before="$(tree_state)"
results="$scratch/results/gpu-session"
OUT="$scratch/out" GPUMUX_ROOT="$root" GPUMUX_CUDA_MODULE="$module" GPUMUX_SESSION_DRY=1 \
  GPUMUX_SESSION_BIN="$gpumux" GPUMUX_SESSION_RESULTS="$results" \
  timeout 170 bash experiments/gpu/session.sh build tests calibrate parity switch diagnose
rc=$?
status=0
fail() { echo "FAIL: $*"; status=1; }
[ "$rc" -eq 0 ] || fail "session.sh exit $rc, not 0"
for s in calibrate switch diagnose; do
  [ -s "$results/logs/$s.log" ] || fail "no log $results/logs/$s.log"
done
[ -e "$results/logs/build.log" ] && fail "a dry run ran build"
for p in "$root/traces/devices/h100-sxm.calibrated.json" "$results/h100-sxm.calibrated.json"; do
  grep -q '"fp32"' "$p" 2>/dev/null || fail "$p missing or names no fp32"
done
for d in switch-sim switch-cuda train-sim train-cuda; do
  [ -s "$results/$d/summary.json" ] || fail "no $d/summary.json"
done
tar tzf "$scratch/out/gpu-session.tar.gz" >"$scratch/listing" 2>/dev/null || fail "no tarball"
grep -q "^gpu-session/logs/switch.log$" "$scratch/listing" || fail "tarball lacks logs/switch.log"
[ "$(tree_state)" = "$before" ] || fail "the source tree changed (git status, calibrated profiles)"
[ "$status" -eq 0 ] && echo "session.sh dry run: ok"
exit "$status"
