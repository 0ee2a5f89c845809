#!/usr/bin/env bash
# Peak memory of `gpumux trace import` on its two largest documented inputs (traces/importing.md,
# "Limits"): a 1 GiB CSV that needs --sort, and the azure-functions-2019 preset expanding 100
# million invocations. Inputs are synthetic (import_memory_inputs.py); each import runs under
# /usr/bin/time -v and the script prints wall time, peak RSS and exit status, with the date,
# machine, load and commit. Not a test: numbers go to docs/results/.
#
# Usage: experiments/bench/import_memory.sh GPUMUX_BINARY WORK_DIR [CSV_BYTES] [INVOCATIONS]
#   WORK_DIR   a new folder (never replaced) for the inputs and outputs (about 5 GB at the
#              defaults; the outputs are removed after each import)
#   CSV_BYTES  default 1073741824 (1 GiB, the input limit); INVOCATIONS default 100000000
# MEM_LIMIT_KB=N caps each import's address space (ulimit -v), for machines with less memory
# than the pre-streaming import needed. INPUTS=DIR reuses the inputs an earlier run generated
# in DIR (its trace.csv and functions.csv) instead of generating them again.
set -euo pipefail
gpumux=$(realpath "$1")
work=$2
csv_bytes=${3:-1073741824}
invocations=${4:-100000000}
here=$(cd "$(dirname "$0")" && pwd)
if [[ -e "$work" ]]; then
  echo "import_memory.sh: $work exists; choose a new folder" >&2
  exit 2
fi
mkdir -p "$work"
work=$(realpath "$work")
echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -n) $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB;" \
     "uptime: $(uptime)"
echo "== gpumux: $("$gpumux" --version | head -1)"
if [[ -n ${INPUTS:-} ]]; then
  ln -s "$(realpath "$INPUTS/trace.csv")" "$work/trace.csv"
  ln -s "$(realpath "$INPUTS/functions.csv")" "$work/functions.csv"
else
  python3 "$here/import_memory_inputs.py" csv "$work/trace.csv" "$csv_bytes"
  python3 "$here/import_memory_inputs.py" functions "$work/functions.csv" "$invocations"
fi
ls -lL "$work/trace.csv" "$work/functions.csv"

measure() {
  local name=$1
  shift
  local limit=""
  [[ -n ${MEM_LIMIT_KB:-} ]] && limit="ulimit -v $MEM_LIMIT_KB;"
  echo "== $name: gpumux $*"
  rc=0
  bash -c "$limit"' exec /usr/bin/time -v "$@"' _ "$gpumux" "$@" >"$work/$name.log" 2>&1 || rc=$?
  local rss wall
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/$name.log")
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/$name.log")
  echo "$name: exit $rc, wall $wall, peak RSS $((rss / 1024)) MiB ($rss kB)"
  grep -E '^(error|imported)' "$work/$name.log" | head -3 || true
  rm -f "$work/$name.out.csv" "$work/$name.out.csv.SOURCE"
}

measure csv-1gib trace import "$work/trace.csv" --out "$work/csv-1gib.out.csv" \
  --time-column ts --time-unit ms --sort -q
measure functions-no-extra trace import "$work/functions.csv" \
  --out "$work/functions-no-extra.out.csv" --preset azure-functions-2019 --no-extra -q
measure functions trace import "$work/functions.csv" --out "$work/functions.out.csv" \
  --preset azure-functions-2019 -q
