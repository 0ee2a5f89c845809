#!/usr/bin/env bash
# The GPU session of issues 4 and 5, in steps meant to fit a device call's 10-minute limit
# (none has been timed on a GPU yet).
# Prepare once here:  bash experiments/gpu/carry_deps.sh   (fills .deps/, ignored by git)
# Then on the device machine (carry ".deps"), e.g. in two calls:
#   bash experiments/gpu/session.sh build tests calibrate parity
#   bash experiments/gpu/session.sh build switch figures
# A bare machine keeps nothing between calls, so every call starts with `build`. Logs, the
# calibrated profile, summaries and a tarball of figure results land in $OUT (at most 8 files
# come back; see /work/.library/device/README.md).
#
# Steps:
#   build      configure and build build-gpu/ (Release, sm_90, no benchmarks) with .deps
#   tests      ctest -L gpu -E parity: arena, copies, numerics, overlap, preemption, OOM
#   calibrate  gpumux calibrate --device h100-sxm --quick -> traces/devices/h100-sxm.calibrated.json
#   parity     the sim-vs-cuda parity test (needs the calibrated profile: run calibrate first)
#   switch     the PipeSwitch switch scenario (default config, ResNet-152 inference arriving
#              during training) on sim and on cuda with the calibrated profile
#   figures    the quick PipeSwitch Fig. 5 sweep on cuda (171 s of simulated time, which a real
#              platform runs in real time, plus set-up per point); results tarred to $OUT for plotting here
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gpumux-out}
mkdir -p "$OUT"
GPUMUX=./build-gpu/experiments/gpumux
PROFILE=${GPUMUX_GPU_PROFILE:-h100-sxm}
status=0

step() {  # step NAME COMMAND...: runs it, logs to $OUT/NAME.log, remembers a failure
  local name=$1
  shift
  echo "=== $name: $*"
  local t0=$SECONDS
  if "$@" > >(tee "$OUT/$name.log") 2>&1; then
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
gpu_tests() { ctest --test-dir build-gpu -L gpu -E parity --output-on-failure --timeout 120; }

calibrate() {
  "$GPUMUX" calibrate --device "$PROFILE" --quick &&
    cp "traces/devices/$PROFILE.calibrated.json" "$OUT/"
}

parity() {
  GPUMUX_PARITY_PROFILE="$PROFILE.calibrated" \
    ctest --test-dir build-gpu -L gpu -R parity -V --timeout 180
}

switch() {
  local p
  for p in sim cuda; do
    timeout 120 "$GPUMUX" run experiments/configs/default.json --set platform=$p --set policy.name=pipeswitch \
      --set "devices.0.profile=$PROFILE.calibrated" --set horizon_s=10 --set trace=false \
      --out "results/switch-$p" --force || return 1
    cp "results/switch-$p/summary.json" "$OUT/switch-summary-$p.json"
    cp "results/switch-$p/run.json" "$OUT/switch-run-$p.json"
  done
}

figures() {
  /usr/bin/env python3 plots/make_figures.py --quick --platform cuda \
    --only pipeswitch_fig5_switch_latency --gpumux "$GPUMUX"
  tar czf "$OUT/figures-cuda.tar.gz" results/figures-cuda-quick plots/out/cuda
}

for s in "$@"; do
  case $s in
    build) step build build ;;
    tests) step gpu-tests gpu_tests ;;
    calibrate) step calibrate calibrate ;;
    parity) step parity parity ;;
    switch) step switch switch ;;
    figures) step figures figures ;;
    *) echo "unknown step '$s' (build tests calibrate parity switch figures)"; exit 2 ;;
  esac
done
exit $status
