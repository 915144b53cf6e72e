"""Differential cases for response templates: model outputs written in each
template's own syntax (scripts/rtemplate/templates.json), labelled by
transformers' `parse_response` (installed by install.sh, never in CI).

    PY=$(bash scripts/rtemplate/install.sh | tail -1)
    $PY scripts/rtemplate/generate.py > /tmp/rt-cases.jsonl
    python3 scripts/rtemplate/split.py /tmp/rt-cases.jsonl --sift target/debug/sift

Each line is a conformance case (`reasoning_parser`/`tool_parser` `hf` or
`beam`, the template in `parser_init_kwargs`, the prompt as `prompt_text`)
with transformers' answer mapped to a message in `expected`, or its error
in `transformers_error`. `split.py` sorts them into agreeing cases and listed
deviations. Deterministic (fixed seed)."""

import json
import random
import re
import sys
from pathlib import Path

from transformers.utils.chat_parsing import ResponseParser, parse_response

HERE = Path(__file__).resolve().parent
TEMPLATES = json.loads((HERE / "templates.json").read_text())["templates"]

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}}}}},
    {"type": "function", "function": {"name": "set_flag", "parameters": {"type": "object", "properties": {
        "on": {"type": "boolean"}, "level": {"type": "number"}, "note": {"type": ["string", "null"]}}}}},
    {"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {
        "q": {"type": "string"}, "filters": {"type": "object"}, "tags": {"type": "array"}}}}},
]

CALLS = [
    ("get_weather", {"city": "Paris", "days": 3}),
    ("set_flag", {"on": True, "level": 2.5, "note": None}),
    ("search", {"q": "naïve \"quotes\" \\ back", "filters": {"lang": "fr", "n": [1, 2]}, "tags": ["a", "b"]}),
    ("get_weather", {"city": "東京", "days": 10}),
    ("search", {"q": "multi\nline", "filters": {}, "tags": []}),
]
REASONING = ["Let me think.", "The user wants the weather.\nI should call a tool.", "  spaced out  ", "短い考え"]
CONTENT = ["Hello!", "Sure, here it is:\n\n- one\n- two", "  padded  ", "Ünïcödé ✓", "a < b > c"]


def jdump(v):
    return json.dumps(v, ensure_ascii=False)


