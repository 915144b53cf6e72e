#!/usr/bin/env python3
"""Validates what Sift's protocol layer sends against the official SDKs' own types.

Every one-shot object and every SSE event is checked with pydantic's
`model_validate` on the SDK type a client parses it into:

  chat       openai.types.chat.ChatCompletion / ChatCompletionChunk
  responses  openai.types.responses.Response / TypeAdapter(ResponseStreamEvent)
  anthropic  anthropic.types.Message / TypeAdapter(RawMessageStreamEvent)

and then against what the real APIs send for fields the SDKs mark optional
but clients rely on (usage details, `sequence_number` order, the opening and
closing events, block shapes, stop reasons). A stream is also folded with
the SDK's own accumulator where one exists (openai's ChatCompletionStreamState
and ResponseStreamState, anthropic's accumulate_event), and the fold must be
the one-shot answer when one is given.

Usage:
  sdk-validate.py --api chat|responses|anthropic [--stream] FILE
  sdk-validate.py --manifest FILE.jsonl
      each line {"name", "api", "stream": bool, "path", "oneshot": path?,
                 "include_usage": bool?}  (chat streams: a usage chunk is due)

Every failure is printed as `NAME: WHERE: FIELD: MESSAGE`; the exit status
is 1 when any document failed. Needs the venv of scripts/py-env.sh.
"""

import argparse
import json
import sys
import typing

import pydantic
import anthropic.types as at
from openai import omit
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent

RESPONSE_EVENTS = pydantic.TypeAdapter(ResponseStreamEvent)
MESSAGE_EVENTS = pydantic.TypeAdapter(at.RawMessageStreamEvent)


def members(union):
    """An event union's member classes by their `type` literal."""
    while typing.get_origin(union) is typing.Annotated:
        union = typing.get_args(union)[0]
    out = {}
    for cls in typing.get_args(union):
        for t in typing.get_args(cls.model_fields["type"].annotation):
            out[t] = cls
    return out


RESPONSE_EVENT_TYPES = members(ResponseStreamEvent)
MESSAGE_EVENT_TYPES = members(at.RawMessageStreamEvent)
ANTHROPIC_STOP = {"end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal"}


class Report:
    def __init__(self, name):
        self.name = name
        self.failures = []

    def fail(self, where, field, message):
        self.failures.append(f"{self.name}: {where}: {field}: {message}")

    def validate(self, where, validator, value):
        """Runs a pydantic validator; each error names its field path."""
        try:
            return validator(value)
        except pydantic.ValidationError as e:
            for err in e.errors():
                loc = ".".join(str(p) for p in err["loc"]) or "(root)"
                got = json.dumps(err.get("input"), ensure_ascii=False)[:80]
                self.fail(where, loc, f"{err['msg']} (got {got})")
            return None

    def event(self, where, adapter, types, value):
        """Validates an event against its union (as a client parses it), but
        reports the errors of the member its `type` names, not of every member."""
        try:
            return adapter.validate_python(value)
        except pydantic.ValidationError:
            cls = types.get(value.get("type"))
            if cls is None:
                self.fail(where, "type", f"not an event type of the SDK: {value.get('type')!r}")
                return None
            self.validate(where, cls.model_validate, value)
            return None

    def expect(self, where, field, ok, message):
        if not ok:
            self.fail(where, field, message)


def frames(text):
    """SSE frames as (event name or None, data text)."""
    out = []
    for frame in text.split("\n\n"):
        if not frame.strip():
            continue
        event, data = None, []
        for line in frame.split("\n"):
            if line.startswith("event: "):
                event = line[len("event: "):]
            elif line.startswith("data: "):
                data.append(line[len("data: "):])
        out.append((event, "\n".join(data)))
    return out


def events(r, text, named):
    """The JSON events of a stream; a frame's `event:` name must be its `type`."""
    out = []
    for i, (event, data) in enumerate(frames(text)):
        if data == "[DONE]":
            out.append((i, "[DONE]"))
            continue
        try:
            v = json.loads(data)
        except json.JSONDecodeError as e:
            r.fail(f"frame {i}", "data", f"not JSON: {e}")
            continue
        if named:
            r.expect(f"frame {i}", "event", event == v.get("type"), f"event name {event!r} is not the type {v.get('type')!r}")
        out.append((i, v))
    return out


