#!/usr/bin/env bash
# Installs the Debian packages tally needs that this machine lacks.
#   scripts/install-deps.sh test    what building and testing needs
#   scripts/install-deps.sh bench   the same plus what the benchmark's plot needs
# Runs apt-get only when something is missing (so it is quick, and a machine without a
# package registry, like the GPU machine, is left alone when it has what it needs).
set -euo pipefail
what=${1:-test}

packages=(cmake g++ ninja-build python3 libgtest-dev libhwy-dev libtbb-dev libcli11-dev
          nlohmann-json3-dev libfmt-dev)
if [[ $what == bench ]]; then
  packages+=(python3-matplotlib)
fi

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install-deps: not a Debian-like system; install by hand: ${packages[*]}" >&2
  exit 0
fi
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
