#!/usr/bin/env python3
"""Regenerates crates/llmsift-conformance/tests/known-disagreements-all.txt: every
corpus case where Sift's answer differs from vLLM's, with the reason.

Usage: python3 scripts/known-disagreements.py [--sift target/release/sift]
Reasons come from REASONS (first matching id pattern); a case no pattern
explains is listed as "not yet matched" so the gap stays visible.
"""
import argparse, json, os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPUS = os.path.join(ROOT, "..", "shared", "corpus", "vllm-tests.jsonl")
OUT = os.path.join(ROOT, "crates", "llmsift-conformance", "tests", "known-disagreements-all.txt")

REASONS = [
    ('^(beam\\+beam/test_call_stop_token_removed_from_the_text_still_ends_the_call|gemma4\\+gemma4/test_gemma4_response_template_drops_incomplete_call|glm45\\+glm45/TestDeferralFinish_test_misaligned_last_delta_with_finish\\[Glm47MoeParser\\-glm47_moe\\-complex|glm45\\+glm45/TestDeferralFinish_test_misaligned_last_delta_with_finish\\[Glm47MoeParser\\-glm47_moe\\-think\\-c|glm45\\+glm45/TestDeferralFinish_test_misaligned_last_delta_with_finish\\[Glm47MoeParser\\-glm47_moe\\-think\\-t|glm45\\+glm45/TestDeferralFinish_test_misaligned_last_delta_with_finish\\[Glm47MoeParser\\-glm47_moe\\-think\\-t\\#2|glm45\\+glm45/TestDeferralFinish_test_misaligned_last_delta_with_finish\\[Glm47MoeParser\\-glm47_moe\\-think\\-w|glm45\\+glm45/TestDeferralFinish_test_misaligned_last_delta_with_finish\\[Glm47MoeParser\\-glm47_moe\\-tool\\-on|glm45\\+glm45/TestDeferralFinish_test_misaligned_last_delta_with_finish\\[Glm47MoeParser\\-glm47_moe\\-whitesp|plamo3\\+plamo3/test_multiple_calls_keep_indices_ids_and_arguments_separate\\[direct\\-True\\]|plamo3\\+plamo3/test_multiple_calls_keep_indices_ids_and_arguments_separate\\[direct\\-True\\]\\#2|plamo3\\+plamo3/test_reusing_parser_drops_pending_names|plamo3\\+plamo3/test_tool_name_cutoffs_do_not_leak_markers\\[direct\\]\\#14|plamo3\\+plamo3/test_tool_name_cutoffs_do_not_leak_markers\\[direct\\]\\#15|plamo3\\+plamo3/test_tool_name_cutoffs_do_not_leak_markers\\[direct\\]\\#16|plamo3\\+plamo3/test_tool_name_cutoffs_do_not_leak_markers\\[direct\\]\\#17|plamo3\\+plamo3/test_tool_name_cutoffs_do_not_leak_markers\\[direct\\]\\#18|plamo3\\+plamo3/test_tool_name_cutoffs_do_not_leak_markers\\[direct\\]\\#19|plamo3\\+plamo3/test_tool_name_cutoffs_do_not_leak_markers\\[direct\\]\\#20|plamo3\\+plamo3/test_tool_name_cutoffs_do_not_leak_markers\\[direct\\]\\#21|plamo3\\+plamo3/test_tool_name_cutoffs_do_not_leak_markers\\[direct\\]\\#22|plamo3\\+plamo3/test_tool_name_cutoffs_do_not_leak_markers\\[direct\\]\\#35|plamo3\\+plamo3/test_tool_name_cutoffs_do_not_leak_markers\\[direct\\]\\#36|plamo3\\+plamo3/test_tool_name_cutoffs_do_not_leak_markers\\[direct\\]\\#37|plamo3\\+plamo3/test_tool_name_cutoffs_do_not_leak_markers\\[direct\\]\\#38|plamo3\\+plamo3/test_tool_name_cutoffs_do_not_leak_markers\\[registered\\]|plamo3\\+plamo3/test_tool_name_cutoffs_do_not_leak_markers\\[registered\\]\\#2) ', "a call the end of the output cuts (the output stops inside the call, before its end marker: max_tokens, or a stop token the server removed): Sift never completes it with bytes the model did not write, so the call's arguments are what was written (an incomplete JSON text) and the finish is length; vLLM completes the call. atomic_calls makes its text content; the vLLM-compatible settings give vLLM's completed answer (docs/deviations.md, issue 23)"),
    (r"(TestToolCallFiltering|test_delegating_parse_tool_choice_none|test_tool_choice_uses_the_plamo_format)", "vLLM's engine-based parser parses the calls under tool_choice none and drops them, their text in no field; Sift keeps the markup as content unless the request sets vllm_text_loss, which gives vLLM's answer on every such case (docs/deviations.md)"),
    (r"^glm45\+glm45/TestDropTokenReplay_test_drop_tokens_removed_from_output\[3-glm47_moe\] ", "the case joins two samples' outputs (each begins at <bos>), each of which vLLM's test parsed with a fresh parser starting in reasoning; parsed as one output the second sample's reasoning is content"),
    (r"^dots/test_streaming_malformed_block_does_not_block_later_valid_call |^granite/TestNonStreaming_test_marker_without_array_is_not_a_tool_call |^deepseek_v4\+deepseek_v4/TestMalformedDsmlNoise_test_prose_mention_matches_canonical_wrapper|^step3p5\+step3p5/TestDropTokenReplay_test_drop_tokens_removed_from_output\[(1-step3p5\]#10|3-step3p5\]#3) ", "a call marker or section that no call follows: vLLM drops its text (it lands in no field); Sift keeps it as content (docs/deviations.md)"),
    (r"^granite_thinking_parser/TestDropTokenNonStreaming_test_drop_tokens_removed_from_output\[granite_thinking_parser\]#11 ", "vLLM's granite_thinking engine, with no tool parser, drops a <tool_call>…</tool_call> block in content (its text lands in no field); Sift keeps it as content unless the request sets vllm_text_loss (docs/deviations.md)"),
    (r"TestDropTokenReplay.*(#5|\[3-)", "vLLM's replay folds two calls into one index after a repeated end marker (a streaming bug, not copied)"),
    (r"^mistral/test_extract_tool_calls_(empty_name_unparsable_args_no_crash|malformed_name_before_marker_emits_empty_name|parallel_malformed_then_well_formed)", "vLLM answers a call named \"\" for [TOOL_CALLS] with no name; a tool call always has a name in Sift, so the nameless call's text stays content"),
    (r"^gemma4\+gemma4/test_gemma4_response_template_preserves_content_after_tool_call|^granite/TestGraniteToolParser_test_surrounding_text\[False\]|^hunyuan_a13b/test_hunyuan_a13b_tool_parser_extract\[_tool_calls_|^longcat/TestLongCatToolParser_test_surrounding_text\[False\]|^deepseek_v4\+deepseek_v4/(TestMissingInvokeEnd_test_streaming_with_trailing_content|TestMissingToolCallsWrapper_test_trailing_content_dropped_consistently)|^mistral/test_extract_tool_calls\[trailing_text_after_(args_)?json\]", "vLLM's one-shot answer drops the text after a call (it lands in no field); Sift keeps it as content unless the request sets vllm_text_loss"),
    (r"^minicpm5/test_multiple_calls_interleaved_text", "vLLM's MiniCPM5 answer drops the text around calls (it lands in no field); Sift keeps it as content unless the request sets vllm_text_loss"),
    (r"TestParseDeltaIncludeReasoning", "vLLM's test used an unnamed <think> adapter; the case names no reasoning parser"),
    (r"TestImplicitReasoningEnd|TestMalformedDsmlNoise_test_corrupted_wrapper_ends_reasoning|^gemma4\+gemma4/TestNonStreamingReasoningPlusToolCalls", "vLLM's extract_tool_calls called directly never returns reasoning (an API artefact of the test)"),
    (r"^gemma4\+gemma4/TestGemma4(SchemaAwareTypeCoercion|SchemaCoercionBoolNumberNull)", "vLLM's test built the parser with tools (schema typing of bare values) that the case's request does not carry"),
    (r"test_gemma4_response_template_reasoning_suppression_matches_registered_parser", "vLLM's test sent include_reasoning=false, which the case's request does not carry"),
    (r"test_prompt_closed_reasoning_is_scoped_to_current_turn", "the prompt holds placeholder token ids ('?50?'), not text a template would render"),
    (r"^minimax_m3/TestArguments_test_(empty|nested)_elements_follow_schema", "vLLM's test built the parser with tools (the schema that types these elements) that the case's request does not carry"),
    (r"^minimax_m3/TestStreaming_test_truncated_invoke_keeps_completed_params", "recorded before vLLM's finish_streaming; the test's own assertion after it (and vLLM's one-shot) keeps the completed parameters, as Sift does"),
    (r"^seed_oss\+seed_oss/TestDropTokenReplay_test_drop_tokens_removed_from_output\[None-seed_oss\] ", "the case joins two samples' outputs, each of which vLLM's test parsed with a fresh parser starting in reasoning; parsed as one output the second sample's reasoning is content"),
    (r"^inkling\+inkling/TestStreaming_test_chunk_invariance_reasoning", "the recording lost the reasoning: vLLM's test itself asserts reasoning 'thinking...' and content 'answer', as Sift gives"),
    (r"^inkling\+inkling/TestNonStreaming_test_tool_header_name_is_not_visible_content", "vLLM reads bare text before <|content_invoke_tool_json|> as the call's header name; telling it from content would mean holding all text until a marker (unbounded holdback), so Sift streams it as content"),
    (r"^gemma4/TestBareAndMalformedOpeners_test_(bare_malformed_then_well_formed|malformed_no_brace_bounded|malformed_then_well_formed)|^qwen3_coder/test_malformed_xml_no_gt_delimiter", "a call header that does not parse as the format's header (a name with white space or a '<' in it: 'bad_func no brace', 'get_current_weather\\n<parameter=city'): vLLM's test asserts the text as the tool's name; Sift's default reading makes the call's text content (no function name), and the vLLM-compatible settings give vLLM's answer (docs/deviations.md)"),
    (r"^step3/TestStep3ToolParser_test_malformed_input\[False\]", "vLLM's step3 one-shot needs the closed block and 'function<｜tool_sep｜>' before a call, its streaming does not; the corpus' streamed step3 cases need calls as they close, which Sift gives both ways"),
    (r"^dots/test_non_stream_unknown_tool_is_left_as_content", "vLLM's dots one-shot keeps the whole output as content when no block calls a known tool, a whole-output decision; Sift drops a block that calls an unknown tool"),
    (r"^minicpmv/TestNewlineRecovery_test_buffered_delta_is_dropped_not_sent_empty", "vLLM's test never finished its stream, so the held backtick was never released; the finished answer keeps it"),
    (r"^nemotron_v3/test_nemotron_v3_streaming_promotes_reasoning_to_content", "vLLM's stream sends the reasoning, then repeats it as content at the end; Sift follows its one-shot answer (content only)"),
    (r"^phi4_mini_json/TestPhi4MiniToolParser_test_malformed_input\[True\]", "vLLM's phi4_mini_json streaming returns nothing; its one-shot answer keeps the text, which Sift follows"),
    (r"^phi4_mini_json/TestPhi4MiniToolParser_test_surrounding_text", "vLLM drops all text around a functools list, which would hold the whole output; Sift streams the text before the call as content"),
    (r"^xlam/test_extract_tool_calls_streaming_incremental\[single_tool_with_json_code_block\]", "vLLM's xlam stream leaks half the JSON into content; its one-shot answer does not, which Sift follows"),
    (r"^glm45/test_glm53_template_forces_reasoning", "vLLM ignores the thinking switch only for GLM-5.3, whose chat template (in the test's tokenizer) has none; the case carries no template, and for GLM-4.5-4.7 vLLM's reasoning parser answers the output verbatim as content when thinking is off, as Sift does"),
    (r"^nemotron_v3/TestNemotronSwap_test_swap_with_whitespace_only_content", "vLLM's test built the parser without the request's chat_template_kwargs, then passed enable_thinking=false only to the swap; served, thinking off makes vLLM's reasoning parser answer the output verbatim as content, as Sift does"),
    (r"^gemma4\+gemma4/TestBareThoughtWithoutChannelOpener_test_bare_thought_token_at_end_of_stream", "vLLM drops a channel body that is only 'thought' (a label whose newline never came), text in no field; Sift keeps it as reasoning (docs/deviations.md)"),
    (r"^gemma4\+gemma4/TestDropTokenReplay_test_drop_tokens_removed_from_output\[1-gemma4\]#3", "the case joins two samples' outputs (each begins at <bos>), each of which vLLM's test parsed with a fresh parser; parsed as one message, vLLM (and Sift) strip the thought label only from the message's first reasoning"),
    (r"^hermes/test_(parse_named_tool_choice|parse_required_tool_choice_kimi_k2_ids_after_history|parse_delta_required_tool_choice_kimi_k2_ids|required_stream_owns_history\[False-Hermes2ProToolParser\]) ", "vLLM's test parser reads required/named output as its JSON list/arguments; vLLM's serving path does not for hermes (supports_required_and_named is false: its structural tag makes the model write Hermes calls, parsed as auto), so the served answer to this JSON is content, as Sift gives"),
    (r"chunking-dependent", "vLLM streamed different answers for different chunkings of this output"),
]


