//! What a template is given as each message's content: vLLM's
//! `--chat-template-content-format` (`string`, `openai`, or `auto`, its
//! detection on the template), or the messages as the client sent them
//! (transformers' `apply_chat_template`, Sift's default).
//!
//! vLLM 0.34 (`vllm/renderers/chat_utils/chat_message.py`,
//! `parse_chat_message_content`) reads each message's content as a list of
//! parts (a string is one text part, `null` or a missing content none) and
//! gives the template either the texts joined with `"\n"` (`string`) or the
//! parts as `{"type": "text", "text": …}` dicts, each with the part's keys
//! vLLM's part types do not declare (`openai`). Text parts are `text`,
//! `input_text`, `output_text` (their `text`), `thinking` (its `thinking`)
//! and `refusal` (its `refusal`); a `text` or `refusal` part without its
//! text is skipped. A tool message's parts that are all text are joined
//! with `"\n"` even under `openai`. A `tool_reference` part is
//! `{"type": "tool_reference", "name": …}` (`openai`) or its name
//! (`string`). Sift renders text only, so an image, audio or other media
//! part is refused, as vLLM refuses one for a text-only model.
//!
//! Invariant: the conversion touches `content` only; the rest of each
//! message is left to [`crate::normalize_messages`].

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use crate::TemplateError;

/// The form each message's content is given to a template in (vLLM's
/// `ChatTemplateContentFormat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContentFormat {
    /// A string: the text parts joined with `"\n"`.
    String,
    /// A list of parts: `[{"type": "text", "text": …}, …]`.
    Openai,
}

/// vLLM's `--chat-template-content-format` (`ChatTemplateContentFormatOption`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContentFormatOption {
    /// What vLLM detects on the template ([`crate::ChatTemplate::detected_content_format`]).
    Auto,
    /// Always [`ContentFormat::String`].
    String,
    /// Always [`ContentFormat::Openai`].
    Openai,
}

impl ContentFormat {
    /// vLLM's name.
    pub fn as_str(self) -> &'static str {
        match self {
            ContentFormat::String => "string",
            ContentFormat::Openai => "openai",
        }
    }
}

impl ContentFormatOption {
    /// vLLM's name.
    pub fn as_str(self) -> &'static str {
        match self {
            ContentFormatOption::Auto => "auto",
            ContentFormatOption::String => "string",
            ContentFormatOption::Openai => "openai",
        }
    }
}

impl fmt::Display for ContentFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for ContentFormatOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ContentFormatOption {
    type Err = String;
    fn from_str(s: &str) -> Result<ContentFormatOption, String> {
        match s {
            "auto" => Ok(ContentFormatOption::Auto),
            "string" => Ok(ContentFormatOption::String),
            "openai" => Ok(ContentFormatOption::Openai),
            other => Err(format!("unknown chat template content format `{other}` (auto, string, openai)")),
        }
    }
}

/// Text part types: the key holding their text.
fn text_key(part_type: &str) -> Option<&'static str> {
    match part_type {
        "text" | "input_text" | "output_text" => Some("text"),
        "thinking" => Some("thinking"),
        "refusal" => Some("refusal"),
        _ => None,
    }
}

/// The keys vLLM's content part types declare (`_KNOWN_CONTENT_PART_FIELDS`);
/// any other key of a part is kept on its `openai` form.
const KNOWN_PART_KEYS: [&str; 18] = [
    "audio_embeds",
    "audio_url",
    "closed",
    "data",
    "file",
    "image_embeds",
    "image_pil",
    "image_url",
    "input_audio",
    "name",
    "prompt_cache_breakpoint",
    "refusal",
    "text",
    "thinking",
    "type",
    "uuid",
    "video_embeds",
    "video_url",
];

/// Gives every message's content in `format` (see the module docs).
pub(crate) fn apply(messages: &[Json], format: ContentFormat) -> Result<Vec<Json>, TemplateError> {
    messages
        .iter()
        .enumerate()
        .map(|(i, message)| {
            let Json::Object(message) = message else {
                return Err(TemplateError::Request(format!("message {i} is not an object")));
            };
            let mut message = message.clone();
            let content = content(i, &message, format)?;
            message.insert("content".into(), content);
            Ok(Json::Object(message))
        })
        .collect()
}

