//! vLLM's one-shot decisions that depend on the whole output, followed when
//! the request sets `vllm_one_shot` (a format's `[vllm.one_shot]` table).
//!
//! vLLM's non-streaming parsers read the finished text with `partition`,
//! `in` and whole-text regexes, and some of their answers hang on text that
//! comes last: a reasoning start marker written again in the answer drops
//! everything before it; reasoning whose end marker never comes is content;
//! a call list followed by text, a call whose JSON string holds the
//! closing marker, or a call block a strict parser rejects (cut, or its
//! tags unbalanced), makes the whole output content; OLMo 3 reads only the
//! first closed call block, and MiniMax-M3 one reasoning block found by
//! `partition`s, with a tool parser that called no tool leaving the markup
//! as written (markers visible, as vLLM's derender tier keeps special
//! tokens). vLLM's own stream
//! answers otherwise, so Sift's default streams the stream's reading. With
//! `vllm_one_shot`, a parser for such a format buffers the output and, at
//! its end, decides as vLLM's one-shot parser does and runs the ordinary
//! engine once over the text it picked.
//!
//! This layer sits above the streaming parser (`crate::parser`): it owns
//! the request entry points (`ParserFactory::parser`, `parse`), builds
//! streaming parsers for the text it decides on, and is reached from a
//! `Parser` only through the `ReadWhole` trait the parser defines.
//!
//! Invariants: the answer is a function of the concatenated output (the
//! cuts never reach the engine), so streaming equals one-shot; nothing is
//! emitted before the end; the engine, filters and limits are the ordinary
//! ones, so every other rule holds unchanged. Memory is the output's size
//! (the price of the setting; formats without `[vllm.one_shot]` never hold).

use crate::account::Accountant;
use crate::engine::{
    Answer, Class, Policy, Spans, Text, SEEN_DROPPED_TEXT, SEEN_STRING_MARKER, SEEN_TEXT_AFTER_CALL,
};
use crate::format::compiled::StrictBlock;
use crate::format::StateId;
use crate::limits::{LimitState, Limits};
use crate::message::{Delta, Message};
use crate::parser::{Accounting, Held, Parser, ParserFactory, Pick, ReadWhole, Request};

impl ParserFactory {
    /// A parser for one request: the streaming parser, or, for a format
    /// whose vLLM one-shot answer depends on the whole output when the
    /// request follows it, one that holds the output until it ends.
    pub fn parser(&self, req: &Request) -> Parser {
        let (mut p, pick) = self.stream_parser(req);
        let policy = pick.as_ref().map(|pick| Policy::resolve(&pick.fmt, req.vllm()));
        if let (Some(pick), Some(policy)) = (pick, policy.filter(|p| p.answer == Answer::Whole)) {
            // vLLM's one-shot answer depends on the whole output: held until it ends.
            let loss = policy.one_shot_loss;
            let w = Whole { factory: self.clone(), req: req.clone(), pick, loss };
            p.whole = Some(Box::new(Held::new(Box::new(w))));
        }
        // Byte accounting, settled with the rest of the policy.
        let spans = policy.map_or_else(|| Spans::of(req.vllm()), |p| p.spans);
        if let Some(account) = Accountant::new(spans, !req.include_reasoning, self.format()) {
            let twin = account.wants_twin().then(|| {
                self.parser(&Request { vllm_text_loss: false, vllm_one_shot: false, ..req.clone() })
            });
            p.keep_accounts(Accounting { account, twin });
        }
        p
    }

    /// One-shot: push everything, finish, fold.
    pub fn parse(&self, req: &Request, text: &str, ids: Option<&[u32]>) -> Message {
        let mut p = self.parser(req);
        p.parse(text, ids)
    }
}

/// The reader of one request's held output.
#[derive(Debug)]
struct Whole {
    factory: ParserFactory,
    /// The request, for the streaming parsers built for the text decided
    /// on (the factory settles their policies from it).
    req: Request,
    pick: Pick,
    /// Whether the decisions that apply only with vLLM's text loss apply.
    loss: Text,
}

