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

use crate::pylit::py_space;

/// Why a pattern was refused.
pub(crate) type PatternError = String;

#[derive(Debug, Clone)]
enum Class {
    Digit(bool),
    Word(bool),
    Space(bool),
    Set { neg: bool, items: Vec<ClassItem> },
}

#[derive(Debug, Clone)]
enum ClassItem {
    Range(char, char),
    Class(Class),
}

impl Class {
    fn matches(&self, c: char) -> bool {
        match self {
            Class::Digit(n) => is_digit(c) != *n,
            Class::Word(n) => is_word(c) != *n,
            Class::Space(n) => py_space(c) != *n,
            Class::Set { neg, items } => {
                let hit = items.iter().any(|i| match i {
                    ClassItem::Range(a, b) => (*a..=*b).contains(&c),
                    ClassItem::Class(k) => k.matches(c),
                });
                hit != *neg
            }
        }
    }
}

fn is_digit(c: char) -> bool {
    c.is_ascii_digit() || (!c.is_ascii() && c.is_numeric())
}

fn is_word(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Look {
    /// `^`, `\A`: the start of the whole text.
    Start,
    /// `$`: the end, or just before a final newline.
    Dollar,
    /// `\Z`: the end.
    End,
    /// `\b` (true) or `\B` (false).
    Boundary(bool),
}

#[derive(Debug, Clone)]
enum Node {
    Empty,
    Char(char),
    Any,
    Class(Class),
    Look(Look),
    Group(Box<Node>, Option<usize>),
    LookAhead(Box<Node>, bool),
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat { node: Box<Node>, min: u32, max: Option<u32>, greedy: bool },
}

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

struct P<'a> {
    s: &'a str,
    i: usize,
    groups: usize,
    names: Vec<(String, usize)>,
}

