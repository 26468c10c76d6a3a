#!/usr/bin/env bash
# The GPU check, for a bare GPU machine (see ../shared/DESIGN.md for what it has):
#   1. configure and build (Release, sm_90) with the GPU tests and the benchmark, then the
#      examples (examples/) against tally installed from that build;
#   2. ctest -L gpu (and the cpu tests, which are quick there);
#   3. the examples' ctest: each GPU and CPU example on its data file and on generated
#      data, its output in examples.log;
#   4. every GPU test executable again under compute-sanitizer: memcheck, racecheck and
#      synccheck, with the reduced test set (TALLY_TEST_QUICK=1);
#   5. a quick benchmark (tally-bench --gpu --quick), and where the issues' targets stand
#      in it (scripts/targets.py: informational, never a failure);
# then prints a short summary last and exits non-zero if anything failed.
# Logs go to $OUT when it is set (the device tool's output folder), else build/gpu-check.
# Dependencies: run scripts/fetch-gpu-deps.sh on a development machine
# first and carry .deps/ (oneTBB and Highway are not on the GPU machine).
# GPU_CHECK_PHASES (default "tests examples sanitizers bench"; the build always runs, unless
# GPU_CHECK_PREBUILT names a bundle: see below) selects
# phases, so that the whole check can be split over two calls of the device tool when it
# would not fit in one (each call rebuilds only what changed; skipped phases are named
# in the summary, and the check passes only for the phases that ran).
# The sanitizers phase can itself be split over calls (the three tools, which run side by
# side, nearly fill a call's 600 s over every test executable): GPU_CHECK_SANITIZERS
# (default "memcheck racecheck synccheck") selects the tools, GPU_CHECK_SANITIZE_MATCH (an
# extended regular expression, default: all) the test executables by name, for example
# "segmented" in one call and "^tally_gpu_([^s]|s[^e])" in the next. What is left out is
# named in the summary, and so are the slowest runs (seconds.txt in the sanitizers'
# archive has every run's seconds), which show where to split.
# The GPU machine (one H200, 16 cores) builds everything in 480-575 s from scratch, so a
# call with the build and the tests does not fit in 600 s, and a build killed by the
# call's limit starts over in the next call. So build on a development machine instead:
# GPU_CHECK_PREBUILT=build/gpu-carry.tar.xz (made by scripts/gpu-prebuild.sh, carried
# with .deps) skips the build here and runs the carried binaries, after checking that
# the sources here hash as those they were built from (a stale bundle fails the check).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$root"
out=${OUT:-$root/build/gpu-check}
mkdir -p "$out"
summary=()
failed=0
note() { summary+=("$1"); echo "gpu-check: $1"; }
fail() { note "FAIL $1"; failed=1; }

gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
note "GPU: ${gpu:-none found} | nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p') | $(date -u +%Y-%m-%dT%H:%MZ)"

start=$SECONDS
if [[ -n ${GPU_CHECK_PREBUILT:-} ]]; then
  # 1'. binaries built elsewhere (scripts/gpu-prebuild.sh): of these very sources?
  build=${GPU_CHECK_PREBUILT%/}
  if [[ $build == *.tar.xz ]]; then  # the pack as carried: unpack it beside itself
    tar -C "$(dirname "$build")" -xJf "$build" || { fail "cannot unpack $build"; exit 1; }
    build=${build%.tar.xz}
  fi
  built_in=$(sed -n 's/^root: //p' "$build/prebuilt.txt" 2>/dev/null)
  if [[ ! -f $build/sources.sha256 ]]; then
    fail "no $build/sources.sha256: not a bundle of scripts/gpu-prebuild.sh"
  elif [[ $built_in != "$root" ]]; then
    # the build tree's test commands and RPATHs are absolute paths
    fail "prebuilt binaries in $build were built in ${built_in:-?}, not here ($root)"
  elif ! changed=$(sha256sum --quiet -c "$build/sources.sha256" 2>&1); then
    echo "$changed" | head -5
    fail "prebuilt binaries in $build are not of this tree (run scripts/gpu-prebuild.sh again)"
  else
    # every source of the build is in the list, so a file added since is a change too
    added=$(comm -13 "$build/sources.list" \
              <(find "${build_inputs[@]}" -type f \
                  -not -path '*/__pycache__/*' | LC_ALL=C sort) | head -5)
    [[ -z $added ]] || { echo "$added"; fail "files added since the prebuilt binaries in $build were built"; }
  fi
  export LD_LIBRARY_PATH="$root/$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  if ((failed == 0)); then
    missing=$(find "$build/tests" "$build/bench" "$build/examples" -type f -perm -u+x \
                \( -name 'tally*' -o -name '*_cpu' -o -name '*_gpu' \) \
                -exec ldd {} \; 2>/dev/null | grep "not found" | sort -u)
    [[ -z $missing ]] || { echo "$missing"; fail "prebuilt binaries in $build: shared libraries not found"; }
  fi
  if ((failed)); then
    printf 'gpu-check: %s\n' "${summary[@]}"
    exit 1
  fi
  note "prebuilt: $(wc -l <"$build/sources.list") source files hash as built ($(sed -n 's/^built: //p' "$build/prebuilt.txt"); $(sed -n 's/^head: //p' "$build/prebuilt.txt"))"
