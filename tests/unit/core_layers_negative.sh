#!/usr/bin/env bash
# The core layers check must fail on each kind of include it forbids: an api header that
# includes an engine header, one that includes nlohmann/json, and a core header spelt without
# its layer. Each case runs the check on a copy of core/ with one line added.
# Usage: core_layers_negative.sh <source dir> <cmake>
set -euo pipefail
src=$1
cmake=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
check() {  # $1: line to add to core/api/include/gpumux/api/ids.hpp; $2: expected message
  rm -rf "$work/core" && cp -r "$src/core" "$work/core"
  printf '%s\n' "$1" >>"$work/core/api/include/gpumux/api/ids.hpp"
  if out=$("$cmake" -DSOURCE_DIR="$work" -P "$src/cmake/CheckCoreLayers.cmake" 2>&1); then
    echo "FAIL: the check accepted: $1" >&2
    exit 1
  fi
  grep -qF "$2" <<<"$out" || { echo "FAIL: no '$2' in: $out" >&2; exit 1; }
}
check '#include "gpumux/engine/engine.hpp"' "api may include only api and below"
check '#include <nlohmann/json.hpp>' "core/api is JSON-free"
bare=ids  # a core header spelt without its layer (built here so no path rewrite touches it)
check "#include \"gpumux/${bare}.hpp\"" "spell a core header with its layer"
check '#include "gpumux/sim/sim_device.hpp"' "core depends on nothing above it"
# and the unchanged copy passes
rm -rf "$work/core" && cp -r "$src/core" "$work/core"
"$cmake" -DSOURCE_DIR="$work" -P "$src/cmake/CheckCoreLayers.cmake" >/dev/null
echo "core layers check: 4 forbidden includes refused, the tree itself accepted"
