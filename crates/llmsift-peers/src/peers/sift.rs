//! Sift, as `sift serve` drives it: one `Parser` per request from a shared
//! `ParserFactory`, one `push_into` per delta into a caller-owned `Delta`.
//! The `Delta` is the caller's scratch, reused across deltas and streams (one
//! per worker thread), so it is not part of a stream's state.

use crate::answer::Sink;
use crate::run::Peer;
use crate::work::is_reasoning;
use llmsift_core::{Delta, Parser, ParserFactory, Registry, Request};
use std::cell::RefCell;

/// Sift with one parser pair.
pub struct Sift {
    factory: ParserFactory,
    req: Request,
    out: RefCell<Delta>,
}

impl Sift {
    /// Sift's parser for `family` (a reasoning or a tool parser name).
    pub fn new(family: &str) -> Result<Sift, String> {
        let reasoning = is_reasoning(family);
        let factory = if reasoning {
            Registry::builtin().factory(Some(family), None)
        } else {
            Registry::builtin().factory(None, Some(family))
        }
        .map_err(|e| e.to_string())?;
        Ok(Sift { factory, req: llmsift_bench::request(!reasoning), out: RefCell::default() })
    }
}

fn emit<S: Sink>(d: &Delta, sink: &mut S) {
    if !d.reasoning.is_empty() {
        sink.reasoning(&d.reasoning);
    }
    if !d.content.is_empty() {
        sink.content(&d.content);
    }
    for c in &d.tool_calls {
        sink.call(c.index, c.name.as_deref(), &c.arguments);
    }
}

impl Peer for Sift {
    type Input = ();
    type Stream = Parser;

    fn prepare(&self, _: &str) {}

    fn open(&self) -> Parser {
        self.factory.parser(&self.req)
    }

    fn push<S: Sink>(&self, p: &mut Parser, delta: &str, _: &mut (), sink: &mut S) {
        let out = &mut *self.out.borrow_mut();
        out.clear();
        p.push_into(delta, None, out);
        emit(out, sink);
    }

    fn finish<S: Sink>(&self, mut p: Parser, sink: &mut S) {
        let out = &mut *self.out.borrow_mut();
        out.clear();
        p.finish_into(out);
        emit(out, sink);
    }

    fn oneshot<S: Sink>(&self, text: &str, sink: &mut S) {
        let m = self.factory.parse(&self.req, text, None);
        if let Some(r) = &m.reasoning {
            sink.reasoning(r);
        }
        if let Some(c) = &m.content {
            sink.content(c);
        }
        for (i, c) in m.tool_calls.iter().enumerate() {
            sink.call(i, Some(&c.name), &c.arguments);
        }
    }
}
