#!/usr/bin/env bash
# Installs vLLM 0.34.0's parser layer into a venv outside git, for the
# differential oracle (scripts/oracle/README.md).
#
#   bash scripts/oracle/install.sh            # venv in ~/.cache/sift/oracle/venv
#   SIFT_ORACLE_CACHE=/work/cache/oracle bash scripts/oracle/install.sh
#
# vLLM's wheel is installed with --no-deps, with the pinned packages its
# serving path imports (requirements.txt) and a stand-in for torch
# (stubs/torch): the parsers, the detokenizer and the request models never
# compute with tensors, and the real CUDA torch is several gigabytes.
# Idempotent: an existing working venv is left as it is. A local wheel
# directory can be named with VLLM_WHEEL_DIR (used with --find-links).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${SIFT_ORACLE_CACHE:-$HOME/.cache/sift/oracle}"
VENV="$CACHE/venv"
PY="${PYTHON:-python3}"
WHEELS="${VLLM_WHEEL_DIR:-}"
[ -z "$WHEELS" ] && [ -d /work/cache/vllm-wheel ] && WHEELS=/work/cache/vllm-wheel

check() {
    "$VENV/bin/python" -W ignore -c '
import sys
import vllm, vllm.parser, vllm.v1.engine.detokenizer
from vllm.reasoning import ReasoningParserManager
from vllm.tool_parsers import ToolParserManager
assert vllm.__version__.startswith("0.34.0"), vllm.__version__
print("vllm", vllm.__version__, len(ReasoningParserManager.list_registered()), "reasoning,",
      len(ToolParserManager.list_registered()), "tool parsers")
' 2>/dev/null
}

if [ -x "$VENV/bin/python" ] && check; then
    echo "$VENV/bin/python"
    exit 0
fi

"$PY" - <<'PYV'
import sys
assert sys.version_info[:2] == (3, 11), f"python 3.11 needed (the pins are for it), got {sys.version}"
PYV
mkdir -p "$CACHE"
"$PY" -m venv "$VENV"
PIP=("$VENV/bin/pip" install -q --no-deps)
[ -n "$WHEELS" ] && PIP+=(--find-links "$WHEELS")
"${PIP[@]}" -r "$HERE/requirements.txt"
"${PIP[@]}" vllm==0.34.0
SP="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
rm -rf "$SP/torch"
cp -r "$HERE/stubs/torch" "$SP/torch"
check >&2
echo "$VENV/bin/python"
