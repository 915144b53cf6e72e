//! The registry: vLLM's parser names (`--reasoning-parser`,
//! `--tool-call-parser`) mapped to format files. The built-in files are
//! compiled into the binary (every `formats/**/*.toml`, found by `build.rs`); more can be added at run
//! time with [`Registry::add_file`] or [`Registry::add_toml`]. A file answers
//! to its `name` and to each `[alias.NAME]`, an alias with an overlay under
//! its own spec (the file's with the overlay applied, compiled once to
//! check it).

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
            for (file, text) in BUILTIN {
                r.add_file(file, text).expect("built-in formats are valid");
            }
            r
        })
    }

    /// Adds a format file whose path is not known (errors name the format).
    pub fn add_toml(&mut self, text: &str) -> Result<Arc<FormatSpec>, FormatError> {
        self.add_spec(FormatSpec::from_toml(text)?)
    }

    /// Adds the format file `file` (its path, for errors): it answers to
    /// its name and to each `[alias.NAME]`.
    pub fn add_file(&mut self, file: &str, text: &str) -> Result<Arc<FormatSpec>, FormatError> {
        self.add_spec(FormatSpec::from_file(file, text)?)
    }

    /// Registers a parsed file under its name and its aliases. The file, and
    /// each alias whose overlay changes anything, is validated by compiling
    /// it alone, once; a plain alias shares the file's spec.
    fn add_spec(&mut self, spec: FormatSpec) -> Result<Arc<FormatSpec>, FormatError> {
        let spec = Arc::new(spec);
        let check = |s: &FormatSpec| match s.kind {
            Kind::Reasoning => crate::format::compile(Some(s), None).map(drop),
            Kind::Tools => crate::format::compile(None, Some(s)).map(drop),
        };
        check(&spec)?;
        let mut named = vec![(spec.name.clone(), Arc::clone(&spec))];
        for (alias, overlay) in &spec.alias {
            if *alias == spec.name {
                return Err(spec.bad_key("alias", alias, "an alias cannot be the file's own name"));
            }
            let own = if overlay.is_empty() {
                Arc::clone(&spec)
            } else {
                let s = overlay.apply(&spec);
                check(&s).map_err(|e| match e {
                    // The overlay's start state is the one it may lack.
                    FormatError::UnknownState { state, .. } if overlay.initial.as_ref() == Some(&state) => {
                        spec.bad_key(&format!("alias.{alias}"), "initial", format!("unknown state {state:?}"))
                    }
                    e => e,
                })?;
                Arc::new(s)
            };
            named.push((alias.clone(), own));
        }
        let map = match spec.kind {
            Kind::Reasoning => &mut self.reasoning,
            Kind::Tools => &mut self.tools,
        };
        map.extend(named);
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