def norm(v):
    if v is None:
        return None
    v = v.strip()
    return v or None


def differs(exp, msg):
    if not isinstance(msg, dict):
        return True
    for f in ("reasoning", "content"):
        if norm(exp.get(f)) != norm(msg.get(f)):
            return True
    ec = exp.get("tool_calls") or []
    gc = msg.get("tool_calls") or []
    if [c.get("name") for c in ec] != [(c.get("function") or {}).get("name") for c in gc]:
        return True
    for e, g in zip(ec, gc):
        raw = (g.get("function") or {}).get("arguments")
        try:
            got = json.loads(raw)
        except (TypeError, ValueError):
            got = ("raw", raw)
        if e.get("arguments") is None and "arguments_raw" in e:
            continue
        if got != e.get("arguments"):
            return True
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sift", default=os.path.join(ROOT, "target", "release", "sift"))
    args = ap.parse_args()
    cases = [json.loads(l) for l in open(CORPUS, encoding="utf-8") if l.strip()]
    run = subprocess.run([args.sift, "parse", "--jsonl", CORPUS], capture_output=True, text=True, check=True)
    answers = {a["id"]: a for a in map(json.loads, run.stdout.splitlines())}
    lines = []
    for c in cases:
        a = answers[c["id"]]
        bad = a.get("error") or differs(c["expected"], a.get("message")) or differs(c["expected"], (a.get("stream") or {}).get("message"))
        if not bad:
            continue
        text = c["id"] + " " + c.get("notes", "")
        why = next((r for p, r in REASONS if re.search(p, text)), None)
        if why is None:
            why = f"not yet matched ({c.get('reasoning_parser')}+{c.get('tool_parser')})"
        lines.append(f"{c['id']}\t{why}")
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("# Corpus cases where Sift's answer differs from vLLM's, with the reason.\n")
        f.write("# Regenerate with scripts/known-disagreements.py; the corpus test checks this list exactly.\n")
        f.write("\n".join(lines) + "\n")
    print(f"{len(lines)} disagreements of {len(cases)} cases written to {OUT}", file=sys.stderr)
    write_deviation_table(lines, len(cases))


