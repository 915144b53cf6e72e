#!/usr/bin/env python3
"""Regenerates crates/sift-conformance/tests/known-disagreements-oracle.txt:
every oracle case where Sift's one-shot answer differs from vLLM's, with the
reason, and prints agreement per parser name and per class.

Usage: python3 scripts/oracle/known_disagreements.py [--sift target/release/sift]

Reasons come from REASONS (first matching id pattern); a case no pattern
explains gets `not yet matched (<class>)`, where the class names the kind of
behaviour (from the scenario and the field that differs), so the helpers
fixing the core can work class by class.
"""
import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CASES = os.path.join(ROOT, "crates", "sift-conformance", "tests", "cases")
OUT = os.path.join(ROOT, "crates", "sift-conformance", "tests", "known-disagreements-oracle.txt")

# Pairs whose vLLM parser is engine-based on both halves (or a unified class
# that behaves so): under `tool_choice: "none"` it parses the calls and drops them.
_NONE_DROPS = "|".join(re.escape(p) for p in [
    "cohere_command3+cohere_command3", "cohere_command4+cohere_command4", "deepseek_v4+deepseek_v4",
    "deepseek_v41+deepseek_v41", "gemma4+gemma4", "glm45+glm45", "glm47+glm47", "kimi_k2+kimi_k2",
    "kimi_k3+kimi_k3", "ling3+ling3", "mimo+mimo", "minimax_m2+minimax_m2", "mistral+mistral",
    "none+glm45", "none+glm47", "none+granite_toolcall_parser", "none+ling3", "none+mimo", "none+qwen3_coder",
    "none+qwen3_xml", "none+ripple", "none+step3p5", "none+step5", "plamo3+plamo3", "qwen3+qwen3_coder",
    "qwen3+qwen3_xml", "ripple+ripple", "seed_oss+seed_oss", "step3p5+step3p5", "zaya+zaya", "zaya+zaya_xml",
])

# (id pattern, reason): analysed disagreements.
REASONS = [
    (rf"^oracle/({_NONE_DROPS})/(no-tools|tool-choice-none)(/v\d+)?\s",
     "vLLM's engine-based parser parses the calls under tool_choice none (a request without tools is none) "
     "and drops them, their text in no field; Sift keeps the markup as content unless the request sets "
     "vllm_text_loss (docs/deviations.md)"),
    (r"^oracle/none\+(llama3_json|llama4_json)/no-tools(/v\d+)?\s",
     "vLLM's engine-based llama JSON parser parses the call of a request without tools (tool_choice none) and "
     "drops it, its text in no field (with tools declared and none it keeps the text); Sift keeps it as content "
     "(docs/deviations.md)"),
]

# Scenario id -> behaviour class (first match).
SCENARIO_CLASS = [
    (r"/truncated-at-", "truncated call"),
    (r"/(required|named)", "forced tool_choice"),
    (r"/tool-choice-none", "tool_choice none"),
    (r"/no-tools", "no tools in request"),
    (r"/parallel-false", "parallel_tool_calls false"),
    (r"/unknown-tool", "unknown tool name"),
    (r"/empty-args", "empty arguments"),
    (r"/closer-in-string", "closing marker inside an argument"),
    (r"/escapes-in-string", "escapes in a string argument"),
    (r"/call-in(side)?-(unterminated-)?reasoning", "call inside reasoning"),
    (r"/thinking-off", "thinking off"),
    (r"/hide-reasoning", "include_reasoning false"),
    (r"/(text-before-after|text-between)", "text after call"),
    (r"/text-before", "text before call"),
    (r"/(unterminated|empty-reasoning|start-again|end-only|model-writes-start|prompt-opens)", "reasoning markers"),
    (r"/nested-unicode", "nested and unicode arguments"),
    (r"/(two-calls|three-calls)", "several calls"),
]


def norm(v):
    if v is None:
        return None
    v = v.strip()
    return v or None


def diff_fields(exp, msg):
    """The fields where Sift's message differs from expected, as check.py scores them."""
    if not isinstance(msg, dict):
        return ["no message"]
    out = [f for f in ("reasoning", "content") if norm(exp.get(f)) != norm(msg.get(f))]
    ec = exp.get("tool_calls") or []
    gc = msg.get("tool_calls") or []
    if [c.get("name") for c in ec] != [(c.get("function") or {}).get("name") for c in gc]:
        out.append("tool calls")
        return out
    for e, g in zip(ec, gc):
        if e.get("arguments") is None and "arguments_raw" in e:
            continue
        raw = (g.get("function") or {}).get("arguments")
        try:
            got = json.loads(raw)
        except (TypeError, ValueError):
            got = ("raw", raw)
        if got != e.get("arguments"):
            out.append("arguments" if not same_but_types(e.get("arguments"), got) else "arguments (schema typing)")
            break
    return out


