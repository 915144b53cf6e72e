"""Per-delta cost: vLLM 0.34's built-in parser vs the `llmsift.vllm` plugin,
both through vLLM's own unified interface (`Parser.parse_delta`, what the
serving layer calls per engine step), in one process.

Run in the venv `scripts/python-vllm-test.sh` makes (vLLM and the `sift`
wheel both import):

    $SIFT_PY_CACHE/vllm-venv/bin/python scripts/python-bench.py [--repeat 5]

Workloads, shaped as in docs/benchmarks.md and generated here
(deterministic):
- W1: Qwen3 reasoning, no tools: `<think>` ~8,000 tokens of prose, `</think>`,
  ~500 tokens of content (`--reasoning-parser qwen3`);
- W2: one call whose `content` argument is a 4,000-character code-like string,
  in Hermes JSON (`qwen3` + `hermes`) and Qwen3-Coder XML (`qwen3` +
  `qwen3_coder`).
The text is cut where the real Qwen3 tokenizer (`.assets/tokenizers/qwen3`)
puts token boundaries and each delta carries its token id, as the engine
delivers it; `parse_delta` is called with keywords, as vLLM's
`ChatStreamProcessor.step` calls it. The figure is the fastest of `--repeat`
whole runs (a fresh parser per run, setup excluded), divided by the number
of deltas, in CPU time of this process (`--clock cpu`, the default: other
processes on a loaded machine then inflate it less than wall time) or wall
time (`--clock wall`).

Besides the two parsers, per delta:
- `push`: the same deltas through `llmsift.Parser.push` alone, without vLLM's
  interface;
- the floor of any plugin behind vLLM's Python interface: `floor 0`, a
  `parse_delta` that only returns one prebuilt `DeltaMessage`, and `floor 1`,
  one that knows the plugin's answers in advance (no parsing at all) and
  only returns each delta's answer as fresh vLLM models, built the cheapest
  way Python can (no validation: `__new__` and the four attributes
  pydantic's `model_construct` fills; a `DeltaToolCall` and its
  `DeltaFunctionCall` per call fragment), and `floor 2`, the same with the
  models built by the plugin's native builder (`DeltaModels.build`, one
  call per delta; the last delta's `finish` part is left out). A plugin
  must return fresh models per delta (the serving layer mutates and embeds
  them), so the best speed-up a Python-interface plugin can reach is about
  vLLM / the lower of floors 1 and 2 (the `max` column).
"""

import argparse
import json
import os
import random
import time

import llmsift
import llmsift.vllm  # noqa: F401  (registers the plugin)
from vllm.entrypoints.generate.base.protocol import DeltaFunctionCall, DeltaMessage, DeltaToolCall
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.parser import ParserManager
from vllm.tokenizers import get_tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORDS = ("the the the a a of of to to and and is is in that it for this we I need should can will would be not "
         "but so if then when which with on as at from by user wants function value list string number file "
         "returns call check first next case edge empty input output naïve café größe").split()
TOOLS = [{"type": "function", "function": {"name": "write_file", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}}]


def prose(rng, nbytes):
    out, n = [], 0
    while n < nbytes:
        w = rng.choice(WORDS)
        out.append(w)
        n += len(w) + 1
    return " ".join(out)


def code(rng, nchars):
    pieces = ['if (a < b && c > d) {\n', '    let s = "quoted \\"text\\"";\n', '    path = "C:\\\\dir\\\\file";\n',
              '    x = y >> 2;\n', '}\n', '// a comment with <tags> and \'quotes\'\n']
    out = ""
    while len(out) < nchars:
        out += rng.choice(pieces)
    return out[:nchars]


