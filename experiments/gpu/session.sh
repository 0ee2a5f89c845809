#!/usr/bin/env bash
# The GPU session (docs/fidelity.md, "Commands for a GPU session"): build, GPU tests, calibration,
# the parity scenario and the sim-against-cuda comparisons, each step logged. First run on an H100
# on 2026-11-25: build, tests, calibrate, parity and switch together took 114 s (docs/fidelity.md);
# on a bare H200 on 2026-11-26 all seven steps took 309 s (build 78 s, figures 189 s).
# Prepare once here:  bash experiments/gpu/carry_deps.sh   (fills .deps/, ignored by git)
# Then on the device machine (carry ".deps"), in one call:
#   bash experiments/gpu/session.sh build tests calibrate parity switch diagnose sharing figures
# A bare machine keeps nothing between calls, so every call starts with `build`. Everything a
# step measures lands in one folder, results/gpu-session/ (logs/, the calibrated profile, the
# run directories), which is tarred to $OUT/gpu-session.tar.gz when the script exits (one
# file: a device call returns at most 8).
#
# Steps:
#   build      configure and build build-gpu/ (Release, sm_90, no benchmarks) with .deps
#   tests      ctest -L gpu -E parity: arena, copies, numerics, overlap, preemption, OOM
#   calibrate  gpumux calibrate --device PROFILE --quick -> traces/devices/PROFILE.calibrated.json,
#              PROFILE being h200-sxm on an H200, else h100-sxm (GPUMUX_GPU_PROFILE overrides)
#   parity     the sim-vs-cuda parity test (needs the calibrated profile: run calibrate first)
#   switch     the PipeSwitch switch scenario (default config, ResNet-152 inference arriving
#              during training) on sim and on cuda with the calibrated profile, events kept
#   diagnose   experiments/gpu/train_only.json (one training job, nothing else) on sim and cuda:
#              the gap with no sharing at all
#   sharing    build-gpu/experiments/gpumux_sharing_probe: a 1-block kernel's latency while a
#              kernel of 1 ms blocks fills the GPU (greatest / equal stream priority, a second
#              process) and both processes' time slices -> sharing_probe.csv (a few seconds)
#   figures    the quick PipeSwitch Fig. 5 sweep on cuda (171 s of simulated time, which a real
#              platform runs in real time, plus set-up per point)
#
# Overrides, for the dry run of ctest gpu_session_dry_run (tests/fakecuda/session_dry_run.sh),
# which runs `calibrate switch diagnose` on the CPU CUDA test double: GPUMUX_SESSION_BIN (the
# gpumux program), GPUMUX_SESSION_RESULTS (the results folder), GPUMUX_ROOT (the data root:
# calibrate writes its profile to $GPUMUX_ROOT/traces/devices/), and GPUMUX_SESSION_DRY=1:
# calibrate times two models, switch runs 5 s (the first two ResNet-152 requests arrive at
# 3.9 s and later), diagnose 2 s, and build, tests, parity, sharing and figures are skipped
# (they need the GPU build). The dry run checks the plumbing, not the numbers. Unset, nothing
# changes.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gpumux-out}
RESULTS=${GPUMUX_SESSION_RESULTS:-results/gpu-session}
DRY=${GPUMUX_SESSION_DRY:-0}
mkdir -p "$OUT" "$RESULTS/logs"
# The archive holds results/gpu-session/... as before; an overridden folder goes in by its last name.
if [ -z "${GPUMUX_SESSION_RESULTS:-}" ]; then
  trap 'tar czf "$OUT/gpu-session.tar.gz" results/gpu-session' EXIT
else
  trap 'tar czf "$OUT/gpu-session.tar.gz" -C "$(dirname "$RESULTS")" "$(basename "$RESULTS")"' EXIT
fi
GPUMUX=${GPUMUX_SESSION_BIN:-./build-gpu/experiments/gpumux}
# The base profile the calibration starts from and the runs use: the card's own where we have one.
default_profile=h100-sxm
case "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null)" in
  *H200*) default_profile=h200-sxm ;;
