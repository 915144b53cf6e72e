//! The bounded load test of `sift serve` (see `docs/serve.md`): N concurrent
//! streaming requests through the gateway to the replay backend, both real
//! processes on 127.0.0.1.
//!
//! Measures, per backend frame, the latency the gateway adds: the replay's
//! send time (`--stamps`, keyed by the request's `seed`) to the time the
//! client read the matching chunk (`return_token_ids: true` makes every
//! backend token a client chunk, so chunk i is frame i); the gateway's
//! resident memory with every stream open; and that nothing was lost (each
//! stream's token ids and finish reason, no error frame).
//!
//! ```sh
//! cargo build --release -p sift-cli
//! cargo run --release -p sift-serve --example load -- target/release/sift target/release/sift-replay 256 50 1000
//! ```

use futures_util::StreamExt;
use serde_json::{json, Value};
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

/// User + system CPU time of a process, in seconds (clock ticks of 10 ms).
fn cpu_s(pid: u32) -> f64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = s.rsplit(')').next().unwrap_or_default();
    let f: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

fn now_ns() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos()
}

struct StreamResult {
    seed: u64,
    arrivals: Vec<u128>,
    tokens: usize,
    finish: Option<String>,
    errors: usize,
}

/// `opened` counts streams that got their first chunk (never blocks the reader).
async fn one(client: reqwest::Client, url: String, seed: u64, opened: Arc<AtomicUsize>) -> StreamResult {
    // The same answer either way: through the gateway (chat), or straight
    // from the backend (completions, the baseline).
    let body = if url.ends_with("/chat/completions") {
        json!({"model": "qwen3", "stream": true, "return_token_ids": true, "seed": seed,
            "messages": [{"role": "user", "content": "Paris in spring?"}]})
    } else {
        json!({"model": "qwen3", "stream": true, "seed": seed, "prompt": "Paris in spring?"})
    };
    let resp =
        client.post(url).header("content-type", "application/json").body(body.to_string()).send().await;
    let mut r = StreamResult { seed, arrivals: Vec::new(), tokens: 0, finish: None, errors: 0 };
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
            r.tokens += c["token_ids"].as_array().map_or(0, Vec::len);
            if let Some(f) = c["finish_reason"].as_str() {
                r.finish = Some(f.to_string());
            }
            r.arrivals.push(t);
        }
    }
    if first {
        opened.fetch_add(1, Ordering::SeqCst);
    }
    r
}

fn pct(sorted: &[f64], p: f64) -> f64 {
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
    let replay = spawn(replay_bin, &["--port", "0", "--recording", "qwen3", "--pace-ms", &pace, "--stamps"]);
    let tok = sift_tokenizers::named_tokenizer_path("qwen3").unwrap();
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
        ],
    );
    let url = format!("http://{}/v1/chat/completions", gw.1);
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(n)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    // Warm up (one stream), then forget its stamps.
    one(client.clone(), url.clone(), u64::MAX, Arc::default()).await;
    let _ = reqwest::get(format!("http://{}/replay/stamps", replay.1)).await;
    let idle = rss_kib(gw.0.id());

    let direct =
        phase(&client, &format!("http://{}/v1/completions", replay.1), &replay.1, n, ramp, None).await;
    let cpu_before = cpu_s(gw.0.id());
    let via = phase(&client, &url, &replay.1, n, ramp, Some(gw.0.id())).await;
    let cpu = cpu_s(gw.0.id()) - cpu_before;
    println!(
        "streams: {n}, tokens per stream: {}, backend pace: {pace} ms/token, arrivals over {ramp} ms",
        via.tokens
    );
    for (name, p) in
        [("backend -> client directly (baseline)", &direct), ("backend -> sift serve -> client", &via)]
    {
        println!(
            "{name}: wall {:.2} s, errors {}, streams with lost output {}, {} chunks: p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
            p.wall, p.errors, p.lost, p.lat.len(), pct(&p.lat, 0.5), pct(&p.lat, 0.9), pct(&p.lat, 0.99), p.lat.last().copied().unwrap_or(0.0)
        );
    }
    println!(
        "added by the gateway (difference of the two): p50 {:.3} ms, p99 {:.3} ms",
        pct(&via.lat, 0.5) - pct(&direct.lat, 0.5),
        pct(&via.lat, 0.99) - pct(&direct.lat, 0.99)
    );
    println!(
        "gateway CPU: {:.2} s for {} chunks = {:.1} µs per chunk (request handling, prompt rendering and tokenizing included)",
        cpu,
        via.lat.len(),
        cpu * 1e6 / via.lat.len() as f64
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
    lat: Vec<f64>,
    peak: u64,
}

/// N streams with arrivals spread over `ramp` ms; latencies from the replay's stamps.
async fn phase(
    client: &reqwest::Client,
    url: &str,
    replay: &str,
    n: usize,
    ramp: u64,
    pid: Option<u32>,
) -> Phase {
    let opened = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = (0..n as u64)
        .map(|i| {
            let (client, url, opened) = (client.clone(), url.to_string(), opened.clone());
            let delay = Duration::from_micros(ramp * 1000 * i / n as u64);
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                one(client, url, i, opened).await
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
    let stamps = reqwest::get(format!("http://{replay}/replay/stamps")).await.unwrap().text().await.unwrap();
    let stamps: Vec<(u64, u32, u128)> = serde_json::from_str(&stamps).unwrap();
    let mut sent = std::collections::HashMap::new();
    for (seed, k, t) in stamps {
        sent.insert((seed, k), t);
    }
    let tokens = results.iter().map(|r| r.tokens).max().unwrap_or(0);
    let (mut lat, mut lost, mut errors) = (Vec::new(), 0usize, 0usize);
    for r in &results {
        errors += r.errors;
        if r.tokens != tokens || tokens == 0 || r.finish.as_deref() != Some("stop") {
            lost += 1;
        }
        for (k, t) in r.arrivals.iter().enumerate() {
            if let Some(s) = sent.get(&(r.seed, k as u32)) {
                lat.push((*t as f64 - *s as f64) / 1e6);
            }
        }
    }
    lat.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Phase { wall, tokens, errors, lost, lat, peak }
}
