"""Scenario templates: what a model writes, independent of its syntax.

A scenario is a request (tools, `tool_choice`, thinking switch, prompt
that opens reasoning or not) plus a model output composed from parts —
reasoning, text, calls — that `families.py` spells in the family's syntax.
Every choice of values comes from a `random.Random` seeded with the case
id, so regenerating writes the same files.
"""

import random

import families as fam

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "search", "description": "Search the web",
     "parameters": {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["query"]}}},
    {"type": "function", "function": {"name": "set_config", "description": "Store settings",
     "parameters": {"type": "object", "properties": {"options": {"type": "object"}, "tags": {"type": "array", "items": {"type": "string"}}, "enabled": {"type": "boolean"}, "ratio": {"type": "number"}}}}},
]
CITIES = ["Paris", "Tokyo", "São Paulo", "Zürich", "Reykjavík", "New York"]
QUERIES = ["rust streaming parsers", "vllm tool calls", "weather tomorrow", "best café in Lyon"]
TEXTS = ["Let me check that for you.", "I'll look it up.", "Sure — one moment.", "Checking now."]
AFTER = ["Done.", "Here is what I found.", "That should answer it."]
REASONS = ["The user wants the weather, so I call the tool.", "I need to search first, then answer.",
           "Think step by step: 2 + 2 = 4.", "Two lookups are needed; do them in parallel."]
ANSWERS = ["The answer is 4.", "It is sunny in Paris today.", "Hello! How can I help?", "Bonjour, ça va ? 你好 👋"]


def call(rng, kind=None):
    kind = kind or rng.choice(["weather", "search"])
    if kind == "weather":
        return ("get_weather", {"city": rng.choice(CITIES), "unit": rng.choice(["celsius", "fahrenheit"])})
    if kind == "search":
        return ("search", {"query": rng.choice(QUERIES), "limit": rng.randint(1, 20)})
    return ("set_config", {"options": {"mode": "fast", "nested": {"depth": 2, "list": [1, 2.5, None]}, "名前": "值"},
                           "tags": ["α", "b\"q\"", "c\\d"], "enabled": rng.choice([True, False]), "ratio": 0.25})


class Build:
    """Composes one output in a family's syntax."""

    def __init__(self, r, t):
        self.r = fam.REASONING.get(r) if r else None
        self.t = fam.TOOLS.get(t) if t else None
        partner = fam.REASONING.get(fam.PARTNER.get(t)) if t else None
        # Without a reasoning parser the prompt still ends the way the family's template ends it.
        self.turn = partner["turn"] if partner else "<|im_start|>assistant\n"
        kw = self.r["think_kw"] if self.r else None
        # Templates whose thinking switch is off unless asked (`thinking`, `thinking_mode`,
        # `reasoning_effort`) get it asked for whenever the output reasons.
        self.on = {} if kw in (None, "enable_thinking") else {
            "chat_template_kwargs": {kw: {"thinking_mode": "enabled", "reasoning_effort": "high"}.get(kw, True)}}

    def prompt(self, thinking=True, opened=None):
        if not self.r:
            return self.turn
        opened = self.r["prompt_opens"] if opened is None else opened
        p = self.r["turn"]
        if thinking and opened:
            p += self.r["start"]
        return p

    def reasoning(self, text, opened=None, closed=True):
        if not self.r:
            return ""
        opened = self.r["prompt_opens"] if opened is None else opened
        return ("" if opened else self.r["start"]) + text + (self.r["end"] if closed else "")

    def content(self, text):
        if not text:
            return ""
        if not self.r:
            return text
        return self.r["content_open"] + text + self.r["content_close"]

    def calls(self, cs):
        return self.t["render"](cs) if self.t and cs else ""


