//! The built-in demo backend: recorded outputs replayed token by token
//! through their real tokenizer, in process (no HTTP).
//!
//! Owns pacing and choice interleaving of a replay; what is replayed is
//! [`crate::recording`]'s. The tool variant is chosen when the request has
//! tools, and `max_tokens` cuts the replay with `finish_reason: length`,
//! as a real engine would.

use super::{Chunk, ChunkStream, GenRequest};
use crate::recording::{replay_ids, Recording};
use llmsift_protocol::FinishReason;
use llmsift_tokenizers::TokenizerView;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A replayed model.
#[derive(Debug, Clone)]
pub struct DemoBackend {
    recording: Arc<Recording>,
    view: TokenizerView,
    pace: Duration,
}

impl DemoBackend {
    /// Replays `recording` through `view`, pausing `pace` between tokens.
    pub fn new(recording: Recording, view: TokenizerView, pace: Duration) -> DemoBackend {
        DemoBackend { recording: Arc::new(recording), view, pace }
    }

    /// The replay: one token per chunk, the choices in turn.
    pub fn start(&self, req: GenRequest) -> ChunkStream {
        let tools = req.tools.as_ref().is_some_and(|t| !t.is_empty());
        let (ids, cut) = replay_ids(&self.view, self.recording.output(tools), req.max_tokens);
        let n = req.n.max(1);
        let finish = if cut { FinishReason::Length } else { FinishReason::Stop };
        let total = ids.len() * n as usize;
        let pace = self.pace;
        let chunks = (0..=total).map(move |k| {
            if k == total {
                return None;
            }
            let (pos, index) = (k / n as usize, (k % n as usize) as u32);
            let last = pos + 1 == ids.len();
            Some(Chunk {
                index,
                text: String::new(),
                ids: Some(vec![ids[pos]]),
                finish: last.then_some(finish),
                ..Chunk::default()
            })
        });
        let empty: Vec<Chunk> = if total == 0 {
            (0..n)
                .map(|index| Chunk { index, finish: Some(finish), ids: Some(Vec::new()), ..Chunk::default() })
                .collect()
        } else {
            Vec::new()
        };
        let stream = futures_util::stream::iter(chunks.flatten().chain(empty)).then(move |c| async move {
            if !pace.is_zero() {
                tokio::time::sleep(pace).await;
            }
            Ok(Chunk { received: Some(Instant::now()), ..c })
        });
        Box::pin(stream)
    }
}

use futures_util::StreamExt as _;