impl ReadWhole for Whole {
    fn read(
        &self,
        text: String,
        ids: Option<Vec<u32>>,
        limits: Limits,
        out: &mut Delta,
    ) -> (LimitState, Option<usize>) {
        self.decide(text, ids, limits, out, None)
    }

    fn read_noted(
        &self,
        text: String,
        ids: Option<Vec<u32>>,
        limits: Limits,
        out: &mut Delta,
        notes: &mut Vec<(usize, usize, Class)>,
    ) -> (LimitState, Option<usize>) {
        self.decide(text, ids, limits, out, Some(notes))
    }
}

impl Whole {
    /// Decides, parses the text decided on into `out`, and returns the
    /// limits state of the parser that ran (what it cut) and the call the
    /// output's end cut in its reading. With `notes`
    /// (byte accounting), the engines keep a ledger, and the notes of the
    /// one whose reading is the answer are handed on when it read the
    /// output as written (from some byte on: the offsets shift by it).
    fn decide(
        &self,
        mut text: String,
        mut ids: Option<Vec<u32>>,
        limits: Limits,
        out: &mut Delta,
        notes: Option<&mut Vec<(usize, usize, Class)>>,
    ) -> (LimitState, Option<usize>) {
        let Whole { factory, req, pick, loss } = self;
        let loss = *loss == Text::Lost;
        let rules = &pick.fmt.one_shot;
        let noted = notes.is_some();
        let build = |pick: &Pick, start| {
            let mut p = factory.build(req, pick, start).with_limits(limits);
            if noted {
                p.engine.keep_ledger();
            }
            p
        };
        // Whether the answer is the last engine's reading of `text[from..]` as written.
        let mut exact = true;
        let first = build(pick, None);
        if rules.prompt_open_empty && first.prompt_lost() {
            // vLLM reads nothing after the message the prompt opened.
            return (LimitState::new(limits), None);
        }
        // The output as written, when a rule below reads less of it.
        let mut written = None;
        if let Some((ends, opens)) = rules.later_blocks_lost.as_ref().filter(|_| loss) {
            if rules.first_block.is_some() {
                written = Some(text.clone());
            }
            if drop_later_blocks(&mut text, ends, opens) {
                ids = None;
                exact = false;
            }
        }
        if let Some(u) = &rules.unfinished {
            let last_of = |sps: &[String]| sps.iter().filter_map(|sp| text.rfind(sp.as_str())).max();
            let body = last_of(&u.body);
            let open = match (last_of(&u.start), body) {
                (_, None) => Some(0),
                (Some(s), Some(b)) if s > b => Some(s),
                _ => None,
            };
            if let Some(s) = open {
                // The last message's header never ended: the text before it
                // is read as usual, the message is content as written.
                let mut p = first;
                let mut d = run(&mut p, &text[..s], ids.as_deref().filter(|_| s == text.len()));
                if !d.content.is_empty() {
                    d.content.push('\n');
                }
                d.content.push_str(&text[s..]);
                d.content.push_str(&u.suffix);
                out.append(&d);
                return (std::mem::take(&mut p.limits), p.cut_call());
            }
        }
        if let Some((starts, ends)) = &rules.partition {
            if let Some((r, c)) = partition(&text, starts, ends, first.in_reasoning()) {
                // vLLM's one reasoning block: its text as written, the rest
                // content read by the tool format alone.
                if req.include_reasoning {
                    out.push_reasoning(&r);
                }
                let Some(alone) = factory.alone_pick().filter(|_| pick.calls) else {
                    return content(&c, limits, out);
                };
                let mut p = build(&alone, None);
                let d = run(&mut p, &c, None);
                if d.tool_calls.is_empty() && rules.no_call_as_written {
                    return content(&c, limits, out);
                }
                out.append(&d);
                return (std::mem::take(&mut p.limits), p.cut_call());
            }
        }
        let (mut p, reading) = if !rules.unterminated.is_empty()
            && !rules.unterminated.iter().any(|sp| text.contains(sp.as_str()))
        {
            // Reasoning that never ends: the whole output is read without
            // the reasoning grammar (its markers as written, but for a
            // stripped opening one).
            let from = rules.strip.iter().find(|sp| text.starts_with(sp.as_str())).map_or(0, |sp| sp.len());
            match factory.alone_pick().filter(|_| pick.calls) {
                Some(alone) => (build(&alone, None), Reading::Alone(from, alone)),
                None => return content(&text[from..], limits, out),
            }
        } else if let Some((at, to)) = rules.split.as_ref().filter(|_| loss && first.in_reasoning()) {
            match at.iter().filter_map(|sp| text.find(sp.as_str()).map(|i| i + sp.len())).min() {
                // Everything before the first start marker reaches no field.
                Some(end) => (build(pick, Some(*to)), Reading::At(end, *to)),
                None => (first, Reading::Whole),
            }
        } else if let Some(lone) = rules.lone_end.as_ref().filter(|_| !first.in_reasoning()) {
            match (first_in(&text, &lone.end), first_in(&text, &lone.unless)) {
                // An end marker no start marker opened: the text before it was reasoning.
                (Some(e), u) if u.is_none_or(|u| u > e) => {
                    (build(pick, Some(lone.to)), Reading::At(0, lone.to))
                }
                _ => (first, Reading::Whole),
            }
        } else {
            (first, Reading::Whole)
        };
        let from = reading.from();
        // Token ids fit only the whole text.
        let ids = ids.as_deref().filter(|_| from == 0);
        let lossy =
            loss && (rules.between_calls_lost || rules.strip_join.is_some() || rules.outside_lost.is_some());
        let (mut d, span) = if lossy {
            // Where content and calls interleave, and where text outside a
            // message begins: the text pushed a character at a time (the
            // answer is the same however it is cut).
            let t = timeline(&mut p, &text[from..]);
            match t.dropped_at.zip(rules.outside_lost.as_ref()) {
                Some((at, resume_at)) => {
                    // Nothing from the first text outside a message up to the
                    // next message's start marker is placed.
                    p = match &reading {
                        Reading::Alone(_, alone) => build(alone, None),
                        Reading::At(_, st) => build(pick, Some(*st)),
                        Reading::Whole => build(pick, None),
                    };
                    let rest = &text[from + at..];
                    let resume = first_in(rest, resume_at).unwrap_or(rest.len());
                    let kept = format!("{}{}", &text[from..from + at], &rest[resume..]);
                    exact = false;
                    (run(&mut p, &kept, None), None)
                }
                None => (t.delta, t.calls_span),
            }
        } else {
            (run(&mut p, &text[from..], ids), None)
        };
        if let Some((a, b)) = span.filter(|_| rules.between_calls_lost) {
            // The text between the first call and the last reaches no field.
            if a <= b
                && b <= d.content.len()
                && d.content.is_char_boundary(a)
                && d.content.is_char_boundary(b)
            {
                d.content.replace_range(a..b, "");
                exact = false;
            }
        }
        let seen = p.seen();
        // A strict parser rejects the block even when it yields no call
        // (an opener alone stays content as written).
        let strict_off = rules
            .strict_block
            .as_ref()
            .is_some_and(|s| strict_fails(&text[from..], s, d.tool_calls.is_empty()));
        // A legacy pair whose tool parser called no tool answers the
        // reasoning parser's content: the tool markup as written.
        let no_call = rules.no_call_as_written && pick.calls && d.tool_calls.is_empty();
        // No closed first block, or one that is not all calls: vLLM reads no call.
        let no_block = rules.first_block.as_ref().is_some_and(|(opens, closes)| {
            first_in(&text[from..], opens).is_some()
                && (d.tool_calls.is_empty() || unclosed(&text[from..], opens, closes))
        });
        let calls_off = strict_off
            || no_call
            || no_block
            || !d.tool_calls.is_empty()
                && ((rules.text_after_calls && seen & SEEN_TEXT_AFTER_CALL != 0)
                    || (rules.marker_in_string && seen & SEEN_STRING_MARKER != 0)
                    || (rules.single_call && d.tool_calls.iter().any(|c| c.index > 0)));
        if let Some(w) = written.take().filter(|_| no_block) {
            // The answer is the output as written, later blocks included.
            text = w;
        }
        if let Some(cut) = rules.empty_if_in_args.as_deref().filter(|_| loss) {
            if d.tool_calls.iter().any(|c| c.arguments.contains(cut)) {
                // vLLM's match of the call list ends inside it: nothing parses, nothing is answered.
                return (LimitState::new(limits), None);
            }
        }
        if calls_off {
            // The call list does not parse as vLLM reads it: no call, the
            // output (after any reasoning) is content as written.
            let plain = factory.plain_pick();
            let start = match reading {
                Reading::Alone(..) => return content(&text[from..], limits, out),
                // The same state in the reasoning-only variant (states keep their names).
                Reading::At(_, st) => plain.fmt.state_named(pick.fmt.state_name(st)),
                Reading::Whole => None,
            };
            p = build(&plain, start);
            d = run(&mut p, &text[from..], ids);
        }
        if let Some(remove) = rules.strip_join.as_ref().filter(|_| loss && !calls_off) {
            let first_call = span.map(|s| s.0);
            if let Some(k) = first_call.filter(|k| d.content.is_char_boundary(*k)) {
                d.content = strip_join(&d.content, k, remove);
                exact = false;
            }
        }
        if let Some(notes) = notes.filter(|_| exact) {
            let mut own = vec![];
            p.engine.take_notes(&mut own);
            notes.extend(own.into_iter().map(|(a, b, c)| (a + from, b + from, c)));
        }
        out.append(&d);
        (std::mem::take(&mut p.limits), p.cut_call())
    }
}

