#!/usr/bin/env bash
# Starts vLLM 0.34.0's own render/derender server (the `vllm launch render`
# target) for one parser pair and tokenizer, on this CPU-only machine, for the
# differential check of the scale-out tier (scripts/scaleout-diff.py).
#
#   bash scripts/oracle/vllm-render.sh --name qwen3+hermes --tokenizer .assets/tokenizers/qwen3 \
#        --reasoning-parser qwen3 --tool-call-parser hermes [--port 8392] [--trust-request-chat-template] \
#        [--chat-template-content-format string|openai]
#
# Prints the server's pid on its last line once /health answers (stop it with
# kill PID). Needs the oracle venv (bash scripts/oracle/install.sh) and the
# run-time patches of ../shared/vllm-render-cpu (VLLM_RENDER_CPU names
# another copy): vLLM is not edited; its torch stand-in's gaps are patched at
# start (see that folder's README). The model directory holds a Qwen3-8B
# config.json (no weights: render and derender never run the model) and the
# tokenizer given, whose tokenizer_config.json supplies the chat template.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
shim=${VLLM_RENDER_CPU:-$ROOT/../shared/vllm-render-cpu}
py=${SIFT_ORACLE_CACHE:-$HOME/.cache/sift/oracle}/venv/bin/python
cache=${VLLM_RENDER_CACHE:-$HOME/.cache/sift/vllm-render}
name="" tok="" port=8392 args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --name) name=$2; shift 2 ;;
    --tokenizer) tok=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --reasoning-parser) args+=(--reasoning-parser "$2"); shift 2 ;;
    --tool-call-parser) args+=(--tool-call-parser "$2" --enable-auto-tool-choice); shift 2 ;;
    --trust-request-chat-template) args+=(--trust-request-chat-template); shift ;;
    --chat-template-content-format) args+=(--chat-template-content-format "$2"); shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$name" ] && [ -f "$tok/tokenizer.json" ] || { echo "--name and --tokenizer DIR (with tokenizer.json) are needed" >&2; exit 2; }
[ -x "$py" ] || { echo "no oracle venv: run bash scripts/oracle/install.sh first" >&2; exit 1; }
[ -f "$shim/render_server.py" ] || { echo "no $shim/render_server.py (set VLLM_RENDER_CPU)" >&2; exit 1; }
model=$cache/models/$(printf '%s' "$name" | tr -c 'A-Za-z0-9_.+-' '_')
mkdir -p "$model" "$cache/extra" "$cache/vllm-cache"
cp "$shim"/model/*.json "$model/"
cp "$tok/tokenizer.json" "$tok/tokenizer_config.json" "$model/"
# Packages the render launcher imports that the oracle's pinned list leaves out.
[ -d "$cache/extra/jmespath" ] ||
  "$py" -m pip install -q --no-deps --target "$cache/extra" model-hosting-container-standards==0.1.16 jmespath supervisor
export VLLM_CACHE_ROOT=$cache/vllm-cache PYTHONPATH=$shim/shim:$cache/extra VLLM_TARGET_DEVICE=cpu
"$py" "$shim/seed_modelinfo.py" >/dev/null
log=$cache/$(basename "$model").log
nohup "$py" "$shim/render_server.py" --model "$model" --served-model-name "$name" "${args[@]}" \
  --port "$port" > "$log" 2>&1 &
pid=$!
# It boots in ~30 s on a quiet machine, minutes on a loaded one: VLLM_RENDER_WAIT seconds at most.
for _ in $(seq $((2 * ${VLLM_RENDER_WAIT:-90}))); do
  curl -sf "localhost:$port/health" >/dev/null && { echo "$pid"; exit 0; }
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.5
done
kill "$pid" 2>/dev/null || true
echo "vLLM's render server did not come up: $(grep -E 'Error|error' "$log" | tail -1)" >&2
exit 1
