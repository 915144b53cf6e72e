#!/usr/bin/env python3
"""Snapshots every answer Sift gives on every case file, to prove that a
restructuring changes no answer.

    scripts/snapshot-answers.py write DIR [--sift BIN]    # before the change
    scripts/snapshot-answers.py write DIR2 [--sift BIN]   # after it
    scripts/snapshot-answers.py compare DIR DIR2          # byte for byte

Either side of `compare` may be a `.tar.xz` of a snapshot folder: the one
taken before the Formats restructuring is committed as
`scripts/snapshots/answers-3618ae5.tar.xz` (taken at 3618ae5: 55,764
answers of 46 case files). It replaces the snapshot of e78cf57 (the rename),
which the response-template work changed on purpose in 45 `hf` answers of
`vllm-tests.jsonl` and which lacked the case files added since.

The cases are every `crates/llmsift-conformance/tests/cases/*.jsonl` and the
shared corpus (`../shared/corpus/*.jsonl`). Each case is answered by
`sift parse --jsonl`, which gives the one-shot message and the streamed run
(every delta, the folded message, the finish reason), in three settings:

- `as-written`: the request as the case file has it;
- `default`: `vllm_text_loss` and `vllm_one_shot` forced off (the answer a
  user wants);
- `compat`: both forced on (vLLM 0.34's serving-path answer);

and, in each, with two cuttings: the case's own `stream` (its chunks, or one
token or character per delta) and seven bytes per delta (`bytes-7`), so a
change that moved only what a cut holds back shows too. The snapshot is one
file per case file, setting and cutting; `compare` exits 1 naming every case
whose answer line differs.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETTINGS = {
    "as-written": None,
    "default": {"vllm_text_loss": False, "vllm_one_shot": False},
    "compat": {"vllm_text_loss": True, "vllm_one_shot": True},
}
CUTS = {"own": None, "bytes-7": {"unit": "bytes", "size": 7}}


def case_files():
    files = sorted(glob.glob(os.path.join(ROOT, "crates", "llmsift-conformance", "tests", "cases", "*.jsonl")))
    files += sorted(glob.glob(os.path.join(ROOT, "..", "shared", "corpus", "*.jsonl")))
    return files


def variant(case, setting, cut):
    c = dict(case)
    if setting is not None:
        c["request"] = dict(c.get("request") or {}, **setting)
    if cut is not None:
        c["stream"] = cut
    return c


def write(out, sift):
    os.makedirs(out, exist_ok=True)
    n = 0
    for f in case_files():
        cases = [json.loads(l) for l in open(f, encoding="utf-8") if l.strip()]
        stem = os.path.basename(f)[: -len(".jsonl")]
        for sname, setting in SETTINGS.items():
            for cname, cut in CUTS.items():
                with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as t:
                    t.write("".join(json.dumps(variant(c, setting, cut)) + "\n" for c in cases))
                try:
                    run = subprocess.run([sift, "parse", "--jsonl", t.name], capture_output=True, text=True)
                finally:
                    os.unlink(t.name)
                if run.returncode != 0:
                    sys.exit(f"snapshot: {sift} failed on {f} ({sname}, {cname}): {run.stderr.strip()}")
                with open(os.path.join(out, f"{stem}.{sname}.{cname}.jsonl"), "w", encoding="utf-8") as o:
                    o.write(run.stdout)
                n += len(cases)
    print(f"snapshot: {n} answers of {len(case_files())} case files in {out}")


def unpacked(path, tmp):
    """A snapshot folder: `path` itself, or `path` (a .tar.xz) unpacked into `tmp`."""
    if not path.endswith(".tar.xz"):
        return path
    with tarfile.open(path, "r:xz") as t:
        top = {m.name.split("/")[0] for m in t.getmembers()}
        t.extractall(tmp, filter="data")
    if len(top) != 1:
        sys.exit(f"snapshot: {path} holds {len(top)} folders, not one")
    return os.path.join(tmp, top.pop())


def compare(a, b):
    with tempfile.TemporaryDirectory() as tmp:
        return compare_dirs(unpacked(a, os.path.join(tmp, "a")), unpacked(b, os.path.join(tmp, "b")))


def compare_dirs(a, b):
    names = sorted(set(os.listdir(a)) | set(os.listdir(b)))
    bad = 0
    total = 0
    for name in names:
        pa, pb = os.path.join(a, name), os.path.join(b, name)
        if not (os.path.exists(pa) and os.path.exists(pb)):
            print(f"{name}: only in {'the first' if os.path.exists(pa) else 'the second'} snapshot")
            bad += 1
            continue
        la = open(pa, encoding="utf-8").read().splitlines()
        lb = open(pb, encoding="utf-8").read().splitlines()
        total += max(len(la), len(lb))
        if len(la) != len(lb):
            print(f"{name}: {len(la)} answers against {len(lb)}")
            bad += 1
        for x, y in zip(la, lb):
            if x != y:
                bad += 1
                print(f"{name}: {json.loads(x).get('id')} differs")
    print(f"compare: {total} answers, {bad} differ")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("dir")
    w.add_argument("--sift", default=os.path.join(ROOT, "target", "release", "sift"))
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    args = ap.parse_args()
    if args.cmd == "write":
        write(args.dir, args.sift)
    else:
        sys.exit(compare(args.a, args.b))


if __name__ == "__main__":
    main()
