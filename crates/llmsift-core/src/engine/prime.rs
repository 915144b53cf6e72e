//! Priming from the prompt, and the text span writer that keeps prompt bytes
//! out of the output.
//!
//! A format with `[prompt] prime = true` reads the prompt's last turn before
//! the output: the state it ends in is where the output starts. What that turn
//! produces is discarded, and so are the prompt bytes still held at its end (a
//! marker the prompt stopped in the middle of, `<|chan`): the next delta
//! decides what they were, but they are never written.
//!
//! Prompt bytes move the state and nothing else: argument kernels never see
//! them (a call in the prompt's last turn is history), and call indexes
//! count from the output's first call. A call whose header the prompt wrote
//! and the output continues is call 0, its id and name sent with the first
//! output.
//!
//! Invariant: `mute` counts the leading bytes of the lexer's buffer that came
//! from the prompt. They are only ever at the start of the held tail, so the
//! count shrinks as the held tail moves forward and is zero once nothing from
//! the prompt is held. Text from them still reaches the state's kernel (the
//! state advances), into a discarded delta.

use super::policy::Text;
use super::Engine;
use crate::format::compiled::Mode;
use crate::message::Delta;

impl Engine {
    /// Reads the prompt's last turn, discarding what it produces: the output
    /// continues from where it left off (and still gets the content prefix).
    pub fn prime(&mut self, text: &str) {
        let mut seen = Delta::default();
        self.priming = true;
        self.push(text, None, &mut seen);
        self.priming = false;
        self.started = false;
        // vLLM never reads a message the prompt opened (`[prompt] lost`).
        self.prompt_lost = self.set.policy.prompt_open == Text::Lost
            && self.framed
            && matches!(self.fmt.states[self.state as usize].mode, Mode::Content | Mode::Reasoning);
        // The output's framing is its own: a header the prompt routed does not count.
        self.framed = false;
        // The header as written is the output's: the prompt's markers are not
        // (a header the output never finishes is content as written).
        self.hdr_raw.clear();
        self.mute = self.held.len();
        // Calls are numbered from the output's first: a call the prompt
        // closed is gone, one it left open (a harmony header naming a
        // recipient) is call 0 and its id and name go out with the output.
        self.next_index = 0;
        if let Some(c) = &mut self.call {
            let frag = c.index.and_then(|i| seen.tool_calls.iter().find(|f| f.index == i));
            if let Some((id, name)) = frag.and_then(|f| Some((f.id.clone()?, f.name.clone()?))) {
                c.index = Some(0);
                self.next_index = 1;
                self.replay = Some(Box::new((0, id, name)));
            } else if c.index.is_some() {
                // Committed where no header was seen (suppressed, held): not the output's.
                self.call = None;
            }
        }
    }

    /// Sends `s[a..b]` to the current state's kernel as [`Engine::text`]
    /// does, the part before `self.mute` (prompt bytes) into a discarded delta.
    pub(super) fn text_span(&mut self, s: &str, a: usize, b: usize, out: &mut Delta) -> Option<usize> {
        if self.mute <= a {
            return self.text(&s[a..b], out);
        }
        let m = self.mute.min(b);
        self.priming = true;
        let used = self.text(&s[a..m], &mut Delta::default());
        self.priming = false;
        if used.is_some() {
            return used;
        }
        if m < b {
            self.text(&s[m..b], out).map(|used| used + (m - a))
        } else {
            None
        }
    }

    /// The marker text at `s[p..end]` as the transition sees it: empty when it
    /// starts among prompt bytes (a kept or recorded marker is never written).
    pub(super) fn marker_span<'s>(&self, s: &'s str, p: usize, end: usize) -> &'s str {
        if p < self.mute {
            ""
        } else {
            &s[p..end]
        }
    }

    /// Content text after an emitted call is dropped (`drop_content_after_calls`,
    /// only when the request asks for vLLM's text loss: the text is in no field).
    pub(super) fn content_after_calls(&self) -> bool {
        self.set.policy.after_calls == Text::Lost && self.next_index > 0 && !self.set.suppress_calls
    }
}
