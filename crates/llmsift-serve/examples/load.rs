//! The bounded load test of `sift serve` (see `docs/serve.md`): N concurrent
//! streaming requests through the gateway to the replay backend, both real
//! processes on 127.0.0.1.
//!
//! Measures, chunk by chunk, the time the gateway adds. Three clocks stamp
//! each backend frame (all the system clock of this one machine, keyed by
//! the request's `seed` and the frame's position; `return_token_ids: true`
//! makes every backend token one client chunk, so chunk i is frame i): the
//! replay's send (`sift-replay --stamps`), the gateway's receipt of the
//! frame's bytes and its hand-over of the client frames (`sift serve
//! --stamps`), and the client's read. The gateway's added time for a chunk
//! is *send → hand-over*: the chunk's end-to-end time minus its own last
//! hop (gateway → client), which is the one hop a client talking to the
//! backend directly would also pay. It is never negative, unlike a
//! difference of two percentiles. Also: the gateway's own time (receipt →
//! hand-over), the direct path as a baseline, CPU per chunk, resident memory
//! with every stream open, and that nothing was lost (each stream's token
//! ids and finish reason, no error frame).
//!
//! With `SIFT_LOAD_CHUNKS=FILE` it also writes every chunk through the
//! gateway, one line each: seed, chunk, sent, received, handed over, read.
//!
//! ```sh
//! cargo build --release -p llmsift-cli
//! cargo run --release -p llmsift-serve --example load -- target/release/sift target/release/sift-replay 256 50 1000
//! ```
//!
//! Arguments: the two binaries, streams (256), the backend's pause between
//! frames in ms (50: 20 tokens/s), the arrival ramp in ms (1000), token
//! ids per backend frame (1; vLLM's `stream_interval` done by the backend),
//! and the requests' `stream_interval` (1; done by the gateway: one client
//! frame per that many tokens). A client chunk is matched to the backend
//! frame of its last token.

use futures_util::StreamExt;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

struct Proc(Child, String);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(bin: &str, args: &[&str]) -> Proc {
    let mut child =
        Command::new(bin).args(args).stderr(Stdio::piped()).stdout(Stdio::null()).spawn().expect(bin);
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines.next().expect("the process said nothing").expect("stderr");
        if let Some(a) = line.split("listening on http://").nth(1) {
            break a.split_whitespace().next().unwrap().to_string();
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    Proc(child, addr)
}

fn rss_kib(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// CPU time a process's threads ran, in seconds: the sum of each live
/// thread's `/proc/PID/task/TID/schedstat` (nanoseconds; the gateway's
/// threads live as long as it does), so neither the machine's other load
/// nor 10 ms clock ticks blur it.
fn cpu_s(pid: u32) -> f64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return 0.0 };
    let ns: u64 = tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    ns as f64 / 1e9
}

/// The 1-minute load average (the machine is shared: every figure says it).
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn now_ns() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos()
}

struct StreamResult {
    seed: u64,
    /// (backend frame, read time) per client chunk.
    arrivals: Vec<(u32, u128)>,
    tokens: usize,
    finish: Option<String>,
    errors: usize,
}

