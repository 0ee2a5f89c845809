#!/usr/bin/env bash
# sbatch's own reading of the scripts `gpumux sweep --slurm` writes, with hostile values in
# --out, --sbatch and --set (docs/sweeps.md, Quoting), on a single-node cluster
# (run_single_node.sh): the array task's log is where --output says (the folder's literal '%'
# kept, %a replaced by the task number), the job's comment given with --sbatch arrives intact,
# the point runs with the hostile --set value, the collect job writes the tables, and nothing of
# the values runs. Exit 77 (skipped) without the slurm-wlm and munge packages.
# Usage: tests/slurm/test_slurm_quoting.sh GPUMUX_BINARY
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gpumux=$(realpath "$1")
command -v sbatch >/dev/null || { echo "test_slurm_quoting: no sbatch (apt-get install slurm-wlm munge)" >&2; exit 77; }
work=$(mktemp -d /tmp/gpumux-slurm-quoting.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
# Runs `touch CANARY` under any wrong quoting; both quotes, '#', '%' and spaces.
hostile='a b $(touch CANARY) `touch CANARY` '\''q'\'' "dq" #h %a %% ;touch CANARY'
out="$work/out $hostile"
comment="c $hostile \\z"
name="n $hostile"$'\n'"second line"
cat > "$work/base.json" <<'JSON'
{
  "name": "slurm-quoting",
  "devices": [{"profile": "v100-pcie3x16"}],
  "policy": {"name": "time_slicing"},
  "workload": {"jobs": [
    {"name": "train", "kind": "training", "model": "resnet50", "batch": 16, "arrival_s": 0, "iterations": 2}
  ]}
}
JSON
cat > "$work/sweep.json" <<JSON
{"name": "slurm-quoting", "base": "$work/base.json"}
JSON

export gpumux work out comment name
"$here/run_single_node.sh" bash -c '
  set -euo pipefail
  cd "$work"
  "$gpumux" sweep "$work/sweep.json" --out "$out" --slurm --submit --sbatch="--comment=$comment" \
    --set "workload.jobs.0.name=$name" 2> "$work/submit.log"
  cat "$work/submit.log"
  array_id=$(sed -n "s/.*submitted job array \([0-9]*\) .*/\1/p" "$work/submit.log")
  for i in $(seq 300); do
    [[ -z "$(squeue -h -o %i)" ]] && break
    sleep 0.2
  done
  if [[ -n "$(squeue -h -o %i)" ]]; then echo "jobs still queued after 60 s:" >&2; squeue >&2; exit 1; fi
  # The comment as slurmctld holds it (-o: all fields on one line, separated by spaces).
  scontrol show job -o "$array_id" > "$work/job.txt"
  grep -F -- " Comment=$comment " "$work/job.txt" > /dev/null ||
    { echo "the comment did not arrive intact:" >&2; cat "$work/job.txt" >&2; exit 1; }
  cat "$out"/slurm/logs/*.out
'
status=0
fail() { echo "test_slurm_quoting: $*" >&2; status=1; }
[[ -f "$out/slurm/logs/point-0.out" ]] || { fail "no log at \$out/slurm/logs/point-0.out:"; ls -la "$out/slurm/logs" >&2 || true; }
[[ -f "$out/summary_run.csv" ]] || fail "the collect job wrote no tables"
python3 - "$out/run/summary.json" "$name" <<'PY' || fail "the job name did not arrive intact"
import json, sys
got = json.load(open(sys.argv[1]))["jobs"][0]["name"]
assert got == sys.argv[2], (got, sys.argv[2])
PY
for d in "$work" "$out" "${GPUMUX_ROOT:-.}" "$PWD"; do
  [[ ! -e "$d/CANARY" ]] || fail "a value ran: $d/CANARY exists"
done
[[ $status -eq 0 ]] && echo "test_slurm_quoting: sbatch and bash read every value as given; nothing ran"
exit $status
