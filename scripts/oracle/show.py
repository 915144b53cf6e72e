#!/usr/bin/env python3
"""Shows oracle cases side by side: the output, the request, vLLM's answer and
Sift's. For working through known-disagreements-oracle.txt class by class.

Usage: python3 scripts/oracle/show.py [--sift target/release/sift] [--class TEXT] [--limit N] [ID_REGEX ...]

`--class` picks the listed disagreements whose reason contains TEXT; ID_REGEX
picks cases by id (any case, agreeing or not).
"""
import argparse
import glob
import json
import os
import re
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CASES = os.path.join(ROOT, "crates", "llmsift-conformance", "tests", "cases")
LIST = os.path.join(ROOT, "crates", "llmsift-conformance", "tests", "known-disagreements-oracle.txt")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sift", default=os.path.join(ROOT, "target", "release", "sift"))
    ap.add_argument("--class", dest="cls")
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("ids", nargs="*")
    a = ap.parse_args()
    cases = [json.loads(l) for f in sorted(glob.glob(os.path.join(CASES, "oracle-*.jsonl")))
             for l in open(f, encoding="utf-8") if l.strip()]
    want = set()
    if a.cls:
        for line in open(LIST, encoding="utf-8"):
            if not line.startswith("#") and a.cls in line:
                want.add(line.split("\t")[0])
    picked = [c for c in cases if c["id"] in want or any(re.search(p, c["id"]) for p in a.ids)][: a.limit]
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as t:
        t.write("".join(json.dumps(c) + "\n" for c in picked))
    out = subprocess.run([a.sift, "parse", "--jsonl", t.name], capture_output=True, text=True).stdout
    answers = {x["id"]: x for x in map(json.loads, out.splitlines())}
    os.unlink(t.name)
    for c in picked:
        ans = answers.get(c["id"], {})
        msg = ans.get("message") or ans.get("error")
        if isinstance(msg, dict) and msg.get("tool_calls"):
            msg = dict(msg, tool_calls=[(x.get("function") or {}) for x in msg["tool_calls"]])
        print("=" * 100)
        print("id:      ", c["id"], " tokenizer:", c.get("tokenizer"))
        print("request: ", json.dumps({k: v for k, v in c.get("request", {}).items() if k != "tools"}, ensure_ascii=False)[:400],
              "tools:", [t.get("function", t).get("name") for t in c.get("request", {}).get("tools") or []])
        print("oracle:  ", json.dumps(c.get("oracle"), ensure_ascii=False)[:300], c.get("notes", ""))
        print("output:  ", json.dumps(c["model_output"], ensure_ascii=False))
        print("vllm:    ", json.dumps(c["expected"], ensure_ascii=False))
        print("sift:    ", json.dumps(msg, ensure_ascii=False))


if __name__ == "__main__":
    main()
