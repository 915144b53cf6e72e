#!/usr/bin/env bash
# The crates.io dry run: every publishable crate of the workspace is packaged
# and built from its own package, in dependency order, as `cargo publish`
# would upload it (cargo >= 1.90 publishes a workspace at once, resolving the
# not-yet-published llmsift-* crates from the packages it just made). Then
# the public API's docs build with warnings and missing docs as errors.
#
# Checks before that (each a clear failure):
#   - every path dependency in [workspace.dependencies] carries the
#     workspace version (the single source of it);
#   - the crates meant for crates.io are exactly the publishable members,
#     each with the metadata crates.io shows (description, license,
#     repository, readme, keywords, categories) and an `include` list.
#
# Needs the crates.io index (an ordinary cargo client). Extra arguments go to
# `cargo publish` (e.g. --allow-dirty for uncommitted work).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

# The libraries in dependency order, then the binary crate.
publishable="llmsift-core llmsift-templates llmsift-tokenizers llmsift-protocol llmsift-grammar llmsift-conformance llmsift-serve llmsift-cli"

python3 - "$publishable" <<'EOF'
import json, subprocess, sys
want = set(sys.argv[1].split())
meta = json.loads(subprocess.check_output(["cargo", "metadata", "--no-deps", "--format-version", "1"]))
root = meta["workspace_root"]
import tomllib
with open(f"{root}/Cargo.toml", "rb") as f:
    ws = tomllib.load(f)["workspace"]
version = ws["package"]["version"]
bad = []
for name, dep in ws["dependencies"].items():
    if isinstance(dep, dict) and "path" in dep and dep.get("version") != version:
        bad.append(f"[workspace.dependencies] {name}: version {dep.get('version')!r}, the workspace's is {version!r}")
found = set()
for p in meta["packages"]:
    if p["publish"] == []:          # publish = false
        continue
    found.add(p["name"])
    for field in ("description", "license", "repository", "readme"):
        if not p.get(field):
            bad.append(f"{p['name']}: no {field}")
    for field in ("keywords", "categories"):
        if not p.get(field):
            bad.append(f"{p['name']}: no {field}")
    with open(p["manifest_path"], "rb") as f:
        if "include" not in tomllib.load(f)["package"]:
            bad.append(f"{p['name']}: no include list")
    if p["version"] != version:
        bad.append(f"{p['name']}: version {p['version']}, the workspace's is {version}")
if found != want:
    bad.append(f"publishable crates are {sorted(found)}, expected {sorted(want)} (others need publish = false)")
for b in bad:
    print(f"publish-dry-run: {b}", file=sys.stderr)
sys.exit(1 if bad else 0)
EOF

# Cargo unpacks the packages it just made into $CARGO_HOME/registry/src/-HASH/
# (a nameless local registry) and, as for any registry, never unpacks the
# same name and version twice: a second dry run would build the dependents
# against the first run's sources. None of our crates' versions is on
# crates.io, so every llmsift-* there is such a stale copy.
# Cargo also takes a registry crate's build as fresh by its version alone, so
# the packages are verified in a target directory of their own whose
# llmsift builds are dropped first (the other dependencies' builds are kept).
for d in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/llmsift-*; do
    [[ -e "$d" ]] && rm -rf "$d"
done
check_target="$repo/target/publish-check"
rm -rf "$check_target"/debug/.fingerprint/llmsift-* "$check_target"/debug/deps/*llmsift_* \
    "$check_target"/debug/build/llmsift-*

# Tests and examples stay in the repository (they read its assets and corpus),
# so cargo says once per target that it leaves them out; those lines are noise.
cargo publish --workspace --dry-run --target-dir "$check_target" "$@" 2>&1 \
    | grep -v -E '^warning: ignoring (test|example|bench) `[^`]+` as `[^`]+` is not included in the published package$'
status=${PIPESTATUS[0]}
if [[ $status -ne 0 ]]; then
    echo "publish-dry-run: cargo publish --dry-run failed" >&2
    exit "$status"
fi

# The public API's docs: warnings (broken links) and missing docs are errors.
libs=""
for c in $publishable; do libs+=" -p $c"; done
RUSTDOCFLAGS="-D warnings -D missing_docs" cargo doc --no-deps $libs
echo "publish-dry-run: ok: $publishable"
