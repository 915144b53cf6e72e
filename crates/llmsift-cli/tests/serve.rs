//! End-to-end tests of `sift serve`: the gateway and the replay backend run
//! as separate processes on 127.0.0.1 (free ports, killed on drop), driven
//! by a real HTTP client.
//!
//! `tests/serve/cases.toml` lists single requests; what the client got
//! (status, content type, `Retry-After`, body bytes) must equal
//! `tests/serve/expected/NAME.txt` once ids and timestamps are masked
//! (`SIFT_BLESS=1` rewrites them). The other tests need their own processes:
//! a client that disconnects, the concurrency limit, graceful shutdown, and
//! the official `openai` Python client streaming with tools.

use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const KEY: &str = "test-key";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tokenizer_dir() -> PathBuf {
    llmsift_tokenizers_dir().join("qwen3")
}

fn llmsift_tokenizers_dir() -> PathBuf {
    match std::env::var_os("SIFT_ASSETS") {
        Some(d) if !d.is_empty() => PathBuf::from(d).join("tokenizers"),
        _ => root().join(".assets/tokenizers"),
    }
}

/// A child process, killed when dropped.
mod proc;
use proc::{start, Proc};

/// Starts a binary and waits (bounded) for its `listening on http://ADDR` line.
fn spawn(bin: &str, args: &[String]) -> Proc {
    spawn_with(bin, args, &[])
}

/// `spawn` with environment variables set (`None`: removed).
fn spawn_with(bin: &str, args: &[String], env: &[(&str, Option<&str>)]) -> Proc {
    let mut cmd = Command::new(bin);
    for (k, v) in env {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    cmd.args(args);
    start(cmd, Duration::from_secs(120))
}

fn replay(extra: &[&str]) -> Proc {
    let mut args = vec!["--port".to_string(), "0".into()];
    args.extend(extra.iter().map(|s| s.to_string()));
    spawn(env!("CARGO_BIN_EXE_sift-replay"), &args)
}

/// A served model in front of the replay backend.
fn model(name: &str, kind: &str, url: &str, backend_model: &str) -> String {
    let dir = tokenizer_dir();
    format!(
        "[[models]]\nserved_model_name = {name:?}\nbackend = {kind:?}\nbackend_url = {url:?}\nbackend_model = {backend_model:?}\n\
         tokenizer = {:?}\nchat_template = {:?}\nreasoning_parser = \"qwen3\"\ntool_call_parser = \"hermes\"\n\
         enable_auto_tool_choice = true\n\n",
        dir.join("tokenizer.json").display().to_string(),
        dir.join("tokenizer_config.json").display().to_string(),
    )
}

fn gateway(config: &str, args: &[&str]) -> (Proc, tempfile::TempPath) {
    let file = tempfile::Builder::new().suffix(".toml").tempfile().expect("temp file");
    std::fs::write(file.path(), config).expect("writing the config");
    let path = file.into_temp_path();
    let mut a =
        vec!["serve".to_string(), "--config".into(), path.display().to_string(), "--port".into(), "0".into()];
    a.extend(args.iter().map(|s| s.to_string()));
    (spawn(env!("CARGO_BIN_EXE_sift"), &a), path)
}

fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder().timeout(Duration::from_secs(60)).build().expect("client")
}

fn post(
    addr: &str,
    path: &str,
    body: impl Into<reqwest::blocking::Body>,
    auth: bool,
) -> reqwest::blocking::Response {
    let mut rb =
        client().post(format!("http://{addr}{path}")).header("content-type", "application/json").body(body);
    if auth {
        rb = rb.bearer_auth(KEY);
    }
    rb.send().expect("the gateway answers")
}

/// What a client received, as the expected files spell it.
fn transcript(r: reqwest::blocking::Response) -> String {
    let mut head = format!("HTTP {}\n", r.status().as_u16());
    for h in ["content-type", "retry-after"] {
        if let Some(v) = r.headers().get(h) {
            head.push_str(&format!("{h}: {}\n", v.to_str().unwrap_or("?")));
        }
    }
    let body = r.text().expect("the body");
    format!("{head}\n{}", mask(&body))
}

