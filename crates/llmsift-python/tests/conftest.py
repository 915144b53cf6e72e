"""Shared pytest fixtures: the corpus cases and `sift parse --jsonl`'s answers.

The repository root is two levels up; the shared corpus sits beside it
(`../shared/corpus`) unless `SIFT_CORPUS` names another JSON-lines file.
`SIFT_BIN` names the `sift` binary whose answers are the reference
(`scripts/python-test.sh` builds it); without it `target/debug/sift` is used.
"""

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
CORPUS = pathlib.Path(os.environ.get("SIFT_CORPUS", ROOT.parent / "shared" / "corpus" / "vllm-tests.jsonl"))


def load_cases(path=CORPUS):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="session")
def cli_answers():
    """`sift parse --jsonl` answers for the corpus, by case id."""
    sift = os.environ.get("SIFT_BIN", str(ROOT / "target" / "debug" / "sift"))
    if not os.path.exists(sift):
        pytest.fail(f"no sift binary at {sift}: build it (cargo build -p llmsift-cli) or set SIFT_BIN")
    out = subprocess.run([sift, "parse", "--jsonl", str(CORPUS)], check=True, capture_output=True, text=True).stdout
    answers = [json.loads(line) for line in out.splitlines() if line.strip()]
    return {a["id"]: a for a in answers}
