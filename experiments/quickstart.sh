#!/usr/bin/env bash
# Installs what is missing (Debian/Ubuntu packages), builds gpumux, and runs the default
# experiment: ResNet-152 inference arriving while ResNet-152 trains, on a simulated V100,
# under every baseline policy. Prints a table; results land in results/default/.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake nlohmann-json3-dev libeigen3-dev zlib1g-dev libzstd-dev catch2 libbenchmark-dev
          libcli11-dev python3-matplotlib)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi

cmake --preset default >/dev/null
cmake --build --preset default --target gpumux
./build/experiments/gpumux sweep experiments/sweeps/default.json -j "$(nproc)" "$@"
