//! A detokenizer carried between processes: resumed from its window after
//! every id, it releases exactly the text of one uninterrupted, and the
//! window stays a few ids long.

use llmsift_tokenizers::{Detokenizer, TokenizerView, TOKENIZER_NAMES};

const TEXT: &str =
    "Plain words, ünïcödé, emoji 🦀🧪 and 漢字 split over byte tokens; <think>markers</think> too.";

#[test]
fn a_resumed_window_releases_the_same_text() {
    for name in TOKENIZER_NAMES {
        let view =
            TokenizerView::named(name).unwrap_or_else(|e| panic!("{name}: {e} (scripts/fetch-assets.sh)"));
        let ids = view.encode(TEXT).unwrap();
        for skip in [false, true] {
            let mut whole = view.detokenizer_with(skip);
            let mut moved = view.detokenizer_with(skip);
            let (mut a, mut b, mut widest) = (String::new(), String::new(), 0);
            for &id in &ids {
                let (window, read) = moved.window();
                widest = widest.max(window.len());
                moved = Detokenizer::resume(&view, skip, window.to_vec(), read).expect("its own window");
                a.extend(whole.push(id));
                b.extend(moved.push(id));
            }
            a.push_str(&whole.finish());
            b.push_str(&moved.finish());
            assert_eq!(a, b, "{name}, skip {skip}");
            assert!(widest <= 8, "{name}: a window of {widest} ids");
        }
    }
}

#[test]
fn a_window_that_is_not_one_is_refused() {
    let view = TokenizerView::named("qwen3").unwrap();
    assert!(Detokenizer::resume(&view, false, vec![1, 2], 3).is_none());
    assert!(Detokenizer::resume(&view, false, vec![1, 2], 2).is_some());
}

/// vLLM's window keeps the last released ids as a prefix on every decoder
/// (`prev_token_ids[prefix_offset..read_offset]`); a concatenating decoder
/// resumed from it releases only the text after it, never the prefix again.
#[test]
fn a_window_with_a_prefix_releases_only_what_follows() {
    for name in TOKENIZER_NAMES {
        let view = TokenizerView::named(name).unwrap();
        let ids = view.encode(TEXT).unwrap();
        let whole = view.decode(&ids);
        for cut in 1..ids.len() {
            let before = view.decode(&ids[..cut]);
            if before.ends_with(char::REPLACEMENT_CHARACTER) {
                continue;
            }
            let from = cut.saturating_sub(3);
            let mut d = Detokenizer::resume(&view, false, ids[from..cut].to_vec(), cut - from).unwrap();
            let mut got = d.push_ids(&ids[cut..]);
            got.push_str(&d.finish());
            assert_eq!(before + &got, whole, "{name}, cut at {cut}");
        }
    }
}
