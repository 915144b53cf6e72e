//! The exported grammars against real vocabularies: the output is encoded
//! by the model's own tokenizer (HuggingFace `tokenizers`) and the ids are
//! fed to llguidance's matcher. Qwen3 holds `<tool_call>` as an ordinary
//! (non-special) token; gpt-oss holds harmony's markers as special tokens,
//! so its grammar asks for them as tokens. Skipped, saying so, when
//! `scripts/fetch-assets.sh` has not been run.
#![cfg(feature = "llguidance")]

mod common;

use common::two_tools;
use llmsift_grammar::llg::{Checker, TopLevelGrammar};
use llmsift_grammar::{structural_tag, structural_tag_lark, Family, LarkOptions, StrictLevel};
use std::path::PathBuf;

fn asset(name: &str) -> Option<PathBuf> {
    let root = std::env::var_os("SIFT_ASSETS")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.assets"));
    let path = root.join("tokenizers").join(name).join("tokenizer.json");
    if path.exists() {
        Some(path)
    } else {
        eprintln!("skipped: {} is missing (run scripts/fetch-assets.sh)", path.display());
        None
    }
}

struct Vocab {
    tokenizer: tokenizers::Tokenizer,
    checker: Checker,
}

fn vocab(name: &str, eos: &str) -> Option<Vocab> {
    let path = asset(name)?;
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    Some(Vocab {
        tokenizer: tokenizers::Tokenizer::from_file(&path).unwrap(),
        checker: Checker::from_tokenizer_json(&json, eos).unwrap(),
    })
}

impl Vocab {
    fn ids(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text, false).unwrap().get_ids().to_vec()
    }

    fn accepts(&self, lark: &str, text: &str) -> bool {
        self.checker.accepts_tokens(TopLevelGrammar::from_lark(lark.to_string()), &self.ids(text)).unwrap()
    }
}

#[test]
fn qwen3_hermes_calls_in_real_tokens() {
    let Some(v) = vocab("qwen3", "<|im_end|>") else { return };
    let tag = structural_tag(Family::Hermes, &two_tools(None, None), StrictLevel::Parameter).unwrap();
    let lark = structural_tag_lark(&tag, &LarkOptions::text());
    let call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    assert_eq!(v.ids("<tool_call>").len(), 1, "<tool_call> is one token");
    assert!(v.accepts(&lark, call));
    assert!(v.accepts(&lark, &format!("Let me check.\n\n{call}")));
    assert!(!v.accepts(&lark, &call.replace("get_weather", "get_stock")));
    assert!(!v.accepts(&lark, &call.replace("\"Paris\"", "12")));
}

#[test]
fn gpt_oss_harmony_calls_in_real_special_tokens() {
    let Some(v) = vocab("gptoss", "<|return|>") else { return };
    let tag = structural_tag(Family::Openai, &two_tools(None, None), StrictLevel::Parameter).unwrap();
    let lark = structural_tag_lark(&tag, &LarkOptions { special_tokens: true, after: None });
    let call = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}<|call|>";
    assert_eq!(v.ids("<|channel|>").len(), 1, "<|channel|> is one special token");
    let out = format!("<|channel|>analysis<|message|>The user wants weather.<|end|><|start|>assistant{call}");
    assert!(v.accepts(&lark, &out));
    assert!(!v.accepts(&lark, &call.replace("get_weather", "get_stock")));
    assert!(!v.accepts(&lark, &call.replace("\"Paris\"", "true")));
}
