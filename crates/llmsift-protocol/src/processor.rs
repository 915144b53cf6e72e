//! The stream processor: one per choice, between the core parser and a
//! dialect. It applies the serving rules vLLM applies after parsing.
//!
//! Owns:
//! - which calls reach the client: none unless the request asked for calls
//!   (`tool_choice` other than `none`); with `parallel_tool_calls: false`
//!   only call index 0;
//! - call ids per family ([`crate::ids::IdStyle`]);
//! - `include_reasoning: false`: reasoning removed from every delta, a delta
//!   left empty is not sent, token ids are hidden (they would leak the
//!   reasoning), and so are the logprobs of reasoning's tokens (its markers
//!   included): told apart by id with the reasoning counter, one logprob
//!   entry per id; without ids or a counter no token can be told apart and
//!   every logprob is hidden;
//! - `finish_reason`: `tool_calls` only when calls were actually sent, the
//!   engine stopped normally (`stop`) and the choice is not a named
//!   function; `length` when a call sent was cut by the output's end and
//!   left as written (`llmsift_core::Parser::cut_call`: its arguments are
//!   incomplete, so no client may run it), whatever the engine's reason
//!   but `abort`; otherwise the engine's reason;
//! - token counts for `usage` (output ids, and reasoning tokens through a
//!   [`ReasoningCounter`] when ids are given).
//!
//! Invariant: one-shot is the stream folded. [`ChoiceProcessor::complete`]
//! pushes the whole output and finishes, folding the steps with the
//! client's rule, so a non-streaming answer can never differ from the
//! folded stream.

use crate::check::{CheckedRequest, ToolChoiceMode};
pub use crate::finish::FinishReason;
use crate::ids::IdStyle;
use crate::wire::{CompletionTokensDetails, ReasoningField, Usage};
use llmsift_core::{Delta, Folder, Message, Parser, ParserFactory, ReasoningCounter};
use serde_json::Value;

/// Per-deployment output options, shared by every choice.
#[derive(Debug, Clone)]
pub struct Options {
    /// How call ids are made (by tool parser: [`IdStyle::for_tool_parser`]).
    pub id_style: IdStyle,
    /// The Chat Completions key for reasoning.
    pub reasoning_field: ReasoningField,
    /// Counts reasoning tokens on ids. When `None` and the factory is bound
    /// to a vocabulary with reasoning markers, one is made from the
    /// factory, starting inside reasoning when the parser does.
    pub reasoning_counter: Option<ReasoningCounter>,
    /// Pass token ids on to the parser, so special-token markers match by
    /// id (default true). Needs a factory bound to the vocabulary: the core
    /// matches no special-token marker when given ids without a binding, so
    /// turn this off when ids are only for usage and `token_ids`.
    pub match_markers_by_id: bool,
    /// Reproduce vLLM's answers where they lose text that lands in no field
    /// (`llmsift_core::Request::vllm_text_loss`; default false).
    pub vllm_text_loss: bool,
    /// Reproduce vLLM's one-shot answers that depend on the whole output,
    /// holding it for the formats that have them
    /// (`llmsift_core::Request::vllm_one_shot`; default false).
    pub vllm_one_shot: bool,
    /// Forced calls (`required`, named) arrive as vLLM's JSON answer,
    /// whatever the family's own format (`llmsift_core::Request::choice_as_json`;
    /// default false).
    pub choice_as_json: bool,
    /// Emit each call only once it closes, a cut call's text as content
    /// (`llmsift_core::Request::atomic_calls`; default false). A request's
    /// own `atomic_calls` wins.
    pub atomic_calls: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            id_style: IdStyle::Random,
            reasoning_field: ReasoningField::Reasoning,
            reasoning_counter: None,
            match_markers_by_id: true,
            vllm_text_loss: false,
            vllm_one_shot: false,
            choice_as_json: false,
            atomic_calls: false,
        }
    }
}

/// What one engine delta produced, after the protocol rules: the unit every
/// dialect is built from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Step {
    /// Reasoning, content and call fragments (ids rewritten, filtered).
    pub delta: Delta,
    /// This delta's log probabilities, when asked for and not hidden.
    pub logprobs: Option<Value>,
    /// This delta's token ids, with `return_token_ids` and not hidden.
    pub token_ids: Option<Vec<u32>>,
    /// With `logprobs` given: which of its entries are reasoning's tokens
    /// (one flag per entry), when a reasoning counter tells them apart. The
    /// Responses dialect keeps only the others (reasoning text carries no
    /// logprobs there).
    pub reasoning_mask: Option<Vec<bool>>,
    /// Set on the last step only.
    pub finish_reason: Option<FinishReason>,
}

/// Output token counts of one choice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenCounts {
    /// Output tokens (the ids pushed; 0 when no ids were given).
    pub completion_tokens: u64,
    /// Reasoning tokens, when a counter was running.
    pub reasoning_tokens: Option<u64>,
}

