//! The harness every peer runs through: one correctness pass, timed runs
//! (best of N by thread CPU time), bytes held mid-stream, construction cost.
//!
//! A timed stream run is a whole stream as a gateway drives it: open a
//! parser for the request, push every delta, finish. Inputs are prepared
//! before the timed region (each peer receives a delta in its own type).

use crate::answer::{Answer, Discard, Sink};
use crate::measure::{best_of, cpu_ns, held};
use crate::work::Work;
use serde_json::{json, Value};
use std::time::Duration;

/// One parser library driven the way its own gateway drives it.
pub trait Peer {
    /// What this peer needs besides the delta's text (`()` for most; the
    /// backend chunk object for Dynamo's jail).
    type Input;
    /// The per-request parser state.
    type Stream;
    /// Turns a delta into this peer's input (outside the timed region).
    fn prepare(&self, delta: &str) -> Self::Input;
    /// Opens a parser for one request.
    fn open(&self) -> Self::Stream;
    /// Pushes one delta, `delta` or taken from `input`.
    fn push<S: Sink>(&self, stream: &mut Self::Stream, delta: &str, input: &mut Self::Input, sink: &mut S);
    /// Ends the stream, flushing what it held.
    fn finish<S: Sink>(&self, stream: Self::Stream, sink: &mut S);
    /// Parses a whole output at once.
    fn oneshot<S: Sink>(&self, text: &str, sink: &mut S);
}

/// How long to measure.
#[derive(Debug, Clone, Copy)]
pub struct Reps {
    /// At least this many timed runs.
    pub min: usize,
    /// At most this many.
    pub max: usize,
    /// More than `min` only while the CPU time spent stays under this.
    pub budget: Duration,
}

fn stream<P: Peer, S: Sink>(peer: &P, w: &Work, inputs: &mut [P::Input], sink: &mut S) {
    let mut s = peer.open();
    for (r, d) in w.deltas.iter().zip(inputs.iter_mut()) {
        peer.push(&mut s, w.delta(r), d, sink);
    }
    peer.finish(s, sink);
}

/// Runs `peer` on `w` and returns the result line.
pub fn run<P: Peer>(name: &str, peer: &P, w: &Work, reps: Reps) -> Value {
    let prepare = || w.deltas.iter().map(|r| peer.prepare(w.delta(r))).collect::<Vec<_>>();
    let mut got = Answer::default();
    if w.is_oneshot() {
        peer.oneshot(&w.text, &mut got);
    } else {
        stream(peer, w, &mut prepare(), &mut got);
    }
    let wrong = got.wrong(&w.want);
    let bytes = w.text.len();
    let (best, n) = if w.is_oneshot() {
        best_of(reps.min, reps.max, reps.budget, || (), |()| peer.oneshot(&w.text, &mut Discard))
    } else {
        best_of(reps.min, reps.max, reps.budget, prepare, |mut inputs| {
            stream(peer, w, &mut inputs, &mut Discard)
        })
    };
    let mut line = json!({
        "peer": name, "workload": w.id, "family": w.family, "scale": w.scale,
        "bytes": bytes, "right": wrong.is_none(), "wrong": wrong, "reps": n,
        "mb_s": bytes as f64 * 1e3 / best as f64,
    });
    if w.is_oneshot() {
        line["ns"] = json!(best);
        return line;
    }
    line["deltas"] = json!(w.deltas.len());
    line["ns_per_delta"] = json!(best as f64 / w.deltas.len() as f64);
    line["held_bytes"] = json!(held_bytes(peer, w));
    line["held_inline"] = json!(std::mem::size_of::<P::Stream>());
    line["construct_ns"] = json!(construct_ns(peer));
    line
}

/// Bytes one open stream holds after `w.held_after` deltas: its heap (when
/// the counting allocator is built in) plus its inline size.
fn held_bytes<P: Peer>(peer: &P, w: &Work) -> Option<i64> {
    let mut keep = None;
    // The inputs are made and dropped inside the window, so only what the
    // stream keeps is left counted.
    let heap = held(|| {
        let mut inputs: Vec<_> = w.deltas[..w.held_after].iter().map(|r| peer.prepare(w.delta(r))).collect();
        let mut s = peer.open();
        for (r, d) in w.deltas.iter().zip(inputs.iter_mut()) {
            peer.push(&mut s, w.delta(r), d, &mut Discard);
        }
        drop(inputs);
        keep = Some(s);
    });
    drop(keep);
    heap.map(|h| h + std::mem::size_of::<P::Stream>() as i64)
}

/// CPU time to open (and drop) one parser, best of 7 batches of 1,000.
fn construct_ns<P: Peer>(peer: &P) -> f64 {
    const BATCH: usize = 1_000;
    let mut best = u64::MAX;
    for _ in 0..7 {
        let (ns, ()) = cpu_ns(|| {
            for _ in 0..BATCH {
                std::hint::black_box(peer.open());
            }
        });
        best = best.min(ns);
    }
    best as f64 / BATCH as f64
}