# ---- Chat Completions ------------------------------------------------------


def chat_object(r, where, v):
    c = r.validate(where, ChatCompletion.model_validate, v)
    r.expect(where, "usage", isinstance(v.get("usage"), dict), "clients read usage on every completion")
    for i, ch in enumerate(v.get("choices", [])):
        msg = ch.get("message", {})
        r.expect(where, f"choices.{i}.message.content", "content" in msg, "the key must be present (null when empty)")
        calls = msg.get("tool_calls") or []
        for j, tc in enumerate(calls):
            args = tc.get("function", {}).get("arguments")
            if ch.get("finish_reason") == "length" and j == len(calls) - 1 and not is_json_object(args):
                # A call the output's end cut is never completed (issue 23):
                # its arguments are what was written, an object's beginning.
                r.expect(where, f"choices.{i}.message.tool_calls.{j}.function.arguments", is_object_prefix(args), "a cut call's arguments are not an object's beginning")
                continue
            r.expect(where, f"choices.{i}.message.tool_calls.{j}.function.arguments", is_json_object(args), "not a JSON object")
    return c


def chat_stream(r, text, oneshot, include_usage=None):
    evs = events(r, text, named=False)
    r.expect("stream", "[DONE]", bool(evs) and evs[-1][1] == "[DONE]", "the stream must end with data: [DONE]")
    chunks = [(i, v) for i, v in evs if v != "[DONE]"]
    from openai.lib.streaming.chat._completions import ChatCompletionStreamState

    state = ChatCompletionStreamState()
    finished = {}
    for n, (i, v) in enumerate(chunks):
        where = f"chunk {i}"
        c = r.validate(where, ChatCompletionChunk.model_validate, v)
        if c is None:
            continue
        if n == 0:
            d = v["choices"][0]["delta"] if v.get("choices") else {}
            r.expect(where, "choices.0.delta.role", d.get("role") == "assistant", "the first chunk names the role")
        for k, ch in enumerate(v.get("choices", [])):
            if ch.get("finish_reason") is not None:
                r.expect(where, f"choices.{k}.finish_reason", ch["index"] not in finished, "a second finish_reason")
                finished[ch["index"]] = ch["finish_reason"]
            elif ch["index"] in finished:
                r.fail(where, f"choices.{k}", "a chunk after the choice's finish_reason")
        if v.get("usage") is not None:
            r.expect(where, "choices", v.get("choices") == [], "the usage chunk has no choices")
            r.expect(where, "usage", n == len(chunks) - 1, "the usage chunk is the last chunk")
        r.expect(where, "id", v.get("id") == chunks[0][1].get("id"), "every chunk carries the same id")
        if state is None:
            continue
        try:
            state.handle_chunk(c)
        except Exception as e:  # the SDK's own fold refused the chunk
            r.fail(where, "(fold)", f"ChatCompletionStreamState: {type(e).__name__}: {e}")
            state = None
    r.expect("stream", "finish_reason", 0 in finished, "no chunk carried a finish_reason")
    if include_usage is not None:
        has = bool(chunks) and chunks[-1][1].get("usage") is not None
        r.expect("stream", "usage", has == include_usage, "stream_options.include_usage asks for a last usage chunk" if include_usage else "a usage chunk nobody asked for")
    if oneshot is None or r.failures or state is None:
        return
    # The snapshot, not get_final_completion(): that one refuses a `length` finish.
    got = state.current_completion_snapshot.choices[0]
    want = oneshot["choices"][0]
    msg = got.message
    r.expect("fold", "finish_reason", got.finish_reason == want["finish_reason"], f"{got.finish_reason!r} != one-shot {want['finish_reason']!r}")
    # The role chunk carries `content: ""` (as vLLM sends it), so a client's
    # fold of a stream without content is "" where the one-shot says null.
    content = msg.content or None
    r.expect("fold", "message.content", content == want["message"]["content"], f"{msg.content!r} != one-shot {want['message']['content']!r}")
    calls = [(t.id, t.function.name, t.function.arguments) for t in msg.tool_calls or []]
    want_calls = [(t["id"], t["function"]["name"], t["function"]["arguments"]) for t in want["message"].get("tool_calls", [])]
    r.expect("fold", "message.tool_calls", calls == want_calls, f"{calls!r} != one-shot {want_calls!r}")