/// How the held output is read.
#[derive(Debug)]
enum Reading {
    /// As streaming would, from the request's start state.
    Whole,
    /// Without the reasoning grammar (this pick), from this byte.
    Alone(usize, Pick),
    /// From this byte, in this state.
    At(usize, StateId),
}

impl Reading {
    fn from(&self) -> usize {
        match self {
            Reading::Whole => 0,
            Reading::Alone(n, _) | Reading::At(n, _) => *n,
        }
    }
}

/// Removes what follows the first call block's end (`ends`) up to the last
/// block's end, when another block (`opens`) lies between; whether it did.
fn drop_later_blocks(text: &mut String, ends: &[String], opens: &[String]) -> bool {
    let first = ends.iter().filter_map(|sp| text.find(sp.as_str()).map(|i| i + sp.len())).min();
    let last = ends.iter().filter_map(|sp| text.rfind(sp.as_str()).map(|i| i + sp.len())).max();
    match (first, last) {
        (Some(a), Some(b)) if b > a && first_in(&text[a..b], opens).is_some() => {
            text.replace_range(a..b, "");
            true
        }
        _ => false,
    }
}

/// vLLM's text around calls: the content before byte `k` (the first call)
/// and after it, each stripped (`remove` taken out of the part after),
/// joined with one newline.
fn strip_join(content: &str, k: usize, remove: &[String]) -> String {
    let mut after = content[k..].to_string();
    for sp in remove {
        after = after.replace(sp.as_str(), "");
    }
    let parts = [content[..k].trim(), after.trim()];
    parts.iter().filter(|s| !s.is_empty()).copied().collect::<Vec<_>>().join("\n")
}

