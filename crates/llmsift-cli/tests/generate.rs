//! The `generate` backend end to end: `sift serve` as the whole
//! OpenAI-compatible frontend over a vLLM 0.34 token-in/token-out worker
//! (`POST /inference/v1/generate`), played by `sift-replay`; every part a
//! real process on 127.0.0.1.
//!
//! - what the worker gets is what `/v1/chat/completions/render` answers for
//!   the same request (token ids, `sampling_params` with the decoding
//!   constraint, `reasoning_ended`), always streamed;
//! - the answer in all three dialects, with and without tools, is byte for
//!   byte (ids and timestamps masked) the answer of the same gateway over
//!   the same recording through the `completions` backend, which the other
//!   tests pin down, and each stream folds to its one-shot answer (ids,
//!   which differ per request, masked); usage and logprobs as through
//!   `completions`;
//! - every answer validates with the SDKs' own types
//!   (`scripts/sdk-validate.py`, and `tests/serve/sdk_types.py` through the
//!   SDK clients);
//! - the worker's own two shapes (`sift-replay`, whole and streamed) carry
//!   the same ids; a worker failing before or inside the stream is a 502 or
//!   an in-stream error.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

struct Proc(Child, String);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `bin` and reads its `listening on http://ADDR` line.
fn start(bin: &str, args: &[&str]) -> Proc {
    let mut child = Command::new(bin)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{bin}: {e}"));
    let mut lines = BufReader::new(child.stderr.take().expect("piped")).lines();
    let mut said = String::new();
    for line in lines.by_ref().map_while(Result::ok) {
        if let Some(a) = line.split("listening on http://").nth(1) {
            let addr = a.split_whitespace().next().unwrap_or_default().to_string();
            std::thread::spawn(move || lines.for_each(drop));
            return Proc(child, addr);
        }
        said.push_str(&line);
        said.push('\n');
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("{bin} did not start: {said}");
}

fn tokenizer_dir() -> PathBuf {
    match std::env::var_os("SIFT_ASSETS") {
        Some(d) if !d.is_empty() => PathBuf::from(d).join("tokenizers/qwen3"),
        _ => Path::new(ROOT).join(".assets/tokenizers/qwen3"),
    }
}

/// A worker (3 ids per frame, so frames carry several tokens), and one
/// gateway serving it as `gen` (generate) and `cmp` (completions), plus
/// two failing workers.
struct Setup {
    backend: Proc,
    gw: Proc,
    _config: tempfile::TempPath,
}

fn setup() -> Setup {
    let backend = start(env!("CARGO_BIN_EXE_sift-replay"), &["--port", "0", "--chunk-tokens", "3"]);
    let dir = tokenizer_dir();
    let mut config = String::new();
    for (name, kind, bm) in [
        ("gen", "generate", "qwen3"),
        ("cmp", "completions", "qwen3"),
        ("gen-500", "generate", "qwen3@status500"),
        ("gen-drop", "generate", "qwen3@drop:4,pace:2"),
    ] {
        config.push_str(&format!(
            "[[models]]\nserved_model_name = {name:?}\nbackend = {kind:?}\nbackend_url = \"http://{}\"\n\
             backend_model = {bm:?}\ntokenizer = {:?}\nchat_template = {:?}\nreasoning_parser = \"qwen3\"\n\
             tool_call_parser = \"hermes\"\nenable_auto_tool_choice = true\n\n",
            backend.1,
            dir.join("tokenizer.json").display().to_string(),
            dir.join("tokenizer_config.json").display().to_string(),
        ));
    }
    let file = tempfile::Builder::new().suffix(".toml").tempfile().expect("temp file");
    std::fs::write(file.path(), config).expect("config");
    let path = file.into_temp_path();
    let p = path.display().to_string();
    let gw = start(env!("CARGO_BIN_EXE_sift"), &["serve", "--config", &p, "--port", "0"]);
    Setup { backend, gw, _config: path }
}

fn post(addr: &str, path: &str, body: &Value) -> (u16, String) {
    let c = reqwest::blocking::Client::builder().timeout(Duration::from_secs(60)).build().unwrap();
    let r = c
        .post(format!("http://{addr}{path}"))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .expect("an answer");
    (r.status().as_u16(), r.text().expect("a body"))
}

impl Setup {
    fn ask(&self, path: &str, body: &Value) -> (u16, String) {
        post(&self.gw.1, path, body)
    }

    /// The bodies the worker received since the last call, with their paths.
    fn sent(&self) -> Vec<Value> {
        let r = reqwest::blocking::get(format!("http://{}/replay/requests", self.backend.1)).unwrap();
        serde_json::from_str(&r.text().unwrap()).unwrap()
    }
}

/// Masks what differs between two answers to one request: ids (long hex
/// runs), timestamps, the served model's name.
fn mask(s: &str, model: &str) -> String {
    let hex = regex::Regex::new(r"[0-9a-f]{16,}").unwrap();
    let time = regex::Regex::new(r#""(created|created_at)":\d+"#).unwrap();
    let s = hex.replace_all(s, "ID");
    let s = time.replace_all(&s, "\"$1\":0");
    s.replace(&format!("\"model\":\"{model}\""), "\"model\":\"M\"")
}

fn tool() -> Value {
    json!({"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
        "required": ["city"]}}})
}

