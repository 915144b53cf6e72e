//! The accountant of one request with `byte_spans` (`crate::spans`): sits
//! above the engine, the filters and the limits, and places what each delta
//! wrote (its text fields' characters and its calls' first fragments, in
//! the order they were written: `Delta::pieces`) on the raw output, using
//! what the engine's ledger says of each raw byte (`engine/ledger.rs`: a
//! marker, a call's opener, text of a reasoning, content, call or framing
//! state). What no field character lands on is labelled by that class.
//!
//! The placing rule, per field character, from the cursor (the first raw
//! byte not yet accounted): (A) the raw character there, when it is of the
//! field's class and the same character; else (B) the first raw character
//! of the field's class, when it is the same (what lies before it went to
//! no field); else (C) the raw character at the cursor, when it is the same
//! whatever its class (a call's or a section's text given back as content);
//! else (D) the next raw character of the field's class that is the same;
//! else the character is `Added`. A call's first fragment takes the run of
//! markers and call text from the cursor up to the next text or the next
//! call's opening marker. A step that needs a raw byte the engine has not
//! consumed yet waits for the next delta (or the end, where every byte is
//! consumed).
//!
//! Invariants: the rule is a function of the raw output, the ledger's
//! classes and the sequence of field characters and call starts, never of
//! how the output was cut, so folded streamed spans equal one-shot spans;
//! every raw byte is accounted once, in order, so the spans rebuild the raw
//! output exactly (`spans::reconstruct`). Work is linear in the output: the
//! searches of a waiting character resume where they stopped, and the raw
//! text before the cursor is released.

use crate::engine::{Class, Spans};
use crate::format::Format;
use crate::message::{Delta, Piece};
use crate::spans::{push_span, Field, Reason, Span, SpanKind};
use std::collections::VecDeque;

/// What a delta wrote, in order, not yet placed.
#[derive(Debug)]
enum Item {
    /// Field text; `.2` bytes of it are placed.
    Text(Field, String, usize),
    /// Call `index` began.
    Call(usize),
}

/// The byte accounting of one request.
#[derive(Debug)]
pub(crate) struct Accountant {
    /// The raw output from `base` on.
    raw: String,
    /// The class of each byte of `raw`.
    cls: Vec<Class>,
    base: usize,
    /// Raw bytes before it are accounted.
    cur: usize,
    items: VecDeque<Item>,
    /// The engine's notes, taken after each delta.
    pub notes: Vec<(usize, usize, Class)>,
    /// Text the default settings would keep is vLLM's loss.
    vllm: bool,
    /// `include_reasoning: false`.
    hide: bool,
    /// The format's marker spellings, longest first (labels bytes the
    /// engine took no note of).
    markers: Vec<Box<str>>,
    finished: bool,
    /// Steps B and D found nothing for the waiting character before these
    /// offsets.
    memo: (usize, usize),
    /// Under vLLM's settings: what a parser with the default settings kept
    /// of the same output (see [`Twin`]).
    twin: Option<Twin>,
}

/// The raw bytes a default-settings parser of the same output put in a
/// field or a call, as far as its spans are settled: under vLLM's settings,
/// a dropped byte it kept is vLLM's loss, one it dropped too is the
/// format's. Spans wait in `held` until the twin has settled their bytes.
#[derive(Debug, Default)]
struct Twin {
    /// The twin's spans end here.
    settled: usize,
    /// Ranges it kept, in order (those before `released` are let go).
    kept: VecDeque<(usize, usize)>,
    /// This accountant's spans not yet released.
    held: Vec<Span>,
}

