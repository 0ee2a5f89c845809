#!/usr/bin/env bash
# D50: a 4-point sweep run as a Slurm job array on a single-node cluster
# (run_single_node.sh) gives summary.csv and summary_run.csv byte-identical to the same sweep
# run locally. Exit 77 (skipped) without the slurm-wlm and munge packages.
# Usage: tests/slurm/test_slurm_sweep.sh GPUMUX_BINARY
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gpumux=$(realpath "$1")
command -v sbatch >/dev/null || { echo "test_slurm_sweep: no sbatch (apt-get install slurm-wlm munge)" >&2; exit 77; }
work=$(mktemp -d /tmp/gpumux-slurm-sweep.XXXXXX)
trap 'rm -rf "$work"' EXIT
cat > "$work/base.json" <<'JSON'
{
  "name": "slurm-test",
  "devices": [{"profile": "v100-pcie3x16"}],
  "policy": {"name": "time_slicing"},
  "workload": {"jobs": [
    {"name": "train", "kind": "training", "model": "resnet50", "batch": 16, "arrival_s": 0, "iterations": 2},
    {"name": "svc", "kind": "inference", "model": "resnet50", "batch": 1, "arrival_s": 0, "requests": [0.01, 0.02]}
  ]}
}
JSON
cat > "$work/sweep.json" <<JSON
{"name": "slurm-test", "base": "$work/base.json", "out_dir": "$work/local",
 "grid": {"policy.name": ["mps", "exclusive"], "seed": [1, 2]}}
JSON
"$gpumux" sweep "$work/sweep.json" -j 2 > "$work/local.log" 2>&1

export gpumux work
"$here/run_single_node.sh" bash -c '
  set -euo pipefail
  "$gpumux" sweep "$work/sweep.json" --out "$work/slurm" --slurm --submit
  # Wait for the array and the collect job to leave the queue (at most 120 s).
  for i in $(seq 600); do
    [[ -z "$(squeue -h -o %i)" ]] && break
    sleep 0.2
  done
  if [[ -n "$(squeue -h -o %i)" ]]; then echo "jobs still queued after 120 s:" >&2; squeue >&2; exit 1; fi
  cat "$work"/slurm/slurm/logs/*.out
'
status=0
for f in summary.csv summary_run.csv; do
  if ! cmp "$work/local/$f" "$work/slurm/$f"; then
    echo "test_slurm_sweep: $f differs between the local sweep and the Slurm array" >&2
    status=1
  fi
done
[[ $(wc -l < "$work/slurm/summary_run.csv") -eq 5 ]] || { echo "expected 4 points" >&2; status=1; }
[[ $status -eq 0 ]] && echo "test_slurm_sweep: the Slurm array's tables equal the local sweep's"
exit $status
