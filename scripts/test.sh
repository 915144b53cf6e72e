#!/usr/bin/env bash
# Runs every test: fetches the pinned test assets (real tokenizers), runs the
# workspace's tests and doctests (the crate READMEs among them), scores the
# shared vLLM corpus with its own check.py, builds the portable wheel and runs
# the Python tests against it, checks the public API's docs, and last runs
# the README's blocks as a newcomer would (scripts/readme-test.py).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
bash scripts/fetch-assets.sh
# The Python SDKs (openai, anthropic) that some tests drive, made once up front.
bash scripts/py-env.sh >/dev/null
cargo test --workspace --all-targets
# Doctests (`--all-targets` leaves them out): the API examples and each crate's README.
cargo test --workspace --doc
# The llguidance export is an opt-in feature (heavy to build); its tests run here.
cargo test -p llmsift-grammar --features llguidance
# No import cycle between the source files of a crate (names each cycle, exits 1).
for c in llmsift-core llmsift-protocol llmsift-grammar; do python3 scripts/import-cycles.py crates/$c/src; done
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
# `cargo install --path` installs `sift` (reusing the release build above).
inst=$(mktemp -d)
cargo install -q --locked --path crates/llmsift-cli --root "$inst" --target-dir target
"$inst/bin/sift" --version
rm -rf "$inst"
# The wheel (abi3, manylinux_2_28, release; kept by source hash for the README
# test below) in a fresh venv: the Python API, its tags and vLLM entry point,
# the corpus through llmsift.Parser against the sift built above.
SIFT_BIN="$repo/target/release/sift" bash scripts/python-test.sh
# The public API's docs: broken links and missing docs are errors.
RUSTDOCFLAGS="-D warnings -D missing_docs" cargo doc --no-deps -q \
  -p llmsift-core -p llmsift-templates -p llmsift-tokenizers -p llmsift-protocol \
  -p llmsift-grammar -p llmsift-conformance -p llmsift-serve -p llmsift-cli
# Last: the README as a newcomer runs it, in a copy of this checkout.
python3 scripts/readme-test.py