/// One request in a dialect, for `model`.
fn request(api: &str, model: &str, stream: bool, tools: bool) -> (&'static str, Value) {
    let q = "Weather in Paris?";
    let mut b = match api {
        "chat" => json!({"model": model, "messages": [{"role": "user", "content": q}], "max_tokens": 300}),
        "responses" => json!({"model": model, "input": q, "max_output_tokens": 300}),
        _ => json!({"model": model, "max_tokens": 300, "messages": [{"role": "user", "content": q}]}),
    };
    b["stream"] = json!(stream);
    if tools {
        b["tools"] = match api {
            "chat" => json!([tool()]),
            "responses" => json!([{"type": "function", "name": "get_weather",
                "parameters": tool()["function"]["parameters"]}]),
            _ => json!([{"name": "get_weather", "input_schema": tool()["function"]["parameters"]}]),
        };
    }
    if api == "chat" && stream {
        b["stream_options"] = json!({"include_usage": true});
    }
    let path = match api {
        "chat" => "/v1/chat/completions",
        "responses" => "/v1/responses",
        _ => "/v1/messages",
    };
    (path, b)
}

/// The data of each SSE frame.
fn datas(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|f| f.lines().find_map(|l| l.strip_prefix("data: ")))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

/// What an answer says, streamed or not, with ids and times masked:
/// Chat Completions' message parts (call fragments joined), the Responses
/// object (`response.completed`'s), Anthropic's content blocks.
fn fold(api: &str, text: &str) -> Value {
    let masked = |v: &Value| -> Value { serde_json::from_str(&mask(&v.to_string(), "gen")).unwrap() };
    let streamed = text.starts_with("data: ") || text.starts_with("event: ");
    match (api, streamed) {
        ("chat", false) => {
            let v: Value = serde_json::from_str(text).unwrap();
            let m = &v["choices"][0]["message"];
            let calls: Vec<Value> = m["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| json!([c["function"]["name"], c["function"]["arguments"]]))
                .collect();
            json!([m["reasoning"], m["content"], calls, v["choices"][0]["finish_reason"]])
        }
        ("chat", true) => {
            let (mut reasoning, mut content, mut calls, mut finish) =
                (None::<String>, None::<String>, Vec::<(String, String)>::new(), Value::Null);
            for c in datas(text) {
                let Some(ch) = c["choices"].get(0) else { continue };
                let d = &ch["delta"];
                if let Some(r) = d["reasoning"].as_str() {
                    reasoning.get_or_insert_with(String::new).push_str(r);
                }
                if let Some(t) = d["content"].as_str().filter(|t| !t.is_empty()) {
                    content.get_or_insert_with(String::new).push_str(t);
                }
                for t in d["tool_calls"].as_array().into_iter().flatten() {
                    let i = t["index"].as_u64().unwrap() as usize;
                    if i == calls.len() {
                        calls.push((String::new(), String::new()));
                    }
                    calls[i].0.push_str(t["function"]["name"].as_str().unwrap_or(""));
                    calls[i].1.push_str(t["function"]["arguments"].as_str().unwrap_or(""));
                }
                if !ch["finish_reason"].is_null() {
                    finish = ch["finish_reason"].clone();
                }
            }
            let calls: Vec<Value> = calls.into_iter().map(|(n, a)| json!([n, a])).collect();
            json!([reasoning, content, calls, finish])
        }
        ("responses", false) => masked(&serde_json::from_str(text).unwrap()),
        ("responses", true) => {
            let done = datas(text).into_iter().find(|e| e["type"] == "response.completed").unwrap();
            masked(&done["response"])
        }
        (_, false) => {
            let mut blocks = serde_json::from_str::<Value>(text).unwrap()["content"].clone();
            for b in blocks.as_array_mut().unwrap() {
                b.as_object_mut().unwrap().remove("signature");
            }
            masked(&blocks)
        }
        (_, true) => {
            // Blocks as `content_block_start` opens them, their deltas appended.
            let mut blocks: Vec<Value> = Vec::new();
            for e in datas(text) {
                match e["type"].as_str() {
                    Some("content_block_start") => blocks.push(e["content_block"].clone()),
                    Some("content_block_delta") => {
                        let b = blocks.last_mut().unwrap();
                        let d = &e["delta"];
                        for (k, field) in
                            [("text", "text"), ("thinking", "thinking"), ("partial_json", "input")]
                        {
                            if let Some(t) = d[k].as_str() {
                                let old = if field == "input" {
                                    b["_json"].as_str().unwrap_or("").to_string()
                                } else {
                                    b[field].as_str().unwrap_or("").to_string()
                                };
                                let key = if field == "input" { "_json" } else { field };
                                b[key] = json!(old + t);
                            }
                        }
                    }
                    _ => {}
                }
            }
            for b in &mut blocks {
                if let Some(j) = b.as_object_mut().unwrap().remove("_json") {
                    b["input"] = serde_json::from_str(j.as_str().unwrap()).unwrap();
                }
                b.as_object_mut().unwrap().remove("signature");
            }
            masked(&json!(blocks))
        }
    }
}

fn python() -> String {
    let py = Command::new("bash").arg("scripts/py-env.sh").current_dir(ROOT).output().unwrap();
    assert!(py.status.success(), "{}", String::from_utf8_lossy(&py.stderr));
    String::from_utf8(py.stdout).unwrap().lines().last().unwrap().to_string()
}

fn validate(python: &str, manifest: &str, dir: &Path) {
    let m = dir.join("manifest.jsonl");
    std::fs::write(&m, manifest).unwrap();
    let out = Command::new(python)
        .arg("scripts/sdk-validate.py")
        .arg("--manifest")
        .arg(&m)
        .current_dir(ROOT)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}{}", String::from_utf8_lossy(&out.stderr));
    assert!(report.contains(&format!("{} documents, 0 with failures", manifest.lines().count())), "{report}");
}