/// `opened` counts streams that got their first chunk (never blocks the reader).
async fn one(
    client: reqwest::Client,
    url: String,
    seed: u64,
    opened: Arc<AtomicUsize>,
    (per, interval): (usize, u32),
) -> StreamResult {
    // The same answer either way: through the gateway (chat), or straight
    // from the backend (completions, the baseline).
    let body = if url.ends_with("/chat/completions") {
        json!({"model": "qwen3", "stream": true, "return_token_ids": true, "seed": seed,
            "stream_interval": interval,
            "messages": [{"role": "user", "content": "Paris in spring?"}]})
    } else {
        json!({"model": "qwen3", "stream": true, "seed": seed, "prompt": "Paris in spring?"})
    };
    let resp =
        client.post(url).header("content-type", "application/json").body(body.to_string()).send().await;
    let mut r = StreamResult { seed, arrivals: Vec::new(), tokens: 0, finish: None, errors: 0 };
    // Without ids (the direct path), the chunk's position is its frame.
    let mut chunks = 0usize;
    let Ok(resp) = resp else {
        r.errors += 1;
        opened.fetch_add(1, Ordering::SeqCst);
        return r;
    };
    if !resp.status().is_success() {
        r.errors += 1;
    }
    let mut body = resp.bytes_stream();
    let mut buf = Vec::new();
    let mut first = true;
    while let Some(Ok(bytes)) = body.next().await {
        let t = now_ns();
        buf.extend_from_slice(&bytes);
        while let Some(end) = buf.windows(2).position(|w| w == b"\n\n") {
            let frame: Vec<u8> = buf.drain(..end + 2).collect();
            let data = String::from_utf8_lossy(&frame);
            let data = data.trim().trim_start_matches("data: ");
            if data == "[DONE]" {
                continue;
            }
            let v: Value = serde_json::from_str(data).unwrap_or(json!({"error": "unreadable frame"}));
            if v.get("error").is_some() {
                r.errors += 1;
                continue;
            }
            let c = &v["choices"][0];
            if c["delta"]["role"].is_string() {
                if std::mem::take(&mut first) {
                    opened.fetch_add(1, Ordering::SeqCst);
                }
                continue;
            }
            let ids = c["token_ids"].as_array().map_or(0, Vec::len);
            r.tokens += ids;
            if let Some(f) = c["finish_reason"].as_str() {
                r.finish = Some(f.to_string());
            }
            // The backend frame that carried this chunk's last token.
            let frame = if ids > 0 { (r.tokens - 1) / per.max(1) } else { chunks };
            chunks += 1;
            r.arrivals.push((frame as u32, t));
        }
    }
    if first {
        opened.fetch_add(1, Ordering::SeqCst);
    }
    r
}