/// Whether vLLM's strict reading of the first call block fails
/// (`strict_block`, HY-V4's `_extract_tool_calls_strict`): the output opens
/// a block and the first closer anywhere does not follow the opener, or a
/// pair of markers inside the block is unbalanced, or no call was read.
/// Text-level, as vLLM's `find` and `count` are, so a marker spelled inside
/// a value counts as vLLM counts it.
fn strict_fails(text: &str, s: &StrictBlock, no_calls: bool) -> bool {
    let Some((a, len)) = s.open.iter().filter_map(|sp| text.find(sp.as_str()).map(|i| (i, sp.len()))).min()
    else {
        return false;
    };
    let body = a + len;
    let block = match first_in(text, &s.close) {
        Some(e) if e >= body => &text[body..e],
        _ => return true,
    };
    let count = |sps: &[String]| sps.iter().map(|sp| block.matches(sp.as_str()).count()).sum::<usize>();
    no_calls || s.balanced.iter().any(|(o, c)| count(o) != count(c))
}

/// vLLM's `partition`-based reasoning split (`partition = { start, end }`),
/// when it differs from the grammar's: the reasoning and the content, both
/// as written. `None` when the grammar's reading is vLLM's (no start
/// marker, and no end marker opening an output outside reasoning).
fn partition(text: &str, starts: &[String], ends: &[String], in_reasoning: bool) -> Option<(String, String)> {
    let first_of = |t: &str, sps: &[String]| {
        sps.iter().filter_map(|sp| t.find(sp.as_str()).map(|i| (i, i + sp.len()))).min()
    };
    if !in_reasoning {
        if let Some(sp) = ends.iter().find(|sp| text.starts_with(sp.as_str())) {
            // A stray closer opening the output is dropped; the rest, markers and all, is content.
            return Some((String::new(), text[sp.len()..].to_string()));
        }
    }
    let (s, after) = first_of(text, starts)?;
    let rest = &text[after..];
    Some(match first_of(rest, ends) {
        Some((e, past)) => (rest[..e].to_string(), format!("{}{}", &text[..s], &rest[past..])),
        None => (rest.to_string(), text[..s].to_string()),
    })
}

