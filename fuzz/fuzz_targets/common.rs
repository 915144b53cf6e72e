//! Shared by the targets: cutting an input into deltas the same way for a
//! given input, and the checks every parsed message must pass.

#![allow(dead_code)]

use llmsift_core::{Delta, Message, Parser};

/// FNV-1a: a cut pattern that is a function of the input alone.
pub fn hash(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &c| (h ^ u64::from(c)).wrapping_mul(0x100_0000_01b3))
}

/// `text` cut into pieces of 1 to 16 bytes (on char boundaries), by `seed`.
pub fn pieces(text: &str, mut seed: u64) -> Vec<&str> {
    let mut out = vec![];
    let mut at = 0;
    while at < text.len() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut end = (at + 1 + (seed % 16) as usize).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[at..end]);
        at = end;
    }
    out
}

/// Streams `pieces` through `p`, checking after every delta that each
/// call's arguments so far are a prefix of `one`'s final arguments.
pub fn stream(mut p: Parser, pieces: &[&str], one: &Message) -> Message {
    let mut fold = llmsift_core::Folder::default();
    let mut args: Vec<String> = vec![];
    let mut d = Delta::default();
    let mut step = |d: &Delta, fold: &mut llmsift_core::Folder| {
        fold.push(d);
        for c in &d.tool_calls {
            if args.len() <= c.index {
                args.resize(c.index + 1, String::new());
            }
            args[c.index].push_str(&c.arguments);
            let fin = one.tool_calls.get(c.index).map_or("", |c| c.arguments.as_str());
            assert!(fin.starts_with(&args[c.index]), "streamed arguments are not a prefix: {:?} vs {fin:?}", args[c.index]);
        }
    };
    for s in pieces {
        d.clear();
        p.push_into(s, None, &mut d);
        assert!(p.held_bytes() < llmsift_core::MAX_MARKER_LEN);
        step(&d, &mut fold);
    }
    d.clear();
    p.finish_into(&mut d);
    step(&d, &mut fold);
    fold.finish()
}

/// Every call has a name (in every format: a nameless call is content or
/// dropped, `nameless_args` included) and JSON-object arguments.
pub fn check_calls(m: &Message) {
    for c in &m.tool_calls {
        assert!(!c.name.trim().is_empty(), "a call without a name: {m:?}");
        // Python's json reads lone surrogate escapes; serde_json does not,
        // so every surrogate escape is made a plain one first.
        let mut b = c.arguments.as_bytes().to_vec();
        for i in 0..b.len().saturating_sub(5) {
            if b[i] == b'\\' && b[i + 1] == b'u' && matches!(b[i + 2], b'd' | b'D') {
                b[i + 2] = b'0';
            }
        }
        match serde_json::from_slice::<serde_json::Value>(&b) {
            Ok(v) => assert!(v.is_object(), "arguments not an object: {:?}", c.arguments),
            // serde_json refuses numbers out of f64's range; JSON does not.
            Err(e) if e.to_string().contains("out of range") => assert!(c.arguments.starts_with('{')),
            // serde_json stops at 128 levels; the default depth limit lets
            // arguments reach 128: checked with Sift's own scanner instead.
            Err(e) if e.to_string().contains("recursion limit") => {
                let mut s = llmsift_core::json::JsonScanner::new();
                s.feed(c.arguments.as_bytes());
                assert!(s.is_complete() && c.arguments.starts_with('{'), "arguments not JSON: {:?}", c.arguments);
                let deepest = depth(&c.arguments);
                assert!(deepest <= llmsift_core::Limits::default().max_depth, "arguments {deepest} levels deep");
            }
            Err(e) => panic!("arguments not JSON ({e}): {:?}", c.arguments),
        }
    }
}

/// The deepest nesting of a JSON text (brackets outside strings).
fn depth(json: &str) -> usize {
    let (mut d, mut max, mut in_str, mut esc) = (0usize, 0, false, false);
    for b in json.bytes() {
        match (in_str, esc, b) {
            (true, true, _) => esc = false,
            (true, false, b'\\') => esc = true,
            (true, false, b'"') => in_str = false,
            (true, false, _) => {}
            (false, _, b'"') => in_str = true,
            (false, _, b'{' | b'[') => {
                d += 1;
                max = max.max(d);
            }
            (false, _, b'}' | b']') => d = d.saturating_sub(1),
            _ => {}
        }
    }
    max
}
