#!/usr/bin/env bash
# Installs transformers (the response-template reference: `parse_response`)
# into a venv outside git, for the differential cases of
# scripts/rtemplate/generate.py. No torch: the parser never needs it.
#
#   PY=$(bash scripts/rtemplate/install.sh | tail -1)
#   SIFT_RTEMPLATE_CACHE=/work/cache/rtemplate bash scripts/rtemplate/install.sh
#
# Idempotent: a venv that already imports the pinned transformers is kept.
set -euo pipefail
CACHE="${SIFT_RTEMPLATE_CACHE:-$HOME/.cache/sift/rtemplate}"
VENV="$CACHE/venv"
PIN="transformers==5.25.0"
check() {
    "$VENV/bin/python" -c '
import transformers
from transformers.utils.chat_parsing import parse_response
assert transformers.__version__ == "5.25.0", transformers.__version__
' 2>/dev/null
}
if [ -x "$VENV/bin/python" ] && check; then
    echo "$VENV/bin/python"
    exit 0
fi
mkdir -p "$CACHE"
"${PYTHON:-python3}" -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check "$PIN"
check
echo "$VENV/bin/python"
