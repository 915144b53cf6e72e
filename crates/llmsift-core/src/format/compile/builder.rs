//! The grammar being built: terminals and states of a reasoning grammar
//! (grammar 0) and a tool grammar (grammar 1) in one namespace. Tool states
//! other than the shared `content` are renamed `~NAME`; the merged
//! `content` state takes the reasoning grammar's reading of a marker unless
//! the tool grammar's opens a call.

use crate::format::compiled::{StateId, TermId, Terminal};
use crate::format::spec::{FormatSpec, ModeSpec, TransitionSpec, TransitionTable};
use crate::limits::MAX_MARKER_LEN;
use crate::FormatError;
use std::collections::HashMap;

/// A state being built: name, text kind, transitions, and the grammar it
/// came from (0 reasoning, 1 tools).
pub(super) type BuildState = (String, ModeSpec, Vec<(TermId, TransitionTable)>, u8);

#[derive(Default)]
pub(super) struct Builder {
    pub terminals: Vec<Terminal>,
    pub term_index: HashMap<(u8, String), TermId>,
    pub state_index: HashMap<String, StateId>,
    pub states: Vec<BuildState>,
    pub drops: Vec<TermId>,
    pub thens: HashMap<String, String>,
    /// State → its `join` text.
    pub joins: HashMap<String, String>,
    /// State → the state its bare held group fails to (`hold`).
    pub holds: HashMap<String, String>,
}

fn table(t: &TransitionSpec) -> TransitionTable {
    match t {
        TransitionSpec::To(s) => TransitionTable { to: s.clone(), ..TransitionTable::default() },
        TransitionSpec::Full(t) => t.clone(),
    }
}

/// Tool grammar states live in their own namespace, except the shared `content`.
pub(super) fn tool_state(name: &str) -> String {
    if name == "content" {
        name.to_string()
    } else {
        format!("~{name}")
    }
}

impl Builder {
    pub(super) fn add_terminals(&mut self, g: u8, spec: &FormatSpec) -> Result<(), FormatError> {
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
                vocab: false,
            });
            self.term_index.insert((g, name.clone()), id);
        }
        for d in &spec.drop {
            let t = self.term(g, spec, d)?;
            self.drops.push(t);
        }
        Ok(())
    }

    pub(super) fn term(&self, g: u8, spec: &FormatSpec, name: &str) -> Result<TermId, FormatError> {
        self.term_index.get(&(g, name.to_string())).copied().ok_or_else(|| FormatError::UnknownTerminal {
            format: spec.name.clone(),
            terminal: name.to_string(),
        })
    }

    pub(super) fn state_slot(&mut self, name: &str, mode: &ModeSpec, g: u8) -> usize {
        if let Some(&i) = self.state_index.get(name) {
            return i as usize;
        }
        self.state_index.insert(name.to_string(), self.states.len() as StateId);
        self.states.push((name.to_string(), mode.clone(), Vec::new(), g));
        self.states.len() - 1
    }

    pub(super) fn add_states(
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
    pub(super) fn tool_terms(&self) -> Vec<TermId> {
        self.term_index.iter().filter(|((g, _), _)| *g == 1).map(|(_, &t)| t).collect()
    }

    /// Gives each reasoning state marked `calls` the tool grammar's
    /// transitions out of `content`, where calls are read.
    pub(super) fn share_calls(&mut self, r: &FormatSpec) -> Result<(), FormatError> {
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

    pub(super) fn state(&self, spec_name: &str, name: &str) -> Result<StateId, FormatError> {
        self.state_index.get(name).copied().ok_or_else(|| FormatError::UnknownState {
            format: spec_name.to_string(),
            state: name.to_string(),
        })
    }
}
