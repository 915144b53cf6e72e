//! Held call groups and tool-format switches, as format data: a group counts
//! only as a whole (its text is content when it fails), a tool format's
//! `[[switch]]` picks its entry per request, and the new options are checked
//! when the format compiles.

use llmsift_core::{FormatError, FormatSpec, ParserFactory, Request, Tools};
use std::sync::Arc;

/// `[` opens a group of `(NAME)` calls, `]` closes it; `json` switches to
/// `{"name": …}` bodies.
const GROUPS: &str = r#"
name = "groups"
kind = "tools"
entry = "plain"
[[switch]]
kwarg = "style"
equals = "json"
state = "js"
[calls]
known_names_only = true
word_names = true
schema_args = true
[terminals]
open = ["[["]
close = ["]]"]
triple = ["]]]"]
call = ["("]
end = [")"]
[states.plain]
text = "content"
on.open = { to = "group", hold = "rest" }
[states.js]
text = "content"
on.open = { to = "jgroup", hold = "rest" }
[states.rest]
text = "content"
[states.group]
text = "blank"
on.call = { to = "name", call = true }
on.close = { to = "plain", release = true }
on.triple = { to = "rest", fail = true }
[states.name]
text = "name"
on.end = { to = "group", end = true }
on.close = { to = "rest", fail = true }
[states.jgroup]
text = "blank"
on.call = { to = "body", call = true }
on.close = { to = "js", release = true }
[states.body]
text = { kind = "envelope", single = true, empty_args = true, done = "after", fail = "after" }
on.end = { to = "jgroup", end = true }
[states.after]
text = "blank"
on.end = { to = "jgroup", end = true }
"#;

fn factory() -> ParserFactory {
    let spec = FormatSpec::from_toml(GROUPS).unwrap();
    ParserFactory::new(None, Some(&spec)).unwrap()
}

fn request(style: Option<&str>) -> Request {
    let tools = serde_json::json!([
        {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "g", "parameters": {"type": "object", "properties": {}}}}
    ]);
    Request {
        tools: Arc::new(Tools::from_json(&tools)),
        chat_template_kwargs: style.map(|s| serde_json::json!({ "style": s })),
        id_seed: Some(7),
        ..Request::default()
    }
}

/// One-shot, and streamed at every byte boundary: the same message.
fn parse(req: &Request, text: &str) -> llmsift_core::Message {
    let f = factory();
    let whole = f.parse(req, text, None);
    for cut in 1..text.len() {
        if !text.is_char_boundary(cut) {
            continue;
        }
        let mut p = f.parser(req);
        let mut fold = llmsift_core::Folder::default();
        fold.push(&p.push(&text[..cut], None));
        fold.push(&p.push(&text[cut..], None));
        fold.push(&p.finish());
        assert_eq!(fold.finish(), whole, "cut at {cut} of {text:?}");
    }
    whole
}

#[test]
fn a_whole_group_is_calls() {
    let m = parse(&request(None), "a [[(f)(g)]] b [[(g)]]");
    let names: Vec<_> = m.tool_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["f", "g", "g"]);
    assert_eq!(m.content.as_deref(), Some("a  b "));
}

#[test]
fn a_release_marker_held_back_at_the_end_still_releases() {
    // `]]` could be the start of `]]]` until the output ends.
    let m = parse(&request(None), "x [[(f)]]");
    assert_eq!(m.tool_calls.len(), 1);
    assert_eq!(m.content.as_deref(), Some("x "));
    let m = parse(&request(None), "[[(f)]]] y");
    assert!(m.tool_calls.is_empty());
    assert_eq!(m.content.as_deref(), Some("[[(f)]]] y"));
}

#[test]
fn a_failed_group_is_content_and_so_is_the_rest() {
    for text in [
        "a [[(f)(h)]] b [[(g)]]",
        "a [[(f) x (g)]] [[(g)]]",
        "a [[(f)",
        "[[]]",
        "[[(f]] (g)",
        "[[(two words)]]",
    ] {
        let m = parse(&request(None), text);
        assert!(m.tool_calls.is_empty(), "{text:?}: {:?}", m.tool_calls);
        assert_eq!(m.content.as_deref(), Some(text));
    }
}

#[test]
fn the_switch_picks_the_entry_and_arguments_are_typed() {
    let m = parse(&request(Some("json")), r#"[[({"name": "f", "arguments": {"n": "7"}})]]"#);
    assert_eq!(m.tool_calls.len(), 1);
    assert_eq!(m.tool_calls[0].arguments, r#"{"n": 7}"#);
    // Without the switch the body is a name with white space: not a call.
    let text = r#"[[({"name": "f"})]]"#;
    let m = parse(&request(None), text);
    assert_eq!(m.content.as_deref(), Some(text));
    // `single`: text after the object, or an unclosed object, fails the group.
    for text in [r#"[[({"name": "g"} x)]]"#, r#"[[({"name": "g")]]"#] {
        let m = parse(&request(Some("json")), text);
        assert!(m.tool_calls.is_empty(), "{text:?}");
        assert_eq!(m.content.as_deref(), Some(text));
    }
}

#[test]
fn new_options_are_checked_at_build_time() {
    let both = GROUPS.replace(
        r#"on.open = { to = "group", hold = "rest" }"#,
        r#"on.open = { to = "group", hold = "rest", release = true }"#,
    );
    let spec = FormatSpec::from_toml(&both).unwrap();
    assert!(matches!(ParserFactory::new(None, Some(&spec)), Err(FormatError::BadKey { .. })));
    let unheld = GROUPS
        .replace(r#"on.open = { to = "group", hold = "rest" }"#, r#"on.open = "group""#)
        .replace(r#"on.open = { to = "jgroup", hold = "rest" }"#, r#"on.open = "jgroup""#);
    let spec = FormatSpec::from_toml(&unheld).unwrap();
    assert!(matches!(ParserFactory::new(None, Some(&spec)), Err(FormatError::BadKey { .. })));
    let missing = GROUPS.replace(r#"state = "js""#, r#"state = "nowhere""#);
    let spec = FormatSpec::from_toml(&missing).unwrap();
    assert!(matches!(ParserFactory::new(None, Some(&spec)), Err(FormatError::UnknownState { .. })));
}