impl<'a> P<'a> {
    fn peek(&self) -> Option<char> {
        self.s[self.i..].chars().next()
    }
    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += c.len_utf8();
        Some(c)
    }
    fn eat(&mut self, t: &str) -> bool {
        if self.s[self.i..].starts_with(t) {
            self.i += t.len();
            true
        } else {
            false
        }
    }

    fn alt(&mut self) -> Result<Node, PatternError> {
        let mut arms = vec![self.concat()?];
        while self.eat("|") {
            arms.push(self.concat()?);
        }
        Ok(if arms.len() == 1 { arms.pop().unwrap_or(Node::Empty) } else { Node::Alt(arms) })
    }

    fn concat(&mut self) -> Result<Node, PatternError> {
        let mut items = vec![];
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom()?;
            let atom = self.quantified(atom)?;
            items.push(atom);
        }
        Ok(match items.len() {
            0 => Node::Empty,
            1 => items.pop().unwrap_or(Node::Empty),
            _ => Node::Concat(items),
        })
    }

    /// `{m}`, `{m,}`, `{,n}`, `{m,n}`; anything else is a literal `{`.
    fn braces(&mut self) -> Option<(u32, Option<u32>)> {
        let rest = &self.s[self.i..];
        let close = rest.find('}')?;
        let body = &rest[1..close];
        let (a, b) = match body.split_once(',') {
            None => (body, Some(body)),
            Some((a, b)) => (a, if b.is_empty() { None } else { Some(b) }),
        };
        let num = |t: &str| {
            (!t.is_empty() && t.bytes().all(|c| c.is_ascii_digit())).then(|| t.parse().ok()).flatten()
        };
        if a.is_empty() && b.is_none() {
            return None;
        }
        let min = if a.is_empty() { 0 } else { num(a)? };
        let max = match b {
            None => None,
            Some(t) => Some(num(t)?),
        };
        self.i += close + 1;
        Some((min, max))
    }

    fn quantified(&mut self, atom: Node) -> Result<Node, PatternError> {
        let (min, max) = match self.peek() {
            Some('*') => {
                self.bump();
                (0, None)
            }
            Some('+') => {
                self.bump();
                (1, None)
            }
            Some('?') => {
                self.bump();
                (0, Some(1))
            }
            Some('{') => match self.braces() {
                Some(q) => q,
                None => return Ok(atom),
            },
            _ => return Ok(atom),
        };
        if max.is_some_and(|m| m < min) {
            return Err("a repeat's maximum is below its minimum".into());
        }
        if matches!(atom, Node::Look(_) | Node::LookAhead(..)) || matches!(atom, Node::Empty) {
            return Err("nothing to repeat".into());
        }
        let greedy = !self.eat("?");
        if self.peek() == Some('+') {
            return Err("possessive quantifiers are not supported".into());
        }
        if matches!(self.peek(), Some('*' | '+' | '?')) {
            return Err("multiple repeat".into());
        }
        Ok(Node::Repeat { node: Box::new(atom), min, max, greedy })
    }

    fn atom(&mut self) -> Result<Node, PatternError> {
        let c = self.bump().ok_or("unexpected end")?;
        Ok(match c {
            '.' => Node::Any,
            '^' => Node::Look(Look::Start),
            '$' => Node::Look(Look::Dollar),
            '[' => Node::Class(self.class()?),
            '\\' => self.escape(false)?,
            '(' => self.group()?,
            '*' | '+' | '?' => return Err("nothing to repeat".into()),
            c => Node::Char(c),
        })
    }

    fn group(&mut self) -> Result<Node, PatternError> {
        let mut name = None;
        if self.eat("?") {
            if self.eat(":") {
                let n = self.alt()?;
                return self.close(Node::Group(Box::new(n), None));
            }
            if self.eat("=") || self.eat("!") {
                let neg = self.s[..self.i].ends_with('!');
                let n = self.alt()?;
                return self.close(Node::LookAhead(Box::new(n), neg));
            }
            if self.eat("#") {
                let end = self.s[self.i..].find(')').ok_or("unterminated comment")?;
                self.i += end + 1;
                return Ok(Node::Empty);
            }
            if self.eat("P<") || self.eat("<") {
                if self.s[..self.i].ends_with("?<") && matches!(self.peek(), Some('=' | '!')) {
                    return Err("lookbehind is not supported".into());
                }
                let end = self.s[self.i..].find('>').ok_or("unterminated group name")?;
                let n = &self.s[self.i..self.i + end];
                if n.is_empty() || !n.chars().all(is_word) || n.starts_with(|c: char| c.is_ascii_digit()) {
                    return Err(format!("bad group name {n:?}"));
                }
                name = Some(n.to_string());
                self.i += end + 1;
            } else if self.eat("s)") {
                return Ok(Node::Empty);
            } else {
                return Err(format!("group syntax (?{} is not supported", self.peek().unwrap_or(' ')));
            }
        }
        self.groups += 1;
        let g = self.groups;
        if let Some(n) = name {
            if self.names.iter().any(|(m, _)| *m == n) {
                return Err(format!("group name {n:?} defined twice"));
            }
            self.names.push((n, g));
        }
        let n = self.alt()?;
        self.close(Node::Group(Box::new(n), Some(g)))
    }

    fn close(&mut self, n: Node) -> Result<Node, PatternError> {
        if self.eat(")") {
            Ok(n)
        } else {
            Err("missing )".into())
        }
    }

    fn hex(&mut self, n: usize) -> Result<char, PatternError> {
        let t = self.s.get(self.i..self.i + n).ok_or("bad escape")?;
        let v = u32::from_str_radix(t, 16).map_err(|_| "bad escape")?;
        self.i += n;
        char::from_u32(v).ok_or_else(|| "bad escape".into())
    }

    fn escape(&mut self, in_class: bool) -> Result<Node, PatternError> {
        let c = self.bump().ok_or("bad escape (end of pattern)")?;
        Ok(match c {
            'd' => Node::Class(Class::Digit(false)),
            'D' => Node::Class(Class::Digit(true)),
            'w' => Node::Class(Class::Word(false)),
            'W' => Node::Class(Class::Word(true)),
            's' => Node::Class(Class::Space(false)),
            'S' => Node::Class(Class::Space(true)),
            'b' if in_class => Node::Char('\x08'),
            'b' => Node::Look(Look::Boundary(true)),
            'B' if !in_class => Node::Look(Look::Boundary(false)),
            'A' if !in_class => Node::Look(Look::Start),
            'Z' if !in_class => Node::Look(Look::End),
            'n' => Node::Char('\n'),
            't' => Node::Char('\t'),
            'r' => Node::Char('\r'),
            'f' => Node::Char('\x0c'),
            'v' => Node::Char('\x0b'),
            'a' => Node::Char('\x07'),
            '0' => Node::Char('\0'),
            'x' => Node::Char(self.hex(2)?),
            'u' => Node::Char(self.hex(4)?),
            'U' => Node::Char(self.hex(8)?),
            c if c.is_ascii_alphanumeric() => return Err(format!("escape \\{c} is not supported")),
            c => Node::Char(c),
        })
    }

    fn class(&mut self) -> Result<Class, PatternError> {
        let neg = self.eat("^");
        let mut items = vec![];
        let mut first = true;
        loop {
            let c = self.bump().ok_or("unterminated character set")?;
            if c == ']' && !first {
                break;
            }
            first = false;
            let lo = match c {
                '\\' => match self.escape(true)? {
                    Node::Char(c) => c,
                    Node::Class(k) => {
                        items.push(ClassItem::Class(k));
                        continue;
                    }
                    _ => return Err("bad escape in a character set".into()),
                },
                '[' if self.peek() == Some(':') => return Err("POSIX classes are not supported".into()),
                c => c,
            };
            if self.peek() == Some('-') && !self.s[self.i + 1..].starts_with(']') && self.i + 1 < self.s.len()
            {
                self.bump();
                let hi = match self.bump().ok_or("unterminated character set")? {
                    '\\' => match self.escape(true)? {
                        Node::Char(c) => c,
                        _ => return Err("bad character range".into()),
                    },
                    c => c,
                };
                if hi < lo {
                    return Err("bad character range".into());
                }
                items.push(ClassItem::Range(lo, hi));
            } else {
                items.push(ClassItem::Range(lo, lo));
            }
        }
        Ok(Class::Set { neg, items })
    }
}