def write_deviation_table(lines, total):
    """Rewrites docs/deviations.md's closing table (and its agreement figure)
    from the list, so the two never disagree."""
    path = os.path.join(ROOT, "docs", "deviations.md")
    text = open(path, encoding="utf-8").read()
    start = text.index("## The ")
    head = text[:start]
    # What follows the table (the next "## " section on) is kept as written.
    nxt = text.find("\n## ", start + 1)
    tail = text[nxt:] if nxt >= 0 else ""
    counts = {}
    for l in lines:
        why = l.split("\t", 1)[1]
        counts[why] = counts.get(why, 0) + 1
    agree = total - len(lines)
    head = re.sub(r"Sift agrees on \d+ of \d+ \([\d.]+%\)", f"Sift agrees on {agree} of {total} ({100 * agree / total:.1f}%)", head)
    rows = "".join(f"| {w.replace('|', chr(92) + '|')} | {n} |\n" for w, n in sorted(counts.items(), key=lambda x: -x[1]))
    unexplained = sum(n for w, n in counts.items() if w.startswith("not yet matched"))
    note = "No case is left unexplained (no \"not yet matched\" line in the list)." if not unexplained else f"{unexplained} cases are not yet matched."
    with open(path, "w", encoding="utf-8") as f:
        f.write(head + f"## The {len(lines)} cases by reason\n\n{note}\n\n| reason | cases |\n| --- | --- |\n" + rows + tail)


if __name__ == "__main__":
    main()