def workloads():
    rng = random.Random(0x5EED)
    w1 = prose(rng, 8000 * 4) + "\n</think>\n\n" + prose(rng, 500 * 4)
    arg = code(rng, 4000)
    args = json.dumps({"path": "src/engine/lexer.rs", "content": arg}, ensure_ascii=False)
    hermes = "I will write the file.\n</think>\n\n<tool_call>\n" + json.dumps({"name": "write_file", "arguments": json.loads(args)}, ensure_ascii=False) + "\n</tool_call>"
    coder = ("I will write the file.\n</think>\n\n<tool_call>\n<function=write_file>\n<parameter=path>\nsrc/engine/lexer.rs\n</parameter>\n"
             f"<parameter=content>\n{arg}\n</parameter>\n</function>\n</tool_call>")
    return [("W1 qwen3", "qwen3", None, w1, False), ("W2 hermes", "qwen3", "hermes", hermes, True),
            ("W2 qwen3_coder", "qwen3", "qwen3_coder", coder, True)]


def token_deltas(tok, text):
    """(delta text, [id]) per token, cut at the tokenizer's own offsets."""
    enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
    out, prev = [], 0
    for tid, (_, end) in zip(enc["input_ids"], enc["offset_mapping"]):
        end = max(end, prev)
        out.append((text[prev:end], [tid]))
        prev = end
    if prev < len(text):
        out[-1] = (out[-1][0] + text[prev:], out[-1][1])
    return out


CLOCK = time.process_time


class FloorPrebuilt:
    """The cheapest conceivable plugin: returns one prebuilt message."""

    def __init__(self, *args, **kwargs):
        self.m = DeltaMessage(reasoning="x")

    def parse_delta(self, delta_text, delta_token_ids, request, prompt_token_ids=None, *, finished):
        return self.m


_new, _set = object.__new__, object.__setattr__


def _model(cls, defaults, values, extra):
    m = _new(cls)
    d = dict(defaults)
    d.update(values)
    _set(m, "__dict__", d)
    _set(m, "__pydantic_fields_set__", set(values))
    _set(m, "__pydantic_extra__", {} if extra else None)
    _set(m, "__pydantic_private__", None)
    return m


_CALL = {"id": None, "type": None, "index": None, "function": None}
_FN = {"name": None, "arguments": None}


class FloorBuilt(FloorPrebuilt):
    """Returns the answers in `shapes` (one per delta: None, or the message's
    set fields and its fragments' set fields) as fresh models: no parsing."""

    shapes: list = []

    def __init__(self, *args, **kwargs):
        self.it = iter(self.shapes)

    def parse_delta(self, delta_text, delta_token_ids, request, prompt_token_ids=None, *, finished):
        shape = next(self.it)
        if shape is None:
            return None
        fields, fields_set, calls = shape
        tcs = [_model(DeltaToolCall, _CALL, {**call, "function": _model(DeltaFunctionCall, _FN, fn, False)}, True)
               for call, fn in calls]
        m = _new(DeltaMessage)
        d = {"role": None, "content": None, "reasoning": None, "tool_calls": tcs}
        d.update(fields)
        _set(m, "__dict__", d)
        _set(m, "__pydantic_fields_set__", set(fields_set))
        _set(m, "__pydantic_extra__", {})
        _set(m, "__pydantic_private__", None)
        return m


class FloorNative(FloorPrebuilt):
    """Returns the `llmsift.Delta`s in `shapes` as models built natively: no parsing."""

    shapes: list = []

    def __init__(self, *args, **kwargs):
        self.it = iter(self.shapes)
        self.build = llmsift.vllm._MODELS.build

    def parse_delta(self, delta_text, delta_token_ids, request, prompt_token_ids=None, *, finished):
        return self.build(next(self.it))


def shapes_of(out):
    """The set fields of each answer (what `FloorBuilt` rebuilds)."""
    shapes = []
    for d in out:
        if d is None:
            shapes.append(None)
            continue
        fields = {k: getattr(d, k) for k in d.model_fields_set if k != "tool_calls"}
        calls = [({k: getattr(c, k) for k in c.model_fields_set if k != "function"},
                  {k: getattr(c.function, k) for k in c.function.model_fields_set}) for c in d.tool_calls]
        shapes.append((fields, set(d.model_fields_set), calls))
    return shapes


