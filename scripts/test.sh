#!/usr/bin/env bash
# Runs every test: fetches the pinned test assets (real tokenizers), runs the
# workspace's tests, then scores the shared vLLM corpus with its own check.py.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
bash scripts/fetch-assets.sh
cargo test --workspace --all-targets
corpus="$repo/../shared/corpus"
if [ -f "$corpus/vllm-tests.jsonl" ]; then
  cargo build --release -q -p sift-cli
  python3 "$corpus/check.py" "$corpus/vllm-tests.jsonl" --sift target/release/sift --show 0
else
  echo "test.sh: $corpus not found; the corpus score was not computed" >&2
  exit 1
fi
