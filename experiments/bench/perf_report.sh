#!/usr/bin/env bash
# Every measurement docs/performance.md reports, in one run, so the page can be regenerated
# on any machine: simulation-core benchmarks with the plain-C++ reference beside them, the
# writers' throughput, callgrind instruction counts (repeatable) per runtime event and per
# request at 1/10/100 services, and the one-hour serving trace with default outputs (wall
# time, CPU time, peak RSS). Needs valgrind and /usr/bin/time.
#
# Usage: [BASE_BUILD=CHECKOUT] experiments/bench/perf_report.sh BUILD_DIR OUT_DIR [--hour]
#   BUILD_DIR  a Release build (e.g. build-no-cuda), with benchmarks
#   OUT_DIR    a new folder (never replaced) for raw outputs; result files of the serving
#              runs are written there and removed after measuring (tens of GB for an hour)
#   --hour     also run the full hour (3600 s, ~2 min CPU, ~48 GB of result files); without
#              it the serving trace runs 60 s and 600 s
set -euo pipefail
build=$(realpath "$1")
out=$2
hour=${3:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
if [[ -e "$out" ]]; then
  echo "perf_report.sh: $out exists; choose a new folder" >&2
  exit 2
fi
mkdir -p "$out"
out=$(realpath "$out")
cd "$root"
log() { echo "== $*" | tee -a "$out/report.txt"; }
log "$(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -n) $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
log "commit $(git rev-parse --short=12 HEAD)$(git diff --quiet || echo ' (with uncommitted changes)')"

filter='LongTimeSlicing|DefaultExperiment_(TimeSlicing|PipeSwitch|InferenceFirstPerLayer|Mps)'
# BASE_BUILD=DIR: an older build's bench_simulation runs first, in the same session, so the
# before/after ratio comes from one run on one machine.
if [[ -n "${BASE_BUILD:-}" ]]; then
  log "BEFORE: $BASE_BUILD ($(git -C "$BASE_BUILD" rev-parse --short=12 HEAD 2>/dev/null || echo unknown))"
  "$BASE_BUILD/build-no-cuda/experiments/bench_simulation" --benchmark_min_time=1 \
    --benchmark_filter="$filter" | tee -a "$out/report.txt"
fi
log "simulation core: bench_simulation (CPU-time rates; ref_ratio = reference events/s / gpumux events/s, same process)"
"$build/experiments/bench_simulation" --benchmark_min_time=1 --benchmark_filter="$filter" \
  | tee -a "$out/report.txt"

log "event queue: bench_event_queue"
"$build/experiments/bench_event_queue" --benchmark_min_time=0.5 | tee -a "$out/report.txt"

log "writers: bench_events_writer"
"$build/experiments/bench_events_writer" --benchmark_min_time=0.5 | tee -a "$out/report.txt"

# Callgrind: instructions of one run, divided by its runtime events.
callgrind_run() {  # name, then the command
  local name=$1
  shift
  valgrind --tool=callgrind --callgrind-out-file="$out/cg.$name" "$@" > "$out/$name.stdout" 2> "$out/$name.stderr"
  grep -o 'refs: *[0-9,]*' "$out/$name.stderr" | tr -d ', ' | cut -d: -f2
}
log "callgrind: Ir per runtime event (run_once: config parsing, model loading and summary included)"
for spec in "pipeswitch_30s|gpumux --set policy.name=pipeswitch" \
            "timeslicing_300s|gpumux --set horizon_s=300 --set workload.services.0.arrivals.duration_s=298" \
            "reference_300s|reference --set horizon_s=300 --set workload.services.0.arrivals.duration_s=298"; do
  name=${spec%%|*}
  # shellcheck disable=SC2086
  ir=$(callgrind_run "$name" "$build/experiments/run_once" ${spec#*|})
  events=$(grep -o '[0-9]* runtime events' "$out/$name.stdout" | cut -d' ' -f1)
  echo "$name Ir=$ir runtime_events=$events Ir_per_event=$((ir / events))" | tee -a "$out/report.txt"
done

log "callgrind: Ir per request at 1/10/100 services (salus_inference scaled; outputs off; net of a run that ends at 1 us)"
for n in 1 10 100; do
  for mem in "" 160; do
    cfg="$out/services_$n.json"
    python3 experiments/bench/scale_services.py experiments/configs/salus_inference.json "$n" "$cfg"
    extra=()
    tag="${n}_services"
    if [[ -n "$mem" ]]; then
      extra=(--set "devices.0.memory_gib=$mem")
      tag="${tag}_${mem}GiB"
    fi
    full=$(callgrind_run "$tag" "$build/experiments/gpumux" run "$cfg" "${extra[@]}" --out "$out/runs/$tag" -q)
    zero=$(callgrind_run "${tag}_zero" "$build/experiments/gpumux" run "$cfg" "${extra[@]}" \
      --set horizon_s=0.000001 --out "$out/runs/${tag}_zero" -q)
    served=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(sum(j.get('requests') or 0 for j in s['jobs']))" "$out/runs/$tag/summary.json")
    echo "$tag Ir=$full startup_Ir=$zero requests_served=$served Ir_per_request=$(( (full - zero) / served ))" \
      | tee -a "$out/report.txt"
  done
done

log "one-hour serving trace: experiments/configs/long/serving_hour.json, default outputs"
horizons=(60 600)
[[ "$hour" == "--hour" ]] && horizons+=(3600)
for h in "${horizons[@]}"; do
  dir="$out/runs/serving_$h"
  /usr/bin/time -f "serving_hour horizon_s=$h cpu_s=%U+%S wall_s=%e max_rss_kb=%M" -a -o "$out/report.txt" \
    "$build/experiments/gpumux" run experiments/configs/long/serving_hour.json \
    --set "horizon_s=$h" --out "$dir" -q
  python3 - "$dir" >> "$out/report.txt" <<'PY'
import json, os, sys
d = sys.argv[1]
s = json.load(open(os.path.join(d, "summary.json")))
size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
print(f"  log_events={s['run']['events']} runtime_events={s['run']['runtime_events']} "
      f"result_bytes={size}")
PY
  rm -rf "$dir"  # written by this script a moment ago; tens of GB at long horizons
done
tail -n 20 "$out/report.txt"
