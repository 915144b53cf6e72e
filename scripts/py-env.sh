#!/usr/bin/env bash
# Creates the Python environment the tests drive real clients from:
#   ${SIFT_ASSETS:-<repo>/.assets}/py  (a venv outside git)
# with the official SDKs pinned (PyPI): openai, anthropic (and pydantic, which
# they bring). Idempotent: a venv whose stamp matches the pins is kept.
# Prints the venv's python path on its last line.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ASSETS="${SIFT_ASSETS:-$REPO/.assets}"
VENV="$ASSETS/py"
PINS="openai==3.51.0 anthropic==2.10.0"
mkdir -p "$ASSETS"
# Test binaries may call this at the same moment: one builds, the others wait.
exec 9>"$ASSETS/.py-env.lock"
flock 9
if [[ "$(cat "$VENV/.pins" 2>/dev/null)" != "$PINS" ]]; then
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check $PINS >&2
    echo "$PINS" > "$VENV/.pins"
fi
echo "$VENV/bin/python"
