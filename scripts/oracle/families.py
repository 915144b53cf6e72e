"""Each family's output syntax, as its chat template writes an assistant turn.

`TOOLS[name]` renders a list of calls `[(name, args)]` as the model writes
them (`render`), names the markers that are special tokens of the model's
vocabulary (`specials`), and the end marker a string argument may quote
(`closer`, for the "closing marker inside an argument" scenario).
`REASONING[name]` gives the reasoning block's start and end, the assistant
turn's start (the prompt's tail), and the chat-template switch for thinking.

Syntax sources: the family's chat template (`.assets/templates`), vLLM
0.34.0's parser docstrings and tests (the shared corpus), and Sift's format
files. Where a real tokenizer is fetched for a family (qwen3, deepseek_v3,
deepseek_r1, gptoss, llama3_1) it is used; every other family gets the
qwen3 vocabulary with the family's `specials` added as special tokens.
"""

import json


def j(v):
    return json.dumps(v, ensure_ascii=False)


def sval(v):
    """A parameter value as XML-style templates write it: strings raw, the rest JSON."""
    return v if isinstance(v, str) else j(v)


def py(v):
    """A Python literal (pythonic formats)."""
    if isinstance(v, bool):
        return "True" if v else "False"
    if v is None:
        return "None"
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(py(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{py(k)}: {py(x)}" for k, x in v.items()) + "}"
    return j(v)


def gemma_val(v, q):
    if isinstance(v, str):
        return f"{q}{v}{q}"
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}:{gemma_val(x, q)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(gemma_val(x, q) for x in v) + "]"
    return j(v)


def _xml_qwen(open_, close):
    def render(calls):
        out = []
        for n, a in calls:
            ps = "".join(f"<parameter={k}>\n{sval(v)}\n</parameter>\n" for k, v in a.items())
            out.append(f"{open_}\n<function={n}>\n{ps}</function>\n{close}")
        return "\n".join(out)

    return render


def _json_tag(open_, close, sep="\n", key="arguments", nl=True):
    def render(calls):
        pad = "\n" if nl else ""
        return sep.join(f"{open_}{pad}{j({'name': n, key: a})}{pad}{close}" for n, a in calls)

    return render


def _glm(calls):
    out = []
    for n, a in calls:
        ps = "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{sval(v)}</arg_value>\n" for k, v in a.items())
        out.append(f"<tool_call>{n}\n{ps}</tool_call>")
    return "\n".join(out)


def _hy(sep):
    def render(calls):
        body = "".join(
            f"<tool_call>{n}{sep}"
            + "".join(f"<arg_key>{k}</arg_key><arg_value>{sval(v)}</arg_value>" for k, v in a.items())
            + "</tool_call>"
            for n, a in calls
        )
        return f"<tool_calls>{body}</tool_calls>"

    return render


def _dsml(block, sp):
    def render(calls):
        out = [f"<｜DSML｜{sp}{block}>"]
        for n, a in calls:
            out.append(f'<｜DSML｜{sp}invoke name="{n}">')
            for k, v in a.items():
                s = "true" if isinstance(v, str) else "false"
                out.append(f'<｜DSML｜{sp}parameter name="{k}" string="{s}">{sval(v)}</｜DSML｜{sp}parameter>')
            out.append(f"</｜DSML｜{sp}invoke>")
        out.append(f"</｜DSML｜{sp}{block}>")
        return "\n".join(out)

    return render


def _ds_v3(calls):
    body = "".join(
        f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{n}\n```json\n{j(a)}\n```<｜tool▁call▁end｜>" for n, a in calls
    )
    return f"<｜tool▁calls▁begin｜>{body}<｜tool▁calls▁end｜>"


def _ds_v31(calls):
    body = "".join(f"<｜tool▁call▁begin｜>{n}<｜tool▁sep｜>{j(a)}<｜tool▁call▁end｜>" for n, a in calls)
    return f"<｜tool▁calls▁begin｜>{body}<｜tool▁calls▁end｜>"


