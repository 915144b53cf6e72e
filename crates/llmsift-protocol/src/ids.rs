//! Tool call ids as vLLM makes them, per model family.
//!
//! The core already names each call: `chatcmpl-tool-` and 16 hex digits, or
//! the model's own id (Kimi writes `functions.NAME:IDX`). This module owns
//! the serving-side rules on top:
//! - [`IdStyle::Kimi`]: every call is `functions.NAME:IDX`, where IDX counts
//!   the calls made earlier in the conversation (the request's assistant
//!   messages) plus the calls before it in this response. The model's own
//!   IDX is replaced by that count (it only counts within what it sees).
//! - [`IdStyle::Mistral`]: calls the tool parser made (`tool_choice: auto`,
//!   or a forced choice the family writes in its own format, which vLLM
//!   parses as auto) get 9 alphanumerics (vLLM's
//!   `MistralToolCall.generate_random_id`); calls vLLM's serving layer makes
//!   from a forced choice's JSON keep `chatcmpl-tool-…`.
//! - [`IdStyle::Random`]: the core's id as is.
//!
//! Invariant: rewriting is a pure function of (style, who made the call,
//! history, call index, name, core id), so streamed and one-shot answers carry the same ids, and
//! a seeded core gives reproducible ids here too.

/// How call ids are made for a model family.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum IdStyle {
    /// `chatcmpl-tool-` + 16 hex (or the model's own id), unchanged.
    #[default]
    Random,
    /// Kimi K2: `functions.NAME:IDX`, IDX counted across the conversation.
    Kimi,
    /// Mistral: 9 alphanumerics for calls its tool parser made.
    Mistral,
}

impl IdStyle {
    /// The style vLLM uses with a `--tool-call-parser` name.
    pub fn for_tool_parser(name: Option<&str>) -> IdStyle {
        match name {
            Some("kimi_k2") => IdStyle::Kimi,
            Some(n) if n.starts_with("mistral") => IdStyle::Mistral,
            _ => IdStyle::Random,
        }
    }

    /// The id of call `index` (0-based within this response) named `name`,
    /// whose core id is `core_id`; `by_parser`: the tool parser made the call
    /// (not the serving layer, from a forced choice's JSON).
    pub fn rewrite(self, by_parser: bool, history: usize, index: usize, name: &str, core_id: &str) -> String {
        match self {
            IdStyle::Random => core_id.to_string(),
            IdStyle::Kimi => format!("functions.{name}:{}", history + index),
            IdStyle::Mistral => {
                if by_parser && core_id.starts_with("chatcmpl-tool-") {
                    alnum9(core_id)
                } else {
                    core_id.to_string()
                }
            }
        }
    }
}

/// 9 characters of `[a-zA-Z0-9]` derived from `seed_text`.
fn alnum9(seed_text: &str) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut z = mix(fnv1a(seed_text.as_bytes()));
    (0..9)
        .map(|_| {
            let c = ALPHABET[(z % 62) as usize] as char;
            z /= 62;
            c
        })
        .collect()
}

/// FNV-1a, 64 bits.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// SplitMix64's finaliser.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Item ids for the Responses and Anthropic dialects (`rs_…`, `msg_…`,
/// `fc_…`): deterministic from the response id and a running counter, so
/// one-shot and streamed output name items alike.
#[derive(Debug, Clone)]
pub(crate) struct ItemIds {
    state: u64,
}

impl ItemIds {
    pub fn new(response_id: &str) -> ItemIds {
        ItemIds { state: fnv1a(response_id.as_bytes()) }
    }

    pub fn next(&mut self, prefix: &str) -> String {
        self.state = mix(self.state);
        format!("{prefix}_{:016x}", self.state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kimi_counts_on_from_history() {
        let s = IdStyle::Kimi;
        assert_eq!(s.rewrite(true, 3, 0, "f", "functions.f:0"), "functions.f:3");
        assert_eq!(s.rewrite(false, 3, 1, "g", "chatcmpl-tool-00"), "functions.g:4");
    }

    #[test]
    fn mistral_ids_are_nine_alphanumerics_for_parsed_calls_only() {
        let s = IdStyle::Mistral;
        let id = s.rewrite(true, 0, 0, "f", "chatcmpl-tool-0123456789abcdef");
        assert_eq!(id.len(), 9);
        assert!(id.bytes().all(|b| b.is_ascii_alphanumeric()));
        assert_eq!(id, s.rewrite(true, 0, 0, "f", "chatcmpl-tool-0123456789abcdef"));
        assert_eq!(s.rewrite(false, 0, 0, "f", "chatcmpl-tool-0123"), "chatcmpl-tool-0123");
    }

    #[test]
    fn style_by_parser_name() {
        assert_eq!(IdStyle::for_tool_parser(Some("kimi_k2")), IdStyle::Kimi);
        assert_eq!(IdStyle::for_tool_parser(Some("mistral")), IdStyle::Mistral);
        assert_eq!(IdStyle::for_tool_parser(Some("hermes")), IdStyle::Random);
        assert_eq!(IdStyle::for_tool_parser(None), IdStyle::Random);
    }
}
