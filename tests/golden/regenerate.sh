#!/usr/bin/env bash
# Rebuilds the stored golden logs on purpose: runs every config in tests/golden/configs/ with
# the gpumux binary, twice, and writes the events.jsonl and summary.json of the run into
# tests/golden/expected/<config name>/. tests/golden/test_golden_logs.cpp (ctest label golden)
# compares each run byte for byte with these files, so they pin the engine's behaviour.
#
# Run it only when a change is meant to alter the logs, then review `git diff
# tests/golden/expected` and commit the new files with the change, saying in the message what
# changed and why. A change that should not alter behaviour (a refactor) must leave them as
# they are: rerunning this script then gives no diff.
#
# Refuses to write anything when the two runs of a config differ (the engine would not be
# deterministic) or when a run fails. Removes stored folders of configs that no longer exist.
#
# Usage: tests/golden/regenerate.sh [GPUMUX_BINARY]   (default build-no-cuda/experiments/gpumux)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
gpumux=$(realpath "${1:-$root/build-no-cuda/experiments/gpumux}")
if [[ ! -x "$gpumux" ]]; then
  echo "regenerate.sh: no gpumux binary at $gpumux (build it, or pass its path)" >&2
  exit 2
fi
configs_dir=$root/tests/golden/configs
expected_dir=$root/tests/golden/expected
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# First run everything into the scratch folder: nothing is replaced unless all runs succeed.
cd "$root"
for cfg in "$configs_dir"/*.json; do
  name=$(basename "$cfg" .json)
  for run in 1 2; do
    "$gpumux" run "$cfg" --out "$scratch/$run/$name" -q
  done
  for f in events.jsonl summary.json; do
    if ! cmp -s "$scratch/1/$name/$f" "$scratch/2/$name/$f"; then
      echo "regenerate.sh: $name/$f differs between two runs: not deterministic" >&2
      exit 1
    fi
  done
done

mkdir -p "$expected_dir"
for dir in "$expected_dir"/*/; do
  [[ -d "$dir" ]] || continue
  name=$(basename "$dir")
  if [[ ! -f "$configs_dir/$name.json" ]]; then rm -rf "$dir"; fi
done
for cfg in "$configs_dir"/*.json; do
  name=$(basename "$cfg" .json)
  mkdir -p "$expected_dir/$name"
  cp "$scratch/1/$name/events.jsonl" "$scratch/1/$name/summary.json" "$expected_dir/$name/"
done
du -sh "$expected_dir"
git -C "$root" status --short -- "$expected_dir"
