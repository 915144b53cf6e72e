//! `llmsift-peers`: Sift side by side with the published Rust parsers (issue
//! 12, point 1). One process runs one (peer, workload, parser, scale) and
//! prints one JSON line: ns per delta (thread CPU time, best of N), MB/s,
//! whether the answer is Sift's one-shot answer (and what differs if not),
//! bytes held by an open stream (with `--features count-alloc`), and the
//! CPU time to open a parser for a request.
//!
//! ```text
//! llmsift-peers --peer sift|sglang|dynamo|dynamo-v2 --workload W1|W1b|W2|W3|W3b|W4 \
//!            --family qwen3|deepseek_r1|hermes|qwen3_coder --scale N [--min-reps N] [--budget-ms MS]
//! ```
//!
//! Each peer is built in its own cargo invocation and target directory
//! (`scripts/peers-bench.sh`): built together, their dependencies' features
//! would unify and change their speed. A peer without a parser for the
//! family prints `{"na": why}`.

mod answer;
mod measure;
mod peers;
mod run;
mod work;

use run::{run, Peer, Reps};
use serde_json::{json, Value};
use std::time::Duration;
use work::Work;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse(&args).and_then(|(peer, w, reps)| dispatch(&peer, &w, reps)) {
        Ok(line) => println!("{line}"),
        Err(e) => {
            eprintln!("llmsift-peers: {e}");
            std::process::exit(2);
        }
    }
}

fn parse(args: &[String]) -> Result<(String, Work, Reps), String> {
    let get =
        |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).map(String::as_str);
    let need = |flag: &str| get(flag).ok_or_else(|| format!("missing {flag} (see the module docs)"));
    let num = |flag: &str, default: u64| -> Result<u64, String> {
        get(flag).map_or(Ok(default), |v| v.parse().map_err(|_| format!("{flag}: not a number: {v}")))
    };
    let scale = num("--scale", 1)? as usize;
    let reps = Reps {
        min: num("--min-reps", 5)? as usize,
        max: 200,
        budget: Duration::from_millis(num("--budget-ms", 2000)?),
    };
    let w = work::build(need("--workload")?, need("--family")?, scale)?;
    Ok((need("--peer")?.to_string(), w, reps))
}

/// Runs `peer` if it has a parser for the workload's family.
fn go<P: Peer>(name: &str, peer: Option<P>, w: &Work, reps: Reps) -> Value {
    match peer {
        Some(p) => run(name, &p, w, reps),
        None => json!({"peer": name, "workload": w.id, "family": w.family, "scale": w.scale,
                       "na": format!("no {} parser", w.family)}),
    }
}

fn dispatch(peer: &str, w: &Work, reps: Reps) -> Result<Value, String> {
    Ok(match peer {
        "sift" => go(peer, Some(peers::sift::Sift::new(&w.family)?), w, reps),
        #[cfg(feature = "sglang")]
        "sglang" if work::is_reasoning(&w.family) => {
            go(peer, peers::sglang::Reasoning::new(&w.family), w, reps)
        }
        #[cfg(feature = "sglang")]
        "sglang" => go(peer, peers::sglang::Tools::new(&w.family), w, reps),
        #[cfg(feature = "dynamo")]
        "dynamo" if work::is_reasoning(&w.family) => {
            go(peer, peers::dynamo::Reasoning::new(&w.family), w, reps)
        }
        #[cfg(feature = "dynamo")]
        "dynamo" => go(peer, peers::dynamo::Tools::new(&w.family), w, reps),
        #[cfg(feature = "dynamo-v2")]
        "dynamo-v2" => go(peer, peers::dynamo_v2::Unified::new(&w.family), w, reps),
        other => return Err(format!("peer {other} is not built into this binary (cargo feature)")),
    })
}
