#!/usr/bin/env bash
# Builds the GPU check's binaries on a development machine (no device time), for
# scripts/gpu-check.sh to run on the GPU machine without building there: the tests, the
# benchmark, and the examples (examples/, built against tally installed from this build).
#
#   scripts/gpu-prebuild.sh            # -> build/gpu-carry, packed as build/gpu-carry.tar.xz
#   then on the GPU machine, carrying .deps and build/gpu-carry.tar.xz:
#   GPU_CHECK_PREBUILT=build/gpu-carry.tar.xz scripts/gpu-check.sh
#
# Why: the full build takes 480-575 s on the GPU machine (one H200), nearly all of a
# device call's 600 s, and a ninja killed by the call's time limit starts over in the next
# call, so the device time goes to building instead of testing. Here the build costs local
# time only (from scratch about as long as scripts/test.sh's build: docs/performance.md,
# "Build time"; then incremental), and the device's calls run tests, sanitizers and the
# benchmark alone.
#
# The binaries are usable there because both machines see the repository at the same
# path (/work/main: the test commands and RPATHs in the build tree are absolute), the
# CUDA toolkit is the same (nvcc 13.0; sm_90 machine code), and the host libraries that may
# differ travel: oneTBB and Highway in .deps (scripts/fetch-gpu-deps.sh), fmt and the CUDA
# runtime copied into the bundle's lib/ below; GoogleTest is linked statically.
#
# What the binaries were built from is recorded: sources.sha256 holds a hash of every file
# the build reads (CMake files, include/, src/, tests/, bench/, examples/), and
# gpu-check.sh refuses the bundle unless the same files on the GPU machine hash the same,
# so a check always runs binaries of the code it reports on.
#
# The pack leaves out object files and CMake's own folders: the executables, the ctest
# files and the stamps are what the check needs, and packed (xz) they stay well under the
# device tool's 64 MiB for what travels. build/gpu-carry itself stays whole, so the next
# prebuild is incremental.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$root"
dir=build/gpu-carry
command -v nvcc >/dev/null 2>&1 || { echo "gpu-prebuild: nvcc not found" >&2; exit 1; }
scripts/install-deps.sh test
[[ -d .deps/usr ]] || scripts/fetch-gpu-deps.sh

start=$SECONDS
# The sources the binaries come from: exactly the files that travel to the GPU machine
# (tracked, or untracked and not ignored) below the paths the build reads. Hashed before
# the build and checked after it, so an edit made meanwhile cannot slip into the stamp.
mkdir -p "$dir"
git ls-files -co --exclude-standard -- "${build_inputs[@]}" |
  LC_ALL=C sort >"$dir/sources.list"
xargs -d '\n' sha256sum <"$dir/sources.list" >"$dir/sources.sha256"

# sm_90 machine code alone (90-real): the gpu preset's build also embeds PTX for later
# GPUs, which an sm_90 GPU does not run and which packs poorly (the xz pack is about 69 MB
# with it, 27 MB without). The SASS comes from the same PTX through the same ptxas; it is
# not compared byte for byte (cuobjdump is not on the development machine).
cmake --preset gpu -B "$dir" -DCMAKE_CUDA_ARCHITECTURES=90-real >"$dir.log" 2>&1 ||
  { tail -30 "$dir.log"; exit 1; }
if ! cmake --build "$dir" -j "$jobs" >>"$dir.log" 2>&1; then
  grep -E "error|FAILED" "$dir.log" | head -30
  echo "gpu-prebuild: build failed (see $dir.log)" >&2
  exit 1
fi
# The examples (examples/, CPU and GPU programs) into $dir/examples, built as a user
# builds them: against tally installed from this build tree into $dir/install, which the
# pack leaves out (the built examples do not read it).
if ! { cmake --install "$dir" --prefix "$dir/install" &&
       cmake -S examples -B "$dir/examples" -G Ninja -DCMAKE_BUILD_TYPE=Release \
             -DCMAKE_PREFIX_PATH="$root/$dir/install" -DCMAKE_CUDA_ARCHITECTURES=90-real \
             -DTALLY_EXAMPLES_GPU=ON &&
       cmake --build "$dir/examples" -j "$jobs"; } >>"$dir.log" 2>&1; then
  grep -E "error|FAILED" "$dir.log" | head -30
  echo "gpu-prebuild: the examples' build failed (see $dir.log)" >&2
  exit 1
fi
sha256sum --quiet -c "$dir/sources.sha256" ||
  { echo "gpu-prebuild: sources changed during the build; run it again" >&2; exit 1; }
warnings=$(grep -c -i "warning" "$dir.log" || true)
rebuilt=$(grep -c '^\[[0-9]*/[0-9]*\]' "$dir.log" || true)
{
  echo "built: $(date -u +%Y-%m-%dT%H:%MZ) on $(hostname) in $((SECONDS - start)) s, $rebuilt build steps, $warnings warning lines"
  echo "head: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- "${build_inputs[@]}" || echo ' + uncommitted changes')"
  echo "root: $root"
  echo "nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), $(g++ --version | head -1)"
} >"$dir/prebuilt.txt"

# Shared libraries the GPU machine may have in another version or place: fmt (Debian's
# libfmt9) and the CUDA runtime linked here. They travel in lib/, which gpu-check.sh puts
# first on LD_LIBRARY_PATH.
mkdir -p "$dir/lib"
for lib in $(ldd "$dir/bench/tally-bench" | awk '/libfmt|libcudart/ {print $3}'); do
  cp -L "$lib" "$dir/lib/"
done

# The pack: everything but objects, CMake's working folders and the examples' install
# prefix. POSIX (pax) headers keep the files' times to the nanosecond, so a pack unpacked
# over this folder (as gpu-check.sh does when run on this machine) does not make ninja
# rebuild it.
tar -C build --format=posix --exclude='*.o' --exclude=CMakeFiles \
    --exclude="$(basename "$dir")/install" -cJf "$dir.tar.xz" "$(basename "$dir")"
cat "$dir/prebuilt.txt"
echo "gpu-prebuild: $dir.tar.xz, $(du -sh "$dir.tar.xz" | cut -f1); carry it and .deps to the GPU"
echo "machine and run there: GPU_CHECK_PREBUILT=$dir.tar.xz scripts/gpu-check.sh"
