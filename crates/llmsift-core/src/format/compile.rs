//! Compiling format files: composition of a reasoning grammar with a tool
//! grammar, name resolution, and the checks that make a format safe to
//! stream (no ambiguous or unbounded markers, no unreachable states, no
//! `reprocess` loops). Everything is validated here, never per token.

use super::compiled::*;
use super::spec::*;
use crate::FormatError;
use std::collections::{BTreeMap, HashMap};

/// Longest marker spelling accepted, in bytes: the bound on held-back text.
pub const MAX_MARKER_LEN: usize = 64;

/// A state being built: name, text kind, transitions, and the grammar it
/// came from (0 reasoning, 1 tools).
type BuildState = (String, ModeSpec, Vec<(TermId, TransitionTable)>, u8);

struct Builder {
    terminals: Vec<Terminal>,
    term_index: HashMap<(u8, String), TermId>,
    state_index: HashMap<String, StateId>,
    states: Vec<BuildState>,
    drops: Vec<TermId>,
    thens: HashMap<String, String>,
    /// State → its `join` text.
    joins: HashMap<String, String>,
    /// State → the state its bare held group fails to (`hold`).
    holds: HashMap<String, String>,
}

fn table(t: &TransitionSpec) -> TransitionTable {
    match t {
        TransitionSpec::To(s) => TransitionTable { to: s.clone(), ..TransitionTable::default() },
        TransitionSpec::Full(t) => t.clone(),
    }
}

impl Builder {
    fn add_terminals(&mut self, g: u8, spec: &FormatSpec) -> Result<(), FormatError> {
        for (name, t) in &spec.terminals {
            for sp in t.spellings() {
                if sp.is_empty() || sp.len() > MAX_MARKER_LEN {
                    return Err(FormatError::BadSpelling { terminal: name.clone(), len: sp.len() });
                }
            }
            if t.spellings().is_empty() {
                return Err(FormatError::BadSpelling { terminal: name.clone(), len: 0 });
            }
            let id = self.terminals.len() as TermId;
            self.terminals.push(Terminal {
                spellings: t.spellings().iter().map(|s| s.as_str().into()).collect(),
                token: t.is_token(),
                required: t.is_required_token(),
            });
            self.term_index.insert((g, name.clone()), id);
        }
        for d in &spec.drop {
            let t = self.term(g, spec, d)?;
            self.drops.push(t);
        }
        Ok(())
    }

    fn term(&self, g: u8, spec: &FormatSpec, name: &str) -> Result<TermId, FormatError> {
        self.term_index.get(&(g, name.to_string())).copied().ok_or_else(|| FormatError::UnknownTerminal {
            format: spec.name.clone(),
            terminal: name.to_string(),
        })
    }

    fn state_slot(&mut self, name: &str, mode: &ModeSpec, g: u8) -> usize {
        if let Some(&i) = self.state_index.get(name) {
            return i as usize;
        }
        self.state_index.insert(name.to_string(), self.states.len() as StateId);
        self.states.push((name.to_string(), mode.clone(), Vec::new(), g));
        self.states.len() - 1
    }

    fn add_states(
        &mut self,
        g: u8,
        spec: &FormatSpec,
        rename: &dyn Fn(&str) -> String,
    ) -> Result<(), FormatError> {
        let tool_terms = if g == 0 { self.tool_terms() } else { vec![] };
        for (name, st) in &spec.states {
            let own = if g == 1 { tool_state(name) } else { name.clone() };
            let mut slots = vec![self.state_slot(&own, &st.text, g)];
            // The reasoning grammar's content is where its markers (an
            // optional `<think>` opener) are read; a tool grammar entered
            // elsewhere (`tool_choice` named or required) reads them there
            // too, so reasoning is found before the arguments begin.
            let entry = rename(name);
            if let Some(&e) =
                self.state_index.get(&entry).filter(|_| g == 0 && name == "content" && entry != own)
            {
                slots.push(e as usize);
            }
            if let Some(t) = &st.then {
                self.thens.insert(own.clone(), rename(t));
            }
            if let Some(j) = &st.join {
                self.joins.insert(own.clone(), j.clone());
            }
            if let Some(h) = &st.hold {
                self.holds.insert(own.clone(), rename(h));
            }
            for (tname, tr) in &st.on {
                let t = self.term(g, spec, tname)?;
                let mut tt = table(tr);
                tt.to = rename(&tt.to);
                tt.hold = tt.hold.as_deref().map(rename);
                for (k, &slot) in slots.iter().enumerate() {
                    let spells = &self.terminals[t as usize].spellings;
                    if k == 0 && g == 0 {
                        // In the merged content state the reasoning grammar's
                        // reading of a marker wins over a tool grammar's that
                        // opens no call: the tool grammar's is how it reads the
                        // marker alone (Inkling's next message header).
                        let terminals = &self.terminals;
                        self.states[slot].2.retain(|(u, tr)| {
                            !(tool_terms.contains(u)
                                && !tr.call
                                && terminals[*u as usize].spellings.iter().any(|sp| spells.contains(sp)))
                        });
                    }
                    // In the entry the tool grammar's own reading of a spelling wins.
                    let taken = self.states[slot].2.iter().any(|(u, _)| {
                        self.terminals[*u as usize].spellings.iter().any(|sp| spells.contains(sp))
                    });
                    if k == 0 || !taken {
                        self.states[slot].2.push((t, tt.clone()));
                    }
                }
            }
        }
        Ok(())
    }