def _kimi_k2(calls):
    body = "".join(
        f"<|tool_call_begin|>functions.{n}:{i}<|tool_call_argument_begin|>{j(a)}<|tool_call_end|>"
        for i, (n, a) in enumerate(calls)
    )
    return f"<|tool_calls_section_begin|>{body}<|tool_calls_section_end|>"


def _kimi_k3(calls):
    out = ["<|open|>tools<|sep|>"]
    for i, (n, a) in enumerate(calls):
        out.append(f'<|open|>call tool="{n}" index="{i + 1}"<|sep|>')
        for k, v in a.items():
            t = {str: "string", bool: "boolean", int: "integer", float: "number", dict: "object", list: "array"}.get(
                type(v), "null"
            )
            out.append(f'<|open|>argument key="{k}" type="{t}"<|sep|>{sval(v)}<|close|>argument<|sep|>')
        out.append("<|close|>call<|sep|>")
    out.append("<|close|>tools<|sep|>")
    return "".join(out)


def _pythonic(calls):
    return "[" + ", ".join(f"{n}(" + ", ".join(f"{k}={py(v)}" for k, v in a.items()) + ")" for n, a in calls) + "]"


def _sectioned(begin, end, call, param, call_end, calls):
    """One section of calls, a line each for its opener, every call's opener,
    each parameter and the call's closer (K2 Horizon's and MiniMax-M2's XML)."""
    out = [begin]
    for n, a in calls:
        out.append(call.format(n=n))
        out += [param.format(k=k, v=sval(v)) for k, v in a.items()]
        out.append(call_end)
    out.append(end)
    return "\n".join(out)


def _k2_horizon(calls):
    """K2 Horizon's template default (`tool_call_format` xml): the request
    leaves that kwarg unset, so vLLM's parser expects this, not the JSON form."""
    return _sectioned("<ifm|tool_calls>", "</ifm|tool_calls>", "<ifm|tool_call>{n}",
                      "<ifm|arg_key>{k}</ifm|arg_key>\n<ifm|arg_value>{v}</ifm|arg_value>", "</ifm|tool_call>", calls)


def _minimax_m2(calls):
    return _sectioned("<minimax:tool_call>", "</minimax:tool_call>", '<invoke name="{n}">',
                      '<parameter name="{k}">{v}</parameter>', "</invoke>", calls)


def _minimax_m3(calls):
    m = "]<]minimax[>["
    out = f"{m}<tool_call>\n"
    for n, a in calls:
        out += f'{m}<invoke name="{n}">' + "".join(f"{m}<{k}>{sval(v)}{m}</{k}>" for k, v in a.items())
        out += f"{m}</invoke>\n"
    return out + f"{m}</tool_call>"


def _step3(calls):
    body = "".join(
        # Step-3's template writes `function<｜tool_sep｜>` before each invoke,
        # and vLLM's one-shot parser requires it.
        f'<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="{n}">'
        + "".join(f'<steptml:parameter name="{k}">{sval(v)}</steptml:parameter>' for k, v in a.items())
        + "</steptml:invoke><｜tool_call_end｜>"
        for n, a in calls
    )
    return f"<｜tool_calls_begin｜>{body}<｜tool_calls_end｜>"


def _plamo(calls):
    p = "<|plamo:{}:plamo|>".format
    body = "".join(
        p("begin_tool_request") + p("begin_tool_name") + n + p("end_tool_name") + p("begin_tool_arguments")
        + "<|plamo:constrain|>json<|plamo:msg|>" + j(a) + p("end_tool_arguments") + p("end_tool_request")
        for n, a in calls
    )
    return p("begin_tool_requests") + body + p("end_tool_requests")