impl TokenCounts {
    /// `usage` for a prompt of `prompt_tokens`.
    pub fn usage(self, prompt_tokens: u64) -> Usage {
        Usage {
            prompt_tokens,
            completion_tokens: self.completion_tokens,
            total_tokens: prompt_tokens + self.completion_tokens,
            completion_tokens_details: self
                .reasoning_tokens
                .map(|reasoning_tokens| CompletionTokensDetails { reasoning_tokens }),
        }
    }
}

/// Usage sums over choices.
impl std::ops::Add for TokenCounts {
    type Output = TokenCounts;
    fn add(self, other: TokenCounts) -> TokenCounts {
        TokenCounts {
            completion_tokens: self.completion_tokens + other.completion_tokens,
            reasoning_tokens: match (self.reasoning_tokens, other.reasoning_tokens) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
            },
        }
    }
}

/// A whole choice, one-shot.
#[derive(Debug, Clone, PartialEq)]
pub struct ChoiceOutput {
    /// The folded message (after the protocol rules).
    pub message: Message,
    /// The client's `finish_reason`.
    pub finish_reason: FinishReason,
    /// Log probabilities, when asked for and not hidden.
    pub logprobs: Option<Value>,
    /// Output token ids, with `return_token_ids` and not hidden.
    pub token_ids: Option<Vec<u32>>,
    /// Token counts.
    pub counts: TokenCounts,
}

/// The per-choice stream processor.
#[derive(Debug)]
pub struct ChoiceProcessor {
    pub(crate) parser: Parser,
    choice: ToolChoiceMode,
    parallel: bool,
    include_reasoning: bool,
    logprobs: bool,
    return_token_ids: bool,
    history: usize,
    style: IdStyle,
    /// The tool parser makes this choice's calls (auto, or a forced choice
    /// the family writes in its own format), not the serving layer.
    calls_by_parser: bool,
    ids_to_parser: bool,
    pub(crate) counter: Option<ReasoningCounter>,
    pub(crate) completion_tokens: u64,
    pub(crate) calls_sent: bool,
    pub(crate) finished: Option<FinishReason>,
}

impl ChoiceProcessor {
    /// A processor for one choice of a checked request.
    pub fn new(factory: &ParserFactory, req: &CheckedRequest, opts: &Options) -> ChoiceProcessor {
        Self::with_parser(factory, req, opts, factory.parser(&Self::core_request(req, opts)))
    }

    /// A processor around a parser built for this choice (new, or resumed).
    pub(crate) fn with_parser(
        factory: &ParserFactory,
        req: &CheckedRequest,
        opts: &Options,
        parser: Parser,
    ) -> ChoiceProcessor {
        let counter = opts.reasoning_counter.clone().or_else(|| {
            let (start, end) = factory.format().reasoning_token_ids()?;
            // The core names its reasoning state `reasoning` in every built-in format.
            Some(ReasoningCounter::new(start, end, parser.state() == "reasoning"))
        });
        ChoiceProcessor {
            parser,
            choice: req.tool_choice.clone(),
            parallel: req.parallel_tool_calls,
            include_reasoning: req.include_reasoning,
            logprobs: req.logprobs,
            return_token_ids: req.return_token_ids,
            history: req.history_tool_calls,
            style: opts.id_style,
            calls_by_parser: match req.tool_choice {
                ToolChoiceMode::Auto => true,
                _ => factory.format().choice_in_own_format() && !opts.choice_as_json,
            },
            ids_to_parser: opts.match_markers_by_id,
            counter,
            completion_tokens: 0,
            calls_sent: false,
            finished: None,
        }
    }

    /// The core request of a choice (also what a carried state resumes with).
    pub(crate) fn core_request(req: &CheckedRequest, opts: &Options) -> llmsift_core::Request {
        llmsift_core::Request {
            vllm_text_loss: opts.vllm_text_loss,
            vllm_one_shot: opts.vllm_one_shot,
            choice_as_json: opts.choice_as_json,
            atomic_calls: req.atomic_calls.unwrap_or(opts.atomic_calls),
            ..req.to_core()
        }
    }

    /// Feeds one engine delta: its text, its token ids when known, and its
    /// log probabilities (`{"content": [...]}`) when the request asked for
    /// them. Returns the step to send, or `None` when there is nothing to
    /// send (vLLM skips such chunks). Nothing is produced after finishing.
    pub fn push(&mut self, text: &str, ids: Option<&[u32]>, logprobs: Option<Value>) -> Option<Step> {
        if self.finished.is_some() {
            return None;
        }
        let mut delta = Delta::default();
        self.parser.push_into(text, ids.filter(|_| self.ids_to_parser), &mut delta);
        let step = self.step(delta, ids, logprobs, None);
        let empty = step.delta.is_empty() && step.logprobs.is_none() && step.token_ids.is_none();
        (!empty).then_some(step)
    }

    /// Ends the choice with the engine's reason. The step is always sent:
    /// it carries the `finish_reason` (and whatever the parser still held).
    pub fn finish(&mut self, engine: FinishReason) -> Step {
        self.finish_with("", None, None, engine)
    }

