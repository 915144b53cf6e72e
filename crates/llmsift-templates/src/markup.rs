//! Jinja2's `Markup` arithmetic, by a source rewrite before compiling.
//!
//! In Jinja2, `"…"|safe` is a `Markup` string, and `Markup + str` (or
//! `str + Markup`) HTML-escapes the plain side even with autoescape off, so
//! `"Use '"|safe + t.description + "'"|safe` prints the description escaped
//! (functionary v3.1 relies on it, knowingly or not). minijinja concatenates
//! plain strings and has no hook for `+`. So each `+` chain that holds a
//! `…|safe` operand is rewritten to escape every operand:
//! `(A)|escape + (B)|escape + …`. Escaping a safe string leaves it as is, so
//! the `|safe` operands keep their text and the plain ones come out as in
//! Jinja2 (`escape(a + b) == escape(a) + escape(b)`).
//!
//! Invariants: a source with no `|safe` chain comes back byte-identical
//! (string literals, comments and raw blocks are never touched); the rewrite
//! is local to the chain's own bracket level (`f("a"|safe + x)` escapes `x`,
//! not the call around it). A chain that also subtracts (`-`) is left alone.

/// Rewrites every `+` chain holding a `|safe` operand; see the module docs.
pub(crate) fn rewrite_markup_concat(source: &str) -> String {
    if !source.contains("safe") {
        return source.to_string();
    }
    let mut inserts: Vec<(usize, &str)> = vec![];
    let bytes = source.as_bytes();
    let mut i = 0;
    while i + 1 < bytes.len() {
        match (bytes[i], bytes[i + 1]) {
            (b'{', b'#') => i = source[i..].find("#}").map_or(bytes.len(), |e| i + e + 2),
            (b'{', b'{') | (b'{', b'%') => {
                let close = if bytes[i + 1] == b'{' { b'}' } else { b'%' };
                let (toks, end) = tokenize(source, i + 2, close);
                if bytes[i + 1] == b'%' && is_raw(source, &toks) {
                    i = source[end..].find("endraw").map_or(bytes.len(), |e| end + e);
                    continue;
                }
                chains(source, &toks, &mut inserts);
                i = end;
            }
            _ => i += 1,
        }
    }
    if inserts.is_empty() {
        return source.to_string();
    }
    inserts.sort_by_key(|(at, s)| (*at, *s == "("));
    let mut out = String::with_capacity(source.len() + inserts.len() * 8);
    let mut last = 0;
    for (at, s) in inserts {
        out.push_str(&source[last..at]);
        out.push_str(s);
        last = at;
    }
    out.push_str(&source[last..]);
    out
}

#[derive(Debug, Clone, Copy)]
struct Tok {
    start: usize,
    end: usize,
    depth: u32,
}

fn is_raw(source: &str, toks: &[Tok]) -> bool {
    toks.first().is_some_and(|t| &source[t.start..t.end] == "raw")
}

/// Tokens of one block body from `from`, up to the block's closer (`}}` or
/// `%}`, with an optional `-`/`+` before it); returns them and the index just
/// past the closer. Openers and closers carry the outer depth.
fn tokenize(source: &str, from: usize, close: u8) -> (Vec<Tok>, usize) {
    let b = source.as_bytes();
    let mut toks = vec![];
    let mut depth: u32 = 0;
    let mut i = from;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == close && b.get(i + 1) == Some(&b'}') {
            return (toks, i + 2);
        }
        if (c == b'-' || c == b'+') && b.get(i + 1) == Some(&close) && b.get(i + 2) == Some(&b'}') {
            return (toks, i + 3);
        }
        let start = i;
        if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
        } else if c.is_ascii_alphanumeric() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
        } else {
            let two = source.get(i..i + 2).unwrap_or("");
            let one = source[i..].chars().next().map_or(1, char::len_utf8);
            i += if matches!(two, "==" | "!=" | "<=" | ">=" | "//" | "**") { 2 } else { one };
        }
        let text = &source[start..i];
        let tok_depth = match text {
            "(" | "[" | "{" => {
                depth += 1;
                depth - 1
            }
            ")" | "]" | "}" => {
                depth = depth.saturating_sub(1);
                depth
            }
            _ => depth,
        };
        toks.push(Tok { start, end: i, depth: tok_depth });
    }
    (toks, b.len())
}

/// Tokens that end an operand of `+` at its own level (lower precedence, or
/// not an expression at all).
fn ends_operand(text: &str) -> bool {
    matches!(
        text,
        "," | ":"
            | "="
            | "=="
            | "!="
            | "<"
            | ">"
            | "<="
            | ">="
            | "~"
            | "-"
            | "if"
            | "else"
            | "and"
            | "or"
            | "not"
            | "in"
            | "is"
            | "for"
            | "set"
            | "elif"
            | "return"
            | "do"
    )
}

/// Finds the `+` chains holding a `|safe` operand and records where to wrap
/// each operand in `(…)|escape`.
fn chains<'a>(source: &'a str, toks: &[Tok], inserts: &mut Vec<(usize, &'a str)>) {
    let text = |t: &Tok| &source[t.start..t.end];
    let mut done_until = 0;
    for k in 0..toks.len().saturating_sub(1) {
        if k < done_until || text(&toks[k]) != "|" || text(&toks[k + 1]) != "safe" {
            continue;
        }
        let d = toks[k].depth;
        let bound = |t: &Tok| t.depth < d || (t.depth == d && ends_operand(text(t)));
        let mut lo = k;
        while lo > 0 && !bound(&toks[lo - 1]) {
            lo -= 1;
        }
        let mut hi = k;
        while hi < toks.len() && !bound(&toks[hi]) {
            hi += 1;
        }
        done_until = hi;
        let span = &toks[lo..hi];
        let pluses: Vec<usize> =
            (0..span.len()).filter(|&j| span[j].depth == d && text(&span[j]) == "+").collect();
        // A leading `-`/`+` sign or a chain of one operand is not ours.
        if pluses.is_empty()
            || pluses[0] == 0
            || lo > 0 && text(&toks[lo - 1]) == "-"
            || hi < toks.len() && text(&toks[hi]) == "-"
        {
            continue;
        }
        let mut from = 0;
        for &p in pluses.iter().chain(std::iter::once(&span.len())) {
            if p > from {
                inserts.push((span[from].start, "("));
                inserts.push((span[p - 1].end, ")|escape"));
            }
            from = p + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::rewrite_markup_concat as rw;

    #[test]
    fn escapes_every_operand_of_a_safe_chain() {
        assert_eq!(
            rw(r#"{{ "Use '"|safe + t.name + "'\n"|safe + t | tojson() }}"#),
            r#"{{ ("Use '"|safe)|escape + (t.name)|escape + ("'\n"|safe)|escape + (t | tojson())|escape }}"#
        );
    }

    #[test]
    fn leaves_other_sources_alone() {
        for s in [
            "{{ a + b }}{% if x %}{{ y|safe }}{% endif %}",
            r#"{{ "a|safe + b" }}{# "x"|safe + y #}"#,
            "{% raw %}{{ 'x'|safe + y }}{% endraw %}",
            "{{ 'a'|safe + b - c }}",
        ] {
            assert_eq!(rw(s), s);
        }
    }

    #[test]
    fn stays_inside_its_bracket_level() {
        assert_eq!(rw("{{ f('a'|safe + x, y) + z }}"), "{{ f(('a'|safe)|escape + (x)|escape, y) + z }}");
        assert_eq!(rw("{%- set s = 'a'|safe + x -%}"), "{%- set s = ('a'|safe)|escape + (x)|escape -%}");
    }
}
