#!/usr/bin/env python3
"""Writes the field names of vLLM 0.34's Chat Completions request model
(`vllm.entrypoints.openai.chat_completion.protocol.ChatCompletionRequest`)
to `scripts/oracle/vllm-chat-request-fields.json`, sorted.

    ~/.cache/sift/oracle/venv/bin/python scripts/oracle/request-fields.py

Run with the oracle's venv (scripts/oracle/install.sh). The gateway's field
table (`FIELDS` in crates/llmsift-serve/src/outbound.rs, shown in
docs/serve.md) is checked against the committed list by a unit test, so CI
needs no vLLM.
"""
import json
import os
import warnings

warnings.filterwarnings("ignore")
import vllm  # noqa: E402
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest  # noqa: E402

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vllm-chat-request-fields.json")
doc = {"vllm": vllm.__version__, "model": "ChatCompletionRequest", "fields": sorted(ChatCompletionRequest.model_fields)}
with open(out, "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
print(f"{len(doc['fields'])} fields of vLLM {doc['vllm']} → {out}")
