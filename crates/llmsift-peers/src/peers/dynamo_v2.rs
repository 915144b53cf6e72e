//! NVIDIA Dynamo's v2 parsers: crates.io `dynamo-parsers-v2` 0.9, its
//! unified parser (one state machine per stream owning reasoning, content
//! and tool calls): `create_unified_parser_for_family` per request,
//! `parse_into` per delta into a caller-owned output (cleared after each
//! delta: the buffer is cumulative; the caller's scratch, reused across
//! streams, so not part of a stream's state), `finish` at the end; one shot through
//! `parse_complete`. Its families: `qwen3` (alias `qwen3_coder`: `<think>`
//! reasoning and Qwen3-Coder XML calls). It has no Hermes JSON and no
//! DeepSeek-R1 family.

use crate::answer::Sink;
use crate::peers::error;
use crate::run::Peer;
use dynamo_parsers_v2::{
    create_unified_parser_for_family, Tool, UnifiedEvent, UnifiedParser, UnifiedParserEvent,
    UnifiedParserExt, UnifiedParserOutput,
};
use std::cell::RefCell;

/// A unified parser family of `dynamo-parsers-v2`, with the W2 tools.
pub struct Unified {
    family: &'static str,
    tools: Vec<Tool>,
    out: RefCell<UnifiedParserOutput>,
}

impl Unified {
    /// The parser for vLLM's `family`, if the crate has one.
    pub fn new(family: &str) -> Option<Unified> {
        let family = match family {
            "qwen3" => "qwen3",
            "qwen3_coder" => "qwen3_coder",
            _ => return None,
        };
        let tools = llmsift_bench::w2_tools_json()
            .as_array()
            .expect("an array")
            .iter()
            .map(|t| Tool {
                name: t["function"]["name"].as_str().expect("a name").to_string(),
                description: t["function"]["description"].as_str().map(str::to_string),
                parameters: t["function"]["parameters"].clone(),
                strict: None,
            })
            .collect();
        Some(Unified { family, tools, out: RefCell::default() })
    }
}

fn emit<S: Sink>(out: &mut UnifiedParserOutput, sink: &mut S) {
    for e in out.events.drain(..) {
        match e {
            UnifiedParserEvent::Reasoning(t) => sink.reasoning(&t),
            UnifiedParserEvent::Text(t) => sink.content(&t),
            UnifiedParserEvent::ToolCall(c) => sink.call(c.tool_index, c.name.as_deref(), &c.arguments),
            _ => {}
        }
    }
}

impl Peer for Unified {
    type Input = ();
    type Stream = Box<dyn UnifiedParser>;

    fn prepare(&self, _: &str) {}

    fn open(&self) -> Self::Stream {
        create_unified_parser_for_family(self.family, &self.tools).expect("a built-in family")
    }

    fn push<S: Sink>(&self, p: &mut Self::Stream, delta: &str, _: &mut (), sink: &mut S) {
        let out = &mut *self.out.borrow_mut();
        if let Err(e) = p.parse_into(delta, out) {
            error(sink, e);
        }
        emit(out, sink);
    }

    fn finish<S: Sink>(&self, mut p: Self::Stream, sink: &mut S) {
        match p.finish() {
            Ok(mut out) => emit(&mut out, sink),
            Err(e) => error(sink, e),
        }
    }

    fn oneshot<S: Sink>(&self, text: &str, sink: &mut S) {
        match self.open().parse_complete(text) {
            Ok(events) => {
                let mut calls = 0;
                for e in events {
                    match e {
                        UnifiedEvent::Reasoning { text } => sink.reasoning(&text),
                        UnifiedEvent::Text { text } => sink.content(&text),
                        UnifiedEvent::ToolCall { name, arguments } => {
                            sink.call(calls, Some(&name), &arguments.to_string());
                            calls += 1;
                        }
                        _ => {}
                    }
                }
            }
            Err(e) => error(sink, e),
        }
    }
}
