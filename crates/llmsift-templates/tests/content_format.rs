//! Sift's content-format detection against vLLM 0.34's own
//! (`_detect_content_format`), as `scripts/oracle/content-format.py` wrote
//! it in `tests/data/content-format.jsonl`: every template under
//! `.assets/templates` and the snippets of `content-format-snippets.json`
//! (one per rule of `src/detect.rs`). Then what each form gives a template.

use std::path::{Path, PathBuf};

use llmsift_templates::{ChatTemplate, ContentFormat, ContentFormatOption, RenderRequest, TemplateSet};
use serde_json::{json, Value as Json};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn templates_dir() -> PathBuf {
    let assets = std::env::var_os("SIFT_ASSETS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.assets"));
    let dir = assets.join("templates");
    assert!(dir.is_dir(), "{} is missing: run scripts/fetch-assets.sh", dir.display());
    dir
}

fn format(name: &str) -> ContentFormat {
    serde_json::from_value(Json::from(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn detection_is_vllms() {
    let text = std::fs::read_to_string(data("content-format.jsonl")).unwrap();
    let rows: Vec<Json> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows[0]["vllm"], "0.34.0", "the file names the vLLM that answered");
    let snippets: Vec<Json> =
        serde_json::from_str(&std::fs::read_to_string(data("content-format-snippets.json")).unwrap())
            .unwrap();
    let (mut templates, mut differ) = (0, vec![]);
    for row in &rows[1..] {
        let (label, source) = match (row.get("template"), row.get("snippet")) {
            (Some(Json::String(file)), _) => {
                templates += 1;
                (file.clone(), std::fs::read_to_string(templates_dir().join(file)).unwrap())
            }
            (_, Some(Json::String(name))) => (name.clone(), row["source"].as_str().unwrap().to_string()),
            _ => panic!("a row names a template or a snippet: {row}"),
        };
        let want = format(row["format"].as_str().unwrap());
        // A template minijinja cannot compile still gets vLLM's answer.
        let got = match ChatTemplate::new(source.as_str()) {
            Ok(t) => t.detected_content_format(),
            Err(_) => llmsift_templates::detect_content_format(&source),
        };
        if got != want {
            differ.push(format!("{label}: vLLM {want}, Sift {got}"));
        }
    }
    assert_eq!(
        templates,
        std::fs::read_dir(templates_dir())
            .unwrap()
            .filter(|e| { e.as_ref().unwrap().path().extension().is_some_and(|x| x == "jinja") })
            .count(),
        "every template is labelled: rerun scripts/oracle/content-format.py"
    );
    assert_eq!(rows.len() - 1 - templates, snippets.len(), "every snippet is labelled: rerun the script");
    assert!(differ.is_empty(), "detections differing from vLLM's:\n{}", differ.join("\n"));
    let openai = rows[1..].iter().filter(|r| r["format"] == "openai").count();
    assert!(openai > 20 && openai < rows.len() - 20, "both answers are exercised");
}

/// A template that prints the content as it gets it.
const SHOW: &str = "{% for m in messages %}{{ m.role }}={{ m.content }}|{% endfor %}";
/// A template that iterates over content parts (detected `openai`).
const PARTS: &str = "{% for m in messages %}{{ m.role }}:{% if m.content is string %}{{ m.content }}\
    {% else %}{% for p in m.content %}[{{ p.text }}]{% endfor %}{% endif %}|{% endfor %}";

fn render(template: &str, option: Option<ContentFormatOption>, messages: Vec<Json>) -> String {
    let t = ChatTemplate::new(template).unwrap().with_content_format(option);
    t.render(&RenderRequest::new(messages)).unwrap()
}

#[test]
fn each_form_reaches_the_template() {
    let messages = || {
        vec![
            json!({"role": "system", "content": "Be terse."}),
            json!({"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
            json!({"role": "assistant", "content": null}),
        ]
    };
    // As given: the string stays a string, the list a list, null is dropped.
    assert_eq!(
        render(SHOW, None, messages()),
        "system=Be terse.|user=[{'type': 'text', 'text': 'a'}, {'type': 'text', 'text': 'b'}]|assistant=|"
    );
    assert_eq!(
        render(SHOW, Some(ContentFormatOption::String), messages()),
        "system=Be terse.|user=a\nb|assistant=|"
    );
    assert_eq!(
        render(SHOW, Some(ContentFormatOption::Openai), messages()),
        "system=[{'type': 'text', 'text': 'Be terse.'}]|user=[{'type': 'text', 'text': 'a'}, \
         {'type': 'text', 'text': 'b'}]|assistant=[]|"
    );
    // `auto` resolves per template, once: SHOW never iterates content, PARTS does.
    assert_eq!(
        ChatTemplate::new(SHOW)
            .unwrap()
            .with_content_format(Some(ContentFormatOption::Auto))
            .content_format(),
        Some(ContentFormat::String)
    );
    assert_eq!(
        render(PARTS, Some(ContentFormatOption::Auto), messages()),
        "system:[Be terse.]|user:[a][b]|assistant:|"
    );
    assert_eq!(render(PARTS, None, messages()), "system:Be terse.|user:[a][b]|assistant:|");
}

#[test]
fn a_set_settles_each_template() {
    let config = json!({"chat_template": [{"name": "default", "template": SHOW}, {"name": "tool_use", "template": PARTS}]});
    let set = TemplateSet::from_tokenizer_config(&config.to_string())
        .unwrap()
        .with_content_format(Some(ContentFormatOption::Auto));
    assert_eq!(set.select(None, false).unwrap().content_format(), Some(ContentFormat::String));
    assert_eq!(set.select(None, true).unwrap().content_format(), Some(ContentFormat::Openai));
}
