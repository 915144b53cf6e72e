"""A vLLM 0.34 parser plugin: every Sift parser name, inside ``vllm serve``.

    vllm serve MODEL --enable-auto-tool-choice \\
        --reasoning-parser sift_qwen3 --tool-call-parser sift_hermes

The installed wheel has vLLM import this module at start-up through its
``vllm.general_plugins`` entry point (:mod:`llmsift._plugin`); naming it
with ``--reasoning-parser-plugin llmsift.vllm`` / ``--tool-parser-plugin
llmsift.vllm`` does the same.

Importing this module registers, for every name ``llmsift.parsers()`` lists:

- ``sift_<name>`` with ``ReasoningParserManager`` (a :class:`SiftReasoningParser`
  subclass) and with ``ToolParserManager`` (a :class:`SiftToolParser` subclass),
  vLLM's split interfaces, for the structured-output backend
  (``is_reasoning_end``, ``is_reasoning_end_streaming``,
  ``extract_content_ids``, ``count_reasoning_tokens``) and for any caller of
  ``extract_reasoning*`` / ``extract_tool_calls*``;
- the unified parser 0.34's serving layer holds per request: when both
  selected names (or the one selected) are Sift's, ``ParserManager`` builds a
  :class:`SiftParser`, so reasoning and tool calls come from one Sift state
  machine instead of two parsers glued by vLLM's ``DelegatingParser``.

With ``SIFT_OVERRIDE=1`` in the environment, or with the second plugin module
``llmsift.vllm_override``, the same classes also take vLLM's own names
(``--reasoning-parser qwen3`` then runs Sift).

Per delta the work is one native call (``llmsift._sift.VllmStream``): the id
filter, Sift's push, and vLLM's ``DeltaMessage`` built without pydantic's
validation (checked equal to validated construction at import; validated
construction serves where they differ).

The answers are Sift's (see the repository's ``docs/deviations.md``);
``SIFT_VLLM_TEXT_LOSS=1`` asks for vLLM's answer where it drops text, and
``SIFT_VLLM_ONE_SHOT=1`` for its one-shot answers that depend on the whole
output (formats with such decisions then hold the output until it ends).
``adjust_request`` sets ``skip_special_tokens`` by Sift's rule for the pair
(which equals vLLM's) and keeps vLLM's JSON schema for ``required`` and
named ``tool_choice``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any, Optional

from vllm.entrypoints.generate.base.protocol import (
    DeltaFunctionCall,
    DeltaMessage,
    DeltaToolCall,
    ExtractedToolCallInformation,
    FunctionCall,
    ToolCall,
)
from vllm.parser.abstract_parser import Parser as _VllmParser
from vllm.parser.parser_manager import ParserManager
from vllm.reasoning import ReasoningParser, ReasoningParserManager
from vllm.tool_parsers import ToolParser, ToolParserManager

import llmsift
from llmsift._sift import DeltaModels as _DeltaModels, VllmStream as _VllmStream

__all__ = ["SiftParser", "SiftReasoningParser", "SiftToolParser", "register"]

_TEXT_LOSS = os.environ.get("SIFT_VLLM_TEXT_LOSS") == "1"
_ONE_SHOT = os.environ.get("SIFT_VLLM_ONE_SHOT") == "1"


# --- the tokenizer's view: marker ids and the ids vLLM's detokenizer skips ---

_VOCABS: dict[int, tuple[Any, dict, dict]] = {}


def _vocab(tokenizer) -> tuple[Optional[dict], dict]:
    """The tokenizer's token -> id map and its special tokens (id -> spelling), read once per tokenizer."""
    if tokenizer is None or not hasattr(tokenizer, "get_vocab"):
        return None, {}
    hit = _VOCABS.get(id(tokenizer))
    if hit is None or hit[0] is not tokenizer:
        special = {}
        for i in getattr(tokenizer, "all_special_ids", None) or ():
            special[i] = tokenizer.convert_ids_to_tokens(i)
        added = getattr(tokenizer, "added_tokens_decoder", None) or {}
        special.update({i: t.content for i, t in added.items() if getattr(t, "special", False)})
        hit = (tokenizer, tokenizer.get_vocab(), special)
        _VOCABS[id(tokenizer)] = hit
    return hit[1], hit[2]


