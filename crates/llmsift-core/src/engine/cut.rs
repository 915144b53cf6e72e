//! The cut policy: what becomes of a call (or its section) that the
//! output's end cut, when the request follows vLLM's text loss
//! (`calls.cut_lost`), and whether calls are deferred until they end so the
//! end can still take them back.
//!
//! Invariant: every answer here is `false` unless the request asks for
//! vLLM's text loss (and, for `cut_lost`, the output is finishing), so the
//! default reading never depends on this module.

use super::{Engine, OpenCall};
use crate::format::spec::CutLost;

impl Engine {
    /// The output's end cut a call (or its section) whose text vLLM's one-shot
    /// answer puts in no field, and the request asks for that answer
    /// (`calls.cut_lost` with `vllm_text_loss`).
    pub(super) fn cut_lost(&self) -> bool {
        self.finishing && self.set.vllm_text_loss && self.fmt.calls.cut_lost.is_some()
    }

    /// [`Engine::cut_lost`] for the uncommitted call `c`: a call with no
    /// readable name stays content (vLLM answers a call named "" there, and
    /// a call always has a name in Sift), and under `begun` so does a call
    /// that is its opening marker alone.
    pub(super) fn cut_drops(&self, c: &OpenCall) -> bool {
        self.cut_lost()
            && !c.nameless
            && !self.cut_keeps_text()
            && (self.fmt.calls.cut_lost != Some(CutLost::Begun) || c.raw.len() > c.opener)
    }

    /// The output's end cut a call whose name is known: vLLM's engine pairs
    /// answer it as a call (`cut_lost = "uncommitted"`, `"begun"` or `"named"`).
    pub(super) fn cut_names_call(&self) -> bool {
        self.cut_lost()
            && matches!(self.fmt.calls.cut_lost, Some(CutLost::Uncommitted | CutLost::Begun | CutLost::Named))
    }

    /// A cut call's text is not lost: taken back as content (`content`) or
    /// kept as Sift keeps it (`named`, a legacy reasoning pair).
    pub(super) fn cut_keeps_text(&self) -> bool {
        matches!(self.fmt.calls.cut_lost, Some(CutLost::Content | CutLost::Named))
    }

    /// A cut call is taken back as content rather than lost (`cut_lost =
    /// "content"`: vLLM's legacy parsers answer the raw output when a
    /// call's JSON does not parse).
    pub(super) fn cut_to_content(&self) -> bool {
        self.fmt.calls.cut_lost == Some(CutLost::Content)
    }

    /// Calls are held until they end, since the end of the output may still
    /// take them back (`cut_lost = "unclosed"` with `vllm_text_loss`).
    pub(super) fn defer_for_loss(&self) -> bool {
        self.set.vllm_text_loss
            && matches!(self.fmt.calls.cut_lost, Some(CutLost::Unclosed | CutLost::Content))
    }
}
