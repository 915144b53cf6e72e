"""The plugin's unvalidated vLLM models against validated construction.

`llmsift.vllm` builds each streamed `DeltaMessage` (and its `DeltaToolCall` /
`DeltaFunctionCall`) natively without pydantic's validation. This drives
every text-only case of a corpus (chunked as `sift parse --jsonl` chunks
it) through two native streams, one building unvalidated models and one
building them through the classes' own validating constructors, and checks
each delta is the same in every way vLLM's serving layer looks at it:
equal as objects, equal as `model_dump(exclude_none=True)`, and serialised
to the same bytes inside a `ChatCompletionStreamResponse` chunk
(`model_dump_json(exclude_unset=True)`, what the serving layer sends),
before and after the serving layer's own mutations (the
`parallel_tool_calls` filter, dropping tool calls). It also checks the
plugin picked the unvalidated builder at import.

    python models.py CORPUS.jsonl        (exit 1 on any difference)
"""

import json
import os
import sys

import llmsift
import llmsift.vllm
from llmsift._sift import DeltaModels, VllmStream
from vllm.entrypoints.generate.base.protocol import DeltaFunctionCall, DeltaMessage, DeltaToolCall
from vllm.entrypoints.openai.chat_completion.protocol import (
    ChatCompletionRequest,
    ChatCompletionResponseStreamChoice,
    ChatCompletionStreamResponse,
)
from vllm.entrypoints.serve.utils.tool_calls_utils import maybe_filter_parallel_tool_calls

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from drive import chunks_of  # noqa: E402

FAST = DeltaModels(DeltaMessage, DeltaToolCall, DeltaFunctionCall)
SLOW = DeltaModels(DeltaMessage, DeltaToolCall, DeltaFunctionCall, validated=True)
SERIAL = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "Hi"}], parallel_tool_calls=False)


def wire(d):
    chunk = ChatCompletionStreamResponse(id="c", created=0, model="m", choices=[ChatCompletionResponseStreamChoice(index=0, delta=d)])
    return chunk.model_dump_json(exclude_unset=True, exclude_none=False)


def same(a, b):
    if a is None or b is None:
        return a is b
    return a == b and a.model_dump(exclude_none=True) == b.model_dump(exclude_none=True) and wire(a) == wire(b)


def stream(case, models):
    req = case.get("request") or {}
    r, t = case.get("reasoning_parser"), case.get("tool_parser")

    def start(request, prompt):
        return llmsift.Parser(r, t, tools=req.get("tools"), tool_choice=req.get("tool_choice"),
                           prompt=req.get("prompt_text"), parser_init_kwargs=req.get("parser_init_kwargs"), id_seed=7)

    s = VllmStream(models, start)
    chunks = chunks_of(case) or [""]
    return [s.step(ch, None, None, None, i == len(chunks) - 1) for i, ch in enumerate(chunks)]


def main():
    if llmsift.vllm._MODELS.validated:
        print("models: the plugin fell back to validated construction at import", file=sys.stderr)
        return 1
    cases = deltas = calls = bad = 0
    for line in open(sys.argv[1], encoding="utf-8"):
        case = json.loads(line) if line.strip() else None
        if case is None or case.get("tokenizer") is not None:
            continue
        try:
            pairs = list(zip(stream(case, FAST), stream(case, SLOW)))
        except llmsift.SiftError:
            continue  # a case of misuse (an unknown name, say): no stream to compare
        cases += 1
        for a, b in pairs:
            deltas += a is not None
            calls += bool(a is not None and a.tool_calls)
            ok = same(a, b)
            if ok and a is not None and a.tool_calls:
                # The serving layer's own mutations of a returned delta.
                ok = same(maybe_filter_parallel_tool_calls(a, SERIAL), maybe_filter_parallel_tool_calls(b, SERIAL))
                a.tool_calls, b.tool_calls = [], []
                ok = ok and same(a, b)
            if not ok:
                bad += 1
                if bad <= 5:
                    print(f"{case['id']}: {a!r} != {b!r}", file=sys.stderr)
    print(f"models: {cases} cases, {deltas} deltas ({calls} with tool calls): unvalidated = validated on all but {bad}")
    return 1 if bad or not deltas else 0


if __name__ == "__main__":
    sys.exit(main())