fn nullable(n: &Node) -> bool {
    match n {
        Node::Empty | Node::Look(_) | Node::LookAhead(..) => true,
        Node::Char(_) | Node::Any | Node::Class(_) => false,
        Node::Group(n, _) => nullable(n),
        Node::Concat(v) => v.iter().all(nullable),
        Node::Alt(v) => v.iter().any(nullable),
        Node::Repeat { node, min, .. } => *min == 0 || nullable(node),
    }
}

/// The characters a match must start with, when few and known.
fn first_chars(n: &Node) -> Option<Vec<char>> {
    match n {
        Node::Char(c) => Some(vec![*c]),
        Node::Group(n, _) => first_chars(n),
        Node::Concat(v) => v.first().filter(|f| !nullable(f)).and_then(first_chars),
        Node::Alt(v) => {
            let mut out = vec![];
            for a in v {
                out.extend(first_chars(a)?);
            }
            out.sort_unstable();
            out.dedup();
            (out.len() <= 8).then_some(out)
        }
        Node::Repeat { node, min, .. } if *min > 0 => first_chars(node),
        _ => None,
    }
}

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
        Ok(Regex { prog: e.prog, names: p.names, groups: p.groups, first: first_chars(&node) })
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
        Regex { prog: e.prog, names: vec![], groups: 0, first: first_chars(&alt) }
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
        let mut m = Matcher { re: self, t, hit_end: false, visited: Default::default(), steps: 0, at };
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
                let mut m =
                    Matcher { re: self, t: &t, hit_end: false, visited: Default::default(), steps: 0, at };
                let mut caps = vec![None; 2 * self.groups + 2];
                if let Some(end) = m.run(1, at, &mut caps) {
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
    visited: std::collections::HashSet<(usize, usize)>,
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
        self.visited.insert((pc, pos - self.at))
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
                            visited: Default::default(),
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
