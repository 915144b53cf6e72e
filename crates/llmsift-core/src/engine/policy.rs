//! The run-time policy of one request's parser: every decision that follows
//! vLLM's answer rather than Sift's (the request's `vllm_text_loss` and
//! `vllm_one_shot`), and what becomes of a call the output's end cut (the
//! request's `atomic_calls`, issue 23), settled once, when the parser is
//! built, from the compiled format and the flags ([`Policy::resolve`]).
//!
//! `resolve` is the one place that reads the request's flags or the
//! format's vLLM-only fields (`[vllm.text_loss]`: `cut_call`, `cut_param`,
//! `unknown_names`, `text_around_calls`, `calls_when_none`,
//! `strip_without_tools`, `[prompt] lost`, `drop_content_after_calls`, the
//! `[vllm.one_shot]` table; and whether closers inside values and markers
//! that are vocabulary tokens get Sift's reading, `markers_in_values`): the engine, the parser, the one-shot layer
//! (`crate::whole`) and the message filters (`crate::post`) read only these
//! enums at run time. When the format's vLLM settings change shape, this
//! function is the one to follow.
//!
//! It also settles the request's byte accounting (`byte_spans`: [`Spans`],
//! whose reasons depend on the two flags).
//!
//! Invariants: with both flags off no vLLM-only rule applies (every
//! decision but `unknown_names`, which a format may ask for on its own, is
//! its enum's `Default`); the policy
//! is a small `Copy` value, part of the request's settings, never of a
//! carried state (`crate::state` rebuilds it on resume; a carried state
//! records only whether calls were atomic, so a replica refuses a state
//! saved under the other reading instead of mixing the two).

use crate::format::compiled::Reading;
use crate::format::spec::CutLost;
use crate::format::Format;

/// The request's two vLLM-compatibility flags (`Request::vllm_text_loss`,
/// `Request::vllm_one_shot`), and Sift's own `Request::atomic_calls`, as the
/// factory hands them to [`Policy::resolve`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Vllm {
    pub text_loss: bool,
    pub one_shot: bool,
    /// `Request::byte_spans` (not a vLLM flag; settled here with them,
    /// since the reasons it gives depend on them).
    pub spans: bool,
    /// Calls are emitted only once they close (`atomic_calls`).
    pub atomic: bool,
}

/// Byte accounting (`Request::byte_spans`, `crate::spans`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Spans {
    /// No accounting: the engine keeps no ledger, the parser no accountant.
    #[default]
    Off,
    /// Accounted; text no field holds is the format's framing.
    On,
    /// Accounted under vLLM's settings: text a field would hold by default
    /// and holds not is vLLM's loss.
    VllmLoss,
}

/// Where text goes that vLLM's answer puts in no field.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Text {
    /// Sift's answer: the text is kept (as content, or as the state reads it).
    #[default]
    Kept,
    /// vLLM's answer: the text is in no field.
    Lost,
}

/// What the output's end does to a call it cut (`[vllm.text_loss] cut_call` with
/// vLLM's text loss; see `engine/cut.rs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum CutCall {
    /// Sift's answer: a cut call ends as any call does.
    #[default]
    Ended,
    /// A call with no name yet is lost; a named one is a call.
    Uncommitted,
    /// As `Uncommitted` once anything follows the opening marker.
    Begun,
    /// Only a named call is answered; no text is lost.
    Named,
    /// Also a committed call its end marker never closed is lost.
    Unclosed,
    /// A cut call whose arguments are not whole is taken back as content.
    Content,
    /// `atomic_calls`: as `Content`, whatever the vLLM settings.
    Atomic,
}

impl CutCall {
    /// Calls are held until they end, since the output's end may still
    /// take them back.
    pub fn defers(self) -> bool {
        matches!(self, CutCall::Unclosed | CutCall::Content | CutCall::Atomic)
    }

    /// A cut call's text is not lost: taken back as content or kept.
    pub fn keeps_text(self) -> bool {
        matches!(self, CutCall::Content | CutCall::Atomic | CutCall::Named)
    }

