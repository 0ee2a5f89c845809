#!/usr/bin/env bash
# Golden outputs for a refactor or an optimisation: runs every config in experiments/configs
# with default outputs and records, per config, the sha256 of each result file plus the CPU
# time and peak RSS of the run. Run it before and after a change and diff the two lists
# (`diff before/hashes.txt after/hashes.txt`); timings go to times.txt, not to the hashes.
#
# Usage: experiments/bench/golden_outputs.sh GPUMUX_BINARY OUT_DIR [config ...]
# OUT_DIR must not exist (this script never replaces what it did not write).
set -euo pipefail
gpumux=$(realpath "$1")
out=$2
shift 2
if [[ -e "$out" ]]; then
  echo "golden_outputs.sh: $out exists; choose a new folder" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
configs=("$@")
if [[ ${#configs[@]} -eq 0 ]]; then configs=("$root"/experiments/configs/*.json); fi
for cfg in "${configs[@]}"; do
  name=$(basename "$cfg" .json)
  /usr/bin/time -f "$name cpu_s=%U+%S max_rss_kb=%M wall_s=%e" -a -o "$out/times.txt" \
    "$gpumux" run "$cfg" --out "$out/runs/$name" -q
  (cd "$out/runs/$name" && for f in summary.json summary.csv events.jsonl trace.json; do
     if [[ -f $f ]]; then echo "$name/$f $(sha256sum "$f" | cut -d' ' -f1)"; fi
   done) >> "$out/hashes.txt"
done
cat "$out/times.txt"
