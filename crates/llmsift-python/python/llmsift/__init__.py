"""Sift: split one LLM output stream into ``reasoning``, ``content`` and
``tool_calls``, delta by delta or in one shot, with vLLM's parser names.

>>> import llmsift
>>> p = llmsift.Parser("qwen3", "hermes")
>>> m = p.parse('Let me look.</think><tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>')
>>> (m.reasoning, m.tool_calls[0].name, m.tool_calls[0].arguments)
('Let me look.', 'f', '{"x": 1}')

``llmsift.vllm`` is a vLLM parser plugin, registered by the wheel's
``vllm.general_plugins`` entry point (``sift_<name>``): see its docstring.
"""

from ._sift import (
    Delta,
    Message,
    Parser,
    SiftError,
    Span,
    ToolCall,
    ToolCallDelta,
    detect,
    parsers,
)

__all__ = [
    "Delta",
    "Message",
    "Parser",
    "SiftError",
    "Span",
    "ToolCall",
    "ToolCallDelta",
    "detect",
    "parsers",
]
