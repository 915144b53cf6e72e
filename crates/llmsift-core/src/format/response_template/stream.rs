//! The per-request region machine of a response template: transformers'
//! `ResponseParser` loop (watch the open anchors, or the current region's
//! close; take the earliest match, longest on ties, opens before closes),
//! acting only on decisions no later text can change, and writing into a
//! [`Delta`] as it goes.
//!
//! Invariants:
//! - a match is acted on only when every watched pattern's attempt at every
//!   position up to it is final ([`Attempt`] never `Pending`), so the
//!   sequence of regions is a function of the text, not of its cuts;
//! - text is written as soon as no pending delimiter can claim it; a text
//!   field's white space is held only while it may be the trailing white
//!   space the field's `strip` removes;
//! - the buffer keeps only text from the first pending position on (bytes
//!   before it are never scanned again; a failed position is remembered per
//!   pattern), so a delta costs work in proportion to itself plus what is
//!   held;
//! - prompt bytes move the regions and are never written.

use super::load::{Field, Role, Template};
use super::regex::{Attempt, Found, Text};
use super::transform::{apply, cast_calls};
use crate::message::Delta;
use crate::pylit::py_space;
use crate::schema::Tools;
use serde_json::{Map, Value};
use std::sync::Arc;

/// What a request settles for the stream.
#[derive(Debug, Clone)]
pub(crate) struct StreamSettings {
    pub tools: Arc<Tools>,
    /// Tool regions become calls (otherwise their text is content).
    pub calls: bool,
    pub include_reasoning: bool,
    pub id_seed: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
enum Kind {
    Open = 0,
    Close = 1,
}

/// transformers' order of competing matches: earliest, then longest, then
/// opens before closes, then by field name.
type Rank = (usize, std::cmp::Reverse<usize>, Kind, String);

/// The stream state of one request: the template and the request's
/// settings (rebuilt by a resuming replica) and what the output moved
/// ([`StreamCarry`], carried between replicas by `crate::state`).
#[derive(Debug)]
pub(crate) struct Stream {
    tpl: Arc<Template>,
    set: StreamSettings,
    st: StreamCarry,
}

/// What the output moved in a [`Stream`]: all of it travels between
/// replicas (`crate::state`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct StreamCarry {
    /// Unconsumed text; `buf[..pos]` is consumed and dropped at the end of a round.
    buf: String,
    pos: usize,
    /// Absolute offset of `buf[0]`, and the character before it.
    base: usize,
    before: Option<char>,
    /// Absolute offset where the output starts (prompt bytes are before it).
    out_start: usize,
    /// Per field and kind: positions before this one (absolute) fail.
    cursors: Vec<[usize; 2]>,
    /// Per field and kind: where the text ended (absolute) when the attempt
    /// at the cursor last came out pending.
    pending_end: Vec<[usize; 2]>,
    current: Option<usize>,
    opened: bool,
    captures: Vec<(String, String)>,
    body: String,
    /// A field that has a value already (for `join`).
    has_value: Vec<bool>,
    /// Text field state: still in leading white space; held trailing white space.
    lead: bool,
    pend_ws: String,
    /// A zero-width close of an empty region: transformers' loop stops for good.
    stuck: bool,
    calls: usize,
    ids: u64,
    /// What is watched outside explicit regions (every opener, the implicit close).
    watch_outside: Vec<(usize, Kind)>,
}

impl Stream {
    /// The state to carry (see [`StreamCarry`]).
    pub(crate) fn carry(&self) -> StreamCarry {
        self.st.clone()
    }

