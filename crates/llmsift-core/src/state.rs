//! A parser state that travels: a [`Parser`] saved as a serde value on one
//! replica and resumed on another, so a stream can move between processes
//! between any two deltas (`docs/scale-out.md`).
//!
//! What is carried is only what the output moved: the engine's state, the
//! message filters', the limits' and, with `vllm_one_shot` for a format that
//! decides on the whole output, that output (O(n) by nature: the only part
//! that grows, besides an open call's unsent arguments). The compiled format
//! is not carried: the resuming side builds a parser for the same request
//! from its own [`ParserFactory`] and takes the carried state into it. The
//! state names the format it belongs to by a fingerprint, so a state for
//! another pair, variant or vocabulary binding is refused.
//!
//! The encoding, its version and its authentication belong to the caller
//! (`llmsift-protocol`'s `carry`): this module only defines the value.
//!
//! Invariant: for any request and any cut, pushing the rest of a stream into
//! `factory.resume(req, saved)` gives exactly the deltas the uninterrupted
//! parser gives (checked over the corpus by `llmsift-conformance`).

use crate::engine::Engine;
use crate::format::response_template::StreamCarry;
use crate::format::Format;
use crate::limits::LimitState;
use crate::parser::{Parser, ParserFactory, Request};
use crate::post::Post;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The layout of the carried value. Bump it whenever a field of a carried
/// type (anything deriving `Serialize` under `Engine`, `Post`,
/// `LimitState`) is added, removed, reordered or retyped: the encoding
/// names no fields, so an old state would otherwise decode into the wrong
/// ones. A replica then refuses the other layout's states by name.
/// Layout 4 added `atomic_calls` (issue 23).
pub const STATE_LAYOUT: u16 = 4;

/// A parser's state, borrowed for serialization (see [`Parser::snapshot`]).
#[derive(Debug, Serialize)]
pub struct ParserStateRef<'a> {
    fingerprint: u64,
    finished: bool,
    engine: &'a Engine,
    post: &'a Option<Box<Post>>,
    limits: &'a LimitState,
    whole: Option<(&'a str, Option<&'a [u32]>)>,
    rt: Option<StreamCarry>,
    /// `Request::atomic_calls` as the parser was built (layout 4): calls
    /// streamed as they come cannot be held whole from the middle on.
    atomic_calls: bool,
}

/// A parser's state, decoded (resumed by [`ParserFactory::resume`]).
#[derive(Debug, Deserialize)]
pub struct ParserState {
    fingerprint: u64,
    finished: bool,
    engine: Engine,
    post: Option<Box<Post>>,
    limits: LimitState,
    whole: Option<(String, Option<Vec<u32>>)>,
    rt: Option<StreamCarry>,
    atomic_calls: bool,
}

/// Why a decoded state cannot resume a parser for this request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResumeError {
    /// The state was saved for another format (another pair, variant,
    /// binding or version of a format file).
    OtherFormat,
    /// The state does not fit the request's parser (a held whole output for
    /// a parser that holds none, or a state or terminal the format lacks).
    Mismatch(&'static str),
}

impl fmt::Display for ResumeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResumeError::OtherFormat => f.write_str("the state belongs to another parser format"),
            ResumeError::Mismatch(what) => write!(f, "the state does not fit this request's parser ({what})"),
        }
    }
}

impl std::error::Error for ResumeError {}

impl ParserState {
    /// Whether the parser had finished when it was saved.
    pub fn finished(&self) -> bool {
        self.finished
    }
}

impl Parser {
    /// The state to carry (serialize it; resume with [`ParserFactory::resume`]).
    pub fn snapshot(&self) -> ParserStateRef<'_> {
        ParserStateRef {
            fingerprint: fingerprint(self.engine.format()),
            finished: self.finished,
            engine: &self.engine,
            post: &self.post,
            limits: &self.limits,
            whole: self.whole.as_ref().map(|w| w.held()),
            rt: self.rt.as_ref().map(|r| r.carry()),
            atomic_calls: self.atomic_calls(),
        }
    }
}

impl ParserFactory {
    /// A parser for `req` that continues where `state` was saved. `req` must
    /// be the request the state's parser was built for (the caller binds
    /// the state to it; see `llmsift-protocol`'s `carry`).
    pub fn resume(&self, req: &Request, state: ParserState) -> Result<Parser, ResumeError> {
        let fresh = self.parser(req);
        if fingerprint(fresh.engine.format()) != state.fingerprint {
            return Err(ResumeError::OtherFormat);
        }
        let ParserState { finished, mut engine, post, limits, whole, rt, atomic_calls, .. } = state;
        if atomic_calls != fresh.atomic_calls() {
            // Saved under the other `atomic_calls`: a call half streamed
            // cannot become held, nor a held one streamed.
            return Err(ResumeError::Mismatch("atomic_calls"));
        }
        engine.relink(&fresh.engine).map_err(ResumeError::Mismatch)?;
        if post.is_some() != fresh.post.is_some() {
            return Err(ResumeError::Mismatch("filters"));
        }
        let whole = match (fresh.whole, whole) {
            (Some(mut w), Some((text, ids))) => {
                w.restore(text, ids);
                Some(w)
            }
            (None, None) => None,
            _ => return Err(ResumeError::Mismatch("held output")),
        };
        let rt = match (fresh.rt, rt) {
            (Some(mut r), Some(c)) => {
                r.restore(c).map_err(ResumeError::Mismatch)?;
                Some(r)
            }
            (None, None) => None,
            _ => return Err(ResumeError::Mismatch("response template")),
        };
        Ok(Parser { engine, finished, post, limits, whole, rt })
    }
}

/// A stable 64-bit FNV-1a hash of what a carried state's meaning depends
/// on in a compiled format: its name, states, terminals and token binding.
/// The same on every replica for the same configuration (no `HashMap`
/// order enters it).
pub fn fingerprint(f: &Format) -> u64 {
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    h.bytes(&STATE_LAYOUT.to_le_bytes());
    h.str(&f.name);
    for s in &f.states {
        h.str(&s.name);
    }
    for t in &f.terminals {
        h.bytes(&[u8::from(t.token)]);
        for sp in &t.spellings {
            h.str(sp);
        }
    }
    let mut ids: Vec<(u32, u16)> = f.token_ids.iter().map(|(k, v)| (*k, *v)).collect();
    ids.sort_unstable();
    for (id, t) in ids {
        h.bytes(&id.to_le_bytes());
        h.bytes(&t.to_le_bytes());
    }
    h.0
}

struct Fnv(u64);

impl Fnv {
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 = (self.0 ^ u64::from(x)).wrapping_mul(0x100_0000_01b3);
        }
    }
    /// A string and its length, so consecutive strings cannot run together.
    fn str(&mut self, s: &str) {
        self.bytes(&(s.len() as u64).to_le_bytes());
        self.bytes(s.as_bytes());
    }
}
