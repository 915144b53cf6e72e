"""The llmsift.vllm plugin, driven the way vLLM 0.34 drives parser classes.

Writes one answer line per case in `sift parse --jsonl`'s shape, so the
corpus's own check.py scores it (`scripts/python-vllm-test.sh` runs this and
scores). Run inside a venv where both vLLM 0.34 and the `sift` wheel import.

Modes (`--mode`):

- `unified`: the class `ParserManager.get_parser("sift_<t>", "sift_<r>")`
  returns (the plugin routes Sift pairs to `llmsift.vllm.SiftParser`). Cases
  with a tokenizer (the oracle corpus) go through the oracle's
  `scripts/oracle/serving.py` unchanged: `adjust_request`, the engine's
  incremental detokenizer one token per step with the sampling params'
  `skip_special_tokens`, `Parser.parse` + `assemble_chat_message_fields`,
  and `ChatStreamProcessor.step` per token (`parse_delta` with the delta
  text, its ids and the prompt ids, `finished` on the last). Text-only
  cases (the shared corpus, from vLLM's unit tests, which call parsers
  directly) call `parse` and `parse_delta` per case chunk, then apply
  vLLM's `parallel_tool_calls` filter, as the serving layer does.
- `split`: the registered split classes alone, as vLLM's unit tests call
  them: a reasoning-only case through `SiftReasoningParser`
  (`extract_reasoning`, then `extract_reasoning_streaming` with previous /
  current / delta text and ids, then `finish_streaming`), a tool-only case
  through `SiftToolParser` (`extract_tool_calls`, `extract_tool_calls_streaming`,
  `finish_streaming`); a pair goes through the unified class (the split
  classes of a pair are composed by vLLM's DelegatingParser only when the
  plugin's composition is bypassed).
"""

import argparse
import json
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts", "oracle"))

import llmsift  # noqa: E402
import llmsift.vllm  # noqa: E402,F401  (registers the plugin)
import serving  # noqa: E402
from tokenizers import AddedToken, Tokenizer  # noqa: E402
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest  # noqa: E402
from vllm.entrypoints.serve.utils.tool_calls_utils import maybe_filter_parallel_tool_calls  # noqa: E402
from vllm.reasoning import ReasoningParserManager  # noqa: E402
from vllm.tokenizers import get_tokenizer  # noqa: E402
from vllm.tool_parsers import ToolParserManager  # noqa: E402

ASSETS = os.path.join(ROOT, ".assets", "tokenizers")
CACHE = os.environ.get("SIFT_PY_CACHE", os.path.expanduser("~/.cache/sift/py"))
_TOK = {}


def tokenizer(field):
    """A vLLM tokenizer for a case's `tokenizer` field (a name, or a spec: base + special tokens)."""
    key = json.dumps(field, sort_keys=True, ensure_ascii=False)
    if key in _TOK:
        return _TOK[key]
    if isinstance(field, str):
        path = os.path.join(ASSETS, field)
    else:
        import hashlib

        path = os.path.join(CACHE, "tokenizers", hashlib.sha256(key.encode()).hexdigest()[:16])
        if not os.path.exists(os.path.join(path, "tokenizer.json")):
            os.makedirs(path, exist_ok=True)
            base = os.path.join(ASSETS, field["base"])
            tk = Tokenizer.from_file(os.path.join(base, "tokenizer.json"))
            tk.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in field["special_tokens"]])
            tk.save(os.path.join(path, "tokenizer.json"))
            cfg = json.load(open(os.path.join(base, "tokenizer_config.json"), encoding="utf-8"))
            cfg.pop("added_tokens_decoder", None)
            json.dump(cfg, open(os.path.join(path, "tokenizer_config.json"), "w"), ensure_ascii=False)
    _TOK[key] = get_tokenizer(path)
    return _TOK[key]


