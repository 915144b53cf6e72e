//! `[calls]` compiled into the rules the engine reads ([`CallRules`]),
//! with the settings that need another checked (`validate` needs `defer`,
//! …) and the pair's vLLM text-loss rules for calls folded in.

use super::vllm::TextLoss;
use crate::format::compiled::{CallRules, Uncommitted};
use crate::format::spec::{self, FormatSpec};
use crate::FormatError;

/// The call rules of a pair whose tool format is `tools` (none: the
/// defaults, no calls).
pub(super) fn rules(
    tools: Option<&FormatSpec>,
    loss: &TextLoss,
) -> Result<(CallRules, Uncommitted), FormatError> {
    let p = tools.map(|t| t.calls.clone()).unwrap_or_default();
    if let Some(t) = tools {
        let needs = |on: bool, what: &str, need: bool, needed: &str| {
            if on && !need {
                Err(t.bad_key("calls", what, format!("needs calls.{needed}")))
            } else {
                Ok(())
            }
        };
        needs(p.need_end, "need_end", p.defer, "defer")?;
        needs(p.validate, "validate", p.defer, "defer")?;
        needs(!p.wrapper_keys.is_empty(), "wrapper_keys", p.validate, "validate")?;
        needs(!p.alias.is_empty(), "alias", p.validate, "validate")?;
    }
    let uncommitted = match p.uncommitted {
        spec::Uncommitted::Drop => Uncommitted::Drop,
        spec::Uncommitted::Content => Uncommitted::Content,
    };
    let rules = CallRules {
        commit_open_name: p.commit_open_name,
        drop_unfinished_marker: p.drop_unfinished_marker,
        native_required: p.native_required,
        need_tools: p.need_tools,
        verbatim_keys: p.verbatim_keys,
        verbatim_values: p.verbatim_values,
        coerce_values: p.coerce_values,
        fix_arg_types: p.fix_arg_types,
        trim_values: p.trim_values,
        known_names_only: p.known_names_only,
        nameless_args: p.nameless_args,
        schema_args: p.schema_args,
        word_names: p.word_names,
        unique_params: p.unique_params,
        markers_in_strings: p.markers_in_strings,
        markers_in_values: p.markers_in_values,
        entities: p.entities,
        schema_refs: p.schema_refs,
        unwrap_params: p.unwrap_params,
        need_end: p.need_end,
        validate: p.validate,
        wrapper_keys: p.wrapper_keys,
        alias: p.alias,
        union_string: p.union_string,
        unknown_names_lost: loss.unknown_names_lost,
        strip_without_tools: loss.strip_without_tools,
        cut_lost: loss.cut_lost,
        cut_param_lost: loss.cut_param_lost,
        text_around_calls_lost: loss.text_around_calls,
    };
    Ok((rules, uncommitted))
}
