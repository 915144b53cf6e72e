#!/usr/bin/env bash
# Runs one cargo-fuzz target for a set time: scripts/fuzz.sh TARGET SECONDS [JOBS]
# TARGET: pairs | watermark | format_file | protocol (fuzz/fuzz_targets/).
# Seeds come from ../shared/corpus (fuzz/seeds.py) into $SIFT_FUZZ_CACHE
# (default ~/.cache/llmsift-fuzz), outside git; the dictionary is every marker
# (fuzz/dict.py). A crash is written to fuzz/artifacts/TARGET/ and minimised
# with `cargo fuzz tmin`; commit it as a regression test (docs/fuzzing.md).
# Prints a panic (if any) and libFuzzer's final stats (execs, cov, corpus);
# the whole log is $SIFT_FUZZ_CACHE/TARGET.log.
set -euo pipefail
target=${1:?usage: scripts/fuzz.sh TARGET SECONDS [JOBS]}
secs=${2:?usage: scripts/fuzz.sh TARGET SECONDS [JOBS]}
jobs=${3:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${SIFT_FUZZ_CACHE:-$HOME/.cache/llmsift-fuzz}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
python3 "$root/fuzz/dict.py" >/dev/null
python3 "$root/fuzz/seeds.py" "$cache" >/dev/null
mkdir -p "$cache/corpus/$target" "$root/fuzz/artifacts/$target"
cd "$root/fuzz"
# The code under test has no `unsafe`: no sanitizer by default (twice the
# executions); SIFT_FUZZ_SANITIZER=address for a memory-checked run.
par=()
if [ "$jobs" -gt 1 ]; then par=(-jobs="$jobs" -workers="$jobs"); fi
# -rss_limit_mb: the pair tables are compiled once per process (~200 MB).
cargo +nightly fuzz run -s "${SIFT_FUZZ_SANITIZER:-none}" "$target" "$cache/corpus/$target" -- \
  -max_total_time="$secs" -dict="$root/fuzz/markers.dict" -max_len=4096 \
  -rss_limit_mb=2048 -timeout=10 "${par[@]}" -print_final_stats=1 \
  -artifact_prefix="$root/fuzz/artifacts/$target/" >"$cache/$target.log" 2>&1 || status=$?
# The panic message (if any), then libFuzzer's final stats and coverage.
grep -m1 -A2 'panicked at' "$cache/$target.log" || true
grep -E '^(#[0-9]+ +DONE|stat::)' "$cache/$target.log" || tail -n 30 "$cache/$target.log"
exit "${status:-0}"
