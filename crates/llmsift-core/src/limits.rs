//! Limits on what one message may make a caller hold: argument bytes per
//! call, JSON nesting depth, calls per message (held marker bytes are
//! bounded by construction, see [`crate::MAX_MARKER_LEN`]). `docs/limits.md`
//! gives the defaults and the reasons for each answer.
//!
//! The limits are applied to the call fragments the engine (and the
//! message filters) wrote, as the last stage before the caller: a call whose
//! arguments would pass [`Limits::max_argument_bytes`] or nest deeper than
//! [`Limits::max_depth`] is cut at the last whole JSON token before the
//! limit and closed validly (the watermark's repair: the emitted fragments
//! stay a prefix of the final arguments, which stay a JSON object); the
//! rest of its arguments is dropped. Calls past [`Limits::max_calls`] are
//! dropped whole. Each hit is recorded once as an [`Exceeded`] the caller
//! reads from [`crate::Parser::exceeded`].
//!
//! Invariant: every decision is a function of one call's concatenated
//! arguments (or of the call's index), never of how they were cut into
//! fragments, so streaming still equals one-shot. Bytes above the JSON
//! watermark (white space, a comma, an unfinished escape) are held until the
//! next byte or the end decides them; they are at most the limit.

use crate::json::{JsonScanner, Scan, MAX_DEPTH};
use crate::message::Delta;
use std::fmt;

/// Longest marker spelling a format may declare, in bytes: the bound on
/// held-back text (checked when a format compiles, never per token).
pub const MAX_MARKER_LEN: usize = 64;

/// White space a closer inside a value may be followed by before the
/// grammar's next marker is looked for (`markers_in_values = "follow"`).
pub const MAX_FOLLOW_SPACE: usize = 32;

/// The most a parser holds back: a closer inside a value, the white space
/// after it and a proper prefix of the next marker (a lone marker prefix
/// is shorter than [`MAX_MARKER_LEN`]).
pub const MAX_HELD_BYTES: usize = 2 * MAX_MARKER_LEN + MAX_FOLLOW_SPACE;

/// The limits one parser enforces. Every limit is on by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Limits {
    /// Bytes of one call's `arguments` text (default 8 MiB).
    pub max_argument_bytes: usize,
    /// Nesting of objects and arrays in one call's arguments, the arguments
    /// object itself counting 1 (default 128; at most [`MAX_DEPTH`] - 1,
    /// as the argument kernels refuse deeper JSON whatever this says).
    pub max_depth: usize,
    /// Tool calls in one message (default 1024).
    pub max_calls: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_argument_bytes: 8 << 20, max_depth: 128, max_calls: 1024 }
    }
}

impl Limits {
    /// No limit but the ones the kernels have by construction.
    pub fn unlimited() -> Limits {
        Limits { max_argument_bytes: usize::MAX, max_depth: MAX_DEPTH - 1, max_calls: usize::MAX }
    }
}

/// A limit a message reached, and what became of the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Exceeded {
    /// Call `index`'s arguments were cut at `limit` bytes and closed.
    ArgumentBytes {
        /// The call's index.
        index: usize,
        /// The limit.
        limit: usize,
    },
    /// Call `index`'s arguments were cut before nesting `limit + 1` deep, and closed.
    Depth {
        /// The call's index.
        index: usize,
        /// The limit.
        limit: usize,
    },
    /// Calls from index `limit` on were dropped.
    Calls {
        /// The limit.
        limit: usize,
    },
}

impl fmt::Display for Exceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exceeded::ArgumentBytes { index, limit } => {
                write!(f, "tool call {index}: arguments longer than {limit} bytes were cut")
            }
            Exceeded::Depth { index, limit } => {
                write!(f, "tool call {index}: arguments nested deeper than {limit} were cut")
            }
            Exceeded::Calls { limit } => write!(f, "more than {limit} tool calls: the rest were dropped"),
        }
    }
}

impl std::error::Error for Exceeded {}

