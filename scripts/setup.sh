#!/bin/sh
# Prepares a Debian 12 machine to build fdtune: installs the Debian packages that are
# missing (asking for root through sudo when not root), then configures and builds with the
# given CMake preset (default: "default"). Idempotent: a second run installs nothing and only
# rebuilds what changed. The GPU libraries themselves (libcuda, libamdhip64 at run time) are
# not installed here: fdtune loads them with dlopen and says when they are missing; only the
# headers are needed to build, and the HIP runtime package also provides hiprtc so that
# kernels can be compiled for AMD GPUs on a machine without one; clang-19 with lld-19
# compiles the AMD targets that Debian's hiprtc (ROCm 5.2) cannot (gfx94x, MI300's gfx942
# among them, and gfx11xx), and llvm-19's llvm-objdump disassembles AMD code objects (fdtune
# gen --disasm). clang-19 (1:19.1.7-3~deb12u1) is in Debian 12's main suite, bookworm
# itself since a 2025 point release: no backports needed, only fresh package lists (the
# apt-get update below). clang-16 with lld-16 and llvm-16 stays: the fall-back fdtune takes
# where no clang-19 is found (it knows gfx940 but not gfx941/gfx942), and the tests check
# with it that each target goes to a clang that knows it. slurm-wlm and munge are for
# tests/test_slurm.sh, which starts a one-node SLURM of its own (the packages' system
# services are not configured or used). libomp-16-dev is the OpenMP runtime clang needs to
# build the CPU backend's kernels (CC=clang-16; gcc brings libgomp).
set -eu

preset=${1:-default}
here=$(cd "$(dirname "$0")/.." && pwd)

pkgs="build-essential cmake ninja-build libsqlite3-dev liblua5.4-dev libcmocka-dev \
libamdhip64-dev libamd-comgr-dev clang-19 lld-19 llvm-19 clang-16 lld-16 llvm-16 python3 \
slurm-wlm munge libomp-16-dev"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "setup: installing Debian packages:$missing" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing >&2
fi
if [ ! -e /usr/local/cuda/include/nvrtc.h ] && [ -z "${CUDA_HOME:-}" ]; then
    echo "setup: note: no CUDA toolkit headers found (/usr/local/cuda): the cuda backend is" \
         "left out of this build; install the CUDA toolkit to compile for NVIDIA GPUs" >&2
fi

cd "$here"
cmake --preset "$preset" -G Ninja >&2
cmake --build --preset "$preset" >&2
