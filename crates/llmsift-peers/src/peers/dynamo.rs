//! NVIDIA Dynamo's v1 parsers: crates.io `dynamo-parsers` 11, driven as
//! Dynamo's frontend does. Reasoning: a parser per request
//! (`ReasoningParserType::get_reasoning_parser_from_name`), then
//! `parse_reasoning_streaming_incremental` per delta and
//! `finish_reasoning_stream` (text only, no token ids); one shot through
//! `detect_and_parse_reasoning`. Tools: the streaming path is the tool-call
//! jail (`apply_tool_calling_jail`), a stream adapter over the backend's
//! chat-completion chunks; one shot is `detect_and_parse_tool_call`.
//!
//! The jail is fed through an unbounded channel, one chunk per delta, and
//! polled (no-op waker) until it has nothing more to give for that delta, so
//! the time per delta is the jail's work for that delta plus one channel
//! send. The chunk objects are built before the timed region. Dynamo's
//! futures never await I/O; each is polled once (`now_or_never`).

use crate::answer::Sink;
use crate::peers::error;
use crate::run::Peer;
use dynamo_parsers::jail::{apply_tool_calling_jail, Annotated};
use dynamo_parsers::{ReasoningParser, ReasoningParserType, ReasoningParserWrapper, ToolDefinition};
use dynamo_protocols::types::{
    ChatChoiceStream, ChatCompletionMessageContent, ChatCompletionStreamResponseDelta,
    CreateChatCompletionStreamResponse, FinishReason, Role,
};
use futures::channel::mpsc::{unbounded, UnboundedSender};
use futures::stream::{BoxStream, StreamExt};
use futures::task::{noop_waker_ref, Context, Poll};
use futures::FutureExt;

/// A reasoning parser of `dynamo-parsers`.
pub struct Reasoning {
    name: &'static str,
}

impl Reasoning {
    /// The parser for vLLM's `family`, if the crate has one.
    pub fn new(family: &str) -> Option<Reasoning> {
        let name = match family {
            "qwen3" => "qwen3",
            "deepseek_r1" => "deepseek_r1",
            _ => return None,
        };
        Some(Reasoning { name })
    }
}

fn emit_reasoning<S: Sink>(r: dynamo_parsers::ParserResult, sink: &mut S) {
    if !r.reasoning_text.is_empty() {
        sink.reasoning(&r.reasoning_text);
    }
    if !r.normal_text.is_empty() {
        sink.content(&r.normal_text);
    }
}

impl Peer for Reasoning {
    type Input = ();
    type Stream = ReasoningParserWrapper;

    fn prepare(&self, _: &str) {}

    fn open(&self) -> Self::Stream {
        ReasoningParserType::get_reasoning_parser_from_name(self.name)
    }

    fn push<S: Sink>(&self, p: &mut Self::Stream, delta: &str, _: &mut (), sink: &mut S) {
        emit_reasoning(p.parse_reasoning_streaming_incremental(delta, &[]), sink);
    }

    fn finish<S: Sink>(&self, mut p: Self::Stream, sink: &mut S) {
        emit_reasoning(p.finish_reasoning_stream(), sink);
    }

    fn oneshot<S: Sink>(&self, text: &str, sink: &mut S) {
        emit_reasoning(self.open().detect_and_parse_reasoning(text, &[]), sink);
    }
}

type Chunk = Annotated<CreateChatCompletionStreamResponse>;

/// The tool-call jail of `dynamo-parsers`, with the W2 tools.
pub struct Tools {
    name: &'static str,
    tools: Vec<ToolDefinition>,
}

impl Tools {
    /// The parser for vLLM's `family`, if the crate has one.
    pub fn new(family: &str) -> Option<Tools> {
        let name = match family {
            "hermes" => "hermes",
            "qwen3_coder" => "qwen3_coder",
            _ => return None,
        };
        let tools = llmsift_bench::w2_tools_json()
            .as_array()
            .expect("an array")
            .iter()
            .map(|t| ToolDefinition {
                name: t["function"]["name"].as_str().expect("a name").to_string(),
                parameters: Some(t["function"]["parameters"].clone()),
                strict: None,
            })
            .collect();
        Some(Tools { name, tools })
    }
}

