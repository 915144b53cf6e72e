#!/usr/bin/env python3
"""Runs the README as a newcomer would: every ``sh``, ``python`` and ``rust``
block, in order, in one shell session, in a fresh copy of the checkout.

    python3 scripts/readme-test.py [README.md]

The copy holds the checkout's files without the ignored ones (git ls-files:
tracked and untracked-not-ignored), so what runs is what a clean clone has;
``target/`` and ``.assets/`` are links to the checkout's own, so builds and
fetched tokenizers are reused (cargo keys each crate by its path, so the
copy's builds sit beside the checkout's and never invalidate them).

How blocks run:
- ``sh``: as written, one after another in one ``bash -eo pipefail``
  session (a variable, an activated venv or a background job of one block
  is seen by the next);
- ``python``: ``python`` of that session's PATH (the README activates its
  venv first), the block on standard input;
- ``rust``: the block must be, verbatim, the body of an example under
  ``crates/*/examples/`` (below its ``//!`` header), which is run with
  ``cargo run -p CRATE --example NAME`` (debug); a block that binds an address is
  a server: it is started, must answer ``GET /health`` and ``/v1/models``,
  and is stopped.
A block whose info string is ``LANG manual (reason)`` is not run (it needs
what CI cannot have); any other info-string tag is an error, as is a
``manual`` without a reason. Blocks in other languages (json, text) are
not commands.

Fails on a non-zero exit, on a line of error output (``error:``,
``ERROR``, a Python traceback, a Rust panic, a JSON ``"error":`` answer), or
if port 8000 (the README's) is taken before the run. Background processes
are stopped at the end whatever happens.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.S | re.M)
RUN_LANGS = {"sh": "sh", "bash": "sh", "python": "python", "rust": "rust"}
ERROR_LINE = re.compile(
    r"(^|\s)(error|fatal):|\bERROR\b|Traceback \(most recent call last\)|panicked at|\"error\"\s*:",
    re.I,
)
# Words in a line that look like an error report but are not one.
BENIGN = [
    re.compile(r"^\s*(Compiling|Finished|Running|Fresh|Downloaded|Downloading|Locking|Adding|Updating)\b"),
]
TIMEOUT_S = int(os.environ.get("SIFT_README_TIMEOUT", "2700"))


def blocks(text: str):
    """(line, lang, tag, body) of every fenced block."""
    for m in FENCE.finditer(text):
        info = m.group(1).strip()
        line = text.count("\n", 0, m.start()) + 1
        lang, _, tag = info.partition(" ")
        yield line, lang, tag.strip(), m.group(2)


def example_for(body: str) -> tuple[str, str]:
    """The (crate, example) whose source below its //! header is the block."""
    for path in sorted(REPO.glob("crates/*/examples/*.rs")):
        lines = path.read_text().splitlines(keepends=True)
        i = 0
        while i < len(lines) and lines[i].startswith("//!"):
            i += 1
        while i < len(lines) and not lines[i].strip():
            i += 1
        if "".join(lines[i:]) == body:
            return path.parent.parent.name, path.stem
    raise SystemExit(
        "readme-test: a rust block is no example's source; put it, verbatim, in crates/CRATE/examples/NAME.rs"
    )


def script(readme: Path) -> tuple[str, int]:
    """The bash session, and how many blocks it runs."""
    out = [
        "set -eo pipefail",
        # Stop whatever a block left in the background (the demo server).
        "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT",
    ]
    n = 0
    for line, lang, tag, body in blocks(readme.read_text()):
        kind = RUN_LANGS.get(lang)
        if kind is None:
            continue
        where = f"{readme.name}:{line}"
        if tag:
            if not re.fullmatch(r"manual \(.+\)", tag):
                raise SystemExit(f"readme-test: {where}: unknown tag {tag!r} (only `manual (reason)`)")
            print(f"readme-test: skip {where} ({tag})")
            continue
        n += 1
        out.append(f"echo '=== readme-test: block {n} ({where}, {lang})'")
        if kind == "sh":
            out.append(body)
        elif kind == "python":
            out.append(f"python - <<'README_PY_EOF'\n{body}README_PY_EOF")
        else:
            crate, example = example_for(body)
            bind = re.search(r'bind\("([^"]+)"\)', body)
            if bind is None:
                out.append(f"cargo run -q -p {crate} --example {example}")
            else:
                addr = bind.group(1)
                out.append(
                    f"cargo build -q -p {crate} --example {example}\n"
                    f"target/debug/examples/{example} &\n"
                    "example_pid=$!\n"
                    f"for i in $(seq 600); do curl -sf http://{addr}/health && break; sleep 0.2; kill -0 $example_pid; done\n"
                    f"curl -sf http://{addr}/v1/models\necho\n"
                    "kill $example_pid; wait $example_pid || true"
                )
    return "\n".join(out) + "\n", n


def copy_checkout(dest: Path) -> None:
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, check=True, capture_output=True,
    ).stdout.split(b"\0")
    for f in files:
        if not f:
            continue
        src = REPO / os.fsdecode(f)
        if not src.is_file():  # deleted but still in the index
            continue
        dst = dest / os.fsdecode(f)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst, follow_symlinks=False)
    for shared in ("target", ".assets"):
        (REPO / shared).mkdir(exist_ok=True)
        (dest / shared).symlink_to(REPO / shared)


def port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def main() -> int:
    readme = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else REPO / "README.md"
    body, n = script(readme)
    if not port_free(8000):
        print("readme-test: port 8000 is in use; the README's server needs it", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="sift-readme-") as tmp:
        clone = Path(tmp) / "sift"
        copy_checkout(clone)
        # A newcomer's shell: no venv of the caller's.
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        proc = subprocess.Popen(
            ["bash", "-c", body], cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, errors="replace", start_new_session=True,
        )
        bad: list[str] = []
        block = "before the first block"
        timer = threading.Timer(TIMEOUT_S, lambda: os.killpg(proc.pid, signal.SIGKILL))
        timer.start()
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                sys.stdout.write(line)
                if line.startswith("=== readme-test: block"):
                    block = line.strip("= \n")
                elif ERROR_LINE.search(line) and not any(b.search(line) for b in BENIGN):
                    bad.append(f"{block}: {line.rstrip()}")
            status = proc.wait()
            if not timer.is_alive():
                status = f"killed: over {TIMEOUT_S}s (SIFT_README_TIMEOUT)"
        finally:
            timer.cancel()
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            proc.wait()
    if status != 0:
        print(f"readme-test: FAILED in {block}: exit status {status}", file=sys.stderr)
        return 1
    if bad:
        print("readme-test: FAILED: error output:\n  " + "\n  ".join(bad), file=sys.stderr)
        return 1
    print(f"readme-test: {n} blocks of {readme.name} ran cleanly")
    return 0


if __name__ == "__main__":
    sys.exit(main())
