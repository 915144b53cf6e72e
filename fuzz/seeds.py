#!/usr/bin/env python3
"""Writes each target's seed corpus from ../shared/corpus (one file per case)
into DIR/<target>/ (default $SIFT_FUZZ_CACHE or ~/.cache/llmsift-fuzz/corpus),
outside git; libFuzzer adds what it finds there too. Idempotent."""
import hashlib, json, os, pathlib, sys

root = pathlib.Path(__file__).resolve().parent.parent
cache = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else
                     os.environ.get("SIFT_FUZZ_CACHE", pathlib.Path.home() / ".cache/llmsift-fuzz") ) / "corpus"
corpus = root.parent / "shared/corpus"

def put(target, data):
    d = cache / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)

n = 0
for f in sorted(corpus.glob("*.jsonl")):
    for line in f.open():
        c = json.loads(line)
        out = c.get("model_output") or ""
        pair = f"{c.get('reasoning_parser') or '-'} {c.get('tool_parser') or '-'}"
        put("pairs", f"{pair}\n{out}".encode())
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], **(c.get("request") or {})}
        put("protocol", f"{json.dumps(body)}\n{pair}\n{out}".encode())
        args = [tc.get("arguments") for tc in (c.get("expected") or {}).get("tool_calls") or []]
        for a in args:
            if isinstance(a, dict):
                put("watermark", json.dumps(a, ensure_ascii=False).encode())
        n += 1
for f in sorted((root / "crates/llmsift-core/formats").rglob("*.toml")):
    put("format_file", f.read_bytes())
    put("format_file", f.read_bytes() + b"\n---\n<think>a</think>b<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>")
print(f"{n} corpus cases -> {cache}")