/// Whether `text` spells a block opener (`opens`) with no closer
/// (`closes`) after its first spelling (`first_block`: vLLM finds no block).
fn unclosed(text: &str, opens: &[String], closes: &[String]) -> bool {
    first_in(text, opens).is_some_and(|i| first_in(&text[i..], closes).is_none())
}

/// Where the first spelling of any of `sps` is in `text`.
fn first_in(text: &str, sps: &[String]) -> Option<usize> {
    sps.iter().filter_map(|sp| text.find(sp.as_str())).min()
}

/// A run a character at a time: its delta, the content bytes written when
/// the first call's data came and when the last call's data came, and where
/// the first non-blank text outside a message began (`SEEN_DROPPED_TEXT`).
struct Timeline {
    delta: Delta,
    dropped_at: Option<usize>,
    calls_span: Option<(usize, usize)>,
}

fn timeline(p: &mut Parser, text: &str) -> Timeline {
    let mut d = Delta::default();
    let mut dropped_at = None;
    let mut calls = (0usize, 0usize);
    let (mut first, mut last) = (None, None);
    for (i, ch) in text.char_indices() {
        p.push_noted(&text[i..i + ch.len_utf8()], None, &mut d);
        if dropped_at.is_none() && p.seen() & SEEN_DROPPED_TEXT != 0 {
            dropped_at = Some(i);
        }
        let now = (d.tool_calls.len(), d.tool_calls.last().map_or(0, |c| c.arguments.len()));
        if now != calls {
            calls = now;
            first.get_or_insert(d.content.len());
            last = Some(d.content.len());
        }
    }
    p.finish_into(&mut d);
    Timeline { delta: d, dropped_at, calls_span: first.zip(last) }
}

/// The whole text, pushed and finished.
fn run(p: &mut Parser, text: &str, ids: Option<&[u32]>) -> Delta {
    let mut d = Delta::default();
    p.push_noted(text, ids, &mut d);
    p.finish_into(&mut d);
    d
}

/// The whole output as content (no parser reads it).
fn content(text: &str, limits: Limits, out: &mut Delta) -> (LimitState, Option<usize>) {
    out.push_content(text);
    (LimitState::new(limits), None)
}
