#!/usr/bin/env python3
"""Prints docs/check.md's table: `sift check` with auto-detected parsers on
every template of the fetched set that maps to a parser family.

Usage: python3 scripts/check-table.py [--sift target/release/sift]
"""
import argparse, glob, os, subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sift", default=os.path.join(ROOT, "target", "release", "sift"))
    args = ap.parse_args()
    assets = os.environ.get("SIFT_ASSETS", os.path.join(ROOT, ".assets"))
    print("| template | parsers | reasoning | calls | no stray content |")
    print("| --- | --- | --- | --- | --- |")
    for path in sorted(glob.glob(os.path.join(assets, "templates", "*.jinja"))):
        name = os.path.basename(path)[: -len(".jinja")]
        out = subprocess.run([args.sift, "check", "--template", path, "--reasoning-parser", "auto",
                              "--tool-call-parser", "auto"], capture_output=True, text=True).stdout
        fields = {}
        for line in out.splitlines():
            key, _, val = line.partition(": ")
            fields[key] = val
        if fields.get("parsers", "none + none") == "none + none" and "could not run" not in fields:
            continue
        if "could not run" in fields:
            print(f"| {name} | {fields.get('parsers', '?')} | cannot render: {fields['could not run'][:100]} | | |")
            continue
        print(f"| {name} | {fields['parsers']} | {fields['reasoning']} | {fields['tool calls']} | {fields['no stray content']} |")


if __name__ == "__main__":
    main()
