"""The official `openai` client against `sift serve`: one streamed request
with tools and one one-shot request, printed as the library exposes them
(reasoning is the `reasoning` extra field of the message / delta)."""

import json
import os

import openai

client = openai.OpenAI(base_url=os.environ["SIFT_BASE_URL"], api_key=os.environ["SIFT_API_KEY"])
tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}}}}}]
messages = [{"role": "user", "content": "Weather in Paris?"}]

reasoning, content, calls, finish = "", "", {}, None
stream = client.chat.completions.create(model="qwen3", messages=messages, tools=tools, stream=True)
for chunk in stream:
    for choice in chunk.choices:
        d = choice.delta
        reasoning += (d.model_extra or {}).get("reasoning") or ""
        content += d.content or ""
        for tc in d.tool_calls or []:
            c = calls.setdefault(tc.index, {"name": "", "arguments": ""})
            if tc.function and tc.function.name:
                c["name"] += tc.function.name
            if tc.function and tc.function.arguments:
                c["arguments"] += tc.function.arguments
        finish = choice.finish_reason or finish
streamed = {
    "reasoning": reasoning,
    "content": content,
    "tool_calls": [{"name": c["name"], "arguments": json.loads(c["arguments"])} for _, c in sorted(calls.items())],
    "finish_reason": finish,
}

r = client.chat.completions.create(model="qwen3", messages=[{"role": "user", "content": "Paris in spring?"}])
m = r.choices[0].message
oneshot = {
    "reasoning": (m.model_extra or {}).get("reasoning"),
    "content": m.content,
    "tool_calls": [{"name": t.function.name, "arguments": json.loads(t.function.arguments)} for t in m.tool_calls or []],
    "finish_reason": r.choices[0].finish_reason,
}
print(json.dumps({"stream": streamed, "oneshot": oneshot}, ensure_ascii=False))
