//! A small driver for profilers (perf, callgrind): streams one workload many
//! times. `profile WORKLOAD [SCALE] [ITERS]`, WORKLOAD one of `w1`,
//! `w2_hermes`, `w2_qwen3_coder`, `w3`, `w3b_hermes`, `w3b_qwen3_coder`
//! (W3b: the W2 text in one shot).
//!
//! ```text
//! cargo build --profile bench -p llmsift-bench --example profile
//! perf record -g --call-graph dwarf target/release/examples/profile w2_hermes 1 2000
//! valgrind --tool=callgrind target/release/examples/profile w1 1 5
//! crates/llmsift-bench/scripts/instr_per_delta.sh   # callgrind instr/delta table
//! ```

use llmsift_bench::{request, w1, w1_factory, w2_factory, w2_hermes, w2_qwen3_coder, DELTA_BYTES};
use llmsift_core::Delta;
use std::hint::black_box;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map_or("w1", String::as_str);
    let scale: usize = args.get(2).map_or(1, |s| s.parse().expect("scale"));
    let iters: usize = args.get(3).map_or(1000, |s| s.parse().expect("iters"));
    let (f, req, w) = match which {
        "w1" | "w3" => (w1_factory(), request(false), w1(scale)),
        "w2_hermes" | "w3b_hermes" => (w2_factory("hermes"), request(true), w2_hermes(scale)),
        "w2_qwen3_coder" | "w3b_qwen3_coder" => {
            (w2_factory("qwen3_coder"), request(true), w2_qwen3_coder(scale))
        }
        other => panic!("unknown workload {other}"),
    };
    let deltas = w.deltas(DELTA_BYTES);
    let mut out = Delta::default();
    let start = std::time::Instant::now();
    for _ in 0..iters {
        if which.starts_with("w3") {
            black_box(f.parse(&req, black_box(&w.text), None));
            continue;
        }
        let mut p = f.parser(&req);
        for d in &deltas {
            out.clear();
            p.push_into(black_box(d), None, &mut out);
            black_box(&out);
        }
        out.clear();
        p.finish_into(&mut out);
        black_box(&out);
    }
    let ns = start.elapsed().as_nanos() as f64;
    let per = if which.starts_with("w3") {
        format!("{:.2} GB/s", (w.text.len() * iters) as f64 / ns)
    } else {
        format!("{:.1} ns/delta", ns / (deltas.len() * iters) as f64)
    };
    println!("{which} x{scale}: {} deltas ({} bytes), {iters} iterations, {per}", deltas.len(), w.text.len());
}
