#!/usr/bin/env bash
# Regenerates every figure under plots/out/ (PNG, PDF and the CSV data of each).
#   bash plots/make_figures.sh           # full set (simulated)
#   bash plots/make_figures.sh --quick   # smaller traces, same code
# Extra arguments go to plots/make_figures.py (--only NAME..., --out DIR, -j N).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/CMakeCache.txt ] || cmake --preset default >/dev/null
cmake --build --preset default --target gpumux
exec /usr/bin/python3 plots/make_figures.py "$@"