/// A backend chunk carrying `text` as content (`finish` on the last one).
#[allow(deprecated)] // `function_call` must be named to build the delta.
fn chunk(text: Option<&str>, finish: Option<FinishReason>) -> Chunk {
    let choice = ChatChoiceStream {
        index: 0,
        delta: ChatCompletionStreamResponseDelta {
            role: Some(Role::Assistant),
            content: text.map(|t| ChatCompletionMessageContent::Text(t.to_string())),
            tool_calls: None,
            function_call: None,
            refusal: None,
            reasoning_content: None,
        },
        finish_reason: finish,
        logprobs: None,
    };
    Annotated {
        data: Some(CreateChatCompletionStreamResponse {
            id: "chatcmpl-bench".to_string(),
            object: "chat.completion.chunk".to_string(),
            created: 0,
            model: "bench".to_string(),
            choices: vec![choice],
            usage: None,
            service_tier: None,
            system_fingerprint: None,
        }),
        id: None,
        event: None,
        comment: None,
        error: None,
    }
}

fn emit_chunk<S: Sink>(c: &Chunk, sink: &mut S) {
    let Some(data) = &c.data else { return };
    for choice in &data.choices {
        let d = &choice.delta;
        if let Some(r) = &d.reasoning_content {
            sink.reasoning(r);
        }
        match &d.content {
            Some(ChatCompletionMessageContent::Text(t)) => sink.content(t),
            Some(other) => error(sink, format!("content parts: {other:?}")),
            None => {}
        }
        for call in d.tool_calls.iter().flatten() {
            let f = call.function.as_ref();
            let name = f.and_then(|f| f.name.as_deref());
            let args = f.and_then(|f| f.arguments.as_deref()).unwrap_or("");
            sink.call(call.index as usize, name, args);
        }
    }
}

/// The open jail: the sending end of its input and its output stream.
pub struct Jail {
    tx: Option<UnboundedSender<Chunk>>,
    out: BoxStream<'static, Chunk>,
}

impl Jail {
    /// Polls the jail until it waits for input (or ends), emitting its output.
    fn drain<S: Sink>(&mut self, sink: &mut S) {
        let mut cx = Context::from_waker(noop_waker_ref());
        while let Poll::Ready(Some(c)) = self.out.poll_next_unpin(&mut cx) {
            emit_chunk(&c, sink);
        }
    }
}

impl Peer for Tools {
    type Input = Option<Chunk>;
    type Stream = Jail;

    fn prepare(&self, delta: &str) -> Option<Chunk> {
        Some(chunk(Some(delta), None))
    }

    fn open(&self) -> Jail {
        let (tx, rx) = unbounded();
        let out =
            apply_tool_calling_jail(Some(self.name.to_string()), None, Some(self.tools.clone()), false, rx);
        Jail { tx: Some(tx), out: out.boxed() }
    }

    fn push<S: Sink>(&self, jail: &mut Jail, _: &str, input: &mut Option<Chunk>, sink: &mut S) {
        if let (Some(tx), Some(c)) = (&jail.tx, input.take()) {
            tx.unbounded_send(c).expect("the jail holds the receiver");
        }
        jail.drain(sink);
    }

    fn finish<S: Sink>(&self, mut jail: Jail, sink: &mut S) {
        if let Some(tx) = jail.tx.take() {
            // The backend's last chunk carries the finish reason and no text.
            tx.unbounded_send(chunk(None, Some(FinishReason::Stop))).expect("the jail holds the receiver");
        }
        jail.drain(sink);
    }

    fn oneshot<S: Sink>(&self, text: &str, sink: &mut S) {
        let r = dynamo_parsers::detect_and_parse_tool_call(text, Some(self.name), Some(&self.tools))
            .now_or_never()
            .expect("completes on first poll");
        match r {
            Ok((calls, normal)) => {
                if let Some(n) = normal.filter(|n| !n.is_empty()) {
                    sink.content(&n);
                }
                for (i, c) in calls.iter().enumerate() {
                    sink.call(i, Some(&c.function.name), &c.function.arguments);
                }
            }
            Err(e) => error(sink, e),
        }
    }
}
