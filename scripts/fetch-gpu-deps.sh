#!/usr/bin/env bash
# Unpacks the Debian packages of oneTBB and Highway into .deps/ (git-ignored) so that
# they can travel to the GPU machine, which has no package registry. Run it on a
# development machine; scripts/common.sh picks .deps/ up where it exists.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rm -rf "$root/.deps" && mkdir -p "$root/.deps/debs"
cd "$root/.deps/debs"
apt-get download libhwy-dev libhwy1 libtbb-dev libtbb12 libtbbmalloc2 libtbbbind-2-5
for f in *.deb; do dpkg -x "$f" "$root/.deps"; done
cd "$root" && rm -rf .deps/debs
du -sh .deps
