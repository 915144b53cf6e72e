//! Server-sent events framing.
//!
//! Owns the byte shape of a stream: Chat Completions frames are
//! `data: {json}\n\n` and the stream ends with `data: [DONE]\n\n`; the
//! Responses and Anthropic dialects name each frame
//! (`event: TYPE\ndata: {json}\n\n`) and send no `[DONE]`.
//!
//! Invariant: the JSON of a frame is compact (one line), so a frame is
//! exactly one `data:` line and a blank line.

use serde::Serialize;

/// The Chat Completions end-of-stream frame.
pub const DONE: &str = "data: [DONE]\n\n";

/// `data: {json}\n\n`.
pub fn data<T: Serialize + ?Sized>(value: &T) -> String {
    frame(&["data: "], value)
}

/// `event: NAME\ndata: {json}\n\n`.
pub fn event<T: Serialize + ?Sized>(name: &str, value: &T) -> String {
    frame(&["event: ", name, "\ndata: "], value)
}

/// The `head` pieces, the JSON, a blank line: written into one buffer (a
/// frame is made per token, so no intermediate string).
fn frame<T: Serialize + ?Sized>(head: &[&str], value: &T) -> String {
    let mut out = Vec::with_capacity(256);
    for h in head {
        out.extend_from_slice(h.as_bytes());
    }
    serde_json::to_writer(&mut out, value).expect("wire types serialize");
    out.extend_from_slice(b"\n\n");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// Splits a stream back into its frames' `(event, data)` (for tests and clients).
pub fn parse(stream: &str) -> Vec<(Option<String>, String)> {
    stream
        .split("\n\n")
        .filter(|f| !f.trim().is_empty())
        .map(|f| {
            let mut event = None;
            let mut data = String::new();
            for line in f.lines() {
                if let Some(e) = line.strip_prefix("event: ") {
                    event = Some(e.to_string());
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data.push_str(d);
                }
            }
            (event, data)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames() {
        assert_eq!(data(&serde_json::json!({"a": 1})), "data: {\"a\":1}\n\n");
        assert_eq!(
            event("message_stop", &serde_json::json!({"type": "message_stop"})),
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
        );
        let s = format!("{}{}", event("x", &1), DONE);
        assert_eq!(parse(&s), vec![(Some("x".into()), "1".into()), (None, "[DONE]".into())]);
    }
}