    /// The tool grammar's terminals.
    fn tool_terms(&self) -> Vec<TermId> {
        self.term_index.iter().filter(|((g, _), _)| *g == 1).map(|(_, &t)| t).collect()
    }

    /// Gives each reasoning state marked `calls` the tool grammar's
    /// transitions out of `content`, where calls are read.
    fn share_calls(&mut self, r: &FormatSpec) -> Result<(), FormatError> {
        let Some(&e) = self.state_index.get("content") else { return Ok(()) };
        let tool_terms = self.tool_terms();
        let shared: Vec<_> =
            self.states[e as usize].2.iter().filter(|(t, _)| tool_terms.contains(t)).cloned().collect();
        for (name, _) in r.states.iter().filter(|(_, st)| st.calls) {
            let slot = self.state(&r.name, name)? as usize;
            for (t, tr) in &shared {
                if !self.states[slot].2.iter().any(|(u, _)| u == t) {
                    self.states[slot].2.push((*t, tr.clone()));
                }
            }
        }
        Ok(())
    }

    fn state(&self, spec_name: &str, name: &str) -> Result<StateId, FormatError> {
        self.state_index.get(name).copied().ok_or_else(|| FormatError::UnknownState {
            format: spec_name.to_string(),
            state: name.to_string(),
        })
    }
}

fn content_spec() -> FormatSpec {
    let mut states = BTreeMap::new();
    states.insert(
        "content".to_string(),
        StateSpec {
            text: ModeSpec::Simple("content".into()),
            on: BTreeMap::new(),
            then: None,
            join: None,
            calls: false,
            hold: None,
        },
    );
    FormatSpec {
        name: "identity".into(),
        kind: Kind::Reasoning,
        aliases: vec![],
        initial: None,
        switches: vec![],
        prompt: None,
        terminals: BTreeMap::new(),
        drop: vec![],
        states,
        entry: None,
        calls: CallPolicy::default(),
        relaxed_values: None,
        template_init: None,
        drop_content_after_calls: false,
        calls_kept_when_none: false,
        grammar_from: None,
        grammar_with_calls_only: false,
        alias_calls_kept_when_none: vec![],
        alias_cut_lost: BTreeMap::new(),
        keep_special_tokens: None,
        alias_keep_special_tokens: BTreeMap::new(),
        alias_native_required: vec![],
        alias_initial: BTreeMap::new(),
        alias_grammar_from: BTreeMap::new(),
        content_prefix: None,
        detect: vec![],
        detect_not: vec![],
        recover_newlines: false,
        force_content: None,
        one_shot: Default::default(),
        alias_one_shot: BTreeMap::new(),
    }
}

/// A format file's `keep_special_tokens`, read.
fn keep_special(spec: &FormatSpec) -> Result<Option<crate::special::KeepSpecial>, FormatError> {
    Ok(spec.keep_special_tokens.as_deref().map(crate::special::KeepSpecial::parse).transpose()?.flatten())
}

