//! Gateway fidelity, end to end: what `sift serve` sends each backend kind
//! (the replay backend keeps every body it receives, `GET
//! /replay/requests`) and what the client gets back.
//!
//! - the decoding constraint per backend kind × `tool_choice` × `response_format`
//!   (`CONSTRAINTS`), streamed and not;
//! - logprobs asked of each backend kind and returned per token on the
//!   delta that token produced, hidden for reasoning's tokens with
//!   `include_reasoning: false`; every answer validated with the `openai`
//!   SDK's types (`scripts/sdk-validate.py`);
//! - every field of vLLM's request (`llmsift_serve::outbound::FIELDS`, the
//!   table of `docs/serve.md`) forwarded, done by the gateway, or refused
//!   with a 400 naming it, on each backend kind.
//!
//! - a chat backend's own usage in every dialect, and Sift's constraint
//!   sent to a chat backend that is llama.cpp (`gateway/chat_backend.rs`).
//!
//! One replay backend and one gateway (Qwen3 tokenizer and template, the
//! `qwen3` and `hermes` parsers; served as `completions`, `completions` with
//! SGLang's field names, `llamacpp`, `chat`, and `chat` with llama.cpp's
//! guided fields) serve each test; the cases are data.

use llmsift_serve::outbound::{Fate, FIELDS};
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

/// Starts `bin` and reads its `listening on http://ADDR` line (it prints
/// nothing else first; a process that exits first fails the test).
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
            // Keep draining stderr so the child never blocks on it.
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

/// The replay backend, a gateway in front of it, and the config file.
struct Setup {
    backend: Proc,
    gw: Proc,
    _config: tempfile::TempPath,
}