elif cmake --preset gpu >"$out/configure.log" 2>&1 &&
     cmake --build --preset gpu -j "$jobs" >"$out/build.log" 2>&1; then
  warnings=$(grep -c -i "warning" "$out/build.log" || true)
  note "build OK in $((SECONDS - start)) s ($warnings warning lines)"
  build=build/gpu
  # the examples, built as a user builds them: against tally installed from build/gpu
  if { cmake --install "$build" --prefix "$build/install" &&
       cmake -S examples -B "$build/examples" -G Ninja -DCMAKE_BUILD_TYPE=Release \
             -DCMAKE_PREFIX_PATH="$root/$build/install" -DTALLY_EXAMPLES_GPU=ON &&
       cmake --build "$build/examples" -j "$jobs"; } >"$out/examples-build.log" 2>&1; then
    warnings=$(grep -c -i "warning" "$out/examples-build.log" || true)
    note "examples' build OK ($warnings warning lines; $((SECONDS - start)) s so far)"
  else
    grep -E "error|FAILED" "$out/examples-build.log" | head -20
    fail "the examples' build (see examples-build.log)"
  fi
else
  tail -40 "$out/configure.log" "$out/build.log" 2>/dev/null
  fail "build (see build.log)"
  printf '%s\n' "${summary[@]/#/gpu-check: }"
  exit 1
fi
phases=${GPU_CHECK_PHASES:-tests examples sanitizers bench}
want() { [[ " $phases " == *" $1 "* ]]; }
for p in tests examples sanitizers bench; do want "$p" || note "phase '$p' skipped (GPU_CHECK_PHASES)"; done

# 2. the tests
if ! want tests; then :; elif ctest --test-dir "$build" -L 'gpu|cpu' -j 4 --output-on-failure >"$out/ctest.log" 2>&1; then :; else
  failed=1
fi
if want tests; then
  note "ctest: $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1) ($((SECONDS - start)) s so far)"
  grep -E "^\s*[0-9]+ - " "$out/ctest.log" | sed 's/^/  failed: /' | head -20
fi

# 3. the examples: one at a time (-V), so that examples.log shows each one's output whole
if want examples; then
  if [[ ! -f $build/examples/CTestTestfile.cmake ]]; then
    fail "examples: not built in $build/examples"
  else
    ctest --test-dir "$build/examples" -L 'gpu|cpu' -V >"$out/examples.log" 2>&1 || failed=1
    note "examples: $(grep -E 'tests passed|tests failed' "$out/examples.log" | tail -1) ($((SECONDS - start)) s so far)"
    grep -E "^\s*[0-9]+ - " "$out/examples.log" | sed 's/^/  failed: /' | head -20
  fi
fi

# 4. compute-sanitizer over each GPU test executable
mapfile -t all_gpu_tests < <(ctest --test-dir "$build" -L gpu -N -V 2>/dev/null |
                             sed -n 's/^[0-9]*: Test command: //p')
gpu_tests=()
for cmd in "${all_gpu_tests[@]}"; do
  exe=${cmd%% *}
  [[ $(basename "$exe") =~ ${GPU_CHECK_SANITIZE_MATCH:-.} ]] && gpu_tests+=("$cmd")
