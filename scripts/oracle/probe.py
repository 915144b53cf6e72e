"""Labels hand-written outputs with vLLM 0.34.0's serving-path answer.

    SIFT_ORACLE_CACHE=/work/cache/oracle /work/cache/oracle/venv/bin/python \
        scripts/oracle/probe.py ID_PREFIX REASONING TOOL 'REQUEST_JSON' OUTPUT...

REASONING / TOOL are vLLM names or `none`; REQUEST_JSON is the case's
request (`tool_choice`, `prompt_text`, `skip_special_tokens`,
`chat_template_kwargs` …; a tool parser with a non-`none` choice gets the
oracle's three tools when it names none). The tokenizer is the one
`record.py` uses for the pair. Prints one conformance case per OUTPUT
(`ID_PREFIX/1`, `/2` …) with vLLM's one-shot answer as `expected`, and its
streamed answer in `notes` when the two differ: the way the fidelity-*.jsonl
cases are labelled."""
import json
import logging
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
logging.disable(logging.CRITICAL)
import record  # noqa: E402
import scenarios  # noqa: E402
import serving  # noqa: E402


def main():
    prefix, r, t, req = sys.argv[1], *(None if a == "none" else a for a in sys.argv[2:4]), json.loads(sys.argv[4])
    if t and "tools" not in req and req.get("tool_choice") != "none":
        req["tools"] = scenarios.TOOLS
    tok_field, tok, harmony = record.tokenizer_for(r, t)
    for i, text in enumerate(sys.argv[5:], 1):
        ids = tok.encode(text, add_special_tokens=False)
        pids = tok.encode(req.get("prompt_text", ""), add_special_tokens=False)
        sst, _, one, _, streamed, _ = serving.serve(r, t, tok, harmony, req, ids, pids, tok.eos_token_id)
        case = {
            "id": f"{prefix}/{i}", "reasoning_parser": r, "tool_parser": t, "tokenizer": tok_field,
            "request": record.serving_request(req), "model_output": text,
            "stream": {"unit": "tokens", "size": 1}, "streaming": "both",
            "expected": record.expected_of(one),
            "source": "scripts/oracle/probe.py: vLLM 0.34.0 serving path, one shot",
        }
        if not record.same(record.expected_of(streamed), case["expected"]):
            case["notes"] = "vllm-stream-differs: " + json.dumps(record.expected_of(streamed), ensure_ascii=False)
        print(json.dumps(case, ensure_ascii=False))


if __name__ == "__main__":
    main()
