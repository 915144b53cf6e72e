#!/usr/bin/env bash
# Builds the `llmsift` wheel (scripts/build-wheel.sh), installs it into a
# fresh venv (no vLLM), checks `import llmsift; print(llmsift.parsers())`, and
# runs the pytest suite (the Python API; the wheel's tags and vLLM entry point;
# the shared corpus through `llmsift.Parser` compared with `sift parse --jsonl`).
#   SIFT_PY_CACHE   where the build venv, wheels and the fresh venv live
#                   (default ~/.cache/sift/py; outside git)
#   SIFT_WHEEL_PROFILE  dev for a debug-built wheel (see build-wheel.sh)
#   SIFT_BIN        the `sift` binary whose answers are the reference
#                   (default: built here, debug, without `serve`)
# Extra arguments go to pytest.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache="${SIFT_PY_CACHE:-$HOME/.cache/sift/py}"
mkdir -p "$cache"
py=$(command -v python3)
# The portable wheel (abi3, manylinux_2_28), as scripts/build-wheel.sh makes it.
rm -rf "$cache/wheels"
wheel=$(SIFT_PY_CACHE="$cache" bash "$repo/scripts/build-wheel.sh" "$cache/wheels" | tail -1)
# A fresh venv each run: the wheel must install on its own.
rm -rf "$cache/fresh"
"$py" -m venv "$cache/fresh"
"$cache/fresh/bin/pip" install --quiet --disable-pip-version-check "$wheel" pytest >&2
(cd / && "$cache/fresh/bin/python" -c "import llmsift; print(llmsift.parsers())")
if [[ -z "${SIFT_BIN:-}" ]]; then
    (cd "$repo" && cargo build -q -p llmsift-cli --no-default-features)
    export SIFT_BIN="$repo/target/debug/sift"
fi
cd "$repo/crates/llmsift-python"
"$cache/fresh/bin/python" -m pytest -q tests "$@"