#[test]
fn three_dialects_streamed_and_not_equal_the_completions_backend() {
    let s = setup();
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let mut manifest = String::new();
    for api in ["chat", "responses", "anthropic"] {
        for tools in [false, true] {
            let mut oneshot = None;
            for stream in [false, true] {
                let case = format!("{api} tools={tools} stream={stream}");
                let (path, body) = request(api, "gen", stream, tools);
                let (status, got) = s.ask(path, &body);
                assert_eq!(status, 200, "{case}: {got}");
                let sent = s.sent();
                assert_eq!(sent.len(), 1, "{case}: one worker request: {sent:?}");
                assert_eq!(sent[0]["path"], "/inference/v1/generate", "{case}");
                let worker = &sent[0]["body"];
                assert_eq!(worker["stream"], true, "{case}: the gateway always streams from the worker");
                assert_eq!(worker["model"], "qwen3", "{case}");
                // The same request through the completions backend.
                let (_, cmp_body) = request(api, "cmp", stream, tools);
                let (status, want) = s.ask(path, &cmp_body);
                assert_eq!(status, 200, "{case}: {want}");
                s.sent();
                if stream {
                    // Chunks may be cut elsewhere (the completions wire ends with a
                    // frame of its own, vLLM's worker on its last ids): the stream
                    // folds to the one-shot answer (`sdk-validate.py`, below).
                    assert!(got.matches("data: ").count() > 3, "{case}: {got}");
                } else {
                    assert_eq!(mask(&got, "gen"), mask(&want, "cmp"), "{case}");
                }
                let called = got.contains("get_weather") && got.contains("Paris");
                assert_eq!(called, tools, "{case}: the recording's tool call is parsed: {got}");
                let file = dir.path().join(format!("{}.txt", manifest.lines().count()));
                std::fs::write(&file, &got).unwrap();
                let job = json!({"name": case, "api": api, "stream": stream, "path": file,
                    "include_usage": api == "chat" && stream});
                if stream {
                    let whole = std::fs::read_to_string(oneshot.as_ref().unwrap()).unwrap();
                    assert_eq!(
                        fold(api, &got),
                        fold(api, &whole),
                        "{case}: the stream folds to the one-shot answer"
                    );
                }
                manifest.push_str(&(job.to_string() + "\n"));
                if !stream {
                    oneshot = Some(file);
                }
            }
        }
    }
    validate(&python, &manifest, dir.path());

    // The SDK clients themselves, every endpoint, streamed and not.
    let out = Command::new(&python)
        .arg(Path::new(ROOT).join("crates/llmsift-cli/tests/serve/sdk_types.py"))
        .env("SIFT_BASE_URL", format!("http://{}", s.gw.1))
        .env("SIFT_API_KEY", "unused")
        .env("SIFT_MODEL", "gen")
        .output()
        .expect("running sdk_types.py");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(report.lines().filter(|l| l.starts_with("ok ")).count(), 14, "{report}");
}