/// `SIFT_LOAD_BEFORE_VIA` / `SIFT_LOAD_AFTER_VIA`: a shell command run with
/// the gateway's pid as `$1` around the gateway phase (e.g. under
/// valgrind: `callgrind_control -z $1`, then `-d $1`, so the profile holds
/// that phase alone: instructions and allocations per chunk).
fn hook(var: &str, pid: u32) {
    if let Ok(cmd) = std::env::var(var) {
        let ok = Command::new("sh").args(["-c", &cmd, "hook", &pid.to_string()]).status();
        assert!(ok.is_ok_and(|s| s.success()), "{var}: `{cmd}` failed");
    }
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (sift, replay_bin) = (&args[1], &args[2]);
    let n: usize = args.get(3).map_or(256, |s| s.parse().expect("N"));
    // The backend's pace per token, milliseconds (50 tokens/s by default).
    let pace = args.get(4).cloned().unwrap_or_else(|| "50".into());
    // Arrivals are spread over this many milliseconds (all streams are
    // still open at once: a stream lasts its tokens × pace).
    let ramp: u64 = args.get(5).map_or(1000, |s| s.parse().expect("ramp ms"));
    // Token ids per backend frame (vLLM's `stream_interval`; 1 by default).
    let per = args.get(6).cloned().unwrap_or_else(|| "1".into());
    // The requests' `stream_interval` (the gateway's; 1 by default).
    let interval: u32 = args.get(7).map_or(1, |s| s.parse().expect("stream_interval"));
    let shape = (per.parse::<usize>().expect("tokens per frame"), interval);
    let replay = spawn(
        replay_bin,
        &["--port", "0", "--recording", "qwen3", "--pace-ms", &pace, "--stamps", "--chunk-tokens", &per],
    );
    let load_before = loadavg();
    let tok = llmsift_tokenizers::named_tokenizer_path("qwen3").unwrap();
    let cfg = tok.with_file_name("tokenizer_config.json");
    let gw = spawn(
        sift,
        &[
            "serve",
            "--port",
            "0",
            "--backend-url",
            &format!("http://{}", replay.1),
            "--backend",
            "completions",
            "--backend-model",
            "qwen3",
            "--served-model-name",
            "qwen3",
            "--tokenizer",
            tok.to_str().unwrap(),
            "--chat-template",
            cfg.to_str().unwrap(),
            "--reasoning-parser",
            "qwen3",
            "--tool-call-parser",
            "hermes",
            "--max-num-seqs",
            "4096",
            "--stamps",
        ],
    );
    let url = format!("http://{}/v1/chat/completions", gw.1);
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(n)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    // Warm up (one stream), then forget its stamps.
    one(client.clone(), url.clone(), u64::MAX, Arc::default(), shape).await;
    let _ = reqwest::get(format!("http://{}/replay/stamps", replay.1)).await;
    let _ = reqwest::get(format!("http://{}/debug/stamps", gw.1)).await;
    let idle = rss_kib(gw.0.id());

    let direct =
        phase(&client, &format!("http://{}/v1/completions", replay.1), &replay.1, n, ramp, None, shape).await;
    hook("SIFT_LOAD_BEFORE_VIA", gw.0.id());
    let cpu_before = cpu_s(gw.0.id());
    let via = phase(&client, &url, &replay.1, n, ramp, Some((gw.0.id(), &gw.1)), shape).await;
    let cpu = cpu_s(gw.0.id()) - cpu_before;
    hook("SIFT_LOAD_AFTER_VIA", gw.0.id());
    println!(
        "streams: {n}, tokens per stream: {}, backend pace: {pace} ms/frame, {per} token(s) per frame, stream_interval {interval}, arrivals over {ramp} ms",
        via.tokens
    );
    println!("load average before: {load_before}, after: {}", loadavg());
    for (name, p) in
        [("backend -> client directly (baseline)", &direct), ("backend -> sift serve -> client", &via)]
    {
        println!(
            "{name}: wall {:.2} s, errors {}, streams with lost output {}, {} chunks ({} with gateway stamps)",
            p.wall,
            p.errors,
            p.lost,
            p.e2e.len(),
            p.added.len()
        );
    }
    println!("per chunk, ms                                           p50      p90      p99      max");
    let row = |name: &str, v: &[f64]| {
        println!(
            "{name:<52} {:>8.3} {:>8.3} {:>8.3} {:>8.3}",
            pct(v, 0.5),
            pct(v, 0.9),
            pct(v, 0.99),
            v.last().copied().unwrap_or(0.0)
        )
    };
    row("direct: backend sent -> client read", &direct.e2e);
    row("gateway: backend sent -> client read", &via.e2e);
    row("  backend sent -> gateway received", &via.hop_in);
    row("  gateway received -> handed over (its own work)", &via.own);
    row("  handed over -> client read", &via.hop_out);
    row("added: backend sent -> gateway handed over", &via.added);
    println!(
        "gateway CPU: {:.3} s for {} chunks = {:.1} µs per chunk (request handling, prompt rendering and tokenizing included; {:.0} µs per stream)",
        cpu,
        via.e2e.len(),
        cpu * 1e6 / via.e2e.len() as f64,
        cpu * 1e6 / n as f64,
    );
    println!(
        "gateway CPU per token: {:.1} µs ({} tokens)",
        cpu * 1e6 / (via.tokens * n) as f64,
        via.tokens * n
    );
    println!(
        "gateway RSS: idle {} KiB, {n} streams open {} KiB: {:.1} KiB per open stream",
        idle,
        via.peak,
        (via.peak as f64 - idle as f64) / n as f64
    );
}

