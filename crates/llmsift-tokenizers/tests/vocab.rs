//! Marker facts on the real vocabularies: which markers are one token.

mod common;

use common::tok;
use llmsift_core::Vocab;

/// Asserts `marker` is one token with id `id` and that it encodes to that id.
fn single(name: &str, marker: &str, id: u32) {
    let t = tok(name);
    assert_eq!(t.token_id(marker), Some(id), "{name}: token_id({marker:?})");
    assert_eq!(t.encode(marker).unwrap(), [id], "{name}: encode({marker:?})");
    assert_eq!(t.decode(&[id]), marker, "{name}: decode([{id}])");
}

/// Asserts `marker` is not one token and encodes to `pieces` tokens.
fn split(name: &str, marker: &str, pieces: usize) {
    let t = tok(name);
    assert_eq!(t.token_id(marker), None, "{name}: token_id({marker:?})");
    assert_eq!(t.encode(marker).unwrap().len(), pieces, "{name}: encode({marker:?})");
}

#[test]
fn qwen3_markers() {
    single("qwen3", "<think>", 151667);
    single("qwen3", "</think>", 151668);
    single("qwen3", "<tool_call>", 151657);
    single("qwen3", "</tool_call>", 151658);
    // Qwen3-Coder's XML parameters are plain text.
    split("qwen3", "<parameter=", 3);
    // A byte-level vocab entry ("}}Ċ"), not an added token.
    single("qwen3", "}}\n", 11248);
    assert_eq!(tok("qwen3").token_to_id("}}\n"), None);
    assert_eq!(tok("qwen3").token_to_id("}}Ċ"), Some(11248));
    split("qwen3", "<|channel|>", 5);
    // What `skip_special_tokens` removes: special added tokens only.
    let t = tok("qwen3");
    assert!(t.is_special(151645), "<|im_end|> is special");
    assert!(!t.is_special(151657), "<tool_call> is an added token, not special");
    assert!(!t.is_special(11248), "a vocabulary entry");
}

#[test]
fn deepseek_v3_markers() {
    single("deepseek_v3", "<｜tool▁calls▁begin｜>", 128806);
    single("deepseek_v3", "<｜tool▁calls▁end｜>", 128807);
    single("deepseek_v3", "<｜tool▁call▁begin｜>", 128808);
    single("deepseek_v3", "<｜tool▁call▁end｜>", 128809);
    single("deepseek_v3", "<｜tool▁sep｜>", 128814);
    // V3 (unlike R1 / V3.1) has no think tokens.
    split("deepseek_v3", "<think>", 3);
    split("deepseek_v3", "</think>", 3);
}

#[test]
fn deepseek_r1_markers() {
    single("deepseek_r1", "<think>", 128798);
    single("deepseek_r1", "</think>", 128799);
    single("deepseek_r1", "<｜tool▁calls▁begin｜>", 128806);
    single("deepseek_r1", "<｜tool▁sep｜>", 128814);
}

#[test]
fn gptoss_markers() {
    single("gptoss", "<|start|>", 200006);
    single("gptoss", "<|end|>", 200007);
    single("gptoss", "<|message|>", 200008);
    single("gptoss", "<|channel|>", 200005);
    single("gptoss", "<|call|>", 200012);
    split("gptoss", "<think>", 3);
}

#[test]
fn llama3_1_markers() {
    single("llama3_1", "<|eot_id|>", 128009);
    single("llama3_1", "<|start_header_id|>", 128006);
    // The @lenml "llama3_1" package ships Llama 3.0's added tokens: 128010 is
    // a reserved token there, so <|python_tag|> is plain text.
    split("llama3_1", "<|python_tag|>", 6);
}

/// Llama 3.1/3.2/3.3's published added tokens (the models' `tokenizer_config.json`
/// `added_tokens_decoder`): every marker a Llama parser reads is one token.
#[test]
fn llama3_2_markers() {
    single("llama3_2", "<|python_tag|>", 128010);
    single("llama3_2", "<|eom_id|>", 128008);
    single("llama3_2", "<|eot_id|>", 128009);
    single("llama3_2", "<|start_header_id|>", 128006);
    single("llama3_2", "<|end_header_id|>", 128007);
    single("llama3_2", "<|finetune_right_pad_id|>", 128004);
}

#[test]
fn encode_recognises_markers_inside_text() {
    let t = tok("qwen3");
    let ids = t.encode("a</think>b").unwrap();
    assert!(ids.contains(&151668), "{ids:?}");
    assert_eq!(t.decode(&ids), "a</think>b");
}

#[test]
fn empty_and_multi_token_markers_are_none() {
    for name in llmsift_tokenizers::TOKENIZER_NAMES {
        let t = tok(name);
        assert_eq!(t.token_id(""), None, "{name}");
        assert_eq!(t.token_id("<tool_call>\n{\"name\""), None, "{name}");
    }
}

/// Every test vocabulary carries exactly the added tokens its model publishes
/// (`tests/published_added_tokens.tsv`, read off the models' own
/// `tokenizer_config.json`; reserved and placeholder tokens left out): each
/// listed marker is that one token, and nothing the list lacks is an added
/// token of the asset, so a stand-in vocabulary cannot drift from its model.
#[test]
fn vocabularies_match_their_models_published_added_tokens() {
    let table = include_str!("published_added_tokens.tsv");
    let rows: Vec<(&str, u32, &str)> = table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0], f[1].parse().expect("id"), f[2])
        })
        .collect();
    for name in llmsift_tokenizers::TOKENIZER_NAMES {
        let listed: Vec<_> = rows.iter().filter(|r| r.0 == name).collect();
        assert!(!listed.is_empty(), "{name}: no published added tokens listed");
        let t = tok(name);
        for (_, id, content) in &listed {
            assert_eq!(t.token_to_id(content), Some(*id), "{name}: {content:?}");
        }
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(llmsift_tokenizers::named_tokenizer_path(name).unwrap()).unwrap(),
        )
        .unwrap();
        for a in json["added_tokens"].as_array().unwrap() {
            let c = a["content"].as_str().unwrap();
            if c.contains("reserved") || c.contains("place▁holder") {
                continue;
            }
            assert!(
                listed.iter().any(|r| r.2 == c),
                "{name}: {c:?} is an added token its model does not publish"
            );
        }
    }
}
