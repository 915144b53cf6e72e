"""Opt-in: vLLM 0.34.0's own chat-template content-format detection
(`vllm/renderers/hf.py`, `_detect_content_format`: "string" or "openai", what
`--chat-template-content-format auto` resolves to) over every template under
`.assets/templates` and the snippets of
`crates/llmsift-templates/tests/data/content-format-snippets.json`, written as
the labelled file `crates/llmsift-templates/tests/data/content-format.jsonl`
that `cargo test -p llmsift-templates --test content_format` checks Sift's
detection against (no vLLM needed there).

    PY=$(bash scripts/oracle/install.sh | tail -1)
    $PY scripts/oracle/content-format.py          # --check: compare, write nothing

Each line: `{"template": FILE, "format": …}` or `{"snippet": NAME, "source": …,
"format": …}`; the first line names the versions that answered.
"""

import argparse
import glob
import json
import logging
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "crates", "llmsift-templates", "tests", "data")
TEMPLATES = os.path.join(os.environ.get("SIFT_ASSETS", os.path.join(ROOT, ".assets")), "templates")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="compare with the committed file, write nothing")
    a = ap.parse_args()
    import transformers
    import vllm  # noqa: F401  (imported first: the renderer modules import it circularly)
    from vllm.renderers.hf import _detect_content_format

    # A template jinja2 cannot parse is logged with its traceback; the answer is the default.
    logging.getLogger("vllm").setLevel(logging.CRITICAL)

    def detect(text):
        return _detect_content_format(text, default="string")

    rows = [{"vllm": vllm.__version__, "transformers": transformers.__version__}]
    for path in sorted(glob.glob(os.path.join(TEMPLATES, "*.jinja"))):
        text = open(path, encoding="utf-8").read()
        rows.append({"template": os.path.basename(path), "format": detect(text)})
    with open(os.path.join(DATA, "content-format-snippets.json"), encoding="utf-8") as f:
        for s in json.load(f):
            rows.append({"snippet": s["name"], "source": s["source"], "format": detect(s["source"])})
    out = os.path.join(DATA, "content-format.jsonl")
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    openai = [r.get("template") or r.get("snippet") for r in rows[1:] if r["format"] == "openai"]
    print(f"{len(rows) - 1} detections, {len(openai)} openai", file=sys.stderr)
    if a.check:
        same = os.path.exists(out) and open(out, encoding="utf-8").read() == text
        print("same as committed" if same else "differs from the committed file", file=sys.stderr)
        sys.exit(0 if same else 1)
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
