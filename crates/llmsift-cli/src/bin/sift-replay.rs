//! `sift-replay`: the replay backend (see `llmsift_serve::replay`): recorded
//! outputs in the vLLM/SGLang, llama.cpp and raw chat wire formats, with
//! pacing and injected faults. Used by the gateway's end-to-end tests and
//! load test; prints `listening on http://ADDR` on stderr once ready.

use anyhow::{Context, Result};
use clap::Parser;
use llmsift_serve::replay::{Fault, ReplayOptions};
use std::io::Write;
use std::time::Duration;

#[derive(Parser)]
#[command(name = "sift-replay", about = "Serve recorded model outputs as a raw-completion backend")]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Port (0: a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// The recording for requests that name none (qwen3, qwen3-coder, deepseek-r1, gpt-oss).
    #[arg(long)]
    recording: Option<String>,
    /// A fault for every request: status500, drop:N, stall:N, garbage:N, split-utf8.
    #[arg(long, default_value = "none")]
    fault: Fault,
    /// Pause between frames, milliseconds.
    #[arg(long, default_value_t = 0)]
    pace_ms: u64,
    /// Tokens per frame.
    #[arg(long, default_value_t = 1)]
    chunk_tokens: usize,
    /// Record each frame's send time by the request's `seed` (GET /replay/stamps).
    #[arg(long)]
    stamps: bool,
}

fn main() -> Result<()> {
    let a = Args::parse();
    let opts = ReplayOptions {
        default_recording: a.recording,
        fault: a.fault,
        pace: Duration::from_millis(a.pace_ms),
        chunk_tokens: a.chunk_tokens,
        stamps: a.stamps,
    };
    llmsift_serve::replay::run_blocking(opts, &a.host, a.port, |addr| {
        let _ = writeln!(std::io::stderr(), "sift-replay: listening on http://{addr}");
    })
    .context("sift-replay")
}