impl Accountant {
    /// The accountant of a request, `None` when it asks for none.
    pub fn new(spans: Spans, hide_reasoning: bool, fmt: &Format) -> Option<Box<Accountant>> {
        if spans == Spans::Off {
            return None;
        }
        let mut markers: Vec<Box<str>> = fmt.spellings().filter(|s| !s.is_empty()).map(Box::from).collect();
        markers.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        markers.dedup();
        Some(Box::new(Accountant {
            raw: String::new(),
            cls: Vec::new(),
            base: 0,
            cur: 0,
            items: VecDeque::new(),
            notes: Vec::new(),
            vllm: spans == Spans::VllmLoss,
            hide: hide_reasoning,
            markers,
            finished: false,
            memo: (0, 0),
            twin: (spans == Spans::VllmLoss).then(Twin::default),
        }))
    }

    /// Whether a default-settings twin parser must run beside this one.
    pub fn wants_twin(&self) -> bool {
        self.twin.is_some()
    }

    /// The twin's spans of the same delta.
    pub fn twin_spans(&mut self, spans: &[Span]) {
        let Some(t) = &mut self.twin else { return };
        for s in spans {
            t.settled = t.settled.max(s.end);
            if matches!(s.kind, SpanKind::Reasoning | SpanKind::Content | SpanKind::Call { .. })
                && s.start < s.end
            {
                match t.kept.back_mut() {
                    Some(last) if last.1 == s.start => last.1 = s.end,
                    _ => t.kept.push_back((s.start, s.end)),
                }
            }
        }
    }

    /// Releases the spans the twin has settled (all at the end), each
    /// dropped span split by what the twin kept.
    fn release_twin(&mut self, out: &mut Vec<Span>, all: bool) {
        let Some(t) = &mut self.twin else { return };
        t.held.append(out);
        let n = if all { t.held.len() } else { t.held.iter().take_while(|s| s.end <= t.settled).count() };
        for s in t.held.drain(..n) {
            let SpanKind::Dropped { reason } = s.kind else {
                push_span(out, s);
                continue;
            };
            if matches!(reason, Reason::Marker | Reason::Hidden) {
                push_span(out, s);
                continue;
            }
            // Split at the twin's kept ranges.
            let own = if reason == Reason::VllmLoss { Reason::Framing } else { reason };
            let mut at = s.start;
            while at < s.end {
                while t.kept.front().is_some_and(|k| k.1 <= at) {
                    t.kept.pop_front();
                }
                let (kept, to) = match t.kept.front() {
                    Some(&(a, b)) if a <= at => (true, b.min(s.end)),
                    Some(&(a, _)) => (false, a.min(s.end)),
                    None => (false, s.end),
                };
                let text = s.text[at - s.start..to - s.start].to_string();
                let reason = if kept { Reason::VllmLoss } else { own };
                push_span(out, Span { start: at, end: to, kind: SpanKind::Dropped { reason }, text });
                at = to;
            }
        }
    }

    /// Accounts one delta: `text` was pushed, `d` is what it produced;
    /// the spans settled go to `d.spans`.
    pub fn delta(&mut self, text: &str, d: &mut Delta) {
        self.raw.push_str(text);
        self.cls.resize(self.raw.len(), Class::Pending);
        self.apply_notes();
        self.take(d);
        let mut spans = std::mem::take(&mut d.spans);
        self.run(&mut spans);
        self.release_twin(&mut spans, false);
        d.spans = spans;
        self.release();
    }

    /// Accounts the last delta: every byte is consumed now.
    pub fn finish(&mut self, d: &mut Delta) {
        if std::mem::replace(&mut self.finished, true) {
            return;
        }
        self.apply_notes();
        for c in &mut self.cls {
            if *c == Class::Pending {
                *c = Class::Unknown;
            }
        }
        self.take(d);
        let mut spans = std::mem::take(&mut d.spans);
        self.run(&mut spans);
        let end = self.base + self.raw.len();
        self.label(self.cur, end, &mut spans);
        self.cur = end;
        self.release_twin(&mut spans, true);
        d.spans = spans;
    }

    fn apply_notes(&mut self) {
        let (base, n) = (self.base, self.cls.len());
        for (a, b, c) in self.notes.drain(..) {
            let (a, b) = (a.max(base) - base, b.max(base) - base);
            for x in &mut self.cls[a.min(n)..b.min(n)] {
                *x = c;
            }
        }
    }

