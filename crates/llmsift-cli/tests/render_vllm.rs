//! Sift's render against vLLM 0.34's own, without vLLM: the labelled cases
//! `scripts/scaleout-diff.py --render --write` recorded from vLLM's render
//! server (`tests/data/scaleout-vllm-render.jsonl`: the conversations, then
//! per template under `.assets/templates` and conversation vLLM's prompt
//! token ids, or its refusal), with vLLM's default content format `auto`.
//!
//! One `sift serve` with every template as a model (in the Qwen3
//! tokenizer's `tokenizer_config.json`, as the script configures it) and
//! `vllm_compat = true`, whose default content format is vLLM's `auto`:
//! each render must give vLLM's token ids, and refuse where vLLM refuses.
//! The same process started with `--chat-template-content-format string`
//! differs from vLLM on exactly the four renders where `auto` detects
//! `openai` and the template prints the list of parts (Gemma 4, Kimi K2).

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

mod proc;
use proc::{start, Proc};

fn serve(config: &Path, extra: &[&str]) -> Proc {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sift"));
    cmd.args(["serve", "--config"]).arg(config).args(extra);
    start(cmd, Duration::from_secs(120))
}

/// The labelled file: its header and cases.
fn cases() -> (Value, Vec<Value>) {
    let path = root().join("crates/llmsift-cli/tests/data/scaleout-vllm-render.jsonl");
    let text = std::fs::read_to_string(&path).expect("tests/data/scaleout-vllm-render.jsonl");
    let mut rows = text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap());
    let header = rows.next().expect("a header line");
    (header, rows.collect())
}

/// A `--config` with one model per template (named by the template's file).
fn config(dir: &Path, templates: &[String]) -> PathBuf {
    let tokenizer = llmsift_tokenizers::named_tokenizer_path("qwen3").expect("qwen3");
    let base: Value = serde_json::from_str(
        &std::fs::read_to_string(tokenizer.with_file_name("tokenizer_config.json")).expect("qwen3's config"),
    )
    .unwrap();
    let mut toml = String::from("host = \"127.0.0.1\"\nport = 0\n");
    for t in templates {
        let source = std::fs::read_to_string(root().join(".assets/templates").join(t))
            .unwrap_or_else(|e| panic!("{t}: {e} (scripts/fetch-assets.sh)"));
        let mut cfg = base.clone();
        cfg["chat_template"] = json!(source);
        let path = dir.join(format!("{t}.json"));
        std::fs::write(&path, cfg.to_string()).unwrap();
        toml += &format!(
            "\n[[models]]\nserved_model_name = {t:?}\nbackend = \"completions\"\n\
             backend_url = \"http://127.0.0.1:9\"\ntokenizer = {:?}\nchat_template = {:?}\nvllm_compat = true\n",
            tokenizer.display().to_string(),
            path.display().to_string()
        );
    }
    let path = dir.join("sift.toml");
    std::fs::write(&path, toml).unwrap();
    path
}

fn render(p: &Proc, body: &Value) -> (u16, Value) {
    let r = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
        .post(format!("http://{}/v1/chat/completions/render", p.addr))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .expect("render");
    let status = r.status().as_u16();
    (status, serde_json::from_str(&r.text().unwrap()).unwrap_or(Value::Null))
}

/// Each case against Sift: `Ok(())` when it gives vLLM's answer, else why not.
fn compare(p: &Proc, header: &Value, cases: &[Value]) -> Vec<(String, String)> {
    let mut differ = vec![];
    for c in cases {
        let (template, k) = (c["template"].as_str().unwrap(), c["conversation"].as_u64().unwrap() as usize);
        let mut body = header["conversations"][k].clone();
        body["model"] = json!(template);
        let (status, v) = render(p, &body);
        let label = format!("{template} conversation {k}");
        match (c.get("token_ids"), status) {
            (Some(want), 200) if v["token_ids"] == *want => {}
            (Some(_), 200) => differ.push((label, "token ids differ".into())),
            (Some(_), s) => differ.push((label, format!("Sift refuses ({s}: {v}), vLLM renders"))),
            (None, 400) => {}
            (None, s) => differ.push((label, format!("vLLM refuses, Sift answers {s}"))),
        }
    }
    differ
}

#[test]
fn sift_renders_vllms_token_ids() {
    let (header, cases) = cases();
    assert_eq!(header["content_format"], "auto");
    let mut templates: Vec<String> =
        cases.iter().map(|c| c["template"].as_str().unwrap().to_string()).collect();
    templates.dedup();
    let on_disk = std::fs::read_dir(root().join(".assets/templates"))
        .expect(".assets/templates (scripts/fetch-assets.sh)")
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "jinja"))
        .count();
    assert_eq!(templates.len(), on_disk, "every template has cases: rerun the script");
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &templates);

    let sift = serve(&cfg, &[]);
    let differ = compare(&sift, &header, &cases);
    let rendered = cases.iter().filter(|c| c.get("token_ids").is_some()).count();
    assert!(differ.is_empty(), "{} of {rendered} differ from vLLM: {differ:#?}", differ.len());
    assert!(rendered >= 250, "{rendered} renders");
    drop(sift);

    // The content format is what made the difference: as `string`, Sift
    // gives the text where vLLM's `auto` gave the list of parts.
    let string = serve(&cfg, &["--chat-template-content-format", "string"]);
    let differ = compare(&string, &header, &cases);
    // A system message (conversation 1) or an empty assistant content
    // before a call (3), printed whole by the template.
    let labels: Vec<&str> = differ.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(
        labels,
        [
            "google-gemma-4-31B-it-interleaved.jinja conversation 1",
            "google-gemma-4-31B-it.jinja conversation 1",
            "google-gemma-4-31B-it.jinja conversation 3",
            "moonshotai-Kimi-K2.jinja conversation 3",
        ],
        "{differ:#?}"
    );
    assert!(differ.iter().all(|(_, why)| why == "token ids differ"), "{differ:#?}");
}