#[test]
fn the_worker_gets_what_the_render_endpoint_answers() {
    let s = setup();
    for (name, patch) in [
        ("plain", json!({})),
        ("sampling", json!({"temperature": 0.3, "top_p": 0.9, "seed": 7, "stop": ["x"]})),
        ("required", json!({"tool_choice": "required"})),
        ("named", json!({"tool_choice": {"type": "function", "function": {"name": "get_weather"}}})),
        (
            "schema",
            json!({"response_format": {"type": "json_schema", "json_schema": {"name": "w",
            "schema": {"type": "object", "properties": {"city": {"type": "string"}}}}}}),
        ),
        ("logprobs", json!({"logprobs": true, "top_logprobs": 2})),
        ("thinking off", json!({"chat_template_kwargs": {"enable_thinking": false}})),
    ] {
        let (_, mut body) = request("chat", "gen", false, true);
        for (k, v) in patch.as_object().unwrap() {
            body[k] = v.clone();
        }
        let (status, rendered) = s.ask("/v1/chat/completions/render", &body);
        assert_eq!(status, 200, "{name}: {rendered}");
        let mut rendered: Value = serde_json::from_str(&rendered).unwrap();
        let (status, text) = s.ask("/v1/chat/completions", &body);
        assert_eq!(status, 200, "{name}: {text}");
        let sent = s.sent();
        let mut worker = sent.last().expect("the worker was asked")["body"].clone();
        for g in [&mut worker, &mut rendered] {
            for k in ["request_id", "stream", "model"] {
                g.as_object_mut().unwrap().remove(k);
            }
        }
        assert_eq!(worker, rendered, "{name}");
        let so = &worker["sampling_params"]["structured_outputs"];
        assert_eq!(so.is_null(), ["plain", "sampling", "logprobs", "thinking off"].contains(&name), "{name}");
    }
    // A field vLLM's GenerateRequest has no place for is refused, naming it.
    let (_, mut body) = request("chat", "gen", false, false);
    body["add_special_tokens"] = json!(true);
    let (status, text) = s.ask("/v1/chat/completions", &body);
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("`add_special_tokens` is not supported with the `generate` backend"), "{text}");
}