def pyval(v):
    if isinstance(v, str):
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"
    if v is True:
        return "True"
    if v is False:
        return "False"
    if v is None:
        return "None"
    if isinstance(v, list):
        return "[" + ", ".join(pyval(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{pyval(k)}: {pyval(x)}" for k, x in v.items()) + "}"
    return json.dumps(v)


def raw(v):
    return v if isinstance(v, str) else jdump(v)


def gemma_val(v):
    if isinstance(v, str):
        return '<|"|>' + v + '<|"|>'
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}:{gemma_val(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(gemma_val(x) for x in v) + "]"
    return jdump(v)


# Per template: prompt, and writers for reasoning, content, one call, a call list, the end.
def W(prompt, think, text, call, end="", calls=None):
    return {"prompt": prompt, "think": think, "text": text, "call": call, "end": end,
            "calls": calls or (lambda cs: "".join(call(n, a) for n, a in cs))}


IM = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
WRITERS = {
    "transformers/cohere": W(
        "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>hi<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
        lambda r: f"<|START_THINKING|>{r}<|END_THINKING|>", lambda c: f"<|START_RESPONSE|>{c}<|END_RESPONSE|>",
        lambda n, a: "<|START_ACTION|>" + jdump([{"tool_call_id": "0", "tool_name": n, "parameters": a}]) + "<|END_ACTION|>",
        "<|END_OF_TURN_TOKEN|>",
        calls=lambda cs: "<|START_ACTION|>[\n" + ",\n".join(jdump({"tool_call_id": str(i), "tool_name": n, "parameters": a})
                                                            for i, (n, a) in enumerate(cs)) + "\n]<|END_ACTION|>"),
    "transformers/ernie": W(
        "User: hi\nAssistant:", lambda r: f"{r}\n</think>\n\n", lambda c: f"<response>\n{c}\n</response>",
        lambda n, a: "<tool_call>\n" + jdump({"name": n, "arguments": a}) + "\n</tool_call>\n", "</s>"),
    "transformers/gpt_oss": W(
        "<|start|>user<|message|>hi<|end|><|start|>assistant",
        lambda r: f"<|channel|>analysis<|message|>{r}<|end|><|start|>assistant",
        lambda c: f"<|channel|>final<|message|>{c}<|end|>",
        lambda n, a: f"<|channel|>commentary to=functions.{n} <|constrain|>json<|message|>{jdump(a)}<|call|>", "<|return|>"),
    "transformers/smollm": W(IM, lambda r: f"<think>{r}</think>", lambda c: c,
                             lambda n, a: "<tool_call>\n" + jdump({"name": n, "arguments": a}) + "\n</tool_call>",
                             "<|im_end|>"),
    "transformers/qwen3": W(
        IM, lambda r: f"<think>\n{r}\n</think>\n\n", lambda c: c,
        lambda n, a: f"<tool_call>\n<function={n}>\n" + "".join(f"<parameter={k}>\n{raw(v)}\n</parameter>\n"
                                                                  for k, v in a.items()) + "</function>\n</tool_call>",
        "<|im_end|>"),
    "transformers/gemma4": W(
        "<|turn>user\nhi<turn|>\n<|turn>model\n", lambda r: f"<|channel>thought\n{r}<channel|>", lambda c: c,
        lambda n, a: f"<|tool_call>call:{n}{gemma_val(a)}<tool_call|>", "<turn|>"),
    "transformers/inkling": W(
        "<|message_user|>hi<|end_message|><|message_model|>",
        lambda r: f"<|content_thinking|>{r}<|end_message|><|message_model|>",
        lambda c: f"<|content_text|>{c}<|end_message|>",
        lambda n, a: "<|message_model|><|content_invoke_tool_json|>" + jdump({"name": n, "args": a}) + "<|end_message|>"),
    "trl/qwen3": W(IM, lambda r: f"<think>\n{r}\n</think>\n\n", lambda c: c,
                   lambda n, a: "<tool_call>\n" + jdump({"name": n, "arguments": a}) + "\n</tool_call>\n", "<|im_end|>"),
    "trl/qwen3_5": W(
        IM + "<think>\n", lambda r: f"{r}\n</think>\n\n", lambda c: c,
        lambda n, a: f"<tool_call>\n<function={n}>\n" + "".join(f"<parameter={k}>\n{raw(v)}\n</parameter>\n"
                                                                  for k, v in a.items()) + "</function>\n</tool_call>\n",
        "<|im_end|>"),
    "trl/nemotron_3": W(
        IM + "<think>\n", lambda r: f"{r}\n</think>\n", lambda c: c,
        lambda n, a: f"<tool_call>\n<function={n}>\n" + "".join(f"<parameter={k}>\n{raw(v)}\n</parameter>\n"
                                                                  for k, v in a.items()) + "</function>\n</tool_call>\n",
        "<|im_end|>"),
    "trl/glm4moe": W(
        "[gMASK]<sop><|user|>\nhi<|assistant|>", lambda r: f"<think>{r}</think>", lambda c: "\n" + c,
        lambda n, a: f"<tool_call>{n}\n" + "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{raw(v)}</arg_value>\n"
                                                    for k, v in a.items()) + "</tool_call>", "<|user|>"),
    "trl/llama3": W(
        "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
        None, lambda c: c, lambda n, a: '{"name": "' + n + '", "parameters": ' + jdump(a) + "}<|eot_id|>", "<|eot_id|>"),
    "trl/gptoss": W(
        "<|start|>user<|message|>hi<|end|><|start|>assistant",
        lambda r: f"<|channel|>analysis<|message|>{r}<|end|><|start|>assistant",
        lambda c: f"<|channel|>final<|message|>{c}<|return|>",
        lambda n, a: f" to=functions.{n}<|channel|>commentary json<|message|>{jdump(a)}<|call|>"),
    "trl/lfm2_2_5": W(
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", lambda r: f"<think>{r}</think>", lambda c: c,
        lambda n, a: f"<|tool_call_start|>[{n}(" + ", ".join(f"{k}={pyval(v) if isinstance(v, str) else jdump(v)}"
                                                               for k, v in a.items()) + ")]<|tool_call_end|>",
        "<|im_end|>",
        calls=lambda cs: "<|tool_call_start|>[" + ", ".join(
            f"{n}(" + ", ".join(f"{k}={pyval(v) if isinstance(v, str) else jdump(v)}" for k, v in a.items()) + ")"
            for n, a in cs) + "]<|tool_call_end|>"),
    "trl/gemma4": W(
        "<|turn>user\nhi<turn|>\n<|turn>model\n", lambda r: f"<|channel>thought\n{r}<channel|>", lambda c: c,
        lambda n, a: f"<|tool_call>call:{n}{gemma_val(a)}<tool_call|>", "<turn|>"),
    "trl/deepseek_r1_distill": W(
        "<｜User｜>hi<｜Assistant｜><think>\n", lambda r: f"{r}\n</think>\n\n", lambda c: c, None, "<｜end▁of▁sentence｜>"),
    "sift/kv": W(
        "<|user|>hi<|assistant|>", lambda r: f"<reasoning>{r}</reasoning>\n", lambda c: c,
        lambda n, a: f'<call name="{n}">\n' + "".join(f"{k}: {raw(v)}\n" for k, v in a.items()
                                                      if "\n" not in raw(v)) + "</call>", "<end>"),
    "sift/pycall": W(
        "<|turn|>user\nhi<|turn|>assistant\n", lambda r: f"<r>{r}</r>", lambda c: c,
        lambda n, a: f"<calls>[{n}(" + ", ".join(f"{k}={pyval(v)}" for k, v in a.items()) + ")]</calls>",
        "<|end|>",
        calls=lambda cs: "<calls>[" + ", ".join(f"{n}(" + ", ".join(f"{k}={pyval(v)}" for k, v in a.items()) + ")"
                                                for n, a in cs) + "]</calls>\n"),
    "sift/typed": W(
        "<user>hi<bot>", None, lambda c: c,
        lambda n, a: f"<fn {n}>" + "".join(
            f"<{'b' if isinstance(v, bool) else 'i' if isinstance(v, int) else 'f' if isinstance(v, float) else 's' if isinstance(v, str) else 'j'} {k}>{raw(v) if not isinstance(v, bool) else str(v).lower()}</v>"
            for k, v in a.items()) + "</fn>"),
    "sift/wordy": W(
        "USER: hi\nASSISTANT:", lambda r: f"THINK: {r} END\n", lambda c: c,
        lambda n, a: f"CALL {n} {jdump(a)} END\n"),
}


def scenarios(w, rng):
    """(label, output) pairs for one template."""
    r, c = rng.choice(REASONING), rng.choice(CONTENT)
    calls = rng.sample(CALLS, 2)
    out = []
    think = w["think"] or (lambda _r: "")
    if w["prompt"].endswith("<think>\n"):
        # The prompt opened reasoning: every output closes it first.
        lead = think(r)
        w = dict(w, text=lambda x, t=w["text"]: lead + t(x),
                 call=(lambda n, a, k=w["call"]: lead + k(n, a)) if w["call"] else None,
                 calls=lambda cs, k=w["calls"]: lead + k(cs))
    out.append(("content", w["text"](c) + w["end"]))
    if w["think"]:
        out.append(("reasoning-content", think(r) + w["text"](c) + w["end"]))
        out.append(("reasoning-only", think(r)))
        out.append(("reasoning-cut", think(r)[: max(1, len(think(r)) // 2)]))
    if w["call"]:
        out.append(("call", w["call"](*calls[0]) + w["end"]))
        out.append(("reasoning-call", think(r) + w["call"](*calls[0]) + w["end"]))
        out.append(("content-call", w["text"](c) + w["call"](*calls[1]) + w["end"]))
        out.append(("two-calls", think(r) + w["calls"](calls) + w["end"]))
        full = w["call"](*calls[0])
        out.append(("call-cut", think(r) + full[: len(full) * 2 // 3]))
        out.append(("call-then-text", w["call"](*calls[0]) + w["text"](c) + w["end"]))
        out.append(("typed-call", w["call"]("set_flag", {"on": False, "level": 7, "note": "x"}) + w["end"]))
        out.append(("unicode-call", w["call"](*CALLS[3]) + w["end"]))
    out.append(("plain-noise", c + " <not a marker> " + w["end"]))
    out.append(("empty", ""))
    out.append(("whitespace", "\n\n  " + w["text"](c) + "  \n" + w["end"]))
    return out


def soups(outputs, rng, tpl, prompt, n_ok=10, n_raise=1):
    """Random recombinations of a template's outputs (cut anywhere, so with
    broken and partial delimiters): the ones transformers answers, and one it
    raises on."""
    texts = [t for _, t in outputs if t]
    # Whole markers as pieces too: `<…>` runs, white space, the rest.
    tokens = [x for t in texts for x in re.split(r"(<[^<>]{0,40}>|\s+)", t) if x]
    ok, bad = [], []
    for i in range(120):
        parts = []
        if i % 2:
            parts = [rng.choice(tokens) for _ in range(rng.randint(3, 16))]
        else:
            for _ in range(rng.randint(2, 6)):
                t = rng.choice(texts)
                a = rng.randrange(len(t))
                b = rng.randrange(a, min(len(t), a + rng.randint(1, 40)) + 1)
                parts.append(t[a:b])
        text = "".join(parts)
        try:
            parse_response(text, tpl, prefix=prompt)
            if len(ok) < n_ok:
                ok.append((f"soup{i}", text))
        except Exception:
            if len(bad) < n_raise:
                bad.append((f"soup{i}", text))
        if len(ok) >= n_ok and len(bad) >= n_raise:
            break
    return ok + bad


def prompt_variants(w, tpl, rng):
    """Outputs whose prompt matters: the reasoning opener prefilled by the
    prompt, and a prompt holding an earlier turn (the start anchor twice, so
    only the last one counts)."""
    out = []
    r, c = rng.choice(REASONING), rng.choice(CONTENT)
    think_field = next((f for k, f in tpl["fields"].items() if k in ("thinking", "reasoning_content", "reasoning")), None)
    opener = think_field.get("open") if think_field else None
    if isinstance(opener, str) and w["think"] and w["think"](r).startswith(opener):
        body = w["think"](r)[len(opener):]
        out.append(("prefilled-opener", body + w["text"](c) + w["end"], w["prompt"] + opener))
        if w["call"]:
            out.append(("prefilled-opener-call", body + w["call"](*CALLS[0]) + w["end"], w["prompt"] + opener))
        out.append(("prefilled-opener-cut", body[: len(body) // 2], w["prompt"] + opener))
    earlier = w["prompt"] + w["text"]("earlier answer") + w["end"] + "\n" + w["prompt"]
    out.append(("earlier-turn", w["text"](c) + w["end"], earlier))
    if w["call"]:
        out.append(("earlier-turn-call", w["call"](*CALLS[2]) + w["end"], earlier))
    return out


def message(res):
    """transformers' dict as a Chat Completions message."""
    reasoning = next((res[k] for k in ("thinking", "reasoning_content", "reasoning") if k in res), None)
    calls = res.get("tool_calls") or []
    if isinstance(calls, dict):
        calls = [calls]
    flat = []
    for item in calls:
        flat.extend(item if isinstance(item, list) else [item])
    tool_calls = []
    for item in flat:
        f = item.get("function") if isinstance(item, dict) and isinstance(item.get("function"), dict) else item
        args = f.get("arguments") if isinstance(f, dict) else None
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                pass
        tool_calls.append({"name": f.get("name") if isinstance(f, dict) else None, "arguments": args})
    return {"reasoning": reasoning, "content": res.get("content"), "tool_calls": tool_calls}


def closes(tpl, prompt, text, tools):
    """Region closes per field (prompt and output), from transformers' own events."""
    p = ResponseParser(tpl, prefix=prompt, tools=tools)
    events = list(p.initial_events) + p.feed(text)
    _, last = p.finalize()
    events += last
    counts = {}
    for e in events:
        if e["type"] == "region_close":
            counts[e["field"]] = counts.get(e["field"], 0) + 1
    prefix_fields = [e["field"] for e in p.initial_events if e["type"] in ("region_open", "region_chunk")]
    return counts, prefix_fields


def main():
    rng = random.Random(22)
    n = 0
    for name, tpl in TEMPLATES.items():
        w = WRITERS[name]
        outs = [(label, text, w["prompt"]) for label, text in scenarios(w, rng)]
        outs += [(label, text, w["prompt"]) for label, text in soups([o[:2] for o in outs], rng, tpl, w["prompt"])]
        outs += prompt_variants(w, tpl, rng)
        for label, text, prompt in outs:
            for tools in ([], TOOLS):
                n += 1
                pair = "hf" if n % 2 else "beam"
                case = {
                    "id": f"rtemplate/{name}/{label}{'/tools' if tools else ''}",
                    "reasoning_parser": pair,
                    "tool_parser": pair,
                    "request": {"parser_init_kwargs": {"response_template": tpl}, "prompt_text": prompt},
                    "model_output": text,
                    "source": name,
                }
                if tools:
                    case["request"]["tools"] = tools
                f = tpl["fields"]
                if "content" not in f and all("open" in x or "open_pattern" in x for x in f.values()):
                    case["implicit_content"] = True
                try:
                    res = parse_response(text, tpl, prefix=prompt, tools=tools or None)
                    case["expected"] = message(res)
                    counts, prefix_fields = closes(tpl, prompt, text, tools or None)
                    f = tpl["fields"]
                    case["twice"] = sorted(k for k, v in counts.items() if v > 1 and not f[k].get("repeats"))
                    case["prompt_fields"] = sorted(set(prefix_fields))
                except Exception as e:  # transformers raises: no message to compare
                    case["transformers_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
                print(json.dumps(case, ensure_ascii=False))
    print(f"{n} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