struct Phase {
    wall: f64,
    tokens: usize,
    errors: usize,
    lost: usize,
    /// Per chunk, sorted, in ms: backend sent → client read.
    e2e: Vec<f64>,
    /// Through the gateway (from its stamps): sent → received, received →
    /// handed over, handed over → client read, sent → handed over.
    hop_in: Vec<f64>,
    own: Vec<f64>,
    hop_out: Vec<f64>,
    added: Vec<f64>,
    peak: u64,
}

/// `GET url` as JSON.
async fn get_json<T: serde::de::DeserializeOwned>(url: String) -> T {
    let text = reqwest::get(url).await.unwrap().text().await.unwrap();
    serde_json::from_str(&text).unwrap()
}

/// N streams with arrivals spread over `ramp` ms; latencies from the
/// replay's stamps, and the gateway's when it is in the path (`gw`: its pid
/// and address).
async fn phase(
    client: &reqwest::Client,
    url: &str,
    replay: &str,
    n: usize,
    ramp: u64,
    gw: Option<(u32, &str)>,
    shape: (usize, u32),
) -> Phase {
    let pid = gw.map(|g| g.0);
    let opened = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = (0..n as u64)
        .map(|i| {
            let (client, url, opened) = (client.clone(), url.to_string(), opened.clone());
            let delay = Duration::from_micros(ramp * 1000 * i / n as u64);
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                one(client, url, i, opened, shape).await
            })
        })
        .collect();
    while opened.load(Ordering::SeqCst) < n && pid.is_some() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let peak = pid.map_or(0, rss_kib);
    let mut results = Vec::new();
    for t in tasks {
        results.push(t.await.unwrap());
    }
    let wall = started.elapsed().as_secs_f64();
    let stamps: Vec<(u64, u32, u128)> = get_json(format!("http://{replay}/replay/stamps")).await;
    let sent: HashMap<(u64, u32), u128> = stamps.into_iter().map(|(s, k, t)| ((s, k), t)).collect();
    let relayed: Vec<(u64, u32, u128, u128)> = match gw {
        Some((_, addr)) => get_json(format!("http://{addr}/debug/stamps")).await,
        None => Vec::new(),
    };
    let relayed: HashMap<(u64, u32), (u128, u128)> =
        relayed.into_iter().map(|(s, k, a, b)| ((s, k), (a, b))).collect();
    let ms = |from: u128, to: u128| (to as f64 - from as f64) / 1e6;
    let tokens = results.iter().map(|r| r.tokens).max().unwrap_or(0);
    let (mut lost, mut errors) = (0usize, 0usize);
    let (mut e2e, mut hop_in, mut own, mut hop_out, mut added) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    // `SIFT_LOAD_CHUNKS=FILE`: every chunk through the gateway, one line
    // each (seed, chunk, then sent, received, handed over, read in Unix ns),
    // to see what a slow chunk's neighbours were doing.
    let mut rows = String::new();
    for r in &results {
        errors += r.errors;
        if r.tokens != tokens || tokens == 0 || r.finish.as_deref() != Some("stop") {
            lost += 1;
        }
        for &(k, read) in &r.arrivals {
            let key = (r.seed, k);
            let Some(&s) = sent.get(&key) else { continue };
            e2e.push(ms(s, read));
            if let Some(&(received, handed)) = relayed.get(&key) {
                hop_in.push(ms(s, received));
                own.push(ms(received, handed));
                hop_out.push(ms(handed, read));
                added.push(ms(s, handed));
                rows.push_str(&format!("{}\t{k}\t{s}\t{received}\t{handed}\t{read}\n", r.seed));
            }
        }
    }
    if let (Ok(path), false) = (std::env::var("SIFT_LOAD_CHUNKS"), rows.is_empty()) {
        std::fs::write(&path, rows).expect("SIFT_LOAD_CHUNKS: writing the file");
    }
    for v in [&mut e2e, &mut hop_in, &mut own, &mut hop_out, &mut added] {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    }
    Phase { wall, tokens, errors, lost, e2e, hop_in, own, hop_out, added, peak }
}
