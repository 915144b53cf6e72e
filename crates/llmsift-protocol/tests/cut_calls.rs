//! Calls cut by the end of the output (issue 23), through the stream
//! processor: by default a cut call is sent as far as it was written (never
//! completed) and the choice finishes with `length`; with `atomic_calls` a
//! call is sent only once it closes and a cut one is content; the folded
//! stream equals the one-shot answer, finish reason included, at every cut;
//! and a carried state saved under the other `atomic_calls` is refused.

use llmsift_core::{Folder, Registry};
use llmsift_protocol::carry::{open, seal, CarryError, ProcessorState, StateKey};
use llmsift_protocol::{ChatCompletionRequest, CheckedRequest, ChoiceProcessor, FinishReason, Options};
use serde_json::json;

const OUTPUT: &str = "Let me look.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"/home/user/important.txt\", \"lines\": [1, 20]}}\n</tool_call>";

fn request(atomic: Option<bool>) -> CheckedRequest {
    let mut body = json!({
        "model": "m", "messages": [], "stream": true,
        "tools": [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object",
            "properties": {"path": {"type": "string"}, "lines": {"type": "array"}}}}}]
    });
    if let Some(a) = atomic {
        body["atomic_calls"] = json!(a);
    }
    let mut r = ChatCompletionRequest::from_value(body).unwrap().check().unwrap();
    r.id_seed = Some(23);
    r
}

/// Streams `text` one character a delta, then finishes with `engine`: the
/// folded message and the finish reason.
fn streamed(
    p: &mut ChoiceProcessor,
    text: &str,
    engine: FinishReason,
) -> (llmsift_core::Message, FinishReason) {
    let mut fold = Folder::default();
    for (i, ch) in text.char_indices() {
        if let Some(s) = p.push(&text[i..i + ch.len_utf8()], None, None) {
            fold.push(&s.delta);
        }
    }
    let last = p.finish(engine);
    fold.push(&last.delta);
    (fold.finish(), last.finish_reason.expect("the last step carries the finish"))
}

#[test]
fn a_cut_call_finishes_with_length_and_the_stream_folds_to_one_shot() {
    let f = Registry::builtin().factory(None, Some("hermes")).unwrap();
    let opts = Options::default();
    // Where the arguments' `{` is; the envelope commits its call once they began.
    let brace = OUTPUT.find("\"arguments\": {").unwrap() + "\"arguments\": ".len();
    let mut commit = None;
    let closed = OUTPUT.find("]}}").unwrap() + 2;
    let (mut cut_seen, mut whole_seen) = (0, 0);
    for end in (0..=OUTPUT.len()).filter(|&e| OUTPUT.is_char_boundary(e)) {
        let text = &OUTPUT[..end];
        for atomic in [None, Some(true)] {
            let req = request(atomic);
            let one = ChoiceProcessor::new(&f, &req, &opts).complete(text, None, None, FinishReason::Stop);
            let (msg, reason) =
                streamed(&mut ChoiceProcessor::new(&f, &req, &opts), text, FinishReason::Stop);
            assert_eq!(
                msg, one.message,
                "cut at {end} ({atomic:?}): the folded stream differs from one-shot"
            );
            assert_eq!(reason, one.finish_reason, "cut at {end} ({atomic:?}): finish reasons differ");
            if atomic.is_none() && commit.is_none() && !one.message.tool_calls.is_empty() {
                commit = Some(end);
            }
            let cut = commit.is_some_and(|c| end >= c) && end < closed;
            match (atomic, cut) {
                (None, true) => {
                    cut_seen += 1;
                    assert_eq!(reason, FinishReason::Length, "cut at {end}: a cut call finishes with length");
                    let args = &one.message.tool_calls[0].arguments;
                    // Exactly the bytes written after `"arguments": `, nothing appended.
                    let written = &text[brace..];
                    assert_eq!(args, written, "cut at {end}: the arguments are what was written");
                }
                (Some(true), true) => {
                    assert!(
                        one.message.tool_calls.is_empty(),
                        "cut at {end}: atomic_calls sends no cut call"
                    );
                    assert_eq!(reason, FinishReason::Stop);
                    assert!(one
                        .message
                        .content
                        .as_deref()
                        .is_some_and(|c| c.ends_with(&text[text.len() - 1..])));
                }
                // With atomic_calls the call is whole once its envelope closed too.
                (_, false) if end >= closed && (atomic.is_none() || end > closed) => {
                    whole_seen += 1;
                    assert_eq!(
                        reason,
                        FinishReason::ToolCalls,
                        "cut at {end}: a whole call finishes with tool_calls"
                    );
                    assert!(serde_json::from_str::<serde_json::Value>(&one.message.tool_calls[0].arguments)
                        .is_ok());
                }
                _ => assert!(one.message.tool_calls.is_empty()),
            }
        }
    }
    assert!(
        commit.is_some_and(|c| c <= brace + 2),
        "the call committed at {commit:?}, its arguments at {brace}"
    );
    assert!(cut_seen > 40 && whole_seen > 10, "cuts {cut_seen}, whole {whole_seen}");
}

#[test]
fn the_engines_length_stays_length_and_abort_stays_abort() {
    let f = Registry::builtin().factory(None, Some("hermes")).unwrap();
    let text = &OUTPUT[..OUTPUT.find("important").unwrap()];
    let req = request(None);
    for (engine, want) in
        [(FinishReason::Length, FinishReason::Length), (FinishReason::Abort, FinishReason::Abort)]
    {
        let one = ChoiceProcessor::new(&f, &req, &Options::default()).complete(text, None, None, engine);
        assert_eq!(one.finish_reason, want);
    }
    // The deployment's setting applies when the request says nothing; the request's own wins.
    let atomic_model = Options { atomic_calls: true, ..Options::default() };
    let one = ChoiceProcessor::new(&f, &req, &atomic_model).complete(text, None, None, FinishReason::Stop);
    assert!(one.message.tool_calls.is_empty() && one.finish_reason == FinishReason::Stop);
    let one = ChoiceProcessor::new(&f, &request(Some(false)), &atomic_model).complete(
        text,
        None,
        None,
        FinishReason::Stop,
    );
    assert_eq!(one.finish_reason, FinishReason::Length);
}

#[test]
fn a_state_saved_under_the_other_atomic_calls_is_refused() {
    let f = Registry::builtin().factory(None, Some("hermes")).unwrap();
    let key = StateKey::new("replicas share this key").unwrap();
    let opts = Options::default();
    let mut p = ChoiceProcessor::new(&f, &request(None), &opts);
    p.push("<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"pa", None, None);
    let token = seal(&key, b"r", &p.snapshot());
    let state: ProcessorState = open(&key, b"r", &token).unwrap();
    let err = ChoiceProcessor::resume(&f, &request(Some(true)), &opts, state).unwrap_err();
    assert_eq!(err, CarryError::Mismatch("atomic_calls"));
    let state: ProcessorState = open(&key, b"r", &token).unwrap();
    assert!(ChoiceProcessor::resume(&f, &request(Some(false)), &opts, state).is_ok());
}