    /// Takes a carried state into a stream built for the same template;
    /// refuses one whose field indices the template does not have.
    pub(crate) fn restore(&mut self, c: StreamCarry) -> Result<(), &'static str> {
        let n = self.tpl.fields.len();
        let field_ok = |i: usize| i < n;
        if c.cursors.len() != n
            || c.pending_end.len() != n
            || c.has_value.len() != n
            || !c.current.is_none_or(field_ok)
            || !c.watch_outside.iter().all(|&(i, _)| field_ok(i))
            || c.pos > c.buf.len()
            || !c.buf.is_char_boundary(c.pos)
        {
            return Err("response-template fields");
        }
        self.st = c;
        Ok(())
    }

    pub(crate) fn new(tpl: Arc<Template>, set: StreamSettings, prompt: Option<&str>) -> Stream {
        let n = tpl.fields.len();
        let seed = set.id_seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        });
        let st = StreamCarry {
            current: tpl.implicit,
            buf: String::new(),
            pos: 0,
            base: 0,
            before: None,
            out_start: 0,
            cursors: vec![[0, 0]; n],
            pending_end: vec![[0, 0]; n],
            opened: false,
            captures: vec![],
            body: String::new(),
            has_value: vec![false; n],
            lead: true,
            pend_ws: String::new(),
            stuck: false,
            calls: 0,
            ids: seed,
            watch_outside: vec![],
        };
        let mut s = Stream { tpl, set, st };
        s.st.watch_outside = (0..n).filter(|&i| s.field(i).open.is_some()).map(|i| (i, Kind::Open)).collect();
        if let Some(i) = s.tpl.implicit.filter(|&i| s.field(i).close.is_some()) {
            s.st.watch_outside.push((i, Kind::Close));
        }
        if let Some(p) = prompt {
            let tail = s.tpl.after_last_anchor(p).to_string();
            s.st.buf = tail;
            s.st.out_start = s.st.buf.len();
            let mut scratch = Delta::default();
            s.process(false, &mut scratch);
            // Held white space of the prompt is the prompt's: never written.
            s.st.pend_ws.clear();
        }
        s
    }

    pub(crate) fn push(&mut self, text: &str, out: &mut Delta) {
        self.st.buf.push_str(text);
        self.process(false, out);
    }

    pub(crate) fn finish(&mut self, out: &mut Delta) {
        self.process(true, out);
    }

    fn field(&self, i: usize) -> &Field {
        &self.tpl.fields[i]
    }

    /// `_watchlist`: the current explicit region's close, or every open and the implicit close.
    fn watch(&self, i: usize) -> Option<(usize, Kind)> {
        match self.st.current {
            Some(c) if Some(c) != self.tpl.implicit => {
                (i == 0 && self.field(c).close.is_some()).then_some((c, Kind::Close))
            }
            _ => self.st.watch_outside.get(i).copied(),
        }
    }

    /// The first final match of one pattern at or after `pos`, or the first
    /// pending position (`Err`), or neither.
    fn scan(&mut self, fi: usize, kind: Kind, eos: bool) -> Option<Result<Found, usize>> {
        let tpl = Arc::clone(&self.tpl);
        let f = &tpl.fields[fi];
        let anchor = if kind == Kind::Open { f.open.as_ref() } else { f.close.as_ref() }?;
        let text = Text { hay: &self.st.buf, at_origin: self.st.base == 0, before: self.st.before, eos };
        let cur = &mut self.st.cursors[fi][kind as usize];
        let last_end = &mut self.st.pending_end[fi][kind as usize];
        let mut at = (*cur).max(self.st.base + self.st.pos) - self.st.base;
        let end = self.st.base + self.st.buf.len();
        // An attempt that came out pending after reading far ahead (a
        // lookahead over the rest of the text) is tried again only once the
        // text past it has doubled: waiting only holds text longer, it never
        // changes a decision, and the retries then cost O(n) in all.
        let far = end.saturating_sub(*cur);
        if !eos
            && *cur >= self.st.base + self.st.pos
            && *last_end > *cur
            && far > 256
            && far < 2 * (*last_end - *cur)
        {
            return Some(Err(*cur - self.st.base));
        }
        loop {
            let cand = if at >= self.st.buf.len() { None } else { anchor.re.next_candidate(&text, at) };
            let p = match cand {
                Some(p) => p,
                // A match that must start with a known character cannot
                // start at the end: nothing to hold, nothing to try.
                None if anchor.re.has_first() => {
                    *cur = self.st.base + self.st.buf.len();
                    *last_end = 0;
                    return None;
                }
                None => self.st.buf.len(),
            };
            match anchor.re.attempt(&text, p) {
                Attempt::Pending => {
                    *cur = self.st.base + p;
                    *last_end = end;
                    return Some(Err(p));
                }
                Attempt::Match(m) => {
                    *cur = self.st.base + p;
                    *last_end = 0;
                    return Some(Ok(m));
                }
                Attempt::Fail => {
                    *last_end = 0;
                    if p >= self.st.buf.len() || anchor.re.fails_onward() {
                        // Nothing later can match (for a lookahead over the
                        // rest of the text, a failure here is one there).
                        *cur = self.st.base + self.st.buf.len();
                        return None;
                    }
                    at = p + self.st.buf[p..].chars().next().map_or(1, char::len_utf8);
                }
            }
        }
    }

    fn process(&mut self, eos: bool, out: &mut Delta) {
        loop {
            if self.st.stuck {
                // Nothing after is ever read again.
                self.st.pos = self.st.buf.len();
                break;
            }
            let mut hold = self.st.buf.len();
            let mut best: Option<(Rank, usize, Kind, Found)> = None;
            let mut wi = 0;
            while let Some((fi, kind)) = self.watch(wi) {
                wi += 1;
                match self.scan(fi, kind, eos) {
                    None => {}
                    Some(Err(p)) => hold = hold.min(p),
                    Some(Ok(m)) => {
                        let key =
                            (m.start, std::cmp::Reverse(m.end - m.start), kind, self.field(fi).name.clone());
                        if best.as_ref().is_none_or(|b| key < b.0) {
                            best = Some((key, fi, kind, m));
                        }
                    }
                }
            }
            match best.filter(|b| b.3.start < hold) {
                Some((_, fi, kind, m)) => {
                    if m.start > self.st.pos {
                        self.accumulate(self.st.pos, m.start, out);
                    }
                    self.st.pos = m.end;
                    let delim = (self.st.base + m.start, self.st.base + m.end);
                    if kind == Kind::Open {
                        self.close_current(delim.0, None, out);
                        self.open_explicit(fi, m.named, delim, out);
                    } else {
                        let had = self.st.opened;
                        for (k, v) in m.named {
                            match self.st.captures.iter_mut().find(|(n, _)| *n == k) {
                                Some(c) => c.1 = v,
                                None => self.st.captures.push((k, v)),
                            }
                        }
                        self.close_current(delim.1, Some(delim), out);
                        if !had && m.start == m.end {
                            self.st.stuck = true;
                        }
                    }
                }
                None => {
                    if eos {
                        if self.st.pos < self.st.buf.len() {
                            self.accumulate(self.st.pos, self.st.buf.len(), out);
                            self.st.pos = self.st.buf.len();
                        }
                        let end = self.st.base + self.st.buf.len();
                        self.close_current(end, None, out);
                        break;
                    }
                    if hold > self.st.pos {
                        self.accumulate(self.st.pos, hold, out);
                        self.st.pos = hold;
                    }
                    break;
                }
            }
        }
        self.compact();
    }

    /// Drops consumed text, keeping the character before the rest (for `\b`).
    fn compact(&mut self) {
        if self.st.pos == 0 {
            return;
        }
        self.st.before = self.st.buf[..self.st.pos].chars().next_back();
        self.st.buf.drain(..self.st.pos);
        self.st.base += self.st.pos;
        self.st.pos = 0;
    }

    /// The output part of the absolute span `[a, b)` (prompt bytes cut off).
    fn output_part(&self, a: usize, b: usize) -> &str {
        let a = a.max(self.st.out_start).min(b.max(self.st.out_start));
        let b = b.max(self.st.out_start);
        &self.st.buf[a - self.st.base..b - self.st.base]
    }

    fn emit_text(&mut self, role: Role, s: &str, out: &mut Delta) {
        match role {
            Role::Reasoning if self.set.include_reasoning => out.push_reasoning(s),
            Role::Reasoning => {}
            _ => out.push_content(s),
        }
    }

    /// `_accumulate` of `buf[a..b]` (relative offsets).
    fn accumulate(&mut self, a: usize, b: usize, out: &mut Delta) {
        let Some(ci) = self.st.current else { return };
        if a >= b {
            return;
        }
        let (abs_a, abs_b) = (self.st.base + a, self.st.base + b);
        if !self.st.opened {
            self.st.opened = true;
            self.on_open(ci, out);
        }
        let role = self.field(ci).role;
        if role == Role::Calls {
            self.st.body.push_str(&self.st.buf[a..b]);
            if !self.set.calls {
                let raw = self.output_part(abs_a, abs_b).to_string();
                out.push_content(&raw);
            }
            return;
        }
        let strip = matches!(self.field(ci).parser, super::content::Parser::Text { strip: true });
        // Prompt text moves the strip state and is never written; its held
        // white space is the prompt's too.
        let split = self.st.out_start.clamp(abs_a, abs_b) - self.st.base;
        // The buffer is lent out while its text is routed (no copy).
        let buf = std::mem::take(&mut self.st.buf);
        if split > a {
            self.text_chunk(role, strip, &buf[a..split], None);
            self.st.pend_ws.clear();
        }
        if b > split {
            self.text_chunk(role, strip, &buf[split..b], Some(out));
        }
        self.st.buf = buf;
    }

    /// A text field's chunk: with `strip`, leading white space is skipped
    /// and trailing white space held until more text shows it is not
    /// trailing. Written to `out` when given.
    fn text_chunk(&mut self, role: Role, strip: bool, s: &str, out: Option<&mut Delta>) {
        if !strip {
            if let Some(o) = out {
                self.emit_text(role, s, o);
            }
            return;
        }
        let mut s = s;
        if self.st.lead {
            s = s.trim_start_matches(py_space);
            if s.is_empty() {
                return;
            }
            self.st.lead = false;
        }
        let core = s.trim_end_matches(py_space);
        if core.is_empty() {
            self.st.pend_ws.push_str(s);
            return;
        }
        let pend = std::mem::take(&mut self.st.pend_ws);
        if let Some(o) = out {
            self.emit_text(role, &pend, o);
            self.emit_text(role, core, o);
        }
        self.st.pend_ws.push_str(&s[core.len()..]);
    }

    /// A region starts holding text: a joined field writes its separator.
    fn on_open(&mut self, fi: usize, out: &mut Delta) {
        let f = self.field(fi);
        if let (true, Some(j)) = (self.st.has_value[fi], f.join.clone()) {
            if self.st.base + self.st.pos >= self.st.out_start {
                self.emit_text(f.role, &j, out);
            }
        }
    }

    fn open_explicit(
        &mut self,
        fi: usize,
        named: Vec<(String, String)>,
        delim: (usize, usize),
        out: &mut Delta,
    ) {
        self.st.current = Some(fi);
        self.st.captures = named;
        self.st.body.clear();
        self.st.opened = true;
        self.st.lead = true;
        self.st.pend_ws.clear();
        if self.field(fi).role == Role::Calls && !self.set.calls {
            let raw = self.output_part(delim.0, delim.1).to_string();
            out.push_content(&raw);
        }
        self.on_open(fi, out);
    }

    /// `_close_current`: the region's value joins the message.
    fn close_current(&mut self, end: usize, delim: Option<(usize, usize)>, out: &mut Delta) {
        if let (Some(ci), true) = (self.st.current, self.st.opened) {
            self.st.has_value[ci] = true;
            if self.field(ci).role == Role::Calls {
                if self.set.calls {
                    if let (Some(v), true) = (self.call_value(ci), end > self.st.out_start) {
                        self.write_calls(v, out);
                    }
                } else if let Some(d) = delim {
                    let raw = self.output_part(d.0, d.1).to_string();
                    out.push_content(&raw);
                }
            }
        }
        self.st.current = self.tpl.implicit;
        self.st.captures.clear();
        self.st.body.clear();
        self.st.opened = false;
        self.st.lead = true;
        self.st.pend_ws.clear();
    }

    /// `process_field` and the schema casting of a tool region; `None` when malformed.
    fn call_value(&self, fi: usize) -> Option<Value> {
        let f = self.field(fi);
        let parsed = f.parser.parse(&self.st.body).ok()?;
        let mut scope = Map::new();
        for (k, v) in &self.st.captures {
            scope.insert(k.clone(), Value::String(v.clone()));
        }
        let mut v = match (&f.transform, f.transform_each) {
            (None, _) => parsed,
            (Some(t), false) => {
                scope.insert("content".into(), parsed);
                apply(t, &scope).ok()?
            }
            (Some(t), true) => {
                let items = parsed.as_array()?;
                let mut outv = vec![];
                for it in items {
                    let mut s = scope.clone();
                    for (k, x) in it.as_object()? {
                        s.insert(k.clone(), x.clone());
                    }
                    outv.push(apply(t, &s).ok()?);
                }
                Value::Array(outv)
            }
        };
        if !self.set.tools.is_empty() && !f.parser.reads_by_group() {
            cast_calls(&mut v, &self.set.tools, f.parser.typed());
        }
        Some(v)
    }

    /// Writes a region's calls: a call object or a list of them. A region
    /// with an item that is not a call writes none (vLLM's rule).
    fn write_calls(&mut self, v: Value, out: &mut Delta) {
        let items = match v {
            Value::Array(a) => a,
            one => vec![one],
        };
        let mut calls = vec![];
        for it in &items {
            let f = match it.get("function") {
                Some(f @ Value::Object(_)) => f,
                _ => it,
            };
            let (Some(name), Some(args)) = (f.get("name").and_then(Value::as_str), f.get("arguments")) else {
                return;
            };
            if args.is_null() || name.trim().is_empty() {
                return;
            }
            let args = match args {
                Value::String(s) => s.clone(),
                other => {
                    let mut s = String::new();
                    crate::json::to_python_json(other, &mut s);
                    s
                }
            };
            calls.push((name.to_string(), args));
        }
        for (name, args) in calls {
            let index = self.st.calls;
            self.st.calls += 1;
            let id = self.next_id();
            let c = out.call_fragment(index);
            c.id = Some(id);
            c.name = Some(name);
            c.arguments.push_str(&args);
        }
    }

    /// SplitMix64 call ids, as the engine's (`chatcmpl-tool-…`).
    fn next_id(&mut self) -> String {
        self.st.ids = self.st.ids.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.st.ids;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        format!("chatcmpl-tool-{z:016x}")
    }

    /// Whether the stream is inside a reasoning region now.
    pub(crate) fn in_reasoning(&self) -> bool {
        self.st.current.is_some_and(|c| self.field(c).role == Role::Reasoning)
    }

    /// Bytes held (pending delimiters, a tool region's body, white space).
    pub(crate) fn held_bytes(&self) -> usize {
        self.st.buf.len() - self.st.pos + self.st.body.len() + self.st.pend_ws.len()
    }
}