    /// Queues what `d` wrote.
    fn take(&mut self, d: &Delta) {
        for p in d.pieces() {
            let (field, s) = match p {
                Piece::Reasoning(s) => (Field::Reasoning, s),
                Piece::Content(s) => (Field::Content, s),
                Piece::Call(c) => {
                    if c.name.is_some() {
                        self.items.push_back(Item::Call(c.index));
                    }
                    continue;
                }
            };
            match self.items.back_mut() {
                Some(Item::Text(f, t, _)) if *f == field => t.push_str(s),
                _ => self.items.push_back(Item::Text(field, s.to_string(), 0)),
            }
        }
    }

    /// Drops the raw text before the cursor once it is most of the buffer.
    fn release(&mut self) {
        let n = self.cur - self.base;
        if n > 4096 && n * 2 > self.raw.len() {
            self.raw.drain(..n);
            self.cls.drain(..n);
            self.base = self.cur;
        }
    }

    /// The raw character at `pos` and its class (`None` past the end).
    fn at(&self, pos: usize) -> Option<(char, Class)> {
        let i = pos - self.base;
        let ch = self.raw.get(i..)?.chars().next()?;
        Some((ch, self.cls[i]))
    }

    fn fits(class: Class, f: Field) -> bool {
        match class {
            Class::Unknown => true,
            Class::Reasoning => f == Field::Reasoning,
            Class::Content => f == Field::Content,
            _ => false,
        }
    }

    /// Places what it can; stops at an item that waits for raw bytes.
    fn run(&mut self, out: &mut Vec<Span>) {
        while let Some(item) = self.items.pop_front() {
            match item {
                Item::Call(i) => {
                    let Some(e) = self.call_end() else {
                        self.items.push_front(Item::Call(i));
                        return;
                    };
                    if e > self.cur {
                        let text = self.raw[self.cur - self.base..e - self.base].to_string();
                        push_span(
                            out,
                            Span { start: self.cur, end: e, kind: SpanKind::Call { index: i }, text },
                        );
                        self.cur = e;
                    }
                }
                Item::Text(f, s, mut done) => {
                    while let Some(ch) = s[done..].chars().next() {
                        if !self.place(f, ch, out) {
                            self.items.push_front(Item::Text(f, s, done));
                            return;
                        }
                        done += ch.len_utf8();
                    }
                }
            }
        }
    }

    /// Where the call starting at the cursor ends: before the next text,
    /// or before the next call's opening marker. `None`: not known yet.
    fn call_end(&self) -> Option<usize> {
        let (mut j, mut opened, mut prev) = (self.cur, false, Class::Pending);
        loop {
            let Some((ch, class)) = self.at(j) else { return self.finished.then_some(j) };
            match class {
                Class::Pending => return None,
                Class::Reasoning | Class::Content | Class::Unknown => return Some(j),
                // A call marker's first byte: this call's opener, or the next call's.
                Class::CallMarker if prev != Class::CallMarker && opened => return Some(j),
                Class::CallMarker => opened = true,
                _ => {}
            }
            prev = class;
            j += ch.len_utf8();
        }
    }

