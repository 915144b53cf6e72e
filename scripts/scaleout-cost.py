"""What Sift's streaming derender costs per chunk: server CPU and carried
bytes, over generations of N tokens in CHUNK-token generate chunks, driven
over HTTP the way a router drives vLLM's render/derender server (the same
output shape as ../shared/vllm-render-cpu/bench_http.py: Qwen3 reasoning +
one Hermes call), one `sift serve --demo` process per run.

    python3 scripts/scaleout-cost.py [--sift target/release/sift] [--n 1000 8000 32000] [--chunk 1 4]
    python3 scripts/scaleout-cost.py --vllm 1000x1 1000x4 8000x4     # side by side with vLLM 0.34's own

Standard library only. Server CPU is read from /proc/PID/task/*/schedstat
(ns, all threads) around each call. `--vllm NxCHUNK …` also runs those
generations through vLLM 0.34.0's own render/derender server (qwen3 +
hermes, the Qwen3 tokenizer; started per run by
scripts/oracle/vllm-render.sh, which needs the oracle venv), with the same
prompt and output token ids and the same request bodies.
"""

import argparse
import http.client
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MODEL = "qwen3-demo"
CHAT = {
    "model": MODEL,
    "messages": [{"role": "user", "content": "What's the weather in Paris? Think first, then call the tool."}],
    "tools": [{"type": "function", "function": {
        "name": "get_weather", "description": "Current weather for a city",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
            "required": ["city"]}}}],
    "tool_choice": "auto",
}
WORDS = (
    "the user wants the current weather in Paris so I should call the get_weather tool "
    "with the city argument set to Paris and probably the unit set to celsius because "
    "France uses metric units; Step {k}: nothing else is required. "
)
TOOL = '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}'


def server_ns(pid):
    tot = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                tot += int(f.read().split()[0])
        except FileNotFoundError:
            pass
    return tot