/// Masks what differs from run to run: ids (long hex runs), timestamps, ports.
fn mask(s: &str) -> String {
    let hex = regex::Regex::new(r"[0-9a-f]{16,}").expect("regex");
    let time = regex::Regex::new(r#""(created|created_at)":\d+"#).expect("regex");
    let port = regex::Regex::new(r"127\.0\.0\.1:\d{2,}").expect("regex");
    let s = hex.replace_all(s, "ID");
    let s = port.replace_all(&s, "127.0.0.1:PORT");
    time.replace_all(&s, "\"$1\":0").into_owned()
}

fn check(name: &str, got: &str) {
    let path = root().join("crates/llmsift-cli/tests/serve/expected").join(format!("{name}.txt"));
    if std::env::var_os("SIFT_BLESS").is_some() {
        std::fs::write(&path, got).expect("blessing");
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(got, want, "case {name}: the client's bytes differ from {}", path.display());
}

/// The shared setup of the case table: one replay backend, one gateway.
fn shared() -> (Proc, Proc, tempfile::TempPath) {
    let backend = replay(&[]);
    let url = format!("http://{}", backend.addr);
    let mut config = format!(
        "api_key = {KEY:?}\nallowed_origins = [\"https://app.example\"]\n[limits]\nmax_body_bytes = 65536\nread_timeout_ms = 1500\nconnect_timeout_ms = 2000\n\n"
    );
    for (name, kind, bm) in [
        ("qwen3", "completions", "qwen3"),
        ("qwen3-llamacpp", "llamacpp", "qwen3"),
        ("qwen3-chat", "chat", "qwen3"),
        ("split", "completions", "qwen3@split-utf8"),
        ("status500", "completions", "qwen3@status500"),
        ("drop", "completions", "qwen3@drop:8,pace:2"),
        ("stall", "completions", "qwen3@stall:5"),
        ("garbage", "completions", "qwen3@garbage:8,pace:2"),
    ] {
        config.push_str(&model(name, kind, &url, bm));
    }
    config.push_str(&model("unreachable", "completions", "http://127.0.0.1:1", "qwen3"));
    let (gw, path) = gateway(&config, &[]);
    (backend, gw, path)
}

#[test]
fn cases() {
    let (_backend, gw, _config) = shared();
    let text =
        std::fs::read_to_string(root().join("crates/llmsift-cli/tests/serve/cases.toml")).expect("cases");
    let table: Value = toml::from_str(&text).expect("cases.toml");
    let cases = table["case"].as_array().expect("[[case]]");
    assert!(cases.len() >= 20);
    for case in cases {
        let name = case["name"].as_str().expect("name");
        let path = case.get("path").and_then(Value::as_str).unwrap_or("/v1/chat/completions");
        let auth = case.get("auth").and_then(Value::as_bool).unwrap_or(true);
        let body = match case.get("body_bytes").and_then(Value::as_u64) {
            Some(n) => {
                format!("{{\"model\": \"qwen3\", \"messages\": [], \"pad\": \"{}\"}}", "x".repeat(n as usize))
            }
            None => case["body"].as_str().expect("body").to_string(),
        };
        check(name, &transcript(post(&gw.addr, path, body, auth)));
    }
}

#[test]
fn health_models_metrics() {
    let (_backend, gw, _config) = shared();
    let c = client();
    assert_eq!(c.get(format!("http://{}/health", gw.addr)).send().unwrap().status(), 200);
    // CORS answers only the allowed origin.
    let cors = |origin: &str| {
        let r = c.get(format!("http://{}/health", gw.addr)).header("origin", origin).send().unwrap();
        r.headers().get("access-control-allow-origin").map(|v| v.to_str().unwrap().to_string())
    };
    assert_eq!(cors("https://app.example").as_deref(), Some("https://app.example"));
    assert_eq!(cors("https://elsewhere.example"), None);
    let r = c.get(format!("http://{}/v1/models", gw.addr)).send().unwrap();
    assert_eq!(r.status(), 401, "/v1/models needs the key");
    let r = c.get(format!("http://{}/v1/models", gw.addr)).bearer_auth(KEY).send().unwrap();
    let v: Value = serde_json::from_str(&r.text().unwrap()).unwrap();
    assert_eq!(v["data"][0]["id"], "qwen3");
    let r = post(
        &gw.addr,
        "/v1/chat/completions",
        r#"{"model": "qwen3", "messages": [{"role": "user", "content": "x"}]}"#,
        true,
    );
    assert_eq!(r.status(), 200);
    let m = c.get(format!("http://{}/metrics", gw.addr)).send().unwrap().text().unwrap();
    for want in [
        "sift_requests_total{route=\"/v1/chat/completions\",status=\"200\"} 1",
        "sift_requests_total{route=\"/v1/models\",status=\"401\"} 1",
        "sift_open_streams 0",
        "sift_backend_first_token_seconds_count 1",
        "sift_output_bytes_total{field=\"content\"}",
        "sift_errors_total{kind=\"unauthorized\"} 1",
        "sift_parse_delta_seconds_count",
        "sift_relay_seconds_count",
    ] {
        assert!(m.contains(want), "metrics lack {want:?}:\n{m}");
    }
}

fn stats(backend: &Proc) -> Value {
    let r = reqwest::blocking::get(format!("http://{}/replay/stats", backend.addr)).unwrap();
    serde_json::from_str(&r.text().unwrap()).unwrap()
}

fn slow_gateway(args: &[&str]) -> (Proc, Proc, tempfile::TempPath) {
    let backend = replay(&[]);
    let config = model("slow", "completions", &format!("http://{}", backend.addr), "qwen3@pace:40");
    let (gw, path) = gateway(&config, args);
    (backend, gw, path)
}

const SLOW: &str =
    r#"{"model": "slow", "stream": true, "messages": [{"role": "user", "content": "Paris in spring?"}]}"#;

#[test]
fn a_client_that_disconnects_cancels_the_backend_request() {
    let (backend, gw, _config) = slow_gateway(&[]);
    let mut r = post(&gw.addr, "/v1/chat/completions", SLOW, false);
    let mut first = [0u8; 64];
    r.read_exact(&mut first).expect("the stream starts");
    drop(r);
    let deadline = Instant::now() + Duration::from_secs(10);
    while stats(&backend)["cancelled"] != 1 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let s = stats(&backend);
    assert_eq!(
        (s["started"].as_u64(), s["cancelled"].as_u64(), s["completed"].as_u64()),
        (Some(1), Some(1), Some(0))
    );
}

#[test]
fn over_the_concurrency_limit_is_503_with_retry_after() {
    let (_backend, gw, _config) = slow_gateway(&["--max-num-seqs", "1"]);
    let mut open = post(&gw.addr, "/v1/chat/completions", SLOW, false);
    let mut first = [0u8; 16];
    open.read_exact(&mut first).expect("the first stream starts");
    check("fault-concurrency-limit", &transcript(post(&gw.addr, "/v1/chat/completions", SLOW, false)));
    let mut rest = String::new();
    open.read_to_string(&mut rest).expect("the first stream finishes");
    assert!(rest.ends_with("data: [DONE]\n\n"), "{rest}");
}

#[test]
fn graceful_shutdown_lets_open_streams_finish() {
    let (_backend, gw, _config) = slow_gateway(&[]);
    let mut r = post(&gw.addr, "/v1/chat/completions", SLOW, false);
    let mut first = [0u8; 16];
    r.read_exact(&mut first).expect("the stream starts");
    let pid = gw.child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().expect("kill").success());
    let mut rest = String::new();
    r.read_to_string(&mut rest).expect("the open stream is let finish");
    assert!(rest.contains("\"finish_reason\":\"stop\"") && rest.ends_with("data: [DONE]\n\n"), "{rest}");
    let refused = client().post(format!("http://{}/v1/chat/completions", gw.addr)).body(SLOW).send();
    assert!(refused.is_err(), "new connections are refused after shutdown");
}

#[test]
fn the_openai_python_client_gets_reasoning_content_and_tool_calls() {
    let out = Command::new("bash").arg(root().join("scripts/py-env.sh")).output().expect("py-env.sh");
    assert!(out.status.success(), "py-env.sh: {}", String::from_utf8_lossy(&out.stderr));
    let python = String::from_utf8(out.stdout).unwrap().lines().last().expect("python path").to_string();
    let backend = replay(&[]);
    let url = format!("http://{}", backend.addr);
    let config = format!("api_key = {KEY:?}\n\n{}", model("qwen3", "completions", &url, "qwen3"));
    let (gw, _config) = gateway(&config, &[]);
    let script = root().join("crates/llmsift-cli/tests/serve/openai_client.py");
    let out = Command::new(&python)
        .arg(script)
        .env("SIFT_BASE_URL", format!("http://{}/v1", gw.addr))
        .env("SIFT_API_KEY", KEY)
        .output()
        .expect("running the client");
    assert!(out.status.success(), "client failed: {}", String::from_utf8_lossy(&out.stderr));
    let got: Value = serde_json::from_slice(&out.stdout).expect("the client prints JSON");
    let want = serde_json::json!({
        "stream": {
            "reasoning": "\nThe user wants the weather in Paris. I have a get_weather tool, so I will call it with the city and celsius.\n",
            "content": "\n\n",
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}],
            "finish_reason": "tool_calls",
        },
        "oneshot": {
            "reasoning": "\nA short factual answer is enough: Paris in spring is mild.\n",
            "content": "\n\nParis in spring is mild: about 15 °C by day, with showers ☔ now and then.",
            "tool_calls": [],
            "finish_reason": "stop",
        },
    });
    assert_eq!(got, want);

    // Every endpoint's answer, streamed and not, against the SDKs' own types.
    let out = Command::new(&python)
        .arg(root().join("crates/llmsift-cli/tests/serve/sdk_types.py"))
        .env("SIFT_BASE_URL", format!("http://{}", gw.addr))
        .env("SIFT_API_KEY", KEY)
        .output()
        .expect("running sdk_types.py");
    let report = String::from_utf8_lossy(&out.stdout);
    let mut lines = 0;
    for line in report.lines() {
        lines += 1;
        let (ok, name) = match line.strip_prefix("ok ") {
            Some(n) => (true, n),
            None => (false, line.strip_prefix("FAILED ").and_then(|l| l.split(':').next()).unwrap_or(line)),
        };
        assert!(ok, "{name}: {line}");
    }
    assert_eq!(lines, 14, "{report}\n{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_model_whose_markers_are_missing_from_its_vocabulary_refuses_to_start() {
    // DeepSeek-V3's vocabulary has no `</think>` token; the deepseek_r1 reasoning parser needs one.
    let dir = llmsift_tokenizers_dir().join("deepseek_v3");
    let out = Command::new(env!("CARGO_BIN_EXE_sift"))
        .args([
            "serve",
            "--port",
            "0",
            "--backend-url",
            "http://127.0.0.1:1",
            "--reasoning-parser",
            "deepseek_r1",
        ])
        .arg("--tokenizer")
        .arg(dir.join("tokenizer.json"))
        .arg("--chat-template")
        .arg(dir.join("tokenizer_config.json"))
        .stdin(Stdio::null())
        .output()
        .expect("sift serve");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(r#"marker "</think>" is not a single token of the vocabulary"#), "{err}");
}

#[test]
fn serve_help_names_each_vllm_counterpart() {
    let out = Command::new(env!("CARGO_BIN_EXE_sift"))
        .args(["serve", "--help"])
        // A fixed width and no terminal, so clap's layout is the same everywhere.
        .env("COLUMNS", "100")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("sift serve --help");
    let help = String::from_utf8(out.stdout).expect("UTF-8");
    for (flag, vllm) in [
        ("--reasoning-parser", "--reasoning-parser"),
        ("--tool-call-parser", "--tool-call-parser"),
        ("--enable-auto-tool-choice", "--enable-auto-tool-choice"),
        ("--host", "--host"),
        ("--port", "--port"),
        ("--api-key", "--api-key"),
        ("--served-model-name", "--served-model-name"),
        ("--chat-template", "--chat-template"),
        ("--allowed-origins", "--allowed-origins"),
        ("--max-num-seqs", "--max-num-seqs"),
        ("--tokenizer", "--tokenizer"),
        ("--config", "--config"),
    ] {
        let line = help
            .lines()
            .position(|l| l.trim_start().starts_with(flag))
            .unwrap_or_else(|| panic!("{flag} missing"));
        // clap wraps help to the terminal's width: compare with white space collapsed.
        let text =
            help.lines().skip(line).take(6).flat_map(str::split_whitespace).collect::<Vec<_>>().join(" ");
        assert!(text.contains(&format!("[vLLM: {vllm}]")), "{flag}: {text}");
    }
    // Every flag (and the positional model directory) says what it is in
    // vLLM, or that it is Sift's own.
    // An option's own line is indented six spaces; wrapped help text, more.
    let flags = help.lines().filter(|l| l.starts_with("      --") && !l.starts_with("       ")).count();
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    let tagged = flat.matches("[vLLM: ").count() + flat.matches("[Sift only]").count();
    assert_eq!(flags + 1, tagged, "{help}");
}

/// A call cut by `max_tokens` (issue 23), through the replay backend: the
/// default model sends it as far as it was written (arguments an incomplete
/// JSON text, never completed) with `finish_reason: "length"`; a model with
/// `atomic_calls = true` in its config, and a request with `"atomic_calls":
/// true` to the default model, send no call and the call's text as
/// content; streamed and one-shot answers agree.
#[test]
fn atomic_calls_per_model_and_per_request() {
    let backend = replay(&[]);
    let url = format!("http://{}", backend.addr);
    let mut config = format!("api_key = {KEY:?}\n\n");
    config.push_str(&model("qwen3", "completions", &url, "qwen3"));
    config.push_str(&model("qwen3-atomic", "completions", &url, "qwen3").replace(
        "enable_auto_tool_choice = true\n",
        "enable_auto_tool_choice = true\natomic_calls = true\n",
    ));
    let (gw, _config) = gateway(&config, &[]);
    let body = |model: &str, max_tokens: u64, stream: bool, atomic: Option<bool>| {
        let mut b = serde_json::json!({"model": model, "max_tokens": max_tokens, "stream": stream,
            "messages": [{"role": "user", "content": "Weather in Paris?"}],
            "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
                "properties": {"city": {"type": "string"}, "unit": {"type": "string"}}}}}]});
        if let Some(a) = atomic {
            b["atomic_calls"] = serde_json::json!(a);
        }
        b.to_string()
    };
    let one_shot = |model: &str, n: u64, atomic: Option<bool>| -> Value {
        let r = post(&gw.addr, "/v1/chat/completions", body(model, n, false, atomic), true);
        assert_eq!(r.status().as_u16(), 200);
        serde_json::from_str::<Value>(&r.text().expect("the body")).expect("JSON")["choices"][0].clone()
    };
    // The first max_tokens that cuts the recording inside the city's value.
    let whole = "{\"city\": \"Paris\", \"unit\": \"celsius\"}";
    let (n, choice) = (20..120)
        .map(|n| (n, one_shot("qwen3", n, None)))
        .find(|(_, c)| {
            c["message"]["tool_calls"][0]["function"]["arguments"]
                .as_str()
                .is_some_and(|a| a.starts_with("{\"city\": \"Par") && a.len() < whole.len())
        })
        .expect("a max_tokens that cuts the call inside its arguments");
    let args = choice["message"]["tool_calls"][0]["function"]["arguments"].as_str().unwrap();
    assert!(whole.starts_with(args) && serde_json::from_str::<Value>(args).is_err(), "{args:?} completed");
    assert_eq!(choice["finish_reason"], "length");
    // The same cut, atomic: per model, and per request on the default model.
    for (model, atomic) in [("qwen3-atomic", None), ("qwen3", Some(true))] {
        let c = one_shot(model, n, atomic);
        assert!(c["message"]["tool_calls"].as_array().is_none_or(Vec::is_empty), "{model}: {c}");
        let content = c["message"]["content"].as_str().unwrap_or_default();
        assert!(
            content.contains("<tool_call>") && content.ends_with(args.trim_start_matches('{')),
            "{content:?}"
        );
        // A stream sends no call fragment and folds to the same content.
        let r = post(&gw.addr, "/v1/chat/completions", body(model, n, true, atomic), true);
        let sse = r.text().expect("the stream");
        assert!(!sse.contains("\"tool_calls\":[{"), "{model}: a call fragment was streamed:\n{sse}");
        let folded: String = sse
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter(|l| *l != "[DONE]")
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| v["choices"][0]["delta"]["content"].as_str().map(str::to_string))
            .collect();
        assert_eq!(folded, content, "{model}: the folded stream differs from one-shot");
    }
    // The request's own `false` wins over the model's `true`.
    let c = one_shot("qwen3-atomic", n, Some(false));
    assert_eq!(c["message"]["tool_calls"][0]["function"]["arguments"], args);
}