def request_of(req):
    tools = req.get("tools") or []
    if any("function" not in t for t in tools):
        # The Responses API's tools (flat functions, namespaces): vLLM's tests
        # of those build a ResponsesRequest.
        from vllm.entrypoints.openai.responses.protocol import ResponsesRequest

        body = {"model": "sift", "input": "Hi"}
        for k in ("tools", "tool_choice", "parallel_tool_calls"):
            if req.get(k) is not None:
                body[k] = json.loads(json.dumps(req[k]))
        return ResponsesRequest(**body)
    body = {"model": "sift", "messages": [{"role": "user", "content": "Hi"}]}
    for k in ("tools", "tool_choice", "parallel_tool_calls", "include_reasoning", "chat_template_kwargs",
              "reasoning_effort", "skip_special_tokens"):
        if req.get(k) is not None:
            body[k] = json.loads(json.dumps(req[k]))
    return ChatCompletionRequest(**body)


def chunks_of(case):
    text = case["model_output"]
    spec = case.get("stream") or {}
    if spec.get("chunks") is not None:
        return spec["chunks"]
    if spec.get("unit") == "bytes":
        n, out, cur = max(1, spec.get("size") or 1), [], ""
        for ch in text:
            if cur and len(cur.encode()) >= n:
                out.append(cur)
                cur = ""
            cur += ch
        return out + ([cur] if cur else [])
    return list(text)


