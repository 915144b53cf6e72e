//! `[vllm]`: the vLLM profile. What vLLM's answer does that a faithful
//! split would not: text it loses (`[vllm.text_loss]`, followed when a
//! request sets `vllm_text_loss`) and decisions it makes from the whole
//! output (`[vllm.one_shot]`, followed when a request sets
//! `vllm_one_shot`; some also need `vllm_text_loss`), and the class of the
//! vLLM parser that changes both (`parser`).
//!
//! Nothing here changes Sift's own answer: a request that sets neither
//! flag never reads this table. Tied settings are one table (`split = { at,
//! to }`), so a half-given rule cannot be written.

use serde::Deserialize;

/// The `[vllm]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VllmSpec {
    /// Reasoning formats: the vLLM reasoning parser's class.
    #[serde(default)]
    pub parser: ParserClass,
    /// What vLLM's answer loses, followed with `vllm_text_loss`.
    #[serde(default)]
    pub text_loss: TextLossSpec,
    /// vLLM's decisions from the whole output, followed with `vllm_one_shot`.
    #[serde(default)]
    pub one_shot: OneShotSpec,
}

/// A reasoning format's vLLM parser class (`parser`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParserClass {
    /// Engine-based (the default): its pair parses calls as one engine.
    #[default]
    Engine,
    /// Not engine-based (`DelegatingParser._engine_based` is false): under
    /// `tool_choice: none` its pair never runs the tool parser, so the
    /// calls' markup stays content even where the tool format strips it
    /// (`text_loss.calls_when_none`), and its pair's answer keeps the raw
    /// text of a call the output's end cuts (`cut_call` `uncommitted` and
    /// `begun` read as `named`).
    Legacy,
}

/// What vLLM's answer loses of a call the output's end cuts (`cut_call`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CutLost {
    /// A call with no name yet is lost, and its section's text (Sift's
    /// default makes them content); a named one is a call, arguments as far
    /// as written (vLLM's engine pairs).
    Uncommitted,
    /// As `uncommitted` once anything follows the call's opening marker:
    /// the marker alone stays content, and a named call needs its arguments
    /// begun (vLLM's Apertus engine).
    Begun,
    /// Only a named call is answered; no text is lost (what either becomes
    /// under a reasoning format whose `parser` is `legacy`).
    Named,
    /// Also a committed call its end marker never closed is lost: such a
    /// format's calls are held until they end, so none is streamed that the
    /// end of the output takes back.
    Unclosed,
    /// Held the same way, a cut call whose end marker never came and whose
    /// JSON arguments are not whole is taken back as content, its text as
    /// written (vLLM's legacy parsers answer the raw output when a call
    /// does not parse).
    Content,
}

/// What vLLM does with calls under `tool_choice: "none"` (`calls_when_none`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoneCalls {
    /// The markup stays content (the default; Sift's answer).
    #[default]
    Keep,
    /// The calls are parsed and dropped, text and all (vLLM's engine-based pairs).
    Strip,
    /// As `strip` for a request that declares no tools; a request that
    /// declares tools and says `none` keeps the markup (vLLM's engine-based
    /// Llama JSON parser).
    StripWithoutTools,
}

/// `[vllm.text_loss]`: text vLLM's one-shot answer puts in no field. Sift
/// keeps it unless the request sets `vllm_text_loss`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextLossSpec {
    /// Content written after a call was emitted (vLLM's unified Gemma 4
    /// engine, DeepSeek V3.1, …).
    #[serde(default)]
    pub content_after_calls: bool,
    /// Tool formats: the text around calls, when the output has any call
    /// (content is then held until the output ends).
    #[serde(default)]
    pub text_around_calls: bool,
    /// Tool formats: a call the output's end cuts. A call without a
    /// readable name stays content either way (vLLM answers a call named
    /// "" there).
    #[serde(default)]
    pub cut_call: Option<CutLost>,
    /// Tool formats: a parameter the output's end cuts before its closing
    /// marker (the call stays). Each parameter is then held until it
    /// closes, so no streamed fragment is taken back.
    #[serde(default)]
    pub cut_param: bool,
    /// Tool formats: a call to a function the request declares no tool for
    /// (when it declares tools) is not a call, and its text is lost
    /// (vLLM's GLM engine).
    #[serde(default)]
    pub unknown_names: bool,
    /// Tool formats: what happens to calls under `tool_choice: "none"`.
    #[serde(default)]
    pub calls_when_none: NoneCalls,
    /// Reasoning formats with `[prompt] prime`: the text of a message the
    /// prompt left open (its header routed) until a marker moves the state
    /// (vLLM's Muse parser starts at a header and never reads the message
    /// the prompt opened).
    #[serde(default)]
    pub prompt_open_message: bool,
}

