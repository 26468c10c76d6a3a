#!/usr/bin/env bash
# Builds tally-bench and runs the benchmark: on the GPU when this machine has one,
# otherwise on the CPU. Extra arguments go to tally-bench (e.g. --quick).
# Writes results/bench.csv, results/bench.json and the plot results/bench.png.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$root"
scripts/install-deps.sh bench
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$jobs" --target tally-bench
mkdir -p results
"build/$preset/bench/tally-bench" --csv results/bench.csv --json results/bench.json "$@"
python=python3
if ! python3 -c 'import matplotlib' 2>/dev/null && [[ -x /usr/bin/python3 ]]; then
  python=/usr/bin/python3  # Debian's python3-matplotlib belongs to the system python
fi
"$python" scripts/plot_bench.py results/bench.csv results/bench.png
echo "bench: results/bench.csv results/bench.json results/bench.png"
