"""The live-model transcript (scripts/live/drive.py's JSON) as the Markdown
of docs/serve.md's "Live model" section. Usage: python transcript-md.py FILE.json
"""
import json
import sys


def short(s, n=160):
    s = json.dumps(s, ensure_ascii=False)
    return s if len(s) <= n else s[: n - 1] + "…"


def sent_summary(body):
    """What Sift added to llama.cpp's body: the constraint, in brief."""
    out = []
    if "grammar" in body:
        first = body["grammar"].splitlines()[0]
        out.append(f"`grammar` ({len(body['grammar'])} B): `{first}`")
    if body.get("grammar_lazy"):
        out.append(f"`grammar_lazy`, triggers {json.dumps(body.get('grammar_triggers'))}")
    if "json_schema" in body:
        out.append(f"`json_schema`: `{json.dumps(body['json_schema'])}`")
    if "response_format" in body:
        out.append(f"`response_format`: `{json.dumps(body['response_format'])[:120]}`")
    if "tool_choice" in body:
        out.append(f"`tool_choice`: `{json.dumps(body['tool_choice'])}`")
    return "; ".join(out) or "no constraint"


def main(path):
    t = json.load(open(path))
    for r in t["records"]:
        m, u = r["one_shot"], r["usage"] or {}
        b = r["backend"][0] if r["backend"] else {}
        sent = r["sent_to_backend"][0] if r["sent_to_backend"] else {"path": "?", "body": {}}
        print(f"**{r['model']} — {r['case']}**\n")
        req = r["request"]
        asked = {k: req[k] for k in ("tool_choice", "response_format") if k in req}
        if "extra_body" in req:
            asked.update(req["extra_body"])
        print(f"- asked: `{json.dumps(asked)}`, max_tokens {req['max_tokens']}, temperature 0, seed 7")
        print(f"- Sift sent `POST {sent['path']}`: {sent_summary(sent['body'])}")
        if m["reasoning"]:
            print(f"- reasoning: `{short(m['reasoning'])}`")
        if m["content"]:
            print(f"- content: `{short(m['content'])}`")
        for c in m["tool_calls"]:
            print(f"- tool call: `{c['name']}` arguments `{c['arguments']}`")
        print(f"- finish_reason `{m['finish_reason']}`; usage prompt {u.get('prompt_tokens')} / completion "
              f"{u.get('completion_tokens')} (llama.cpp: {b.get('prompt_tokens')} / {b.get('completion_tokens')}); "
              f"stream folded = one-shot: {r['stream'] == m}")
        pps = b.get("predicted_per_second")
        print(f"- one-shot {r['one_shot_s']} s; stream {r['stream_s']} s, first delta {r['stream_first_delta_s']} s, "
              f"{r['stream_chunks']} chunks; llama.cpp decode {pps and round(pps, 1)} tok/s\n")
    print(f"{len(t['records'])} cases; failed checks: {len(t['failures'])}")
    for f in t["failures"]:
        print(f"- {f}")


if __name__ == "__main__":
    main(sys.argv[1])
