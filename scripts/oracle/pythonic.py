"""vLLM 0.34's one-shot answer for the pythonic tool parsers (pythonic,
llama4_pythonic, olmo3, lfm2), without importing vLLM: the helper functions
of vllm/tool_parsers/utils.py (get_parameter_value, escape_nested_quotes_in_strings,
normalize_leading_zero_ints, ...) are loaded verbatim from the unpacked wheel
and driven by each parser's extract_tool_calls steps, restated here.

    python3 scripts/oracle/pythonic.py < cases.jsonl

Prints "id |C: content |T: [(name, arguments)]" per case. Used to label
tests/cases/fidelity-pyliterals.jsonl."""
import ast, json, keyword as _python_keyword, math, warnings, re, sys
SRC = "/work/cache/vllm-src/vllm/tool_parsers/utils.py"
tree = ast.parse(open(SRC).read())
want = {"get_parameter_value","_ast_callable_dotted_name","escape_ctrl_chars_in_strings","rename_reserved_kwargs","restore_reserved_kwarg_names","normalize_leading_zero_ints","escape_nested_quotes_in_strings","_is_escaped","UnexpectedAstError","_JSON_NAME_LITERALS","_QUOTE_FOLLOWERS","_RESERVED_KW_SUFFIX"}
body=[]
for n in tree.body:
    name = getattr(n,"name",None) or (n.targets[0].id if isinstance(n,ast.Assign) and isinstance(n.targets[0],ast.Name) else None)
    if name in want: body.append(n)
class L:
    def warning(self,*a): pass
    exception=debug=warning
g={"ast":ast,"json":json,"_python_keyword":_python_keyword,"math":math,"warnings":warnings,"logger":L(),"Any":object}
exec(compile(ast.Module(body=body,type_ignores=[]),SRC,"exec"),g)
def single(call):
    if not isinstance(call.func,(ast.Name,ast.Attribute)): raise g["UnexpectedAstError"]("name")
    name=g["_ast_callable_dotted_name"](call.func)
    args={k.arg:g["get_parameter_value"](k.value) for k in call.keywords}
    return name, json.dumps(args, ensure_ascii=False)
RX = re.compile(r"\[([a-zA-Z]+\w*\(([a-zA-Z]+\w*=.*,\s*)*([a-zA-Z]+\w*=.*\s)?\),\s*)*([a-zA-Z]+\w*\(([a-zA-Z]+\w*=.*,\s*)*([a-zA-Z]+\w*=.*\s*)?\)\s*)+\]", re.DOTALL)
def pythonic(out, orig=None):
    orig = out if orig is None else orig
    if not RX.match(out): return None, orig, []
    try:
        m=ast.parse(out); p=getattr(m.body[0],"value",None)
        if isinstance(p,ast.List) and all(isinstance(e,ast.Call) for e in p.elts):
            return None, None, [single(e) for e in p.elts]
        raise ValueError
    except Exception: return None, orig, []
def llama4(out):
    if out.startswith("<|python_start|>"):
        out=out[len("<|python_start|>"):].replace("<|python_end|>","")
    return pythonic(out)
def olmo3(out):
    orig=out
    m=re.search(r"<function_calls>(.*?)</function_calls>", out, re.DOTALL)
    if m: out=m.group(1).strip()
    out=", ".join([l.strip() for l in out.splitlines() if l.strip()])
    return pythonic(f"[{out}]", orig)
S,E="<|tool_call_start|>","<|tool_call_end|>"
def lfm2(mo):
    si=mo.find(S)
    if si==-1: return None, mo, []
    ei=mo.find(E,si)
    if ei==-1:
        tt=mo[si+len(S):]; content=mo[:si].strip() or None
    else:
        tt=mo[si+len(S):ei]; before=mo[:si].strip()
        after=mo[ei+len(E):]; lo=after.rfind(E)
        if lo!=-1: after=after[lo+len(E):]
        after=after.strip()
        parts=[p for p in (before,after) if p]; content="\n".join(parts) if parts else None
    tt=tt.strip()
    if not re.match(r"\[.*\]$",tt,re.DOTALL): return None, mo, []
    try:
        kw=False
        try: module=ast.parse(tt)
        except (SyntaxError,ValueError):
            esc=g["escape_ctrl_chars_in_strings"](g["normalize_leading_zero_ints"](tt))
            cands=[esc]
            rq,ch=g["escape_nested_quotes_in_strings"](esc)
            if ch: cands.append(g["escape_ctrl_chars_in_strings"](rq))
            ren,kw=g["rename_reserved_kwargs"](cands[-1])
            if kw: cands.append(ren)
            for cnd in cands:
                try: module=ast.parse(cnd); break
                except (SyntaxError,ValueError): continue
            else: raise
        p=getattr(module.body[0],"value",None)
        if isinstance(p,ast.List) and p.elts and all(isinstance(e,ast.Call) for e in p.elts):
            calls=[single(e) for e in p.elts]
            if kw:
                calls=[(n, json.dumps(g["restore_reserved_kwarg_names"](json.loads(a)),ensure_ascii=False)) for n,a in calls]
            return None, content, calls
        raise ValueError
    except Exception: return None, mo, []
P={"pythonic":pythonic,"llama4_pythonic":llama4,"olmo3":olmo3,"lfm2":lfm2}
if __name__=="__main__":
    for line in sys.stdin:
        c=json.loads(line)
        r,cont,calls=P[c["tool_parser"]](c["model_output"])
        print(c["id"],"|C:",repr(cont),"|T:",calls)
