//! The SGLang / SMG gateway's parsers: crates.io `reasoning-parser` and
//! `tool-parser` 1.10, driven as the gateway's streaming path does: a fresh
//! parser per request from the registry (`create_parser`), the streaming
//! entry point per delta (`parse_reasoning_streaming_incremental`,
//! `parse_incremental` with the request's tools), then the end-of-stream
//! calls (`flush`; `get_unstreamed_tool_args` and
//! `take_unstreamed_normal_text`); one shot through
//! `detect_and_parse_reasoning` and `parse_complete_with_tools`.
//!
//! The tool parsers' methods are `async` but never await anything: each
//! future completes on its first poll, so it is polled once
//! (`now_or_never`) instead of through a runtime, which would add the
//! runtime's own cost to the parser's.

use crate::answer::Sink;
use crate::peers::error;
use crate::run::Peer;
use futures::FutureExt;
use openai_protocol::common::Tool;
use reasoning_parser::{ParserFactory as ReasoningFactory, ReasoningParser};
use tool_parser::{ParserFactory as ToolFactory, ToolParser};

/// A reasoning parser of `reasoning-parser`.
pub struct Reasoning {
    factory: ReasoningFactory,
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
        Some(Reasoning { factory: ReasoningFactory::new(), name })
    }
}

fn emit_reasoning<S: Sink>(
    r: Result<reasoning_parser::ParserResult, reasoning_parser::ParseError>,
    sink: &mut S,
) {
    match r {
        Ok(r) => {
            if !r.reasoning_text.is_empty() {
                sink.reasoning(&r.reasoning_text);
            }
            if !r.normal_text.is_empty() {
                sink.content(&r.normal_text);
            }
        }
        Err(e) => error(sink, e),
    }
}

impl Peer for Reasoning {
    type Input = ();
    type Stream = Box<dyn ReasoningParser>;

    fn prepare(&self, _: &str) {}

    fn open(&self) -> Self::Stream {
        self.factory.registry().create_parser(self.name).expect("registered")
    }

    fn push<S: Sink>(&self, p: &mut Self::Stream, delta: &str, _: &mut (), sink: &mut S) {
        emit_reasoning(p.parse_reasoning_streaming_incremental(delta), sink);
    }

    fn finish<S: Sink>(&self, mut p: Self::Stream, sink: &mut S) {
        emit_reasoning(p.flush(), sink);
    }

    fn oneshot<S: Sink>(&self, text: &str, sink: &mut S) {
        emit_reasoning(self.open().detect_and_parse_reasoning(text), sink);
    }
}

/// A tool parser of `tool-parser`, with the W2 tools.
pub struct Tools {
    factory: ToolFactory,
    name: &'static str,
    tools: Vec<Tool>,
}

impl Tools {
    /// The parser for vLLM's `family`, if the crate has one.
    pub fn new(family: &str) -> Option<Tools> {
        let name = match family {
            // `qwen` is the `<tool_call>\n{json}\n</tool_call>` format vLLM calls `hermes`.
            "hermes" => "qwen",
            "qwen3_coder" => "qwen_coder",
            _ => return None,
        };
        let tools =
            serde_json::from_value(llmsift_bench::w2_tools_json()).expect("the W2 tools are OpenAI tools");
        Some(Tools { factory: ToolFactory::new(), name, tools })
    }
}

impl Peer for Tools {
    type Input = ();
    type Stream = Box<dyn ToolParser>;

    fn prepare(&self, _: &str) {}

    fn open(&self) -> Self::Stream {
        self.factory.registry().create_parser(self.name).expect("registered")
    }

    fn push<S: Sink>(&self, p: &mut Self::Stream, delta: &str, _: &mut (), sink: &mut S) {
        match p.parse_incremental(delta, &self.tools).now_or_never().expect("completes on first poll") {
            Ok(r) => {
                if !r.normal_text.is_empty() {
                    sink.content(&r.normal_text);
                }
                for c in &r.calls {
                    sink.call(c.tool_index, c.name.as_deref(), &c.parameters);
                }
            }
            Err(e) => error(sink, e),
        }
    }

    fn finish<S: Sink>(&self, mut p: Self::Stream, sink: &mut S) {
        for c in p.get_unstreamed_tool_args().unwrap_or_default() {
            sink.call(c.tool_index, c.name.as_deref(), &c.parameters);
        }
        let rest = p.take_unstreamed_normal_text();
        if !rest.is_empty() {
            sink.content(&rest);
        }
    }

    fn oneshot<S: Sink>(&self, text: &str, sink: &mut S) {
        let p = self.open();
        match p.parse_complete_with_tools(text, &self.tools).now_or_never().expect("completes on first poll")
        {
            Ok((normal, calls)) => {
                if !normal.is_empty() {
                    sink.content(&normal);
                }
                for (i, c) in calls.iter().enumerate() {
                    sink.call(i, Some(&c.function.name), &c.function.arguments);
                }
            }
            Err(e) => error(sink, e),
        }
    }
}