/// How close to the byte limit bytes above the watermark start being held.
/// A cut after an emitted comma followed by more white space than this is
/// the one case whose arguments end invalid (`docs/limits.md`).
const NEAR: usize = 4096;

/// One call's arguments as seen so far.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct CallArgs {
    scan: JsonScanner,
    /// Bytes accepted (fed to the scanner, or counted once it went invalid).
    fed: usize,
    /// Accepted bytes not emitted yet (above the watermark).
    pending: String,
    /// Cut: everything after is dropped.
    cut: bool,
}

/// The per-parser limit state.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct LimitState {
    limits: Limits,
    calls: Vec<CallArgs>,
    hits: Vec<Exceeded>,
}

impl LimitState {
    pub fn new(limits: Limits) -> LimitState {
        // The limit must cut before the kernels do, or the cut is not reported.
        let limits = Limits { max_depth: limits.max_depth.min(MAX_DEPTH - 1), ..limits };
        LimitState { limits, calls: vec![], hits: vec![] }
    }

    pub fn exceeded(&self) -> &[Exceeded] {
        &self.hits
    }

    /// The limits it applies.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Applies the limits to what was appended to `out` since it held
    /// `calls` fragments, the last of them with `args` argument bytes.
    /// `vouch` is a call whose fragments are exactly the bytes a JSON
    /// scanner marked safe, and that scanner (`Engine::vouched_args`).
    pub fn apply(
        &mut self,
        out: &mut Delta,
        calls: usize,
        args: usize,
        last: bool,
        vouch: Option<(usize, &JsonScanner)>,
    ) {
        let max_calls = self.limits.max_calls;
        if out.tool_calls.iter().skip(calls).any(|c| c.index >= max_calls) {
            if !self.hits.contains(&Exceeded::Calls { limit: max_calls }) {
                self.hits.push(Exceeded::Calls { limit: max_calls });
            }
            out.retain_calls(|c| c.index < max_calls);
        }
        let from = calls.saturating_sub(1);
        for k in from..out.tool_calls.len() {
            let f = &mut out.tool_calls[k];
            let old = if k + 1 == calls { args.min(f.arguments.len()) } else { 0 };
            if old < f.arguments.len() {
                let w = vouch.filter(|w| w.0 == f.index).map(|w| w.1);
                self.feed(f.index, &mut f.arguments, old, w);
            }
        }
        if last {
            // The end decides held white space and commas: the engine's
            // arguments are complete, so they were part of them.
            for i in 0..self.calls.len() {
                if !self.calls[i].pending.is_empty() {
                    let p = std::mem::take(&mut self.calls[i].pending);
                    out.call_fragment(i).arguments.push_str(&p);
                }
            }
        }
    }