/// Composes and compiles a reasoning grammar (None: plain content) with a
/// tool grammar (None: no tool calls).
pub fn compile(reasoning: Option<&FormatSpec>, tools: Option<&FormatSpec>) -> Result<Format, FormatError> {
    compile_entry(reasoning, tools, None)
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
    let mut b = Builder {
        terminals: vec![],
        term_index: HashMap::new(),
        state_index: HashMap::new(),
        states: vec![],
        drops: vec![],
        thens: HashMap::new(),
        joins: HashMap::new(),
        holds: HashMap::new(),
    };
    b.add_terminals(0, r)?;
    if let Some(t) = tools {
        b.add_terminals(1, t)?;
    }
    let declared = tool_state(tools.and_then(|t| t.entry.as_deref()).unwrap_or("content"));
    let entry = entry.map_or_else(|| declared.clone(), tool_state);
    let entry_c = entry.clone();
    let rename = move |s: &str| {
        if s == "content" {
            entry_c.clone()
        } else {
            s.to_string()
        }
    };
    // Tool states first so a merged `content` keeps the tool grammar's text kind.
    if let Some(t) = tools {
        b.add_states(1, t, &|s: &str| tool_state(s))?;
    }
    b.add_states(0, r, &rename)?;
    if tools.is_some() {
        b.share_calls(r)?;
    }
    if !b.state_index.contains_key("content") {
        b.state_slot("content", &ModeSpec::Simple("content".into()), 0);
    }

    let initial_name = rename(r.initial.as_deref().unwrap_or("content"));
    let initial = b.state(&r.name, &initial_name)?;
    let mut switches = vec![];
    // A switch's `alone` state serves only without a tool grammar; both of
    // its states are roots, so either reading compiles in every composition.
    let mut roots = vec![b.state(&r.name, &declared)?];
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
    let (mut prompt_turns, mut prompt_enter, mut prompt_prime, mut prompt_lost) =
        (vec![], vec![], false, false);
    if let Some(p) = &r.prompt {
        prompt_turns = p.turn_start.clone();
        prompt_prime = p.prime;
        prompt_lost = p.lost;
        for (tname, st) in &p.enter {
            let t = b.term(0, r, tname)?;
            let sid = b.state(&r.name, &rename(st))?;
            for sp in &b.terminals[t as usize].spellings {
                prompt_enter.push((sp.to_string(), sid));
            }
        }
    }

    // Resolve states.
    let mut states = Vec::with_capacity(b.states.len());
    for (sname, mode, trans, g) in &b.states {
        let spec = if *g == 0 { r } else { tools.unwrap_or(r) };
        let mut mode = compile_mode(&b, spec, sname, mode, *g)?;
        if let (Mode::Relaxed(_), Some(v)) = (&mode, r.relaxed_values.as_deref()) {
            mode = match v {
                "literal" => Mode::Relaxed(BareValues::Literal),
                "schema" => Mode::Relaxed(BareValues::Schema),
                "declared" => Mode::Relaxed(BareValues::Declared),
                other => return Err(FormatError::BadMode { state: sname.clone(), mode: other.into() }),
            };
        }
        let mut spellings: Vec<(Box<[u8]>, TermId, Trans)> = vec![];
        for (t, tt) in trans {
            if tt.hold.is_some() && (tt.release || tt.fail) {
                return Err(FormatError::BadMode {
                    state: sname.clone(),
                    mode: "a transition cannot both hold and release or fail".into(),
                });
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
                param: match tt.param.as_deref() {
                    None => None,
                    Some("string") => Some(ParamForce::Type(crate::schema::ParamType::String)),
                    Some("json") => Some(ParamForce::Type(crate::schema::ParamType::Json)),
                    Some("declared") => Some(ParamForce::Declared),
                    Some("admitted") => Some(ParamForce::Admitted(false)),
                    Some("admitted_literal") => Some(ParamForce::Admitted(true)),
                    Some(other) => {
                        return Err(FormatError::BadMode { state: sname.clone(), mode: other.into() })
                    }
                },
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

    let policy = tools.map(|t| t.calls.clone()).unwrap_or_default();
    let uncommitted = match policy.uncommitted.as_deref() {
        None | Some("drop") => Uncommitted::Drop,
        Some("content") => Uncommitted::Content,
        Some(other) => {
            return Err(FormatError::BadMode { state: "calls.uncommitted".into(), mode: other.into() });
        }
    };
    match policy.text_with_calls.as_deref() {
        None | Some("keep") | Some("drop") => {}
        Some(other) => {
            return Err(FormatError::BadMode { state: "calls.text_with_calls".into(), mode: other.into() });
        }
    }
    let needs = |on: bool, what: &str, need: bool, needed: &str| {
        if on && !need {
            Err(FormatError::BadMode {
                state: format!("calls.{what}"),
                mode: format!("needs calls.{needed}"),
            })
        } else {
            Ok(())
        }
    };
    needs(policy.need_end, "need_end", policy.defer, "defer")?;
    needs(policy.validate, "validate", policy.defer, "defer")?;
    needs(!policy.wrapper_keys.is_empty(), "wrapper_keys", policy.validate, "validate")?;
    needs(!policy.alias.is_empty(), "alias", policy.validate, "validate")?;
    let find = |n: &str| b.term_index.get(&(0u8, n.to_string())).copied();
    let mut f = Format {
        name,
        terminals: b.terminals.clone(),
        states,
        initial,
        switches,
        prompt_turns,
        prompt_enter,
        prompt_prime,
        prompt_lost,
        uncommitted,
        strip_when_none: policy.strip_when_none && !r.calls_kept_when_none,
        defer_calls: policy.defer,
        content_prefix: r.content_prefix.clone(),
        calls: {
            let mut c = policy.clone();
            if r.calls_kept_when_none && matches!(c.cut_lost, Some(CutLost::Uncommitted | CutLost::Begun)) {
                // vLLM drops a cut call's markup only when the whole pair is
                // engine-based; a legacy reasoning parser's pair returns the
                // raw text (its `DelegatingParser._engine_based` is false)
                // unless the tool parser read a call.
                c.cut_lost = Some(CutLost::Named);
            }
            c
        },
        has_tools: tools.is_some(),
        token_ids: HashMap::new(),
        token_canon: vec![],
        reasoning_markers: (find("think_start"), find("think_end")),
        template_init: r.template_init.clone().or_else(|| tools.and_then(|t| t.template_init.clone())),
        drop_content_after_calls: r.drop_content_after_calls
            || tools.is_some_and(|t| t.drop_content_after_calls),
        special: crate::special::SpecialRule {
            reasoning: reasoning.map(keep_special).transpose()?,
            tools: tools.map(keep_special).transpose()?,
        },
        recover_newlines: r.recover_newlines,
        force_content: r.force_content.as_ref().map(|w| {
            (
                w.kwarg.clone(),
                serde_json::to_value(&w.equals).unwrap_or(serde_json::Value::Null),
                w.only_absent,
            )
        }),
        one_shot: one_shot(&b, r, tools, &rename)?,
    };
    if f.calls.schema_args && !f.states.iter().any(|s| s.spellings.iter().any(|x| x.2.hold.is_some())) {
        return Err(FormatError::BadMode {
            state: "calls.schema_args".into(),
            mode: "schema_args types held calls: the format has no `hold` transition".into(),
        });
    }
    check_reachable(&f, &roots)?;
    check_reprocess(&f)?;
    f.states.shrink_to_fit();
    Ok(f)
}

/// The pair's `[one_shot]` decisions: the reasoning format's splits, the
/// tool format's reasons to read the output as content.
/// A `[one_shot]` table that does not compile.
fn one_shot_error(why: &str) -> FormatError {
    FormatError::BadMode { state: "one_shot".into(), mode: why.to_string() }
}

/// The spellings of the terminal `term` of `spec` (a `[one_shot]` key names it).
fn terminal_spellings(spec: &FormatSpec, term: &str) -> Result<Vec<String>, FormatError> {
    spec.terminals
        .get(term)
        .map(|t| t.spellings().to_vec())
        .ok_or_else(|| one_shot_error(&format!("no terminal `{term}`")))
}

fn one_shot(
    b: &Builder,
    r: &FormatSpec,
    tools: Option<&FormatSpec>,
    rename: &dyn Fn(&str) -> String,
) -> Result<crate::format::compiled::OneShot, FormatError> {
    let spellings = |term: &str| terminal_spellings(r, term);
    let o = &r.one_shot;
    let split = match &o.split_at {
        Some(t) => {
            Some((spellings(t)?, b.state(&r.name, &rename(o.split_to.as_deref().unwrap_or("reasoning")))?))
        }
        None => None,
    };
    let mut unterminated = vec![];
    for t in &o.unterminated {
        unterminated.extend(spellings(t)?);
    }
    let strip = o.unterminated_strip.as_deref().map(spellings).transpose()?.unwrap_or_default();
    let t = tools.map(|t| &t.one_shot);
    Ok(crate::format::compiled::OneShot {
        split,
        unterminated,
        strip,
        text_after_calls: t.is_some_and(|t| t.text_after_calls),
        marker_in_string: t.is_some_and(|t| t.marker_in_string),
        single_call: t.is_some_and(|t| t.single_call),
        empty_if_in_args: t.and_then(|t| t.empty_if_in_args.clone()),
        strip_join: t.filter(|t| t.strip_join).map(|t| t.remove_after.clone()),
        prompt_open_empty: o.prompt_open_empty,
        between_calls_lost: t.is_some_and(|t| t.between_calls_lost),
        later_blocks_lost: match tools.and_then(|t| t.one_shot.later_blocks_lost.as_deref().map(|n| (t, n))) {
            Some((t, n)) => {
                let open = t
                    .one_shot
                    .later_blocks_open
                    .as_deref()
                    .ok_or_else(|| one_shot_error("needs later_blocks_open"))?;
                Some((terminal_spellings(t, n)?, terminal_spellings(t, open)?))
            }
            None => None,
        },
        outside_lost: o.outside_lost.as_deref().map(spellings).transpose()?,
        unfinished: match &o.unfinished_suffix {
            Some(suffix) => {
                let need = |t: &Option<String>, key: &str| {
                    t.as_deref()
                        .map(spellings)
                        .unwrap_or_else(|| Err(one_shot_error(&format!("needs {key}"))))
                };
                Some(crate::format::compiled::Unfinished {
                    suffix: suffix.clone(),
                    start: need(&o.unfinished_start, "unfinished_start")?,
                    body: need(&o.unfinished_body, "unfinished_body")?,
                })
            }
            None => None,
        },
        lone_end: match &o.lone_end {
            Some(end) => Some(crate::format::compiled::LoneEnd {
                end: spellings(end)?,
                unless: o
                    .lone_end_unless
                    .iter()
                    .map(|t| spellings(t))
                    .collect::<Result<Vec<_>, _>>()?
                    .concat(),
                to: b.state(&r.name, &rename(o.lone_end_to.as_deref().unwrap_or("reasoning")))?,
            }),
            None => None,
        },
    })
}

/// Tool grammar states live in their own namespace, except the shared `content`.
/// A kernel that hands the rest of its text to itself would read the same
/// byte forever.
fn handover_to_self(b: &Builder, state: &str, done: StateId, fail: StateId) -> Result<(), FormatError> {
    if b.state_index.get(state).is_some_and(|&me| me == done || me == fail) {
        return Err(FormatError::ReprocessCycle { state: state.trim_start_matches('~').to_string() });
    }
    Ok(())
}

fn tool_state(name: &str) -> String {
    if name == "content" {
        name.to_string()
    } else {
        format!("~{name}")
    }
}

fn compile_mode(
    b: &Builder,
    spec: &FormatSpec,
    state: &str,
    m: &ModeSpec,
    g: u8,
) -> Result<Mode, FormatError> {
    let bad = |mode: &str| FormatError::BadMode { state: state.to_string(), mode: mode.to_string() };
    Ok(match m {
        ModeSpec::Simple(s) => match s.as_str() {
            "content" => Mode::Content,
            "reasoning" => Mode::Reasoning,
            "drop" => Mode::Drop,
            "lost" => Mode::Lost,
            "name" => Mode::Name(NameStyle::Plain),
            "param_name" => Mode::ParamName,
            "param_value" => Mode::ParamValue,
            "args" => Mode::Args(None),
            "relaxed" => Mode::Relaxed(BareValues::Literal),
            "relaxed_string" => Mode::RelaxedStr,
            "blank" => Mode::Blank,
            other => return Err(bad(other)),
        },
        ModeSpec::Table(t) => match t.kind.as_str() {
            "name" => match t.style.as_deref() {
                None | Some("plain") => Mode::Name(NameStyle::Plain),
                Some("kimi") => Mode::Name(NameStyle::Kimi),
                Some(other) => return Err(bad(other)),
            },
            "args" => {
                let n = t.done.as_deref().ok_or_else(|| bad("args without done"))?;
                let done = b.state(&spec.name, &if g == 1 { tool_state(n) } else { n.to_string() })?;
                handover_to_self(b, state, done, done)?;
                Mode::Args(Some(done))
            }
            "envelope" => {
                let st = |n: &Option<String>, d: &str| {
                    let n = n.as_deref().unwrap_or(d);
                    b.state(&spec.name, &if g == 1 { tool_state(n) } else { n.to_string() })
                };
                let sep = match t.separator.as_deref() {
                    None => None,
                    Some(s) if s.len() == 1 => Some(s.as_bytes()[0]),
                    Some(s) => return Err(bad(s)),
                };
                let (done, fail) = (st(&t.done, "content")?, st(&t.fail, "content")?);
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
            "header" => {
                let mut routes = vec![];
                for r in &t.routes {
                    let name = if g == 1 { tool_state(&r.to) } else { r.to.clone() };
                    match b.state_index.get(&name) {
                        Some(&sid) => routes.push(super::compiled::Route {
                            contains: r.contains.clone(),
                            to: sid,
                            call: r.call,
                            tools: r.tools,
                            section: r.section,
                            raw: r.raw,
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
                let unrouted_content = match t.unrouted.as_deref() {
                    None | Some("drop") => false,
                    Some("content") => true,
                    Some(other) => return Err(bad(other)),
                };
                Mode::Header(Box::new(HeaderCfg {
                    routes,
                    recipient: t.recipient.clone().unwrap_or_else(|| "to=".into()),
                    strip: t.strip.clone().unwrap_or_else(|| vec!["functions.".into()]),
                    unrouted_content,
                }))
            }
            "pythonic" => {
                let st = |n: &Option<String>| {
                    let n = n.as_deref().unwrap_or("content");
                    b.state(&spec.name, &if g == 1 { tool_state(n) } else { n.to_string() })
                };
                let (done, fail) = (st(&t.done)?, st(&t.fail)?);
                handover_to_self(b, state, done, fail)?;
                Mode::Pythonic(Box::new(PyCfg { bracketed: t.bracketed, done, fail }))
            }
            "relaxed" => match t.values.as_deref() {
                None | Some("literal") => Mode::Relaxed(BareValues::Literal),
                Some("schema") => Mode::Relaxed(BareValues::Schema),
                Some("declared") => Mode::Relaxed(BareValues::Declared),
                Some(other) => return Err(bad(other)),
            },
            "xml" => {
                let prefix = t.prefix.clone().unwrap_or_default();
                let max_depth = t.max_depth.unwrap_or(128);
                let mixed_text = t.mixed_text.clone().unwrap_or_else(|| "$text".into());
                if prefix.is_empty() || prefix.len() > 64 {
                    return Err(bad("xml: prefix must be 1 to 64 bytes"));
                }
                if !(1..=1024).contains(&max_depth) {
                    return Err(bad("xml: max_depth must be 1 to 1024"));
                }
                if mixed_text.is_empty() {
                    return Err(bad("xml: mixed_text must not be empty"));
                }
                Mode::Xml(Box::new(crate::format::compiled::XmlCfg { prefix, max_depth, mixed_text }))
            }
            other => return Err(bad(other)),
        },
    })
}

fn check_ambiguous(state: &str, sp: &[(Box<[u8]>, TermId, Trans)]) -> Result<(), FormatError> {
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

fn needle_for(sp: &[(Box<[u8]>, TermId, Trans)]) -> Needle {
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
fn seconds_for(sp: &[(Box<[u8]>, TermId, Trans)]) -> ByteSet {
    let mut set = ByteSet::default();
    for (s, _, _) in sp {
        match s.get(1) {
            Some(&b) => set.insert(b),
            None => return ByteSet::ALL,
        }
    }
    set
}

/// A switch's key and value.
pub(crate) fn switch_key(s: &SwitchSpec) -> Result<(SwitchKey, serde_json::Value), FormatError> {
    let v = serde_json::to_value(&s.equals).unwrap_or(serde_json::Value::Null);
    let key = match (&s.kwarg, &s.field, &s.init) {
        (Some(k), None, None) => SwitchKey::Kwarg(k.clone()),
        (None, Some(f), None) => SwitchKey::Field(f.clone()),
        (None, None, Some(i)) => SwitchKey::Init(i.clone()),
        _ => {
            return Err(FormatError::BadMode {
                state: s.state.clone(),
                mode: "switch needs exactly one of kwarg, field, init".into(),
            })
        }
    };
    Ok((key, v))
}

fn check_reachable(f: &Format, roots: &[StateId]) -> Result<(), FormatError> {
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

fn check_reprocess(f: &Format) -> Result<(), FormatError> {
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
