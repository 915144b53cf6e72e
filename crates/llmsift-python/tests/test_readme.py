"""The wheel's own README (its PyPI page): every ``python`` block runs, in
order, in one namespace, against the installed wheel, and prints what it
says it prints."""

import contextlib
import io
import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run():
    blocks = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), re.S | re.M)
    assert blocks, "no python block in the README"
    out = io.StringIO()
    scope: dict = {}
    with contextlib.redirect_stdout(out):
        for code in blocks:
            exec(compile(code, str(README), "exec"), scope)
    printed = out.getvalue()
    assert "Hmm. Hello!" in printed, printed
    assert "get_weather" in printed and "Paris" in printed, printed
