//! (b) The argument JSON watermark. Arbitrary bytes fed to `JsonScanner`
//! whole and in cuts: the same verdict, watermark and repair however cut;
//! the watermark never falls and never passes what was fed; the watermarked
//! prefix plus the repair is always a JSON document serde_json accepts; a
//! document the scanner calls complete is one serde_json accepts, and one
//! serde_json accepts is never called invalid.

#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use llmsift_core::json::{JsonScanner, Scan};

/// serde_json's answer, minus its recursion limit (128, below the
/// scanner's), its refusal of lone surrogate escapes (Python reads them)
/// and of numbers out of f64's range.
fn serde_ok(b: &[u8]) -> Option<bool> {
    // A surrogate escape (`\ud800`, lone or not) becomes a plain one.
    let mut b = b.to_vec();
    for i in 0..b.len().saturating_sub(5) {
        if b[i] == b'\\' && b[i + 1] == b'u' && matches!(b[i + 2], b'd' | b'D') && matches!(b[i + 3], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F') {
            b[i + 2] = b'0';
        }
    }
    match serde_json::from_slice::<serde_json::Value>(&b) {
        Ok(_) => Some(true),
        // serde_json also refuses numbers out of f64's range; JSON does not.
        Err(e) if ["recursion", "surrogate", "out of range"].iter().any(|m| e.to_string().contains(m)) => None,
        Err(_) => Some(false),
    }
}

fn run(data: &[u8], cuts: &[&[u8]]) -> (JsonScanner, usize) {
    let mut s = JsonScanner::new();
    let (mut used, mut last_safe) = (0, 0);
    for c in cuts {
        let r = s.feed(c);
        assert!(s.safe() >= last_safe && s.safe() <= s.fed(), "watermark moved back or ahead");
        last_safe = s.safe();
        match r {
            Scan::More => used += c.len(),
            Scan::Complete { used: u } | Scan::Invalid { at: u } => {
                used += u;
                break;
            }
        }
    }
    let _ = data;
    (s, used)
}

fuzz_target!(|data: &[u8]| {
    // The engine feeds the scanner `&str` text only.
    let text = String::from_utf8_lossy(data);
    let data = text.as_bytes();
    let (whole, used) = run(data, &[data]);
    let mut cuts = vec![];
    let mut seed = common::hash(data) | 1;
    let mut at = 0;
    while at < data.len() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let end = (at + 1 + (seed % 9) as usize).min(data.len());
        cuts.push(&data[at..end]);
        at = end;
    }
    let (cut, cut_used) = run(data, &cuts);
    assert_eq!(
        (whole.safe(), whole.is_complete(), whole.is_invalid(), whole.repair(), used),
        (cut.safe(), cut.is_complete(), cut.is_invalid(), cut.repair(), cut_used),
        "the verdict depends on the cuts"
    );
    if let Some(rep) = whole.repair() {
        let mut doc = data[..whole.safe()].to_vec();
        doc.extend_from_slice(rep.as_bytes());
        assert_ne!(serde_ok(&doc), Some(false), "prefix + repair is not JSON: {:?}", String::from_utf8_lossy(&doc));
    }
    if whole.is_complete() {
        assert_ne!(serde_ok(&data[..used]), Some(false), "complete but not JSON");
    }
    if serde_ok(data) == Some(true) && whole.depth() < llmsift_core::json::MAX_DEPTH {
        assert!(!whole.is_invalid(), "JSON called invalid: {:?}", String::from_utf8_lossy(data));
    }
});
