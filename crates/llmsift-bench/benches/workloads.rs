//! Sift's workloads W1-W3 (see `llmsift_bench` for what each generates).
//!
//! Run with `cargo bench -p llmsift-bench`. Streaming benchmarks count items =
//! deltas, so divan's throughput row reads `Mitem/s`: ns per delta =
//! 1000 / (Mitem/s). The one-shot benchmark counts bytes (GB/s).
//!
//! Each iteration parses one whole output: a new parser (cheap), one
//! `push_into` per delta into a reused, cleared `Delta`, then `finish_into`.
//! Inputs are generated before the timed region.

use divan::counter::{BytesCount, ItemsCount};
use divan::{black_box, Bencher};
use llmsift_bench::{
    request, rt_factory, rt_lookahead_factory, w1, w1_factory, w2_factory, w2_hermes, w2_qwen3_coder,
    Workload, DELTA_BYTES,
};
use llmsift_core::{Delta, ParserFactory, Request};

fn main() {
    divan::main();
}

/// Streams `w` in `DELTA_BYTES` deltas through a fresh parser per iteration.
fn stream(bencher: Bencher, f: &ParserFactory, req: &Request, w: &Workload) {
    let deltas = w.deltas(DELTA_BYTES);
    let mut out = Delta::default();
    bencher.counter(ItemsCount::new(deltas.len())).bench_local(|| {
        let mut p = f.parser(req);
        for d in &deltas {
            out.clear();
            p.push_into(black_box(d), None, &mut out);
            black_box(&out);
        }
        out.clear();
        p.finish_into(&mut out);
        black_box(&out);
    });
}

/// W1: qwen3 reasoning + content, no tools, 4-byte deltas.
#[divan::bench(args = [1, 2, 4])]
fn w1_stream_qwen3(bencher: Bencher, scale: usize) {
    stream(bencher, &w1_factory(), &request(false), &w1(scale));
}

/// W2: one Hermes call with a 4,000·scale-character string argument.
#[divan::bench(args = [1, 2, 4])]
fn w2_stream_hermes(bencher: Bencher, scale: usize) {
    stream(bencher, &w2_factory("hermes"), &request(true), &w2_hermes(scale));
}

/// W2: one Qwen3-Coder call with a 4,000·scale-character string argument.
#[divan::bench(args = [1, 2, 4])]
fn w2_stream_qwen3_coder(bencher: Bencher, scale: usize) {
    stream(bencher, &w2_factory("qwen3_coder"), &request(true), &w2_qwen3_coder(scale));
}

/// W3: the W1 output parsed one-shot (`factory.parse`), bytes/s.
#[divan::bench(args = [1, 2, 4])]
fn w3_oneshot_qwen3(bencher: Bencher, scale: usize) {
    let f = w1_factory();
    let req = request(false);
    let w = w1(scale);
    let text = w.text.as_str();
    bencher.counter(BytesCount::of_str(text)).bench_local(|| f.parse(&req, black_box(text), None));
}

/// W1 parsed by TRL's Qwen3 response template (`hf` with a model's own template).
#[divan::bench(args = [1, 2, 4])]
fn w1_stream_response_template(bencher: Bencher, scale: usize) {
    stream(bencher, &rt_factory(), &request(false), &w1(scale));
}

/// W2 (Hermes form) parsed by TRL's Qwen3 response template: the call is
/// held until its region closes, then parsed once.
#[divan::bench(args = [1, 2, 4])]
fn w2_stream_response_template(bencher: Bencher, scale: usize) {
    stream(bencher, &rt_factory(), &request(true), &w2_hermes(scale));
}

/// W1 parsed by TRL's DeepSeek-R1-Distill template: a lookahead opener holds
/// the text until `</think>` decides it, and the content after it to the end.
#[divan::bench(args = [1, 2, 4])]
fn w1_stream_response_template_lookahead(bencher: Bencher, scale: usize) {
    stream(bencher, &rt_lookahead_factory(), &request(false), &w1(scale));
}