def _harmony(calls):
    # The first message's `<|start|>assistant` is the prompt's (or the previous message's) tail.
    return "<|start|>assistant".join(
        f"<|channel|>commentary to=functions.{n} <|constrain|>json<|message|>{j(a)}<|call|>" for n, a in calls
    )


def _beam(calls):
    return "".join(
        f"<|start|>assistant to={n}<|channel|>analysis <|constrain|>xml<|message|>"
        + "".join(f'<rfl:parameter name="{k}">\n{sval(v)}\n</rfl:parameter>' for k, v in a.items())
        + "<|call|>"
        for n, a in calls
    )


def _muse(calls):
    out = ""
    for n, a in calls:
        ps = "".join(f'<atem:parameter name="{k}">{sval(v)}</atem:parameter>\n' for k, v in a.items())
        out += (
            f"<|start|>assistant to=functions.{n}<|message|><atem:function_calls>\n"
            f'<atem:invoke name="{n}">\n{ps}</atem:invoke>\n</atem:function_calls><|eom|>'
        )
    return out


def _cohere(calls):
    items = ",\n".join(
        f'    {{"tool_call_id": "{i}", "tool_name": {j(n)}, "parameters": {j(a)}}}' for i, (n, a) in enumerate(calls)
    )
    return f"<|START_ACTION|>\n[\n{items}\n]\n<|END_ACTION|>"


GQ = '<|"|>'


def T(render, specials=(), closer=None):
    return {"render": render, "specials": list(specials), "closer": closer}


QWEN_TOOL = ["<tool_call>", "</tool_call>"]
DS_TOOL = ["<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"]
HARMONY = ["<|start|>", "<|channel|>", "<|constrain|>", "<|message|>", "<|end|>", "<|call|>", "<|return|>"]
DSML = ["<｜DSML｜"]

# Where a marker's special token is spelled differently from the marker
# (the spec adds the token's spelling): DeepSeek V3.2's tokenizer.json has
# `｜DSML｜` without the `<` as one special token (id 128793, the `<` is a
# token of its own: sgl-project/sglang#16122, whose bug it caused), so with
# special tokens skipped `<｜DSML｜invoke` reads `<invoke`. V4 (and V4.1)
# inherit V3.2's encoding.
TOKEN_SPELLING = {"<｜DSML｜": "｜DSML｜", "</｜DSML｜": "｜DSML｜"}

# Families whose markers are plain text or non-special added tokens, so
# `skip_special_tokens` leaves them in the text vLLM's parsers read.
# Hunyuan A13B: its tokenizer (`tokenization_hy.py`, tiktoken) has only
# `<|endoftext|>`, `<|startoftext|>`, `<|bos|>`, `<|eos|>`, `<|pad|>` and
# `<|extra_0..204|>` as special tokens; `<think>`, `<answer>`, `<tool_calls>`
# are ordinary BPE text (vLLM's own parser docstring spells `<think>\n` as
# ids [14023, 771, 397]). K2 Horizon: its tokenizer.json pins `<ifm|think>`
# (250029) and `</ifm|think>` (250030) as added tokens with `special: false`
# (20 of its 626 added tokens are not special: the protocol markers), and
# vLLM's k2_horizon parsers read every marker from text without turning
# skipping off, which only works if none is special.
K2_HORIZON_SPECIALS = []
HUNYUAN_A13B_SPECIALS = []

# Markers that are single added tokens of the model's vocabulary but not
# special (never skipped), by parser name; the spec adds them as non-special
# tokens (`added_tokens`), so vLLM's parsers that look their ids up (K2
# Horizon's reasoning parser requires its think markers in the vocabulary)
# find them, and they stream as one token each, as with the real model.
K2_HORIZON_MARKERS = [f"<{c}ifm|{m}>" for m in ("think", "think_fast", "think_faster", "tool_calls", "tool_call",
                                                "arg_key", "arg_type", "arg_value") for c in ("", "/")]
PLAIN_TOKENS = {"k2_horizon": K2_HORIZON_MARKERS}

