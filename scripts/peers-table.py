#!/usr/bin/env python3
"""Prints the markdown tables of a scripts/peers-bench.sh run (a JSON-lines file).

Streaming cells: ns per delta (thread CPU time, best of N), then in brackets
how many times faster Sift is (peer ns / Sift ns); one-shot cells: MB/s and
the same ratio. A wrong answer is marked "wrong" (details listed below the
table); "n/a" means the peer has no parser for that format.
"""
import json
import sys

PEERS = ["sift", "sglang", "dynamo", "dynamo-v2"]
ORDER = ["W1", "W1b", "W4", "W3", "W2", "W3b"]
FAMS = ["qwen3", "deepseek_r1", "hermes", "qwen3_coder"]


def main(path):
    rows, meta = {}, {}
    for line in open(path):
        d = json.loads(line)
        if d.get("meta"):
            meta.update(d)
            continue
        rows[(d["workload"], d["family"], d["scale"], d["peer"])] = d
    peers = [p for p in PEERS if any(k[3] == p for k in rows)]
    cells = sorted({k[:3] for k in rows}, key=lambda k: (ORDER.index(k[0]), FAMS.index(k[1]), k[2]))
    print(f"commit {meta.get('commit')}, {meta.get('date')}, load average {meta.get('load')} "
          f"at start, {meta.get('end_load')} at end{', ' + meta['nice'] if meta.get('nice') else ''}\n")
    print("| workload | parser | scale | " + " | ".join(peers) + " |")
    print("| --- | --- | --- | " + " | ".join("---" for _ in peers) + " |")
    wrongs = []
    for c in cells:
        sift = rows.get(c + ("sift",))
        out = []
        for p in peers:
            d = rows.get(c + (p,))
            if d is None:
                out.append("")
            elif "na" in d:
                out.append("n/a")
            else:
                if "ns_per_delta" in d:
                    v = f"{d['ns_per_delta']:,.1f} ns"
                    if p != "sift" and sift and "ns_per_delta" in sift:
                        v += f" ({d['ns_per_delta'] / sift['ns_per_delta']:.1f}×)"
                else:
                    v = f"{d['mb_s']:,.0f} MB/s"
                    if p != "sift" and sift and "mb_s" in sift:
                        v += f" ({sift['mb_s'] / d['mb_s']:.1f}×)"
                if not d["right"]:
                    v += " wrong"
                    wrongs.append((c, p, d["wrong"]))
                out.append(v)
        print(f"| {c[0]} | {c[1]} | {c[2]}× | " + " | ".join(out) + " |")
    print("\nWrong answers (first difference from Sift's one-shot answer):\n")
    seen = set()
    for c, p, why in wrongs:
        key = (c[0], c[1], p)
        if key in seen:
            continue
        seen.add(key)
        at = sorted(x[0][2] for x in wrongs if (x[0][0], x[0][1], x[1]) == key)
        print(f"- {p} {c[0]} {c[1]} (scales {', '.join(map(str, at))}): {why}")
    print("\nPer stream: bytes held (heap + inline state; after all deltas of W1/W1b/W4, after half of W2) "
          "and CPU time to open a parser for a request, scale 1:\n")
    print("| workload | parser | " + " | ".join(f"{p} held | {p} open" for p in peers) + " |")
    print("| --- | --- | " + " | ".join("--- | ---" for _ in peers) + " |")
    for c in cells:
        if c[2] != 1 or c[0] in ("W3", "W3b"):
            continue
        out = []
        for p in peers:
            d = rows.get(c + (p,))
            if d is None or "na" in d:
                out += ["n/a", "n/a"]
            else:
                h = d.get("held_bytes")
                out += [f"{h:,} B" if h is not None else "?", f"{d['construct_ns']:,.0f} ns"]
        print(f"| {c[0]} | {c[1]} | " + " | ".join(out) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
