#!/usr/bin/env bash
# Copies the header-only dependencies (Eigen, nlohmann/json, Catch2, CLI11) and their CMake
# package files, and zlib and zstd (headers and static libraries: the GPU image may lack their
# -dev packages, and static archives need nothing on its library path), from this machine's system folders into .deps/ (ignored by git), so that a bare
# GPU machine with only CMake, nvcc and the CUDA libraries can configure and build gpumux:
#   cmake -S . -B build-gpu -DCMAKE_PREFIX_PATH=$PWD/.deps/usr ...
# Run once, here, before the first device call; name `.deps` in the call's `carry`.
# Catch2 v2 ships a static library (libCatch2WithMain.a) built for x86-64: the GPU machine is
# x86-64 as well.
set -euo pipefail
cd "$(dirname "$0")/../.."
d=.deps/usr
rm -rf .deps
mkdir -p $d/include $d/share/cmake $d/share/eigen3 $d/lib/cmake
cp -r /usr/include/eigen3 /usr/include/nlohmann /usr/include/catch2 /usr/include/CLI $d/include/
cp -r /usr/share/eigen3/cmake $d/share/eigen3/
cp -r /usr/share/cmake/nlohmann_json /usr/share/cmake/CLI11 $d/share/cmake/
cp -r /usr/lib/cmake/Catch2 $d/lib/cmake/
cp /usr/lib/libCatch2WithMain.a $d/lib/
cp /usr/include/zlib.h /usr/include/zconf.h /usr/include/zstd.h /usr/include/zstd_errors.h $d/include/
cp /usr/lib/x86_64-linux-gnu/libz.a /usr/lib/x86_64-linux-gnu/libzstd.a $d/lib/
du -sh .deps