/// Logprob entries of an answer (a chat completion, or its stream's chunks).
fn entries(text: &str, stream: bool) -> Vec<Value> {
    let all = |v: &Value| v["choices"][0]["logprobs"]["content"].as_array().cloned().unwrap_or_default();
    if !stream {
        return all(&serde_json::from_str(text).unwrap());
    }
    text.split("\n\n")
        .filter_map(|f| f.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .flat_map(|d| all(&serde_json::from_str(d).unwrap()))
        .collect()
}

#[test]
fn logprobs_usage_and_failures() {
    let s = setup();
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let mut manifest = String::new();
    let mut whole = Vec::new();
    for stream in [false, true] {
        let (path, mut body) = request("chat", "gen", stream, true);
        body["logprobs"] = json!(true);
        body["top_logprobs"] = json!(2);
        let (status, text) = s.ask(path, &body);
        assert_eq!(status, 200, "{text}");
        let sent = s.sent();
        assert_eq!(sent[0]["body"]["sampling_params"]["logprobs"], 2);
        let e = entries(&text, stream);
        assert!(!e.is_empty());
        for x in &e {
            let token = x["token"].as_str().unwrap();
            assert!(!token.starts_with("token_id:"), "spelled as text: {x}");
            assert_eq!(x["bytes"], json!(token.as_bytes()), "{x}");
            assert_eq!(x["top_logprobs"].as_array().unwrap().len(), 2, "{x}");
        }
        // The same tokens and values as through the completions backend.
        let (_, mut cmp) = request("chat", "cmp", stream, true);
        cmp["logprobs"] = json!(true);
        cmp["top_logprobs"] = json!(2);
        let (_, want) = s.ask(path, &cmp);
        s.sent();
        let key =
            |v: &Vec<Value>| v.iter().map(|x| (x["token"].clone(), x["logprob"].clone())).collect::<Vec<_>>();
        assert_eq!(key(&e), key(&entries(&want, stream)), "stream={stream}");
        if stream {
            assert_eq!(e, whole, "the stream's logprobs are the one-shot answer's");
            // Usage as the completions backend counts it.
            let usage = |t: &str| {
                let last = t.split("\n\n").filter(|f| f.contains("\"usage\":{")).last().unwrap().to_string();
                let v: Value = serde_json::from_str(last.trim_start_matches("data: ")).unwrap();
                v["usage"].clone()
            };
            assert_eq!(usage(&text), usage(&want));
            assert!(usage(&text)["completion_tokens"].as_u64().unwrap() > 0);
        } else {
            whole = e;
        }
        let file = dir.path().join(format!("{stream}.txt"));
        std::fs::write(&file, &text).unwrap();
        manifest.push_str(
            &(json!({"name": format!("logprobs stream={stream}"), "api": "chat", "stream": stream,
                "path": file, "include_usage": stream})
            .to_string()
                + "\n"),
        );
    }
    validate(&python, &manifest, dir.path());

    // With `return_tokens_as_token_ids`, vLLM's own spelling stays.
    let (path, mut body) = request("chat", "gen", false, false);
    body["logprobs"] = json!(true);
    body["return_tokens_as_token_ids"] = json!(true);
    let (status, text) = s.ask(path, &body);
    assert_eq!(status, 200, "{text}");
    assert!(entries(&text, false).iter().all(|x| x["token"].as_str().unwrap().starts_with("token_id:")));
    s.sent();

    // A worker failing before its first byte: 502 with its message.
    let (path, mut body) = request("chat", "gen-500", true, false);
    let (status, text) = s.ask(path, &body);
    assert_eq!(status, 502, "{text}");
    assert!(text.contains("injected internal error"), "{text}");
    // Inside the stream: what was parsed is flushed, one error event, [DONE].
    body["model"] = json!("gen-drop");
    let (status, text) = s.ask(path, &body);
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("\"error\"") && text.ends_with("data: [DONE]\n\n"), "{text}");
    assert!(!text.contains("\"finish_reason\":\"stop\""), "{text}");
}