done
# one log per tool x executable: more files than the device tool brings back from $OUT,
# so they are written elsewhere and packed into one archive
sanitizer_dir=$(mktemp -d)
# The three tools run at the same time (each is mostly CPU-bound instrumentation, the
# machine has 16 cores): a third of the wall time of running them one after another.
sanitize() {
  local tool=$1 clean=0 cmd exe log began
  for cmd in "${gpu_tests[@]}"; do
    exe=${cmd%% *}
    log="$sanitizer_dir/$tool-$(basename "$exe").log"
    began=$SECONDS
    if TALLY_TEST_QUICK=1 compute-sanitizer --tool "$tool" --error-exitcode 99 \
         $cmd >"$log" 2>&1; then
      clean=$((clean + 1))
    else
      { echo "  $tool failed on $(basename "$exe"):"; grep -E "ERROR SUMMARY|FAILED|Error" "$log" | head -5; } \
        >>"$sanitizer_dir/$tool.failures"
    fi
    # each run's seconds (in the archive, and the slowest in the summary): for splitting
    # GPU_CHECK_SANITIZE_MATCH over calls that each stay inside the device's 600 s
    echo "$((SECONDS - began)) $tool $(basename "$exe")" >>"$sanitizer_dir/$tool.seconds"
  done
  echo "$clean" >"$sanitizer_dir/$tool.clean"
}
tools=()
for tool in ${GPU_CHECK_SANITIZERS:-memcheck racecheck synccheck}; do
  case $tool in
    memcheck | racecheck | synccheck) tools+=("$tool") ;;
    *) fail "unknown compute-sanitizer tool '$tool' in GPU_CHECK_SANITIZERS" ;;
  esac
done
if want sanitizers; then
  if ((${#gpu_tests[@]} == 0 && ${#all_gpu_tests[@]} > 0)); then
    fail "no test executable matches GPU_CHECK_SANITIZE_MATCH='${GPU_CHECK_SANITIZE_MATCH:-}'"
  elif ((${#gpu_tests[@]} < ${#all_gpu_tests[@]})); then
    note "compute-sanitizer: ${#gpu_tests[@]} of ${#all_gpu_tests[@]} test executables (GPU_CHECK_SANITIZE_MATCH)"
  fi
  for tool in memcheck racecheck synccheck; do
    [[ " ${tools[*]} " == *" $tool "* ]] || note "compute-sanitizer $tool skipped (GPU_CHECK_SANITIZERS)"
  done
  for tool in "${tools[@]}"; do sanitize "$tool" & done
  wait
  for tool in "${tools[@]}"; do
    clean=$(cat "$sanitizer_dir/$tool.clean" 2>/dev/null || echo 0)
    [[ -f "$sanitizer_dir/$tool.failures" ]] && cat "$sanitizer_dir/$tool.failures"
    ((clean == ${#gpu_tests[@]})) || failed=1
    note "compute-sanitizer $tool: $clean/${#gpu_tests[@]} test executables clean ($((SECONDS - start)) s so far)"
  done
  cat "$sanitizer_dir"/*.seconds 2>/dev/null | sort -rn >"$sanitizer_dir/seconds.txt"
  note "compute-sanitizer: slowest runs (s, tool, executable): $(head -4 "$sanitizer_dir/seconds.txt" | paste -sd, - | sed 's/,/; /g')"
fi

tar -czf "$out/sanitizer-logs.tar.gz" -C "$sanitizer_dir" . 2>/dev/null

# 5. a quick benchmark
if ! want bench; then :; elif "$build/bench/tally-bench" --gpu --quick --csv "$out/bench-quick.csv" \
     --json "$out/bench-quick.json" >"$out/bench-quick.log" 2>&1; then
  note "quick benchmark OK ($(grep -c . "$out/bench-quick.csv") CSV lines)"
  # where the issues' targets stand in it (informational: a missed target fails nothing)
  if command -v python3 >/dev/null && python3 scripts/targets.py "$out/bench-quick.csv" >"$out/targets.txt"; then
    note "targets in the quick benchmark ($out/targets.txt): $(grep '^issue [0-9]*: [0-9]* met' "$out/targets.txt" |
      sed 's/, 0 without rows//; s/ targets$//' | paste -sd ';' - | sed 's/;/; /g')"
  else
    note "targets in the quick benchmark: not computed (python3 or scripts/targets.py failed)"
  fi
else
  tail -20 "$out/bench-quick.log"
  fail "quick benchmark (see bench-quick.log)"
fi

echo
echo "==== gpu-check summary ===="
printf 'gpu-check: %s\n' "${summary[@]}"
if ((failed)); then echo "gpu-check: FAILED"; exit 1; fi
echo "gpu-check: PASSED"