    /// A cut call whose name is known is answered as a call.
    pub fn names_call(self) -> bool {
        matches!(self, CutCall::Uncommitted | CutCall::Begun | CutCall::Named)
    }
}

/// What becomes of a committed call the output's end cut (issue 23: never
/// invent bytes). See `engine/cut.rs`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum CutArgs {
    /// Sift's default: the call stays, its arguments exactly as far as they
    /// were written (nothing appended), and the parser reports the cut (the
    /// message's finish is `length`).
    #[default]
    Written,
    /// vLLM's answer (`vllm_text_loss`): the arguments are completed by
    /// appending what they still need (the JSON watermark's repair).
    Completed,
    /// `atomic_calls`: every call is held until it closes; a cut one is its
    /// text as content (the engine's cut policy is then [`CutCall::Atomic`]).
    Atomic,
}

/// How an XML parameter's bytes go out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum ParamFlow {
    /// As they come.
    #[default]
    Streamed,
    /// Held until the parameter closes: the output's end may still take an
    /// open one back (`cut_param_lost` with vLLM's text loss).
    HeldUntilClosed,
}

/// A call to a function the request did not declare.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum UnknownNames {
    /// Is a call.
    #[default]
    Called,
    /// Stays uncommitted (`known_names_only`, or `unknown_names_lost` with
    /// vLLM's text loss), when the request declares tools.
    Uncommitted,
}

/// What `tool_choice: "none"` parses with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum NoneChoice {
    /// The reasoning-only variant: the calls' markup is content.
    #[default]
    Plain,
    /// The native variant with calls suppressed, text and all (vLLM's
    /// engine pairs parse the calls and drop them: `strip_when_none`).
    Strip,
    /// As `Strip` when the request declares no tools (`strip_without_tools`).
    StripWithoutTools,
}

/// How a marker spelled inside a value is read (`markers_in_values`, and
/// markers that are added tokens of the bound vocabulary).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum ValueMarkers {
    /// Sift's answer: a closer marked `follow` acts inside a value only
    /// where the grammar allows what follows it, and a marker that is an
    /// added token of the vocabulary matches only as that token.
    #[default]
    Guarded,
    /// vLLM's answer (`vllm_text_loss`: the value's tail after the marker
    /// is text vLLM loses): the marker acts wherever its
    /// spelling is (`markers_in_strings` still reads it inside a JSON
    /// string), and only markers declared `token` match by id.
    AsVllm,
}

/// Whether the parser streams or holds the whole output for vLLM's
/// one-shot decisions (`[vllm.one_shot]`, `crate::whole`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Answer {
    /// Streamed as the output comes.
    #[default]
    Streamed,
    /// Held, and decided from the whole output when it ends.
    Whole,
}

/// Every vLLM-compatibility decision of one request's parser.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Policy {
    /// The engine's, carried in its settings.
    pub engine: EnginePolicy,
    /// The text around calls when the output has a call
    /// (`[vllm.text_loss] text_around_calls`, a filter in `crate::post`).
    pub with_calls: Text,
    /// `tool_choice: "none"`.
    pub none_choice: NoneChoice,
    /// Streamed, or held for the `[vllm.one_shot]` decisions.
    pub answer: Answer,
    /// The `[vllm.one_shot]` decisions that apply only with vLLM's text loss
    /// (`split_at`, `later_blocks_lost`, `between_calls_lost`, `strip_join`,
    /// `outside_lost`, `empty_if_in_args`).
    pub one_shot_loss: Text,
    /// Byte accounting.
    pub spans: Spans,
}

/// The decisions the engine reads while it streams: six bytes, so a
/// `Parser` stays within 1 KiB (`parser::size`; [`EnginePolicy::cut_args`]
/// is derived, not stored, for that reason).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct EnginePolicy {
    /// A call the output's end cut.
    pub cut: CutCall,
    /// An XML parameter's bytes.
    pub params: ParamFlow,
    /// A `lost` state's text.
    pub lost_text: Text,
    /// Content after an emitted call (`drop_content_after_calls`).
    pub after_calls: Text,
    /// The message the prompt left open (`[prompt] lost`).
    pub prompt_open: Text,
    /// A call to an undeclared function.
    pub unknown_names: UnknownNames,
}

