"""Sorts generate.py's labelled cases by Sift's answers (`sift parse --jsonl`):
cases where Sift agrees with transformers go to
crates/llmsift-conformance/tests/cases/response-template.jsonl; each case
where it cannot (a known class, named in `deviation`) goes to
response-template-deviations.jsonl with Sift's answer as `expected` and
transformers' as `transformers`. A disagreement of no known class is printed
and fails the script.

    python3 scripts/rtemplate/split.py /tmp/rt-cases.jsonl --sift target/debug/sift
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "crates/llmsift-conformance/tests/cases"


def norm(v):
    return v.strip() or None if isinstance(v, str) else None


def agrees(exp, msg):
    """check.py's rules: trimmed text (empty is null), names in order, arguments as JSON values."""
    for f in ("reasoning", "content"):
        if norm(exp.get(f)) != norm(msg.get(f)):
            return False
    got = msg.get("tool_calls") or []
    exp_calls = exp.get("tool_calls") or []
    if [c["name"] for c in exp_calls] != [c["function"]["name"] for c in got]:
        return False
    for e, g in zip(exp_calls, got):
        try:
            if json.loads(g["function"]["arguments"]) != e["arguments"]:
                return False
        except ValueError:
            return False
    return True


def as_expected(msg):
    return {
        "reasoning": msg.get("reasoning"),
        "content": msg.get("content"),
        "tool_calls": [{"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
                       for c in msg.get("tool_calls") or []],
    }


def reason(case, msg):
    if case.get("implicit_content") and "expected" in case:
        exp = case["expected"]
        same_rest = agrees(dict(exp, content=msg.get("content")), msg)
        if same_rest and norm(exp.get("content")) is None and norm(msg.get("content")) is not None:
            return ("the template has no implicit field: vLLM's hf serving (and Sift) adds an implicit `content`, so "
                    "text outside every region is content; transformers drops it")
    if "transformers_error" in case:
        return ("transformers raises on the whole output (" + case["transformers_error"].split(".")[0]
                + "); Sift streams what came before and writes no call for the region it cannot read")
    if case.get("twice"):
        return ("field " + ", ".join(case["twice"]) + " written twice without `repeats`: transformers keeps the last"
                " value, Sift has streamed the first and keeps both in order")
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    ap.add_argument("--sift", default=str(REPO / "target/debug/sift"))
    a = ap.parse_args()
    cases = [json.loads(l) for l in Path(a.cases).read_text().splitlines() if l.strip()]
    out = subprocess.run([a.sift, "parse", "--jsonl", a.cases], capture_output=True, text=True, check=True).stdout
    answers = {x["id"]: x for x in map(json.loads, out.splitlines())}
    agree, dev, bad = [], [], []
    for c in cases:
        ans = answers[c["id"]]
        if ans.get("error"):
            bad.append((c["id"], f"sift error {ans['error']}"))
            continue
        msg = ans["message"]
        why = reason(c, msg)
        keep = {k: v for k, v in c.items()
                if k not in ("twice", "prompt_fields", "transformers_error", "implicit_content")}
        if why is None and agrees(c["expected"], msg):
            agree.append(keep)
        elif why is not None:
            keep["transformers"] = c.get("expected", {"error": c.get("transformers_error")})
            keep["expected"] = as_expected(msg)
            keep["deviation"] = why
            if why.startswith("field") and agrees(keep["transformers"], msg):
                keep.pop("deviation")
                keep.pop("transformers")
                keep["expected"] = c["expected"]
                agree.append(keep)
                continue
            dev.append(keep)
        else:
            bad.append((c["id"], f"expected {json.dumps(c['expected'], ensure_ascii=False)[:300]}\n   got {json.dumps(msg, ensure_ascii=False)[:300]}"))
    for i, b in bad:
        print(f"DISAGREE {i}: {b}", file=sys.stderr)
    write = lambda name, rows: (CASES / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    write("response-template.jsonl", agree)
    write("response-template-deviations.jsonl", dev)
    pairs = lambda rows, p: sum(1 for r in rows if r["reasoning_parser"] == p)
    print(f"{len(agree)} agree (hf {pairs(agree, 'hf')}, beam {pairs(agree, 'beam')}), {len(dev)} listed deviations, "
          f"{len(bad)} unexplained", file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
