#!/usr/bin/env python3
"""Generates model outputs per family and records vLLM 0.34.0's serving-path
answers as corpus cases (crates/llmsift-conformance/tests/cases/oracle-*.jsonl).

Run inside the oracle venv (scripts/oracle/install.sh):

    $PY scripts/oracle/record.py [--only NAME] [--out DIR]

Deterministic: every random choice is seeded by the case id, tokenizers are
built from pinned assets, and output lines are sorted by id.
"""

import argparse
import collections
import glob
import hashlib
import json
import logging
import os
import random
import sys
import tomllib
import traceback
import warnings

warnings.filterwarnings("ignore")
os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
logging.disable(logging.CRITICAL)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import families as fam  # noqa: E402
import scenarios as sc  # noqa: E402
import serving  # noqa: E402
from tokenizers import AddedToken, Tokenizer  # noqa: E402
from vllm.reasoning import ReasoningParserManager  # noqa: E402
from vllm.tokenizers import get_tokenizer  # noqa: E402
from vllm.tool_parsers import ToolParserManager  # noqa: E402

ASSETS = os.path.join(ROOT, ".assets", "tokenizers")
CACHE = os.environ.get("SIFT_ORACLE_CACHE", os.path.expanduser("~/.cache/sift/oracle"))
FORMATS = os.path.join(ROOT, "crates", "llmsift-core", "formats")
BASE = "qwen3"
_TOK = {}


def group(r, t):
    """The case file a pair's cases go to (split by family so files stay reviewable)."""
    name = t or r
    for g, names in [
        ("qwen", {"hermes", "qwen3_coder", "qwen3_xml", "qwen3_json", "qwen3", "mimo", "zaya", "zaya_xml", "ripple",
                  "step3p5", "step5", "step3", "seed_oss", "granite_toolcall_parser", "dots", "longcat", "nemotron_v3",
                  "minicpmv", "minicpm5", "holo2", "olmo3", "identity", "hf"}),
        ("deepseek", {"deepseek_r1", "deepseek_v3", "deepseek_v31", "deepseek_v32", "deepseek_v4", "deepseek_v41"}),
        ("harmony", {"openai", "openai_gptoss", "beam", "muse", "muse_glimmer", "musespark", "inkling"}),
        ("llama", {"llama3_json", "llama4_json", "pythonic", "llama4_pythonic", "olmo3", "lfm2", "phi4_mini_json",
                   "xlam", "granite", "granite4", "granite-20b-fc", "gigachat3", "apertus", "internlm", "jamba",
                   "hunyuan_a13b", "mistral"}),
        ("kimi-glm", {"kimi_k2", "kimi_k3", "k2_horizon", "glm45", "glm47", "ling3", "poolside_v1", "hy_v3", "hy_v4",
                      "minimax_m2", "minimax_m2_append_think", "minimax_m3", "ernie45", "plamo3"}),
    ]:
        if name in names:
            return g
    return "other"


def tokenizer_for(r, t):
    """(case tokenizer field, vLLM tokenizer, harmony?) for a pair."""
    for name, (rs, ts) in fam.REAL.items():
        if (r is None or r in rs) and (t is None or t in ts):
            return name, _load(name, os.path.join(ASSETS, name)), name == "gptoss"
    base_vocab = _base_tokenizer()
    specials = []
    wanted = (fam.REASONING.get(r, {}).get("specials", []) if r else []) + (fam.TOOLS[t]["specials"] if t else [])
    wanted += format_tokens("reasoning", r) + format_tokens("tools", t)
    for s in wanted:
        s = fam.TOKEN_SPELLING.get(s.strip(), s.strip())
        # A marker the base vocabulary already has keeps its id and its special flag.
        if s and s not in specials and base_vocab.token_to_id(s) is None:
            specials.append(s)
    # Markers that are single non-special tokens of the real vocabulary
    # (never skipped); added before the special ones, so ids follow that order.
    plain = []
    for s in (fam.PLAIN_TOKENS.get(r, []) if r else []) + (fam.PLAIN_TOKENS.get(t, []) if t else []):
        if s not in plain and s not in specials and base_vocab.token_to_id(s) is None:
            plain.append(s)
    spec = {"base": BASE, "special_tokens": specials}
    if plain:
        spec["added_tokens"] = plain
    key = json.dumps(spec, sort_keys=True, ensure_ascii=False)
    if key not in _TOK:
        d = os.path.join(CACHE, "tokenizers", hashlib.sha256(key.encode()).hexdigest()[:16])
        if not os.path.exists(os.path.join(d, "tokenizer.json")):
            os.makedirs(d, exist_ok=True)
            tk = Tokenizer.from_file(os.path.join(ASSETS, BASE, "tokenizer.json"))
            tk.add_tokens([AddedToken(s, special=False, normalized=False) for s in plain])
            tk.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
            tk.save(os.path.join(d, "tokenizer.json"))
            cfg = json.load(open(os.path.join(ASSETS, BASE, "tokenizer_config.json"), encoding="utf-8"))
            cfg.pop("added_tokens_decoder", None)
            json.dump(cfg, open(os.path.join(d, "tokenizer_config.json"), "w"), ensure_ascii=False)
        _TOK[key] = _load(key, d)
    return spec, _TOK[key], False


