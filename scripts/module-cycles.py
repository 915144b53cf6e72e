#!/usr/bin/env python3
"""Import cycles between the source files of Rust crates.

Usage: python3 scripts/module-cycles.py [--children] CRATE_DIR...

For each crate, reads every `src/**/*.rs` and builds the file-level graph
of its module references: `use crate::...` / `use super::...` / `use
self::...` trees, and `crate::`, `super::`, `self::` paths in code. Module
paths map to files by the source layout (`src/a/b.rs` or `src/a/b/mod.rs`
is `crate::a::b`). A parent's own `mod x;` is no edge (owning a child is
not an import); with `--children`, a parent naming a child's items by a bare
path (`x::f()`, `use x::Y`) is an edge too, so a directory whose `mod.rs`
and children use each other shows as a cycle. Prints each cycle (a
strongly connected component of more than one file) as
`crate: cycle a.rs -> b.rs -> a.rs`.

A path resolves to the deepest file that exists: `crate::format::spec::X`
is `src/format/spec.rs` when it exists, else `src/format/mod.rs`. A
reference to the file's own module or to the crate root (`lib.rs`, whose
re-exports every module may use) is no edge. Comments and string literals
are stripped before scanning, so a path in a doc comment (`[`crate::x`]`)
is no edge either.

Before scanning, a self-test runs the scanner on small crates with known
answers (SELF_TEST below). Exits 1 when any crate has a cycle, 2 when the
self-test fails or no crate is given, 0 otherwise.
"""
import os
import re
import sys


