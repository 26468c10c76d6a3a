# Shared by the scripts: the repository root, CUDA on the PATH, carried dependencies.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -d /usr/local/cuda/bin && ":$PATH:" != *":/usr/local/cuda/bin:"* ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
# Debian packages unpacked into .deps/ (scripts/fetch-gpu-deps.sh) for machines without
# a package registry, such as the GPU machine.
if [[ -d "$root/.deps/usr" ]]; then
  export CMAKE_PREFIX_PATH="$root/.deps/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export LD_LIBRARY_PATH="$root/.deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
# The configure preset: GPU parts wherever nvcc is found.
if command -v nvcc >/dev/null 2>&1; then
  preset=release
else
  preset=cpu-only
fi
has_gpu() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU; }
jobs=$(nproc 2>/dev/null || echo 2)
# Every file the build reads lies below these paths (gpu-prebuild.sh hashes them, and
# gpu-check.sh checks a prebuilt pack against them).
build_inputs=(CMakeLists.txt CMakePresets.json cmake include src tests bench examples)
