#!/usr/bin/env bash
# Opt-in (not part of scripts/test.sh): a live model end to end through
# `sift serve`, its decoding constraints making a model that cannot reason
# or call tools by itself write the markup. llama.cpp's server and Gemma 3
# 270M as scripts/llamacpp-e2e.sh builds and fetches them (cached in
# ${SIFT_LLAMACPP_CACHE:-target/llamacpp}); a tokenizer.json derived from
# the GGUF's vocabulary (scripts/live/gguf-tokenizer.py: transformers' GGUF
# conversion, PyPI); a Gemma 3 template showing Hermes tools
# (scripts/live/gemma3-tools.jinja). One llama-server (started with
# `--reasoning-format none` and that template) serves two models of one
# `sift serve` (`qwen3` reasoning, `hermes` tools):
#   gemma3-llamacpp  --backend llamacpp (`/completion`, token ids), the
#                    reasoning forced into the grammar (grammar_reasoning_chars)
#   gemma3-chat      --backend chat (`/v1/chat/completions`), Sift's own
#                    constraint sent as llama.cpp takes it (guided_fields =
#                    "llamacpp", the reasoning forced the same way)
# llama-server gets `--reasoning on` (`enable_thinking: true` for the
# template unless a request says otherwise): its template probe does not
# see this template's thinking switch, so without it llama.cpp renders
# every prompt with reasoning closed, unlike the template's own default
# (and Sift's rendering).
# scripts/live/drive.py drives them with the `openai` SDK through a
# recording proxy (what Sift sent, llama.cpp's own counts and timings) and
# writes the transcript to $CACHE/live-transcript.json (docs/serve.md,
# "Live model", is taken from it). Servers listen on 127.0.0.1 and are
# stopped on exit. Usage: bash scripts/llamacpp-live.sh
# (SIFT_LIVE_ONLY=gemma3-llamacpp: that model's cases only).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${SIFT_LLAMACPP_CACHE:-$REPO/target/llamacpp}"
export SIFT_LLAMACPP_CACHE="$CACHE"
read -r SERVER MODEL < <(SIFT_LLAMACPP_PREPARE_ONLY=1 bash "$REPO/scripts/llamacpp-e2e.sh" | tail -1)
TOK="$CACHE/tokenizer"
if [[ ! -s "$TOK/tokenizer.json" ]]; then
  "$CACHE/venv/bin/pip" install --quiet --disable-pip-version-check transformers==5.25.0 gguf==0.19.0 >&2
  "$CACHE/venv/bin/python" "$REPO/scripts/live/gguf-tokenizer.py" "$MODEL" "$TOK" >&2
fi
TEMPLATE="$REPO/scripts/live/gemma3-tools.jinja"
# Sift reads the template with its bos_token from a tokenizer_config.json.
"$CACHE/venv/bin/python" - "$TOK/tokenizer_config.json" "$TEMPLATE" <<'PY'
import json, sys
path, template = sys.argv[1], open(sys.argv[2]).read()
c = json.load(open(path))
c["chat_template"] = template
json.dump(c, open(path, "w"), indent=1)
PY

cd "$REPO"
cargo build -q -p llmsift-cli --bin sift
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
"$SERVER" -m "$MODEL" --host 127.0.0.1 --port 18091 -c 4096 --jinja --chat-template-file "$TEMPLATE" \
  --reasoning-format none --reasoning on >"$CACHE/llama-live.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 120); do curl -sf http://127.0.0.1:18091/health >/dev/null && break; sleep 1; done
CONFIG="$CACHE/live.toml"
cat >"$CONFIG" <<TOML
port = 18090
[limits]
read_timeout_ms = 600000
$(for m in llamacpp chat; do
  printf '[[models]]\nserved_model_name = "gemma3-%s"\nbackend = "%s"\nbackend_url = "http://127.0.0.1:18092"\n' "$m" "$m"
  printf 'tokenizer = "%s"\nchat_template = "%s"\n' "$TOK/tokenizer.json" "$TOK/tokenizer_config.json"
  printf 'reasoning_parser = "qwen3"\ntool_call_parser = "hermes"\nenable_auto_tool_choice = true\n'
  printf 'grammar_reasoning_chars = 48\n'
  [[ $m == chat ]] && printf 'guided_fields = "llamacpp"\n'
  echo
done)
TOML
target/debug/sift serve --config "$CONFIG" 2>"$CACHE/sift-live.log" &
PIDS+=($!)
for _ in $(seq 60); do curl -sf http://127.0.0.1:18090/health >/dev/null && break; sleep 1; done
PY="$(bash scripts/py-env.sh | tail -1)"
"$PY" scripts/live/drive.py --gateway http://127.0.0.1:18090 --llama http://127.0.0.1:18091 \
  --proxy-port 18092 --out "$CACHE/live-transcript.json" ${SIFT_LIVE_ONLY:+--only "$SIFT_LIVE_ONLY"}
