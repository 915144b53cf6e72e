"""Rewrites a corpus so that each case expects Sift's own answer.

    python3 as_expected.py CORPUS.jsonl SIFT_ANSWERS.jsonl [--serving] > CORPUS-as-sift.jsonl

check.py then scores another implementation's answers against Sift's (the
plugin must agree on every case). A case Sift answered with an error keeps
no expectation it could meet and is dropped, so it is counted nowhere.

`--serving`: the cases are answered through vLLM's serving layer, which
returns tool calls only when the request declares tools with `tool_choice`
auto (or forces a call: `required`, a named function), whatever the parser
found (`keeps_tool_calls` in vLLM's `message_assembly.py`); Sift's calls are
dropped where it would drop them, so both answers are what a client gets.
"""

import json
import sys


def expected_of(msg):
    calls = []
    for c in msg.get("tool_calls") or []:
        f = c["function"]
        try:
            calls.append({"name": f["name"], "arguments": json.loads(f["arguments"])})
        except ValueError:
            calls.append({"name": f["name"], "arguments": None, "arguments_raw": f["arguments"]})
    return {"reasoning": msg.get("reasoning"), "content": msg.get("content"), "tool_calls": calls}


def keeps_tool_calls(req):
    choice = req.get("tool_choice")
    if choice == "required" or isinstance(choice, dict):
        return True
    return bool(req.get("tools")) and choice in (None, "auto")


def main():
    serving = "--serving" in sys.argv
    answers = {}
    for line in open(sys.argv[2], encoding="utf-8"):
        if line.strip():
            a = json.loads(line)
            answers[a["id"]] = a
    for line in open(sys.argv[1], encoding="utf-8"):
        if not line.strip():
            continue
        case = json.loads(line)
        a = answers.get(case["id"])
        if a is None or a.get("error"):
            continue
        case["expected"] = expected_of(a["message"])
        if serving and not keeps_tool_calls(case.get("request") or {}):
            case["expected"]["tool_calls"] = []
        print(json.dumps(case, ensure_ascii=False))


if __name__ == "__main__":
    main()