impl Spans {
    /// The accounting a request's flags ask for.
    pub fn of(vllm: Vllm) -> Spans {
        match (vllm.spans, vllm.text_loss || vllm.one_shot) {
            (false, _) => Spans::Off,
            (true, false) => Spans::On,
            (true, true) => Spans::VllmLoss,
        }
    }
}

impl EnginePolicy {
    /// A marker spelled inside a value: vLLM's reading exactly when vLLM's
    /// text loss is asked for (`lost_text`), derived rather than stored so
    /// a `Parser` stays within 1 KiB.
    pub fn values(self) -> ValueMarkers {
        match self.lost_text {
            Text::Kept => ValueMarkers::Guarded,
            Text::Lost => ValueMarkers::AsVllm,
        }
    }

    /// What becomes of a committed call the output's end cut: `atomic_calls`
    /// (held until it closes), vLLM's completion (`vllm_text_loss`, the
    /// request whose `lost_text` is lost), or as written (the default).
    pub fn cut_args(self) -> CutArgs {
        match (self.cut, self.lost_text) {
            (CutCall::Atomic, _) => CutArgs::Atomic,
            (_, Text::Lost) => CutArgs::Completed,
            (_, Text::Kept) => CutArgs::Written,
        }
    }

    /// The family readings (names, entities, recipients, plain `<think>`,
    /// schemas): Sift's, or vLLM's with `vllm_text_loss`. Read off
    /// `lost_text`, which follows that flag alone too, so that a `Parser`
    /// stays within its 1 KiB (`parser::size`).
    pub fn readings(self) -> Reading {
        match self.lost_text {
            Text::Kept => Reading::Sift,
            Text::Lost => Reading::Vllm,
        }
    }
}

impl Policy {
    /// The policy of a parser for format `fmt` and a request with flags
    /// `vllm`: the one place either is read for these decisions.
    pub fn resolve(fmt: &Format, vllm: Vllm) -> Policy {
        let loss = |on: bool| if on && vllm.text_loss { Text::Lost } else { Text::Kept };
        let calls = &fmt.calls;
        let cut = match calls.cut_lost.filter(|_| vllm.text_loss) {
            // `atomic_calls` wins over vLLM's cut policy: a cut call is its
            // text as content, never dropped and never completed.
            _ if vllm.atomic => CutCall::Atomic,
            None => CutCall::Ended,
            Some(CutLost::Uncommitted) => CutCall::Uncommitted,
            Some(CutLost::Begun) => CutCall::Begun,
            Some(CutLost::Named) => CutCall::Named,
            Some(CutLost::Unclosed) => CutCall::Unclosed,
            Some(CutLost::Content) => CutCall::Content,
        };
        let params = if calls.cut_param_lost && vllm.text_loss && !vllm.atomic {
            ParamFlow::HeldUntilClosed
        } else {
            ParamFlow::Streamed
        };
        let unknown_names = if calls.known_names_only || (calls.unknown_names_lost && vllm.text_loss) {
            UnknownNames::Uncommitted
        } else {
            UnknownNames::Called
        };
        let none_choice = match (vllm.text_loss, fmt.strip_when_none, calls.strip_without_tools) {
            (true, true, _) => NoneChoice::Strip,
            (true, false, true) => NoneChoice::StripWithoutTools,
            _ => NoneChoice::Plain,
        };
        let answer = if vllm.one_shot && fmt.one_shot.is_on() { Answer::Whole } else { Answer::Streamed };
        Policy {
            engine: EnginePolicy {
                cut,
                params,
                lost_text: loss(true),
                after_calls: loss(fmt.drop_content_after_calls),
                prompt_open: loss(fmt.prompt_lost),
                unknown_names,
            },
            with_calls: loss(calls.text_around_calls_lost),
            none_choice,
            answer,
            one_shot_loss: loss(true),
            spans: Spans::of(vllm),
        }
    }
}
