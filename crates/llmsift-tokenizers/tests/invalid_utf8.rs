//! Invalid UTF-8 split across deltas (issue 12, point 3): the core takes
//! `&str`, so the bytes a model writes meet UTF-8 here, in the detokenizer.
//! A byte-level token sequence that is not UTF-8 (a 4-byte lead cut off by
//! ASCII, a stray continuation byte, a sequence left open at the end) is
//! released as U+FFFD exactly where `decode` puts it, never panics, and the
//! parser's answer token by token equals its one-shot answer on the decode.

mod common;

use common::tok;
use llmsift_core::{Delta, Folder, Registry, Request};

#[test]
fn invalid_utf8_across_deltas_is_replacement_chars_streamed_as_one_shot() {
    let t = tok("qwen3");
    // Byte-level BPE spells byte 0xF0 (a 4-byte lead) `ð`, 0xA5 (a
    // continuation byte) `¥`.
    let lead = t.token_to_id("ð").expect("byte token 0xF0");
    let cont = t.token_to_id("¥").expect("byte token 0xA5");
    let emoji = [lead, cont, cont];
    let mut ids = t.encode("<think>a").unwrap();
    ids.extend(&emoji[..1]); // a lead byte, cut off…
    ids.extend(t.encode("b</think>c").unwrap()); // …by ASCII and a marker
    ids.extend(&emoji[1..]); // continuation bytes with no lead
    ids.extend(t.encode("<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": \"").unwrap());
    ids.extend(&emoji[..1]); // inside an argument string
    ids.extend(t.encode("\"}}\n</tool_call>").unwrap());
    ids.extend(&emoji[..1]); // left open at the end
    let decoded = t.decode(&ids);
    assert!(decoded.contains('\u{FFFD}'));

    let f = Registry::builtin().factory(Some("qwen3"), Some("hermes")).unwrap();
    let req = Request { id_seed: Some(3), ..Request::default() };
    let one = f.parse(&req, &decoded, None);

    let mut d = t.detokenizer();
    let mut p = f.parser(&req);
    let mut fold = Folder::default();
    let mut delta = Delta::default();
    let mut text = String::new();
    for &id in &ids {
        if let Some(s) = d.push(id) {
            text.push_str(&s);
            delta.clear();
            p.push_into(&s, Some(&[id]), &mut delta);
            fold.push(&delta);
        }
    }
    let rest = d.finish();
    text.push_str(&rest);
    delta.clear();
    p.push_into(&rest, None, &mut delta);
    p.finish_into(&mut delta);
    fold.push(&delta);
    assert_eq!(text, decoded);
    let streamed = fold.finish();
    assert_eq!(streamed, one);
    assert_eq!(one.reasoning.as_deref(), Some("a\u{FFFD}b"));
    assert_eq!(one.tool_calls.len(), 1);
    assert!(one.tool_calls[0].arguments.contains('\u{FFFD}'));
    assert!(one.content.as_deref().is_some_and(|c| c.starts_with('c') && c.ends_with('\u{FFFD}')));
}