def _request_kwargs(request) -> dict:
    """The request fields Sift's parsing depends on."""
    if request is None:
        return {}
    tools = getattr(request, "tools", None)
    if tools:
        tools = [t.model_dump(exclude_none=True) if hasattr(t, "model_dump") else t for t in tools]
    # An absent `tool_choice` means "parse calls whenever a tool parser is
    # named", as vLLM's parsers do; the request model fills in a default,
    # so only an explicit one is passed on.
    choice = getattr(request, "tool_choice", None)
    if "tool_choice" not in getattr(request, "model_fields_set", {"tool_choice"}):
        choice = None
    if choice is not None and not isinstance(choice, str):
        choice = choice.model_dump(exclude_none=True) if hasattr(choice, "model_dump") else choice
    return {
        "tools": tools or None,
        "tool_choice": choice,
        "chat_template_kwargs": getattr(request, "chat_template_kwargs", None),
        "include_reasoning": getattr(request, "include_reasoning", True) is not False,
        "reasoning_effort": getattr(request, "reasoning_effort", None),
    }


def _ids(ids: Optional[Sequence[int]], text: str, special: dict) -> Optional[list]:
    """The ids whose text reached the parser. vLLM's detokenizer drops special
    tokens when the request skips them; a special id is kept only when its
    spelling is in the text it came with (the parser matches bound markers by
    id, so an id whose text was dropped must not reach it)."""
    if ids is None:
        return None
    if not special:
        return list(ids)
    return [i for i in ids if i not in special or special[i] in text]


def _stream_models():
    """vLLM's delta models as the native stream builds them: unvalidated
    (pydantic's ``model_construct`` way, several times cheaper per delta)
    when that gives objects equal to validated construction for the shapes
    a stream returns (a message with reasoning, content and a call's first
    fragment; an arguments-only fragment), compared as objects and as
    vLLM's serving layer serialises them; else validated (another pydantic
    or vLLM)."""
    fast = _DeltaModels(DeltaMessage, DeltaToolCall, DeltaFunctionCall)
    slow = _DeltaModels(DeltaMessage, DeltaToolCall, DeltaFunctionCall, validated=True)
    tools = [{"type": "function", "function": {"name": "n", "parameters": {"type": "object"}}}]
    deltas = ('r</think>c<tool_call>\n{"name": "n", "arguments": {"a": ', '1}}\n</tool_call>')

    def run(models):
        s = _VllmStream(models, lambda request, prompt: llmsift.Parser("qwen3", "hermes", tools=tools, id_seed=1))
        return [s.push(deltas[0]), s.push(deltas[1]), s.finish()]

    try:
        for a, b in zip(run(fast), run(slow)):
            if (a is None) != (b is None):
                return slow
            if a is not None and (
                a != b
                or a.model_dump_json(exclude_unset=True) != b.model_dump_json(exclude_unset=True)
                or a.model_dump(exclude_none=True) != b.model_dump(exclude_none=True)
            ):
                return slow
        return fast
    except Exception:
        return slow


_MODELS = _stream_models()


def _count_reasoning(ids: Sequence[int], marks, inside: bool) -> int:
    """Tokens strictly between a start and an end marker (markers not counted)."""
    if marks is None:
        return 0
    start, end = marks
    n, depth = 0, 1 if inside else 0
    for i in ids:
        if start is not None and i == start:
            depth += 1
        elif i == end:
            depth = max(0, depth - 1)
        elif depth:
            n += 1
    return n