def message(reasoning, content, calls):
    return {
        "role": "assistant",
        "reasoning": reasoning or None,
        "content": content or None,
        "tool_calls": [
            {"id": c.get("id") or "call", "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in calls
        ],
    }


def fold(deltas):
    reasoning, content, calls = "", "", {}
    for d in deltas:
        reasoning += d.get("reasoning") or ""
        content += d.get("content") or ""
        for tc in d.get("tool_calls") or []:
            c = calls.setdefault(tc["index"], {"id": None, "name": "", "arguments": ""})
            c["id"] = c["id"] or tc.get("id")
            f = tc.get("function") or {}
            c["name"] += f.get("name") or ""
            c["arguments"] += f.get("arguments") or ""
    return message(reasoning, content, [calls[i] for i in sorted(calls)])


def dump(d):
    if d is None:
        return None
    dj = d.model_dump(exclude_none=True)
    dj = {k: v for k, v in dj.items() if v not in ("", [], None)}
    return dj or None


def with_prompt(p, case):
    text = (case.get("request") or {}).get("prompt_text")
    for x in (p, getattr(p, "reasoning_parser", None), getattr(p, "tool_parser", None)):
        if text is not None and hasattr(x, "set_prompt_text"):
            x.set_prompt_text(text)
    return p


def unified_text(case, cls):
    """A text-only case: parse, then parse_delta per chunk, with vLLM's parallel filter."""
    req = request_of(case.get("request") or {})
    ctk = getattr(req, "chat_template_kwargs", None)
    init = (case.get("request") or {}).get("parser_init_kwargs") or {}
    make = lambda: with_prompt(cls(None, req.tools, chat_template_kwargs=ctk, model_config=None, **init), case)  # noqa: E731
    req = make().adjust_request(req)
    r, c, calls = make().parse(case["model_output"], req, enable_auto_tools=True)
    calls = maybe_filter_parallel_tool_calls(calls or [], req)
    if getattr(req, "include_reasoning", True) is False:
        r = None
    one = message(r, c, [{"id": x.id, "name": x.name, "arguments": x.arguments} for x in calls])
    p = make()
    chunks = chunks_of(case) or [""]
    deltas = []
    for i, ch in enumerate(chunks):
        d = p.parse_delta(ch, [], req, None, finished=i == len(chunks) - 1)
        if d is not None:
            d = maybe_filter_parallel_tool_calls(d, req)
        dj = dump(d)
        if dj:
            deltas.append(dj)
    return one, deltas


def split_text(case):
    """A one-half text-only case through its split class, as vLLM's unit tests call it."""
    req = request_of(case.get("request") or {})
    r, t = case.get("reasoning_parser"), case.get("tool_parser")
    chunks = chunks_of(case)
    deltas = []
    if t is None:
        cls = ReasoningParserManager.get_reasoning_parser(f"sift_{r}")
        ctk = getattr(req, "chat_template_kwargs", None)
        init = (case.get("request") or {}).get("parser_init_kwargs") or {}
        make = lambda: with_prompt(cls(None, chat_template_kwargs=ctk, **init), case)  # noqa: E731
        rs, c = make().extract_reasoning(case["model_output"], req)
        one = message(rs if getattr(req, "include_reasoning", True) is not False else None, c, [])
        p, prev = make(), ""
        for ch in chunks:
            d = p.extract_reasoning_streaming(prev, prev + ch, ch, [], [], [])
            prev += ch
            deltas.append(d)
        deltas.append(p.finish_streaming())
    else:
        cls = ToolParserManager.get_tool_parser(f"sift_{t}")
        make = lambda: with_prompt(cls(None, req.tools), case)  # noqa: E731
        info = make().extract_tool_calls(case["model_output"], req)
        calls = maybe_filter_parallel_tool_calls(info.tool_calls, req)
        one = message(None, info.content, [{"id": x.id, "name": x.function.name, "arguments": x.function.arguments} for x in calls])
        p, prev = make(), ""
        for ch in chunks:
            d = p.extract_tool_calls_streaming(prev, prev + ch, ch, [], [], [], req)
            prev += ch
            deltas.append(d)
        deltas.append(p.finish_streaming())
    out = []
    for d in deltas:
        if d is not None:
            d = maybe_filter_parallel_tool_calls(d, req)
            if getattr(req, "include_reasoning", True) is False:
                # The serving layer hides reasoning deltas (`parse_delta`).
                d.reasoning = None
        dj = dump(d)
        if dj:
            out.append(dj)
    return one, out


def unified_tokens(case):
    """A case with a tokenizer: the oracle's serving path, with the plugin's names."""
    tok = tokenizer(case["tokenizer"])
    r, t = case.get("reasoning_parser"), case.get("tool_parser")
    harmony = case["tokenizer"] == "gptoss"
    req = case.get("request") or {}
    ids = tok.encode(case["model_output"], add_special_tokens=False)
    pids = tok.encode(req.get("prompt_text", ""), add_special_tokens=False)
    eos_name = "<|return|>" if harmony else None
    eos = tok.convert_tokens_to_ids(eos_name) if eos_name else tok.eos_token_id
    stops = {eos} | ({tok.convert_tokens_to_ids("<|call|>")} if harmony else set())
    if ids and ids[-1] in stops:
        eos = None
    sr = f"sift_{r}" if r else None
    st = f"sift_{t}" if t else None
    _, _, one, _, _, deltas = serving.serve(sr, st, tok, harmony, req, ids, pids, eos)
    one = message(one["reasoning"], one["content"], one["tool_calls"])
    return one, deltas


def answer(case, mode):
    try:
        if case.get("tokenizer") is not None:
            one, deltas = unified_tokens(case)
        elif mode == "split" and (case.get("reasoning_parser") is None) != (case.get("tool_parser") is None):
            one, deltas = split_text(case)
        else:
            from vllm.parser import ParserManager

            r, t = case.get("reasoning_parser"), case.get("tool_parser")
            cls = ParserManager.get_parser(
                tool_parser_name=f"sift_{t}" if t else None,
                reasoning_parser_name=f"sift_{r}" if r else None,
                enable_auto_tools=True,
            )
            one, deltas = unified_text(case, cls)
        return {"id": case["id"], "message": one, "stream": {"deltas": deltas, "message": fold(deltas)}, "error": None}
    except Exception as e:  # a plugin failure is an answer that fails, never a skipped case
        if os.environ.get("SIFT_DEBUG"):
            traceback.print_exc()
        return {"id": case["id"], "message": None, "stream": None, "error": {"type": type(e).__name__, "message": str(e)[:500]}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="+")
    ap.add_argument("--mode", choices=["unified", "split"], default="unified")
    ap.add_argument("--only", help="only case ids containing this text")
    args = ap.parse_args()
    for path in args.corpus:
        for line in open(path, encoding="utf-8"):
            if not line.strip():
                continue
            case = json.loads(line)
            if args.only and args.only not in case["id"]:
                continue
            print(json.dumps(answer(case, args.mode), ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
