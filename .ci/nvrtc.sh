#!/usr/bin/env bash
# Installs the pinned CUDA 13.0 NVRTC from PyPI into .nvrtc/ (gitignored) and prints the
# LD_LIBRARY_PATH to export so cudarc's dynamic loader finds libnvrtc.so.13:
#
#   eval "$(.ci/nvrtc.sh)"          # exports LD_LIBRARY_PATH and GROUTE_REQUIRE_NVRTC=1
#   cargo test -p groute-core --test kernels_compile
#
# The version is pinned on purpose: NVRTC 13.1 and later emit PTX ISA 9.1+, which the GPU
# machine's driver (580, CUDA 13.0) rejects. Do not float it.
# cudarc 0.19 (feature cuda-13000) looks for libnvrtc.so, then libnvrtc.so.13 among others;
# the wheel ships nvidia/cu13/lib/libnvrtc.so.13 (plus libnvrtc-builtins.so.13.0, which
# libnvrtc loads from its own directory), so the directory on LD_LIBRARY_PATH is enough.
set -euo pipefail
version=13.0.88
root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/.nvrtc"
libdir="$dest/nvidia/cu13/lib"
if [[ ! -f "$libdir/libnvrtc.so.13" || ! -f "$dest/.version-$version" ]]; then
  rm -rf "$dest"
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$dest" \
    "nvidia-cuda-nvrtc==$version" >&2
  touch "$dest/.version-$version"
fi
if [[ ! -f "$libdir/libnvrtc.so.13" ]]; then
  echo "nvrtc.sh: libnvrtc.so.13 not found under $dest after installing nvidia-cuda-nvrtc==$version" >&2
  find "$dest" -name 'libnvrtc*' >&2 || true
  exit 1
fi
echo "export LD_LIBRARY_PATH=\"$libdir\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\""
echo "export GROUTE_REQUIRE_NVRTC=1"
