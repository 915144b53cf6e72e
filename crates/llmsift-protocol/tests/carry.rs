//! The carried state (`carry`): it stays small over a 32,000-token
//! generation, a resumed processor continues exactly, and every kind of bad
//! token is refused with its own error, never a panic.

use llmsift_core::Registry;
use llmsift_protocol::carry::{open, seal, CarryError, ProcessorState, StateKey};
use llmsift_protocol::{ChatCompletionRequest, CheckedRequest, ChoiceProcessor, FinishReason, Options};
use llmsift_tokenizers::TokenizerView;
use serde_json::json;

fn key() -> StateKey {
    StateKey::new("replicas share this key").unwrap()
}

fn request() -> CheckedRequest {
    let body = json!({
        "model": "m", "messages": [], "stream": true,
        "tools": [{"type": "function", "function": {"name": "write_file", "parameters": {
            "type": "object", "properties": {"path": {"type": "string"}, "text": {"type": "string"}}}}}]
    });
    let mut r = ChatCompletionRequest::from_value(body).unwrap().check().unwrap();
    r.id_seed = Some(11);
    r
}

/// A 32,000-token output of Qwen3 with hermes calls: long reasoning, content,
/// and calls whose arguments run to several kilobytes.
fn long_output(view: &TokenizerView) -> Vec<u32> {
    let mut text = String::from("<think>\n");
    for i in 0..1500 {
        text.push_str(&format!("Step {i}: the file needs a paragraph about ünïcode and <tags>. "));
    }
    text.push_str("</think>\n\nHere is the plan.\n");
    for c in 0..6 {
        let body: String = (0..400).map(|i| format!("line {c}.{i} \\\"quoted\\\" {{braces}}\\n")).collect();
        text.push_str(&format!(
            "<tool_call>\n{{\"name\": \"write_file\", \"arguments\": {{\"path\": \"f{c}.txt\", \"text\": \"{body}\"}}}}\n</tool_call>\nAnd more words after call {c}. "
        ));
    }
    let mut ids = view.encode(&text).unwrap();
    let filler = view.encode(" Then some more content follows, plainly.").unwrap();
    while ids.len() < 32_000 {
        ids.extend_from_slice(&filler);
    }
    ids.truncate(32_000);
    ids
}

#[test]
fn the_state_stays_within_2_kib_over_32k_tokens() {
    let view = TokenizerView::named("qwen3").expect("qwen3 tokenizer (scripts/fetch-assets.sh)");
    let f = Registry::builtin().factory(Some("qwen3"), Some("hermes")).unwrap().bind(&view).unwrap();
    let req = request();
    let opts = Options::default();
    let ids = long_output(&view);
    let (key, bind) = (key(), b"req-32k".as_slice());
    let mut whole = ChoiceProcessor::new(&f, &req, &opts);
    let mut moved = ChoiceProcessor::new(&f, &req, &opts);
    let mut detok = view.detokenizer();
    let (mut largest, mut at, mut steps_whole, mut steps_moved) = (0, 0, vec![], vec![]);
    for (i, id) in ids.iter().enumerate() {
        let text = detok.push(*id).unwrap_or_default();
        let token = seal(&key, bind, &moved.snapshot());
        if token.len() > largest {
            (largest, at) = (token.len(), i);
        }
        if i % 101 == 0 {
            let state: ProcessorState = open(&key, bind, &token).unwrap();
            moved = ChoiceProcessor::resume(&f, &req, &opts, state).unwrap();
        }
        steps_whole.extend(whole.push(&text, Some(&[*id]), None));
        steps_moved.extend(moved.push(&text, Some(&[*id]), None));
    }
    steps_whole.push(whole.finish(FinishReason::Stop));
    steps_moved.push(moved.finish(FinishReason::Stop));
    assert_eq!(steps_whole, steps_moved, "a resumed processor continues exactly");
    assert_eq!(whole.counts(), moved.counts());
    assert!(largest <= 2048, "the state reached {largest} bytes at token {at}");
    eprintln!("largest state over 32,000 tokens: {largest} bytes (at token {at})");
}