/// The gateway runs with one malloc arena (glibc's per-thread arenas kept
/// ~36 KiB resident per open stream; docs/benchmarks.md): it restarts itself
/// with `MALLOC_ARENA_MAX=1`, the same pid, unless the variable is set.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn the_gateway_runs_with_one_malloc_arena_unless_told_otherwise() {
    let arenas = |p: &Proc| {
        let env = std::fs::read(format!("/proc/{}/environ", p.child.id())).unwrap();
        env.split(|&b| b == 0).find_map(|kv| {
            kv.strip_prefix(b"MALLOC_ARENA_MAX=").map(|v| String::from_utf8_lossy(v).into_owned())
        })
    };
    let args = ["serve", "--demo", "--port", "0"].map(String::from);
    let bin = env!("CARGO_BIN_EXE_sift");
    let p = spawn_with(bin, &args, &[("MALLOC_ARENA_MAX", None)]);
    assert_eq!(arenas(&p).as_deref(), Some("1"));
    // Still serving after the restart, on the address it printed.
    let r = client().get(format!("http://{}/health", p.addr)).send().unwrap();
    assert!(r.status().is_success());
    let p = spawn_with(bin, &args, &[("MALLOC_ARENA_MAX", Some("3"))]);
    assert_eq!(arenas(&p).as_deref(), Some("3"));
}
