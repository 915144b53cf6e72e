//! The detokenizer on a SentencePiece-style (Metaspace + byte fallback)
//! tokenizer built in the test: leading spaces and byte pieces come out exact.

use llmsift_tokenizers::TokenizerView;

/// A Llama-2-like tokenizer: `<unk>`, `<s>`, `</s>`, 256 byte pieces, a few words.
fn llama2_like() -> TokenizerView {
    let mut vocab = vec![r#""<unk>":0,"<s>":1,"</s>":2"#.to_string()];
    vocab.extend((0..=255u32).map(|b| format!(r#""<0x{b:02X}>":{}"#, 3 + b)));
    for (i, word) in ["▁Hello", "▁world", "!", "▁", "▁🦀"].iter().enumerate() {
        vocab.push(format!(r#""{word}":{}"#, 259 + i));
    }
    let json = format!(
        r#"{{"version":"1.0","truncation":null,"padding":null,
        "added_tokens":[{{"id":2,"content":"</s>","single_word":false,"lstrip":false,
          "rstrip":false,"normalized":false,"special":true}}],
        "normalizer":null,"pre_tokenizer":null,"post_processor":null,
        "decoder":{{"type":"Sequence","decoders":[
          {{"type":"Replace","pattern":{{"String":"▁"}},"content":" "}},
          {{"type":"ByteFallback"}},{{"type":"Fuse"}},
          {{"type":"Strip","content":" ","start":1,"stop":0}}]}},
        "model":{{"type":"BPE","dropout":null,"unk_token":"<unk>",
          "continuing_subword_prefix":null,"end_of_word_suffix":null,"fuse_unk":true,
          "byte_fallback":true,"ignore_merges":false,"vocab":{{{}}},"merges":[]}}}}"#,
        vocab.join(",")
    );
    TokenizerView::from_bytes(json.as_bytes()).expect("valid test tokenizer")
}

const HELLO: u32 = 259;
const WORLD: u32 = 260;
const BANG: u32 = 261;
const SPACE: u32 = 262;
const CRAB: u32 = 263;
const EOS: u32 = 2;
/// The byte piece `<0xNN>`.
fn byte(b: u8) -> u32 {
    3 + u32::from(b)
}

#[test]
fn leading_spaces_are_exact() {
    let t = llama2_like();
    let ids = [HELLO, WORLD, BANG, SPACE, CRAB, EOS];
    assert_eq!(t.decode(&ids), "Hello world!  🦀</s>");
    let mut d = t.detokenizer();
    let chunks: Vec<_> = ids.iter().map(|&id| d.push(id)).collect();
    assert_eq!(
        chunks,
        [Some("Hello"), Some(" world"), Some("!"), Some(" "), Some(" 🦀"), Some("</s>")]
            .map(|c| c.map(String::from))
    );
    assert_eq!(d.finish(), "");
}

#[test]
fn byte_fallback_pieces_are_held_until_complete() {
    let t = llama2_like();
    // "é" = C3 A9, "🧪" = F0 9F A7 AA.
    let ids = [HELLO, byte(0xC3), byte(0xA9), SPACE, byte(0xF0), byte(0x9F), byte(0xA7), byte(0xAA)];
    assert_eq!(t.decode(&ids), "Helloé 🧪");
    let mut d = t.detokenizer();
    let chunks: Vec<_> = ids.iter().map(|&id| d.push(id)).collect();
    let s = |x: &str| Some(x.to_string());
    assert_eq!(chunks, [s("Hello"), None, s("é"), s(" "), None, None, None, s("🧪")]);
}

#[test]
fn a_truncated_stream_flushes_what_decode_shows() {
    let t = llama2_like();
    let ids = [WORLD, byte(0xF0), byte(0x9F)];
    let mut d = t.detokenizer();
    let released: String = d.push_ids(&ids);
    assert_eq!(released, "world");
    assert_eq!(released + &d.finish(), t.decode(&ids));
}
