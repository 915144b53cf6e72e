"""Records the `stream_state`s vLLM 0.34.0's own derender server makes, for
`crates/llmsift-cli/tests/scaleout_vllm.rs` (a stream begun on vLLM's tier
and continued on Sift's): run by hand with the oracle venv.

    PY=$(bash scripts/oracle/install.sh | tail -1)
    $PY scripts/oracle/vllm-states.py     # writes crates/llmsift-cli/tests/data/scaleout-vllm-states.jsonl

vLLM's streaming derender has two kinds of state (`DerenderStreamState`):

- the plain path (no parser configured; every completions stream): the
  detokenizer window `prev_token_ids` (seeded with the prompt's tail on
  the first call) with `prefix_offset` and `read_offset`;
- the parser path: every output id so far (`output_token_ids`, cut by
  `output_chunk_lens`), replayed on each call, plus `role_sent`,
  `tools_streamed` and `last_tool_call_ids`.

For each, vLLM's server (`scripts/oracle/vllm-render.sh`, one at a time) is
driven over whole streams (Qwen3 tokenizer: multi-byte characters split over
byte tokens, so some states hold ids; 1- and 3-token chunks; with and without
`prompt_token_ids`), and every call's request and answer is kept: one line per
stream with its `path`, `model` (the pair), `calls` ([{body, chunk,
stream_state}] in order).
"""

import importlib.util
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "crates", "llmsift-cli", "tests", "data", "scaleout-vllm-states.jsonl")

spec = importlib.util.spec_from_file_location("scaleout_diff", os.path.join(ROOT, "scripts", "scaleout-diff.py"))
diff = importlib.util.module_from_spec(spec)
spec.loader.exec_module(diff)

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
PLAIN = "Plain words, ünïcödé, emoji 🦀🧪 and 漢字 split over byte tokens; done."
PARSED = ("<think>\nThe weather 🌦 in Paris: ask the tool.\n</think>\n\nLet me look that up 🔎.\n"
          "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris ☀\"}}\n</tool_call>")
PROMPT = "<|im_start|>user\nSay something in plain words.<|im_end|>\n<|im_start|>assistant\n"


def streams(h, model, path, text, creq, sizes, with_prompt):
    tk, eos = diff.tokenizer("qwen3")
    out = tk.encode(text, add_special_tokens=False).ids + [eos]
    prompt = tk.encode(PROMPT, add_special_tokens=False).ids
    rows = []
    for size in sizes:
        for give_prompt in with_prompt:
            parts = [out[i:i + size] for i in range(0, len(out), size)]
            state, calls = None, []
            rid = f"states-{model}-{size}-{int(give_prompt)}"
            for k, part in enumerate(parts):
                body = {"stream": True, "model": model,
                        "generate_chunk": {"request_id": rid, "choices": [
                            {"index": 0, "token_ids": part, "finish_reason": "stop" if k + 1 == len(parts) else None}]},
                        "prompt_tokens": len(prompt)}
                if give_prompt:
                    body["prompt_token_ids"] = prompt
                if creq is not None:
                    body["chat_request" if path.startswith("/v1/chat") else "completion_request"] = creq
                st, resp = h.post(path, {**body, "stream_state": state})
                if st != 200:
                    sys.exit(f"{model} {path}: {st} {resp}")
                state = resp["stream_state"]
                calls.append({"body": body, "chunk": resp["chunk"], "stream_state": state})
            rows.append({"id": rid, "path": path, "model": model, "size": size, "calls": calls})
    return rows


def main():
    rows = []
    # The plain path: no parser.
    h, err = diff.start_vllm("none+none", None, None, "qwen3", 8392)
    if h is None:
        sys.exit(f"vLLM's server did not start: {err}")
    try:
        chat = {"model": "none+none", "messages": [diff.USER]}
        rows += streams(h, "none+none", "/v1/chat/completions/derender", PLAIN, chat, [1, 3], [True, False])
        rows += streams(h, "none+none", "/v1/chat/completions/derender", PLAIN, None, [2], [True])
        rows += streams(h, "none+none", "/v1/completions/derender", PLAIN,
                        {"model": "none+none", "prompt": "Say something"}, [1, 3], [True, False])
    finally:
        diff.stop_vllm(h)
    # The parser path: Qwen3 reasoning + Hermes calls.
    h, err = diff.start_vllm("qwen3+hermes", "qwen3", "hermes", "qwen3", 8392)
    if h is None:
        sys.exit(f"vLLM's server did not start: {err}")
    try:
        chat = {"model": "qwen3+hermes", "messages": [diff.USER], "tools": TOOLS}
        rows += streams(h, "qwen3+hermes", "/v1/chat/completions/derender", PARSED, chat, [1, 4], [True])
    finally:
        diff.stop_vllm(h)
    with open(OUT, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(rows)} streams, {sum(len(r['calls']) for r in rows)} states → {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
