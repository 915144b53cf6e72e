#!/usr/bin/env bash
# Sift side by side with the published Rust peers (issue 12, point 1;
# docs/benchmarks.md, "Side by side with the peers").
#   scripts/peers-bench.sh            build every peer, run every cell, print the table
#   PEERS="sift sglang" SCALES="1" scripts/peers-bench.sh     a subset
#   scripts/peers-bench.sh --table FILE.jsonl                 print the table of a past run
# Each peer is built by its own cargo invocation into its own target
# directory under $SIFT_PEERS_CACHE (default ~/.cache/llmsift-peers), outside
# git: built together, their dependencies' features would unify. Twice: the
# timed binary, and one with the counting allocator (`count-alloc`) that only
# supplies bytes held. Every (peer, workload, parser, scale) runs as its own
# process, under `nice -n -5` when allowed. Results: $SIFT_PEERS_CACHE/runs/*.jsonl.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${SIFT_PEERS_CACHE:-$HOME/.cache/llmsift-peers}
if [ "${1:-}" = "--table" ]; then
    exec python3 "$root/scripts/peers-table.py" "${2:?usage: --table FILE.jsonl}"
fi
peers=${PEERS:-"sift sglang dynamo dynamo-v2"}
scales=${SCALES:-"1 2 4"}
min_reps=${MIN_REPS:-7}
budget_ms=${BUDGET_MS:-3000}
manifest="$root/crates/llmsift-peers/Cargo.toml"
mkdir -p "$cache/bin" "$cache/runs"

for p in $peers; do
    feat=$([ "$p" = sift ] && echo "" || echo "$p")
    cargo build -q --release --manifest-path "$manifest" --target-dir "$cache/$p" --features "$feat"
    cp "$cache/$p/release/llmsift-peers" "$cache/bin/llmsift-peers-$p"
    cargo build -q --release --manifest-path "$manifest" --target-dir "$cache/$p" --features "$feat count-alloc"
    cp "$cache/$p/release/llmsift-peers" "$cache/bin/llmsift-peers-$p-mem"
done

nice_cmd=""
if nice -n -5 true 2>/dev/null; then nice_cmd="nice -n -5"; fi
out="$cache/runs/$(date -u +%Y%m%dT%H%M%SZ).jsonl"
cells() {
    for s in $scales; do
        for f in qwen3 deepseek_r1; do for w in W1 W1b W4 W3; do echo "$w $f $s"; done; done
        for f in hermes qwen3_coder; do for w in W2 W3b; do echo "$w $f $s"; done; done
    done
    # W2 and W3b also at 16x, when the scales include 4.
    case " $scales " in *" 4 "*)
        for f in hermes qwen3_coder; do for w in W2 W3b; do echo "$w $f 16"; done; done;;
    esac
}
{
    echo "{\"meta\": true, \"commit\": \"$(git -C "$root" rev-parse --short HEAD)\", \"date\": \"$(date -u +%FT%TZ)\", \"load\": \"$(cut -d' ' -f1-3 /proc/loadavg)\", \"nice\": \"$nice_cmd\"}"
    cells | while read -r w f s; do
        for p in $peers; do
            args=(--peer "$p" --workload "$w" --family "$f" --scale "$s")
            line=$($nice_cmd "$cache/bin/llmsift-peers-$p" "${args[@]}" --min-reps "$min_reps" --budget-ms "$budget_ms")
            held=$("$cache/bin/llmsift-peers-$p-mem" "${args[@]}" --min-reps 1 --budget-ms 0 |
                python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin).get("held_bytes")))')
            python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["held_bytes"]=json.loads(sys.argv[2]) if "na" not in d else None; print(json.dumps(d))' "$line" "$held"
        done
    done
    echo "{\"meta\": true, \"end_load\": \"$(cut -d' ' -f1-3 /proc/loadavg)\"}"
} | tee "$out" >&2
echo "results: $out" >&2
python3 "$root/scripts/peers-table.py" "$out"
