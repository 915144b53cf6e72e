//! Compiling format files: composition of a reasoning grammar with a tool
//! grammar, name resolution, and the checks that make a format safe to
//! stream (no ambiguous or unbounded markers, no unreachable states, no
//! `reprocess` loops). Everything is validated here, never per token.
//!
//! One module per table: `builder` (`[terminals]`, `[states]` merged into
//! one namespace), `states` (text kinds and transitions), `calls`
//! (`[calls]`), `vllm` (the `[vllm]` profile), `checks` (safety and
//! the lexer's needles); this module composes them and the start state.

mod builder;
mod calls;
mod checks;
mod states;
mod vllm;

use super::compiled::*;
use super::spec::*;
use crate::FormatError;
use builder::{tool_state, Builder};
use std::collections::{BTreeMap, HashMap};

/// The reasoning grammar of a pair that names none: one `content` state.
fn content_spec() -> FormatSpec {
    let mut states = BTreeMap::new();
    states.insert(
        "content".to_string(),
        StateSpec {
            text: ModeSpec::Simple(SimpleMode::Content),
            on: BTreeMap::new(),
            then: None,
            join: None,
            calls: false,
            hold: None,
        },
    );
    FormatSpec { name: "identity".into(), kind: Kind::Reasoning, states, ..FormatSpec::default() }
}

/// Composes and compiles a reasoning grammar (None: plain content) with a
/// tool grammar (None: no tool calls).
pub fn compile(reasoning: Option<&FormatSpec>, tools: Option<&FormatSpec>) -> Result<Format, FormatError> {
    compile_entry(reasoning, tools, None)
}

/// The start: the initial state, the request switches, the states that are
/// roots for reachability, and the prompt-tail rules.
struct Start {
    initial: StateId,
    switches: Vec<(SwitchKey, serde_json::Value, StateId, bool)>,
    roots: Vec<StateId>,
    turns: Vec<String>,
    enter: Vec<(String, StateId)>,
    prime: bool,
}

fn start(
    b: &Builder,
    r: &FormatSpec,
    tools: Option<&FormatSpec>,
    declared: &str,
    rename: &dyn Fn(&str) -> String,
) -> Result<Start, FormatError> {
    let initial = b.state(&r.name, &rename(r.initial.as_deref().unwrap_or("content")))?;
    let mut switches = vec![];
    // A switch's `alone` state serves only without a tool grammar; both of
    // its states are roots, so either reading compiles in every composition.
    let mut roots = vec![b.state(&r.name, declared)?];
    for s in &r.switches {
        let (key, v) = switch_key(s)?;
        let st = b.state(&r.name, &rename(&s.state))?;
        let picked = match (&s.alone, tools) {
            (Some(a), None) => {
                roots.push(st);
                (b.state(&r.name, &rename(a))?, true)
            }
            (Some(a), Some(_)) => {
                roots.push(b.state(&r.name, &rename(a))?);
                (st, s.over_prompt)
            }
            (None, _) => (st, s.over_prompt),
        };
        switches.push((key, v, picked.0, picked.1));
    }
    // A tool format's switches pick the entry of sibling variants: their
    // states are roots too.
    if let Some(t) = tools {
        for s in &t.switches {
            switch_key(s)?;
            roots.push(b.state(&t.name, &tool_state(&s.state))?);
        }
    }
    let (mut turns, mut enter, mut prime) = (vec![], vec![], false);
    if let Some(p) = &r.prompt {
        turns = p.turn_start.clone();
        prime = p.prime;
        for (tname, st) in &p.enter {
            let t = b.term(0, r, tname)?;
            let sid = b.state(&r.name, &rename(st))?;
            for sp in &b.terminals[t as usize].spellings {
                enter.push((sp.to_string(), sid));
            }
        }
    }
    Ok(Start { initial, switches, roots, turns, enter, prime })
}