/// Why vLLM's one-shot answer reads a tool format's whole output as
/// content, calls and all (`as_content`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AsContent {
    /// Non-blank content after a call (the parser's JSON or list does not
    /// end the output, so vLLM reads no call).
    TextAfterCalls,
    /// A marker read as text inside a JSON string of a call
    /// (`markers_in_strings = "text"`: vLLM's non-greedy regex ends the call
    /// there and its JSON does not parse).
    MarkerInString,
    /// Two or more calls (vLLM's GigaChat 3 parser reads one JSON object
    /// after its marker).
    TwoCalls,
}

/// `[vllm.one_shot]`: the decisions vLLM's one-shot parser makes from the
/// whole output, which its own stream does not follow. Sift follows them
/// only when the request sets `vllm_one_shot`, holding the output until it
/// ends. Rules marked "with `vllm_text_loss`" need that flag too.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OneShotSpec {
    /// Reasoning formats, with `vllm_text_loss`: the first spelling of a
    /// terminal anywhere in the output splits it, when the output starts in
    /// reasoning (DeepSeek R1's `partition(start_token)`).
    #[serde(default)]
    pub split: Option<SplitSpec>,
    /// Reasoning formats: when none of these terminals is spelled anywhere
    /// in the output, it is read without the reasoning grammar (content,
    /// and calls where the request parses them): vLLM's answer for
    /// reasoning whose end marker never comes.
    #[serde(default)]
    pub unterminated: Option<UnterminatedSpec>,
    /// Reasoning formats: a lone end-of-reasoning marker (Gemma 4's
    /// `<channel|>`) makes the text before it reasoning.
    #[serde(default)]
    pub lone_end: Option<LoneEndSpec>,
    /// Reasoning formats with message headers (harmony): the unfinished
    /// last message is content as written.
    #[serde(default)]
    pub unfinished: Option<UnfinishedSpec>,
    /// Reasoning formats with `[vllm.text_loss] prompt_open_message`, with
    /// `vllm_text_loss`: when the prompt left a message open, vLLM's answer
    /// is empty, every field lost (its harmony parser fails on the open
    /// message's tokens and reads nothing after them).
    #[serde(default)]
    pub prompt_open_empty: bool,
    /// Reasoning formats, with `vllm_text_loss`: from the first non-blank
    /// text a `drop` state reads (text outside any message) up to the next
    /// spelling of this terminal (a message's start), the output reaches
    /// no field (vLLM's harmony parser fails on each such token, and on a
    /// header that no start marker opened).
    #[serde(default)]
    pub outside_lost: Option<String>,
    /// Tool formats: what makes the whole output content, calls and all.
    #[serde(default)]
    pub as_content: Vec<AsContent>,
    /// Tool formats, with `vllm_text_loss`: text that, inside a call's
    /// arguments, ends vLLM's non-greedy match of the call list there, so
    /// its JSON does not parse and its answer is empty, every field lost
    /// (phi4_mini_json's `functools\[(.*?)\]` and a `]` in the arguments).
    #[serde(default)]
    pub empty_if_in_args: Option<String>,
    /// Tool formats, with `vllm_text_loss`: when the output has a call, the
    /// content before the first call and the content after it are each
    /// stripped of white space and joined with one newline (Apertus, LFM2).
    #[serde(default)]
    pub strip_join: Option<StripJoinSpec>,
    /// Tool formats, with `vllm_text_loss`: the content between the first
    /// call and the last reaches no field (vLLM's DeepSeek V3 answers the
    /// text before the first call block and after the last).
    #[serde(default)]
    pub between_calls_lost: bool,
    /// Tool formats, with `vllm_text_loss`: the text after the first call
    /// block's end up to the last block's end reaches no field (vLLM's Kimi
    /// K3 and LFM2 read the first block).
    #[serde(default)]
    pub later_blocks_lost: Option<LaterBlocksSpec>,
    /// Tool formats: vLLM's strict reading of the first call block (HY-V4's
    /// `_extract_tool_calls_strict`): when the output opens a block that
    /// never closes, whose paired markers do not balance, or that yields
    /// no call, the whole output (after any reasoning) is content.
    #[serde(default)]
    pub strict_block: Option<StrictBlockSpec>,
    /// Reasoning formats: vLLM's reasoning parser reads at most one
    /// reasoning block, by `partition`s of the whole output (MiniMax M3):
    /// see [`PartitionSpec`].
    #[serde(default)]
    pub partition: Option<PartitionSpec>,
    /// Tool formats: vLLM reads the first closed block alone. When the
    /// output spells the block's `open` and no `close` follows its first
    /// spelling, or the reading answers no call, the whole output is
    /// content as written, calls and all (OLMo 3's
    /// `re.search(open(.*?)close)` finds no block, or a block that is not
    /// all call lines, and its opener is no call line).
    #[serde(default)]
    pub first_block: Option<BlockSpec>,
    /// Reasoning formats whose `parser` is `legacy`: when the tool format
    /// answers no call, the content is the reasoning grammar's alone, the
    /// tool markup as written (vLLM's `DelegatingParser` returns the
    /// reasoning parser's content when a legacy pair's tool parser called
    /// no tool).
    #[serde(default)]
    pub no_call_as_written: bool,
}