esac
PROFILE=${GPUMUX_GPU_PROFILE:-$default_profile}
status=0

step() {  # step NAME COMMAND...: runs it, logs to $RESULTS/logs/NAME.log, remembers a failure
  local name=$1
  shift
  echo "=== $name: $*"
  local t0=$SECONDS
  if "$@" > >(tee "$RESULTS/logs/$name.log") 2>&1; then
    echo "=== $name: ok in $((SECONDS - t0)) s"
  else
    echo "=== $name: FAILED (exit $?) in $((SECONDS - t0)) s"
    status=1
  fi
}

build() {
  [ -d .deps/usr ] || { echo "no .deps/: run experiments/gpu/carry_deps.sh here and carry .deps"; return 1; }
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  local generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)  # the GPU image has ninja, not make
  cmake -S . -B build-gpu "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$PWD/.deps/usr" -DGPUMUX_CUDA=ON -DGPUMUX_BUILD_BENCHMARKS=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null &&
    cmake --build build-gpu -j "$(nproc)" 2>&1 | grep -E "error|warning|Built target gpumux$" | tail -40
  test -x "$GPUMUX"
}

# A CUDA fault can stop host callbacks and leave a run waiting forever: short timeouts keep
# one hang from eating a whole 10-minute call.
gpu_tests() { ctest --test-dir build-gpu -L gpu -E parity -V --timeout 120; }

calibrate() {
  local few=()
  [ "$DRY" = 1 ] && few=(--models resnet152 --models resnet50)  # the models switch and diagnose run
  "$GPUMUX" calibrate --device "$PROFILE" --quick --force "${few[@]}" &&
    cp "${GPUMUX_ROOT:-.}/traces/devices/$PROFILE.calibrated.json" "$RESULTS/"
}

parity() {
  GPUMUX_PARITY_PROFILE="$PROFILE.calibrated" \
    ctest --test-dir build-gpu -L gpu -R parity -V --timeout 180
}

# run_both NAME CONFIG [--set ...]: the config on sim and on cuda with the calibrated profile,
# events kept (zstd), into $RESULTS/NAME-sim and NAME-cuda.
run_both() {
  local name=$1 config=$2 p
  shift 2
  for p in sim cuda; do
    timeout 120 "$GPUMUX" run "$config" --set platform=$p --set "devices.0.profile=$PROFILE.calibrated" \
      --set trace=false --set compress=zstd "$@" --out "$RESULTS/$name-$p" --force || return 1
  done
}

switch() {
  local horizon=10
  [ "$DRY" = 1 ] && horizon=5
  run_both switch experiments/configs/default.json --set policy.name=pipeswitch --set horizon_s="$horizon"
}

diagnose() {
  local short=()
  [ "$DRY" = 1 ] && short=(--set horizon_s=2)
  run_both train experiments/gpu/train_only.json "${short[@]}"
}

# skip NAME: in a dry run, the steps that need the GPU build or a GPU are skipped, with a reason.
skip() { echo "=== $1: skipped in a dry run (needs the GPU build: build-gpu/ and a GPU)"; }

sharing() {
  timeout 120 ./build-gpu/experiments/gpumux_sharing_probe "$RESULTS/sharing_probe.csv"
}

figures() {
  /usr/bin/env python3 plots/make_figures.py --quick --platform cuda \
    --only pipeswitch_fig5_switch_latency --gpumux "$GPUMUX"
  cp -r results/figures-cuda-quick plots/out/cuda "$RESULTS/" 2>/dev/null
}

for s in "$@"; do
  case $s in
    build | tests | parity | sharing | figures) if [ "$DRY" = 1 ]; then skip "$s"; continue; fi ;;&
    build) step build build ;;
    tests) step gpu-tests gpu_tests ;;
    calibrate) step calibrate calibrate ;;
    parity) step parity parity ;;
    switch) step switch switch ;;
    diagnose) step diagnose diagnose ;;
    sharing) step sharing sharing ;;
    figures) step figures figures ;;
    *) echo "unknown step '$s' (build tests calibrate parity switch diagnose sharing figures)"; exit 2 ;;
  esac
done
exit $status
