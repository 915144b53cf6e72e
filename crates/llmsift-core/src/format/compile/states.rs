//! `[states]` compiled: each state's text kind (a word or a configured
//! kernel) and its transitions resolved to ids, with the drop terminals
//! added and the lexer's needle built. Kernels that hand text over check
//! they never hand it to themselves. With `markers_in_values = "follow"`,
//! the closers of value states are marked (`mark_follow`).

use super::builder::{tool_state, Builder};
use super::checks::{check_ambiguous, needle_for, seconds_for};
use crate::format::compiled::*;
use crate::format::spec::{
    BareValuesSpec, FormatSpec, Kernel, ModeSpec, NameStyleSpec, ParamSpec, ReadingSpec, SimpleMode, Unrouted,
};
use crate::FormatError;

/// The compiled states of `b`, in build order. `r` is the reasoning
/// grammar (its `relaxed_values` overrides every relaxed body's).
pub(super) fn resolve(
    b: &Builder,
    r: &FormatSpec,
    tools: Option<&FormatSpec>,
) -> Result<Vec<State>, FormatError> {
    let mut states = Vec::with_capacity(b.states.len());
    for (sname, mode, trans, g) in &b.states {
        let spec = if *g == 0 { r } else { tools.unwrap_or(r) };
        let mut mode = compile_mode(b, spec, sname, mode, *g)?;
        if let (Mode::Relaxed(_), Some(v)) = (&mode, r.relaxed_values) {
            mode = Mode::Relaxed(bare_values(v));
        }
        let mut spellings: Vec<(Box<[u8]>, TermId, Trans)> = vec![];
        for (t, tt) in trans {
            if tt.hold.is_some() && (tt.release || tt.fail) {
                return Err(spec.bad_key(
                    &format!("states.{}", sname.trim_start_matches('~')),
                    "hold",
                    "a transition cannot both hold and release or fail",
                ));
            }
            let tr = Trans {
                hold: match &tt.hold {
                    Some(h) => Some(b.state(&spec.name, h)?),
                    None => None,
                },
                release: tt.release,
                fail: tt.fail,
                to: b.state(&spec.name, &tt.to)?,
                call: tt.call,
                end: tt.end,
                reprocess: tt.reprocess,
                route: tt.route,
                keep: tt.keep,
                verbatim: tt.verbatim,
                discard: tt.discard,
                section: tt.section,
                follow: false,
                args_end: tt.args_end,
                reading: tt.reading.map(reading),
                param: tt.param.map(|p| match p {
                    ParamSpec::String => ParamForce::Type(crate::schema::ParamType::String),
                    ParamSpec::Json => ParamForce::Type(crate::schema::ParamType::Json),
                    ParamSpec::Declared => ParamForce::Declared,
                    ParamSpec::Admitted => ParamForce::Admitted(false),
                    ParamSpec::AdmittedLiteral => ParamForce::Admitted(true),
                }),
            };
            for sp in &b.terminals[*t as usize].spellings {
                spellings.push((sp.as_bytes().into(), *t, tr));
            }
        }
        let me = b.state_index[sname];
        for &d in &b.drops {
            if spellings.iter().any(|(_, t, _)| *t == d) {
                continue;
            }
            let tr = Trans { to: me, ..Trans::default() };
            for sp in &b.terminals[d as usize].spellings {
                // Both grammars may drop the same token: one entry is enough,
                // and a spelling the state already acts on keeps its action.
                if !spellings.iter().any(|(s, _, _)| **s == *sp.as_bytes()) {
                    spellings.push((sp.as_bytes().into(), d, tr));
                }
            }
        }
        check_ambiguous(sname, &spellings)?;
        let needle = needle_for(&spellings);
        let second = seconds_for(&spellings);
        let then = match b.thens.get(sname) {
            Some(t) if t == sname => return Err(FormatError::ReprocessCycle { state: sname.clone() }),
            Some(t) => Some(b.state(&spec.name, t)?),
            None => None,
        };
        let join = b.joins.get(sname).cloned();
        let hold = match b.holds.get(sname) {
            Some(h) => Some(b.state(&spec.name, h)?),
            None => None,
        };
        states.push(State { name: sname.clone(), mode, spellings, needle, second, then, join, hold });
    }
    Ok(states)
}

fn reading(r: ReadingSpec) -> Reading {
    match r {
        ReadingSpec::Sift => Reading::Sift,
        ReadingSpec::Vllm => Reading::Vllm,
    }
}

fn bare_values(v: BareValuesSpec) -> BareValues {
    match v {
        BareValuesSpec::Literal => BareValues::Literal,
        BareValuesSpec::Schema => BareValues::Schema,
        BareValuesSpec::Declared => BareValues::Declared,
    }
}

/// A kernel that hands the rest of its text to itself would read the same
/// byte forever.
fn handover_to_self(b: &Builder, state: &str, done: StateId, fail: StateId) -> Result<(), FormatError> {
    if b.state_index.get(state).is_some_and(|&me| me == done || me == fail) {
        return Err(FormatError::ReprocessCycle { state: state.trim_start_matches('~').to_string() });
    }
    Ok(())
}