# ---- Responses -------------------------------------------------------------


def is_object_prefix(text):
    """The beginning of a JSON object as written (a cut call's arguments)."""
    return isinstance(text, str) and (text.strip() == "" or text.lstrip().startswith("{"))


def is_json_object(text):
    try:
        return isinstance(json.loads(text), dict)
    except (TypeError, json.JSONDecodeError):
        return False


def responses_object(r, where, v, final=True, event=False):
    """A response object. Inside an event (`event`: the validated event, or
    None when it failed) the SDK check was the event's, so it is not repeated."""
    if event is False:
        resp = r.validate(where, Response.model_validate, v)
    else:
        resp = event.response if event is not None else None
    if not final:
        r.expect(where, "status", v.get("status") == "in_progress", "an opening response is in_progress")
        r.expect(where, "output", v.get("output") == [], "an opening response has no output")
        return resp
    r.expect(where, "status", v.get("status") in ("completed", "incomplete", "cancelled"), f"final status {v.get('status')!r}")
    if v.get("status") == "incomplete":
        r.expect(where, "incomplete_details.reason", (v.get("incomplete_details") or {}).get("reason") == "max_output_tokens", "an incomplete response says why")
    u = v.get("usage")
    r.expect(where, "usage", isinstance(u, dict), "a final response carries usage")
    if isinstance(u, dict):
        r.expect(where, "usage.input_tokens_details.cached_tokens", isinstance((u.get("input_tokens_details") or {}).get("cached_tokens"), int), "missing")
        r.expect(where, "usage.output_tokens_details.reasoning_tokens", isinstance((u.get("output_tokens_details") or {}).get("reasoning_tokens"), int), "missing")
        r.expect(where, "usage.total_tokens", u.get("total_tokens") == u.get("input_tokens", 0) + u.get("output_tokens", 0), "not the sum")
    calls = [i for i, item in enumerate(v.get("output", [])) if item.get("type") == "function_call"]
    for i, item in enumerate(v.get("output", [])):
        r.expect(where, f"output.{i}.status", item.get("status") == "completed", f"a final item is completed, got {item.get('status')!r}")
        if item.get("type") == "function_call":
            if v.get("status") == "incomplete" and i == calls[-1] and not is_json_object(item.get("arguments")):
                # A call the output's end cut is never completed (issue 23).
                r.expect(where, f"output.{i}.arguments", is_object_prefix(item.get("arguments")), "a cut call's arguments are not an object's beginning")
            else:
                r.expect(where, f"output.{i}.arguments", is_json_object(item.get("arguments")), "not a JSON object")
            r.expect(where, f"output.{i}.call_id", bool(item.get("call_id")), "empty call_id")
    if resp is not None:
        try:
            resp.output_text  # the property every quick-start reads
        except Exception as e:
            r.fail(where, "output_text", f"{type(e).__name__}: {e}")
    return resp


