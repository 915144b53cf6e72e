//! The regular expressions of response templates, as Python's `regex` module
//! reads them with `DOTALL` (transformers compiles every anchor and
//! `tag_pattern` so), run by a backtracking matcher that also reports
//! whether its answer looked at the end of the text it was given.
//!
//! That report is what makes streaming exact: an attempt at a position that
//! never read past the end, nor asked an end assertion, gives the same
//! answer whatever text follows, so it can be acted on now; one that did is
//! retried when more text arrives (or at the end of the output). Python's
//! leftmost-first preference is kept: alternatives in order, greedy and lazy
//! quantifiers as written, the first success wins.
//!
//! Invariant: a pattern outside the supported syntax (lookbehind,
//! back-references, atomic groups, possessive quantifiers, inline flags
//! other than `s`, `\p{…}` classes) is refused with the reason, never read
//! differently. Unicode classes (`\d`, `\w`, `\s`) use Rust's character
//! properties (Python's `str.isspace` for `\s`); ASCII reads exactly.

pub(crate) use super::pattern::PatternError;
use super::pattern::{fails_onward, first_chars, is_word, Class, Look, Node, P};

#[derive(Debug, Clone)]
enum Inst {
    Char(char),
    Any,
    Class(Class),
    Look(Look),
    /// Try the first target, then the second.
    Split(usize, usize),
    Jmp(usize),
    Save(usize),
    /// A lookahead whose body starts at the next instruction and ends with
    /// `LookEnd`; matching continues at `next`.
    LookAhead {
        neg: bool,
        next: usize,
    },
    LookEnd,
    Match,
}

/// A compiled pattern.
#[derive(Debug, Clone)]
pub(crate) struct Regex {
    prog: Vec<Inst>,
    /// Named groups and their group numbers.
    names: Vec<(String, usize)>,
    groups: usize,
    /// Characters a match can start with (`None`: any, or none needed).
    first: Option<Vec<char>>,
    /// Literal alternatives, longest first, when the pattern is just those
    /// (matched directly, with the same answers as the program).
    literals: Option<Vec<String>>,
    /// A failure at one position means failure at every later one
    /// (see [`fails_onward`]).
    fails_onward: bool,
}

/// A match: byte span and the named groups that took part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub start: usize,
    pub end: usize,
    pub named: Vec<(String, String)>,
}

/// The outcome of a match attempt at one position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Attempt {
    /// Final whatever follows.
    Match(Found),
    /// No match here, whatever follows.
    Fail,
    /// The answer depends on text not seen yet.
    Pending,
}

/// The text an attempt reads: `hay[..]` with `base` bytes of the output
/// before it (for `^`), the character before it (for `\b`), and whether its
/// end is the end of the output.
#[derive(Clone, Copy)]
pub(crate) struct Text<'a> {
    pub hay: &'a str,
    pub at_origin: bool,
    pub before: Option<char>,
    pub eos: bool,
}

const MAX_PROG: usize = 20_000;

/// Above this many (instruction, position) pairs the matcher's record of
/// visited states is a set rather than a bitmap (8 MiB).
const MAX_VISITED_BITS: usize = 1 << 26;

struct Emit {
    prog: Vec<Inst>,
}

impl Emit {
    fn push(&mut self, i: Inst) -> Result<usize, PatternError> {
        if self.prog.len() >= MAX_PROG {
            return Err("the pattern is too large".into());
        }
        self.prog.push(i);
        Ok(self.prog.len() - 1)
    }

