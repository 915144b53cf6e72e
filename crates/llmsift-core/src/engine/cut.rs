//! The cut policy: what becomes of a call (or its section) that the
//! output's end cut, when the request follows vLLM's text loss
//! (`[vllm.text_loss] cut_call`), and whether calls are deferred until they end so the
//! end can still take them back.
//!
//! The decisions are the request's compiled [`super::policy::CutCall`]
//! (settled when the parser was built), never the format's keys or the
//! request's flags.
//!
//! Invariant: every answer here is `false` unless the policy's `cut` is
//! other than `Ended` (and, for `cut_call`, the output is finishing), so the
//! default reading never depends on this module.

use super::policy::CutCall;
use super::{Engine, OpenCall};

impl Engine {
    /// The output's end cut a call (or its section) whose text vLLM's one-shot
    /// answer puts in no field, and the request asks for that answer
    /// (`[vllm.text_loss] cut_call` with `vllm_text_loss`).
    pub(super) fn cut_lost(&self) -> bool {
        self.finishing && self.set.policy.cut != CutCall::Ended
    }

    /// [`Engine::cut_lost`] for the uncommitted call `c`: a call with no
    /// readable name stays content (vLLM answers a call named "" there, and
    /// a call always has a name in Sift), and under `begun` so does a call
    /// that is its opening marker alone.
    pub(super) fn cut_drops(&self, c: &OpenCall) -> bool {
        self.cut_lost()
            && !c.nameless
            && !self.cut_keeps_text()
            && (self.set.policy.cut != CutCall::Begun || c.raw.len() > c.opener)
    }

    /// The output's end cut a call whose name is known: vLLM's engine pairs
    /// answer it as a call (`cut_lost = "uncommitted"`, `"begun"` or `"named"`).
    pub(super) fn cut_names_call(&self) -> bool {
        self.cut_lost() && self.set.policy.cut.names_call()
    }

    /// A cut call's text is not lost: taken back as content (`content`) or
    /// kept as Sift keeps it (`named`, a legacy reasoning pair).
    pub(super) fn cut_keeps_text(&self) -> bool {
        self.set.policy.cut.keeps_text()
    }

    /// A cut call is taken back as content rather than lost (`cut_lost =
    /// "content"`: vLLM's legacy parsers answer the raw output when a
    /// call's JSON does not parse).
    pub(super) fn cut_to_content(&self) -> bool {
        self.set.policy.cut == CutCall::Content
    }

    /// A cut call is answered only once its arguments began (`cut_lost =
    /// "begun"`: vLLM's Apertus engine answers nothing for `[{"get_weather":`).
    pub(super) fn cut_needs_args(&self) -> bool {
        self.set.policy.cut == CutCall::Begun
    }

    /// Calls are held until they end, since the end of the output may still
    /// take them back (`cut_lost = "unclosed"` or `"content"` with
    /// `vllm_text_loss`).
    pub(super) fn defer_for_loss(&self) -> bool {
        self.set.policy.cut.defers()
    }
}
