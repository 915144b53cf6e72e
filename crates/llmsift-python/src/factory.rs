//! Compiled parser pairs, shared by every Python parser in the process.
//!
//! Compiling a pair (`ParserFactory::new`) is the expensive step; it happens
//! once per (reasoning, tool) name pair. Binding to a vocabulary is cheaper
//! but still not per request: a bound factory is kept per pair and per
//! vocabulary, where a vocabulary is named by its `tokenizer.json` path or,
//! for a token → id mapping, by the ids it gives the pair's markers (the only
//! thing binding reads), so two mappings that agree on the markers share one
//! factory. The maps only grow: a process serves a handful of pairs.

use llmsift_core::{ParserFactory, Registry};
use llmsift_tokenizers::TokenizerView;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// A pair of parser names (either may be absent).
pub type Names = (Option<String>, Option<String>);

fn lock<T>(m: &'static OnceLock<Mutex<T>>) -> std::sync::MutexGuard<'static, T>
where
    T: Default,
{
    // A panic elsewhere cannot leave a map half-written (inserts are single
    // calls), so a poisoned lock is still usable.
    m.get_or_init(Mutex::default).lock().unwrap_or_else(|e| e.into_inner())
}

/// The compiled (unbound) factory of a pair.
pub fn compiled(names: &Names) -> Result<ParserFactory, String> {
    static MAP: OnceLock<Mutex<HashMap<Names, ParserFactory>>> = OnceLock::new();
    let mut map = lock(&MAP);
    if let Some(f) = map.get(names) {
        return Ok(f.clone());
    }
    let f = Registry::builtin().factory(names.0.as_deref(), names.1.as_deref()).map_err(|e| e.to_string())?;
    map.insert(names.clone(), f.clone());
    Ok(f)
}

/// A loaded `tokenizer.json`, read once per path.
fn tokenizer(path: &Path) -> Result<TokenizerView, String> {
    static MAP: OnceLock<Mutex<HashMap<PathBuf, TokenizerView>>> = OnceLock::new();
    let mut map = lock(&MAP);
    if let Some(v) = map.get(path) {
        return Ok(v.clone());
    }
    let v = TokenizerView::from_file(path).map_err(|e| e.to_string())?;
    map.insert(path.to_path_buf(), v.clone());
    Ok(v)
}

/// What a factory is bound to.
pub enum VocabKey {
    /// A `tokenizer.json` file.
    Path(PathBuf),
    /// The ids a token → id mapping gives the pair's markers (absent ones left out).
    Ids(Vec<(String, u32)>),
}

/// The pair's factory bound to a vocabulary.
pub fn bound(names: &Names, vocab: VocabKey) -> Result<ParserFactory, String> {
    type Key = (Names, String);
    static MAP: OnceLock<Mutex<HashMap<Key, ParserFactory>>> = OnceLock::new();
    let f = compiled(names)?;
    let key = match &vocab {
        VocabKey::Path(p) => format!("path:{}", p.display()),
        VocabKey::Ids(ids) => format!("ids:{ids:?}"),
    };
    let key = (names.clone(), key);
    if let Some(f) = lock(&MAP).get(&key) {
        return Ok(f.clone());
    }
    let b = match vocab {
        VocabKey::Path(p) => f.bind(&tokenizer(&p)?),
        VocabKey::Ids(ids) => {
            let map: HashMap<String, u32> = ids.into_iter().collect();
            f.bind(&|m: &str| map.get(m).copied())
        }
    }
    .map_err(|e| e.to_string())?;
    lock(&MAP).insert(key, b.clone());
    Ok(b)
}

/// Every marker spelling the pair's formats know (what a mapping is asked for).
pub fn spellings(names: &Names) -> Result<Vec<String>, String> {
    let f = compiled(names)?;
    let mut v: Vec<String> = f.format().spellings().map(str::to_string).collect();
    v.sort();
    v.dedup();
    Ok(v)
}
