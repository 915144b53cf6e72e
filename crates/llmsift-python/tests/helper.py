"""One helper for every corpus test: a case through `llmsift.Parser`, one-shot and streamed.

`answer(case)` returns the same shape `sift parse --jsonl` writes (message,
stream deltas, streamed message), built only from the Python API, so a test
compares the two answers and the stream with the one-shot message.
"""

import llmsift

# The id seed the conformance runner uses, so call ids are comparable.
ID_SEED = 0x5157


def parser_for(case):
    req = case.get("request") or {}
    return llmsift.Parser(
        case.get("reasoning_parser"),
        case.get("tool_parser"),
        tools=req.get("tools"),
        tool_choice=req.get("tool_choice"),
        chat_template_kwargs=req.get("chat_template_kwargs"),
        prompt=req.get("prompt_text"),
        include_reasoning=req.get("include_reasoning", True),
        reasoning_effort=req.get("reasoning_effort"),
        parser_init_kwargs=req.get("parser_init_kwargs"),
        vllm_text_loss=bool(req.get("vllm_text_loss", False)),
        id_seed=ID_SEED,
    )


def chunks_of(case):
    """The case's streaming cut: its chunks, N bytes at character boundaries, or one character."""
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


def message_dict(m):
    d = m.to_dict()
    d["tool_calls"] = d["tool_calls"]
    return d


def fold(deltas):
    """Folds delta dicts the way an OpenAI client does."""
    reasoning, content, calls = "", "", {}
    for d in deltas:
        reasoning += d.get("reasoning") or ""
        content += d.get("content") or ""
        for tc in d.get("tool_calls") or []:
            c = calls.setdefault(tc["index"], {"id": "", "type": "function", "function": {"name": "", "arguments": ""}})
            c["id"] += tc.get("id") or ""
            c["function"]["name"] += tc["function"].get("name") or ""
            c["function"]["arguments"] += tc["function"].get("arguments") or ""
    return {
        "role": "assistant",
        "reasoning": reasoning or None,
        "content": content or None,
        "tool_calls": [calls[i] for i in sorted(calls)],
    }


def first_call_only(d):
    """`parallel_tool_calls: false`: only call index 0 reaches the client."""
    if "tool_calls" in d:
        d["tool_calls"] = [c for c in d["tool_calls"] if c["index"] == 0]
        if not d["tool_calls"]:
            del d["tool_calls"]
    return d


def answer(case):
    parallel = (case.get("request") or {}).get("parallel_tool_calls", True) is not False
    one = parser_for(case).parse(case["model_output"]).to_dict()
    if not parallel:
        one["tool_calls"] = one["tool_calls"][:1]
    p = parser_for(case)
    deltas = []
    for c in chunks_of(case) + [None]:
        d = (p.finish() if c is None else p.push(c)).to_dict()
        if not parallel:
            first_call_only(d)
        if d:
            deltas.append(d)
    return {"message": one, "stream": {"deltas": deltas, "message": fold(deltas)}}