/// `split = { at, to }`: the text before `at`'s first spelling reaches no
/// field and the text after it is read from `to`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitSpec {
    /// The terminal that splits.
    pub at: String,
    /// The state the rest is read from (default `reasoning`).
    #[serde(default)]
    pub to: Option<String>,
}

/// `unterminated = { ends, strip }`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnterminatedSpec {
    /// The terminals of which none is spelled (at least one).
    pub ends: Vec<String>,
    /// A spelling of this terminal that opens the output is dropped from it
    /// first (K2 Horizon's `removeprefix`).
    #[serde(default)]
    pub strip: Option<String>,
}

/// `lone_end = { end, unless, to }`: `end`'s first spelling, coming before
/// any spelling of `unless` while the output does not start in reasoning,
/// makes the text before it reasoning: the output is read from `to`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoneEndSpec {
    /// The terminal that ends reasoning.
    pub end: String,
    /// The terminals that open reasoning.
    #[serde(default)]
    pub unless: Vec<String>,
    /// The state the output is read from (default `reasoning`).
    #[serde(default)]
    pub to: Option<String>,
}

/// `unfinished = { suffix, start, body }`: when the output ends before the
/// last message's header reached `body`, or has no header at all, that
/// message's text as written (from its `start` marker, or from the output's
/// start) is content, after a newline when content came before it,
/// followed by `suffix` (vLLM's harmony parser answers the unfinished
/// message's raw tokens and its stop token).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnfinishedSpec {
    /// Text written after the message.
    pub suffix: String,
    /// The terminal that starts a message.
    pub start: String,
    /// The terminal that starts a message's body.
    pub body: String,
}

/// `strip_join = { remove_after }`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StripJoinSpec {
    /// Spellings removed from the content after the call (Apertus removes
    /// every `<|tools_suffix|>`).
    #[serde(default)]
    pub remove_after: Vec<String>,
}

/// `strict_block = { open, close, balanced }`: the first spelling of `open`
/// must be followed by a spelling of `close` (the first one anywhere), and
/// between them each pair of `balanced` terminals must be spelled as many
/// times as each other.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StrictBlockSpec {
    /// The terminal opening the call block.
    pub open: String,
    /// The terminal closing it.
    pub close: String,
    /// Pairs of terminals (opener, closer) counted inside the block.
    #[serde(default)]
    pub balanced: Vec<[String; 2]>,
}

/// `partition = { start, end }`: when the output spells `start`, the text
/// from its first spelling up to the first `end` after it (or the output's
/// end) is the reasoning, and the text before and after that block is
/// content as written (markers there are text), read by the tool format
/// alone; when the output does not start in reasoning and opens with `end`,
/// the rest is content as written. Otherwise the grammar reads it as usual
/// (it gives vLLM's answer there).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionSpec {
    /// The terminal that opens reasoning.
    pub start: String,
    /// The terminal that ends it.
    pub end: String,
}

/// `first_block = { open, close }`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockSpec {
    /// The terminal opening a call block.
    pub open: String,
    /// The terminal closing it.
    pub close: String,
}

/// `later_blocks_lost = { end, open }`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaterBlocksSpec {
    /// The terminal ending a call block.
    pub end: String,
    /// The terminal opening a block: only a span holding one is a later
    /// block (a closer inside a string is not).
    pub open: String,
}