    /// Ends the choice with a last engine delta (vLLM's last output carries
    /// text and the finish reason together).
    pub fn finish_with(
        &mut self,
        text: &str,
        ids: Option<&[u32]>,
        logprobs: Option<Value>,
        engine: FinishReason,
    ) -> Step {
        if let Some(done) = self.finished {
            return Step { finish_reason: Some(done), ..Step::default() };
        }
        let mut delta = Delta::default();
        self.parser.push_into(text, ids.filter(|_| self.ids_to_parser), &mut delta);
        self.parser.finish_into(&mut delta);
        let mut step = self.step(delta, ids, logprobs, Some(engine));
        // A call sent with its arguments cut by the output's end (left as
        // written, issue 23) must not run: `length`, however the engine ended.
        let cut = self.parser.cut_call().is_some_and(|i| self.sends_call(i));
        let reason = match engine {
            FinishReason::Stop | FinishReason::ToolCalls if cut => FinishReason::Length,
            FinishReason::Stop | FinishReason::ToolCalls if self.calls_sent && !self.is_named() => {
                FinishReason::ToolCalls
            }
            FinishReason::ToolCalls => FinishReason::Stop,
            other => other,
        };
        self.finished = Some(reason);
        step.finish_reason = Some(reason);
        step
    }

    /// One-shot: the whole output (and its ids and log probabilities), the
    /// engine's reason; the folded message.
    pub fn complete(
        mut self,
        output: &str,
        ids: Option<&[u32]>,
        logprobs: Option<Value>,
        engine: FinishReason,
    ) -> ChoiceOutput {
        let step = self.finish_with(output, ids, logprobs, engine);
        let mut fold = Folder::default();
        fold.push(&step.delta);
        ChoiceOutput {
            message: fold.finish(),
            finish_reason: step.finish_reason.unwrap_or(engine),
            logprobs: step.logprobs,
            token_ids: step.token_ids,
            counts: self.counts(),
        }
    }

    /// Whether any call fragment has been sent.
    pub fn calls_sent(&self) -> bool {
        self.calls_sent
    }

    /// The client's `finish_reason`, once finished.
    pub fn finish_reason(&self) -> Option<FinishReason> {
        self.finished
    }

    /// Token counts so far.
    pub fn counts(&self) -> TokenCounts {
        TokenCounts {
            completion_tokens: self.completion_tokens,
            reasoning_tokens: self.counter.as_ref().map(ReasoningCounter::count),
        }
    }

    /// Whether call `index` reaches the client (the rules `step` applies).
    fn sends_call(&self, index: usize) -> bool {
        self.choice != ToolChoiceMode::None && (self.parallel || index == 0)
    }

    fn is_named(&self) -> bool {
        matches!(self.choice, ToolChoiceMode::Named(_))
    }

    fn step(
        &mut self,
        mut delta: Delta,
        ids: Option<&[u32]>,
        logprobs: Option<Value>,
        finish: Option<FinishReason>,
    ) -> Step {
        // Which ids are reasoning's (markers included), for hiding their logprobs.
        let mut mask = None;
        if let Some(ids) = ids {
            self.completion_tokens += ids.len() as u64;
            if let Some(c) = &mut self.counter {
                mask = Some(ids.iter().map(|&i| c.push_one(i)).collect::<Vec<bool>>());
            }
        }
        if !self.include_reasoning {
            delta.drop_reasoning();
        }
        if self.choice == ToolChoiceMode::None {
            delta.retain_calls(|_| false);
        } else {
            if !self.parallel {
                delta.retain_calls(|c| c.index == 0);
            }
            for c in &mut delta.tool_calls {
                if let Some(id) = &mut c.id {
                    let name = c.name.as_deref().unwrap_or("");
                    *id = self.style.rewrite(self.calls_by_parser, self.history, c.index, name, id);
                }
            }
        }
        self.calls_sent |= !delta.tool_calls.is_empty();
        let hide = !self.include_reasoning;
        let (logprobs, reasoning_mask) = match (self.logprobs, hide) {
            (false, _) => (None, None),
            (true, false) => {
                let shown = logprobs.is_some();
                (logprobs, mask.filter(|_| shown))
            }
            (true, true) => (without_reasoning(logprobs, mask.as_deref()), None),
        };
        Step {
            delta,
            logprobs,
            reasoning_mask,
            token_ids: if self.return_token_ids && !hide { ids.map(<[u32]>::to_vec) } else { None },
            finish_reason: finish,
        }
    }
}

/// `{"content": [...]}` without the entries of reasoning ids (`mask`, one
/// flag per id and entry); `None` when nothing is left or the entries cannot
/// be matched to ids.
fn without_reasoning(logprobs: Option<Value>, mask: Option<&[bool]>) -> Option<Value> {
    let (mut lp, mask) = (logprobs?, mask?);
    let entries = lp.get_mut("content")?.as_array_mut()?;
    if entries.len() != mask.len() {
        return None;
    }
    let mut keep = mask.iter().map(|r| !r);
    entries.retain(|_| keep.next().unwrap_or(false));
    (!entries.is_empty()).then_some(lp)
}
