//! What a parser answered: the sinks the peers write their output to, and
//! the comparison with Sift's one-shot message.
//!
//! Every peer reports its output through a [`Sink`]: [`Discard`] in the
//! timed runs (each piece passed through `black_box`, so no peer's output
//! can be optimised away and none pays for collecting it), [`Answer`] in the
//! correctness run. Empty reasoning or content is the same as none.

use serde_json::Value;
use llmsift_core::Message;
use std::hint::black_box;

/// Where a parser's output goes, piece by piece.
pub trait Sink {
    /// A piece of reasoning.
    fn reasoning(&mut self, text: &str);
    /// A piece of content.
    fn content(&mut self, text: &str);
    /// A piece of the call at `index`: its name when known, the next bytes of
    /// its arguments.
    fn call(&mut self, index: usize, name: Option<&str>, arguments: &str);
}

/// The sink of the timed runs.
pub struct Discard;

impl Sink for Discard {
    #[inline]
    fn reasoning(&mut self, text: &str) {
        black_box(text);
    }
    #[inline]
    fn content(&mut self, text: &str) {
        black_box(text);
    }
    #[inline]
    fn call(&mut self, index: usize, name: Option<&str>, arguments: &str) {
        black_box((index, name, arguments));
    }
}

/// A whole message, folded from the pieces.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Answer {
    /// All reasoning.
    pub reasoning: String,
    /// All content.
    pub content: String,
    /// The calls in index order: name and arguments text.
    pub calls: Vec<(String, String)>,
}

impl Sink for Answer {
    fn reasoning(&mut self, text: &str) {
        self.reasoning.push_str(text);
    }
    fn content(&mut self, text: &str) {
        self.content.push_str(text);
    }
    fn call(&mut self, index: usize, name: Option<&str>, arguments: &str) {
        if self.calls.len() <= index {
            self.calls.resize_with(index + 1, Default::default);
        }
        let call = &mut self.calls[index];
        if let Some(name) = name {
            call.0.push_str(name);
        }
        call.1.push_str(arguments);
    }
}

impl Answer {
    /// Sift's one-shot message as an answer.
    pub fn of(m: &Message) -> Answer {
        Answer {
            reasoning: m.reasoning.clone().unwrap_or_default(),
            content: m.content.clone().unwrap_or_default(),
            calls: m.tool_calls.iter().map(|c| (c.name.clone(), c.arguments.clone())).collect(),
        }
    }

    /// `None` when `self` says the same as `want` (the same reasoning and
    /// content, the same calls by name and parsed JSON arguments), otherwise
    /// what differs first.
    pub fn wrong(&self, want: &Answer) -> Option<String> {
        if let Some(d) = differ("reasoning", &self.reasoning, &want.reasoning) {
            return Some(d);
        }
        if let Some(d) = differ("content", &self.content, &want.content) {
            return Some(d);
        }
        if self.calls.len() != want.calls.len() {
            return Some(format!("{} calls, want {}", self.calls.len(), want.calls.len()));
        }
        for (i, ((name, args), (want_name, want_args))) in self.calls.iter().zip(&want.calls).enumerate() {
            if name != want_name {
                return Some(format!("call {i} named {name:?}, want {want_name:?}"));
            }
            let got: Option<Value> = serde_json::from_str(args).ok();
            let want_v: Option<Value> = serde_json::from_str(want_args).ok();
            match (got, want_v) {
                (None, _) => return Some(format!("call {i} arguments are not JSON: {:?}…", prefix(args))),
                // Compared as values; shown compact, so formatting is no difference.
                (Some(g), Some(w)) if g != w => {
                    return differ(&format!("call {i} arguments"), &g.to_string(), &w.to_string())
                }
                _ => {}
            }
        }
        None
    }
}

fn prefix(s: &str) -> &str {
    let mut end = s.len().min(40);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Where `got` and `want` part, with a few bytes of each around it.
fn differ(what: &str, got: &str, want: &str) -> Option<String> {
    if got == want {
        return None;
    }
    let at = got.bytes().zip(want.bytes()).take_while(|(a, b)| a == b).count();
    let around = |s: &str| {
        let mut lo = at.saturating_sub(12);
        while !s.is_char_boundary(lo) {
            lo -= 1;
        }
        let mut hi = (at + 12).min(s.len());
        while !s.is_char_boundary(hi) {
            hi += 1;
        }
        s[lo..hi].to_string()
    };
    Some(format!(
        "{what}: {} bytes, want {}; first difference at byte {at}: {:?} vs {:?}",
        got.len(),
        want.len(),
        around(got),
        around(want)
    ))
}