def _base_tokenizer():
    if "__base__" not in _TOK:
        _TOK["__base__"] = Tokenizer.from_file(os.path.join(ASSETS, BASE, "tokenizer.json"))
    return _TOK["__base__"]


def format_tokens(kind, name):
    """The markers Sift's format file for `name` marks as special tokens of the model (`token = true`)."""
    if not name:
        return []
    for path in sorted(glob.glob(os.path.join(FORMATS, kind, "*.toml"))):
        with open(path, "rb") as f:
            d = tomllib.load(f)
        if d.get("name") == name or name in d.get("aliases", []):
            return [s for v in (d.get("terminals") or {}).values()
                    if isinstance(v, dict) and v.get("token") for s in v.get("spell", [])]
    return []


def _load(key, path):
    if key not in _TOK:
        _TOK[key] = get_tokenizer(path)
    return _TOK[key]


def serving_request(req):
    """The case's request as vLLM's server reads it: `skip_special_tokens`
    as sent (vLLM's default, true; the pair's `adjust_request` may turn it
    off, which the case reader decides from the pair), and a request without
    tools has `tool_choice: "none"` (the protocol's default), so the case
    says what the server did rather than what a bare parser call does."""
    req = {k: v for k, v in req.items() if v is not None}
    req.setdefault("skip_special_tokens", True)
    if not req.get("tools"):
        req.setdefault("tool_choice", "none")
    return req


def expected_of(msg):
    calls = []
    for c in msg["tool_calls"]:
        v, raw = serving.arguments_value(c["arguments"])
        calls.append({"name": c["name"], "arguments": v, **({"arguments_raw": raw} if raw is not None else {})})
    return {"reasoning": msg["reasoning"], "content": msg["content"], "tool_calls": calls}


def _norm(m):
    """A message as check.py compares it: text trimmed, empty is null, arguments as values."""
    t = lambda s: (s or "").strip() or None
    return {"reasoning": t(m["reasoning"]), "content": t(m["content"]),
            "tool_calls": [[c["name"], c.get("arguments"), c.get("arguments_raw")] for c in m["tool_calls"]]}


def same(a, b):
    return json.dumps(_norm(a), sort_keys=True) == json.dumps(_norm(b), sort_keys=True)


def forced_json(r, t, tok, harmony):
    """Whether vLLM constrains `required` output to its JSON list (a JSON-schema
    constraint from adjust_request) rather than the family's own syntax (a
    structural tag): what a constrained model then writes."""
    try:
        cls = serving.parser_cls(r, t, tok, serving.tok_key(tok), harmony)
        req = serving.make_request({"tools": sc.TOOLS, "tool_choice": "required"})
        req = serving.adjust(cls, req, tok, [])
    except Exception:  # the pair itself is refused; run_pair records why, case by case
        return True
    so = getattr(req, "structured_outputs", None)
    return so is not None and getattr(so, "json", None) is not None