class _SiftBase:
    """What the three classes share: building a Sift parser for a request."""

    sift_reasoning: Optional[str] = None
    sift_tool: Optional[str] = None

    def _sift_init(self, tokenizer, kwargs):
        self._tok = tokenizer
        self._vocab, self._special = _vocab(tokenizer)
        self._ctk = kwargs.get("chat_template_kwargs")
        # Other construction options are the parser's own (`parser_init_kwargs`);
        # a response template also comes from the tokenizer, as vLLM's `hf` reads it.
        init = {k: v for k, v in kwargs.items() if k not in ("chat_template_kwargs", "model_config")}
        if "response_template" not in init and tokenizer is not None:
            try:
                from vllm.parser.response_template import resolve_response_template

                tpl = resolve_response_template(tokenizer)
                if tpl is not None:
                    init["response_template"] = tpl
            except Exception:  # no template, or one vLLM itself refuses: the built-in format serves
                pass
        self._init = init or None
        self._prompt: Optional[str] = None
        # The per-delta path is native (`VllmStream`): it makes the request's
        # Sift parser on the first delta by `_start`, filters ids, pushes and
        # builds vLLM's DeltaMessage in one call.
        self._stream = _VllmStream(_MODELS, self._start, self._special)

    def _start(self, request, prompt_token_ids) -> llmsift.Parser:
        """The streaming parser, made on the first delta (vLLM passes the request and the prompt there)."""
        if prompt_token_ids is not None:
            self._set_prompt(prompt_token_ids)
        return self._new(request)

    def _new(self, request=None, ids_known: bool = True) -> llmsift.Parser:
        """A Sift parser for the request. Bound to the vocabulary only when
        the caller will pass token ids: a bound special-token marker matches
        by id, so a text-only call (`extract_reasoning`, `extract_tool_calls`)
        matches markers in the text instead."""
        kw = _request_kwargs(request)
        if kw.get("chat_template_kwargs") is None and self._ctk is not None:
            kw["chat_template_kwargs"] = self._ctk
        return llmsift.Parser(
            self.sift_reasoning,
            self.sift_tool,
            prompt=self._prompt,
            tokenizer=self._vocab if ids_known else None,
            vllm_text_loss=_TEXT_LOSS,
            vllm_one_shot=_ONE_SHOT,
            parser_init_kwargs=self._init,
            **kw,
        )

    def set_prompt_text(self, prompt_text: Optional[str]) -> None:
        """The rendered prompt's end as text, for callers without token ids
        (vLLM passes ids: ``set_prompt_token_ids``)."""
        self._prompt = prompt_text

    def _set_prompt(self, prompt_token_ids) -> None:
        # Only the prompt's tail matters (where the output starts).
        if prompt_token_ids is not None and self._tok is not None:
            self._prompt = self._tok.decode(list(prompt_token_ids)[-64:], skip_special_tokens=False)

    def _adjust_skip(self, request):
        """vLLM's `skip_special_tokens` for this pair, decided by Sift's rule."""
        if request is None or not hasattr(request, "skip_special_tokens"):
            return request
        requested = request.skip_special_tokens if "skip_special_tokens" in request.model_fields_set else None
        request.skip_special_tokens = self._new(request).skips_special_tokens(requested)
        return request

    def _marks(self):
        return llmsift.Parser(self.sift_reasoning, None, tokenizer=self._vocab).reasoning_token_ids

    def _is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        marks = self._marks()
        if marks is None:
            return False
        start, end = marks
        for i in reversed(list(input_ids)):
            if i == end:
                return True
            if start is not None and i == start:
                return False
        return False


class SiftReasoningParser(_SiftBase, ReasoningParser):
    """vLLM's ``ReasoningParser`` over Sift's reasoning format ``sift_reasoning``.

    Streaming is engine-based (``engine_based_streaming``): each call feeds
    only ``delta_text`` (and ids) to one Sift parser, and ``finish_streaming``
    flushes what it holds back.
    """

    engine_based_streaming = True

    def __init__(self, tokenizer, *args, **kwargs):
        ReasoningParser.__init__(self, tokenizer, *args, **kwargs)
        self._sift_init(tokenizer, kwargs)

    @property
    def reasoning_end_token_ids(self) -> frozenset:
        marks = self._marks()
        return frozenset([marks[1]]) if marks else frozenset()

    def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
        self._set_prompt(prompt_token_ids)

    def adjust_initial_state_from_prompt(self, prompt_token_ids: Sequence[int]) -> None:
        self._set_prompt(prompt_token_ids)

    def adjust_request(self, request):
        return self._adjust_skip(request)

    def is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        return self._is_reasoning_end(input_ids)

    def is_reasoning_end_streaming(self, input_ids: Sequence[int], delta_ids: Iterable[int]) -> bool:
        marks = self._marks()
        return marks is not None and marks[1] in list(delta_ids)

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        marks = self._marks()
        if marks is None or marks[1] not in input_ids:
            return []
        return input_ids[len(input_ids) - input_ids[::-1].index(marks[1]) :]

    def count_reasoning_tokens(self, token_ids: Sequence[int]) -> int:
        inside = self._new().state == "reasoning"
        return _count_reasoning(token_ids, self._marks(), inside)

    def has_engine_confirmed_reasoning_end(self) -> bool:
        return self._stream.state not in (None, "reasoning")

    def extract_reasoning(self, model_output: str, request) -> tuple[Optional[str], Optional[str]]:
        m = self._new(request, ids_known=False).parse(model_output)
        return m.reasoning, m.content

    def extract_reasoning_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
    ) -> Optional[DeltaMessage]:
        # A reasoning parser's streaming ignores the request, as vLLM's does.
        return self._stream.push(delta_text, delta_token_ids)

    def finish_streaming(self) -> Optional[DeltaMessage]:
        return self._stream.finish()


class SiftToolParser(_SiftBase, ToolParser):
    """vLLM's ``ToolParser`` over Sift's tool format ``sift_tool`` (engine-based streaming)."""

    engine_based_streaming = True

    def __init__(self, tokenizer, tools=None, *args, **kwargs):
        ToolParser.__init__(self, tokenizer, tools)
        self._sift_init(tokenizer, kwargs)

    def adjust_request(self, request):
        return self._adjust_skip(ToolParser.adjust_request(self, request))

    def extract_tool_calls(self, model_output: str, request) -> ExtractedToolCallInformation:
        m = self._new(request, ids_known=False).parse(model_output)
        calls = [ToolCall(id=c.id, function=FunctionCall(id=c.id, name=c.name, arguments=c.arguments)) for c in m.tool_calls]
        return ExtractedToolCallInformation(tools_called=bool(calls), tool_calls=calls, content=m.content)

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
        request,
    ) -> Optional[DeltaMessage]:
        return self._stream.push(delta_text, delta_token_ids, request)

    def finish_streaming(self) -> Optional[DeltaMessage]:
        return self._stream.finish()


