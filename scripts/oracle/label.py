"""Asks vLLM 0.34 for its serving-path one-shot answer to conformance cases.

Run with the oracle venv's python (vLLM's parser layer importable):
    /work/cache/oracle/venv/bin/python scripts/oracle/label.py < cases.jsonl

Each case (the corpus case format) is parsed by `DelegatingParser.parse` of
the named reasoning/tool parsers, built as the server builds them (the
request's tools, `chat_template_kwargs` given to the constructors). The
tokenizer is a stand-in whose vocabulary holds the markers (`vocab`, or a
default list) and whose special tokens are `specials` (default: bos/eos and
ChatML's, as in vLLM's test tokenizers; vLLM's engine drops the text of
special tokens that are not terminals). A request without tools gets no tool
calls from the server (tool_choice "none"), so give cases tools.

Prints one line per case: {"id", "reasoning", "content", "tool_calls":
[{"name", "arguments"}]} (arguments that are not JSON as {"__raw__": text}),
or {"id", "error"}. Used to label tests/cases/fidelity-*.jsonl."""
import json, sys, re, logging
logging.disable(logging.CRITICAL)
from vllm.parser.parser_manager import ParserManager
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

DEFAULT = ["<think>", "</think>", "<tool_call>", "</tool_call>", "<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>",
           "<|turn>", "<turn|>", "<|tool_response>", "<bos>", "<eos>", "<|python_tag|>", "<|eom_id|>", "<|eot_id|>",
           "<|start|>", "<|message|>", "<|eom|>", "<|eot|>", "<|tool_call_start|>", "<|tool_call_end|>",
           "<|python_start|>", "<|python_end|>", "<|im_start|>", "<|im_end|>", "<|end_of_text|>", '<|"|>',
           "<|assistant|>", "<|user|>", "<|observation|>", "<role>", "</role>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"]

# Special tokens (dropped by vLLM's engine unless a terminal): as in vLLM's
# own test tokenizers and the Qwen/Llama vocabularies, not the think markers.
SPECIALS = ["<bos>", "<eos>", "<|im_start|>", "<|im_end|>", "<|endoftext|>"]

class Tok:
    def __init__(self, markers, specials):
        self.markers = list(dict.fromkeys(markers + specials))
        self.v = {s: 100000 + i for i, s in enumerate(self.markers)}
        self.specials = [s for s in self.markers if s in specials]
        for i in range(256): self.v.setdefault(chr(i) if chr(i).isprintable() else f"<0x{i:02X}>", i)
        self.inv = {i: s for s, i in self.v.items()}
        self.all_special_tokens = self.specials
        self.all_special_ids = [self.v[s] for s in self.specials]
        self.eos_token_id = 0; self.bos_token_id = 1
        self.name_or_path = "fake"
        self.vocab_size = len(self.v)
    def get_vocab(self): return dict(self.v)
    def __len__(self): return len(self.v)
    def encode(self, text, add_special_tokens=False, **kw):
        out = []; i = 0
        sp = sorted(self.markers, key=len, reverse=True)
        while i < len(text):
            for s in sp:
                if text.startswith(s, i): out.append(self.v[s]); i += len(s); break
            else:
                out.extend(text[i].encode("utf-8")); i += 1
        return out
    def decode(self, ids, skip_special_tokens=False, **kw):
        b = bytearray(); out = ""
        for t in ids:
            if t >= 100000:
                out += b.decode("utf-8", "replace"); b = bytearray()
                if not skip_special_tokens: out += self.inv[t]
            else: b.append(t)
        return out + b.decode("utf-8", "replace")
    def convert_ids_to_tokens(self, ids): return [self.inv.get(i, "") for i in ids]
    def convert_tokens_to_ids(self, toks):
        if isinstance(toks, str): return self.v.get(toks)
        return [self.v.get(t) for t in toks]
    def get_added_vocab(self): return {s: self.v[s] for s in self.markers}

def answer(case):
    tok = Tok(case.get("vocab") or DEFAULT, case.get("specials", SPECIALS))
    rq = dict(case.get("request") or {})
    body = {"messages": [{"role": "user", "content": "hi"}], "model": "m"}
    for k in ("tools", "tool_choice", "chat_template_kwargs", "parallel_tool_calls", "include_reasoning"):
        if k in rq: body[k] = rq[k]
    req = ChatCompletionRequest(**body)
    cls = ParserManager.get_parser(tool_parser_name=case.get("tool_parser"), reasoning_parser_name=case.get("reasoning_parser"), enable_auto_tools=True)
    kw = {}
    if rq.get("chat_template_kwargs"): kw["chat_template_kwargs"] = rq["chat_template_kwargs"]
    p = cls(tok, req.tools, **kw)
    req = p.adjust_request(req) or req
    if rq.get("prompt_text") is not None:
        ids = tok.encode(rq["prompt_text"])
        try:
            p.set_prompt_token_ids(ids)
        except Exception as e: pass
        rp = p.reasoning_parser
        if rp is not None and hasattr(rp, "adjust_initial_state_from_prompt"):
            rp.adjust_initial_state_from_prompt(ids)
    r, c, calls = p.parse(case["model_output"], req, enable_auto_tools=True)
    tc = []
    for f in calls or []:
        try: a = json.loads(f.arguments)
        except Exception: a = {"__raw__": f.arguments}
        tc.append({"name": f.name, "arguments": a})
    return {"id": case["id"], "reasoning": r, "content": c, "tool_calls": tc}

if __name__ == "__main__":
    for line in sys.stdin:
        if not line.strip(): continue
        case = json.loads(line)
        try: print(json.dumps(answer(case), ensure_ascii=False))
        except Exception as e: print(json.dumps({"id": case["id"], "error": repr(e)[:300]}))
        sys.stdout.flush()