def responses_stream(r, text, oneshot):
    evs = [(i, v) for i, v in events(r, text, named=True) if v != "[DONE]"]
    if not evs:
        r.fail("stream", "(events)", "no events")
        return
    from openai.lib.streaming.responses._responses import ResponseStreamState

    state = ResponseStreamState(input_tools=omit, text_format=omit)
    types = [v.get("type") for _, v in evs]
    r.expect("stream", "(order)", types[:2] == ["response.created", "response.in_progress"], f"starts with {types[:2]}")
    r.expect("stream", "(order)", types[-1] in ("response.completed", "response.incomplete"), f"ends with {types[-1]!r}")
    open_items = {}
    current = None
    for n, (i, v) in enumerate(evs):
        where = f"event {i} ({v.get('type')})"
        e = r.event(where, RESPONSE_EVENTS, RESPONSE_EVENT_TYPES, v)
        r.expect(where, "sequence_number", v.get("sequence_number") == n, f"{v.get('sequence_number')!r}, expected {n}")
        t = v.get("type")
        if t in ("response.created", "response.in_progress"):
            responses_object(r, where + " response", v.get("response", {}), final=False, event=e)
        elif t in ("response.completed", "response.incomplete"):
            st = v.get("response", {}).get("status")
            want = "response.incomplete" if st == "incomplete" else "response.completed"
            r.expect(where, "type", t == want, f"a response with status {st!r} ends with {want}")
            responses_object(r, where + " response", v.get("response", {}), event=e)
            if oneshot is not None:
                r.expect(where, "response", v.get("response") == oneshot, "the final response is not the one-shot response")
        elif t == "response.output_item.added":
            r.expect(where, "output_index", current is None, f"item {current} is still open")
            current = v["output_index"]
            open_items[current] = v["item"]
            r.expect(where, "item.status", v["item"].get("status") == "in_progress", "an added item is in_progress")
        elif t == "response.output_item.done":
            r.expect(where, "output_index", v["output_index"] == current, f"done for item {v['output_index']}, open is {current}")
            r.expect(where, "item.id", open_items.get(v["output_index"], {}).get("id") == v["item"].get("id"), "the item id changed")
            current = None
        elif "output_index" in v:
            # The API streams one item at a time: every event is the open item's.
            r.expect(where, "output_index", v["output_index"] == current, f"an event for item {v['output_index']}, open is {current}")
            r.expect(where, "item_id", open_items.get(v["output_index"], {}).get("id") == v.get("item_id"), "item_id names another item")
        if e is not None and state is not None:
            try:
                state.handle_event(e)
            except Exception as ex:
                r.fail(where, "(fold)", f"ResponseStreamState: {type(ex).__name__}: {ex}")
                state = None  # one report; the events after it would all fail


# ---- Anthropic Messages ----------------------------------------------------


def anthropic_object(r, where, v, final=True):
    m = r.validate(where, at.Message.model_validate, v)
    u = v.get("usage") or {}
    r.expect(where, "usage.input_tokens", isinstance(u.get("input_tokens"), int), "missing")
    r.expect(where, "usage.output_tokens", isinstance(u.get("output_tokens"), int), "missing")
    if not final:
        r.expect(where, "content", v.get("content") == [], "message_start has no content")
        r.expect(where, "stop_reason", v.get("stop_reason") is None, "message_start has no stop_reason")
        return m
    r.expect(where, "stop_reason", v.get("stop_reason") in ANTHROPIC_STOP, f"{v.get('stop_reason')!r}")
    for i, b in enumerate(v.get("content", [])):
        if b.get("type") == "tool_use":
            r.expect(where, f"content.{i}.input", isinstance(b.get("input"), dict), "input is not an object")
            r.expect(where, f"content.{i}.id", bool(b.get("id")), "empty id")
        if b.get("type") == "thinking":
            r.expect(where, f"content.{i}.signature", bool(b.get("signature")), "a finished thinking block is signed")
    calls = any(b.get("type") == "tool_use" for b in v.get("content", []))
    if v.get("stop_reason") == "tool_use":
        r.expect(where, "stop_reason", calls, "tool_use without a tool_use block")
    return m


BLOCK_START = {
    "text": {"type": "text", "text": ""},
    "thinking": {"type": "thinking", "thinking": "", "signature": ""},
}