    /// Places one field character (see the module's rule); `false`: it waits.
    fn place(&mut self, f: Field, ch: char, out: &mut Vec<Span>) -> bool {
        let c = self.cur;
        let Some((rc, class)) = self.at(c) else {
            return self.finished && self.add(f, ch, out);
        };
        if class == Class::Pending {
            return false;
        }
        if Self::fits(class, f) && rc == ch {
            return self.matched(f, c, ch, out);
        }
        // (B) the first character of the field's class.
        let mut j = self.memo.0.max(c);
        let first = loop {
            match self.at(j) {
                None if self.finished => break None,
                None => {
                    self.memo.0 = j;
                    return false;
                }
                Some((_, Class::Pending)) => {
                    self.memo.0 = j;
                    return false;
                }
                Some((r, k)) if Self::fits(k, f) => break Some((j, r)),
                Some((r, _)) => j += r.len_utf8(),
            }
        };
        if let Some((j, r)) = first.filter(|&(_, r)| r == ch) {
            self.label(c, j, out);
            return self.matched(f, j, r, out);
        }
        // (C) the cursor's character, of another class.
        if rc == ch {
            return self.matched(f, c, ch, out);
        }
        // (D) the next character of the field's class that is the same.
        let mut k = self.memo.1.max(first.map_or(j, |(j, _)| j));
        loop {
            match self.at(k) {
                None if self.finished => return self.add(f, ch, out),
                None | Some((_, Class::Pending)) => {
                    self.memo.1 = k;
                    return false;
                }
                Some((r, cl)) if r == ch && Self::fits(cl, f) => {
                    self.label(c, k, out);
                    return self.matched(f, k, r, out);
                }
                Some((r, _)) => k += r.len_utf8(),
            }
        }
    }

    fn matched(&mut self, f: Field, at: usize, ch: char, out: &mut Vec<Span>) -> bool {
        let end = at + ch.len_utf8();
        let kind = match f {
            Field::Reasoning => SpanKind::Reasoning,
            Field::Content => SpanKind::Content,
        };
        push_span(out, Span { start: at, end, kind, text: String::new() });
        self.cur = end;
        self.memo = (0, 0);
        true
    }

    fn add(&mut self, f: Field, ch: char, out: &mut Vec<Span>) -> bool {
        let at = self.cur;
        push_span(out, Span { start: at, end: at, kind: SpanKind::Added { field: f }, text: ch.to_string() });
        self.memo = (0, 0);
        true
    }

    /// Why a byte of this class went to no field.
    fn reason(&self, class: Class) -> Reason {
        match class {
            Class::Marker | Class::CallMarker => Reason::Marker,
            Class::CallText => Reason::NotACall,
            Class::Framing => Reason::Framing,
            Class::Reasoning if self.hide => Reason::Hidden,
            _ if self.vllm => Reason::VllmLoss,
            _ => Reason::Framing,
        }
    }

    /// Labels raw `[a, b)`, which went to no field, run by run of class.
    fn label(&self, a: usize, b: usize, out: &mut Vec<Span>) {
        let mut i = a;
        while i < b {
            let class = self.cls[i - self.base];
            let mut j = i + 1;
            while j < b && self.cls[j - self.base] == class {
                j += 1;
            }
            while j < b && !self.raw.is_char_boundary(j - self.base) {
                j += 1;
            }
            if class == Class::Unknown {
                self.label_text(i, j, out);
            } else {
                self.dropped(i, j, self.reason(class), out);
            }
            i = j;
        }
    }

    /// Labels bytes the engine took no note of: the format's markers by
    /// their spellings, the rest as text.
    fn label_text(&self, a: usize, b: usize, out: &mut Vec<Span>) {
        let s = &self.raw[a - self.base..b - self.base];
        let (mut i, mut from) = (0, 0);
        while i < s.len() {
            match self.markers.iter().find(|m| s[i..].starts_with(&***m)) {
                Some(m) => {
                    self.dropped(a + from, a + i, self.reason(Class::Unknown), out);
                    self.dropped(a + i, a + i + m.len(), Reason::Marker, out);
                    i += m.len();
                    from = i;
                }
                None => i += s[i..].chars().next().map_or(1, char::len_utf8),
            }
        }
        self.dropped(a + from, b, self.reason(Class::Unknown), out);
    }

    fn dropped(&self, a: usize, b: usize, reason: Reason, out: &mut Vec<Span>) {
        if a < b {
            let text = self.raw[a - self.base..b - self.base].to_string();
            push_span(out, Span { start: a, end: b, kind: SpanKind::Dropped { reason }, text });
        }
    }
}
