"""vLLM 0.34.0's serving path for one generated output, without an engine.

What a client of `vllm serve --reasoning-parser R --tool-call-parser T
--enable-auto-tool-choice` gets, assembled from vLLM's own pieces in the
order its Chat Completions server runs them:

1. `ParserManager.get_parser` builds the parser class once per pair
   (`OpenAIServingChat.__init__`).
2. The renderer's tail (`OnlineRenderer`, after the prompt is rendered):
   when the parser has a reasoning half, `always_adjust_request`, or
   `tool_choice` is not "none", a parser instance runs `adjust_request`,
   which is where engine-based and most tool parsers set
   `skip_special_tokens = False` (and structural tags are built).
3. `ChatCompletionRequest.to_sampling_params` turns the request into the
   engine's `skip_special_tokens` (default True).
4. The engine's `FastIncrementalDetokenizer` (tokenizers' DecodeStream,
   primed with the prompt ids) turns the generated ids into text one token
   per step; the last id is the end-of-sequence token, excluded from the
   text as a stop-terminated step is.
5. One shot: `chat_completion_full_generator` — `Parser.parse` on the full
   text and ids, then `assemble_chat_message_fields`.
   Streamed: `ChatStreamProcessor.step` per engine step (the parser's
   `parse_delta`, the `tool_choice` and `parallel_tool_calls` filters),
   folded the way an OpenAI client folds deltas.

Nothing here re-implements parsing: only the glue an HTTP server would run.
"""

import copy
import json
import types

from vllm.entrypoints.openai.chat_completion.message_assembly import assemble_chat_message_fields
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
from vllm.parser import ParserManager
from vllm.v1.engine.detokenizer import IncrementalDetokenizer

ENABLE_AUTO_TOOLS = True
_PARSER_CLS = {}


def parser_cls(reasoning, tool, tokenizer, tok_key, harmony):
    """The server's parser class for a pair (built once per pair and tokenizer)."""
    key = (reasoning, tool, tok_key, harmony)
    if key not in _PARSER_CLS:
        _PARSER_CLS[key] = ParserManager.get_parser(
            tool_parser_name=tool,
            reasoning_parser_name=reasoning,
            enable_auto_tools=ENABLE_AUTO_TOOLS,
            model_name="oracle",
            is_harmony=harmony,
            tool_strict_level=None,
            tokenizer=tokenizer,
        )
    return _PARSER_CLS[key]


def tok_key(tokenizer):
    return id(tokenizer)


def make_request(req):
    """A ChatCompletionRequest from a case's request fields."""
    body = {"model": "oracle", "messages": [{"role": "user", "content": "Hi"}]}
    for k in ("tools", "tool_choice", "parallel_tool_calls", "include_reasoning", "chat_template_kwargs"):
        if req.get(k) is not None:
            body[k] = copy.deepcopy(req[k])
    return ChatCompletionRequest(**body)


def adjust(cls, request, tokenizer, prompt_ids):
    """The renderer's tail: adjust_request when vLLM would call it."""
    tool_choice = getattr(request, "tool_choice", "none")
    should = cls.always_adjust_request or cls.reasoning_parser_cls is not None or tool_choice != "none"
    if not should:
        return request
    p = cls(tokenizer, request.tools, model_config=None, chat_template_kwargs=request.chat_template_kwargs)
    p.set_prompt_token_ids(prompt_ids)
    return p.adjust_request(request=request)


def _detokenizer(tokenizer, sampling_params, prompt_ids):
    engine_req = types.SimpleNamespace(
        request_id="oracle", prompt_token_ids=list(prompt_ids), sampling_params=sampling_params
    )
    return IncrementalDetokenizer.from_new_request(tokenizer, engine_req)


def _message(reasoning, content, tool_calls):
    return {
        "reasoning": reasoning,
        "content": content,
        "tool_calls": [{"name": tc.function.name, "arguments": tc.function.arguments} for tc in tool_calls],
    }


def _fold(deltas):
    """Folds stream deltas as an OpenAI client does."""
    reasoning, content, calls = "", "", {}
    for d in deltas:
        reasoning += d.get("reasoning") or ""
        content += d.get("content") or ""
        for tc in d.get("tool_calls") or []:
            c = calls.setdefault(tc["index"], {"name": "", "arguments": ""})
            f = tc.get("function") or {}
            c["name"] += f.get("name") or ""
            c["arguments"] += f.get("arguments") or ""
    return {
        "reasoning": reasoning or None,
        "content": content or None,
        "tool_calls": [calls[i] for i in sorted(calls)],
    }


def serve(reasoning, tool, tokenizer, harmony, req, output_ids, prompt_ids, eos_id):
    """Runs one output through the serving path.

    Returns (skip_special_tokens, one_shot_text, one_shot_message,
    stream_chunks, streamed_message, stream_deltas).
    """
    cls = parser_cls(reasoning, tool, tokenizer, tok_key(tokenizer), harmony)
    request = make_request(req)
    if cls is not None:
        request = adjust(cls, request, tokenizer, prompt_ids)
    sp = request.to_sampling_params(1 << 20, {})
    # The engine stops on an end-of-sequence token: the output's own last
    # token when it is one (harmony's `<|call|>`), else the tokenizer's.
    ids = list(output_ids) if eos_id is None else list(output_ids) + [eos_id]

    # One shot: the engine's final output (text of every step but the stop token).
    det = _detokenizer(tokenizer, sp, prompt_ids)
    det.update(ids[:-1], False)
    det.update(ids[-1:], True)
    text = det.get_next_output_text(finished=True, delta=False)
    if cls is None:
        one = {"reasoning": None, "content": text, "tool_calls": []}
    else:
        parser = cls(tokenizer, request.tools, chat_template_kwargs=request.chat_template_kwargs, model_config=None)
        parser.set_prompt_token_ids(prompt_ids)
        r, c, calls = parser.parse(text, request, enable_auto_tools=ENABLE_AUTO_TOOLS, model_output_token_ids=ids)
        fields = assemble_chat_message_fields(
            request, r, c, calls, enable_auto_tools=ENABLE_AUTO_TOOLS, parser_cls=cls
        )
        one = _message(fields.reasoning, fields.content, fields.tool_calls)

    # Streamed: one engine step per token.
    det = _detokenizer(tokenizer, sp, prompt_ids)
    parser = None
    if cls is not None:
        parser = cls(tokenizer, request.tools, chat_template_kwargs=request.chat_template_kwargs, model_config=None)
    proc = ChatStreamProcessor(request, parser, enable_auto_tools=ENABLE_AUTO_TOOLS, parser_cls=cls)
    chunks, deltas = [], []
    for i, tid in enumerate(ids):
        last = i == len(ids) - 1
        det.update([tid], last)
        delta_text = det.get_next_output_text(finished=last, delta=True)
        finish = "stop" if last else None
        chunks.append(delta_text)
        d, _ = proc.step(delta_text, [tid], finish, list(prompt_ids))
        if d is not None:
            dj = d.model_dump(exclude_none=True)
            dj = {k: v for k, v in dj.items() if v not in ("", [], None)}
            if dj:
                deltas.append(dj)
    streamed = _fold(deltas)
    return sp.skip_special_tokens, text, one, chunks, streamed, deltas


def arguments_value(raw):
    """A call's arguments as the corpus stores them: parsed JSON, or None with the raw text."""
    try:
        return json.loads(raw), None
    except (TypeError, ValueError):
        return None, raw