fn compile_mode(
    b: &Builder,
    spec: &FormatSpec,
    state: &str,
    m: &ModeSpec,
    g: u8,
) -> Result<Mode, FormatError> {
    let table = format!("states.{}.text", state.trim_start_matches('~'));
    let bad = |key: &str, why: &str| spec.bad_key(&table, key, why);
    let own = |n: &str| if g == 1 { tool_state(n) } else { n.to_string() };
    Ok(match m {
        ModeSpec::Simple(s) => match s {
            SimpleMode::Content => Mode::Content,
            SimpleMode::Reasoning => Mode::Reasoning,
            SimpleMode::Drop => Mode::Drop,
            SimpleMode::Lost => Mode::Lost,
            SimpleMode::Name => Mode::Name(NameStyle::Plain),
            SimpleMode::ParamName => Mode::ParamName,
            SimpleMode::ParamValue => Mode::ParamValue,
            SimpleMode::Args => Mode::Args(None),
            SimpleMode::Relaxed => Mode::Relaxed(BareValues::Literal),
            SimpleMode::RelaxedString => Mode::RelaxedStr,
            SimpleMode::Blank => Mode::Blank,
        },
        ModeSpec::Table(k) => match &**k {
            Kernel::Name(t) => Mode::Name(match t.style {
                NameStyleSpec::Plain => NameStyle::Plain,
                NameStyleSpec::Kimi => NameStyle::Kimi,
            }),
            Kernel::Args(t) => {
                let done = b.state(&spec.name, &own(&t.done))?;
                handover_to_self(b, state, done, done)?;
                Mode::Args(Some(done))
            }
            Kernel::Envelope(t) => {
                let st = |n: &Option<String>| b.state(&spec.name, &own(n.as_deref().unwrap_or("content")));
                let sep = match t.separator.as_deref() {
                    None => None,
                    Some(s) if s.len() == 1 => Some(s.as_bytes()[0]),
                    Some(s) => return Err(bad("separator", &format!("{s:?} is not one byte"))),
                };
                let (done, fail) = (st(&t.done)?, st(&t.fail)?);
                handover_to_self(b, state, done, fail)?;
                Mode::Envelope(Box::new(EnvelopeCfg {
                    name_keys: t.name_keys.clone().unwrap_or_else(|| vec!["name".into()]),
                    args_keys: t
                        .args_keys
                        .clone()
                        .unwrap_or_else(|| vec!["arguments".into(), "parameters".into()]),
                    array: t.array,
                    separator: sep,
                    done,
                    fail,
                    empty_args: t.empty_args,
                    keyed: t.keyed,
                    single: t.single,
                    rest: t.rest,
                }))
            }
            Kernel::Header(t) => {
                let mut routes = vec![];
                for r in &t.routes {
                    match b.state_index.get(&own(&r.to)) {
                        Some(&sid) => routes.push(Route {
                            contains: r.contains.clone(),
                            to: sid,
                            call: r.call,
                            tools: r.tools,
                            section: r.section,
                            raw: r.raw,
                            builtin: r.builtin,
                            reading: r.reading.map(reading),
                        }),
                        // A call route into a state no composed grammar defines is off.
                        None if r.call => {}
                        None => {
                            return Err(FormatError::UnknownState {
                                format: spec.name.clone(),
                                state: r.to.clone(),
                            })
                        }
                    }
                }
                Mode::Header(Box::new(HeaderCfg {
                    routes,
                    recipient: t.recipient.clone().unwrap_or_else(|| "to=".into()),
                    strip: t.strip.clone().unwrap_or_else(|| vec!["functions.".into()]),
                    unrouted_content: t.unrouted == Unrouted::Content,
                    builtins: t.builtins.clone(),
                }))
            }
            Kernel::Pythonic(t) => {
                let st = |n: &Option<String>| b.state(&spec.name, &own(n.as_deref().unwrap_or("content")));
                let (done, fail) = (st(&t.done)?, st(&t.fail)?);
                handover_to_self(b, state, done, fail)?;
                Mode::Pythonic(Box::new(PyCfg { bracketed: t.bracketed, done, fail }))
            }
            Kernel::Relaxed(t) => Mode::Relaxed(bare_values(t.values)),
            Kernel::Xml(t) => {
                let prefix = t.prefix.clone().unwrap_or_default();
                let max_depth = t.max_depth.unwrap_or(128);
                let mixed_text = t.mixed_text.clone().unwrap_or_else(|| "$text".into());
                if prefix.is_empty() || prefix.len() > 64 {
                    return Err(bad("prefix", "must be 1 to 64 bytes"));
                }
                if !(1..=1024).contains(&max_depth) {
                    return Err(bad("max_depth", "must be 1 to 1024"));
                }
                if mixed_text.is_empty() {
                    return Err(bad("mixed_text", "must not be empty"));
                }
                Mode::Xml(Box::new(XmlCfg { prefix, max_depth, mixed_text }))
            }
        },
    })
}

/// Marks the closers of value states (`markers_in_values = "follow"`): a
/// marker of an XML parameter's value, or of a raw-JSON or envelope body
/// (where it is checked only inside an open string), whose transition opens
/// no call, reads nothing again and leads to markup or text (`content`,
/// `drop`, `lost`, `blank`): the next parameter's, the call's or the
/// section's close. Openers (into a name) act as before: what follows them
/// is a name, which no bounded lookahead can check.
pub(super) fn mark_follow(states: &mut [State]) {
    let closes = |m: &Mode| matches!(m, Mode::Content | Mode::Drop | Mode::Lost | Mode::Blank);
    let modes: Vec<bool> = states.iter().map(|s| closes(&s.mode)).collect();
    for st in states.iter_mut() {
        if !matches!(st.mode, Mode::ParamValue | Mode::Args(_) | Mode::Envelope(_)) {
            continue;
        }
        for (_, _, tr) in st.spellings.iter_mut() {
            tr.follow = !tr.call && !tr.reprocess && tr.hold.is_none() && modes[tr.to as usize];
        }
    }
}