fn sealed() -> (String, llmsift_core::ParserFactory) {
    let f = Registry::builtin().factory(Some("qwen3"), Some("hermes")).unwrap();
    let mut p = ChoiceProcessor::new(&f, &request(), &Options::default());
    p.push("Thinking.</think>Hello <tool_call>\n{\"name\": \"write_file\", \"argu", None, None);
    (seal(&key(), b"req-1", &p.snapshot()), f)
}

fn opened(token: &str, bind: &[u8], f: &llmsift_core::ParserFactory) -> Result<ChoiceProcessor, CarryError> {
    let state: ProcessorState = open(&key(), bind, token)?;
    ChoiceProcessor::resume(f, &request(), &Options::default(), state)
}

#[test]
fn every_bad_token_has_its_own_error() {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let (token, f) = sealed();
    assert!(opened(&token, b"req-1", &f).is_ok());
    let bytes = b64.decode(&token).unwrap();
    let reseal = |b: &[u8]| b64.encode(b);

    // Forged: one body byte changed, or the right bytes under another key.
    let mut forged = bytes.clone();
    forged[12] ^= 1;
    assert_eq!(opened(&reseal(&forged), b"req-1", &f).unwrap_err(), CarryError::Forged);
    let other_key = StateKey::new("another deployment's key").unwrap();
    let p = ChoiceProcessor::new(&f, &request(), &Options::default());
    let theirs = seal(&other_key, b"req-1", &p.snapshot());
    assert_eq!(opened(&theirs, b"req-1", &f).unwrap_err(), CarryError::Forged);

    // Truncated: cut anywhere, in bytes or in base64 characters.
    for cut in [0, 1, 3, 7, 8, 20, bytes.len() - 1] {
        assert_eq!(
            opened(&reseal(&bytes[..cut]), b"req-1", &f).unwrap_err(),
            CarryError::Truncated,
            "cut {cut}"
        );
    }
    for cut in [5, 13, token.len() - 1, token.len() - 2, token.len() - 3] {
        assert_eq!(
            opened(&token[..cut], b"req-1", &f).unwrap_err(),
            CarryError::Truncated,
            "cut {cut} chars"
        );
    }

    // Replayed for another request.
    assert_eq!(opened(&token, b"req-2", &f).unwrap_err(), CarryError::OtherRequest);

    // Another version: an older envelope, or another body layout.
    let mut old = bytes.clone();
    old[1] = 0;
    assert!(matches!(opened(&reseal(&old), b"req-1", &f).unwrap_err(), CarryError::OtherVersion { .. }));
    let mut layout = bytes.clone();
    layout[2] = layout[2].wrapping_add(1);
    let e = opened(&reseal(&layout), b"req-1", &f).unwrap_err();
    assert!(matches!(e, CarryError::OtherVersion { found: (1, _), .. }), "{e:?}");
    assert!(e.to_string().contains("another version"));

    // Not a token at all.
    for junk in ["not base64 at all!", "AAAA", "{\"role_sent\": true}"] {
        assert_eq!(opened(junk, b"req-1", &f).unwrap_err(), CarryError::Malformed, "{junk}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(opened(&reseal(&longer), b"req-1", &f).unwrap_err(), CarryError::Malformed);

    // Authentic, but for another parser format.
    let other = Registry::builtin().factory(Some("deepseek_r1"), Some("hermes")).unwrap();
    assert_eq!(opened(&token, b"req-1", &other).unwrap_err(), CarryError::OtherFormat);

    // Every refusal has a distinct code.
    let codes: std::collections::BTreeSet<&str> = [
        CarryError::Malformed,
        CarryError::Truncated,
        CarryError::OtherVersion { found: (0, 0), expected: (1, 1) },
        CarryError::Forged,
        CarryError::OtherRequest,
        CarryError::Undecodable,
        CarryError::OtherFormat,
        CarryError::Mismatch("x"),
    ]
    .iter()
    .map(CarryError::code)
    .collect();
    assert_eq!(codes.len(), 8);
}