/// [`compile`] with the tool grammar entered at `entry` instead of its
/// declared one (a tool format's `[[switch]]` variant).
pub fn compile_entry(
    reasoning: Option<&FormatSpec>,
    tools: Option<&FormatSpec>,
    entry: Option<&str>,
) -> Result<Format, FormatError> {
    let identity = content_spec();
    let r = reasoning.unwrap_or(&identity);
    let name = format!("{}+{}", reasoning.map_or("none", |s| &s.name), tools.map_or("none", |s| &s.name));
    let mut b = Builder::default();
    b.add_terminals(0, r)?;
    if let Some(t) = tools {
        b.add_terminals(1, t)?;
    }
    let declared = tool_state(tools.and_then(|t| t.entry.as_deref()).unwrap_or("content"));
    let entry = entry.map_or_else(|| declared.clone(), tool_state);
    let entry_c = entry.clone();
    let rename = move |s: &str| if s == "content" { entry_c.clone() } else { s.to_string() };
    // Tool states first so a merged `content` keeps the tool grammar's text kind.
    if let Some(t) = tools {
        b.add_states(1, t, &|s: &str| tool_state(s))?;
    }
    b.add_states(0, r, &rename)?;
    if tools.is_some() {
        b.share_calls(r)?;
    }
    if !b.state_index.contains_key("content") {
        b.state_slot("content", &ModeSpec::Simple(SimpleMode::Content), 0);
    }
    let start = start(&b, r, tools, &declared, &rename)?;
    let states = states::resolve(&b, r, tools)?;
    let loss = vllm::text_loss(r, tools);
    let (calls, uncommitted) = calls::rules(tools, &loss)?;
    let find = |n: &str| b.term_index.get(&(0u8, n.to_string())).copied();
    let keep = |s: &FormatSpec| crate::special::KeepSpecial::from_spec(s.keep_special_tokens);
    let mut f = Format {
        name,
        terminals: b.terminals.clone(),
        states,
        initial: start.initial,
        switches: start.switches,
        prompt_turns: start.turns,
        prompt_enter: start.enter,
        prompt_prime: start.prime,
        prompt_lost: loss.prompt_lost,
        uncommitted,
        strip_when_none: loss.strip_when_none,
        defer_calls: tools.is_some_and(|t| t.calls.defer),
        content_prefix: r.content_prefix.clone(),
        calls,
        has_tools: tools.is_some(),
        token_ids: HashMap::new(),
        token_canon: vec![],
        reasoning_markers: (find("think_start"), find("think_end")),
        template_init: r.template_init.clone().or_else(|| tools.and_then(|t| t.template_init.clone())),
        drop_content_after_calls: loss.content_after_calls,
        special: crate::special::SpecialRule { reasoning: reasoning.map(keep), tools: tools.map(keep) },
        recover_newlines: r.recover_newlines,
        force_content: r.force_content.as_ref().map(|w| {
            (
                w.kwarg.clone(),
                serde_json::to_value(&w.equals).unwrap_or(serde_json::Value::Null),
                w.only_absent,
            )
        }),
        one_shot: vllm::one_shot(&b, r, tools, &rename)?,
    };
    if f.calls.schema_args && !f.states.iter().any(|s| s.spellings.iter().any(|x| x.2.hold.is_some())) {
        let t = tools.unwrap_or(r);
        return Err(t.bad_key(
            "calls",
            "schema_args",
            "types held calls: the format has no `hold` transition",
        ));
    }
    if f.calls.markers_in_values == crate::format::spec::MarkersInValues::Follow {
        states::mark_follow(&mut f.states);
    }
    checks::check_reachable(&f, &start.roots)?;
    checks::check_reprocess(&f)?;
    f.states.shrink_to_fit();
    Ok(f)
}

/// A switch's key and value.
pub(crate) fn switch_key(s: &SwitchSpec) -> Result<(SwitchKey, serde_json::Value), FormatError> {
    let v = serde_json::to_value(&s.equals).unwrap_or(serde_json::Value::Null);
    let key = match (&s.kwarg, &s.field, &s.init) {
        (Some(k), None, None) => SwitchKey::Kwarg(k.clone()),
        (None, Some(f), None) => SwitchKey::Field(f.clone()),
        (None, None, Some(i)) => SwitchKey::Init(i.clone()),
        _ => {
            return Err(FormatError::BadKey {
                file: "format file".into(),
                table: "switch".into(),
                key: "kwarg".into(),
                message: format!("the switch to {:?} needs exactly one of kwarg, field, init", s.state),
            })
        }
    };
    Ok((key, v))
}