def run(cls, tok, req, deltas):
    p = cls(tok, req.tools, chat_template_kwargs=req.chat_template_kwargs, model_config=None)
    prompt = tok.encode("<|im_start|>assistant\n<think>\n", add_special_tokens=False)
    last = len(deltas) - 1
    out = []
    parse_delta = p.parse_delta
    # Only the parser's calls are timed; the answers are folded afterwards.
    t0 = CLOCK()
    for i, (text, ids) in enumerate(deltas):
        out.append(parse_delta(delta_text=text, delta_token_ids=ids, request=req, prompt_token_ids=prompt,
                               finished=i == last))
    elapsed = CLOCK() - t0
    run.last = out
    folded = {"reasoning": "", "content": "", "args": ""}
    for d in out:
        if d is not None:
            folded["reasoning"] += d.reasoning or ""
            folded["content"] += d.content or ""
            for tc in d.tool_calls or []:
                folded["args"] += (tc.function.arguments or "") if tc.function else ""
    return elapsed, folded


def run_push(r, t, vocab, tools, deltas):
    """The same deltas through `llmsift.Parser.push` alone (no vLLM interface)."""
    p = llmsift.Parser(r, t, tools=TOOLS if tools else None, tokenizer=vocab, prompt="<|im_start|>assistant\n<think>\n")
    push = p.push
    out = []
    t0 = CLOCK()
    for text, ids in deltas:
        out.append(push(text, ids))
    p.finish()
    elapsed = CLOCK() - t0
    run_push.last = out
    return elapsed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--clock", choices=["cpu", "wall"], default="cpu")
    args = ap.parse_args()
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    print(f"clock: {args.clock}; load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    tok = get_tokenizer(os.path.join(ROOT, ".assets", "tokenizers", "qwen3"))
    vocab = tok.get_vocab()
    print(f"{'workload':<16} {'deltas':>7} {'vLLM µs':>8} {'Sift µs':>8} {'speed-up':>9} {'push µs':>8} "
          f"{'floor 0':>8} {'floor 1':>8} {'floor 2':>8} {'max':>7}   (per delta)")
    for name, r, t, text, tools in workloads():
        body = {"model": "bench", "messages": [{"role": "user", "content": "Hi"}]}
        if tools:
            body.update(tools=TOOLS, tool_choice="auto")
        req = ChatCompletionRequest(**body)
        deltas = token_deltas(tok, text)
        per = {}
        for label, names in (("vllm", (r, t)), ("sift", (f"sift_{r}", f"sift_{t}" if t else None))):
            cls = ParserManager.get_parser(tool_parser_name=names[1], reasoning_parser_name=names[0],
                                           enable_auto_tools=True, tokenizer=tok)
            best, answer = min(run(cls, tok, req, deltas) for _ in range(args.repeat))
            per[label] = (best / len(deltas) * 1e6, answer)
        floor_built = type("FloorBuilt", (FloorBuilt,), {"shapes": shapes_of(run.last)})
        # Compared as check.py compares: text fields trimmed (Sift keeps the
        # blank line between `</think>` and a call as content; vLLM drops it).
        push = min(run_push(r, t, vocab, tools, deltas) for _ in range(args.repeat)) / len(deltas) * 1e6
        floor_native = type("FloorNative", (FloorNative,), {"shapes": run_push.last})
        floor = []
        for cls in (FloorPrebuilt, floor_built, floor_native):
            runs = [run(cls, tok, req, deltas) for _ in range(args.repeat)]
            floor.append(min(x[0] for x in runs) / len(deltas) * 1e6)
            if cls is floor_built:
                # `floor 1` returns the plugin's own answers: check it did.
                assert runs[-1][1] == per["sift"][1], "floor 1 did not rebuild the plugin's answers"
        same = {k: v.strip() for k, v in per["vllm"][1].items()} == {k: v.strip() for k, v in per["sift"][1].items()}
        print(f"{name:<16} {len(deltas):>7} {per['vllm'][0]:>8.2f} {per['sift'][0]:>8.2f} "
              f"{per['vllm'][0] / per['sift'][0]:>8.1f}x {push:>8.2f} {floor[0]:>8.2f} {floor[1]:>8.2f} {floor[2]:>8.2f} "
              f"{per['vllm'][0] / min(floor[1:]):>6.1f}x{'' if same else '  (answers differ!)'}", flush=True)


if __name__ == "__main__":
    main()
