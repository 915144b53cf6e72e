//! What `sift parse --request` answers validates against the official SDKs'
//! own types (openai's `ChatCompletion`/`ChatCompletionChunk`,
//! `Response`/`ResponseStreamEvent`, anthropic's
//! `Message`/`RawMessageStreamEvent`), one-shot and streamed, for every
//! model output × request variant of `tests/data/sdk-cases.json` in every
//! dialect. `scripts/sdk-validate.py` does the checking (in the venv of
//! `scripts/py-env.sh`, pinned SDKs from PyPI) and names each failing field;
//! it also folds every stream with the SDK's own accumulator and compares
//! the fold with the one-shot answer.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
const APIS: [&str; 3] = ["chat", "responses", "anthropic"];

/// The venv python with the pinned SDKs (made on first use).
fn python() -> String {
    let out = Command::new("bash").arg("scripts/py-env.sh").current_dir(ROOT).output().unwrap();
    assert!(out.status.success(), "scripts/py-env.sh failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    stdout.lines().last().expect("py-env.sh prints the python path").to_string()
}

/// One `sift parse --request` run to validate.
struct Job {
    name: String,
    include_usage: bool,
    api: &'static str,
    stream: bool,
    wrapper: PathBuf,
    out: PathBuf,
}

/// The wrapper files of every output × request variant.
/// A request variant's wrapper file.
struct Wrapper {
    name: String,
    path: PathBuf,
    stream_only: bool,
    include_usage: bool,
}

fn wrappers(table: &Value, dir: &Path) -> Vec<Wrapper> {
    let mut files = Vec::new();
    for o in table["outputs"].as_array().unwrap() {
        let tools = o["request"]["tools"].as_array().cloned().unwrap_or_default();
        for r in table["requests"].as_array().unwrap() {
            if r["needs_tools"] == true && tools.is_empty() {
                continue;
            }
            let mut request = json!({"model": "sift-test", "messages": table["messages"]});
            for (k, v) in o["request"].as_object().unwrap().iter().chain(r["request"].as_object().unwrap()) {
                request[k] = v.clone();
            }
            let first_tool = tools.first().and_then(|t| t["function"]["name"].as_str()).unwrap_or("");
            if request["tool_choice"]["function"]["name"] == "$first_tool" {
                request["tool_choice"]["function"]["name"] = json!(first_tool);
            }
            let output = match r["output"].as_str() {
                Some(o) => json!(o.replace("$first_tool", first_tool)),
                None => o["output"].clone(),
            };
            let name = format!("{}+{}", o["name"].as_str().unwrap(), r["name"].as_str().unwrap());
            let wrapper = json!({
                "reasoning_parser": o["reasoning_parser"],
                "tool_call_parser": o["tool_call_parser"],
                "request": request,
                "output": output,
                "finish_reason": o.get("finish_reason").cloned().unwrap_or(json!("stop")),
                "prompt_tokens": 17,
                "created": 1_700_000_000,
                "id_seed": 1,
            });
            let path = dir.join(format!("{name}.json"));
            std::fs::write(&path, serde_json::to_string_pretty(&wrapper).unwrap()).unwrap();
            let include_usage = request["stream_options"]["include_usage"] == true;
            files.push(Wrapper { name, path, stream_only: r["stream_only"] == true, include_usage });
        }
    }
    files
}

/// Runs the jobs on a few threads; returns the failures.
fn run_all(jobs: &[Job]) -> Vec<String> {
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for part in jobs.chunks(jobs.len().div_ceil(4)) {
            let failures = &failures;
            s.spawn(move || {
                for j in part {
                    let mut args = vec!["parse", "--request", j.wrapper.to_str().unwrap(), "--api", j.api];
                    if j.stream {
                        args.push("--stream");
                    }
                    let out = Command::new(env!("CARGO_BIN_EXE_sift"))
                        .args(&args)
                        .current_dir(ROOT)
                        .output()
                        .unwrap();
                    if !out.status.success() {
                        let err = String::from_utf8_lossy(&out.stderr);
                        let body = String::from_utf8_lossy(&out.stdout);
                        failures.lock().unwrap().push(format!("{}: sift failed: {err}{body}", j.name));
                    }
                    std::fs::write(&j.out, &out.stdout).unwrap();
                }
            });
        }
    });
    failures.into_inner().unwrap()
}

#[test]
fn every_answer_validates_against_the_sdk_types() {
    let python = python();
    let table: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{ROOT}/crates/llmsift-cli/tests/data/sdk-cases.json")).unwrap(),
    )
    .unwrap();
    let dir = std::env::temp_dir().join(format!("sift-sdk-types-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    let mut jobs = Vec::new();
    for w in wrappers(&table, &dir) {
        for api in APIS {
            for stream in [false, true] {
                if w.stream_only && !stream {
                    continue;
                }
                let mode = if stream { "stream" } else { "one-shot" };
                jobs.push(Job {
                    name: format!("{} {api} {mode}", w.name),
                    include_usage: w.include_usage,
                    api,
                    stream,
                    wrapper: w.path.clone(),
                    out: dir.join(format!("{}.{api}.{mode}", w.name)),
                });
            }
        }
    }
    let failures = run_all(&jobs);
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // Each stream is paired with its one-shot answer (the job before it, if any).
    let manifest: String = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| {
            let before = i.checked_sub(1).map(|k| &jobs[k]).filter(|b| !b.stream && b.wrapper == j.wrapper);
            let oneshot = before.filter(|_| j.stream).map(|b| b.out.to_str().unwrap());
            let line =
                json!({"name": j.name, "api": j.api, "stream": j.stream, "path": j.out, "oneshot": oneshot, "include_usage": j.include_usage});
            line.to_string() + "\n"
        })
        .collect();
    let manifest_path = dir.join("manifest.jsonl");
    std::fs::write(&manifest_path, manifest).unwrap();
    let out = Command::new(&python)
        .arg("scripts/sdk-validate.py")
        .arg("--manifest")
        .arg(&manifest_path)
        .current_dir(ROOT)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}{}", String::from_utf8_lossy(&out.stderr));
    assert!(report.contains(&format!("{} documents, 0 with failures", jobs.len())), "{report}");
    std::fs::remove_dir_all(&dir).ok();
}