/// One message's content in `format`.
fn content(i: usize, message: &Map<String, Json>, format: ContentFormat) -> Result<Json, TemplateError> {
    let bad = |what: String| TemplateError::Request(format!("messages[{i}].content: {what}"));
    let one;
    let parts: &[Json] = match message.get("content") {
        None | Some(Json::Null) => &[],
        Some(Json::String(_)) => {
            one = [message["content"].clone()];
            &one
        }
        Some(Json::Array(parts)) => parts,
        Some(_) => return Err(bad("expected a string or a list of content parts".into())),
    };
    let mut out: Vec<Json> = Vec::with_capacity(parts.len());
    for (k, part) in parts.iter().enumerate() {
        if let Some(p) = converted(part, format).map_err(|e| bad(format!("part {k}: {e}")))? {
            out.push(p);
        }
    }
    let is_tool = message.get("role").and_then(Json::as_str) == Some("tool");
    let all_text = out.iter().all(|p| p.get("type").and_then(Json::as_str) == Some("text"));
    if format == ContentFormat::String || (is_tool && all_text) {
        let texts: Vec<&str> = out
            .iter()
            .map(|p| p.as_str().or_else(|| p.get("text").and_then(Json::as_str)).unwrap_or(""))
            .collect();
        return Ok(Json::String(texts.join("\n")));
    }
    Ok(Json::Array(out))
}

/// One part: its text (`string`), its `openai` dict, or `None` when vLLM skips it.
fn converted(part: &Json, format: ContentFormat) -> Result<Option<Json>, String> {
    let text_part = |text: &str, extra: Option<&Map<String, Json>>| match format {
        ContentFormat::String => Json::String(text.to_string()),
        ContentFormat::Openai => {
            let mut p = Map::new();
            p.insert("type".into(), Json::from("text"));
            p.insert("text".into(), Json::from(text));
            for (k, v) in extra.into_iter().flatten() {
                if !KNOWN_PART_KEYS.contains(&k.as_str()) {
                    p.insert(k.clone(), v.clone());
                }
            }
            Json::Object(p)
        }
    };
    let part = match part {
        Json::String(s) => return Ok(Some(text_part(s, None))),
        Json::Object(o) => o,
        _ => return Err("a content part must be a string or an object".into()),
    };
    let Some(Json::String(part_type)) = part.get("type") else {
        return Err("a content part needs a string `type`".into());
    };
    if let Some(key) = text_key(part_type) {
        return match part.get(key) {
            Some(Json::String(text)) => Ok(Some(text_part(text, Some(part)))),
            None | Some(Json::Null) if matches!(part_type.as_str(), "text" | "refusal") => Ok(None),
            _ => Err(format!("a `{part_type}` part needs a string `{key}`")),
        };
    }
    if part_type == "tool_reference" {
        let name =
            part.get("name").and_then(Json::as_str).ok_or("a `tool_reference` part needs a string `name`")?;
        return Ok(Some(match format {
            ContentFormat::String => Json::from(name),
            ContentFormat::Openai => serde_json::json!({"type": "tool_reference", "name": name}),
        }));
    }
    Err(format!("content part type `{part_type}` is not supported: Sift renders text only"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parts_as_vllm_gives_them() {
        let messages = vec![
            json!({"role": "system", "content": "terse"}),
            json!({"role": "user", "content": [{"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
                                                {"type": "input_text", "text": "b"}, "c", {"type": "text"}]}),
            json!({"role": "assistant", "content": null, "tool_calls": []}),
            json!({"role": "tool", "content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}]}),
        ];
        let openai = apply(&messages, ContentFormat::Openai).unwrap();
        assert_eq!(openai[0]["content"], json!([{"type": "text", "text": "terse"}]));
        assert_eq!(
            openai[1]["content"],
            json!([{"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
                   {"type": "text", "text": "b"}, {"type": "text", "text": "c"}])
        );
        assert_eq!(openai[2]["content"], json!([]));
        assert_eq!(openai[3]["content"], json!("x\ny"));
        let string = apply(&messages, ContentFormat::String).unwrap();
        assert_eq!(string[0]["content"], json!("terse"));
        assert_eq!(string[1]["content"], json!("a\nb\nc"));
        assert_eq!(string[2]["content"], json!(""));
        assert_eq!(string[3]["content"], json!("x\ny"));
    }

    #[test]
    fn refuses_what_it_cannot_render() {
        let image =
            vec![json!({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]})];
        let e = apply(&image, ContentFormat::Openai).unwrap_err().to_string();
        assert!(e.contains("messages[0].content: part 0") && e.contains("image_url"), "{e}");
        for bad in [json!(3), json!([3]), json!([{"text": "no type"}]), json!([{"type": "thinking"}])] {
            assert!(apply(&[json!({"role": "user", "content": bad})], ContentFormat::String).is_err());
        }
    }
}
