//! The registry: vLLM's parser names (`--reasoning-parser`,
//! `--tool-call-parser`) mapped to format files. The built-in files are
//! compiled into the binary (every `formats/**/*.toml`, found by `build.rs`); more can be added at run
//! time with [`Registry::add_toml`].

use crate::format::spec::Kind;
use crate::{FormatError, FormatSpec, ParserFactory};
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

include!(concat!(env!("OUT_DIR"), "/builtin_formats.rs"));

/// Format specs by kind and name.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    reasoning: BTreeMap<String, Arc<FormatSpec>>,
    tools: BTreeMap<String, Arc<FormatSpec>>,
}

impl Registry {
    /// The built-in formats (parsed once per process).
    pub fn builtin() -> &'static Registry {
        static R: OnceLock<Registry> = OnceLock::new();
        R.get_or_init(|| {
            let mut r = Registry::default();
            for text in BUILTIN {
                r.add_toml(text).expect("built-in formats are valid");
            }
            r
        })
    }

    /// Adds a format file; it answers to its name and aliases. Validates it
    /// by compiling it alone.
    pub fn add_toml(&mut self, text: &str) -> Result<Arc<FormatSpec>, FormatError> {
        let spec = Arc::new(FormatSpec::from_toml(text)?);
        match spec.kind {
            Kind::Reasoning => crate::format::compile(Some(&spec), None)?,
            Kind::Tools => crate::format::compile(None, Some(&spec))?,
        };
        let map = match spec.kind {
            Kind::Reasoning => &mut self.reasoning,
            Kind::Tools => &mut self.tools,
        };
        for keep in spec.alias_keep_special_tokens.values() {
            crate::special::KeepSpecial::parse(keep)?;
        }
        let keyed = [
            ("alias_keep_special_tokens", &spec.alias_keep_special_tokens),
            ("alias_initial", &spec.alias_initial),
            ("alias_grammar_from", &spec.alias_grammar_from),
        ];
        for (key, map) in keyed {
            if let Some(a) = map.keys().find(|a| !spec.aliases.contains(a)) {
                return Err(FormatError::BadMode { state: key.into(), mode: a.clone() });
            }
        }
        if let Some(a) = spec.alias_one_shot.keys().find(|a| !spec.aliases.contains(a)) {
            return Err(FormatError::BadMode { state: "alias_one_shot".into(), mode: a.clone() });
        }
        if let Some(a) = spec.alias_cut_lost.keys().find(|a| !spec.aliases.contains(a)) {
            return Err(FormatError::BadMode { state: "alias_cut_lost".into(), mode: a.clone() });
        }
        if let Some(a) = spec.alias_native_required.iter().find(|a| !spec.aliases.contains(a)) {
            return Err(FormatError::BadMode { state: "alias_native_required".into(), mode: a.clone() });
        }
        if let Some(a) = spec.alias_calls_kept_when_none.iter().find(|a| !spec.aliases.contains(a)) {
            return Err(FormatError::BadMode { state: "alias_calls_kept_when_none".into(), mode: a.clone() });
        }
        for n in std::iter::once(&spec.name).chain(&spec.aliases) {
            // An alias whose vLLM class has its own rule (`skip_special_tokens`,
            // required/named in its own format, calls under `tool_choice:
            // none`) gets its own spec.
            let keep = spec.alias_keep_special_tokens.get(n);
            let native = spec.alias_native_required.contains(n);
            let kept_calls = spec.alias_calls_kept_when_none.contains(n);
            let cut = spec.alias_cut_lost.get(n);
            let initial = spec.alias_initial.get(n);
            let grammar = spec.alias_grammar_from.get(n);
            let one_shot = spec.alias_one_shot.get(n);
            let named = if keep.is_some()
                || one_shot.is_some()
                || native
                || kept_calls
                || cut.is_some()
                || initial.is_some()
                || grammar.is_some()
            {
                let mut s = (*spec).clone();
                if let Some(keep) = keep {
                    s.keep_special_tokens = Some(keep.clone());
                }
                if let Some(initial) = initial {
                    s.initial = Some(initial.clone());
                    // Validated as the file itself was: the state must exist.
                    match s.kind {
                        Kind::Reasoning => crate::format::compile(Some(&s), None)?,
                        Kind::Tools => crate::format::compile(None, Some(&s))?,
                    };
                }
                if let Some(grammar) = grammar {
                    s.grammar_from = Some(grammar.clone());
                }
                if let Some(o) = one_shot {
                    s.one_shot = o.clone();
                    // Validated as the file itself was: its terminals must exist.
                    match s.kind {
                        Kind::Reasoning => crate::format::compile(Some(&s), None)?,
                        Kind::Tools => crate::format::compile(None, Some(&s))?,
                    };
                }
                s.calls.native_required |= native;
                s.calls_kept_when_none |= kept_calls;
                if let Some(cut) = cut {
                    s.calls.cut_lost = Some(*cut);
                    // Validated as the file itself was.
                    crate::format::compile(None, Some(&s))?;
                }
                Arc::new(s)
            } else {
                Arc::clone(&spec)
            };
            map.insert(n.clone(), named);
        }
        Ok(spec)
    }

    /// Registered reasoning parser names.
    pub fn reasoning_names(&self) -> impl Iterator<Item = &str> {
        self.reasoning.keys().map(String::as_str)
    }

    /// Registered tool parser names.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    /// The reasoning spec named `name`.
    pub fn reasoning(&self, name: &str) -> Result<&Arc<FormatSpec>, FormatError> {
        self.reasoning.get(name).ok_or_else(|| {
            if self.tools.contains_key(name) {
                FormatError::WrongKind { name: name.to_string() }
            } else {
                FormatError::UnknownParser { name: name.to_string() }
            }
        })
    }

    /// The tool spec named `name`.
    pub fn tool(&self, name: &str) -> Result<&Arc<FormatSpec>, FormatError> {
        self.tools.get(name).ok_or_else(|| {
            if self.reasoning.contains_key(name) {
                FormatError::WrongKind { name: name.to_string() }
            } else {
                FormatError::UnknownParser { name: name.to_string() }
            }
        })
    }

    /// Compiles the pair (either may be absent).
    pub fn factory(
        &self,
        reasoning: Option<&str>,
        tools: Option<&str>,
    ) -> Result<ParserFactory, FormatError> {
        let t = tools.map(|n| self.tool(n)).transpose()?;
        let borrowed = t.and_then(|t| t.grammar_from.as_deref()).filter(|_| reasoning.is_none());
        match (borrowed, t) {
            (Some(g), Some(t)) => ParserFactory::borrowed(self.reasoning(g)?, t),
            _ => ParserFactory::new(
                reasoning.map(|n| self.reasoning(n)).transpose()?.map(|a| &**a),
                t.map(|a| &**a),
            ),
        }
    }
}