class SiftParser(_SiftBase, _VllmParser):
    """vLLM 0.34's unified ``Parser`` (what the serving layer holds per
    request): one Sift parser for both halves of the pair."""

    always_adjust_request = True
    supports_required_and_named = True

    def __init__(self, tokenizer, tools=None, *args, model_config=None, **kwargs):
        # vLLM's base would build the split parsers; one Sift parser replaces both.
        self.model_tokenizer = tokenizer
        self._reasoning_parser = None
        self._tool_parser = None
        self._sift_init(tokenizer, kwargs)
        self._step = self._stream.step

    def adjust_request(self, request):
        if self.sift_tool is not None:
            request = ToolParser.adjust_request(self, request)
        return self._adjust_skip(request)

    def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
        self._set_prompt(prompt_token_ids)

    def is_reasoning_end(self, input_ids: list[int]) -> bool:
        return self._is_reasoning_end(input_ids)

    def count_reasoning_tokens(self, token_ids: Sequence[int]) -> int:
        inside = self._new().state == "reasoning"
        return _count_reasoning(token_ids, self._marks(), inside)

    def parse(self, model_output: str, request, enable_auto_tools: bool = False, model_output_token_ids: Sequence[int] = ()):
        ids = list(model_output_token_ids or ())
        p = self._new(request, ids_known=bool(ids))
        m = p.parse(model_output, _ids(ids, model_output, self._special) if ids else None)
        calls = None
        if self.sift_tool is not None:
            calls = [FunctionCall(id=c.id, name=c.name, arguments=c.arguments) for c in m.tool_calls]
        return m.reasoning, m.content, calls

    def parse_delta(self, delta_text: str, delta_token_ids: list[int], request, prompt_token_ids=None, *, finished: bool):
        # Called once per engine step: everything happens in the one native
        # call (arguments in order: pyo3's keyword matching costs more than
        # this frame).
        return self._step(delta_text, delta_token_ids, request, prompt_token_ids, finished)


def _classes(override: bool):
    names = llmsift.parsers()
    out = []
    for n in names["reasoning"]:
        cls = type(f"SiftReasoningParser_{n}", (SiftReasoningParser,), {"sift_reasoning": n, "__module__": __name__})
        out.append((ReasoningParserManager, cls, [f"sift_{n}"] + ([n] if override else [])))
    for n in names["tool"]:
        cls = type(f"SiftToolParser_{n}", (SiftToolParser,), {"sift_tool": n, "__module__": __name__})
        out.append((ToolParserManager, cls, [f"sift_{n}"] + ([n] if override else [])))
    return out


_ORIGINAL_COMPOSE = ParserManager.__dict__["_compose_parser"].__func__


def _compose_parser(cls, tool_parser_name, reasoning_parser_name, enable_auto_tools, model_name, is_harmony, tool_strict_level, tokenizer):
    """ParserManager's composition, with Sift's pairs served by one SiftParser."""
    r = cls.get_reasoning_parser(reasoning_parser_name) if reasoning_parser_name else None
    t = cls.get_tool_parser(tool_parser_name, enable_auto_tools, model_name)
    sift_r = r is None or issubclass(r, SiftReasoningParser)
    sift_t = t is None or issubclass(t, SiftToolParser)
    if (r is not None or t is not None) and sift_r and sift_t:
        attrs = {
            "reasoning_parser_cls": r,
            "tool_parser_cls": t,
            "sift_reasoning": r.sift_reasoning if r else None,
            "sift_tool": t.sift_tool if t else None,
            "__module__": __name__,
        }
        return type("SiftParser", (SiftParser,), attrs)
    return _ORIGINAL_COMPOSE(cls, tool_parser_name, reasoning_parser_name, enable_auto_tools, model_name, is_harmony, tool_strict_level, tokenizer)


def register(override: bool = False) -> None:
    """Registers every Sift name (``sift_<name>``; also vLLM's own names with
    ``override``) and routes Sift pairs to :class:`SiftParser`. Idempotent."""
    for manager, cls, names in _classes(override):
        manager.register_module(name=names, force=True, module=cls)
    ParserManager._compose_parser = classmethod(_compose_parser)


register(override=os.environ.get("SIFT_OVERRIDE") == "1")
