#!/bin/bash
# Instructions per delta for W1 and W2 (and per byte for W3), counted by
# callgrind: a deterministic figure, unlike wall time on a shared 2-core VM.
# The setup (format compile, input generation) is cancelled out by running
# 1 and 11 iterations and dividing the difference by 10 x the delta count.
#
# Usage: crates/llmsift-bench/scripts/instr_per_delta.sh [BIN]
#   BIN defaults to target/release/examples/profile (built here if absent).
set -euo pipefail
cd "$(dirname "$0")/../../.."
BIN=${1:-target/release/examples/profile}
if [ "$#" -eq 0 ]; then
  cargo build -q --profile bench -p llmsift-bench --example profile
fi
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
ir() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BIN" "$@" 2>&1 |
    sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}
for w in w1 w2_hermes w2_qwen3_coder w3; do
  for s in 1 2 4; do
    line=$("$BIN" "$w" "$s" 1)
    a=$(ir "$w" "$s" 1)
    b=$(ir "$w" "$s" 11)
    if [ "$w" = w3 ]; then
      n=$(echo "$line" | sed -E 's/.*\(([0-9]+) bytes\).*/\1/')
      echo "$w x$s: $(python3 -c "print(f'{($b - $a) / (10 * $n):.2f}')") instr/byte"
    else
      n=$(echo "$line" | sed -E "s/.*: ([0-9]+) deltas.*/\1/")
      echo "$w x$s: $(( (b - a) / (10 * n) )) instr/delta"
    fi
  done
done