TOOLS = {
    "hermes": T(_json_tag("<tool_call>", "</tool_call>"), QWEN_TOOL, "</tool_call>"),
    "qwen3_json": T(_json_tag("<tool_call>", "</tool_call>"), QWEN_TOOL, "</tool_call>"),
    "ernie45": T(_json_tag("<tool_call>", "</tool_call>"), QWEN_TOOL, "</tool_call>"),
    "granite4": T(_json_tag("<tool_call>", "</tool_call>"), QWEN_TOOL, "</tool_call>"),
    "ripple": T(_json_tag("<tool_call>", "</tool_call>"), QWEN_TOOL, "</tool_call>"),
    "longcat": T(_json_tag("<longcat_tool_call>", "</longcat_tool_call>", nl=False), ["<longcat_tool_call>", "</longcat_tool_call>"], "</longcat_tool_call>"),
    "dots": T(_json_tag("<dots_function_call>", "</dots_function_call>", nl=False), ["<dots_function_call>", "</dots_function_call>"], "</dots_function_call>"),
    "qwen3_coder": T(_xml_qwen("<tool_call>", "</tool_call>"), QWEN_TOOL, "</parameter>"),
    "qwen3_xml": T(_xml_qwen("<tool_call>", "</tool_call>"), QWEN_TOOL, "</parameter>"),
    "granite_toolcall_parser": T(_xml_qwen("<tool_call>", "</tool_call>"), QWEN_TOOL, "</parameter>"),
    "mimo": T(_xml_qwen("<tool_call>", "</tool_call>"), QWEN_TOOL, "</parameter>"),
    "step3p5": T(_xml_qwen("<tool_call>", "</tool_call>"), QWEN_TOOL, "</parameter>"),
    "step5": T(_xml_qwen("<tool_call>", "</tool_call>"), QWEN_TOOL, "</parameter>"),
    "seed_oss": T(_xml_qwen("<seed:tool_call>", "</seed:tool_call>"), ["<seed:tool_call>", "</seed:tool_call>"], "</parameter>"),
    "zaya": T(_xml_qwen("<zyphra_tool_call>", "</zyphra_tool_call>"), ["<zyphra_tool_call>", "</zyphra_tool_call>"], "</parameter>"),
    "zaya_xml": T(_xml_qwen("<zyphra_tool_call>", "</zyphra_tool_call>"), ["<zyphra_tool_call>", "</zyphra_tool_call>"], "</parameter>"),
    "deepseek_v3": T(_ds_v3, DS_TOOL, "<｜tool▁call▁end｜>"),
    "deepseek_v31": T(_ds_v31, DS_TOOL, "<｜tool▁call▁end｜>"),
    "deepseek_v32": T(_dsml("function_calls", ""), DSML, "</｜DSML｜parameter>"),
    "deepseek_v4": T(_dsml("tool_calls", ""), DSML, "</｜DSML｜parameter>"),
    "deepseek_v41": T(_dsml("calls", " "), DSML, "</｜DSML｜ parameter>"),
    "kimi_k2": T(_kimi_k2, ["<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"], "<|tool_call_end|>"),
    "kimi_k3": T(_kimi_k3, ["<|open|>", "<|close|>", "<|sep|>"], "<|close|>"),
    "glm45": T(_glm, QWEN_TOOL + ["<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"], "</arg_value>"),
    "glm47": T(_glm, QWEN_TOOL + ["<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"], "</arg_value>"),
    "ling3": T(_glm, QWEN_TOOL + ["<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"], "</arg_value>"),
    "poolside_v1": T(_glm, QWEN_TOOL + ["<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "<assistant>"], "</arg_value>"),
    "hy_v3": T(_hy("<tool_sep>"), ["<tool_calls>", "</tool_calls>", "<tool_call>", "</tool_call>", "<tool_sep>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"], "</arg_value>"),
    "hy_v4": T(_hy(""), ["<tool_calls>", "</tool_calls>", "<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"], "</arg_value>"),
    "jamba": T(lambda cs: "<tool_calls>" + j([{"name": n, "arguments": a} for n, a in cs]) + "</tool_calls>", ["<tool_calls>", "</tool_calls>"], "</tool_calls>"),
    "hunyuan_a13b": T(lambda cs: "<tool_calls>" + j([{"name": n, "arguments": a} for n, a in cs]) + "</tool_calls>", HUNYUAN_A13B_SPECIALS, "</tool_calls>"),
    "mistral": T(lambda cs: "".join(f"[TOOL_CALLS]{n}[ARGS]{j(a)}" for n, a in cs), ["[TOOL_CALLS]", "[ARGS]"], "[TOOL_CALLS]"),
    "llama3_json": T(lambda cs: "; ".join(j({"name": n, "parameters": a}) for n, a in cs), ["<|python_tag|>"], "}"),
    "llama4_json": T(lambda cs: "; ".join(j({"name": n, "parameters": a}) for n, a in cs), ["<|python_start|>", "<|python_end|>"], "}"),
    "pythonic": T(_pythonic, [], ")]"),
    "llama4_pythonic": T(_pythonic, ["<|python_start|>", "<|python_end|>"], ")]"),
    "olmo3": T(lambda cs: "<function_calls>" + "\n".join(_pythonic([c])[1:-1] for c in cs) + "</function_calls>", ["<function_calls>", "</function_calls>"], "</function_calls>"),
    "lfm2": T(lambda cs: "<|tool_call_start|>" + _pythonic(cs) + "<|tool_call_end|>", ["<|tool_call_start|>", "<|tool_call_end|>"], "<|tool_call_end|>"),
    "phi4_mini_json": T(lambda cs: "functools" + j([{"name": n, "arguments": a} for n, a in cs]), [], "]"),
    "xlam": T(lambda cs: j([{"name": n, "arguments": a} for n, a in cs]), [], "]"),
    "internlm": T(lambda cs: "".join(f"<|action_start|><|plugin|>\n{j({'name': n, 'parameters': a})}<|action_end|>" for n, a in cs), ["<|action_start|>", "<|plugin|>", "<|action_end|>"], "<|action_end|>"),
    "granite": T(lambda cs: "<|tool_call|>" + j([{"name": n, "arguments": a} for n, a in cs]), ["<|tool_call|>"], "]"),
    "granite-20b-fc": T(lambda cs: "\n".join(f"<function_call> {j({'name': n, 'arguments': a})}" for n, a in cs), [], "<function_call>"),
    "gigachat3": T(lambda cs: "".join(f"<|function_call|>{j({'name': n, 'arguments': a})}" for n, a in cs), ["<|function_call|>"], "}"),
    "apertus": T(lambda cs: "<|tools_prefix|>" + j([{n: a} for n, a in cs]) + "<|tools_suffix|>", ["<|tools_prefix|>", "<|tools_suffix|>"], "<|tools_suffix|>"),
    "functiongemma": T(lambda cs: "".join(f"<start_function_call>call:{n}{gemma_val(a, '<escape>')}<end_function_call>" for n, a in cs), ["<start_function_call>", "<end_function_call>", "<escape>"], "<end_function_call>"),
    "gemma4": T(lambda cs: "".join("<|tool_call>call:" + n + gemma_val(a, GQ) + "<tool_call|>" for n, a in cs), ["<|tool_call>", "<tool_call|>", '<|"|>'], "<tool_call|>"),
    "minicpm5": T(lambda cs: "\n".join(f'<function name="{n}">' + "".join(f'<param name="{k}">{sval(v)}</param>' for k, v in a.items()) + "</function>" for n, a in cs), [], "</param>"),
    "minimax_m2": T(_minimax_m2, ["<minimax:tool_call>", "</minimax:tool_call>"], "</parameter>"),
    "minimax_m3": T(_minimax_m3, ["]<]minimax[>["], "]<]minimax[>["),
    "step3": T(_step3, ["<｜tool_calls_begin｜>", "<｜tool_calls_end｜>", "<｜tool_call_begin｜>", "<｜tool_call_end｜>"], "</steptml:parameter>"),
    "k2_horizon": T(_k2_horizon, K2_HORIZON_SPECIALS, "</ifm|arg_value>"),
    "cohere_command3": T(_cohere, ["<|START_ACTION|>", "<|END_ACTION|>"], "<|END_ACTION|>"),
    "cohere_command4": T(_cohere, ["<|START_ACTION|>", "<|END_ACTION|>"], "<|END_ACTION|>"),
    "inkling": T(lambda cs: "<|message_model|>".join(f"<|content_invoke_tool_json|>{j({'name': n, 'args': a})}<|end_message|>" for n, a in cs), ["<|message_model|>", "<|content_text|>", "<|content_thinking|>", "<|content_invoke_tool_json|>", "<|end_message|>"], "<|end_message|>"),
    "plamo3": T(_plamo, ["<|plamo:begin_tool_requests:plamo|>", "<|plamo:end_tool_requests:plamo|>", "<|plamo:begin_tool_request:plamo|>", "<|plamo:end_tool_request:plamo|>", "<|plamo:begin_tool_name:plamo|>", "<|plamo:end_tool_name:plamo|>", "<|plamo:begin_tool_arguments:plamo|>", "<|plamo:end_tool_arguments:plamo|>", "<|plamo:constrain|>", "<|plamo:msg|>"], "<|plamo:end_tool_arguments:plamo|>"),
    "openai": T(_harmony, HARMONY, "<|call|>"),
    "beam": T(_beam, HARMONY, "</rfl:parameter>"),
    "muse": T(_muse, ["<|start|>", "<|message|>", "<|eom|>", "<|eot|>"], "</atem:parameter>"),
    "muse_glimmer": T(_muse, ["<|start|>", "<|message|>", "<|eom|>", "<|eot|>"], "</atem:parameter>"),
    "musespark": T(_muse, ["<|start|>", "<|message|>", "<|eom|>", "<|eot|>"], "</atem:parameter>"),
}


def R(start, end, turn, think_kw="enable_thinking", prompt_opens=False, specials=None, content_open="", content_close=""):
    """A reasoning family: `start`/`end` of the block; `prompt_opens`: the
    template's generation prompt already holds `start` when thinking is on."""
    return {
        "start": start,
        "end": end,
        "turn": turn,
        "think_kw": think_kw,
        "prompt_opens": prompt_opens,
        "specials": specials if specials is not None else [s for s in (start, end) if s.startswith("<")],
        "content_open": content_open,
        "content_close": content_close,
    }


IM = "<|im_start|>assistant\n"
REASONING = {
    "qwen3": R("<think>\n", "\n</think>\n\n", IM),
    "deepseek_r1": R("<think>\n", "\n</think>\n\n", "<｜Assistant｜>", prompt_opens=True),
    "deepseek_v3": R("<think>", "</think>", "<｜Assistant｜>", think_kw="thinking", prompt_opens=True),
    "deepseek_v4": R("<think>", "</think>", "<｜Assistant｜>", think_kw="thinking", prompt_opens=True),
    "deepseek_v41": R("<think>", "</think>", "<｜Assistant｜>", think_kw="thinking", prompt_opens=True),
    "kimi_k2": R("<think>", "</think>", "<|im_assistant|>assistant<|im_middle|>", think_kw="thinking"),
    "glm45": R("<think>", "</think>", "<|assistant|>"),
    "glm47": R("<think>", "</think>", "<|assistant|>", prompt_opens=True),
    "ernie45": R("", "\n</think>\n\n", "Assistant: ", prompt_opens=True, specials=["<think>", "</think>"]),
    "holo2": R("<think>", "</think>", IM, prompt_opens=True),
    "hy_v3": R("<think>", "</think>", "<|hy_Assistant|>", think_kw="reasoning_effort", prompt_opens=True),
    "hy_v4": R("<think>", "</think>", "<|hy_Assistant|>", think_kw="reasoning_effort", prompt_opens=True),
    "mimo": R("<think>", "</think>", IM, prompt_opens=True),
    "minimax_m2": R("<think>", "</think>", "]~b]ai\n", prompt_opens=True),
    "minimax_m2_append_think": R("<think>", "</think>", "]~b]ai\n", prompt_opens=True),
    "minimax_m3": R("<mm:think>", "</mm:think>", "]~b]ai\n", think_kw="thinking_mode", prompt_opens=True),
    "zaya": R("<think>", "</think>", IM, prompt_opens=True),
    "step3p5": R("<think>\n", "\n</think>\n", IM, prompt_opens=True),
    "step5": R("<think>\n", "\n</think>\n", IM, prompt_opens=True),
    "step3": R("<think>\n", "\n</think>\n", "<|BOT|>assistant\n", prompt_opens=True),
    "granite": R("Here is my thought process:", "Here is my response:", "<|start_of_role|>assistant<|end_of_role|>", think_kw="thinking", specials=[]),
    "granite_thinking_parser": R("<think>", "</think>", IM),
    "hunyuan_a13b": R("<think>\n", "\n</think>\n<answer>\n", "<|extra_0|>", specials=HUNYUAN_A13B_SPECIALS, content_close="\n</answer>"),
    "k2_horizon": R("<ifm|think>", "</ifm|think>", "<ifm|assistant>", specials=K2_HORIZON_SPECIALS),
    "minicpmv": R("<think>\n", "\n</think>\n\n", IM),
    "nemotron_v3": R("<think>\n", "\n</think>\n", IM, prompt_opens=True),
    "olmo3": R("<think>", "</think>", IM),
    "ripple": R("<think>\n", "\n</think>\n", IM),
    "seed_oss": R("<seed:think>", "</seed:think>", "<seed:bos>assistant\n"),
    "ling3": R("<think>", "</think>", "<role>ASSISTANT</role>"),
    "poolside_v1": R("<think>", "</think>", "<assistant>", specials=["<think>", "</think>", "<assistant>"]),
    "plamo3": R("<|plamo:begin_think:plamo|>", "<|plamo:end_think:plamo|>", "<|plamo:op|>assistant\n"),
    "mistral": R("[THINK]", "[/THINK]", "", specials=["[THINK]", "[/THINK]", "[TOOL_CALLS]", "[ARGS]"]),
    "cohere_command3": R("<|START_THINKING|>", "<|END_THINKING|>", "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>", content_open="<|START_RESPONSE|>", content_close="<|END_RESPONSE|>", specials=["<|START_THINKING|>", "<|END_THINKING|>", "<|START_RESPONSE|>", "<|END_RESPONSE|>"]),
    "cohere_command4": R("<|START_THINKING|>", "<|END_THINKING|>", "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>", content_open="<|START_TEXT|>", content_close="<|END_TEXT|>", specials=["<|START_THINKING|>", "<|END_THINKING|>", "<|START_TEXT|>", "<|END_TEXT|>"]),
    "gemma4": R("<|channel>thought\n", "<channel|>", "<|turn>model\n", specials=["<|channel>", "<channel|>", "<turn|>"]),
    "inkling": R("<|content_thinking|>", "<|end_message|><|message_model|>", "", content_open="<|content_text|>", content_close="<|end_message|>", specials=["<|message_model|>", "<|content_text|>", "<|content_thinking|>", "<|content_invoke_tool_json|>", "<|end_message|>"]),
    "openai_gptoss": R("<|channel|>analysis<|message|>", "<|end|><|start|>assistant", "<|start|>assistant", content_open="<|channel|>final<|message|>", specials=HARMONY),
    "beam": R("<|channel|>analysis<|message|>", "<|end|><|start|>assistant", "<|start|>assistant", content_open="<|channel|>final<|message|>", specials=HARMONY),
    "muse": R("<|start|>assistant to=self<|message|>", "<|eom|>", "", content_open="<|start|>assistant to=user<|message|>", content_close="<|eot|>", specials=["<|start|>", "<|message|>", "<|eom|>", "<|eot|>"]),
    "muse_glimmer": R("<|start|>assistant to=self<|message|>", "<|eom|>", "", content_open="<|start|>assistant to=user<|message|>", content_close="<|eot|>", specials=["<|start|>", "<|message|>", "<|eom|>", "<|eot|>"]),
    "musespark": R("<|start|>assistant to=self<|message|>", "<|eom|>", "", content_open="<|start|>assistant to=user<|message|>", content_close="<|eot|>", specials=["<|start|>", "<|message|>", "<|eom|>", "<|eot|>"]),
    "kimi_k3": R("<|open|>think<|sep|>", "<|close|>think<|sep|>", "<|im_assistant|>", content_open="<|open|>response<|sep|>", content_close="<|close|>response<|sep|>", specials=["<|open|>", "<|close|>", "<|sep|>", "<|im_assistant|>"]),
    "identity": R("", "", IM, specials=[]),
    "hf": R("<think>", "</think>", "<|turn>model\n"),
}

# Each tool parser's natural reasoning partner (the family's own), or None.
PARTNER = {
    "hermes": "qwen3", "qwen3_coder": "qwen3", "qwen3_xml": "qwen3", "qwen3_json": "qwen3",
    "deepseek_v3": "deepseek_r1", "deepseek_v31": "deepseek_v3", "deepseek_v32": "deepseek_v3",
    "deepseek_v4": "deepseek_v4", "deepseek_v41": "deepseek_v41", "kimi_k2": "kimi_k2", "kimi_k3": "kimi_k3",
    "glm45": "glm45", "glm47": "glm47", "ling3": "ling3", "poolside_v1": "poolside_v1", "hy_v3": "hy_v3",
    "hy_v4": "hy_v4", "mimo": "mimo", "minimax_m2": "minimax_m2", "minimax_m3": "minimax_m3", "zaya": "zaya",
    "zaya_xml": "zaya", "step3p5": "step3p5", "step5": "step5", "step3": "step3", "seed_oss": "seed_oss",
    "ernie45": "ernie45", "hunyuan_a13b": "hunyuan_a13b", "granite": "granite",
    "granite_toolcall_parser": "granite_thinking_parser", "k2_horizon": "k2_horizon", "olmo3": "olmo3",
    "ripple": "ripple", "plamo3": "plamo3", "mistral": "mistral", "cohere_command3": "cohere_command3",
    "cohere_command4": "cohere_command4", "gemma4": "gemma4", "inkling": "inkling", "openai": "openai_gptoss",
    "beam": "beam", "muse": "muse", "muse_glimmer": "muse_glimmer", "musespark": "musespark",
    "longcat": "deepseek_r1", "dots": "qwen3", "granite4": "granite_thinking_parser", "lfm2": "qwen3",
    "minicpm5": "minicpmv",
}

# Real tokenizers (the five the tests fetch) by parser name; the rest use a
# base vocabulary with the family's special tokens added.
REAL = {
    "qwen3": ({"qwen3"}, {"hermes", "qwen3_coder", "qwen3_xml", "qwen3_json"}),
    "deepseek_v3": (set(), {"deepseek_v3", "deepseek_v31"}),
    "deepseek_r1": ({"deepseek_r1", "deepseek_v3"}, {"deepseek_v3", "deepseek_v31"}),
    "gptoss": ({"openai_gptoss"}, {"openai"}),
    "llama3_1": (set(), {"llama3_json", "pythonic"}),
}
