"""Differential check of Sift's scale-out tier against vLLM 0.34.0's own
render/derender server (`vllm launch render`), on this CPU-only machine.

    PY=$(bash scripts/oracle/install.sh | tail -1)
    CARGO_TARGET_DIR=target cargo build --release -p llmsift-cli
    $PY scripts/scaleout-diff.py --sift target/release/sift            # all pairs; --pairs qwen3+hermes …
    $PY scripts/scaleout-diff.py --sift target/release/sift --write    # also writes the labelled cases

For every parser pair of the oracle corpus (`crates/llmsift-conformance/tests/cases/oracle-*.jsonl`)
it starts vLLM's render server with that pair and the case's tokenizer
(`scripts/oracle/vllm-render.sh`), and one `sift serve` with every pair as a
configured model (`vllm_compat = true`), then, per case:

- derender: the output's token ids (+ the end-of-sequence token, finish
  `stop`) sent chunk by chunk (1- and 4-token generate chunks, the returned
  `stream_state` carried), and whole (`generate_response`), to both; the
  chunks folded as an OpenAI client folds deltas; Sift's folded answer is
  compared with vLLM's exactly (reasoning, content, each call's name and
  arguments, finish reason);
- render (`--render`): every chat template under `.assets/templates` with
  the Qwen3 tokenizer, over a few conversations; Sift's `token_ids` against
  vLLM's (the template sent as the request's `chat_template`), both with the
  same `--chat-template-content-format` (vLLM's default `auto` unless
  `--content-format` says otherwise; Sift's `chat_template_content_format`).
  With `--write`, vLLM's answers go to
  `crates/llmsift-cli/tests/data/scaleout-vllm-render.jsonl`, which
  `cargo test -p llmsift-cli --test render_vllm` checks against Sift.

`--write` writes vLLM's answers as labelled cases
(`crates/llmsift-cli/tests/data/scaleout-vllm/*.jsonl`), which
`cargo test -p llmsift-cli --test scaleout_vllm` checks against Sift without
vLLM. Differences are listed with the reason in `known_differences` below.
"""

import argparse
import collections
import glob
import hashlib
import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from tokenizers import AddedToken, Tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = os.path.join(ROOT, "crates", "llmsift-conformance", "tests", "cases")
OUT = os.path.join(ROOT, "crates", "llmsift-cli", "tests", "data", "scaleout-vllm")
ASSETS = os.path.join(ROOT, ".assets", "tokenizers")
CACHE = os.path.join(os.environ.get("SIFT_ORACLE_CACHE", os.path.expanduser("~/.cache/sift/oracle")), "scaleout-diff")
KEY = "scaleout-differential-state-key"
USER = {"role": "user", "content": "Answer, using the tools when needed."}


# ---------------------------------------------------------------- tokenizers

def tok_dir(spec):
    """A directory with tokenizer.json + tokenizer_config.json for a case's tokenizer field."""
    if isinstance(spec, str):
        return os.path.join(ASSETS, spec)
    key = json.dumps(spec, sort_keys=True, ensure_ascii=False)
    d = os.path.join(CACHE, "tokenizers", hashlib.sha256(key.encode()).hexdigest()[:16])
    if not os.path.exists(os.path.join(d, "tokenizer.json")):
        os.makedirs(d, exist_ok=True)
        base = os.path.join(ASSETS, spec["base"])
        tk = Tokenizer.from_file(os.path.join(base, "tokenizer.json"))
        # The order and flags of scripts/oracle/record.py and llmsift-conformance's tokspec.
        tk.add_tokens([AddedToken(s, special=False, normalized=False) for s in spec.get("added_tokens", [])])
        tk.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in spec["special_tokens"]])
        tk.save(os.path.join(d, "tokenizer.json"))
        cfg = json.load(open(os.path.join(base, "tokenizer_config.json"), encoding="utf-8"))
        cfg.pop("added_tokens_decoder", None)
        json.dump(cfg, open(os.path.join(d, "tokenizer_config.json"), "w"), ensure_ascii=False)
    return d


_TOKS = {}


