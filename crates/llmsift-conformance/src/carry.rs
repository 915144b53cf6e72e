//! The carried-state checker: a stream whose parser is saved and resumed
//! (`llmsift_core::state`) between every two deltas must give exactly the
//! deltas, in the same order of parts, of the same stream uninterrupted.
//!
//! The saving and resuming is the caller's (`carry`), so the same check
//! runs over a bare serde round trip or the sealed token a server sends.

use crate::answer::delta_json;
use llmsift_core::{Delta, Parser, ParserFactory, Piece, Request};

/// A delta as JSON with the order of its parts (what a dialect built from
/// its pieces shows), for an exact comparison.
fn shown(d: &Delta) -> String {
    let order: Vec<String> = d
        .pieces()
        .map(|p| match p {
            Piece::Reasoning(s) => format!("r{}", s.len()),
            Piece::Content(s) => format!("c{}", s.len()),
            Piece::Call(c) => format!("t{}", c.index),
        })
        .collect();
    format!("{} {}", delta_json(d), order.join(","))
}

/// Streams `chunks` twice, once carrying the parser through `carry` before
/// every delta and before finishing; `Err` says where the two first differ.
pub fn check_carried(
    f: &ParserFactory,
    req: &Request,
    chunks: &[&str],
    carry: &mut dyn FnMut(&Parser) -> Result<Parser, String>,
) -> Result<(), String> {
    let mut whole = f.parser(req);
    let mut moved = f.parser(req);
    for (i, c) in chunks.iter().map(Some).chain([None]).enumerate() {
        moved = carry(&moved).map_err(|e| format!("before delta {i}: {e}"))?;
        let (a, b) = match c {
            Some(c) => (whole.push(c, None), moved.push(c, None)),
            None => (whole.finish(), moved.finish()),
        };
        let (a, b) = (shown(&a), shown(&b));
        if a != b {
            return Err(format!("delta {i} ({c:?}): uninterrupted {a}, carried {b}"));
        }
    }
    Ok(())
}
