//! Formats are data: a format for a model Sift does not ship parses and
//! streams; invalid format files fail at build time, each with its own error;
//! binding to a vocabulary that lacks a special-token marker names it.

use llmsift_core::{Folder, FormatError, FormatSpec, ParserFactory, Registry, Request};

const SCRATCHPAD: &str = r#"
name = "scratchpad"
kind = "reasoning"
initial = "content"
[terminals]
open = ["<scratchpad>"]
close = ["</scratchpad>"]
[states.content]
text = "content"
on.open = "pad"
[states.pad]
text = "reasoning"
on.close = "content"
"#;

const CALLS: &str = r#"
name = "callname"
kind = "tools"
[terminals]
open = ["<call name=\""]
name_end = ["\">"]
close = ["</call>"]
[states.content]
text = "content"
on.open = { to = "name", call = true }
[states.name]
text = "name"
on.name_end = "args"
[states.args]
text = "args"
on.close = { to = "content", end = true }
"#;

#[test]
fn a_new_model_in_two_files() {
    let mut r = Registry::builtin().clone();
    r.add_toml(SCRATCHPAD).unwrap();
    r.add_toml(CALLS).unwrap();
    let f = r.factory(Some("scratchpad"), Some("callname")).unwrap();
    let text =
        "Hi.<scratchpad>think < hard</scratchpad>Calling.<call name=\"lookup\">{\"q\": \"a<b\"}</call> done";
    let m = f.parse(&Request::default(), text, None);
    assert_eq!(m.reasoning.as_deref(), Some("think < hard"));
    assert_eq!(m.content.as_deref(), Some("Hi.Calling. done"));
    assert_eq!(m.tool_calls.len(), 1);
    assert_eq!(m.tool_calls[0].name, "lookup");
    assert_eq!(m.tool_calls[0].arguments, "{\"q\": \"a<b\"}");
    for cut in 0..=text.len() {
        let mut p = f.parser(&Request::default());
        let mut fold = Folder::default();
        fold.push(&p.push(&text[..cut], None));
        fold.push(&p.push(&text[cut..], None));
        fold.push(&p.finish());
        let s = fold.finish();
        assert_eq!((&s.reasoning, &s.content), (&m.reasoning, &m.content), "cut {cut}");
        assert_eq!(s.tool_calls[0].arguments, m.tool_calls[0].arguments, "cut {cut}");
    }
}

fn err(text: &str) -> FormatError {
    Registry::default().add_toml(text).unwrap_err()
}

