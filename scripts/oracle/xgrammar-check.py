#!/usr/bin/env python3
"""Labels the gateway's vLLM constraints with xgrammar's verdict.

    SIFT_BLESS_XGRAMMAR=1 cargo test -p llmsift-grammar --features llguidance --test round_trip
    ~/.cache/sift/oracle/venv/bin/python scripts/oracle/xgrammar-check.py

Each case of `crates/llmsift-grammar/tests/data/xgrammar-*.jsonl` holds a
`structured_outputs` object exactly as `sift serve` sends it to a vLLM
backend (a JSON schema, `json_object`, or an xgrammar structural tag, with
or without the reasoning end marker in front) and a sample model output the
constraint must admit. With the oracle's vLLM 0.34 (scripts/oracle/install.sh)
and its xgrammar 0.2.8, each case is

1. checked by vLLM's own request validation
   (`validate_xgrammar_grammar` on a `SamplingParams` built from the object);
2. compiled as vLLM's xgrammar backend compiles it (`compile_json_schema`
   for `json` / `json_object`, `compile_structural_tag` otherwise), with the
   Qwen3 tokenizer of the project's assets (`from_huggingface`, full vocabulary);
3. matched: a `GrammarMatcher` must accept the sample's text and then be
   able to end (accept the end-of-sequence token).

The label (`"xgrammar": "accepts"`, or the first failure) is written into
the file; the round-trip tests (CI) require `accepts` on every case and the
cases to equal what the code emits now.
"""
import glob
import json
import os
import sys
import warnings

warnings.filterwarnings("ignore")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import xgrammar as xgr  # noqa: E402
from transformers import PreTrainedTokenizerFast  # noqa: E402
from vllm.sampling_params import SamplingParams, StructuredOutputsParams  # noqa: E402
from vllm.v1.structured_output.backend_xgrammar import validate_xgrammar_grammar  # noqa: E402


def tokenizer():
    d = os.path.join(ROOT, ".assets", "tokenizers", "qwen3")
    tok = PreTrainedTokenizerFast(tokenizer_file=os.path.join(d, "tokenizer.json"))
    cfg = json.load(open(os.path.join(d, "tokenizer_config.json")))
    tok.eos_token = cfg.get("eos_token") or "<|im_end|>"
    return tok


def label(compiler, eos, case):
    so = case["structured_outputs"]
    try:
        validate_xgrammar_grammar(SamplingParams(structured_outputs=StructuredOutputsParams(**so)))
    except Exception as e:  # vLLM's 400
        return f"vLLM refuses: {e}"
    try:
        if "json" in so:
            s = so["json"] if isinstance(so["json"], str) else json.dumps(so["json"])
            ctx = compiler.compile_json_schema(s, any_whitespace=True)
        elif so.get("json_object"):
            ctx = compiler.compile_json_schema('{"type": "object"}', any_whitespace=True)
        else:
            ctx = compiler.compile_structural_tag(so["structural_tag"])
    except Exception as e:
        return f"does not compile: {e}"
    m = xgr.GrammarMatcher(ctx)
    if not m.accept_string(case["text"]):
        return "rejects the sample"
    if not (m.is_terminated() or m.accept_token(eos)):
        return "cannot end after the sample"
    return "accepts"


def main():
    tok = tokenizer()
    info = xgr.TokenizerInfo.from_huggingface(tok, vocab_size=len(tok))
    compiler = xgr.GrammarCompiler(info)
    eos = tok.convert_tokens_to_ids(tok.eos_token)
    bad = 0
    for path in sorted(glob.glob(os.path.join(ROOT, "crates/llmsift-grammar/tests/data/xgrammar-*.jsonl"))):
        cases = [json.loads(l) for l in open(path) if l.strip()]
        for c in cases:
            c.pop("xgrammar", None)
            c["xgrammar"] = label(compiler, eos, c)
            if c["xgrammar"] != "accepts":
                bad += 1
                print(f"{os.path.basename(path)}: {c['what']} after={c['after']}: {c['xgrammar']}")
        with open(path, "w") as f:
            for c in cases:
                f.write(json.dumps(c, ensure_ascii=False, separators=(",", ":")) + "\n")
        print(f"{os.path.basename(path)}: {len(cases)} cases")
    print(f"xgrammar {getattr(xgr, '__version__', '?')}: {bad} not accepted")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