def same_but_types(a, b):
    """Whether two argument objects differ only in value types (e.g. "3" vs 3)."""
    if not isinstance(a, dict) or not isinstance(b, dict) or a.keys() != b.keys():
        return False
    return all(json.dumps(a[k]).strip('"') == json.dumps(b[k]).strip('"') or str(a[k]) == str(b[k]) for k in a)


def classify(case, fields):
    cid = case["id"]
    scen = next((c for p, c in SCENARIO_CLASS if re.search(p, cid)), "plain output")
    o = case.get("oracle") or {}
    if o.get("vllm_text_differs") and o.get("skip_special_tokens"):
        scen = "special tokens skipped"
    return f"{scen}: {', '.join(fields)}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sift", default=os.path.join(ROOT, "target", "release", "sift"))
    ap.add_argument("--markdown", action="store_true", help="print the figures as docs/oracle.md tables")
    args = ap.parse_args()
    files = sorted(glob.glob(os.path.join(CASES, "oracle-*.jsonl")))
    cases = [json.loads(l) for f in files for l in open(f, encoding="utf-8") if l.strip()]
    answers = {}
    for f in files:
        run = subprocess.run([args.sift, "parse", "--jsonl", f], capture_output=True, text=True, check=True)
        answers.update({a["id"]: a for a in map(json.loads, run.stdout.splitlines())})
    lines, per_name, per_class = [], collections.defaultdict(lambda: [0, 0]), collections.Counter()
    example, stream_differs = {}, collections.Counter()
    for c in cases:
        a = answers[c["id"]]
        fields = ["error"] if a.get("error") else diff_fields(c["expected"], a.get("message"))
        for n in {c.get("reasoning_parser"), c.get("tool_parser")} - {None}:
            per_name[n][0] += 1
            per_name[n][1] += not fields
            stream_differs[n] += "vllm-stream-differs" in c.get("notes", "")
        if not fields:
            continue
        text = c["id"] + " " + c.get("notes", "")
        why = next((r for p, r in REASONS if re.search(p, text)), None)
        if why is None:
            cls = f"pair refused: {a['error'].get('message')}" if a.get("error") else classify(c, fields)
            per_class[cls] += 1
            example.setdefault(cls, c["id"])
            why = f"not yet matched ({cls})"
        lines.append(f"{c['id']}\t{why}")
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("# Oracle cases where Sift's one-shot answer differs from vLLM 0.34.0's serving path, with the reason.\n")
        f.write("# Regenerate with scripts/oracle/known_disagreements.py; tests/oracle.rs checks this list exactly.\n")
        f.write("\n".join(lines) + "\n")
    total = len(cases)
    print(f"{len(lines)} disagreements of {total} cases ({100 * (total - len(lines)) / total:.1f}% agree)", file=sys.stderr)
    for n, (k, ok) in sorted(per_name.items()):
        print(f"  {n}: {ok}/{k} ({100 * ok / k:.0f}%)", file=sys.stderr)
    if args.markdown:
        differs = sum(1 for c in cases if "vllm-stream-differs" in c.get("notes", ""))
        print(f"{total} cases; Sift agrees with vLLM's one-shot answer on {total - len(lines)} "
              f"({100 * (total - len(lines)) / total:.1f}%); vLLM's own stream differs from its one-shot answer on {differs}.\n")
        print("| parser name | cases | agree | vLLM stream differs |\n| --- | --- | --- | --- |")
        for n, (k, ok) in sorted(per_name.items()):
            print(f"| {n} | {k} | {ok} ({100 * ok / k:.0f}%) | {stream_differs[n]} |")
        groups, fields_of = collections.Counter(), collections.defaultdict(collections.Counter)
        for cls, k in per_class.items():
            g, _, f = cls.partition(": ")
            groups[g] += k
            fields_of[g][f] += k
        print("\n| class | cases | fields that differ (cases) | example |\n| --- | --- | --- | --- |")
        for g, k in groups.most_common():
            fs = "; ".join(f"{f} ({n})" for f, n in fields_of[g].most_common(3))
            ex = next(example[c] for c in per_class if c.partition(": ")[0] == g)
            print(f"| {g} | {k} | {fs} | `{ex}` |")
    print("classes:", file=sys.stderr)
    for cls, k in per_class.most_common():
        print(f"  {k:5d}  {cls}", file=sys.stderr)


if __name__ == "__main__":
    main()