/// What [`Registry::detect`] found in a chat template.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Detection {
    /// The reasoning parser that fits, if one does.
    pub reasoning: Option<String>,
    /// The tool parser that fits, if one does.
    pub tools: Option<String>,
    /// Other names that fit as well but less specifically (for the report).
    pub also: Vec<String>,
}

impl Registry {
    /// Names the reasoning and tool parsers whose `detect` markers all appear
    /// in `template` (a chat template, plus the tokenizer's added tokens if
    /// the caller appends them) and whose `detect_not` markers do not. The
    /// most specific fit wins (the most marker text); a tie is "cannot tell".
    pub fn detect(&self, template: &str) -> Detection {
        let pick = |map: &BTreeMap<String, Arc<FormatSpec>>, also: &mut Vec<String>| {
            let mut fits: Vec<(usize, &str)> = vec![];
            for (name, spec) in map {
                // Each file once, under its own name.
                if name != &spec.name || spec.detect.is_empty() {
                    continue;
                }
                if spec.detect.iter().all(|m| template.contains(m.as_str()))
                    && !spec.detect_not.iter().any(|m| template.contains(m.as_str()))
                {
                    fits.push((spec.detect.iter().map(String::len).sum(), name));
                }
            }
            fits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
            let best = match fits.as_slice() {
                [] => None,
                [a, b, ..] if a.0 == b.0 => None,
                [a, ..] => Some(a.1.to_string()),
            };
            also.extend(fits.iter().map(|f| f.1.to_string()).filter(|n| Some(n) != best.as_ref()));
            best
        };
        let mut also = vec![];
        let reasoning = pick(&self.reasoning, &mut also);
        let tools = pick(&self.tools, &mut also);
        Detection { reasoning, tools, also }
    }
}

/// The text [`Registry::detect`] reads from a `tokenizer_config.json`: its
/// chat template(s), then its added tokens' spellings, one per line. Shared
/// by `sift detect` and `sift serve`'s `auto` parsers, so both see the same
/// markers.
pub fn detection_text(config: &serde_json::Value) -> String {
    use serde_json::Value;
    let mut out = String::new();
    match config.get("chat_template") {
        Some(Value::String(s)) => out.push_str(s),
        Some(Value::Array(list)) => {
            for s in list.iter().filter_map(|t| t.get("template").and_then(Value::as_str)) {
                out.push_str(s);
                out.push('\n');
            }
        }
        _ => {}
    }
    if let Some(Value::Object(added)) = config.get("added_tokens_decoder") {
        for s in added.values().filter_map(|t| t.get("content").and_then(Value::as_str)) {
            out.push('\n');
            out.push_str(s);
        }
    }
    out
}
