"""Validates what `sift serve` returns on each endpoint, streamed and not,
against the official SDKs' own pydantic types (strict `model_validate`, not
the lenient `construct` the clients use), then reads the answers through
the SDKs' streaming helpers. Prints one line per check; exits 1 on a failure."""

import json
import os
import sys
import urllib.request

import anthropic
import openai
import pydantic
from anthropic.types import Message, RawMessageStreamEvent
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent

BASE = os.environ["SIFT_BASE_URL"]  # http://host:port
KEY = os.environ["SIFT_API_KEY"]
MODEL = os.environ.get("SIFT_MODEL", "qwen3")
failures = []


def post(path, body):
    req = urllib.request.Request(BASE + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"content-type": "application/json", "authorization": f"Bearer {KEY}"})
    with urllib.request.urlopen(req) as r:
        return r.read().decode()


def frames(text):
    for frame in text.split("\n\n"):
        data = "".join(l[6:] for l in frame.splitlines() if l.startswith("data: "))
        if data and data != "[DONE]":
            yield json.loads(data)


def check(name, fn):
    try:
        fn()
        print(f"ok {name}")
    except (pydantic.ValidationError, AssertionError, KeyError, ValueError) as e:
        failures.append(name)
        print(f"FAILED {name}: " + str(e)[:2000].replace("\n", " | "))


chat_tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
msgs = [{"role": "user", "content": "Weather in Paris?"}]
event = pydantic.TypeAdapter(ResponseStreamEvent)
aevent = pydantic.TypeAdapter(RawMessageStreamEvent)

for tools in (True, False):
    t = {"tools": chat_tools} if tools else {}
    rt = {"tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]} if tools else {}
    at = {"tools": [{"name": "get_weather", "input_schema": {"type": "object"}}]} if tools else {}
    tag = "tools" if tools else "plain"
    check(f"chat {tag}", lambda: ChatCompletion.model_validate_json(
        post("/v1/chat/completions", {"model": MODEL, "messages": msgs, **t})))
    check(f"chat stream {tag}", lambda: [ChatCompletionChunk.model_validate(f) for f in frames(
        post("/v1/chat/completions", {"model": MODEL, "messages": msgs, "stream": True,
                                      "stream_options": {"include_usage": True}, **t}))])
    check(f"responses {tag}", lambda: Response.model_validate_json(
        post("/v1/responses", {"model": MODEL, "input": "Weather in Paris?", **rt})))
    check(f"responses stream {tag}", lambda: [event.validate_python(f) for f in frames(
        post("/v1/responses", {"model": MODEL, "input": "Weather in Paris?", "stream": True, **rt}))])
    check(f"messages {tag}", lambda: Message.model_validate_json(
        post("/v1/messages", {"model": MODEL, "max_tokens": 300, "messages": msgs, **at})))
    check(f"messages stream {tag}", lambda: [aevent.validate_python(f) for f in frames(
        post("/v1/messages", {"model": MODEL, "max_tokens": 300, "messages": msgs, "stream": True, **at}))])


def anthropic_stream():
    c = anthropic.Anthropic(base_url=BASE, api_key=KEY)
    with c.messages.stream(model=MODEL, max_tokens=300, messages=msgs,
                           tools=[{"name": "get_weather", "input_schema": {"type": "object"}}]) as s:
        m = s.get_final_message()
    kinds = [b.type for b in m.content]
    assert kinds[0] == "thinking" and kinds[-1] == "tool_use", kinds
    assert m.content[-1].name == "get_weather" and m.content[-1].input["city"] == "Paris", m.content[-1]
    assert m.stop_reason == "tool_use", m.stop_reason


def openai_responses_stream():
    c = openai.OpenAI(base_url=BASE + "/v1", api_key=KEY)
    with c.responses.stream(model=MODEL, input="Weather in Paris?",
                            tools=[{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]) as s:
        r = s.get_final_response()
    calls = [o for o in r.output if o.type == "function_call"]
    assert calls and calls[0].name == "get_weather" and json.loads(calls[0].arguments)["city"] == "Paris", r.output


check("anthropic client stream", anthropic_stream)
check("openai responses client stream", openai_responses_stream)
sys.exit(1 if failures else 0)
