"""Typed stubs for the native module (``llmsift._sift``), re-exported by ``sift``."""

from os import PathLike
from typing import Any, Mapping, Optional, Sequence, TypedDict, Union

class SiftError(ValueError):
    """Misuse of the API (unknown parser name, unreadable tokenizer, invalid
    JSON argument); the message is Sift's own. Model output never raises."""

class ToolCallDelta:
    """A fragment of one tool call inside a :class:`Delta`."""

    @property
    def index(self) -> int: ...
    @property
    def id(self) -> Optional[str]:
        """Set in the call's first fragment only."""
    @property
    def name(self) -> Optional[str]:
        """Set in the call's first fragment only."""
    @property
    def arguments(self) -> str:
        """The next piece of the arguments JSON text (may be empty)."""
    def to_dict(self) -> dict[str, Any]: ...

class Span:
    """Raw output bytes ``[start, end)`` and what they became (``byte_spans=True``)."""
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def kind(self) -> str:
        """``reasoning``, ``content``, ``call``, ``dropped`` or ``added``."""
    @property
    def index(self) -> Optional[int]:
        """The call's index (``call``)."""
    @property
    def reason(self) -> Optional[str]:
        """``marker``, ``framing``, ``not_a_call``, ``hidden`` or ``vllm_loss`` (``dropped``)."""
    @property
    def field(self) -> Optional[str]:
        """The field of ``added`` bytes."""
    @property
    def text(self) -> str:
        """The raw text of ``call``/``dropped`` spans, the field text of ``added`` ones."""

class Delta:
    """What one ``push`` or ``finish`` produced; empty fields are ``None``."""

    @property
    def reasoning(self) -> Optional[str]: ...
    @property
    def content(self) -> Optional[str]: ...
    @property
    def tool_calls(self) -> list[ToolCallDelta]: ...
    @property
    def spans(self) -> list[Span]:
        """With ``byte_spans=True``: the raw output this delta settled, in order."""
    def is_empty(self) -> bool: ...
    def __bool__(self) -> bool: ...
    def to_dict(self) -> dict[str, Any]:
        """A streaming chunk's ``delta``, absent fields left out."""

class ToolCall:
    """A complete tool call: a non-empty name and JSON-object arguments."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def arguments(self) -> str:
        """The arguments as JSON text (an object)."""
    def to_dict(self) -> dict[str, Any]: ...

class Message:
    """A parsed assistant message; empty ``reasoning``/``content`` are ``None``."""

    @property
    def reasoning(self) -> Optional[str]: ...
    @property
    def content(self) -> Optional[str]: ...
    @property
    def tool_calls(self) -> list[ToolCall]: ...
    @property
    def spans(self) -> list[Span]:
        """With ``byte_spans=True``: the folded spans of the whole output."""
    def to_dict(self) -> dict[str, Any]:
        """A non-streaming response's ``message``."""

JSONLike = Union[str, Mapping[str, Any], Sequence[Any]]

class Parser:
    """One request's streaming parser for a vLLM parser pair.

    ``reasoning_parser`` / ``tool_call_parser`` are vLLM's names (see
    :func:`parsers`); the pair is compiled once per process and shared.
    ``tools``, ``chat_template_kwargs``, ``parser_init_kwargs``: Python values
    or JSON text. ``tool_choice``: ``"auto"``, ``"none"``, ``"required"`` or
    ``{"type": "function", "function": {"name": ...}}``. ``prompt``: the end
    of the rendered prompt (decides whether output starts in reasoning).
    ``tokenizer``: a ``tokenizer.json`` path, or a token -> id mapping (a
    tokenizer's ``get_vocab()``), so special-token markers match by id.
    ``vllm_text_loss``: drop the text vLLM's answer drops (Sift keeps it).
    ``vllm_one_shot``: vLLM's non-streaming answer where it depends on the
    whole output (the parser then holds the output of such formats until
    ``finish``).
    ``id_seed``: deterministic tool call ids.
    ``byte_spans``: account for every output byte: ``Delta.spans`` and
    ``Message.spans`` (``docs/byte-spans.md``).
    ``atomic_calls``: emit each tool call only once it closes; a call the
    output's end cut is its text as content. By default such a call stays a
    call whose arguments are exactly what was written (incomplete JSON,
    never completed) and :attr:`cut_call` names it.

    Raises :class:`SiftError` for an unknown name or an unusable argument.
    """

    def __init__(
        self,
        reasoning_parser: Optional[str] = None,
        tool_call_parser: Optional[str] = None,
        *,
        tools: Optional[JSONLike] = None,
        tool_choice: Optional[Union[str, Mapping[str, Any]]] = None,
        chat_template_kwargs: Optional[JSONLike] = None,
        prompt: Optional[str] = None,
        tokenizer: Optional[Union[str, "PathLike[str]", Mapping[str, int]]] = None,
        include_reasoning: bool = True,
        reasoning_effort: Optional[str] = None,
        parser_init_kwargs: Optional[JSONLike] = None,
        vllm_text_loss: bool = False,
        vllm_one_shot: bool = False,
        id_seed: Optional[int] = None,
        byte_spans: bool = False,
        atomic_calls: bool = False,
    ) -> None: ...
    def push(self, text: str, token_ids: Optional[Sequence[int]] = None) -> Delta:
        """Feeds one delta (text, and its token ids when known)."""
    def finish(self) -> Delta:
        """Ends the stream: flushes held text, closes an open call."""
    def parse(self, text: str, token_ids: Optional[Sequence[int]] = None) -> Message:
        """One-shot parse of a whole output (equal to the folded stream)."""
    @property
    def cut_call(self) -> Optional[int]:
        """After ``finish``: the index of the call the output's end cut, its arguments as written (do not run it)."""
    @property
    def state(self) -> str:
        """The format state the parser is in (``reasoning``, ``content``, ...)."""
    def skips_special_tokens(self, requested: Optional[bool] = None) -> bool:
        """Whether vLLM would skip special tokens when detokenizing this request."""
    @property
    def reasoning_token_ids(self) -> Optional[tuple[Optional[int], int]]:
        """``(start or None, end)`` reasoning marker ids once bound to a vocabulary."""

class _Parsers(TypedDict):
    reasoning: list[str]
    tool: list[str]

class _Detection(TypedDict):
    reasoning: Optional[str]
    tool: Optional[str]
    also: list[str]

def parsers() -> _Parsers:
    """The registered reasoning and tool parser names (vLLM's)."""

def detect(template: str) -> _Detection:
    """The parsers that fit a chat template or a ``tokenizer_config.json`` text."""
