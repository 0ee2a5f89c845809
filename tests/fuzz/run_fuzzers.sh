#!/usr/bin/env bash
# Builds the libFuzzer harnesses (CMake preset `fuzz`: clang, address + undefined sanitizers)
# and runs each for a bounded time on a scratch copy of its committed corpus.
#
#   tests/fuzz/run_fuzzers.sh [SECONDS_PER_HARNESS] [HARNESS...]
#
# SECONDS_PER_HARNESS defaults to 60; HARNESS defaults to every harness built. Prints each
# harness's executions and executions per second; exits non-zero if any harness crashes,
# leaks, times out or runs out of memory. The crashing input is left in build-fuzz/findings/
# <harness>/: add it to tests/fuzz/corpus/<harness>/ once fixed, so the regression run
# (ctest -L fuzz) replays it on every build.
# Needs clang with libFuzzer (Debian/Ubuntu: packages clang and libclang-rt-<N>-dev, e.g.
# libclang-rt-14-dev for clang 14), cmake, and ninja (else make).
set -euo pipefail

seconds=${1:-60}
shift || true
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build="$repo/build-fuzz"
all=(config set jobs arrivals model profile sweep trace_import slurm_script collect import_roundtrip)
harnesses=("$@")
[[ ${#harnesses[@]} -gt 0 ]] || harnesses=("${all[@]}")

cd "$repo"
if [[ -z ${CMAKE_GENERATOR:-} ]] && command -v ninja >/dev/null; then export CMAKE_GENERATOR=Ninja; fi
cmake --preset fuzz >/dev/null
targets=()
for h in "${harnesses[@]}"; do
  # The sweep harness exists only once experiments/cli/sweep_file.cpp does.
  if cmake --build --preset fuzz --target help 2>/dev/null | grep -w "gpumux_fuzz_$h" >/dev/null; then
    targets+=("gpumux_fuzz_$h")
  else
    echo "skipping $h: no target gpumux_fuzz_$h" >&2
  fi
done
cmake --build --preset fuzz --target "${targets[@]}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# One harness per core at a time (GPUMUX_FUZZ_JOBS, default `nproc`): each libFuzzer process
# is single-threaded, so on CI's 2 cores two at once halve the stage's wall time at the same
# fuzzing time per harness.
jobs=${GPUMUX_FUZZ_JOBS:-$(nproc)}
run_one() {  # harness -> its log and exit code under build-fuzz/findings/
  local h=$1
  rm -f "$build/findings/$h.rc"
  local work="$build/corpus-work/$h"   # grows as the fuzzer finds new coverage; not committed
  local findings="$build/findings/$h"
  mkdir -p "$work" "$findings"
  # -max_len: inputs up to 1 MiB (the largest seed is a device profile of about 11 KiB);
  # libFuzzer grows inputs towards it gradually, so a short run stays mostly small.
  local rc=0
  "$build/tests/fuzz/gpumux_fuzz_$h" "$work" "$here/corpus/$h" \
    -max_total_time="$seconds" -max_len=1048576 -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$findings/" >"$build/findings/$h.log" 2>&1 || rc=$?
  echo "$rc" >"$build/findings/$h.rc"
}
running=0
for target in "${targets[@]}"; do
  if [[ $running -ge $jobs ]]; then
    wait -n || true
    running=$((running - 1))
  fi
  run_one "${target#gpumux_fuzz_}" &
  running=$((running + 1))
done
wait || true
status=0
summary=""
for target in "${targets[@]}"; do
  h=${target#gpumux_fuzz_}
  log="$build/findings/$h.log"
  rc=$(cat "$build/findings/$h.rc" 2>/dev/null || echo 1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  per_s=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  line=$(printf '%-16s %12s execs %8s exec/s  exit %d' "$h" "${execs:-?}" "${per_s:-?}" "$rc")
  echo "$line"
  summary+="$line"$'\n'
  if [[ $rc -ne 0 ]]; then
    status=1
    echo "---- $h failed; last lines of $log:" >&2
    tail -40 "$log" >&2
  fi
done
printf '\n%s' "$summary"
exit $status