#[test]
fn the_replay_worker_answers_whole_and_streamed_with_the_same_ids() {
    let backend = start(env!("CARGO_BIN_EXE_sift-replay"), &["--port", "0", "--chunk-tokens", "4"]);
    let view = llmsift_tokenizers::TokenizerView::from_file(tokenizer_dir().join("tokenizer.json")).unwrap();
    let prompt = view.encode("<|im_start|>user\nWeather in Paris? get_weather<|im_end|>\n").unwrap();
    for (max, n) in [(None, 1), (Some(5), 2)] {
        let mut body = json!({"request_id": "r1", "token_ids": prompt, "model": "qwen3",
            "sampling_params": {"n": n, "logprobs": 1}, "stream": false});
        if let Some(m) = max {
            body["sampling_params"]["max_tokens"] = json!(m);
        }
        let (status, text) = post(&backend.1, "/inference/v1/generate", &body);
        assert_eq!(status, 200, "{text}");
        let whole: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(whole["request_id"], "generate-tokens-r1");
        body["stream"] = json!(true);
        body["stream_options"] = json!({"include_usage": true});
        let (status, text) = post(&backend.1, "/inference/v1/generate", &body);
        assert_eq!(status, 200, "{text}");
        assert!(text.ends_with("data: [DONE]\n\n"), "{text}");
        let frames: Vec<Value> = text
            .split("\n\n")
            .filter_map(|f| f.strip_prefix("data: "))
            .filter(|d| *d != "[DONE]")
            .map(|d| serde_json::from_str(d).unwrap())
            .collect();
        assert!(frames.last().unwrap()["choices"].as_array().unwrap().is_empty(), "the usage frame");
        assert_eq!(frames.last().unwrap()["usage"], whole["usage"]);
        for i in 0..n {
            let w = &whole["choices"][i];
            let mut ids = Vec::new();
            let mut lps = Vec::new();
            let mut finish = Value::Null;
            for f in &frames {
                for c in f["choices"].as_array().unwrap().iter().filter(|c| c["index"] == i) {
                    assert!(c["token_ids"].as_array().unwrap().len() <= 4);
                    assert!(finish.is_null(), "nothing after the finish reason");
                    ids.extend(c["token_ids"].as_array().unwrap().iter().cloned());
                    lps.extend(c["logprobs"]["content"].as_array().unwrap().iter().cloned());
                    finish = c["finish_reason"].clone();
                }
            }
            assert_eq!(Value::Array(ids.clone()), w["token_ids"]);
            assert_eq!(Value::Array(lps), w["logprobs"]["content"]);
            assert_eq!(finish, w["finish_reason"]);
            let tools = view.decode(&ids.iter().map(|x| x.as_u64().unwrap() as u32).collect::<Vec<_>>());
            assert!(tools.contains("<tool_call>") || max.is_some(), "the tool variant: {tools}");
        }
        if let Some(m) = max {
            assert_eq!(whole["choices"][0]["token_ids"].as_array().unwrap().len(), m);
            assert_eq!(whole["choices"][1]["finish_reason"], "length");
        }
    }
    let (status, _) = post(&backend.1, "/inference/v1/generate", &json!({"token_ids": "no"}));
    assert_eq!(status, 400);
}
