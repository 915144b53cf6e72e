//! The checks that make a compiled format safe to stream: no two terminals
//! with one spelling in a state, every state reachable, no `reprocess`
//! loop; and the lexer's per-state needle (the bytes a marker may start
//! with, and follow with).

use crate::format::compiled::*;
use crate::FormatError;

pub(super) fn check_ambiguous(state: &str, sp: &[(Box<[u8]>, TermId, Trans)]) -> Result<(), FormatError> {
    for (i, a) in sp.iter().enumerate() {
        for b in &sp[i + 1..] {
            // A spelling that extends another is resolved by leftmost-longest
            // matching; the same spelling for two terminals cannot be.
            if a.1 != b.1 && a.0 == b.0 {
                return Err(FormatError::Ambiguous {
                    state: state.to_string(),
                    first: String::from_utf8_lossy(&a.0).into_owned(),
                    second: String::from_utf8_lossy(&b.0).into_owned(),
                });
            }
        }
    }
    Ok(())
}

pub(super) fn needle_for(sp: &[(Box<[u8]>, TermId, Trans)]) -> Needle {
    let mut firsts: Vec<u8> = sp.iter().map(|s| s.0[0]).collect();
    firsts.sort_unstable();
    firsts.dedup();
    match firsts[..] {
        [] => Needle::None,
        [a] => Needle::One(a),
        [a, b] => Needle::Two(a, b),
        [a, b, c] => Needle::Three(a, b, c),
        _ => {
            let mut set = Box::new([false; 256]);
            for f in firsts {
                set[f as usize] = true;
            }
            Needle::Set(set)
        }
    }
}

/// The bytes that may follow a spelling's first byte (see `State::second`).
pub(super) fn seconds_for(sp: &[(Box<[u8]>, TermId, Trans)]) -> ByteSet {
    let mut set = ByteSet::default();
    for (s, _, _) in sp {
        match s.get(1) {
            Some(&b) => set.insert(b),
            None => return ByteSet::ALL,
        }
    }
    set
}

pub(super) fn check_reachable(f: &Format, roots: &[StateId]) -> Result<(), FormatError> {
    let mut seen = vec![false; f.states.len()];
    let mut stack = vec![f.initial];
    stack.extend_from_slice(roots);
    stack.extend(f.switches.iter().map(|s| s.2));
    stack.extend(f.prompt_enter.iter().map(|s| s.1));
    if let Some(c) = f.states.iter().position(|s| s.name == "content") {
        stack.push(c as StateId);
    }
    while let Some(s) = stack.pop() {
        if std::mem::replace(&mut seen[s as usize], true) {
            continue;
        }
        let st = &f.states[s as usize];
        stack.extend(st.spellings.iter().map(|x| x.2.to));
        stack.extend(st.spellings.iter().filter_map(|x| x.2.hold));
        stack.extend(st.then);
        stack.extend(st.hold);
        if let Mode::Envelope(e) = &st.mode {
            stack.push(e.done);
            stack.push(e.fail);
        }
        if let Mode::Pythonic(e) = &st.mode {
            stack.push(e.done);
            stack.push(e.fail);
        }
        if let Mode::Header(h) = &st.mode {
            stack.extend(h.routes.iter().map(|r| r.to));
        }
    }
    match seen.iter().position(|s| !s) {
        Some(i) => Err(FormatError::Unreachable { state: f.states[i].name.clone() }),
        None => Ok(()),
    }
}

pub(super) fn check_reprocess(f: &Format) -> Result<(), FormatError> {
    for (si, st) in f.states.iter().enumerate() {
        for (sp, _, tr) in &st.spellings {
            if !tr.reprocess {
                continue;
            }
            // Follow the chain of states that reprocess the same spelling.
            let mut cur = tr.to;
            for _ in 0..=f.states.len() {
                if cur as usize == si {
                    return Err(FormatError::ReprocessCycle { state: st.name.clone() });
                }
                match f.states[cur as usize].spellings.iter().find(|(s, _, t)| s == sp && t.reprocess) {
                    Some((_, _, t)) => cur = t.to,
                    None => break,
                }
            }
        }
    }
    Ok(())
}