def strip_comments_and_strings(text):
    """The code without comments, string and char literals (kept as spaces,
    so line structure survives)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c == "r" and re.match(r'r#*"', text[i:i + 260]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            i = n if j < 0 else j + len(end)
            out.append(" ")
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append(" ")
        elif c == "'" and re.match(r"'(\\.|[^\\'])'|'\\u\{[0-9a-fA-F]+\}'|'\\x[0-9a-fA-F]{2}'", text[i:i + 12]):
            m = re.match(r"'(\\.|[^\\'])'|'\\u\{[0-9a-fA-F]+\}'|'\\x[0-9a-fA-F]{2}'", text[i:i + 12])
            i += len(m.group(0))
            out.append(" ")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def module_path(src, path):
    """The module path of a file: src/a/b.rs -> [a, b]; src/a/mod.rs -> [a]."""
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] == "mod":
        rel = rel[:-1]
    if rel in (["lib"], ["main"]):
        rel = []
    return rel


def file_of(src, mods, parts):
    """The deepest file the module path `parts` reaches (None: none)."""
    best = None
    for k in range(1, len(parts) + 1):
        key = tuple(parts[:k])
        if key in mods:
            best = mods[key]
        else:
            break
    return best


USE_TREE = re.compile(r"\buse\s+((?:crate|super|self)\b[^;]*);", re.S)
PATH = re.compile(r"\b(crate|super|self)((?:\s*::\s*[A-Za-z_][A-Za-z0-9_]*)+)")


def expand_use(tree):
    """The paths a `use` tree names: `crate::a::{b, c::{d, e}}` ->
    crate::a::b, crate::a::c::d, crate::a::c::e."""
    tree = re.sub(r"\s+as\s+[A-Za-z_][A-Za-z0-9_]*", "", tree)
    tree = re.sub(r"\s+", "", tree)

    def go(prefix, t):
        # split t at top-level commas
        if not t:
            return [prefix]
        if t.startswith("{") and t.endswith("}"):
            items, depth, cur = [], 0, ""
            for ch in t[1:-1]:
                if ch == "," and depth == 0:
                    items.append(cur)
                    cur = ""
                    continue
                depth += ch == "{"
                depth -= ch == "}"
                cur += ch
            items.append(cur)
            res = []
            for it in items:
                if it:
                    res.extend(go(prefix, it))
            return res
        i = t.find("::{")
        if i >= 0 and t.endswith("}"):
            head = t[:i]
            return go(prefix + [p for p in head.split("::") if p], t[i + 2:])
        return [prefix + [p for p in t.split("::") if p]]

    return go([], tree)


def resolve(src, mods, here, parts):
    """Absolute module parts for a path seen in module `here`."""
    if not parts:
        return None
    if parts[0] == "crate":
        return parts[1:]
    base = list(here)
    while parts and parts[0] in ("super", "self"):
        if parts[0] == "super":
            if not base:
                return None
            base = base[:-1]
        parts = parts[1:]
    return base + parts


def crate_graph(crate):
    src = os.path.join(crate, "src")
    files = []
    for root, _, names in os.walk(src):
        for name in names:
            if name.endswith(".rs"):
                files.append(os.path.join(root, name))
    mods = {}
    for f in files:
        mods[tuple(module_path(src, f))] = f
    graph = {f: set() for f in files}
    for f in sorted(files):
        here = module_path(src, f)
        with open(f, encoding="utf-8") as fh:
            code = strip_comments_and_strings(fh.read())
        paths = []
        for m in USE_TREE.finditer(code):
            paths.extend(expand_use(m.group(1)))
        # `mod x;` children named by a bare path (`x::f()`, `use x::Y`):
        # edges only with --children (a parent using the children it owns,
        # which use `super::` items back, is the usual shape of a module
        # directory, not a cycle the house rules mean).
        children = [] if not WITH_CHILDREN else re.findall(r"\bmod\s+([A-Za-z_][A-Za-z0-9_]*)\s*;", code)
        for m in re.finditer(r"\buse\s+([A-Za-z_][A-Za-z0-9_]*\s*::[^;]*);", code):
            if m.group(1).split("::")[0].strip() in children:
                paths.extend(["self"] + q for q in expand_use(m.group(1)))
        for child in children:
            for m in re.finditer(r"(?<![:\w])" + child + r"((?:\s*::\s*[A-Za-z_][A-Za-z0-9_]*)+)", code):
                paths.append(["self", child] + [q for q in re.sub(r"\s+", "", m.group(1)).split("::") if q])
        rest = USE_TREE.sub(" ", code)
        for m in PATH.finditer(rest):
            paths.append([m.group(1)] + [p for p in re.sub(r"\s+", "", m.group(2)).split("::") if p])
        for p in paths:
            parts = resolve(src, mods, here, p)
            if not parts:
                continue
            target = file_of(src, mods, parts)
            if target is None or target == f:
                continue
            tparts = module_path(src, target)
            if not tparts:
                continue  # the crate root
            # A file's own ancestors (a child naming `super::X` items that
            # its parent defines) are imports too; only a parent naming its
            # own children through `mod` is not, and `mod` lines are not scanned.
            graph[f].add(target)
    return src, graph


def cycles(graph):
    """Strongly connected components with a cycle (Tarjan), each as one cycle path."""
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph[v]:
                comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    out = []
    for comp in comps:
        # One concrete cycle through the component's first file (BFS back to it).
        members = set(comp)
        start = comp[0]
        prev, queue, found = {start: None}, [start], None
        while queue and found is None:
            v = queue.pop(0)
            for w in sorted(graph[v]):
                if w == start:
                    found = v
                    break
                if w in members and w not in prev:
                    prev[w] = v
                    queue.append(w)
        path = [start]
        v = found
        back = []
        while v is not None and v != start:
            back.append(v)
            v = prev[v]
        path.extend(reversed(back))
        path.append(start)
        out.append((comp, path))
    return out


WITH_CHILDREN = False

# Small crates the script must judge right, checked before every run so that
# a broken scanner fails CI instead of passing everything.
SELF_TEST = [
    # (files, cycle expected without --children, with --children)
    ({"lib.rs": "mod a; mod b;", "a.rs": "use crate::b::X;", "b.rs": "pub fn f() { crate::a::g() }"}, True, True),
    ({"lib.rs": "mod a; mod b;", "a.rs": "use crate::{b::{self, X as Y}};", "b.rs": "use super::a;"}, True, True),
    ({"lib.rs": "mod a; mod b;", "a.rs": "/// [`crate::b`]\nfn f() {}", "b.rs": "use crate::a::X;"}, False, False),
    ({"lib.rs": "mod a; mod b;", "a.rs": 'const S: &str = "crate::b::X";', "b.rs": "use crate::a::X;"}, False, False),
    ({"lib.rs": "mod d;", "d/mod.rs": "mod c;\nfn f() { c::g() }", "d/c.rs": "use super::X;"}, False, True),
    ({"lib.rs": "mod a; mod b;", "a.rs": "use crate::X;", "b.rs": "use crate::a::Y;"}, False, False),
]


def self_test():
    import tempfile
    global WITH_CHILDREN
    saved = WITH_CHILDREN
    try:
        for i, (files, plain, children) in enumerate(SELF_TEST):
            with tempfile.TemporaryDirectory() as d:
                for name, text in files.items():
                    path = os.path.join(d, "src", name)
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    with open(path, "w", encoding="utf-8") as fh:
                        fh.write(text)
                for flag, want in ((False, plain), (True, children)):
                    WITH_CHILDREN = flag
                    got = bool(cycles(crate_graph(d)[1]))
                    if got != want:
                        print(f"module-cycles.py self-test {i} (--children: {flag}): "
                              f"cycle {'found' if got else 'missed'}", file=sys.stderr)
                        return False
    finally:
        WITH_CHILDREN = saved
    return True


def main(argv):
    global WITH_CHILDREN
    if argv and argv[0] == "--children":
        WITH_CHILDREN, argv = True, argv[1:]
    if not argv:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    if not self_test():
        return 2
    bad = False
    for crate in argv:
        src, graph = crate_graph(crate)
        name = os.path.basename(os.path.normpath(crate))
        found = cycles(graph)
        if not found:
            print(f"{name}: no module cycle ({len(graph)} files)")
        for comp, path in found:
            bad = True
            rel = lambda p: os.path.relpath(p, src)
            print(f"{name}: cycle {' -> '.join(rel(p) for p in path)}"
                  + (f"  (component: {', '.join(rel(p) for p in comp)})" if len(comp) > len(path) - 1 else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
