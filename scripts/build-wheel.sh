#!/usr/bin/env bash
# Builds the portable `llmsift` wheel: abi3 (one wheel for CPython >= 3.9)
# and manylinux_2_28 (glibc >= 2.28: RHEL/Rocky 8, Ubuntu 20.04, vLLM's own
# floor). Linked by zig (PyPI's `ziglang`) against glibc 2.28's symbols, so
# the build machine's newer glibc never leaks in; maturin then audits the
# result against the manylinux_2_28 policy and tags it.
#
#   bash scripts/build-wheel.sh [OUT_DIR]      # default: target/wheels
#
#   SIFT_PY_CACHE        where the build venv (maturin, ziglang) lives
#                        (default ~/.cache/sift/py; outside git)
#   SIFT_WHEEL_PROFILE   cargo profile: release (default), or dev for a quick
#                        debug-built wheel (same tags; tests that only need
#                        a working wheel use it)
# The wheel is kept by a hash of what it is built from (the three crates it
# compiles, their tests aside; the manifests, the lock file, the profile): a second build of the
# same sources, e.g. the README test's copy of the checkout after
# scripts/python-test.sh, copies it instead of compiling again.
# Prints the wheel's path on its last line.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out="${1:-$repo/target/wheels}"
cache="${SIFT_PY_CACHE:-$HOME/.cache/sift/py}"
profile="${SIFT_WHEEL_PROFILE:-release}"
pins="maturin==1.16.0 ziglang==0.17.1"
# --strip: the release profile keeps line tables (debug = 1) for profiling;
# a wheel does not need them (34 MB -> a few MB).
flags="--zig --compatibility manylinux_2_28 --strip"
mkdir -p "$cache" "$out"
out=$(cd "$out" && pwd)
venv="$cache/wheel-build"
# One builds, concurrent callers wait (tests may build at the same moment).
exec 9>"$cache/.wheel-build.lock"
flock 9
if [[ "$(cat "$venv/.pins" 2>/dev/null)" != "$pins" ]]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check $pins >&2
    echo "$pins" > "$venv/.pins"
fi
key=$(cd "$repo" && {
    echo "$profile $pins $flags"
    find Cargo.toml Cargo.lock crates/llmsift-core crates/llmsift-tokenizers crates/llmsift-python \
        \( -name __pycache__ -o -name .pytest_cache -o -path crates/llmsift-python/tests \) -prune \
        -o -type f ! -name '*.pyc' -print0 \
        | sort -z | xargs -0 sha256sum
} | sha256sum | cut -c1-16)
kept="$cache/wheels-by-source/$key"
rm -f "$out"/llmsift-*.whl
if ! ls "$kept"/llmsift-*.whl >/dev/null 2>&1; then
    rm -rf "$kept.tmp" && mkdir -p "$kept.tmp"
    # maturin finds zig through the venv's PATH (ziglang's `python -m ziglang`).
    (cd "$repo/crates/llmsift-python" && PATH="$venv/bin:$PATH" \
        maturin build --quiet --profile "$profile" $flags -o "$kept.tmp" >&2)
    rm -rf "$kept" && mv "$kept.tmp" "$kept"
fi
cp "$kept"/llmsift-*.whl "$out"/
ls "$out"/llmsift-*.whl