class Sift:
    def __init__(self, binary):
        self.proc = subprocess.Popen(
            [binary, "serve", "--demo", "--port", "0", "--state-key", "cost-measurement-state-key"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for line in self.proc.stderr:
            if "listening on http://" in line:
                host, port = line.split("listening on http://")[1].split()[0].rsplit(":", 1)
                break
        else:
            sys.exit("sift serve did not start")
        self.http = http.client.HTTPConnection(host, int(port), timeout=600)

    def post(self, path, body):
        data = json.dumps(body, separators=(",", ":")).encode()
        c0 = server_ns(self.proc.pid)
        self.http.request("POST", path, body=data, headers={"content-type": "application/json"})
        r = self.http.getresponse()
        out = r.read()
        c1 = server_ns(self.proc.pid)
        if r.status != 200:
            sys.exit(f"{path} {r.status}: {out[:500]!r}")
        return json.loads(out), (c1 - c0) / 1e9, len(data)

    def close(self):
        self.proc.kill()
        self.proc.wait()


class Vllm(Sift):
    """vLLM 0.34.0's render/derender server for qwen3 + hermes, one process per run."""

    def __init__(self, port=8393):
        out = subprocess.run(
            ["bash", os.path.join(ROOT, "scripts", "oracle", "vllm-render.sh"), "--name", MODEL,
             "--tokenizer", os.path.join(ROOT, ".assets", "tokenizers", "qwen3"),
             "--reasoning-parser", "qwen3", "--tool-call-parser", "hermes", "--port", str(port)],
            capture_output=True, text=True)
        if out.returncode:
            sys.exit(f"vLLM's server did not start: {out.stderr[-500:]}")
        self.pid = int(out.stdout.split()[-1])
        self.proc = type("P", (), {"pid": self.pid})
        self.http = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)

    def close(self):
        os.kill(self.pid, 15)
        time.sleep(2)


def ids_of(sift, text):
    g, _, _ = sift.post("/v1/completions/render", {"model": MODEL, "prompt": text})
    return g[0]["token_ids"]


def output(sift, n):
    head = ids_of(sift, "<think>\n")
    tail = ids_of(sift, "\n</think>\n\n<tool_call>\n" + TOOL + "\n</tool_call>") + ids_of(sift, "<|im_end|>")
    words = ids_of(sift, "".join(WORDS.replace("{k}", str(k)) for k in range(20)))
    prose = []
    while len(prose) < n - len(head) - len(tail):
        prose += words
    return head + prose[: n - len(head) - len(tail)] + tail


def run(sift, n, chunk, ids=None):
    prompt, out = ids or (sift.post("/v1/chat/completions/render", {**CHAT, "stream": True})[0]["token_ids"],
                          output(sift, n))
    state, per, largest, last_body = None, [], 0, 0
    parts = [out[i:i + chunk] for i in range(0, n, chunk)]
    for k, part in enumerate(parts):
        body = {
            "stream": True, "model": MODEL,
            "generate_chunk": {"request_id": f"cost-{n}-{chunk}", "choices": [
                {"index": 0, "token_ids": part, "finish_reason": "stop" if k + 1 == len(parts) else None}]},
            "stream_state": state, "prompt_tokens": len(prompt), "prompt_token_ids": prompt,
            "chat_request": CHAT,
        }
        resp, cpu, sent = sift.post("/v1/chat/completions/derender", body)
        state = resp["stream_state"]
        largest = max(largest, len(state.get("sift_state") or ""))
        per.append(cpu)
        last_body = sent
    state_json = len(json.dumps(state, separators=(",", ":")).encode())
    return {
        "n": n, "chunk": chunk, "chunks": len(parts),
        "cpu_s": round(sum(per), 3),
        "first100_us": round(1e6 * sum(per[:100]) / min(100, len(per)), 1),
        "last100_us": round(1e6 * sum(per[-100:]) / min(100, len(per)), 1),
        "largest_sift_state_B": largest, "final_stream_state_B": state_json,
        "last_request_B": last_body, "finish": resp["chunk"]["choices"][0]["finish_reason"],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sift", default="target/release/sift")
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 8000, 32000])
    ap.add_argument("--chunk", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--vllm", nargs="*", default=[], help="NxCHUNK runs also through vLLM's own server")
    a = ap.parse_args()
    if a.vllm:
        return side_by_side(a)
    print("| N | chunk (tokens) | CPU per generation | first 100 chunks, µs each | last 100 chunks, µs each "
          "| largest sift_state | final stream_state | last request body | finish |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for n in a.n:
        for chunk in a.chunk:
            sift = Sift(a.sift)
            try:
                r = run(sift, n, chunk)
            finally:
                sift.close()
            print(f"| {r['n']:,} | {r['chunk']} | {r['cpu_s']} s | {r['first100_us']} | {r['last100_us']} "
                  f"| {r['largest_sift_state_B']} B | {r['final_stream_state_B']} B | {r['last_request_B']:,} B "
                  f"| {r['finish']} |", flush=True)


def side_by_side(a):
    print("| N | chunk (tokens) | server | CPU per generation | first 100 chunks, µs each | last 100 chunks, µs each "
          "| final stream_state | last request body |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for run_spec in a.vllm:
        n, chunk = (int(x) for x in run_spec.split("x"))
        sift = Sift(a.sift)
        try:
            ids = (sift.post("/v1/chat/completions/render", {**CHAT, "stream": True})[0]["token_ids"], output(sift, n))
            rows = [("Sift", run(sift, n, chunk, ids))]
        finally:
            sift.close()
        vllm = Vllm()
        try:
            rows.append(("vLLM 0.34", run(vllm, n, chunk, ids)))
        finally:
            vllm.close()
        for who, r in rows:
            print(f"| {r['n']:,} | {r['chunk']} | {who} | {r['cpu_s']} s | {r['first100_us']:,} | {r['last100_us']:,} "
                  f"| {r['final_stream_state_B']:,} B | {r['last_request_B']:,} B |", flush=True)


if __name__ == "__main__":
    main()