fn setup() -> Setup {
    let backend = start(env!("CARGO_BIN_EXE_sift-replay"), &["--port", "0"]);
    let dir = tokenizer_dir();
    let mut config = String::new();
    for (name, kind, extra) in [
        ("completions", "completions", ""),
        ("sglang", "completions", "guided_fields = \"sglang\"\n"),
        ("llamacpp", "llamacpp", ""),
        ("llamacpp-forced", "llamacpp", "grammar_reasoning_chars = 64\n"),
        ("chat", "chat", ""),
        ("chat-llamacpp", "chat", "guided_fields = \"llamacpp\"\ngrammar_reasoning_chars = 64\n"),
    ] {
        config.push_str(&format!(
            "[[models]]\nserved_model_name = {name:?}\nbackend = {kind:?}\nbackend_url = \"http://{}\"\n\
             backend_model = \"qwen3\"\ntokenizer = {:?}\nchat_template = {:?}\nreasoning_parser = \"qwen3\"\n\
             tool_call_parser = \"hermes\"\nenable_auto_tool_choice = true\n{extra}\n",
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

impl Setup {
    /// Posts a Chat Completions body: the status and the answer's text.
    fn ask(&self, body: &Value) -> (u16, String) {
        self.ask_at("/v1/chat/completions", body)
    }

    fn ask_at(&self, path: &str, body: &Value) -> (u16, String) {
        let c = reqwest::blocking::Client::builder().timeout(Duration::from_secs(60)).build().unwrap();
        let r = c
            .post(format!("http://{}{path}", self.gw.1))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .expect("the gateway answers");
        (r.status().as_u16(), r.text().expect("a body"))
    }

    /// The bodies the backend received since the last call.
    fn sent(&self) -> Vec<Value> {
        let r = reqwest::blocking::get(format!("http://{}/replay/requests", self.backend.1)).unwrap();
        let v: Value = serde_json::from_str(&r.text().unwrap()).unwrap();
        v.as_array().unwrap().iter().map(|x| x["body"].clone()).collect()
    }

    /// Asks, and returns the status, the answer and the one body the backend got.
    fn exchange(&self, body: &Value) -> (u16, String, Option<Value>) {
        let (status, text) = self.ask(body);
        let mut sent = self.sent();
        assert!(sent.len() <= 1, "one request, one backend body: {sent:?}");
        (status, text, sent.pop())
    }
}

fn tool(strict: bool) -> Value {
    json!({"type": "function", "function": {"name": "get_weather", "strict": strict, "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
        "required": ["city"]}}})
}

fn schema() -> Value {
    json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
}

/// A request: the model, then `patch`'s fields over a tools request.
fn request(model: &str, patch: &Value) -> Value {
    let mut r = json!({"model": model, "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [tool(false)], "max_tokens": 200});
    for (k, v) in patch.as_object().expect("an object") {
        r[k] = v.clone();
    }
    r
}

/// What the backend must have received: at `path` (a JSON pointer; `A#B`
/// reads the JSON text at `A` and then `B` inside it), the value, or nothing.
type Want = (&'static str, Option<Value>);

fn at(body: &Value, path: &str) -> Option<Value> {
    match path.split_once('#') {
        None => body.pointer(path).cloned(),
        Some((a, b)) => {
            let inner: Value = serde_json::from_str(body.pointer(a)?.as_str()?).ok()?;
            inner.pointer(b).cloned()
        }
    }
}

/// The answer as one `chat.completion` (a stream folded the simple way:
/// texts joined, call fragments joined per index).
fn folded(text: &str, stream: bool) -> Value {
    if !stream {
        return serde_json::from_str(text).expect("JSON");
    }
    let (mut content, mut reasoning, mut calls, mut finish) =
        (String::new(), String::new(), Vec::<Value>::new(), None);
    for c in chunks(text) {
        let ch = &c["choices"][0];
        content.push_str(ch["delta"]["content"].as_str().unwrap_or_default());
        reasoning.push_str(ch["delta"]["reasoning"].as_str().unwrap_or_default());
        for tc in ch["delta"]["tool_calls"].as_array().into_iter().flatten() {
            let i = tc["index"].as_u64().unwrap() as usize;
            if calls.len() <= i {
                calls.push(json!({"function": {"name": "", "arguments": ""}}));
            }
            let f = &mut calls[i]["function"];
            for k in ["name", "arguments"] {
                let add = tc["function"][k].as_str().unwrap_or_default();
                f[k] = json!(format!("{}{add}", f[k].as_str().unwrap()));
            }
        }
        if !ch["finish_reason"].is_null() {
            finish = Some(ch["finish_reason"].clone());
        }
    }
    json!({"choices": [{"message": {"content": content, "reasoning": reasoning, "tool_calls": calls},
        "finish_reason": finish}]})
}

/// A stream's chunks with choices.
fn chunks(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str::<Value>(d).expect("chunk JSON"))
        .filter(|c| c["choices"].as_array().is_some_and(|a| !a.is_empty()))
        .collect()
}

const RF_SCHEMA: &str = "json_schema";

/// A case: its name, the served model, the request's fields, what the
/// backend must receive, the call the client must get, the content it must get.
type Case = (&'static str, &'static str, Value, Vec<Want>, Option<Value>, Option<&'static str>);

/// Backend kind × tool_choice × response_format: the request's fields, what
/// the backend must receive, the call the client must get (if any), the
/// content it must get (if any).
fn constraints() -> Vec<Case> {
    let off = json!({"enable_thinking": false});
    let rf = json!({"type": RF_SCHEMA, "json_schema": {"name": "w", "schema": schema()}});
    let call =
        Some(json!({"name": "get_weather", "arguments": "{\"city\": \"Paris\", \"unit\": \"celsius\"}"}));
    let guided_call = Some(json!({"name": "get_weather", "arguments": "{\"city\": \"x\"}"}));
    vec![
        // vLLM /v1/completions: `structured_outputs`.
        ("completions-auto", "completions", json!({"tool_choice": "auto"}), vec![("/structured_outputs", None)], call.clone(), None),
        ("completions-none", "completions", json!({"tool_choice": "none"}), vec![("/structured_outputs", None)], None, None),
        ("completions-auto-strict", "completions", json!({"tools": [tool(true)]}), vec![
            ("/structured_outputs/structural_tag#/format/elements/0/end", Some(json!("</think>"))),
            ("/structured_outputs/structural_tag#/format/elements/1/type", Some(json!("triggered_tags"))),
            ("/structured_outputs/structural_tag#/format/elements/1/at_least_one", Some(json!(false))),
        ], call.clone(), None),
        ("completions-required", "completions", json!({"tool_choice": "required"}), vec![
            ("/structured_outputs/structural_tag#/format/type", Some(json!("sequence"))),
            ("/structured_outputs/structural_tag#/format/elements/1/triggers/0", Some(json!("<tool_call>"))),
            ("/structured_outputs/structural_tag#/format/elements/1/at_least_one", Some(json!(true))),
            ("/structured_outputs/structural_tag#/format/elements/1/stop_after_first", Some(json!(false))),
            ("/structured_outputs/structural_tag#/format/elements/1/tags/0/content/json_schema/required/0", Some(json!("city"))),
        ], call.clone(), None),
        ("completions-required-one", "completions", json!({"tool_choice": "required", "parallel_tool_calls": false}), vec![
            ("/structured_outputs/structural_tag#/format/elements/1/stop_after_first", Some(json!(true))),
        ], call.clone(), None),
        ("completions-named", "completions", json!({"tool_choice": {"type": "function", "function": {"name": "get_weather"}}}), vec![
            ("/structured_outputs/structural_tag#/format/elements/1/at_least_one", Some(json!(true))),
            ("/structured_outputs/structural_tag#/format/elements/1/stop_after_first", Some(json!(true))),
        ], call.clone(), None),
        ("completions-required-hidden-reasoning", "completions", json!({"tool_choice": "required", "include_reasoning": false}), vec![
            ("/structured_outputs/structural_tag#/format/type", Some(json!("triggered_tags"))),
        ], call.clone(), None),
        ("completions-rf-schema", "completions", json!({"response_format": rf, "chat_template_kwargs": off}), vec![
            ("/structured_outputs/json", Some(schema())),
        ], None, None),
        ("completions-rf-object", "completions", json!({"response_format": {"type": "json_object"}, "chat_template_kwargs": off}), vec![
            ("/structured_outputs/json_object", Some(json!(true))),
        ], None, None),
        ("completions-rf-text", "completions", json!({"response_format": {"type": "text"}, "tool_choice": "none"}), vec![
            ("/structured_outputs", None),
        ], None, None),
        ("completions-rf-schema-thinking", "completions", json!({"response_format": rf}), vec![
            ("/structured_outputs/structural_tag#/format/elements/1/json_schema", Some(schema())),
        ], None, None),
        ("completions-rf-before-tools", "completions", json!({"response_format": rf, "tool_choice": "required", "chat_template_kwargs": off}), vec![
            ("/structured_outputs/json", Some(schema())),
        ], None, None),
        ("completions-client-structured-outputs", "completions", json!({"tool_choice": "required", "structured_outputs": {"regex": "a+"}}), vec![
            ("/structured_outputs", Some(json!({"regex": "a+"}))),
        ], None, None),
        // SGLang's names.
        ("sglang-rf-schema", "sglang", json!({"response_format": rf, "chat_template_kwargs": off}), vec![
            ("/json_schema", Some(json!(schema().to_string()))), ("/structured_outputs", None),
        ], None, None),
        ("sglang-required", "sglang", json!({"tool_choice": "required"}), vec![
            ("/structural_tag#/format/elements/1/at_least_one", Some(json!(true))),
        ], call.clone(), None),
        ("sglang-named", "sglang", json!({"tool_choice": {"type": "function", "function": {"name": "get_weather"}}}), vec![
            ("/structural_tag#/format/elements/1/stop_after_first", Some(json!(true))),
        ], call.clone(), None),
        ("sglang-none", "sglang", json!({"tool_choice": "none"}), vec![("/structural_tag", None), ("/json_schema", None)], None, None),
        ("sglang-rf-object", "sglang", json!({"response_format": {"type": "json_object"}, "chat_template_kwargs": off}), vec![
            ("/json_schema", Some(json!("{\"type\":\"object\"}"))),
        ], None, None),
        // llama.cpp: `json_schema`, or GBNF `grammar` (lazy after reasoning or for `auto`).
        ("llamacpp-required", "llamacpp", json!({"tool_choice": "required"}), vec![
            ("/grammar_lazy", Some(json!(true))),
            ("/grammar_triggers/0", Some(json!({"type": 1, "value": "</think>"}))),
            // A one-token trigger word must be preserved, or llama.cpp refuses the request.
            ("/preserved_tokens/0", Some(json!("</think>"))),
            // The prompt goes as token ids (`<|im_start|>` first), so llama.cpp adds no BOS.
            ("/prompt/0", Some(json!(151644))),
        ], call.clone(), None),
        ("llamacpp-required-no-thinking", "llamacpp", json!({"tool_choice": "required", "chat_template_kwargs": off}), vec![
            ("/grammar_lazy", None),
        ], None, None),
        ("llamacpp-auto-strict", "llamacpp", json!({"tools": [tool(true)]}), vec![
            ("/grammar_triggers/0/value", Some(json!("<tool_call>"))),
            ("/preserved_tokens/0", Some(json!("<tool_call>"))),
        ], call.clone(), None),
        ("llamacpp-none", "llamacpp", json!({"tool_choice": "none"}), vec![("/grammar", None), ("/json_schema", None)], None, None),
        ("llamacpp-auto", "llamacpp", json!({"tool_choice": "auto"}), vec![("/grammar", None), ("/json_schema", None)], call.clone(), None),
        ("llamacpp-named", "llamacpp", json!({"tool_choice": {"type": "function", "function": {"name": "get_weather"}}}), vec![
            ("/grammar_triggers/0/value", Some(json!("</think>"))),
        ], call.clone(), None),
        ("llamacpp-rf-object-thinking", "llamacpp", json!({"response_format": {"type": "json_object"}}), vec![
            ("/grammar_lazy", Some(json!(true))), ("/json_schema", None),
        ], None, None),
        ("llamacpp-rf-schema", "llamacpp", json!({"response_format": rf, "chat_template_kwargs": off}), vec![
            ("/json_schema", Some(schema())), ("/grammar", None),
        ], None, None),
        // chat: the backend's own OpenAI fields; its guided JSON read back.
        ("chat-auto", "chat", json!({"tool_choice": "auto"}), vec![("/tool_choice", Some(json!("none")))], call.clone(), None),
        ("chat-none", "chat", json!({"tool_choice": "none"}), vec![("/tool_choice", Some(json!("none")))], None, None),
        ("chat-required", "chat", json!({"tool_choice": "required"}), vec![("/tool_choice", Some(json!("required")))], guided_call.clone(), None),
        ("chat-named", "chat", json!({"tool_choice": {"type": "function", "function": {"name": "get_weather"}}}), vec![
            ("/tool_choice/function/name", Some(json!("get_weather"))),
        ], guided_call, None),
        ("chat-rf-schema", "chat", json!({"response_format": rf, "tool_choice": "none"}), vec![
            ("/response_format/json_schema/schema", Some(schema())),
        ], None, Some("{\"city\":\"x\"}")),
        ("chat-rf-object", "chat", json!({"response_format": {"type": "json_object"}, "tool_choice": "none"}), vec![
            ("/response_format/type", Some(json!("json_object"))),
        ], None, Some("{}")),
    ]
}

#[test]
fn constraint_per_backend_kind_tool_choice_and_response_format() {
    let s = setup();
    let mut seen = 0;
    for (name, model, patch, wants, call, content) in constraints() {
        for (stream, logprobs) in [(false, false), (true, false), (false, true), (true, true)] {
            let mut body = request(model, &patch);
            body["stream"] = json!(stream);
            if logprobs {
                body["logprobs"] = json!(true);
                body["top_logprobs"] = json!(1);
            }
            let (status, text, sent) = s.exchange(&body);
            assert_eq!(status, 200, "{name} stream={stream}: {text}");
            let sent = sent.expect("the backend was asked");
            for (path, want) in &wants {
                assert_eq!(&at(&sent, path), want, "{name} stream={stream}: {path} in {sent}");
            }
            let ask = match model {
                "llamacpp" => "/n_probs",
                _ => "/logprobs",
            };
            let asked = at(&sent, ask).filter(|v| v != &json!(false));
            assert_eq!(asked.is_some(), logprobs, "{name} logprobs={logprobs}: {ask} in {sent}");
            assert_eq!(!entries(&text, stream).is_empty(), logprobs, "{name} logprobs={logprobs}: {text}");
            let msg = &folded(&text, stream)["choices"][0]["message"];
            if let Some(c) = &call {
                let got = &msg["tool_calls"][0]["function"];
                let args = |v: &Value| serde_json::from_str::<Value>(v.as_str().unwrap_or("null")).ok();
                assert_eq!(got["name"], c["name"], "{name} stream={stream}: {text}");
                assert_eq!(args(&got["arguments"]), args(&c["arguments"]), "{name} stream={stream}: {text}");
            }
            if let Some(c) = content {
                assert_eq!(msg["content"], c, "{name} stream={stream}: {text}");
            }
            seen += 1;
        }
    }
    assert_eq!(seen, 4 * constraints().len());
}

/// The logprob entries of an answer, in order (a stream's chunks joined),
/// and whether each chunk that carries entries also carries text or calls.
fn entries(text: &str, stream: bool) -> Vec<Value> {
    if !stream {
        let v: Value = serde_json::from_str(text).unwrap();
        return v["choices"][0]["logprobs"]["content"].as_array().cloned().unwrap_or_default();
    }
    chunks(text)
        .iter()
        .flat_map(|c| c["choices"][0]["logprobs"]["content"].as_array().cloned().unwrap_or_default())
        .collect()
}

/// `grammar_reasoning_chars` on a `llamacpp` model: a constraint that
/// starts after the reasoning forces the reasoning too, from the first
/// token (not lazy); a prompt that closed reasoning gets the plain grammar;
/// `auto` stays lazy on the family's trigger. Schemas are written out in
/// the GBNF (the arguments' `city`, the response format's).
#[test]
fn llamacpp_grammar_forces_the_reasoning_when_configured() {
    let s = setup();
    let off = json!({"enable_thinking": false});
    let rf = json!({"type": "json_schema", "json_schema": {"name": "w", "schema": schema()}});
    let forced = "root ::= \"<think>\" [^<]{0,64} \"</think>\" ws ";
    let city = "\"\\\"city\\\"\" ws \":\" ws string ws";
    let cases = [
        (json!({"tool_choice": "required"}), forced, None),
        (json!({"tool_choice": {"type": "function", "function": {"name": "get_weather"}}}), forced, None),
        (json!({"response_format": rf}), forced, None),
        (json!({"tool_choice": "required", "chat_template_kwargs": off}), "root ::= call", None),
        (json!({"tools": [tool(true)]}), "root ::= call", Some(json!(true))),
    ];
    for (patch, root, lazy) in cases {
        for stream in [false, true] {
            let mut body = request("llamacpp-forced", &patch);
            body["stream"] = json!(stream);
            let (status, text, sent) = s.exchange(&body);
            assert_eq!(status, 200, "{patch} stream={stream}: {text}");
            let sent = sent.expect("the backend was asked");
            let g = sent["grammar"].as_str().unwrap_or_else(|| panic!("{patch}: no grammar in {sent}"));
            assert!(g.starts_with(root), "{patch}: {g}");
            assert!(g.contains(city), "{patch}: the schema is not written out: {g}");
            assert_eq!(sent.get("grammar_lazy").cloned(), lazy, "{patch}: {sent}");
            assert_eq!(sent.get("json_schema"), None, "{patch}: {sent}");
        }
    }
}

#[test]
fn logprobs_asked_routed_and_hidden_with_reasoning() {
    let s = setup();
    let dir = tempfile::tempdir().unwrap();
    let mut manifest = String::new();
    for (model, asked) in [
        ("completions", json!({"logprobs": 2})),
        ("llamacpp", json!({"n_probs": 2})),
        ("chat", json!({"logprobs": true, "top_logprobs": 2})),
    ] {
        for include_reasoning in [true, false] {
            for tools in [false, true] {
                let mut one_shot = Vec::new();
                for stream in [false, true] {
                    let mut body = request(
                        model,
                        &json!({"logprobs": true, "top_logprobs": 2,
                        "include_reasoning": include_reasoning, "stream": stream}),
                    );
                    if !tools {
                        body.as_object_mut().unwrap().remove("tools");
                    }
                    if stream {
                        body["stream_options"] = json!({"include_usage": true});
                    }
                    let case = format!("{model} reasoning={include_reasoning} tools={tools} stream={stream}");
                    let (status, text, sent) = s.exchange(&body);
                    assert_eq!(status, 200, "{case}: {text}");
                    let sent = sent.unwrap();
                    for (k, v) in asked.as_object().unwrap() {
                        assert_eq!(&sent[k], v, "{case}: {k} in {sent}");
                    }
                    let e = entries(&text, stream);
                    for x in &e {
                        assert!(
                            x["token"].is_string() && x["logprob"].is_number() && x["bytes"].is_array(),
                            "{case}: {x}"
                        );
                        // Two asked; vLLM's completions map collapses alternatives spelled alike.
                        let top = x["top_logprobs"].as_array().map_or(0, Vec::len);
                        assert!((1..=2).contains(&top), "{case}: {x}");
                    }
                    if stream {
                        assert_eq!(e, one_shot, "{case}: the stream's logprobs are the one-shot answer's");
                        for c in chunks(&text) {
                            let ch = &c["choices"][0];
                            if ch["logprobs"].is_object() {
                                let d = &ch["delta"];
                                let produced =
                                    ["content", "reasoning", "tool_calls"].iter().any(|k| !d[k].is_null());
                                // A token that only moved the parser (a marker) rides alone.
                                assert!(
                                    produced || ch["logprobs"]["content"].as_array().unwrap().len() == 1,
                                    "{case}: {c}"
                                );
                                if !include_reasoning {
                                    assert!(d["reasoning"].is_null(), "{case}: {c}");
                                }
                            }
                        }
                    } else {
                        let v: Value = serde_json::from_str(&text).unwrap();
                        let usage = &v["usage"];
                        let total = usage["completion_tokens"].as_u64().unwrap() as usize;
                        let thinking = usage["completion_tokens_details"]["reasoning_tokens"]
                            .as_u64()
                            .unwrap_or(0) as usize;
                        match (model, include_reasoning) {
                            // No ids: no token can be told from reasoning.
                            ("chat", false) => assert!(e.is_empty(), "{case}: {text}"),
                            ("chat", true) => assert!(!e.is_empty(), "{case}"),
                            (_, true) => assert_eq!(e.len(), total, "{case}: one entry per token"),
                            // Reasoning's tokens and its two markers are hidden.
                            (_, false) => {
                                assert!(thinking > 0 && !e.is_empty(), "{case}: {text}");
                                assert_eq!(e.len(), total - thinking - 2, "{case}: {text}");
                            }
                        }
                        one_shot = e;
                    }
                    let file = dir.path().join(format!("{}.txt", manifest.lines().count()));
                    std::fs::write(&file, &text).unwrap();
                    manifest.push_str(
                        &(json!({"name": case, "api": "chat", "stream": stream, "path": file,
                        "include_usage": stream})
                        .to_string()
                            + "\n"),
                    );
                }
            }
        }
    }
    // Every answer parses with the openai SDK's own types.
    sdk_validate(dir.path(), &manifest);
}

/// The Responses API's place for logprobs: the answer tokens' entries on the
/// message's `output_text` part, reasoning's left out (by id); streamed, the
/// text deltas carry them and the final response is the one-shot one.
#[test]
fn responses_logprobs_on_the_answer_text() {
    let s = setup();
    let dir = tempfile::tempdir().unwrap();
    let mut manifest = String::new();
    let asked = |model: &str| match model {
        "completions" => json!({"logprobs": 2}),
        "llamacpp" => json!({"n_probs": 2}),
        _ => json!({"logprobs": true, "top_logprobs": 2}),
    };
    for model in ["completions", "llamacpp", "chat"] {
        for ask in [
            json!({"include": ["message.output_text.logprobs"], "top_logprobs": 2}),
            json!({"top_logprobs": 2}),
        ] {
            let mut one_shot = None;
            for stream in [false, true] {
                let mut body = json!({"model": model, "input": "Weather in Paris?", "stream": stream,
                    "max_output_tokens": 200});
                for (k, v) in ask.as_object().unwrap() {
                    body[k] = v.clone();
                }
                let case = format!("{model} {ask} stream={stream}");
                let (status, text) = s.ask_at("/v1/responses", &body);
                assert_eq!(status, 200, "{case}: {text}");
                let sent = s.sent();
                assert_eq!(sent.len(), 1, "{case}");
                for (k, v) in asked(model).as_object().unwrap() {
                    assert_eq!(&sent[0][k], v, "{case}: {k} in {}", sent[0]);
                }
                let (response, deltas) = if stream {
                    let events: Vec<Value> = text
                        .lines()
                        .filter_map(|l| l.strip_prefix("data: "))
                        .map(|d| serde_json::from_str(d).expect("event JSON"))
                        .collect();
                    let last = events.last().expect("events").clone();
                    let deltas: Vec<Value> = events
                        .iter()
                        .filter(|e| e["type"] == "response.output_text.delta")
                        .flat_map(|e| e["logprobs"].as_array().unwrap().clone())
                        .collect();
                    (last["response"].clone(), Some(deltas))
                } else {
                    (serde_json::from_str::<Value>(&text).unwrap(), None)
                };
                let items = response["output"].as_array().expect("output");
                let message = items.iter().find(|i| i["type"] == "message").expect("a message item");
                let lp = message["content"][0]["logprobs"].as_array().expect("logprobs").clone();
                assert!(!lp.is_empty(), "{case}: {text}");
                for x in &lp {
                    assert!(
                        x["token"].is_string() && x["logprob"].is_number() && x["bytes"].is_array(),
                        "{case}: {x}"
                    );
                    let top = x["top_logprobs"].as_array().map_or(0, Vec::len);
                    assert!((1..=2).contains(&top), "{case}: {x}");
                }
                if model != "chat" {
                    // Every token but reasoning's and its two markers.
                    let total = response["usage"]["output_tokens"].as_u64().unwrap() as usize;
                    let thinking = response["usage"]["output_tokens_details"]["reasoning_tokens"]
                        .as_u64()
                        .unwrap() as usize;
                    assert!(thinking > 0, "{case}: {text}");
                    assert_eq!(lp.len(), total - thinking - 2, "{case}: {text}");
                }
                if let Some(d) = deltas {
                    assert!(
                        !d.is_empty() && lp.starts_with(&d),
                        "{case}: the deltas' entries lead the part's: {} of {}\n{d:?}\n{lp:?}",
                        d.len(),
                        lp.len()
                    );
                    assert_eq!(
                        Some(&lp),
                        one_shot.as_ref(),
                        "{case}: the stream's part is the one-shot part"
                    );
                }
                one_shot = Some(lp);
                let file = dir.path().join(format!("{}.txt", manifest.lines().count()));
                std::fs::write(&file, &text).unwrap();
                manifest.push_str(
                    &(json!({"name": case, "api": "responses", "stream": stream, "path": file}).to_string()
                        + "\n"),
                );
            }
        }
    }
    sdk_validate(dir.path(), &manifest);
    // Out of the API's range: a 400 naming the field.
    let (status, text) =
        s.ask_at("/v1/responses", &json!({"model": "completions", "input": "hi", "top_logprobs": 21}));
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("\"param\":\"top_logprobs\""), "{text}");
}

/// A request patch that sets `field` to a value that asks for something.
fn sample(field: &str) -> Value {
    let v = match field {
        "messages" | "model" => return json!({}),
        "stream" => json!(true),
        "stream_options" => return json!({"stream": true, "stream_options": {"include_usage": true}}),
        "top_logprobs" => return json!({"logprobs": true, "top_logprobs": 1}),
        "logprob_token_ids" => return json!({"logprobs": true, "logprob_token_ids": [1]}),
        "n" => json!(1),
        "max_tokens" | "max_completion_tokens" => json!(50),
        "tools" => json!([tool(false)]),
        "tool_choice" => json!("none"),
        "parallel_tool_calls" | "include_reasoning" | "skip_special_tokens" | "return_mm_kwargs" => {
            json!(false)
        }
        "spaces_between_special_tokens" => json!(false),
        "mm_payload" => json!("none"),
        "response_format" => json!({"type": "text"}),
        "reasoning_effort" => json!("low"),
        "chat_template_kwargs" => json!({"enable_thinking": false}),
        "documents" => json!([{"title": "t", "text": "x"}]),
        "user" | "request_id" | "session_id" | "cache_salt" => json!("u1"),
        "chat_template" => json!("{{ messages }}"),
        "truncation_side" => json!("left"),
        "temperature" | "top_p" | "min_p" | "presence_penalty" | "frequency_penalty" | "length_penalty" => {
            json!(0.5)
        }
        "repetition_penalty" => json!(1.1),
        "top_k"
        | "seed"
        | "min_tokens"
        | "truncate_prompt_tokens"
        | "thinking_token_budget"
        | "priority"
        | "stream_interval"
        | "prompt_logprobs"
        | "routed_experts_prompt_start" => json!(3),
        "stop" | "bad_words" => json!(["zz"]),
        "stop_token_ids" | "allowed_token_ids" => json!([9, 10]),
        "logit_bias" => json!({"15": 1.0}),
        "structured_outputs" => json!({"regex": "a+"}),
        "repetition_detection"
        | "kv_transfer_params"
        | "ec_transfer_params"
        | "vllm_xargs"
        | "mm_processor_kwargs" => {
            json!({"k": 1})
        }
        "media_io_kwargs" => json!({"image": {"k": 1}}),
        _ => json!(true),
    };
    json!({ field: v })
}

/// Keys the gateway writes to a backend body itself (so a gateway field's
/// name may be there without having been forwarded).
const OWN_KEYS: [&str; 14] = [
    "model",
    "stream",
    // A chat backend is asked for its usage (whatever the client asked).
    "stream_options",
    "n",
    "max_tokens",
    "messages",
    "tools",
    "tool_choice",
    "logprobs",
    "top_logprobs",
    "skip_special_tokens",
    "chat_template_kwargs",
    "response_format",
    "return_token_ids",
];

#[test]
fn every_vllm_request_field_is_forwarded_done_or_refused() {
    let s = setup();
    for f in FIELDS {
        for (model, fate) in [("completions", f.completions), ("llamacpp", f.llamacpp), ("chat", f.chat)] {
            let patch = sample(f.name);
            let body = request(model, &patch);
            let case = format!("{} on {model} ({fate:?})", f.name);
            let (status, text, sent) = s.exchange(&body);
            match fate {
                Fate::Forward(key) => {
                    assert_eq!(status, 200, "{case}: {text}");
                    assert_eq!(sent.unwrap()[key], patch[f.name], "{case}");
                }
                Fate::Refuse => {
                    assert_eq!(status, 400, "{case}: {text}");
                    let e: Value = serde_json::from_str(&text).unwrap();
                    assert_eq!(e["error"]["param"], f.name, "{case}: {text}");
                    assert!(
                        e["error"]["message"].as_str().unwrap().contains(&format!("`{model}` backend")),
                        "{case}"
                    );
                    assert!(sent.is_none(), "{case}: refused before the backend is asked");
                }
                Fate::Gateway => {
                    assert_eq!(status, 200, "{case}: {text}");
                    let sent = sent.unwrap();
                    if !OWN_KEYS.contains(&f.name) {
                        assert!(sent.get(f.name).is_none(), "{case}: not forwarded as is: {sent}");
                    }
                }
            }
        }
    }
    // A refused field at its default asks for nothing and passes.
    for patch in
        [json!({"echo": false}), json!({"spaces_between_special_tokens": true}), json!({"min_tokens": 0})]
    {
        let (status, text, _) = s.exchange(&request("llamacpp", &patch));
        assert_eq!(status, 200, "{patch}: {text}");
    }
}

#[path = "scaleout/schema.rs"]
mod schema;

#[path = "gateway/chat_backend.rs"]
mod chat_backend;

/// The render endpoint (scale-out) puts the same constraint in its
/// `sampling_params`, without the reasoning marker: the vLLM worker is told
/// `reasoning_ended` and holds the constraint until reasoning ends itself.
#[test]
fn render_carries_the_constraint_in_sampling_params() {
    let s = setup();
    let rf = json!({"type": "json_schema", "json_schema": {"name": "w", "schema": schema()}});
    let cases: [(Value, &str, Option<Value>); 5] = [
        (
            json!({"tool_choice": "required"}),
            "/structured_outputs/structural_tag#/format/type",
            Some(json!("triggered_tags")),
        ),
        (
            json!({"tool_choice": "required"}),
            "/structured_outputs/structural_tag#/format/at_least_one",
            Some(json!(true)),
        ),
        (json!({"response_format": rf}), "/structured_outputs/json", Some(schema())),
        (json!({"structured_outputs": {"regex": "a+"}}), "/structured_outputs/regex", Some(json!("a+"))),
        (json!({"tool_choice": "none"}), "/structured_outputs", None),
    ];
    for (patch, path, want) in cases {
        let (status, text) = s.ask_at("/v1/chat/completions/render", &request("completions", &patch));
        assert_eq!(status, 200, "{patch}: {text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        schema::check("chat_render.response", &v);
        assert_eq!(at(&v["sampling_params"], path), want, "{patch}: {path} in {text}");
    }
}

/// Every answer of `manifest` (written into `dir`) parses with the SDKs' own types.
fn sdk_validate(dir: &std::path::Path, manifest: &str) {
    let py = Command::new("bash").arg("scripts/py-env.sh").current_dir(ROOT).output().unwrap();
    assert!(py.status.success(), "{}", String::from_utf8_lossy(&py.stderr));
    let python = String::from_utf8(py.stdout).unwrap().lines().last().unwrap().to_string();
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