    /// Feeds the argument bytes of call `index` that `args` holds from
    /// `old` on, leaving in `args` what may be emitted. In place: the
    /// common fragment (far from every limit, nothing held) is scanned and
    /// left as it is, so the limits cost one scan and no allocation.
    fn feed(&mut self, index: usize, args: &mut String, old: usize, vouch: Option<&JsonScanner>) {
        if self.calls.len() <= index {
            self.calls.resize_with(index + 1, CallArgs::default);
        }
        let lim = self.limits;
        let c = &mut self.calls[index];
        if c.cut {
            args.truncate(old);
            return;
        }
        if let Some(w) = vouch {
            // The writer's scanner has read exactly these bytes (it marked
            // them all safe): when they pass no limit and come nowhere near
            // one, nothing is held or cut, and its state is what scanning
            // them again would give.
            let fed = c.fed + (args.len() - old);
            let clear = c.pending.is_empty()
                && !c.scan.is_invalid()
                && w.safe() == fed
                && w.peak() <= lim.max_depth
                && w.depth() < lim.max_depth
                && fed.saturating_add(NEAR) <= lim.max_argument_bytes;
            if clear {
                c.scan.sync_to_watermark(w);
                c.fed = fed;
                return;
            }
        }
        let room = lim.max_argument_bytes.saturating_sub(c.fed);
        // Whole characters that fit: the cut never splits one.
        let mut end = args.len().min(old.saturating_add(room));
        while !args.is_char_boundary(end) {
            end -= 1;
        }
        let over = end < args.len();
        args.truncate(end);
        let fit = end - old;
        if c.scan.is_invalid() {
            // Not JSON (the engine wrote it so): counted, passed on. Nothing
            // is held once the scan went invalid.
            c.fed += fit;
        } else if let Some(at) = scan_until_deep(&mut c.scan, &args.as_bytes()[old..], lim.max_depth) {
            c.fed += at;
            c.pending.push_str(&args[old..old + at]);
            args.truncate(old);
            return Self::cut(c, Exceeded::Depth { index, limit: lim.max_depth }, args, &mut self.hits);
        } else {
            c.fed += fit;
            // Bytes above the watermark are only held where a cut may come:
            // within NEAR bytes of the byte limit, or at the depth limit.
            // Elsewhere the stream keeps the engine's own fragments.
            let near = c.fed.saturating_add(NEAR) > lim.max_argument_bytes || c.scan.depth() >= lim.max_depth;
            let all = c.scan.is_complete() || c.scan.is_invalid() || !near;
            if !c.pending.is_empty() {
                c.pending.push_str(&args[old..]);
                args.truncate(old);
                // The watermark never goes below what was emitted already.
                let n = if all { c.pending.len() } else { c.scan.safe() - (c.fed - c.pending.len()) };
                args.push_str(&c.pending[..n]);
                c.pending.drain(..n);
            } else if !all {
                let n = c.scan.safe() - (c.fed - fit);
                c.pending.push_str(&args[old + n..]);
                args.truncate(old + n);
            }
        }
        if over {
            Self::cut(
                c,
                Exceeded::ArgumentBytes { index, limit: lim.max_argument_bytes },
                args,
                &mut self.hits,
            );
        }
    }

    /// Cuts a call: the watermarked prefix, then the repair that closes it.
    fn cut(c: &mut CallArgs, why: Exceeded, out: &mut String, hits: &mut Vec<Exceeded>) {
        c.cut = true;
        hits.push(why);
        if c.scan.is_invalid() {
            out.push_str(&std::mem::take(&mut c.pending));
            return;
        }
        let emitted = c.fed - c.pending.len();
        let safe = c.scan.safe().max(emitted);
        out.push_str(&c.pending[..safe - emitted]);
        c.pending.clear();
        match c.scan.repair() {
            Some(r) => out.push_str(&r),
            None => out.push_str("{}"),
        }
    }
}

/// Feeds `b`; `Some(at)` when byte `at` would open a container past
/// `max_depth` (the scanner then holds the state before it).
fn scan_until_deep(scan: &mut JsonScanner, b: &[u8], max_depth: usize) -> Option<usize> {
    if scan.depth().saturating_add(b.len()) <= max_depth {
        // Each byte opens at most one container: no cut in this fragment.
        scan.feed(b);
        return None;
    }
    let mut i = 0;
    while i < b.len() {
        if scan.depth() < max_depth {
            // Each opening byte adds at most one level: up to the k-th of
            // them, with k the levels left, none can pass the limit.
            let k = max_depth - scan.depth();
            let n = match memchr::memchr2_iter(b'{', b'[', &b[i..]).nth(k - 1) {
                Some(n) => n + 1,
                None => b.len() - i,
            };
            if let Scan::Invalid { .. } | Scan::Complete { .. } = scan.feed(&b[i..i + n]) {
                return None;
            }
            i += n;
        } else {
            let before = scan.clone();
            if let Scan::Invalid { .. } | Scan::Complete { .. } = scan.feed(&b[i..=i]) {
                return None;
            }
            if scan.depth() > max_depth {
                *scan = before;
                return Some(i);
            }
            i += 1;
        }
    }
    None
}