def tool_scenarios(r, t, rng):
    """(scenario id, request, model output) for a tool parser, with reasoning parser r or None."""
    b = Build(r, t)
    req = lambda **kw: {"tools": TOOLS, "tool_choice": "auto", **b.on, **kw}
    think = (lambda on: {"chat_template_kwargs": {b.r["think_kw"]: on if b.r["think_kw"] != "reasoning_effort" else ("high" if on else "no_think")}}) if b.r else (lambda on: {})
    pre = b.reasoning(rng.choice(REASONS)) if b.r else ""
    P = b.prompt()
    one = [call(rng)]
    two = [call(rng, "weather"), call(rng, "search")]
    out = []
    add = lambda sid, rq, text: out.append((sid, {**rq, "prompt_text": rq.get("prompt_text", P)}, text))
    add("plain", req(), pre + b.content(rng.choice(ANSWERS)))
    add("one-call", req(), pre + b.calls(one))
    add("two-calls", req(), pre + b.calls(two))
    add("nested-unicode", req(), pre + b.calls([call(rng, "config")]))
    closer = b.t["closer"] or "</tool_call>"
    add("closer-in-string", req(), pre + b.calls([("search", {"query": f"what does {closer} mean", "limit": 3})]))
    add("escapes-in-string", req(), pre + b.calls([("search", {"query": 'say "hi"\\n\nnew line\ttab', "limit": 1})]))
    add("text-before", req(), pre + b.content(rng.choice(TEXTS)) + b.calls(one))
    add("text-before-after", req(), pre + rng.choice(TEXTS) + "\n" + b.calls(one) + "\n" + rng.choice(AFTER))
    add("text-between", req(), pre + b.calls(two[:1]) + "\nand then\n" + b.calls(two[1:]))
    add("three-calls", req(), pre + b.calls([call(rng), call(rng), call(rng, "config")]))
    add("tool-choice-none", req(tool_choice="none"), pre + b.calls(one))
    add("tool-choice-none-plain", req(tool_choice="none"), pre + b.content(rng.choice(ANSWERS)))
    add("no-tools", dict(b.on), pre + b.calls(one))
    add("parallel-false", req(parallel_tool_calls=False), pre + b.calls(two))
    add("unknown-tool", req(), pre + b.calls([("launch_rocket", {"target": "moon"})]))
    add("empty-args", req(), pre + b.calls([("get_weather", {})]))
    # Truncation at every structural point of one call (max_tokens cut).
    full = pre + b.calls([("get_weather", {"city": "Paris", "unit": "celsius"})])
    cuts = sorted({i for s in set(b.t["specials"]) | {"{", "\"city\"", "Paris", "=", ":"} for i in _ends(full, s)} - {len(full)})
    base = len(pre)
    cuts = [c for c in cuts if c > base] or [base + (len(full) - base) // 2]
    step = max(1, len(cuts) // 6)
    for c in cuts[::step][:6]:
        add(f"truncated-at-{c - base}", req(), full[:c])
    return out, b, think


def _ends(text, s):
    i = text.find(s)
    while i >= 0:
        yield i + len(s)
        i = text.find(s, i + 1)


def forced_scenarios(r, t, rng, json_constrained):
    """`required` and named `tool_choice`: the constrained output (vLLM's JSON
    list when adjust_request constrains to its JSON schema, else the family's
    own syntax, which a structural tag constrains)."""
    b = Build(r, t)
    P = b.prompt()
    pre = b.reasoning(rng.choice(REASONS)) if b.r else ""
    one = call(rng, "weather")
    two = [call(rng, "weather"), call(rng, "search")]
    named = {"type": "function", "function": {"name": "get_weather"}}
    out = []
    if json_constrained:
        arr = lambda cs: fam.j([{"name": n, "parameters": a} for n, a in cs])
        out.append(("required-one", {"tools": TOOLS, "tool_choice": "required", **b.on}, pre + arr([one])))
        out.append(("required-two", {"tools": TOOLS, "tool_choice": "required", **b.on}, pre + arr(two)))
        out.append(("named", {"tools": TOOLS, "tool_choice": named, **b.on}, pre + fam.j(one[1])))
        out.append(("named-truncated", {"tools": TOOLS, "tool_choice": named, **b.on}, pre + fam.j(one[1])[:-3]))
    else:
        out.append(("required-one", {"tools": TOOLS, "tool_choice": "required", **b.on}, pre + b.calls([one])))
        out.append(("required-two", {"tools": TOOLS, "tool_choice": "required", **b.on}, pre + b.calls(two)))
        out.append(("named", {"tools": TOOLS, "tool_choice": named, **b.on}, pre + b.calls([one])))
    return [(sid, {**rq, "prompt_text": P}, text) for sid, rq, text in out]


def reasoning_scenarios(r, t, rng):
    """Reasoning-shaped outputs for reasoning parser r (tool parser t or None)."""
    b = Build(r, t)
    if not b.r:
        return []
    kw = b.r["think_kw"]
    on = {kw: "high" if kw == "reasoning_effort" else True}
    off = {kw: "no_think" if kw == "reasoning_effort" else False}
    req = {"tools": fam_tools(t), "tool_choice": "auto"} if t else {}
    R1, A1 = rng.choice(REASONS), rng.choice(ANSWERS)
    out = []
    add = lambda sid, rq, text, prompt=None: out.append(
        (sid, {**req, **b.on, **rq, "prompt_text": prompt if prompt is not None else b.prompt()}, text))
    # The template's default switch (only where it defaults on: elsewhere the prompt would not open reasoning).
    add("think-answer", {} if b.on else {"chat_template_kwargs": None}, b.reasoning(R1) + b.content(A1))
    add("think-answer-kw-on", {"chat_template_kwargs": on}, b.reasoning(R1) + b.content(A1))
    add("model-writes-start", {}, b.reasoning(R1, opened=False) + b.content(A1), b.prompt(opened=False))
    add("prompt-opens", {}, b.reasoning(R1, opened=True) + b.content(A1), b.prompt(opened=True))
    add("unterminated", {}, b.reasoning(R1 + " still thinking", closed=False))
    add("thinking-off", {"chat_template_kwargs": off}, b.content(A1), b.prompt(thinking=False))
    add("unicode", {}, b.reasoning("Réfléchissons… 考虑一下 🤔") + b.content("Voilà ✓"))
    add("empty-reasoning", {}, b.reasoning("") + b.content(A1))
    add("hide-reasoning", {"include_reasoning": False}, b.reasoning(R1) + b.content(A1))
    add("start-again-in-content", {}, b.reasoning(R1) + b.content(A1 + " " + (b.r["start"] or "<think>") + "x"))
    add("end-only-in-content", {}, b.content(A1) + (b.r["end"] or "</think>") + "tail", b.prompt(opened=False))
    if t:
        c = call(rng, "weather")
        add("call-inside-reasoning", {}, b.reasoning(R1 + "\n" + b.calls([c]) + "\nthen answer") + b.content(A1))
        add("call-after-reasoning", {}, b.reasoning(R1) + b.calls([c]))
        add("call-in-unterminated-reasoning", {}, b.reasoning(R1 + "\n" + b.calls([c]), closed=False))
        add("thinking-off-call", {"chat_template_kwargs": off}, b.calls([c]), b.prompt(thinking=False))
    return out


def fam_tools(t):
    return TOOLS
