#!/usr/bin/env bash
# Runs every test: fetches the pinned test assets (real tokenizers), runs the
# workspace's tests, then scores the shared vLLM corpus with its own check.py.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
bash scripts/fetch-assets.sh
# The Python SDKs (openai, anthropic) that some tests drive, made once up front.
bash scripts/py-env.sh >/dev/null
cargo test --workspace --all-targets
# The llguidance export is an opt-in feature (heavy to build); its tests run here.
cargo test -p llmsift-grammar --features llguidance
corpus="$repo/../shared/corpus"
if [ -f "$corpus/vllm-tests.jsonl" ]; then
  cargo build --release -q -p llmsift-cli
  # The corpus spans every vLLM family; the score is reported, not gated here
  # (the gated checks are the cargo tests above). Its closing line is reworded
  # so that it is not mistaken for this run's test count.
  python3 "$corpus/check.py" "$corpus/vllm-tests.jsonl" --sift target/release/sift --show 0 \
    | sed -E 's/^([0-9]+) passed, ([0-9]+) failed$/corpus: \1 cases agree with vLLM, \2 differ/'
else
  echo "test.sh: $corpus not found; the corpus score was not computed" >&2
  exit 1
fi
