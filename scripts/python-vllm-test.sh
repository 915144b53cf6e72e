#!/usr/bin/env bash
# Opt-in: the `llmsift.vllm` plugin inside vLLM 0.34.0 (not part of test.sh).
#
# Makes a venv that sees the oracle's vLLM (scripts/oracle/install.sh; the
# oracle venv is only read, through a .pth file) and installs the freshly
# built `llmsift` wheel (scripts/build-wheel.sh) into it; drives every case of the shared corpus and of
# the oracle corpus (crates/llmsift-conformance/tests/cases/oracle-*.jsonl)
# through the plugin's classes as vLLM's serving layer calls them
# (crates/llmsift-python/tests/vllm/drive.py), and scores the answers with the
# corpus's own check.py:
#   1. against Sift's own answers (`sift parse --jsonl`): must agree on 100%,
#      the unified parser on both corpora, the split classes on the shared one;
#   2. against vLLM's labels: must agree at least as often as Sift does.
# First, that vLLM's plugin loader registers the parsers through the wheel's
# `vllm.general_plugins` entry point (no --*-parser-plugin flag), and that
# `vllm serve`'s parser-name validation, run where vLLM runs it (after the
# plugin load its argument parser makes), accepts them
# (crates/llmsift-python/tests/vllm/serve_args.py); then the
# DeltaMessages the plugin builds without validation against
# validated ones, as objects and as the serving layer serialises them
# (crates/llmsift-python/tests/vllm/models.py, over the shared corpus).
#   SIFT_PY_CACHE      build venv, wheel, test venv, answers (default ~/.cache/sift/py)
#   SIFT_ORACLE_PY     the oracle venv's python (default: what install.sh prints)
#   SIFT_BIN           the `sift` binary (default: built here, release)
#   SIFT_ONLY_SHARED=1 only the shared corpus (a quick run)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache="${SIFT_PY_CACHE:-$HOME/.cache/sift/py}"
mkdir -p "$cache"
oracle_py="${SIFT_ORACLE_PY:-$(bash "$repo/scripts/oracle/install.sh" | tail -1)}"
site=$("$oracle_py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
rm -rf "$cache/wheels"
SIFT_PY_CACHE="$cache" bash "$repo/scripts/build-wheel.sh" "$cache/wheels" >/dev/null
venv="$cache/vllm-venv"
if [[ ! -x "$venv/bin/python" ]]; then
    "$oracle_py" -c 'import sys, venv; venv.create(sys.argv[1], with_pip=True)' "$venv" 2>/dev/null \
        || "$(dirname "$(readlink -f "$oracle_py")")/python3" -m venv "$venv"
fi
"$venv/bin/python" -c 'import sysconfig, sys; open(sysconfig.get_paths()["purelib"] + "/sift-oracle.pth", "w").write(sys.argv[1] + "\n")' "$site"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --force-reinstall "$cache"/wheels/llmsift-*.whl
if [[ -z "${SIFT_BIN:-}" ]]; then
    (cd "$repo" && cargo build -q --release -p llmsift-cli --no-default-features)
    export SIFT_BIN="$repo/target/release/sift"
fi
check="$repo/../shared/corpus/check.py"
out="$cache/vllm-answers"
mkdir -p "$out"
corpora=(shared)
cp "$repo/../shared/corpus/vllm-tests.jsonl" "$out/shared.jsonl"
if [[ -z "${SIFT_ONLY_SHARED:-}" ]]; then
    # A vLLM client's request carries `skip_special_tokens` (default true), so
    # the serving path detokenizes by the pair's rule; the oracle's cases
    # leave it out (Sift then parses the raw text), so it is set here for
    # Sift and the plugin alike.
    cat "$repo"/crates/llmsift-conformance/tests/cases/oracle-*.jsonl | python3 -c '
import json, sys
for line in sys.stdin:
    c = json.loads(line)
    c["request"].setdefault("skip_special_tokens", True)
    # The engine stops on harmony'"'"'s <|call|> / <|return|>: its text never
    # reaches a parser in vLLM, so Sift'"'"'s answer is for the text without it.
    for stop in ("<|call|>", "<|return|>"):
        if c.get("tokenizer") == "gptoss" and c["model_output"].endswith(stop):
            c["model_output"] = c["model_output"][: -len(stop)]
    print(json.dumps(c, ensure_ascii=False))' > "$out/oracle.jsonl"
    corpora+=(oracle)
fi
status=0
echo "== entry point: vLLM's own plugin loader registers the sift_* names, no plugin flag"
# vllm.plugins.load_general_plugins is what every vLLM process calls at
# start-up; the wheel's vllm.general_plugins entry point must register here.
"$venv/bin/python" -W ignore -c '
import sys
from vllm.plugins import load_general_plugins
load_general_plugins()
from vllm.reasoning import ReasoningParserManager
from vllm.tool_parsers import ToolParserManager
def names(m):
    f = getattr(m, "list_registered", None)
    return list(f()) if f else list(getattr(m, "reasoning_parsers", None) or getattr(m, "tool_parsers", {}))
r, t = names(ReasoningParserManager), names(ToolParserManager)
assert "llmsift.vllm" in sys.modules, "the entry point did not load llmsift.vllm"
assert "sift_qwen3" in r and "sift_hermes" in t, "sift_qwen3 / sift_hermes not registered"
print("registered by the entry point:", sum(n.startswith("sift_") for n in r), "reasoning,",
      sum(n.startswith("sift_") for n in t), "tool parser names")
' || status=1
echo "== vllm serve: its parser-name validation accepts sift_hermes / sift_qwen3 with no plugin flag"
"$venv/bin/python" -W ignore "$repo/crates/llmsift-python/tests/vllm/serve_args.py" || status=1
echo "== models: the plugin's unvalidated DeltaMessages against validated construction"
"$venv/bin/python" -W ignore "$repo/crates/llmsift-python/tests/vllm/models.py" "$out/shared.jsonl" || status=1
for c in "${corpora[@]}"; do
    "$SIFT_BIN" parse --jsonl "$out/$c.jsonl" > "$out/$c.sift.jsonl"
    # The corpus with Sift's own answers as the expected messages.
    # (The oracle's cases go through vLLM's serving layer, which keeps tool
    # calls only for requests that declare tools: `--serving`.)
    serving=""; [[ $c == oracle ]] && serving="--serving"
    python3 "$repo/crates/llmsift-python/tests/vllm/as_expected.py" "$out/$c.jsonl" "$out/$c.sift.jsonl" $serving > "$out/$c.as-sift.jsonl"
    sift_pass=$(python3 "$check" "$out/$c.jsonl" --answers "$out/$c.sift.jsonl" --show 0 | tail -1 | cut -d' ' -f1)
    # The split classes are driven on text-only cases (drive.py's `split`);
    # the oracle's cases all carry a tokenizer and go through the serving path.
    modes=(unified split)
    [[ $c == oracle ]] && modes=(unified)
    for mode in "${modes[@]}"; do
        (cd "$out" && SIFT_PY_CACHE="$cache" "$venv/bin/python" -W ignore "$repo/crates/llmsift-python/tests/vllm/drive.py" \
            --mode "$mode" "$out/$c.jsonl" > "$out/$c.$mode.jsonl" 2> "$out/$c.$mode.log")
        echo "== $c, $mode: the plugin against Sift's own answers"
        python3 "$check" "$out/$c.as-sift.jsonl" --answers "$out/$c.$mode.jsonl" --show 5 --min-pass 1.0 \
            | tail -12 | sed -E 's/^([0-9]+) passed, ([0-9]+) failed$/agree with sift: \1, differ: \2/' || status=1
        plugin_pass=$(python3 "$check" "$out/$c.jsonl" --answers "$out/$c.$mode.jsonl" --show 0 | tail -1 | cut -d' ' -f1)
        echo "== $c, $mode: agreement with vLLM's labels: plugin $plugin_pass, sift $sift_pass"
        [[ "$plugin_pass" -ge "$sift_pass" ]] || status=1
    done
done
[[ $status == 0 ]] && echo "python-vllm-test: every check passed" || echo "python-vllm-test: FAILED" >&2
exit $status