#[test]
fn ambiguous_spellings_fail() {
    let e = err(r#"
name = "bad"
kind = "reasoning"
[terminals]
a = ["<tool>"]
b = ["<call>", "<tool>"]
[states.content]
text = "content"
on.a = "content"
on.b = "content"
"#);
    assert!(matches!(e, FormatError::Ambiguous { .. }), "{e}");
    assert!(e.to_string().contains("\"<tool>\""), "{e}");
}

#[test]
fn unreachable_state_fails() {
    let e = err(r#"
name = "bad"
kind = "reasoning"
[states.content]
text = "content"
[states.island]
text = "reasoning"
"#);
    assert_eq!(e, FormatError::Unreachable { state: "island".into() });
}

#[test]
fn unbounded_holdback_fails() {
    let long = "x".repeat(llmsift_core::MAX_MARKER_LEN + 1);
    let e = err(&format!(
        "name = \"bad\"\nkind = \"reasoning\"\n[terminals]\nm = [\"{long}\"]\n[states.content]\ntext = \"content\"\non.m = \"content\"\n"
    ));
    assert!(
        matches!(e, FormatError::BadSpelling { len, .. } if len == llmsift_core::MAX_MARKER_LEN + 1),
        "{e}"
    );
    let e = err("name = \"bad\"\nkind = \"reasoning\"\n[terminals]\nm = [\"\"]\n[states.content]\ntext = \"content\"\n");
    assert!(matches!(e, FormatError::BadSpelling { len: 0, .. }), "{e}");
}

#[test]
fn reprocess_loop_and_unknown_names_fail() {
    let e = err(r#"
name = "bad"
kind = "reasoning"
[terminals]
m = ["<m>"]
[states.content]
text = "content"
on.m = { to = "other", reprocess = true }
[states.other]
text = "content"
on.m = { to = "content", reprocess = true }
"#);
    assert!(matches!(e, FormatError::ReprocessCycle { .. }), "{e}");
    let e = err(
        "name = \"bad\"\nkind = \"reasoning\"\n[states.content]\ntext = \"content\"\non.nope = \"content\"\n",
    );
    assert!(matches!(e, FormatError::UnknownTerminal { .. }), "{e}");
    let e = err("name = \"bad\"\nkind = \"reasoning\"\n[states.content]\ntext = \"poetry\"\n");
    assert!(
        matches!(&e, FormatError::BadKey { table, key, .. } if table == "states.content" && key == "text"),
        "{e}"
    );
    assert!(matches!(err("not toml ["), FormatError::Syntax { .. }));
    // A kernel that hands the rest of its text back to itself.
    let e = err(r#"
name = "bad"
kind = "tools"
[terminals]
open = ["<c>"]
[states.content]
text = "content"
on.open = "calls"
[states.calls]
text = { kind = "envelope", fail = "calls" }
"#);
    assert!(matches!(&e, FormatError::ReprocessCycle { state } if state == "calls"), "{e}");
}

#[test]
fn states_handing_a_byte_around_never_hang() {
    // Two envelopes that fail into each other compile (each hands over to
    // another state), but would pass a bad byte around forever: the engine
    // breaks the cycle by passing the byte on as content.
    let spec = FormatSpec::from_toml(
        r#"
name = "pingpong"
kind = "tools"
[terminals]
open = ["<c>"]
[states.content]
text = "content"
on.open = "a"
[states.a]
text = { kind = "envelope", fail = "b" }
[states.b]
text = { kind = "envelope", fail = "a" }
"#,
    )
    .unwrap();
    let f = ParserFactory::new(None, Some(&spec)).unwrap();
    let req = Request { id_seed: Some(1), ..Request::default() };
    let text = "x<c>?{\"name\": \"f\", \"arguments\": {}}";
    let one = f.parse(&req, text, None);
    assert_eq!(one.content.as_deref(), Some("x?"));
    assert_eq!(one.tool_calls.len(), 1);
    let mut p = f.parser(&req);
    let mut fold = Folder::default();
    for ch in text.chars() {
        fold.push(&p.push(&ch.to_string(), None));
    }
    fold.push(&p.finish());
    assert_eq!(fold.finish(), one);
}

#[test]
fn missing_required_token_is_named_at_bind_time() {
    // A vocabulary that knows every marker except `</think>`.
    let vocab = |m: &str| {
        if m == "</think>" {
            None
        } else {
            Some(m.len() as u32 + 1000)
        }
    };
    // vLLM's DeepSeek-R1 parser raises in its constructor without the token.
    let f = Registry::builtin().factory(Some("deepseek_r1"), Some("hermes")).unwrap();
    let e = f.bind(&vocab).unwrap_err();
    assert_eq!(e, FormatError::MissingToken { marker: "</think>".into() });
    assert!(e.to_string().contains("</think>"));
    // Qwen3's only searches for it: the marker falls back to text matching,
    // so its spelling still ends reasoning when ids are given.
    let f = Registry::builtin().factory(Some("qwen3"), Some("hermes")).unwrap().bind(&vocab).unwrap();
    let m = f.parse(&Request::default(), "a</think>b", Some(&[1, 2, 3]));
    assert_eq!((m.reasoning.as_deref(), m.content.as_deref()), (Some("a"), Some("b")));
}

#[test]
fn unknown_parser_names() {
    let r = Registry::builtin();
    assert!(matches!(r.factory(Some("nope"), None), Err(FormatError::UnknownParser { .. })));
    assert!(matches!(r.factory(Some("hermes"), None), Err(FormatError::WrongKind { .. })));
}
