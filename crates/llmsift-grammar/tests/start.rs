//! Where the grammar starts: after reasoning ends, or at the first token.

use llmsift_grammar::{grammar_start, grammar_start_scan, GrammarStart};

const END: &str = "</think>";

#[test]
fn output_inside_reasoning_waits_for_the_end_marker() {
    let tail = "<|im_start|>assistant\n<think>\n";
    assert_eq!(grammar_start(Some(END), tail, true), GrammarStart::AfterMarker(END.into()));
    assert_eq!(grammar_start(Some(END), tail, true).marker(), Some(END));
    // A model that may or may not open reasoning itself: wait as well.
    assert_eq!(
        grammar_start(Some(END), "<|im_start|>assistant\n", true),
        GrammarStart::AfterMarker(END.into())
    );
}

#[test]
fn a_prompt_that_closed_reasoning_starts_now() {
    let tail = "<|im_start|>assistant\n<think>\n\n</think>\n\n";
    assert_eq!(grammar_start(Some(END), tail, true), GrammarStart::Now);
}

#[test]
fn hidden_reasoning_starts_now() {
    assert_eq!(grammar_start(Some(END), "<|im_start|>assistant\n<think>\n", false), GrammarStart::Now);
}

#[test]
fn without_a_reasoning_parser_starts_now() {
    assert_eq!(grammar_start(None, "<|im_start|>assistant\n<think>\n", true), GrammarStart::Now);
    assert_eq!(grammar_start(Some(""), "x", true), GrammarStart::Now);
}

#[test]
fn a_whole_prompt_is_read_from_its_end() {
    let prompt = "<think>old</think>answer<|im_end|>\n<|im_start|>assistant\n<think>\n";
    assert_eq!(
        grammar_start_scan(Some("<think>"), Some(END), prompt, true),
        GrammarStart::AfterMarker(END.into())
    );
    let closed = "<think>old</think>answer<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";
    assert_eq!(grammar_start_scan(Some("<think>"), Some(END), closed, true), GrammarStart::Now);
}
