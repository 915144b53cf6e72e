//! Helpers shared by the protocol tests.

use serde_json::{json, Value};

/// Folds Messages stream events as the Anthropic SDK does.
pub fn fold_anthropic(events: &[Value]) -> Value {
    let mut msg = Value::Null;
    let mut json_parts: Vec<String> = Vec::new();
    // The Messages API streams one block at a time: a block stops before the next starts.
    let mut open: Option<usize> = None;
    for e in events {
        let d = &e["data"];
        assert_eq!(e["event"], d["type"]);
        match d["type"].as_str().unwrap() {
            "message_start" => msg = d["message"].clone(),
            "content_block_start" => {
                assert_eq!(open, None, "a block starts while another is open");
                open = d["index"].as_u64().map(|i| i as usize);
                msg["content"].as_array_mut().unwrap().push(d["content_block"].clone());
                json_parts.push(String::new());
            }
            "content_block_delta" => {
                let i = d["index"].as_u64().unwrap() as usize;
                assert_eq!(open, Some(i), "a delta for a block that is not open");
                let b = &mut msg["content"][i];
                let delta = &d["delta"];
                match delta["type"].as_str().unwrap() {
                    "thinking_delta" => {
                        b["thinking"] = json!(
                            b["thinking"].as_str().unwrap().to_string() + delta["thinking"].as_str().unwrap()
                        )
                    }
                    "text_delta" => {
                        b["text"] =
                            json!(b["text"].as_str().unwrap().to_string() + delta["text"].as_str().unwrap())
                    }
                    "signature_delta" => b["signature"] = delta["signature"].clone(),
                    "input_json_delta" => json_parts[i].push_str(delta["partial_json"].as_str().unwrap()),
                    other => panic!("delta {other}"),
                }
            }
            "content_block_stop" => {
                let i = d["index"].as_u64().unwrap() as usize;
                assert_eq!(open.take(), Some(i), "a stop for a block that is not open");
                if msg["content"][i]["type"] == "tool_use" {
                    // A call the output's end cut streams its partial JSON; its
                    // input is then `{}` with `stop_reason: "max_tokens"`, as the
                    // one-shot answer gives it (issue 23).
                    msg["content"][i]["input"] =
                        serde_json::from_str(&json_parts[i]).unwrap_or_else(|_| json!({}));
                }
            }
            "message_delta" => {
                msg["stop_reason"] = d["delta"]["stop_reason"].clone();
                msg["stop_sequence"] = d["delta"]["stop_sequence"].clone();
                msg["usage"] = d["usage"].clone();
            }
            "message_stop" => {}
            other => panic!("event {other}"),
        }
    }
    msg
}
