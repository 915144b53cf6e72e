//! The vLLM profile compiled for a pair: the reasoning format's and the
//! tool format's `[vllm]` tables combined, terminals resolved to their
//! spellings and states to ids. The result is read only by requests that
//! set `vllm_text_loss` or `vllm_one_shot`.

use super::builder::Builder;
use crate::format::compiled::{LoneEnd, OneShot, StrictBlock, Unfinished};
use crate::format::spec::{AsContent, CutLost, FormatSpec, NoneCalls, ParserClass};
use crate::FormatError;

/// `[vllm.text_loss]` of a pair, combined.
pub(super) struct TextLoss {
    /// Calls are parsed and dropped under `tool_choice: none`.
    pub strip_when_none: bool,
    /// The same, only for a request without tools.
    pub strip_without_tools: bool,
    pub cut_lost: Option<CutLost>,
    pub cut_param_lost: bool,
    pub unknown_names_lost: bool,
    pub text_around_calls: bool,
    pub content_after_calls: bool,
    pub prompt_lost: bool,
}

/// The pair's text-loss rules: the tool format's call rules, changed by
/// the reasoning format's parser class.
pub(super) fn text_loss(r: &FormatSpec, tools: Option<&FormatSpec>) -> TextLoss {
    let legacy = r.vllm.parser == ParserClass::Legacy;
    let t = tools.map(|t| &t.vllm.text_loss).cloned().unwrap_or_default();
    TextLoss {
        strip_when_none: t.calls_when_none == NoneCalls::Strip && !legacy,
        strip_without_tools: t.calls_when_none == NoneCalls::StripWithoutTools,
        cut_lost: match t.cut_call {
            // vLLM drops a cut call's markup only when the whole pair is
            // engine-based; a legacy reasoning parser's pair returns the
            // raw text (its `DelegatingParser._engine_based` is false)
            // unless the tool parser read a call.
            Some(CutLost::Uncommitted | CutLost::Begun) if legacy => Some(CutLost::Named),
            c => c,
        },
        cut_param_lost: t.cut_param,
        unknown_names_lost: t.unknown_names,
        text_around_calls: t.text_around_calls,
        content_after_calls: r.vllm.text_loss.content_after_calls || t.content_after_calls,
        prompt_lost: r.vllm.text_loss.prompt_open_message,
    }
}

/// The spellings of the terminal `term` of `spec`, named by `key` of
/// `[vllm.one_shot]`.
fn spellings(spec: &FormatSpec, key: &str, term: &str) -> Result<Vec<String>, FormatError> {
    spec.terminals
        .get(term)
        .map(|t| t.spellings().to_vec())
        .ok_or_else(|| spec.bad_key("vllm.one_shot", key, format!("no terminal `{term}`")))
}

/// The pair's `[vllm.one_shot]` decisions: the reasoning format's splits,
/// the tool format's reasons to read the output as content.
pub(super) fn one_shot(
    b: &Builder,
    r: &FormatSpec,
    tools: Option<&FormatSpec>,
    rename: &dyn Fn(&str) -> String,
) -> Result<OneShot, FormatError> {
    let o = &r.vllm.one_shot;
    let state = |to: &Option<String>| b.state(&r.name, &rename(to.as_deref().unwrap_or("reasoning")));
    let split = match &o.split {
        Some(s) => Some((spellings(r, "split", &s.at)?, state(&s.to)?)),
        None => None,
    };
    let (mut unterminated, mut strip) = (vec![], vec![]);
    if let Some(u) = &o.unterminated {
        for t in &u.ends {
            unterminated.extend(spellings(r, "unterminated", t)?);
        }
        if let Some(s) = &u.strip {
            strip = spellings(r, "unterminated", s)?;
        }
    }
    let t = tools.map(|t| &t.vllm.one_shot);
    let has = |why: AsContent| t.is_some_and(|t| t.as_content.contains(&why));
    Ok(OneShot {
        split,
        unterminated,
        strip,
        text_after_calls: has(AsContent::TextAfterCalls),
        marker_in_string: has(AsContent::MarkerInString),
        single_call: has(AsContent::TwoCalls),
        empty_if_in_args: t.and_then(|t| t.empty_if_in_args.clone()),
        strip_join: t.and_then(|t| t.strip_join.as_ref()).map(|s| s.remove_after.clone()),
        prompt_open_empty: o.prompt_open_empty,
        between_calls_lost: t.is_some_and(|t| t.between_calls_lost),
        later_blocks_lost: match tools
            .and_then(|t| t.vllm.one_shot.later_blocks_lost.as_ref().map(|l| (t, l)))
        {
            Some((t, l)) => Some((
                spellings(t, "later_blocks_lost", &l.end)?,
                spellings(t, "later_blocks_lost", &l.open)?,
            )),
            None => None,
        },
        strict_block: match tools.and_then(|t| t.vllm.one_shot.strict_block.as_ref().map(|s| (t, s))) {
            Some((t, s)) => Some(StrictBlock {
                open: spellings(t, "strict_block", &s.open)?,
                close: spellings(t, "strict_block", &s.close)?,
                balanced: s
                    .balanced
                    .iter()
                    .map(|[a, b]| Ok((spellings(t, "strict_block", a)?, spellings(t, "strict_block", b)?)))
                    .collect::<Result<Vec<_>, FormatError>>()?,
            }),
            None => None,
        },
        outside_lost: o.outside_lost.as_deref().map(|t| spellings(r, "outside_lost", t)).transpose()?,
        unfinished: match &o.unfinished {
            Some(u) => Some(Unfinished {
                suffix: u.suffix.clone(),
                start: spellings(r, "unfinished", &u.start)?,
                body: spellings(r, "unfinished", &u.body)?,
            }),
            None => None,
        },
        partition: match &o.partition {
            Some(pt) => Some((spellings(r, "partition", &pt.start)?, spellings(r, "partition", &pt.end)?)),
            None => None,
        },
        no_call_as_written: o.no_call_as_written,
        first_block: match tools.and_then(|t| t.vllm.one_shot.first_block.as_ref().map(|b| (t, b))) {
            Some((t, b)) => {
                Some((spellings(t, "first_block", &b.open)?, spellings(t, "first_block", &b.close)?))
            }
            None => None,
        },
        lone_end: match &o.lone_end {
            Some(l) => Some(LoneEnd {
                end: spellings(r, "lone_end", &l.end)?,
                unless: l
                    .unless
                    .iter()
                    .map(|t| spellings(r, "lone_end", t))
                    .collect::<Result<Vec<_>, _>>()?
                    .concat(),
                to: state(&l.to)?,
            }),
            None => None,
        },
    })
}
