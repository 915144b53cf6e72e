"""Opt-in check: the bodies of Sift's scale-out endpoints against vLLM
0.34.0's own pydantic models (issue #21's acceptance), run by hand with the
oracle venv.

    PY=$(bash scripts/oracle/install.sh | tail -1)
    $PY scripts/oracle/scaleout-pydantic.py --sift target/release/sift

Starts `sift serve --demo` and, for every demo model, drives every endpoint
the way a router drives vLLM's render server; each request body is validated
with the model vLLM's router declares for it and each response body with
the model vLLM's handler answers with:

| endpoint | request | response |
| --- | --- | --- |
| /v1/chat/completions/render | ChatCompletionRequest | GenerateRequest |
| /v1/completions/render | CompletionRequest | list[GenerateRequest] |
| /v1/messages/render | AnthropicMessagesRequest | GenerateRequest |
| /v1/responses/render | ResponsesRequest | GenerateRequest |
| /v1/chat/completions/derender | DerenderChatRequest / DerenderChatStreamRequest | ChatCompletionResponse / DerenderChatStreamResponse |
| /v1/completions/derender | DerenderCompletionRequest / DerenderCompletionStreamRequest | CompletionResponse / DerenderCompletionStreamResponse |

The render answer is also sent on as vLLM's worker would read it
(`GenerateRequest` → the derender bodies built from its `token_ids`).
Reported per body: a validation error (a mismatch: vLLM would refuse it),
and every key the model does not declare (pydantic ignores them, so a client
that re-serializes through vLLM's models drops them; `stream_state.sift_state`
is Sift's own and expected). Exit status 1 on any validation error.
"""

import argparse
import json
import os
import subprocess
import sys
import urllib.request