def anthropic_stream(r, text, oneshot):
    from anthropic.lib.streaming._messages import accumulate_event

    evs = [(i, v) for i, v in events(r, text, named=True) if v != "[DONE]"]
    types = [v.get("type") for _, v in evs]
    r.expect("stream", "(order)", types[:1] == ["message_start"], f"starts with {types[:1]}")
    r.expect("stream", "(order)", types[-2:] == ["message_delta", "message_stop"], f"ends with {types[-2:]}")
    snapshot = None
    json_bufs = {}
    folding_failed = False
    open_block = None
    for i, v in evs:
        where = f"event {i} ({v.get('type')})"
        e = r.event(where, MESSAGE_EVENTS, MESSAGE_EVENT_TYPES, v)
        t = v.get("type")
        if t == "message_start":
            anthropic_object(r, where + " message", v.get("message", {}), final=False)
        elif t == "content_block_start":
            b = v.get("content_block", {})
            r.expect(where, "index", open_block is None, f"block {open_block} is still open")
            open_block = v.get("index")
            if b.get("type") in BLOCK_START:
                r.expect(where, "content_block", b == BLOCK_START[b["type"]], f"an opening {b['type']} block is {BLOCK_START[b['type']]}")
            elif b.get("type") == "tool_use":
                r.expect(where, "content_block.input", b.get("input") == {}, "an opening tool_use block has input {}")
                r.expect(where, "content_block.id", bool(b.get("id")), "empty id")
        elif t == "content_block_delta":
            r.expect(where, "index", v.get("index") == open_block, f"a delta for block {v.get('index')}, open is {open_block}")
        elif t == "content_block_stop":
            r.expect(where, "index", v.get("index") == open_block, f"stops block {v.get('index')}, open is {open_block}")
            open_block = None
        elif t == "message_delta":
            d = v.get("delta", {})
            r.expect(where, "delta.stop_reason", d.get("stop_reason") in ANTHROPIC_STOP, f"{d.get('stop_reason')!r}")
            r.expect(where, "usage.output_tokens", isinstance((v.get("usage") or {}).get("output_tokens"), int), "missing")
        if e is not None and not folding_failed:
            try:
                snapshot = accumulate_event(event=e, current_snapshot=snapshot, json_bufs=json_bufs)
            except Exception as ex:
                r.fail(where, "(fold)", f"accumulate_event: {type(ex).__name__}: {ex}")
                folding_failed = True
    if snapshot is not None and not r.failures:
        folded = strip_none(snapshot.model_dump(mode="json"))
        anthropic_object(r, "fold", folded)
        if oneshot is not None:
            for k in ("content", "stop_reason", "usage"):
                got, want = folded.get(k), strip_none(oneshot.get(k))
                r.expect("fold", k, got == want, f"{json.dumps(got)[:200]} != one-shot {json.dumps(want)[:200]}")


def strip_none(v):
    """A JSON value without its null fields (the SDK's dumps write every optional field)."""
    if isinstance(v, dict):
        return {k: strip_none(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [strip_none(x) for x in v]
    return v


# ---- driver ----------------------------------------------------------------

OBJECT = {"chat": chat_object, "responses": responses_object, "anthropic": anthropic_object}
STREAM = {"chat": chat_stream, "responses": responses_stream, "anthropic": anthropic_stream}


def check(name, api, stream, text, oneshot_text=None, include_usage=None):
    r = Report(name)
    if stream:
        oneshot = json.loads(oneshot_text) if oneshot_text else None
        if api == "chat":
            chat_stream(r, text, oneshot, include_usage)
        else:
            STREAM[api](r, text, oneshot)
    else:
        try:
            v = json.loads(text)
        except json.JSONDecodeError as e:
            r.fail("object", "(root)", f"not JSON: {e}")
        else:
            OBJECT[api](r, "object", v)
    return r.failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--api", choices=sorted(OBJECT))
    ap.add_argument("--stream", action="store_true")
    ap.add_argument("--manifest")
    ap.add_argument("file", nargs="?")
    a = ap.parse_args()
    jobs = []
    if a.manifest:
        with open(a.manifest, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    jobs.append(json.loads(line))
    elif a.api and a.file:
        jobs.append({"name": a.file, "api": a.api, "stream": a.stream, "path": a.file})
    else:
        ap.error("give --manifest, or --api and a FILE")
    failures = []
    for j in jobs:
        with open(j["path"], encoding="utf-8") as f:
            text = f.read()
        one = None
        if j.get("oneshot"):
            with open(j["oneshot"], encoding="utf-8") as f:
                one = f.read()
        failures += check(j["name"], j["api"], j.get("stream", False), text, one, j.get("include_usage"))
    for line in failures:
        print(line)
    bad = len({line.split(": ", 1)[0] for line in failures})
    print(f"sdk-validate: {len(jobs)} documents, {bad} with failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