def run_pair(r, t, stats, only_scenario=None):
    tok_field, tok, harmony = tokenizer_for(r, t)
    items = []
    if t:
        # A tool parser with no reasoning partner gets a second seed, so every name has 30 cases or more.
        # internlm gets a third: vLLM raises on its multi-call outputs, which are not recorded.
        seeds = (3 if t == "internlm" else 2) if r is None and t not in fam.PARTNER else 1
        for s in range(seeds):
            suffix = "" if s == 0 else f"/v{s + 1}"
            ts, _, _ = sc.tool_scenarios(r, t, random.Random(f"{r}+{t}/tools{suffix}"))
            items += [(sid + suffix, rq, text) for sid, rq, text in ts]
        items += sc.forced_scenarios(r, t, random.Random(f"{r}+{t}/forced"), forced_json(r, t, tok, harmony))
    if r:
        seeds = 1 if t else 3
        for s in range(seeds):
            suffix = "" if s == 0 else f"/v{s + 1}"
            items += [(sid + suffix, rq, text) for sid, rq, text in
                      sc.reasoning_scenarios(r, t, random.Random(f"{r}+{t}/reasoning{suffix}"))]
    cases = []
    eos_name = "<|return|>" if harmony else None
    for sid, req, text in items:
        cid = f"oracle/{r or 'none'}+{t or 'none'}/{sid}"
        if only_scenario and only_scenario not in cid:
            continue
        try:
            ids = tok.encode(text, add_special_tokens=False)
            pids = tok.encode(req.get("prompt_text", ""), add_special_tokens=False)
            eos = tok.convert_tokens_to_ids(eos_name) if eos_name else tok.eos_token_id
            stops = {eos} | ({tok.convert_tokens_to_ids("<|call|>")} if harmony else set())
            if ids and ids[-1] in stops:
                eos = None
            sst, vtext, one, chunks, streamed, deltas = serving.serve(
                r, t, tok, harmony, req, ids, pids, eos)
        except Exception as e:  # vLLM refused the pair or crashed on the output: say so, record nothing.
            stats["errors"][f"{r}+{t}"] += 1
            stats["error_examples"].setdefault(f"{r}+{t}", f"{sid}: {type(e).__name__}: {e}"[:300])
            if os.environ.get("ORACLE_DEBUG"):
                traceback.print_exc()
            continue
        req = serving_request(req)
        notes = []
        exp = expected_of(one)
        if not same(expected_of(streamed), exp):
            notes.append("vllm-stream-differs: vLLM's streamed answer " + json.dumps(expected_of(streamed), ensure_ascii=False)[:400])
        if tok.decode(ids, skip_special_tokens=False) != text:
            notes.append("tokenizer round trip changes the text")
        case = {
            "id": cid,
            "reasoning_parser": r,
            "tool_parser": t,
            "tokenizer": tok_field,
            "request": req,
            "model_output": text,
            "stream": {"unit": "tokens", "size": 1},
            "streaming": "both",
            "expected": exp,
            "source": "scripts/oracle: vLLM 0.34.0 serving path (ParserManager pair, incremental detokenizer, parse / parse_delta)",
            "oracle": {"skip_special_tokens": sst, "vllm_text_differs": vtext != text},
        }
        if notes:
            case["notes"] = "; ".join(notes)
        cases.append(case)
    return cases


def pairs():
    out = []
    tool_names = sorted(ToolParserManager.list_registered())
    reasoning_names = sorted(ReasoningParserManager.list_registered())
    for t in tool_names:
        if t not in fam.TOOLS:
            continue
        out.append((None, t))
        p = fam.PARTNER.get(t)
        if p and p in reasoning_names:
            out.append((p, t))
    for r in reasoning_names:
        if r in fam.REASONING:
            out.append((r, None))
    return out, tool_names, reasoning_names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", help="only pairs naming this parser")
    ap.add_argument("--scenario", help="only case ids containing this text")
    ap.add_argument("--out", default=os.path.join(ROOT, "crates", "llmsift-conformance", "tests", "cases"))
    ap.add_argument("--dry", action="store_true", help="print a summary, write nothing")
    args = ap.parse_args()
    stats = {"errors": collections.Counter(), "error_examples": {}}
    ps, tool_names, reasoning_names = pairs()
    files = collections.defaultdict(list)
    for r, t in ps:
        if args.only and args.only not in (r, t):
            continue
        for c in run_pair(r, t, stats, args.scenario):
            files[group(r, t)].append(c)
    per_name = collections.Counter()
    differs = 0
    for cs in files.values():
        for c in cs:
            for n in {c["reasoning_parser"], c["tool_parser"]} - {None}:
                per_name[n] += 1
            differs += "vllm-stream-differs" in c.get("notes", "")
    total = sum(len(cs) for cs in files.values())
    print(f"{total} cases; vLLM's stream differs from its one-shot answer on {differs}", file=sys.stderr)
    for pair, n in sorted(stats["errors"].items()):
        print(f"  vLLM error on {pair}: {n} ({stats['error_examples'][pair]})", file=sys.stderr)
    low = [(n, per_name[n]) for n in tool_names + reasoning_names if per_name[n] < 30]
    print(f"names under 30 cases: {low}", file=sys.stderr)
    if args.dry or args.only or args.scenario:
        for cs in files.values():
            for c in cs[:3]:
                print(json.dumps(c, ensure_ascii=False))
        return
    for g, cs in sorted(files.items()):
        cs.sort(key=lambda c: c["id"])
        path = os.path.join(args.out, f"oracle-{g}.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            for c in cs:
                f.write(json.dumps(c, ensure_ascii=False) + "\n")
        print(f"wrote {len(cs)} cases to {os.path.relpath(path, ROOT)}", file=sys.stderr)
    with open(os.path.join(HERE, "figures.json"), "w", encoding="utf-8") as f:
        json.dump({"cases": total, "vllm_stream_differs": differs, "per_name": dict(sorted(per_name.items())),
                   "vllm_errors": dict(sorted(stats["errors"].items())),
                   "vllm_error_examples": dict(sorted(stats["error_examples"].items()))}, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