import pydantic
from vllm.entrypoints.anthropic.protocol import AnthropicMessagesRequest
from vllm.entrypoints.openai.chat_completion.protocol import (
    ChatCompletionRequest,
    ChatCompletionResponse,
)
from vllm.entrypoints.openai.completion.protocol import CompletionRequest, CompletionResponse
from vllm.entrypoints.openai.responses.protocol import ResponsesRequest
from vllm.entrypoints.scale_out.token_in_token_out.protocol import (
    DerenderChatRequest,
    DerenderChatStreamRequest,
    DerenderChatStreamResponse,
    DerenderCompletionRequest,
    DerenderCompletionStreamRequest,
    DerenderCompletionStreamResponse,
    GenerateRequest,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXPECTED_EXTRA = {"stream_state.sift_state"}
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


class Report:
    def __init__(self):
        self.errors, self.extras, self.checked = [], {}, 0

    def check(self, what, model, body, is_list=False):
        """Validates `body` with `model`; records errors and undeclared keys."""
        self.checked += 1
        try:
            if is_list:
                objs = pydantic.TypeAdapter(list[model]).validate_python(body)
                for i, (o, b) in enumerate(zip(objs, body)):
                    self._extra(what, f"[{i}]", o, b)
            else:
                self._extra(what, "", model.model_validate(body), body)
        except pydantic.ValidationError as e:
            self.errors.append(f"{what}: {model.__name__}: {e}")

    def _extra(self, what, at, obj, body):
        if isinstance(obj, pydantic.BaseModel) and isinstance(body, dict):
            declared = set(type(obj).model_fields) | {f.alias for f in type(obj).model_fields.values() if f.alias}
            allows = type(obj).model_config.get("extra") == "allow"
            for k, v in body.items():
                path = f"{at}.{k}" if at else k
                if k not in declared:
                    if not allows:
                        self.extras.setdefault(path, set()).add(f"{what} ({type(obj).__name__})")
                    continue
                self._extra(what, path, getattr(obj, k, None), v)
        elif isinstance(obj, list) and isinstance(body, list):
            for o, b in zip(obj, body):
                self._extra(what, f"{at}[]", o, b)
        elif isinstance(obj, dict) and isinstance(body, dict):
            for k, v in body.items():
                if k in obj:
                    self._extra(what, f"{at}.{k}", obj[k], v)


def post(base, path, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def start(binary):
    p = subprocess.Popen([binary, "serve", "--demo", "--port", "0", "--state-key", "pydantic-check-state-key"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in p.stderr:
        if "listening on http://" in line:
            return p, "http://" + line.split("listening on http://")[1].split()[0]
    sys.exit("sift serve --demo did not start")


def demos():
    out = []
    for f in ("qwen3", "qwen3-coder", "deepseek-r1", "gpt-oss"):
        d = json.load(open(os.path.join(ROOT, "crates", "llmsift-serve", "demo", f + ".json"), encoding="utf-8"))
        out.append((d["name"], d["with_tools"]))
    return out


def run(base, rep):
    for model, output in demos():
        chat = {"model": model, "messages": [{"role": "user", "content": "What's the weather in Paris?"}],
                "tools": TOOLS, "tool_choice": "auto", "stream": True, "stream_options": {"include_usage": True},
                "max_tokens": 512, "temperature": 0.5}
        rep.check(f"{model} chat render request", ChatCompletionRequest, chat)
        st, g = post(base, "/v1/chat/completions/render", chat)
        if st != 200:
            rep.errors.append(f"{model} chat render: HTTP {st}: {g}")
            continue
        rep.check(f"{model} chat render response", GenerateRequest, g)
        prompt = g["token_ids"]
        # The output's ids, as a worker would generate them.
        st, ids = post(base, "/v1/completions/render", {"model": model, "prompt": output})
        out = ids[0]["token_ids"]

        anth = {"model": model, "max_tokens": 256, "messages": [{"role": "user", "content": "Weather in Paris?"}],
                "tools": [{"name": "get_weather", "description": "Weather",
                           "input_schema": TOOLS[0]["function"]["parameters"]}]}
        rep.check(f"{model} messages render request", AnthropicMessagesRequest, anth)
        st, r = post(base, "/v1/messages/render", anth)
        (rep.check(f"{model} messages render response", GenerateRequest, r) if st == 200
         else rep.errors.append(f"{model} messages render: HTTP {st}: {r}"))

        resp = {"model": model, "input": "Weather in Paris?", "max_output_tokens": 256,
                "tools": [{"type": "function", "name": "get_weather", "description": "Weather",
                           "parameters": TOOLS[0]["function"]["parameters"]}]}
        rep.check(f"{model} responses render request", ResponsesRequest, resp)
        st, r = post(base, "/v1/responses/render", resp)
        (rep.check(f"{model} responses render response", GenerateRequest, r) if st == 200
         else rep.errors.append(f"{model} responses render: HTTP {st}: {r}"))

        comp = {"model": model, "prompt": ["Once upon a time", "The weather in Paris"], "max_tokens": 32}
        rep.check(f"{model} completions render request", CompletionRequest, comp)
        st, r = post(base, "/v1/completions/render", comp)
        (rep.check(f"{model} completions render response", GenerateRequest, r, is_list=True) if st == 200
         else rep.errors.append(f"{model} completions render: HTTP {st}: {r}"))

        # Chat derender, whole.
        creq = {k: v for k, v in chat.items()}
        body = {"model": model, "generate_response": {"request_id": g["request_id"], "choices": [
            {"index": 0, "token_ids": out, "finish_reason": "stop"}]},
            "prompt_tokens": len(prompt), "prompt_token_ids": prompt, "chat_request": creq}
        rep.check(f"{model} chat derender request", DerenderChatRequest, body)
        st, r = post(base, "/v1/chat/completions/derender", body)
        (rep.check(f"{model} chat derender response", ChatCompletionResponse, r) if st == 200
         else rep.errors.append(f"{model} chat derender: HTTP {st}: {r}"))

        # Chat derender, streamed in 4-token chunks.
        state = None
        parts = [out[i:i + 4] for i in range(0, len(out), 4)]
        for k, part in enumerate(parts):
            body = {"stream": True, "model": model,
                    "generate_chunk": {"request_id": g["request_id"], "choices": [
                        {"index": 0, "token_ids": part, "finish_reason": "stop" if k + 1 == len(parts) else None}]},
                    "stream_state": state, "prompt_tokens": len(prompt), "prompt_token_ids": prompt,
                    "chat_request": creq}
            rep.check(f"{model} chat derender stream request", DerenderChatStreamRequest, body)
            st, r = post(base, "/v1/chat/completions/derender", body)
            if st != 200:
                rep.errors.append(f"{model} chat derender stream chunk {k}: HTTP {st}: {r}")
                break
            rep.check(f"{model} chat derender stream response", DerenderChatStreamResponse, r)
            state = r["stream_state"]

        # Completions derender, whole and streamed.
        creq = {"model": model, "prompt": "Once upon a time", "max_tokens": 64}
        body = {"model": model, "generate_responses": [{"request_id": "cmpl-1", "choices": [
            {"index": 0, "token_ids": out[:40], "finish_reason": "length"}]}],
            "prompt_tokens": [len(prompt)], "completion_request": creq}
        rep.check(f"{model} completions derender request", DerenderCompletionRequest, body)
        st, r = post(base, "/v1/completions/derender", body)
        (rep.check(f"{model} completions derender response", CompletionResponse, r) if st == 200
         else rep.errors.append(f"{model} completions derender: HTTP {st}: {r}"))
        state = None
        for k in range(0, 40, 4):
            body = {"stream": True, "model": model,
                    "generate_chunk": {"request_id": "cmpl-2", "choices": [
                        {"index": 0, "token_ids": out[k:k + 4], "finish_reason": "length" if k == 36 else None}]},
                    "stream_state": state, "prompt_tokens": len(prompt), "completion_request": creq}
            rep.check(f"{model} completions derender stream request", DerenderCompletionStreamRequest, body)
            st, r = post(base, "/v1/completions/derender", body)
            if st != 200:
                rep.errors.append(f"{model} completions derender stream: HTTP {st}: {r}")
                break
            rep.check(f"{model} completions derender stream response", DerenderCompletionStreamResponse, r)
            state = r["stream_state"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sift", default=os.path.join(ROOT, "target", "release", "sift"))
    a = ap.parse_args()
    proc, base = start(a.sift)
    rep = Report()
    try:
        run(base, rep)
    finally:
        proc.kill()
    print(f"{rep.checked} bodies validated against vLLM 0.34.0's pydantic models; {len(rep.errors)} refused")
    for e in rep.errors:
        print("  REFUSED", e[:1200])
    for path, where in sorted(rep.extras.items()):
        tag = "sift's own" if path in EXPECTED_EXTRA else "UNDECLARED"
        print(f"  {tag}: `{path}` in {len(where)} kind(s) of body, e.g. {sorted(where)[0]}")
    sys.exit(1 if rep.errors or any(p not in EXPECTED_EXTRA for p in rep.extras) else 0)


if __name__ == "__main__":
    main()