    fn node(&mut self, n: &Node) -> Result<(), PatternError> {
        match n {
            Node::Empty => {}
            Node::Char(c) => {
                self.push(Inst::Char(*c))?;
            }
            Node::Any => {
                self.push(Inst::Any)?;
            }
            Node::Class(k) => {
                self.push(Inst::Class(k.clone()))?;
            }
            Node::Look(l) => {
                self.push(Inst::Look(*l))?;
            }
            Node::Group(n, None) => self.node(n)?,
            Node::Group(n, Some(g)) => {
                self.push(Inst::Save(2 * g))?;
                self.node(n)?;
                self.push(Inst::Save(2 * g + 1))?;
            }
            Node::LookAhead(n, neg) => {
                let at = self.push(Inst::LookAhead { neg: *neg, next: 0 })?;
                self.node(n)?;
                self.push(Inst::LookEnd)?;
                let next = self.prog.len();
                self.prog[at] = Inst::LookAhead { neg: *neg, next };
            }
            Node::Concat(v) => {
                for x in v {
                    self.node(x)?;
                }
            }
            Node::Alt(v) => {
                let mut jumps = vec![];
                for (i, a) in v.iter().enumerate() {
                    if i + 1 < v.len() {
                        let split = self.push(Inst::Split(0, 0))?;
                        self.node(a)?;
                        jumps.push(self.push(Inst::Jmp(0))?);
                        let next = self.prog.len();
                        self.prog[split] = Inst::Split(split + 1, next);
                    } else {
                        self.node(a)?;
                    }
                }
                let end = self.prog.len();
                for j in jumps {
                    self.prog[j] = Inst::Jmp(end);
                }
            }
            Node::Repeat { node, min, max, greedy } => {
                for _ in 0..*min {
                    self.node(node)?;
                }
                match max {
                    None => {
                        let split = self.push(Inst::Split(0, 0))?;
                        self.node(node)?;
                        self.push(Inst::Jmp(split))?;
                        let next = self.prog.len();
                        self.prog[split] = self.split(split + 1, next, *greedy);
                    }
                    Some(max) => {
                        let mut splits = vec![];
                        for _ in *min..*max {
                            splits.push(self.push(Inst::Split(0, 0))?);
                            self.node(node)?;
                        }
                        let end = self.prog.len();
                        for s in splits {
                            self.prog[s] = self.split(s + 1, end, *greedy);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn split(&self, body: usize, out: usize, greedy: bool) -> Inst {
        if greedy {
            Inst::Split(body, out)
        } else {
            Inst::Split(out, body)
        }
    }
}

impl Regex {
    /// Compiles a pattern, or says why it is refused.
    pub(crate) fn new(pattern: &str) -> Result<Regex, PatternError> {
        let mut p = P { s: pattern, i: 0, groups: 0, names: vec![] };
        let node = p.alt()?;
        if p.i < pattern.len() {
            return Err("unbalanced parenthesis".into());
        }
        let mut e = Emit { prog: vec![Inst::Save(0)] };
        e.node(&node)?;
        e.push(Inst::Save(1))?;
        e.push(Inst::Match)?;
        Ok(Regex {
            prog: e.prog,
            names: p.names,
            groups: p.groups,
            first: first_chars(&node),
            literals: None,
            fails_onward: fails_onward(&node),
        })
    }

    /// A literal (or literals, longest first), as transformers compiles them.
    pub(crate) fn literals(lits: &[String]) -> Regex {
        let mut sorted: Vec<&String> = lits.iter().collect();
        sorted.sort_by_key(|s| std::cmp::Reverse(s.chars().count()));
        let alt =
            Node::Alt(sorted.iter().map(|s| Node::Concat(s.chars().map(Node::Char).collect())).collect());
        let mut e = Emit { prog: vec![Inst::Save(0)] };
        // Literal programs are small: a literal longer than the limit is
        // already refused by the loader.
        let _ = e.node(&alt);
        e.prog.push(Inst::Save(1));
        e.prog.push(Inst::Match);
        let literals = Some(sorted.into_iter().cloned().collect());
        Regex {
            prog: e.prog,
            names: vec![],
            groups: 0,
            first: first_chars(&alt),
            literals,
            fails_onward: false,
        }
    }

    /// Named group names.
    pub(crate) fn group_names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(|(n, _)| n.as_str())
    }

    /// Whether position `at` of `t.hay` can start a match at all (a cheap filter).
    pub(crate) fn may_start(&self, t: &Text<'_>, at: usize) -> bool {
        match &self.first {
            None => true,
            Some(set) => match t.hay[at..].chars().next() {
                None => !t.eos,
                Some(c) => set.contains(&c),
            },
        }
    }

    /// Whether a final failure at one position means the pattern fails at
    /// every later position of the same text.
    pub(crate) fn fails_onward(&self) -> bool {
        self.fails_onward
    }

    /// Whether every match starts with one of a few known characters (so no
    /// match can start at the end of the text).
    pub(crate) fn has_first(&self) -> bool {
        self.first.is_some()
    }

    /// The next position at or after `from` where a match may start.
    pub(crate) fn next_candidate(&self, t: &Text<'_>, from: usize) -> Option<usize> {
        match &self.first {
            Some(set) if set.len() == 1 && set[0].is_ascii() => {
                memchr::memchr(set[0] as u8, &t.hay.as_bytes()[from..]).map(|i| from + i)
            }
            _ => t.hay[from..].char_indices().map(|(i, _)| from + i).find(|&i| self.may_start(t, i)),
        }
    }

    /// One match attempt anchored at `at`.
    pub(crate) fn attempt(&self, t: &Text<'_>, at: usize) -> Attempt {
        if let Some(lits) = &self.literals {
            // The program's answer for an alternation of literals: the first
            // literal (longest first) that matches wins, but a longer one the
            // text so far is a proper prefix of may still match.
            let rest = &t.hay[at..];
            let mut hit_end = false;
            for l in lits {
                if rest.starts_with(l.as_str()) {
                    return if hit_end {
                        Attempt::Pending
                    } else {
                        Attempt::Match(Found { start: at, end: at + l.len(), named: vec![] })
                    };
                }
                hit_end |= !t.eos && l.starts_with(rest);
            }
            return if hit_end { Attempt::Pending } else { Attempt::Fail };
        }
        let mut m = Matcher {
            re: self,
            t,
            hit_end: false,
            visited: Vec::new(),
            visited_set: Default::default(),
            steps: 0,
            at,
        };
        let mut caps = vec![None; 2 * self.groups + 2];
        let ok = m.run(1, at, &mut caps);
        if m.hit_end && !t.eos {
            return Attempt::Pending;
        }
        match ok {
            None => Attempt::Fail,
            Some(end) => {
                let named = self
                    .names
                    .iter()
                    .filter_map(|(n, g)| match (caps[2 * g], caps[2 * g + 1]) {
                        (Some(a), Some(b)) => Some((n.clone(), t.hay[a..b].to_string())),
                        _ => None,
                    })
                    .collect();
                Attempt::Match(Found { start: at, end, named })
            }
        }
    }

    /// The leftmost match at or after `from` in a whole text (`finditer`'s step).
    pub(crate) fn find_at(&self, hay: &str, from: usize) -> Option<(Found, Vec<Option<String>>)> {
        let t = Text { hay, at_origin: true, before: None, eos: true };
        let mut at = from;
        loop {
            if at > hay.len() {
                return None;
            }
            if self.may_start(&t, at) {
                let mut m = Matcher {
                    re: self,
                    t: &t,
                    hit_end: false,
                    visited: Vec::new(),
                    visited_set: Default::default(),
                    steps: 0,
                    at,
                };
                let mut caps = vec![None; 2 * self.groups + 2];
                let found = m.run(1, at, &mut caps);
                if found.is_none() && self.fails_onward {
                    return None;
                }
                if let Some(end) = found {
                    let groups = (0..=self.groups)
                        .map(|g| match (caps[2 * g], caps[2 * g + 1]) {
                            (Some(a), Some(b)) => Some(hay[a..b].to_string()),
                            _ => None,
                        })
                        .collect();
                    return Some((Found { start: at, end, named: vec![] }, groups));
                }
            }
            at += hay[at..].chars().next().map_or(1, char::len_utf8);
        }
    }

    /// The group number of a named group.
    pub(crate) fn group_index(&self, name: &str) -> Option<usize> {
        self.names.iter().find(|(n, _)| n == name).map(|(_, g)| *g)
    }
}

struct Matcher<'r, 't> {
    re: &'r Regex,
    t: &'t Text<'t>,
    hit_end: bool,
    visited: Vec<u64>,
    visited_set: std::collections::HashSet<(usize, usize)>,
    steps: usize,
    at: usize,
}

enum Frame {
    Step(usize, usize),
    Restore(usize, Option<usize>),
}

impl Matcher<'_, '_> {
    /// Marks `(pc, pos)` visited; false when it already was. A state that
    /// was visited and is met again failed before (the first visit has
    /// priority and did not succeed), so it fails again. Most attempts end
    /// in a few steps: the record starts only after `FREE_STEPS` (pruning
    /// is an optimisation, so starting late changes no answer), so an
    /// attempt costs what it explores, not the length of the text.
    fn visit(&mut self, pc: usize, pos: usize) -> bool {
        const FREE_STEPS: usize = 512;
        if self.steps < FREE_STEPS {
            self.steps += 1;
            return true;
        }
        let width = self.t.hay.len() - self.at + 1;
        let bits = self.re.prog.len() * width;
        if bits > MAX_VISITED_BITS {
            // A large pattern over a long text: a set of what was visited.
            return self.visited_set.insert((pc, pos - self.at));
        }
        if self.visited.is_empty() {
            // Allocated only by an attempt that already explored this much,
            // so its size is in proportion to the work.
            self.visited = vec![0; bits.div_ceil(64)];
        }
        let k = pc * width + (pos - self.at);
        let (w, b) = (k / 64, 1u64 << (k % 64));
        let fresh = self.visited[w] & b == 0;
        self.visited[w] |= b;
        fresh
    }

    fn look(&mut self, l: Look, pos: usize) -> bool {
        let hay = self.t.hay;
        let at_end = pos == hay.len();
        match l {
            Look::Start => pos == 0 && self.t.at_origin,
            Look::End => {
                if at_end && !self.t.eos {
                    self.hit_end = true;
                }
                at_end
            }
            Look::Dollar => {
                let before_last_nl = hay[pos..].starts_with('\n') && pos + 1 == hay.len();
                if (at_end || before_last_nl) && !self.t.eos {
                    self.hit_end = true;
                }
                at_end || before_last_nl
            }
            Look::Boundary(want) => {
                let prev = if pos == 0 { self.t.before } else { hay[..pos].chars().next_back() };
                let next = hay[pos..].chars().next();
                if next.is_none() && !self.t.eos {
                    self.hit_end = true;
                }
                let b = prev.is_some_and(is_word) != next.is_some_and(is_word);
                b == want
            }
        }
    }

    /// Runs from `pc` at `pos`; the end of the match, or `None`.
    fn run(&mut self, pc: usize, pos: usize, caps: &mut [Option<usize>]) -> Option<usize> {
        let mut stack = vec![Frame::Step(pc, pos)];
        while let Some(f) = stack.pop() {
            let (mut pc, mut pos) = match f {
                Frame::Restore(slot, v) => {
                    caps[slot] = v;
                    continue;
                }
                Frame::Step(pc, pos) => (pc, pos),
            };
            loop {
                if !self.visit(pc, pos) {
                    break;
                }
                let next = self.t.hay[pos..].chars().next();
                if next.is_none() && matches!(self.re.prog[pc], Inst::Char(_) | Inst::Any | Inst::Class(_)) {
                    if !self.t.eos {
                        self.hit_end = true;
                    }
                    break;
                }
                match &self.re.prog[pc] {
                    Inst::Char(c) => {
                        if next != Some(*c) {
                            break;
                        }
                        pc += 1;
                        pos += c.len_utf8();
                    }
                    Inst::Any => {
                        pc += 1;
                        pos += next.map_or(0, char::len_utf8);
                    }
                    Inst::Class(k) => match next {
                        Some(c) if k.matches(c) => {
                            pc += 1;
                            pos += c.len_utf8();
                        }
                        _ => break,
                    },
                    Inst::Look(l) => {
                        if !self.look(*l, pos) {
                            break;
                        }
                        pc += 1;
                    }
                    Inst::Split(a, b) => {
                        stack.push(Frame::Step(*b, pos));
                        pc = *a;
                    }
                    Inst::Jmp(a) => pc = *a,
                    Inst::Save(s) => {
                        stack.push(Frame::Restore(*s, caps[*s]));
                        caps[*s] = Some(pos);
                        pc += 1;
                    }
                    Inst::LookAhead { neg, next } => {
                        let (neg, next) = (*neg, *next);
                        // A lookahead's body runs with its own visited set:
                        // its success does not end the outer match.
                        let mut sub = Matcher {
                            re: self.re,
                            t: self.t,
                            hit_end: false,
                            visited: Vec::new(),
                            visited_set: Default::default(),
                            steps: 0,
                            at: pos,
                        };
                        let mut sub_caps = caps.to_vec();
                        let found = sub.run(pc + 1, pos, &mut sub_caps).is_some();
                        self.hit_end |= sub.hit_end;
                        if found == neg {
                            break;
                        }
                        if !neg {
                            // Python keeps the groups a positive lookahead set.
                            for (i, v) in sub_caps.into_iter().enumerate() {
                                if caps[i] != v {
                                    stack.push(Frame::Restore(i, caps[i]));
                                    caps[i] = v;
                                }
                            }
                        }
                        pc = next;
                    }
                    Inst::LookEnd | Inst::Match => return Some(pos),
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(re: &str, s: &str) -> Option<(usize, usize)> {
        Regex::new(re).unwrap().find_at(s, 0).map(|(f, _)| (f.start, f.end))
    }

    #[test]
    fn leftmost_first_like_python() {
        assert_eq!(whole("a|ab", "ab"), Some((0, 1)));
        assert_eq!(whole("a+?", "aaa"), Some((0, 1)));
        assert_eq!(whole(r"</think>\s*", "x</think> \n y"), Some((1, 12)));
        assert_eq!(whole(r"(?=[\s\S]*?</think>)", "ab</think>"), Some((0, 0)));
        assert_eq!(whole(r"<\|user\|>\s*|$", "ab\n"), Some((2, 2)));
        assert_eq!(whole(r"x{2,3}", "xxxx"), Some((0, 3)));
        assert_eq!(whole(r"a{,2}b", "aab"), Some((0, 3)));
        assert_eq!(whole(r"\{x", "{x"), Some((0, 2)));
        assert_eq!(whole(r"[^\n>]+", "ab>"), Some((0, 2)));
    }

    #[test]
    fn pending_until_decided() {
        let re = Regex::new(r"</tool_call>\s*").unwrap();
        let t = Text { hay: "</tool_call> ", at_origin: true, before: None, eos: false };
        assert_eq!(re.attempt(&t, 0), Attempt::Pending);
        let t = Text { hay: "</tool_call> x", at_origin: true, before: None, eos: false };
        assert!(matches!(re.attempt(&t, 0), Attempt::Match(Found { end: 13, .. })));
        let t = Text { hay: "</tool", at_origin: true, before: None, eos: false };
        assert_eq!(re.attempt(&t, 0), Attempt::Pending);
        let t = Text { hay: "</x", at_origin: true, before: None, eos: false };
        assert_eq!(re.attempt(&t, 0), Attempt::Fail);
    }

    #[test]
    fn a_lookahead_over_the_rest_fails_onward() {
        assert!(Regex::new(r"(?=[\s\S]*?</think>)").unwrap().fails_onward());
        assert!(Regex::new(r"(?=.*</think>)").unwrap().fails_onward());
        assert!(!Regex::new(r"(?=[\s\S]*?</think>)x").unwrap().fails_onward());
        assert!(!Regex::new(r"(?=[^<]*?</think>)").unwrap().fails_onward());
        assert!(!Regex::new(r"(?![\s\S]*?</think>)").unwrap().fails_onward());
    }

    #[test]
    fn refusals_name_the_construct() {
        assert!(Regex::new(r"(?<=a)b").unwrap_err().contains("lookbehind"));
        assert!(Regex::new(r"(a)\1").is_err());
        assert!(Regex::new(r"(?i)a").is_err());
        assert!(Regex::new(r"a*+").is_err());
    }

    #[test]
    fn named_groups() {
        let re = Regex::new(r"<tool_call>(?P<name>\S+)\n?").unwrap();
        let t = Text { hay: "<tool_call>get\nx", at_origin: true, before: None, eos: false };
        match re.attempt(&t, 0) {
            Attempt::Match(f) => assert_eq!(f.named, vec![("name".to_string(), "get".to_string())]),
            other => panic!("{other:?}"),
        }
    }
}
