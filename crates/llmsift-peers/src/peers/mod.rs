//! One module per parser library, each behind its own cargo feature (Sift is
//! always built). Each maps vLLM's parser name to the library's own parser
//! for that format and drives it through the library's streaming and
//! one-shot entry points, as its gateway does.

#[cfg(feature = "dynamo")]
pub mod dynamo;
#[cfg(feature = "dynamo-v2")]
pub mod dynamo_v2;
#[cfg(feature = "sglang")]
pub mod sglang;
pub mod sift;

#[cfg(any(feature = "sglang", feature = "dynamo", feature = "dynamo-v2"))]
use crate::answer::Sink;

#[cfg(any(feature = "sglang", feature = "dynamo", feature = "dynamo-v2"))]
/// Reports a peer's error as content, so the answer is wrong and says why
/// (the peers return `Result`s; Sift never errs on model output).
pub fn error<S: Sink, E: std::fmt::Display>(sink: &mut S, e: E) {
    sink.content(&format!("<peer error: {e}>"));
}
