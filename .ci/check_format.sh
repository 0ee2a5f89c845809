#!/usr/bin/env bash
# Fails when a tracked C/C++/CUDA file differs from what clang-format makes of it
# (.clang-format is the authority). Pinned to clang-format 14 (Debian 12's), because layout
# changes between major versions. Usage: .ci/check_format.sh [clang-format binary]
# Fix: clang-format -i FILE... (the tree was formatted in one layout-only commit).
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format="${1:-clang-format-14}"
command -v "$clang_format" >/dev/null || { echo "check_format: $clang_format not found" >&2; exit 2; }
mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.cc' '*.h' '*.cu' '*.cuh')
status=0
# --Werror turns every replacement into an error line "FILE:LINE:COL: error: code should be
# clang-formatted"; xargs runs 2 at a time and exits non-zero when any file drifts.
printf '%s\0' "${files[@]}" | xargs -0 -n 16 -P 2 "$clang_format" --dry-run --Werror || status=1
if [ "$status" -ne 0 ]; then
  echo "check_format: files above drift from .clang-format; run: $clang_format -i FILE" >&2
else
  echo "check_format: ${#files[@]} files match .clang-format"
fi
exit "$status"
