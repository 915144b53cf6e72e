//! The syntax of response-template patterns: Python `regex` source read
//! into a tree ([`Node`]), with the character classes and assertions it
//! names. What the tree cannot hold (lookbehind, back-references, atomic
//! groups, possessive quantifiers, inline flags other than `s`, `\p{…}`)
//! is refused here with the reason.

use crate::pylit::py_space;

/// Why a pattern was refused.
pub(crate) type PatternError = String;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Class {
    Digit(bool),
    Word(bool),
    Space(bool),
    Set { neg: bool, items: Vec<ClassItem> },
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ClassItem {
    Range(char, char),
    Class(Class),
}

impl Class {
    pub(crate) fn matches(&self, c: char) -> bool {
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

pub(crate) fn is_digit(c: char) -> bool {
    c.is_ascii_digit() || (!c.is_ascii() && c.is_numeric())
}

pub(crate) fn is_word(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Look {
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
pub(crate) enum Node {
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

pub(crate) struct P<'a> {
    pub s: &'a str,
    pub i: usize,
    pub groups: usize,
    pub names: Vec<(String, usize)>,
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

    pub(crate) fn alt(&mut self) -> Result<Node, PatternError> {
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

pub(crate) fn nullable(n: &Node) -> bool {
    match n {
        Node::Empty | Node::Look(_) | Node::LookAhead(..) => true,
        Node::Char(_) | Node::Any | Node::Class(_) => false,
        Node::Group(n, _) => nullable(n),
        Node::Concat(v) => v.iter().all(nullable),
        Node::Alt(v) => v.iter().any(nullable),
        Node::Repeat { node, min, .. } => *min == 0 || nullable(node),
    }
}

/// Whether a class holds every character (`[\s\S]`, `[\d\D]`, `[\w\W]`).
fn everything(k: &Class) -> bool {
    let Class::Set { neg: false, items } = k else { return false };
    let has = |c: Class| items.iter().any(|i| matches!(i, ClassItem::Class(x) if *x == c));
    [Class::Digit, Class::Word, Class::Space].iter().any(|kind| has(kind(false)) && has(kind(true)))
}

/// Whether the pattern is one positive lookahead whose body starts with an
/// unbounded any-character star (`(?=[\s\S]*?X)`): it matches at a position
/// exactly when `X` matches somewhere after it, so once it fails at one
/// position it fails at every later one.
pub(crate) fn fails_onward(n: &Node) -> bool {
    match n {
        Node::Group(n, None) => fails_onward(n),
        Node::LookAhead(body, false) => {
            let first = match body.as_ref() {
                Node::Concat(v) => v.first(),
                other => Some(other),
            };
            matches!(first, Some(Node::Repeat { node, min: 0, max: None, .. })
                if matches!(node.as_ref(), Node::Any) || matches!(node.as_ref(), Node::Class(k) if everything(k)))
        }
        _ => false,
    }
}

/// The characters a match must start with, when few and known.
pub(crate) fn first_chars(n: &Node) -> Option<Vec<char>> {
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
