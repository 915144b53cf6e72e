#!/usr/bin/env python3
"""Renders the golden outputs for llmsift-templates' byte-for-byte test.

Every template in ${SIFT_ASSETS:-<repo>/.assets}/templates/*.jinja (put there
by scripts/fetch-assets.sh) is rendered with every conversation of
conversations.json through HuggingFace transformers' own machinery:
`tokenizer.apply_chat_template(..., tokenize=False)` on a dummy tokenizer whose
special tokens are the ones conversations.json names. That is transformers'
ImmutableSandboxedEnvironment (trim_blocks, lstrip_blocks, loopcontrols, the
AssistantTracker `{% generation %}` extension), its `tojson`,
`raise_exception`, `strftime_now`, `dict` and `namespace`; its message
normalisation (keys whose value is None dropped, reasoning fields aliased).

Before the template sees the messages, they go through the same request
normalisation Sift does (and vLLM does before calling transformers):
a tool call's `function.arguments` JSON string is parsed into an object, and
a message with reasoning under any name also gets it under `reasoning`.

`strftime_now` is pinned to conversations.json's `now`, so the outputs are
reproducible. The chat templates of the real tokenizer configs in
${SIFT_ASSETS}/tokenizers/*/tokenizer_config.json are rendered too, by
`AutoTokenizer.from_pretrained` (so with their own special tokens), as
`tokenizer-<name>__<conversation>.txt`.
Outputs: `<template>__<conversation>.txt` next to this script,
and manifest.json recording, for every pair, "ok" or the error jinja2 raised.
It also renders the feature snippets of snippets.json (one Jinja2 feature
each) into snippets.expected.json.

Usage (once; the outputs are committed test data):
    python3 -m venv /tmp/tplvenv && /tmp/tplvenv/bin/pip install transformers jinja2 tokenizers
    /tmp/tplvenv/bin/python crates/llmsift-templates/tests/golden/make_golden.py
"""

import copy
import datetime as _dt
import json
import os
import pathlib
import sys

import jinja2
import tokenizers
import transformers
from tokenizers import Tokenizer, models
from transformers import AutoTokenizer, PreTrainedTokenizerFast
from transformers.utils import chat_template_utils

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[3]
ASSETS = pathlib.Path(os.environ.get("SIFT_ASSETS", REPO / ".assets"))
TEMPLATES = ASSETS / "templates"


SNIPPET_MESSAGES = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


def pin_now(now: _dt.datetime) -> None:
    """Makes transformers' `strftime_now` see a fixed date."""

    class FixedDatetime(_dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return now

    chat_template_utils.datetime = FixedDatetime


def normalize_request(messages):
    """What Sift's renderer does before the template (as vLLM does)."""
    out = []
    for message in copy.deepcopy(messages):
        message = {k: v for k, v in message.items() if v is not None}
        for call in message.get("tool_calls") or []:
            function = call.get("function")
            if isinstance(function, dict) and isinstance(function.get("arguments"), str):
                try:
                    function["arguments"] = json.loads(function["arguments"])
                except ValueError:
                    pass
        reasoning = next(
            (message[k] for k in ("reasoning_content", "thinking", "reasoning") if message.get(k) is not None),
            None,
        )
        if reasoning is not None and message.get("reasoning") is None:
            message["reasoning"] = reasoning
        out.append(message)
    return out


def main() -> int:
    if not TEMPLATES.is_dir():
        print(f"error: {TEMPLATES} is missing: run scripts/fetch-assets.sh", file=sys.stderr)
        return 1
    data = json.loads((HERE / "conversations.json").read_text(encoding="utf-8"))
    pin_now(_dt.datetime.fromisoformat(data["now"]))
    special = data["special_tokens"]
    vocab = {"<unk>": 0}
    for token in special.values():
        vocab.setdefault(token, len(vocab))
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(models.WordLevel(vocab, unk_token="<unk>")), **special
    )

    for stale in HERE.glob("*__*.txt"):
        stale.unlink()
    results = {}
    for path in sorted(TEMPLATES.glob("*.jinja")):
        template = path.read_text(encoding="utf-8")
        for conv in data["conversations"]:
            key = f"{path.stem}__{conv['name']}"
            try:
                rendered = tokenizer.apply_chat_template(
                    normalize_request(conv["messages"]),
                    tools=data["tools"] if conv.get("with_tools") else None,
                    chat_template=template,
                    add_generation_prompt=conv.get("add_generation_prompt", False),
                    tokenize=False,
                    **conv.get("kwargs", {}),
                )
            except Exception as e:  # noqa: BLE001 - every failure is recorded
                results[key] = {"status": "error", "error": f"{type(e).__name__}: {e}"}
                continue
            (HERE / f"{key}.txt").write_bytes(rendered.encode("utf-8"))
            results[key] = {"status": "ok"}

    # The chat templates of the real tokenizer configs (with their own
    # special tokens), loaded by transformers' AutoTokenizer.
    for config in sorted((ASSETS / "tokenizers").glob("*/tokenizer_config.json")):
        if json.loads(config.read_text(encoding="utf-8")).get("chat_template") is None:
            continue
        real = AutoTokenizer.from_pretrained(str(config.parent))
        for conv in data["conversations"]:
            key = f"tokenizer-{config.parent.name}__{conv['name']}"
            try:
                rendered = real.apply_chat_template(
                    normalize_request(conv["messages"]),
                    tools=data["tools"] if conv.get("with_tools") else None,
                    add_generation_prompt=conv.get("add_generation_prompt", False),
                    tokenize=False,
                    **conv.get("kwargs", {}),
                )
            except Exception as e:  # noqa: BLE001
                results[key] = {"status": "error", "error": f"{type(e).__name__}: {e}"}
                continue
            (HERE / f"{key}.txt").write_bytes(rendered.encode("utf-8"))
            results[key] = {"status": "ok"}

    # Feature snippets: small templates exercising one Jinja2 feature each.
    snippets = json.loads((HERE / "snippets.json").read_text(encoding="utf-8"))
    snippet_results = {}
    for name, template in snippets["snippets"].items():
        try:
            rendered = tokenizer.apply_chat_template(
                SNIPPET_MESSAGES, chat_template=template, tokenize=False, **snippets["context"]
            )
            snippet_results[name] = {"status": "ok", "output": rendered}
        except Exception as e:  # noqa: BLE001
            snippet_results[name] = {"status": "error", "error": f"{type(e).__name__}: {e}"}
    (HERE / "snippets.expected.json").write_text(
        json.dumps(snippet_results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )

    manifest = {
        "generator": {
            "transformers": transformers.__version__,
            "jinja2": jinja2.__version__,
            "tokenizers": tokenizers.__version__,
            "python": sys.version.split()[0],
            "templates_pin": (TEMPLATES / ".pin").read_text().strip() if (TEMPLATES / ".pin").exists() else None,
        },
        "results": results,
    }
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    ok = sum(1 for r in results.values() if r["status"] == "ok")
    print(f"make_golden: {ok} rendered, {len(results) - ok} raised, of {len(results)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
