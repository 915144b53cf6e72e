"""The shared corpus through `llmsift.Parser`: one-shot and streamed answers equal
`sift parse --jsonl`'s, delta for delta, and the stream folds to the one-shot message."""

import pytest

from conftest import load_cases
from helper import answer

CASES = load_cases()


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case, cli_answers):
    ours = answer(case)
    cli = cli_answers[case["id"]]
    assert cli["error"] is None
    assert ours["stream"]["message"] == ours["message"], "streamed != one-shot"
    assert ours["message"] == cli["message"], "one-shot differs from llmsift parse --jsonl"
    assert ours["stream"]["deltas"] == cli["stream"]["deltas"], "deltas differ from llmsift parse --jsonl"
