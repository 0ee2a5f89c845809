#!/usr/bin/env bash
# Runs clang-tidy 14 (checks: .clang-tidy) over every first-party .cpp of the no-CUDA build
# (core, sim, backend, policies, experiments; the CUDA backend needs nvcc's headers and is not
# in that build) and fails on any finding: every enabled check is an error here.
# Usage: .ci/run_tidy.sh [FILE-REGEX]   e.g. .ci/run_tidy.sh 'policies/' for a quick local run.
# Parallel: GPUMUX_TIDY_JOBS (default 2). Needs only a configured build-no-cuda (no compile).
# GPUMUX_TIDY_SHARD=K/N checks only the files whose place in the sorted list is K modulo N
# (CI: one half per run, chosen by the commit; docs/decisions.md D62).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
filter="${1:-.}"
jobs="${GPUMUX_TIDY_JOBS:-2}"
command -v clang-tidy-14 >/dev/null || { echo "run_tidy: clang-tidy-14 not found" >&2; exit 2; }
[ -f build-no-cuda/compile_commands.json ] || cmake --preset no-cuda >/dev/null
# The translation units the no-CUDA build compiles, minus tests and generated files. clang-tidy
# reads a copy of the compile database without GCC-only flags (clang rejects them as unknown
# arguments): build-no-cuda/tidy/compile_commands.json.
mapfile -t files < <(python3 - "$root" <<'PY'
import json, os, re, sys
root = sys.argv[1]
db = json.load(open(f"{root}/build-no-cuda/compile_commands.json"))
gcc_only = re.compile(r"\s-mmemset-strategy=\S+")
# CMake's precompiled header (GCC: -Winvalid-pch -include .../cmake_pch.hxx; clang: the same
# through -Xclang): clang-tidy reads each source as written, so that a missing include shows.
pch = re.compile(r"\s-Winvalid-pch|(\s-Xclang)?\s-include-pch(\s-Xclang)?\s\S+"
                 r"|(\s-Xclang)?\s-include(\s-Xclang)?\s\S*cmake_pch\.hxx")
for entry in db:
    entry["command"] = pch.sub("", gcc_only.sub("", entry["command"]))
os.makedirs(f"{root}/build-no-cuda/tidy", exist_ok=True)
json.dump(db, open(f"{root}/build-no-cuda/tidy/compile_commands.json", "w"), indent=1)
seen = []
for entry in db:
    f = entry["file"]
    rel = f[len(root) + 1:] if f.startswith(root + "/") else None
    # backend/cuda/ is in this build only for the CUDA test double's tests (fakecuda); it had
    # no findings on 2026-11-26 but costs ~200 s of CPU here, so CI leaves it out.
    if rel and rel.split("/")[0] in ("core", "sim", "backend", "policies", "experiments") \
            and not rel.startswith("backend/cuda/") \
            and rel.endswith(".cpp") and rel not in seen:
        seen.append(rel)
print("\n".join(sorted(seen)))
PY
)
mapfile -t files < <(printf '%s\n' "${files[@]}" | grep -E -- "$filter" || true)
[ ${#files[@]} -gt 0 ] || { echo "run_tidy: no file matches '$filter'" >&2; exit 2; }
shard_note=""
if [ -n "${GPUMUX_TIDY_SHARD:-}" ]; then
  [[ $GPUMUX_TIDY_SHARD =~ ^([0-9]+)/([1-9][0-9]*)$ ]] && [ "${BASH_REMATCH[1]}" -lt "${BASH_REMATCH[2]}" ] ||
    { echo "run_tidy: GPUMUX_TIDY_SHARD must be K/N with 0 <= K < N, got '$GPUMUX_TIDY_SHARD'" >&2; exit 2; }
  k=${BASH_REMATCH[1]} n=${BASH_REMATCH[2]} all=${#files[@]} kept=()
  for i in "${!files[@]}"; do (( i % n == k )) && kept+=("${files[$i]}"); done
  files=("${kept[@]}")
  shard_note=" (shard $k/$n of $all)"
fi
echo "run_tidy: ${#files[@]} files$shard_note, $jobs in parallel"
# Headers of the first-party folders are checked through the files that include them.
header_filter="^$root/(core|sim|backend|policies|experiments)/"
status=0
printf '%s\0' "${files[@]}" | xargs -0 -n 1 -P "$jobs" clang-tidy-14 -p build-no-cuda/tidy --quiet \
  --warnings-as-errors='*' --header-filter="$header_filter" 2> >(grep -v -E '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$|^Suppressed [0-9]+ warnings|^Use -header-filter|^Use -system-headers' >&2) || status=1
if [ "$status" -ne 0 ]; then echo "run_tidy: clang-tidy findings above (checks: .clang-tidy)" >&2
else echo "run_tidy: no findings"; fi
exit "$status"
