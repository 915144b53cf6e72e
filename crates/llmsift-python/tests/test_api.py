"""The Python API's own contract: names, detection, errors, the GIL, stubs."""

import threading

import pytest

import llmsift


def test_parsers_lists_vllm_names():
    names = llmsift.parsers()
    assert "qwen3" in names["reasoning"] and "hermes" in names["tool"]
    assert len(names["reasoning"]) >= 44 and len(names["tool"]) >= 62


def test_detect_a_template():
    found = llmsift.detect("{% if tools %}<tool_call>\n{{ t }}\n</tool_call>{% endif %}<think>\n</think>")
    assert found["tool"] == "hermes"


def test_unknown_parser_raises_with_rusts_message():
    with pytest.raises(llmsift.SiftError, match="no_such_parser"):
        llmsift.Parser("no_such_parser")
    assert issubclass(llmsift.SiftError, ValueError)


def test_a_bad_tokenizer_path_raises():
    with pytest.raises(llmsift.SiftError, match="missing.json"):
        llmsift.Parser("qwen3", tokenizer="/nonexistent/missing.json")


def test_tools_given_as_json_text_or_python_values_agree():
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}}]
    out = "<tool_call>\n<function=f>\n<parameter=n>\n3\n</parameter>\n</function>\n</tool_call>"
    import json

    a = llmsift.Parser(None, "qwen3_coder", tools=tools, id_seed=1).parse(out)
    b = llmsift.Parser(None, "qwen3_coder", tools=json.dumps(tools), id_seed=1).parse(out)
    assert a == b and a.tool_calls[0].arguments == '{"n": 3}'


def test_malformed_output_is_content_not_an_error():
    m = llmsift.Parser("qwen3", "hermes").parse("<tool_call>{not json")
    assert m.tool_calls == [] and m.content is not None and "{not json" in m.content


def test_finish_is_idempotent_and_push_after_finish_is_empty():
    p = llmsift.Parser("qwen3")
    p.push("a</think>b")
    p.finish()
    assert p.finish().is_empty() and not p.push("more")


def test_parsing_releases_the_gil():
    # Another Python thread runs while a long parse is under way.
    text = "x" * 20_000_000 + "</think>done"
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(1)

    t = threading.Thread(target=tick)
    t.start()
    try:
        before = len(ticks)
        m = llmsift.Parser("qwen3").parse(text)
        during = len(ticks) - before
    finally:
        stop.set()
        t.join()
    assert m.content == "done"
    assert during > 1000


def test_a_vocabulary_mapping_binds_markers_by_id():
    vocab = {"<think>": 7, "</think>": 8}
    p = llmsift.Parser("deepseek_r1", tokenizer=vocab)
    assert p.reasoning_token_ids == (7, 8)
    d = p.push("</think>", [8])
    assert d.is_empty()
    assert p.push("hi", [1]).content == "hi"


def _rebuild(message, spans):
    """The raw output from a message's text fields and its byte spans."""
    fields = {"reasoning": message.reasoning or "", "content": message.content or ""}
    at = {"reasoning": 0, "content": 0}
    raw = ""
    for s in spans:
        if s.kind in ("reasoning", "content"):
            n = s.end - s.start
            text = fields[s.kind].encode()[at[s.kind]:at[s.kind] + n].decode()
            at[s.kind] += n
            raw += text
        elif s.kind == "added":
            at[s.field] += len(s.text.encode())
        else:
            raw += s.text
    assert at == {k: len(v.encode()) for k, v in fields.items()}
    return raw


def test_byte_spans_account_for_every_byte_streamed_and_one_shot():
    out = 'Hm.</think>Sure.<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>'
    m = llmsift.Parser("qwen3", "hermes", byte_spans=True).parse(out)
    assert [(s.kind, s.reason, s.index) for s in m.spans] == [
        ("reasoning", None, None),
        ("dropped", "marker", None),
        ("content", None, None),
        ("call", None, 0),
    ]
    assert _rebuild(m, m.spans) == out
    p = llmsift.Parser("qwen3", "hermes", byte_spans=True)
    deltas = [p.push(out[i:i + 3]) for i in range(0, len(out), 3)] + [p.finish()]
    streamed = [s for d in deltas for s in d.spans]
    assert "".join(s.text for s in streamed if s.kind == "call") == m.spans[-1].text
    assert llmsift.Parser("qwen3", "hermes").parse(out).spans == []


def test_a_cut_call_is_never_completed_and_atomic_calls_makes_it_content():
    # Issue 23: the arguments stay exactly as written; `cut_call` names the call.
    out = 'Let me look.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "/home/user/impor'
    p = llmsift.Parser(None, "hermes", id_seed=1)
    streamed = [p.push(out[i : i + 3]) for i in range(0, len(out), 3)] + [p.finish()]
    args = "".join(c.arguments for d in streamed for c in d.tool_calls)
    assert args == '{"path": "/home/user/impor' and p.cut_call == 0
    one = llmsift.Parser(None, "hermes", id_seed=1)
    m = one.parse(out)
    assert m.tool_calls[0].arguments == args and one.cut_call == 0
    # atomic_calls: no call, the call's text is content, streamed and one-shot alike.
    a = llmsift.Parser(None, "hermes", id_seed=1, atomic_calls=True)
    deltas = [a.push(out[i : i + 3]) for i in range(0, len(out), 3)] + [a.finish()]
    assert all(not d.tool_calls for d in deltas) and a.cut_call is None
    whole = llmsift.Parser(None, "hermes", id_seed=1, atomic_calls=True).parse(out)
    assert whole.tool_calls == [] and whole.content == "".join(d.content or "" for d in deltas) == out
    # A call that closes is sent whole, once.
    done = out + 'tant.txt"}}\n</tool_call>'
    b = llmsift.Parser(None, "hermes", id_seed=1, atomic_calls=True)
    frags = [c for i in range(0, len(done), 3) for c in b.push(done[i : i + 3]).tool_calls] + b.finish().tool_calls
    assert len(frags) == 1 and frags[0].arguments == '{"path": "/home/user/important.txt"}' and b.cut_call is None
