//! The incremental detokenizer on the real tokenizers: streamed output equals
//! the one-shot decode, and partial UTF-8 is held back.

mod common;

use common::tok;
use llmsift_tokenizers::{TokenizerView, TOKENIZER_NAMES};

const TEXTS: &[&str] = &[
    "Hello, world! The quick brown fox jumps over the lazy dog.",
    "中文测试：你好，世界。日本語のテキストも。한국어 텍스트.",
    "emoji 🦀🧪👩‍👩‍👧 and rare 𠀀𝔘 chars, ünïcödé façade, ½ → ∞",
    "fn main() {\n    let v: Vec<u32> = (0..10).collect();\n\tprintln!(\"{v:?}\");\n}\n",
    "  leading  and trailing spaces  \n\n\n  ",
    // Qwen3 / Hermes style reasoning + tool call.
    "<think>\nThe user wants the weather in 巴黎. I'll call get_weather 🌦️.\n</think>\n\n\
     <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"°C\"}}\n</tool_call>",
    // DeepSeek style tool call.
    "Let me check.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n\
     ```json\n{\"city\": \"東京\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    // gpt-oss harmony style.
    "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary \
     to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Zürich\"}<|call|>",
];

/// Streams `ids` one at a time; returns the released chunks (finish included).
fn stream(t: &TokenizerView, ids: &[u32]) -> Vec<String> {
    let mut d = t.detokenizer();
    let mut chunks: Vec<String> = ids.iter().filter_map(|&id| d.push(id)).collect();
    chunks.push(d.finish());
    chunks
}

#[test]
fn streamed_text_equals_decode_on_every_tokenizer() {
    for name in TOKENIZER_NAMES {
        let t = tok(name);
        for text in TEXTS {
            let ids = t.encode(text).unwrap();
            let decoded = t.decode(&ids);
            let chunks = stream(t, &ids);
            assert_eq!(chunks.concat(), decoded, "{name}: {text:?}");
            // No replacement char leaks from a split multi-byte sequence.
            assert!(chunks.iter().all(|c| !c.contains('\u{FFFD}')), "{name}: {chunks:?}");
            // These texts are NFC and known to round-trip on these tokenizers.
            assert_eq!(&decoded, text, "{name}: round trip");
        }
    }
}

#[test]
fn push_ids_equals_decode_in_uneven_batches() {
    let text = TEXTS.concat();
    for name in TOKENIZER_NAMES {
        let t = tok(name);
        let ids = t.encode(&text).unwrap();
        let (mut d, mut out, mut rest) = (t.detokenizer(), String::new(), &ids[..]);
        // Batches of 1, 2, 3, 4, 1, 2, ...
        for size in (1..=4).cycle() {
            if rest.is_empty() {
                break;
            }
            let (batch, tail) = rest.split_at(size.min(rest.len()));
            out += &d.push_ids(batch);
            rest = tail;
        }
        out += &d.finish();
        assert_eq!(out, t.decode(&ids), "{name}");
    }
}

#[test]
fn holds_back_a_char_split_over_byte_tokens() {
    for name in TOKENIZER_NAMES {
        let t = tok(name);
        let ids = t.encode("a𠀀b").unwrap();
        let mut d = t.detokenizer();
        let mut released = Vec::new();
        for &id in &ids {
            released.push(d.push(id));
        }
        // The rare char takes several byte tokens: at least one push holds.
        assert!(released.iter().any(Option::is_none), "{name}: {released:?}");
        let text: String = released.into_iter().flatten().collect::<String>() + &d.finish();
        assert_eq!(text, "a𠀀b", "{name}");
    }
}

#[test]
fn lone_partial_bytes_are_held_then_flushed_by_finish() {
    let t = tok("qwen3");
    // "𠀀" is [ð, łĢ, Ģ] in Qwen3: the first two ids alone are incomplete UTF-8.
    let ids = t.encode("𠀀").unwrap();
    assert_eq!(ids.len(), 3, "{ids:?}");
    let mut d = t.detokenizer();
    assert_eq!(d.push(ids[0]), None);
    assert_eq!(d.push(ids[1]), None);
    assert!(d.has_pending());
    // A stream cut here flushes exactly what decode shows.
    assert_eq!(d.clone().finish(), t.decode(&ids[..2]));
    assert_eq!(d.push(ids[2]).as_deref(), Some("𠀀"));
    assert!(!d.has_pending());
    assert_eq!(d.finish(), "");
}

#[test]
fn a_generated_replacement_char_is_not_lost() {
    let t = tok("qwen3");
    let ids = t.encode("bad \u{FFFD}").unwrap();
    assert_eq!(stream(t, &ids).concat(), "bad \u{FFFD}");
}

/// vLLM's windowed algorithm written plainly (two decodes of the window per
/// id): the reference the detokenizer's released chunks must equal, chunk
/// for chunk, also where it decodes only the held ids.
fn windowed(t: &TokenizerView, ids: &[u32], skip: bool) -> Vec<Option<String>> {
    let (mut window, mut read, mut prefix) = (Vec::new(), 0, String::new());
    let mut out = Vec::new();
    for &id in ids {
        window.push(id);
        let text = t.decode_with(&window, skip);
        if text.len() <= prefix.len() || text.ends_with('\u{FFFD}') {
            out.push(None);
            continue;
        }
        out.push(Some(text[prefix.len()..].to_string()));
        window.drain(..read);
        read = window.len();
        prefix = t.decode_with(&window, skip);
    }
    out
}

#[test]
fn released_chunks_equal_the_windowed_reference() {
    let text = TEXTS.concat() + "bad \u{FFFD} end";
    let mut concatenating = 0;
    for name in TOKENIZER_NAMES {
        let t = tok(name);
        concatenating += usize::from(t.decodes_by_concatenation());
        let ids = t.encode(&text).unwrap();
        for skip in [false, true] {
            let mut d = t.detokenizer_with(skip);
            let got: Vec<Option<String>> = ids.iter().map(|&id| d.push(id)).collect();
            assert_eq!(got, windowed(t, &ids, skip), "{name}, skip {skip}");
        }
    }
    // The byte-level tokenizers take the one-decode path.
    assert!(concatenating > 0);
}
