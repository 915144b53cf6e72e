//! The cut policy: what becomes of a call (or its section) that the
//! output's end cut, when the request follows vLLM's text loss
//! (`[vllm.text_loss] cut_call`) or asks for `atomic_calls`, and whether
//! calls are deferred until they end so the end can still take them back;
//! and what becomes of a committed call's arguments the end cut
//! ([`Engine::cut_args`]: never completed by default, issue 23).
//!
//! The decisions are the request's compiled [`super::policy::CutCall`] and
//! [`CutArgs`] (settled when the parser was built), never the format's keys
//! or the request's flags.
//!
//! Invariant: every answer here but [`Engine::cut_args`] is `false` unless
//! the policy's `cut` is other than `Ended` (and, for `cut_call`, the output
//! is finishing). By default a cut call's arguments are exactly the bytes
//! written before the end (no closing quote, bracket or brace is
//! appended), and the parser reports the cut ([`Engine::cut_call`]); only
//! under `vllm_text_loss` are they completed.

use super::policy::{CutArgs, CutCall};
use super::{ArgsW, Engine, OpenCall, SEEN_CUT_CALL};

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
        matches!(self.set.policy.cut, CutCall::Content | CutCall::Atomic)
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

    /// A committed call the output's end cut keeps its arguments as written
    /// (the default: nothing appended).
    pub(super) fn cut_as_written(&self) -> bool {
        self.finishing && self.set.policy.cut_args() == CutArgs::Written
    }

    /// Ends the arguments of call `index`, open when the output ended, into
    /// `out`: completed as usual when they need nothing the model did not
    /// write; otherwise (the default) only the bytes the model wrote that
    /// were still held (white space, a comma, an unfinished escape) go out,
    /// and the cut is recorded for [`Engine::cut_call`]. Returns whether
    /// the call was cut.
    pub(super) fn cut_args(a: &mut ArgsW, out: &mut String) -> bool {
        let kept = match a {
            ArgsW::Raw(r) => r.unsent().to_string(),
            _ => String::new(),
        };
        let mut tail = String::new();
        a.finish(&mut tail);
        if tail == kept {
            out.push_str(&tail);
            return false;
        }
        out.push_str(&kept);
        true
    }

    /// The index of the call the output's end cut whose arguments are
    /// incomplete (as written: the message's finish is `length`), once the
    /// output ended.
    pub fn cut_call(&self) -> Option<usize> {
        (self.seen & SEEN_CUT_CALL != 0).then(|| self.next_index.saturating_sub(1))
    }

    /// Records the cut call `index` of a held whole output's reading
    /// (`crate::whole`): this engine never ran, the reading's did.
    pub fn adopt_cut(&mut self, index: Option<usize>) {
        if let Some(i) = index {
            self.seen |= SEEN_CUT_CALL;
            self.next_index = i + 1;
        }
    }

    /// What becomes of a committed call the output's end cut.
    pub fn cut_policy(&self) -> CutArgs {
        self.set.policy.cut_args()
    }
}
