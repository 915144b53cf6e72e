#!/usr/bin/env bash
# Instructions and allocations per relayed chunk, deterministic (the machine
# is shared, so times vary; these do not): the load example
# (crates/llmsift-serve/examples/load.rs) with the gateway under valgrind's
# callgrind, its counters zeroed before the gateway phase and dumped after,
# so the profile holds that phase alone.
#
#   bash scripts/load-callgrind.sh SIFT SIFT_REPLAY LOAD_EXAMPLE [STREAMS [INTERVAL]]
#
# Prints the phase's instructions (Ir) and malloc/calloc/realloc calls, per
# client chunk and per token (the example's own report follows). Needs
# valgrind. Bounded: STREAMS (16) streams of 40 tokens at 20 tokens/s.
set -euo pipefail
sift=$1 replay=$2 load=$3 n=${4:-16} interval=${5:-1}
out=$(mktemp -d)
cat > "$out/sift" <<EOF
#!/bin/sh
exec valgrind --tool=callgrind --log-file=$out/valgrind.log --callgrind-out-file=$out/cg.out "$sift" "\$@"
EOF
chmod +x "$out/sift"
SIFT_LOAD_BEFORE_VIA='callgrind_control -z $1 >/dev/null' \
SIFT_LOAD_AFTER_VIA='callgrind_control -d $1 >/dev/null' \
  "$load" "$out/sift" "$replay" "$n" 50 1000 1 "$interval" > "$out/report.txt"
dump=$(ls "$out"/cg.out.* | head -1)
python3 - "$dump" "$out/report.txt" <<'PY'
import re, sys
dump, report = sys.argv[1], open(sys.argv[2]).read()
names, total, allocs, cfn = {}, 0, 0, None
for line in open(dump):
    if line.startswith("summary:") or line.startswith("totals:"):
        total = max(total, int(line.split()[1]))
    m = re.match(r"(c?)fn=\((\d+)\)(?: (.*))?", line)
    if m:
        if m.group(3):
            names[m.group(2)] = m.group(3).strip()
        cfn = names.get(m.group(2), "") if m.group(1) else None
        continue
    if line.startswith("calls=") and cfn is not None:
        if cfn in ("malloc", "calloc", "realloc") or cfn.startswith(("malloc'", "calloc'", "realloc'")):
            allocs += int(line.split("=")[1].split()[0])
        cfn = None
chunks = int(re.search(r"backend -> sift serve -> client: .* (\d+) chunks", report).group(1))
streams = int(re.search(r"streams: (\d+)", report).group(1))
tokens = int(re.search(r"tokens per stream: (\d+)", report).group(1)) * streams
print(f"gateway phase: {total:,} instructions, {allocs:,} allocations; {chunks} client chunks, {tokens} tokens")
print(f"per client chunk: {total / chunks:,.0f} instructions, {allocs / chunks:.1f} allocations")
print(f"per token: {total / tokens:,.0f} instructions, {allocs / tokens:.1f} allocations")
PY
cat "$out/report.txt"
rm -rf "$out"
