//! Conformance cases and answers: the JSON-lines contract of
//! `sift parse --jsonl` (see `../shared/corpus/README.md`).
//!
//! A [`Case`] is a model output plus the parsers and request it was served
//! with; [`Runner::answer`] parses it one-shot and streamed (in the case's
//! chunks, by bytes, or token by token through the real detokenizer) and
//! reports both messages folded the way a client folds them. The runner
//! caches compiled parser pairs and loaded tokenizers, so a whole corpus runs
//! in well under a second per thousand cases.
//!
//! Invariant: every case gets an answer; a case that cannot be run (unknown
//! parser, a tokenizer lacking a marker) gets an `error`, never a panic.

// The crate README (its crates.io page) is compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

mod answer;
mod carry;
mod case;
mod roundtrip;
mod run;
mod score;
mod splits;
mod tokspec;

pub use answer::{delta_json, message_json, Answer};
pub use carry::check_carried;
pub use case::{Case, StreamSpec};
pub use roundtrip::{roundtrip, Roundtrip};
pub use run::{read_request, skips_special, stream_chunks, Runner};
pub use score::{compare, exact, known_disagreements};
pub use splits::{check_splits, random_chunks, stream_message};