def tokenizer(spec):
    key = json.dumps(spec, sort_keys=True)
    if key not in _TOKS:
        d = tok_dir(spec)
        tk = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
        cfg = json.load(open(os.path.join(d, "tokenizer_config.json"), encoding="utf-8"))
        eos = cfg.get("eos_token")
        eos = eos.get("content") if isinstance(eos, dict) else eos
        _TOKS[key] = (tk, tk.token_to_id(eos) if eos else None)
    return _TOKS[key]


# ---------------------------------------------------------------- servers

class Http:
    def __init__(self, port, proc=None):
        self.port, self.proc = port, proc
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)

    def post(self, path, body):
        data = json.dumps(body, ensure_ascii=False).encode()
        for attempt in range(2):
            try:
                self.conn.request("POST", path, body=data, headers={"content-type": "application/json"})
                r = self.conn.getresponse()
                return r.status, json.loads(r.read() or b"null")
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
                if attempt:
                    raise


def tokenizer_config(d):
    """The tokenizer's tokenizer_config.json (its eos_token is the stop token derender leaves out),
    with a plain chat template when it has none (derender never renders: the prompt arrives as ids)."""
    path = os.path.join(d, "tokenizer_config.json")
    conf = json.load(open(path, encoding="utf-8"))
    if conf.get("chat_template"):
        return path
    out = os.path.join(CACHE, "plain-" + hashlib.sha256(d.encode()).hexdigest()[:12] + ".json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump({**conf, "chat_template": PLAIN}, f, ensure_ascii=False)
    return out


PLAIN = "{% for m in messages %}{{ m.content }}{% endfor %}"


def start_sift(binary, models):
    """One `sift serve` with a model per pair (derender needs no backend: the URL is never called)."""
    cfg = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False)
    cfg.write(f'host = "127.0.0.1"\nport = 0\nstate_key = "{KEY}"\n')
    for name, (r, t, spec) in sorted(models.items()):
        d = tok_dir(spec)
        cfg.write("\n[[models]]\n")
        cfg.write(f'served_model_name = "{name}"\nbackend = "completions"\nbackend_url = "http://127.0.0.1:9"\n')
        cfg.write(f'tokenizer = "{d}/tokenizer.json"\nchat_template = "{tokenizer_config(d)}"\n')
        if r:
            cfg.write(f'reasoning_parser = "{r}"\n')
        if t:
            cfg.write(f'tool_call_parser = "{t}"\nenable_auto_tool_choice = true\n')
        cfg.write("vllm_compat = true\n")
    cfg.close()
    p = subprocess.Popen([binary, "serve", "--config", cfg.name], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in p.stderr:
        if "listening on http://" in line:
            port = int(line.split("listening on http://")[1].split()[0].rsplit(":", 1)[1])
            subprocess.Popen(["cat"], stdin=p.stderr, stdout=subprocess.DEVNULL)  # keep draining
            return Http(port, p)
        last = line
    sys.exit(f"sift serve did not start: {last}")


def start_vllm(name, r, t, spec, port, trust_template=False, content_format=None):
    """vLLM's render server for one pair (scripts/oracle/vllm-render.sh)."""
    d = tok_dir(spec)
    cmd = ["bash", os.path.join(ROOT, "scripts", "oracle", "vllm-render.sh"), "--name", name, "--tokenizer", d,
           "--port", str(port)]
    if r:
        cmd += ["--reasoning-parser", r]
    if t:
        cmd += ["--tool-call-parser", t]
    if trust_template:
        cmd += ["--trust-request-chat-template"]
    if content_format:
        cmd += ["--chat-template-content-format", content_format]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return None, (out.stderr.strip().splitlines() or ["?"])[-1]
    pid = int(out.stdout.strip().split()[-1])
    return Http(port, pid), None


def stop_vllm(h):
    if h is None:
        return
    try:
        os.kill(h.proc, signal.SIGTERM)
        for _ in range(50):
            os.kill(h.proc, 0)
            time.sleep(0.1)
        os.kill(h.proc, signal.SIGKILL)
    except ProcessLookupError:
        pass


# ---------------------------------------------------------------- derender

def chat_request(name, req):
    body = {"model": name, "messages": [USER]}
    for k in ("tools", "tool_choice", "parallel_tool_calls", "include_reasoning", "chat_template_kwargs",
              "reasoning_effort", "skip_special_tokens"):
        if req.get(k) is not None:
            body[k] = req[k]
    return body


def fold(chunks):
    reasoning, content, calls, finish = "", "", {}, None
    for c in chunks:
        for ch in c.get("choices") or []:
            d = ch.get("delta") or {}
            reasoning += d.get("reasoning") or d.get("reasoning_content") or ""
            content += d.get("content") or ""
            for tc in d.get("tool_calls") or []:
                f = tc.get("function") or {}
                e = calls.setdefault(tc.get("index", 0), {"name": "", "arguments": ""})
                e["name"] += f.get("name") or ""
                e["arguments"] += f.get("arguments") or ""
            finish = ch.get("finish_reason") or finish
    return message(reasoning, content, [calls[i] for i in sorted(calls)], finish)


def message(reasoning, content, calls, finish):
    out = []
    for c in calls:
        try:
            args = json.loads(c["arguments"])
        except (TypeError, ValueError):
            args = {"__raw__": c["arguments"]}
        out.append({"name": c["name"], "arguments": args})
    return {"reasoning": reasoning or None, "content": content or None, "tool_calls": out, "finish_reason": finish}


def norm(m):
    """A folded answer as the oracle compares answers (scripts/oracle/record.py,
    the corpus's check.py): text trimmed, empty text null; calls and finish as they are."""
    if "error" in m:
        return m
    t = lambda s: (s or "").strip() or None
    return {**m, "reasoning": t(m["reasoning"]), "content": t(m["content"])}


def same(got, want):
    """Whether Sift's answer is vLLM's, by the oracle's rule (llmsift-conformance's
    score.rs, the corpus's check.py): normalized text, names and finish equal; where
    vLLM's arguments are not valid JSON (`__raw__`), any valid JSON or the same text agrees."""
    got, want = norm(got), norm(want)
    if "error" in got or "error" in want:
        return got == want
    if len(got["tool_calls"]) != len(want["tool_calls"]):
        return False
    for g, w in zip(got["tool_calls"], want["tool_calls"]):
        if g["name"] != w["name"]:
            return False
        raw = isinstance(w["arguments"], dict) and set(w["arguments"]) == {"__raw__"}
        if not (g["arguments"] == w["arguments"] or (raw and "__raw__" not in g["arguments"])):
            return False
    strip = lambda m: {k: v for k, v in m.items() if k != "tool_calls"}
    return strip(got) == strip(want)


def whole_message(resp):
    ch = resp["choices"][0]
    m = ch["message"]
    calls = [{"name": c["function"]["name"], "arguments": c["function"]["arguments"]} for c in m.get("tool_calls") or []]
    return message(m.get("reasoning") or m.get("reasoning_content"), m.get("content"), calls, ch.get("finish_reason"))


def stream(h, name, creq, prompt, out, size, rid):
    state, chunks = None, []
    parts = [out[i:i + size] for i in range(0, len(out), size)]
    for k, part in enumerate(parts):
        body = {"stream": True, "model": name,
                "generate_chunk": {"request_id": rid, "choices": [
                    {"index": 0, "token_ids": part, "finish_reason": "stop" if k + 1 == len(parts) else None}]},
                "stream_state": state, "prompt_tokens": len(prompt), "prompt_token_ids": prompt,
                "chat_request": creq}
        st, resp = h.post("/v1/chat/completions/derender", body)
        if st != 200:
            return {"error": f"{st}: {json.dumps(resp)[:300]}"}
        state = resp["stream_state"]
        chunks.append(resp["chunk"])
    return fold(chunks)


def whole(h, name, creq, prompt, out, rid):
    body = {"model": name, "generate_response": {"request_id": rid, "choices": [
        {"index": 0, "token_ids": out, "finish_reason": "stop"}]},
        "prompt_tokens": len(prompt), "prompt_token_ids": prompt, "chat_request": creq}
    st, resp = h.post("/v1/chat/completions/derender", body)
    if st != 200:
        return {"error": f"{st}: {json.dumps(resp)[:300]}"}
    return whole_message(resp)


def prepared(name, c):
    """A case as both servers get it: prompt and output ids, the chat request."""
    tk, eos = tokenizer(c["tokenizer"])
    req = c["request"]
    ids = tk.encode(c["model_output"], add_special_tokens=False).ids
    prompt = tk.encode(req.get("prompt_text", ""), add_special_tokens=False).ids
    # The engine stops on the end-of-sequence token (record.py: unless the output ends on a stop token).
    stops = {eos}
    if c["tokenizer"] == "gptoss":
        stops |= {tk.token_to_id("<|call|>"), tk.token_to_id("<|return|>")}
    if eos is not None and not (ids and ids[-1] in stops):
        ids = ids + [eos]
    return {"id": c["id"], "model": name, "reasoning_parser": c["reasoning_parser"],
            "tool_parser": c["tool_parser"], "tokenizer": c["tokenizer"], "chat_request": chat_request(name, req),
            "prompt_token_ids": prompt, "output_token_ids": ids}


def answers(h, row, sizes):
    """One server's folded answers for a prepared case: per chunk size, and whole."""
    name, creq, prompt, ids = row["model"], row["chat_request"], row["prompt_token_ids"], row["output_token_ids"]
    rid = "diff-" + hashlib.sha256(row["id"].encode()).hexdigest()[:12]
    out = {str(size): stream(h, name, creq, prompt, ids, size, rid) for size in sizes}
    out["whole"] = whole(h, name, creq, prompt, ids, rid)
    return out


def vllm_answers(by_pair, sizes, port):
    """vLLM's answers, cached per pair under $CACHE/vllm/ (a pair's server is started only when missing)."""
    d = os.path.join(CACHE, "vllm")
    os.makedirs(d, exist_ok=True)
    rows = {}
    for (name, _), cases in by_pair.items():
        path = os.path.join(d, name + ".jsonl")
        cached = {}
        if os.path.exists(path):
            for line in open(path, encoding="utf-8"):
                row = json.loads(line)
                cached[row["id"]] = row
        todo = [c for c in cases if c["id"] not in cached]
        if todo:
            r, t, spec = cases[0]["reasoning_parser"], cases[0]["tool_parser"], cases[0]["tokenizer"]
            t0 = time.time()
            vllm, err = start_vllm(name, r, t, spec, port)
            if vllm is None:
                print(f"{name}: vLLM's server did not start: {err}", flush=True)
                continue
            try:
                with open(path, "a", encoding="utf-8") as f:
                    for c in todo:
                        row = prepared(name, c)
                        row["expected"] = answers(vllm, row, sizes)
                        cached[c["id"]] = row
                        f.write(json.dumps(row, ensure_ascii=False) + "\n")
            finally:
                stop_vllm(vllm)
            print(f"{name}: vLLM answered {len(todo)} cases ({time.time() - t0:.0f} s)", flush=True)
        for c in cases:
            if c["id"] in cached:
                rows[c["id"]] = cached[c["id"]]
    return rows


def pair_name(r, t):
    return f"{r or 'none'}+{t or 'none'}"


def load_cases(pairs, which="all", limit=None):
    by_pair = collections.OrderedDict()
    for f in sorted(glob.glob(os.path.join(CASES, "oracle-*.jsonl"))):
        for line in open(f, encoding="utf-8"):
            c = json.loads(line)
            name = pair_name(c["reasoning_parser"], c["tool_parser"])
            if pairs and name not in pairs:
                continue
            if c["request"].get("parser_init_kwargs"):
                continue  # construction options no server flag expresses
            real = isinstance(c["tokenizer"], str)
            if (which == "real" and not real) or (which == "spec" and real):
                continue
            group = by_pair.setdefault((name, json.dumps(c["tokenizer"], sort_keys=True)), [])
            if limit is None or len(group) < limit:
                group.append(c)
    return by_pair


# ---------------------------------------------------------------- render

CONVERSATIONS = [
    {"messages": [{"role": "user", "content": "Hello! What can you do?"}]},
    {"messages": [{"role": "system", "content": "You are terse."},
                  {"role": "user", "content": "Name three colours."},
                  {"role": "assistant", "content": "Red, green, blue."},
                  {"role": "user", "content": "Three more, with accents: é, ü, ñ."}]},
    {"messages": [{"role": "user", "content": "What's the weather in Paris?"}],
     "tools": [{"type": "function", "function": {
         "name": "get_weather", "description": "Weather for a city",
         "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]},
    {"messages": [{"role": "user", "content": "What's the weather in Paris?"},
                  {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function", "function": {
                      "name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
                  {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 21}"}],
     "tools": [{"type": "function", "function": {
         "name": "get_weather", "description": "Weather for a city",
         "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]},
]


def render_all(sift_bin, port, content_format=None):
    """Every template under .assets/templates, Qwen3 tokenizer: Sift's token ids against vLLM's."""
    templates = sorted(glob.glob(os.path.join(ROOT, ".assets", "templates", "*.jinja")))
    models = {}
    for path in templates:
        models["tpl-" + os.path.basename(path)[:-6]] = path
    sift = start_sift_templates(sift_bin, models, content_format or "auto")
    vllm, err = start_vllm("render", None, None, "qwen3", port, trust_template=True, content_format=content_format)
    if vllm is None:
        sift.proc.kill()
        sys.exit(f"vLLM's render server did not start: {err}")
    rows = []
    try:
        for name, path in models.items():
            text = open(path, encoding="utf-8").read()
            for k, conv in enumerate(CONVERSATIONS):
                # The render server has no tool parser: `auto` would be refused; the tools still render.
                conv = {**conv, "tool_choice": "none"} if "tools" in conv else conv
                body = {**conv, "model": name}
                s_st, s = sift.post("/v1/chat/completions/render", body)
                v_st, v = vllm.post("/v1/chat/completions/render", {**conv, "model": "render", "chat_template": text})
                row = {"template": name, "conversation": k, "sift_status": s_st, "vllm_status": v_st}
                if v_st == 200:
                    row["vllm_ids"] = v["token_ids"]
                if s_st == 200 and v_st == 200:
                    row["same"] = s["token_ids"] == v["token_ids"]
                    if not row["same"]:
                        tk, _ = tokenizer("qwen3")
                        row["sift_text"] = tk.decode(s["token_ids"], skip_special_tokens=False)
                        row["vllm_text"] = tk.decode(v["token_ids"], skip_special_tokens=False)
                else:
                    row["sift_error"] = None if s_st == 200 else json.dumps(s)[:300]
                    row["vllm_error"] = None if v_st == 200 else json.dumps(v)[:300]
                rows.append(row)
    finally:
        stop_vllm(vllm)
        sift.proc.kill()
    return rows


def write_render_cases(rows, content_format):
    """vLLM's renders as labelled cases: the conversations, then per template and conversation
    vLLM's token ids (or its refusal)."""
    path = os.path.join(os.path.dirname(OUT), "scaleout-vllm-render.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"content_format": content_format, "tokenizer": "qwen3",
                            # As sent: with tools, `tool_choice: none` (see render_all).
                            "conversations": [{**c, "tool_choice": "none"} if "tools" in c else c
                                              for c in CONVERSATIONS]}, ensure_ascii=False) + "\n")
        for r in rows:
            case = {"template": r["template"][len("tpl-"):] + ".jinja", "conversation": r["conversation"]}
            if r["vllm_status"] == 200:
                case["token_ids"] = r["vllm_ids"]
            else:
                case["vllm_refuses"] = r["vllm_error"]
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(f"wrote {path}")


def start_sift_templates(binary, models, content_format):
    cfg = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False)
    cfg.write(f'host = "127.0.0.1"\nport = 0\nstate_key = "{KEY}"\n')
    d = tok_dir("qwen3")
    base = json.load(open(os.path.join(d, "tokenizer_config.json"), encoding="utf-8"))
    os.makedirs(os.path.join(CACHE, "templates"), exist_ok=True)
    for name, path in models.items():
        # The template inside the tokenizer's own tokenizer_config.json, so Sift renders with the
        # tokenizer's special tokens (bos_token, eos_token) as vLLM does with a request's template.
        conf = os.path.join(CACHE, "templates", name + ".json")
        with open(conf, "w", encoding="utf-8") as f:
            json.dump({**base, "chat_template": open(path, encoding="utf-8").read()}, f, ensure_ascii=False)
        cfg.write(f'\n[[models]]\nserved_model_name = "{name}"\nbackend = "completions"\n'
                  f'backend_url = "http://127.0.0.1:9"\ntokenizer = "{d}/tokenizer.json"\nchat_template = "{conf}"\n'
                  f'chat_template_content_format = "{content_format}"\n')
    cfg.close()
    p = subprocess.Popen([binary, "serve", "--config", cfg.name], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in p.stderr:
        if "listening on http://" in line:
            port = int(line.split("listening on http://")[1].split()[0].rsplit(":", 1)[1])
            subprocess.Popen(["cat"], stdin=p.stderr, stdout=subprocess.DEVNULL)
            return Http(port, p)
        last = line
    sys.exit(f"sift serve did not start: {last}")


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sift", default=os.path.join(ROOT, "target", "release", "sift"))
    ap.add_argument("--pairs", nargs="*", help="pair names (reasoning+tool, `none` for no parser)")
    ap.add_argument("--port", type=int, default=8392)
    ap.add_argument("--tokenizers", choices=["real", "spec", "all"], default="all",
                    help="pairs with a fetched tokenizer, with a marker-extended Qwen3 one, or both")
    ap.add_argument("--limit", type=int, help="at most this many cases per pair")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--render", action="store_true", help="the render check instead of derender")
    ap.add_argument("--vllm-only", action="store_true", help="only collect vLLM's answers (cached)")
    ap.add_argument("--content-format", choices=["string", "openai"],
                    help="render: vLLM's --chat-template-content-format (default: its auto-detection)")
    ap.add_argument("--write", action="store_true", help="write the labelled cases")
    ap.add_argument("--report", default=os.path.join(CACHE, "report.jsonl"))
    a = ap.parse_args()
    os.makedirs(CACHE, exist_ok=True)
    if a.render:
        rows = render_all(a.sift, a.port, a.content_format)
        with open(os.path.join(CACHE, f"render-{a.content_format or 'auto'}.jsonl"), "w") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        both = [r for r in rows if r["sift_status"] == 200 and r["vllm_status"] == 200]
        n_same = sum(r["same"] for r in both)
        print(f"render: {n_same}/{len(both)} identical token ids; {len(rows) - len(both)} refused by one side")
        for r in rows:
            if not r.get("same"):
                print("  ", r["template"], r["conversation"], r["sift_status"], r["vllm_status"],
                      (r.get("sift_error") or r.get("vllm_error") or "token ids differ")[:200])
        if a.write:
            write_render_cases(rows, a.content_format or "auto")
        return
    by_pair = load_cases(set(a.pairs or []), a.tokenizers, a.limit)
    rows = vllm_answers(by_pair, a.sizes, a.port)
    if a.vllm_only:
        return
    models = {name: (cs[0]["reasoning_parser"], cs[0]["tool_parser"], cs[0]["tokenizer"])
              for (name, _), cs in by_pair.items()}
    sift = start_sift(a.sift, models)
    stats = collections.Counter()
    try:
        with open(a.report, "w", encoding="utf-8") as report:
            for (name, _), cases in by_pair.items():
                done = [rows[c["id"]] for c in cases if c["id"] in rows]
                for row in done:
                    row["sift"] = answers(sift, row, a.sizes)
                    report.write(json.dumps(row, ensure_ascii=False) + "\n")
                    tally(stats, row)
                print(f"{name}: {len(done)} cases, Sift = vLLM's whole answer "
                      f"{ {k: sum(same(r['sift'][k], r['expected']['whole']) for r in done) for k in [*map(str, a.sizes), 'whole']} }", flush=True)
    finally:
        sift.proc.kill()
    print(json.dumps(stats, indent=1))
    why = collections.Counter()
    for line in open(a.report, encoding="utf-8"):
        row = json.loads(line)
        e = row["expected"]
        if not any("error" in v for v in e.values()) and not all(same(v, e["whole"]) for v in row["sift"].values()):
            why[reason(row).split(":")[0]] += 1
    for w, n in why.most_common():
        print(f"{n:5} differ: {w}")
    if a.write:
        write_cases(a.report)


def tally(stats, row):
    """Counts for one case: vLLM's answer is its whole (non-streaming) derender;
    its streamed folds are counted apart, since they differ from it (and by
    chunk size) where its streaming path differs from its one-shot parse."""
    e = row["expected"]
    if any("error" in v for v in e.values()):
        stats["vllm_error_cases"] += 1
        return
    stats["cases"] += 1
    stats["vllm_stream_eq_its_whole"] += all(same(v, e["whole"]) for v in e.values())
    for k, got in row["sift"].items():
        stats[f"runs_{k}"] += 1
        stats[f"sift_{k}_eq_vllm_whole"] += same(got, e["whole"])
        stats[f"sift_{k}_eq_vllm_whole_exact"] += got == e["whole"]
        if k != "whole":
            stats[f"sift_{k}_eq_vllm_stream_{k}"] += same(got, e[k])


def write_cases(report):
    """The labelled cases: vLLM's whole answer as `expected`, its streamed folds
    as `vllm_stream`, and Sift's answer under `sift_differs` where it differs
    (with the reason the docs list, from `reason`)."""
    os.makedirs(OUT, exist_ok=True)
    groups = collections.defaultdict(list)
    for line in open(report, encoding="utf-8"):
        row = json.loads(line)
        if any("error" in v for v in row["expected"].values()):
            continue  # vLLM refused or failed: nothing to label
        case = {k: row[k] for k in ("id", "model", "reasoning_parser", "tool_parser", "tokenizer", "chat_request",
                                    "prompt_token_ids", "output_token_ids")}
        case["expected"] = norm(row["expected"]["whole"])
        case["vllm_stream"] = {k: norm(v) for k, v in row["expected"].items() if k != "whole"}
        diff = {k: norm(v) for k, v in row["sift"].items() if not same(v, case["expected"])}
        if diff:
            case["sift_differs"] = diff
            case["reason"] = reason(row)
            # vLLM's render tier answers otherwise than its own serving path (the
            # oracle corpus), whose answer Sift gives: counted apart in the figure.
            if case["reason"].startswith(TIER_DEPARTS):
                case["vllm_tier_departs"] = True
        groups[(row["tool_parser"] or row["reasoning_parser"] or "none")].append(case)
    for f in glob.glob(os.path.join(OUT, "*.jsonl")):
        os.remove(f)
    for g, cases in sorted(groups.items()):
        with open(os.path.join(OUT, f"{g}.jsonl"), "w", encoding="utf-8") as f:
            for c in cases:
                f.write(json.dumps(c, ensure_ascii=False) + "\n")


def reason(row):
    """Why Sift's answer differs from vLLM's whole answer (docs/scale-out.md lists these)."""
    for test, why in KNOWN_DIFFERENCES:
        if test(row):
            return why
    known = oracle_compat_disagreements()
    if row["id"] in known:
        return "as on vLLM's serving path (known-disagreements-oracle-compat.txt): " + known[row["id"]]
    return "unexplained"


def oracle_compat_disagreements():
    """The oracle cases where Sift's vLLM-compatible answer differs from vLLM's
    serving path too, each with its reason (checked exactly by llmsift-conformance's
    tests/oracle.rs)."""
    path = os.path.join(ROOT, "crates", "llmsift-conformance", "tests", "known-disagreements-oracle-compat.txt")
    out = {}
    for line in open(path, encoding="utf-8"):
        if line.strip() and not line.startswith("#"):
            cid, _, why = line.rstrip("\n").partition("\t")
            out[cid] = why
    return out


def _id(*parts):
    return lambda row: any(p in row["id"] for p in parts)


# Reasons where vLLM's render tier departs from vLLM's serving path.
TIER_DEPARTS = ("harmony:",)

# Why Sift's answer differs from vLLM's, first match wins (docs/scale-out.md, "Differential check");
# then the oracle corpus's own known disagreements under the vLLM-compatible settings.
KNOWN_DIFFERENCES = [
    (_id("none+openai/"),
     "harmony: vLLM 0.34's render tier never selects its HarmonyParser (its gpt-oss parsers are stubs there: "
     "every call with a parser is refused, 400/501); under tool_choice none it returns the raw harmony text "
     "as content, which Sift reads as harmony (vLLM's serving path does too: the oracle corpus)"),
    (lambda row: "cohere_command" in row["id"] and row["id"].endswith("/truncated-at-57"),
     "a call cut before its name: vLLM answers a call with an empty name and no arguments; a Sift call "
     "always has a name (docs/deviations.md), so the cut opener is dropped"),
]


if __name__ == "__main__":
    main()
