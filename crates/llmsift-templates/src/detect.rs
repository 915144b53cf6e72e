//! vLLM's chat-template content-format detection, on minijinja's AST.
//!
//! vLLM 0.34 (`vllm/renderers/hf.py`, `_detect_content_format`) parses a
//! template with Jinja2 and answers [`ContentFormat::Openai`] when some `for`
//! loop iterates over a message's content, else [`ContentFormat::String`]:
//!
//! 1. the names `messages` goes by: `messages`, then every `{% set %}`
//!    whose value is one of those names (or its filter, test or slice:
//!    `messages|list`, `messages[1:]`), found again and again until no new
//!    name appears; a namespace alias counts as `ns.key`
//!    (`namespace(key=messages)`, `{% set ns.key = messages %}`);
//! 2. the message variables: the targets of loops over one of those names;
//! 3. the first loop, in source order, over `m.content` / `m['content']`
//!    (or its filter, test or slice) for a message variable `m`; over a
//!    macro parameter that some call of that macro binds to such a content
//!    (by position or keyword); or, outside every macro, over a bare name
//!    `content`.
//!
//! Jinja2's quirks are kept: a loop over a messages name with a tuple target
//! (`for a, b in messages`), or a first matching content loop with one,
//! makes vLLM's search raise, and the answer is then `string`; a template
//! Jinja2 cannot parse is `string` too (here: one minijinja cannot parse, or
//! one with `{% do %}`, which Jinja2 lacks without its extension). A
//! `{% call %}` body is not a macro (Jinja2's `CallBlock` is no `Macro`).
//! `crates/llmsift-templates/tests/data/content-format.jsonl` holds vLLM's
//! own answers for the test templates and snippets, checked in CI.

use std::collections::{HashMap, HashSet, VecDeque};

use minijinja::machinery::ast::{self, CallArg, Expr, Stmt};

use crate::ContentFormat;

/// What vLLM's `_detect_content_format` answers for a template source.
pub(crate) fn detect(source: &str) -> ContentFormat {
    let source = crate::env::rewrite_generation_tags(source);
    let Ok(root) = minijinja::machinery::parse(&source, "chat_template", Default::default()) else {
        return ContentFormat::String;
    };
    let mut nodes = Nodes::default();
    nodes.stmt(&root, &mut Vec::new());
    if nodes.has_do {
        return ContentFormat::String;
    }
    match nodes.content_loop() {
        Some(Ok(())) => ContentFormat::Openai,
        // Jinja2's `assert isinstance(loop_target, Name)` raised: vLLM's default.
        Some(Err(TupleTarget)) | None => ContentFormat::String,
    }
}

/// A loop target that is not a plain name (vLLM's assertion fails on it).
struct TupleTarget;

/// One `for` loop.
struct Loop<'n, 'a> {
    target: &'n Expr<'a>,
    iter: &'n Expr<'a>,
}

/// A macro and the loops inside it (its nested macros' too), by index.
struct MacroNode<'n, 'a> {
    decl: &'n ast::Macro<'a>,
    loops: Vec<usize>,
}

/// The nodes the rules read, in Jinja2's `find_all` order (source order).
#[derive(Default)]
struct Nodes<'n, 'a> {
    assigns: Vec<(&'n Expr<'a>, &'n Expr<'a>)>,
    loops: Vec<Loop<'n, 'a>>,
    macros: Vec<MacroNode<'n, 'a>>,
    calls: Vec<&'n ast::Call<'a>>,
    has_do: bool,
}

impl<'n, 'a> Nodes<'n, 'a> {
    /// Collects a statement; `open` are the indices of the macros it is in.
    fn stmt(&mut self, s: &'n Stmt<'a>, open: &mut Vec<usize>) {
        match s {
            Stmt::Template(t) => self.body(&t.children, open),
            Stmt::EmitExpr(e) => self.expr(&e.expr),
            Stmt::EmitRaw(_) | Stmt::Continue(_) | Stmt::Break(_) => {}
            Stmt::ForLoop(f) => {
                let index = self.loops.len();
                self.loops.push(Loop { target: &f.target, iter: &f.iter });
                for &m in open.iter() {
                    self.macros[m].loops.push(index);
                }
                self.expr(&f.iter);
                if let Some(e) = &f.filter_expr {
                    self.expr(e);
                }
                self.body(&f.body, open);
                self.body(&f.else_body, open);
            }
            Stmt::IfCond(i) => {
                self.expr(&i.expr);
                self.body(&i.true_body, open);
                self.body(&i.false_body, open);
            }
            Stmt::WithBlock(w) => {
                for (_, value) in &w.assignments {
                    self.expr(value);
                }
                self.body(&w.body, open);
            }
            Stmt::Set(set) => {
                self.assigns.push((&set.target, &set.expr));
                self.expr(&set.expr);
            }
            Stmt::SetBlock(b) => {
                if let Some(f) = &b.filter {
                    self.expr(f);
                }
                self.body(&b.body, open);
            }
            Stmt::AutoEscape(a) => {
                self.expr(&a.enabled);
                self.body(&a.body, open);
            }
            Stmt::FilterBlock(f) => {
                self.expr(&f.filter);
                self.body(&f.body, open);
            }
            Stmt::Macro(m) => {
                self.macros.push(MacroNode { decl: m, loops: Vec::new() });
                m.defaults.iter().for_each(|d| self.expr(d));
                open.push(self.macros.len() - 1);
                self.body(&m.body, open);
                open.pop();
            }
            Stmt::CallBlock(c) => {
                self.call(&c.call);
                c.macro_decl.defaults.iter().for_each(|d| self.expr(d));
                self.body(&c.macro_decl.body, open);
            }
            Stmt::Do(d) => {
                self.has_do = true;
                self.call(&d.call);
            }
            // `{% block %}`, `{% include %}`, … (minijinja's `multi_template`,
            // when another crate turns it on): a chat template is one file.
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }

    fn body(&mut self, stmts: &'n [Stmt<'a>], open: &mut Vec<usize>) {
        stmts.iter().for_each(|s| self.stmt(s, open));
    }

    fn call(&mut self, c: &'n ast::Call<'a>) {
        self.calls.push(c);
        self.expr(&c.expr);
        self.args(&c.args);
    }

    fn args(&mut self, args: &'n [CallArg<'a>]) {
        for a in args {
            match a {
                CallArg::Pos(e) | CallArg::Kwarg(_, e) | CallArg::PosSplat(e) | CallArg::KwargSplat(e) => {
                    self.expr(e)
                }
            }
        }
    }

    /// Collects the calls inside an expression.
    fn expr(&mut self, e: &'n Expr<'a>) {
        match e {
            Expr::Var(_) | Expr::Const(_) => {}
            Expr::Slice(s) => {
                self.expr(&s.expr);
                [&s.start, &s.stop, &s.step].into_iter().flatten().for_each(|e| self.expr(e));
            }
            Expr::UnaryOp(u) => self.expr(&u.expr),
            Expr::BinOp(b) => {
                self.expr(&b.left);
                self.expr(&b.right);
            }
            Expr::Compare(c) => {
                self.expr(&c.expr);
                c.ops.iter().for_each(|op| self.expr(&op.expr));
            }
            Expr::IfExpr(i) => {
                self.expr(&i.test_expr);
                self.expr(&i.true_expr);
                if let Some(f) = &i.false_expr {
                    self.expr(f);
                }
            }
            Expr::Filter(f) => {
                if let Some(e) = &f.expr {
                    self.expr(e);
                }
                self.args(&f.args);
            }
            Expr::Test(t) => {
                self.expr(&t.expr);
                self.args(&t.args);
            }
            Expr::GetAttr(g) => self.expr(&g.expr),
            Expr::GetItem(g) => {
                self.expr(&g.expr);
                self.expr(&g.subscript_expr);
            }
            Expr::Call(c) => self.call(c),
            Expr::List(l) => l.items.iter().for_each(|e| self.expr(e)),
            Expr::Tuple(t) => t.items.iter().for_each(|e| self.expr(e)),
            Expr::Map(m) => m.keys.iter().chain(&m.values).for_each(|e| self.expr(e)),
        }
    }

    /// The names `messages` goes by (`_iter_nodes_assign_var_or_elems`).
    fn messages_names(&self) -> Vec<String> {
        let mut names = vec!["messages".to_string()];
        let mut seen: HashSet<String> = names.iter().cloned().collect();
        let mut queue: VecDeque<String> = names.iter().cloned().collect();
        while let Some(related) = queue.pop_front() {
            for (lhs, rhs) in &self.assigns {
                let mut found = Vec::new();
                if let Expr::Var(v) = lhs {
                    if is_var_or_elems_access(rhs, &related, None) {
                        found.push(v.id.to_string());
                    }
                }
                match (lhs, rhs) {
                    (Expr::Var(v), Expr::Call(c)) if matches!(&c.expr, Expr::Var(n) if n.id == "namespace") => {
                        for arg in &c.args {
                            if let CallArg::Kwarg(key, value) = arg {
                                if is_var_or_elems_access(value, &related, None) {
                                    found.push(format!("{}.{key}", v.id));
                                }
                            }
                        }
                    }
                    (Expr::GetAttr(_), _) if is_var_or_elems_access(rhs, &related, None) => {
                        found.extend(dotted_name(lhs));
                    }
                    _ => {}
                }
                for name in found {
                    if name != related && seen.insert(name.clone()) {
                        queue.push_back(name.clone());
                    }
                    names.push(name);
                }
            }
        }
        names
    }

    /// The message variables (`_iter_nodes_assign_messages_item`).
    fn message_vars(&self) -> Result<Vec<&'a str>, TupleTarget> {
        let names = self.messages_names();
        let mut vars = Vec::new();
        for l in &self.loops {
            if names.iter().any(|n| is_var_or_elems_access(l.iter, n, None)) {
                vars.push(target_name(l.target)?);
            }
        }
        Ok(vars)
    }

    /// The first loop over message content (`_iter_nodes_assign_content_item`):
    /// `None` when there is none.
    fn content_loop(&self) -> Option<Result<(), TupleTarget>> {
        let vars = match self.message_vars() {
            Ok(vars) => vars,
            Err(e) => return Some(Err(e)),
        };
        let bound_to_content =
            |e: &Expr<'_>| vars.iter().any(|v| is_var_or_elems_access(e, v, Some("content")));
        // Each loop in a macro with parameters bound to content: those of the
        // last such macro around it (vLLM's dict is overwritten in order).
        let mut params_by_loop: HashMap<usize, HashSet<&str>> = HashMap::new();
        let mut in_macros = HashSet::new();
        for m in &self.macros {
            let params: Vec<&str> = m.decl.args.iter().filter_map(var_name).collect();
            let mut content_params = HashSet::new();
            for c in self.calls.iter().filter(|c| matches!(&c.expr, Expr::Var(v) if v.id == m.decl.name)) {
                let positional = c.args.iter().filter_map(|a| match a {
                    CallArg::Pos(e) => Some(e),
                    _ => None,
                });
                for (i, arg) in positional.enumerate() {
                    if i < m.decl.args.len() && bound_to_content(arg) {
                        content_params.extend(var_name(&m.decl.args[i]));
                    }
                }
                for arg in &c.args {
                    if let CallArg::Kwarg(key, value) = arg {
                        if params.contains(key) && bound_to_content(value) {
                            content_params.insert(*key);
                        }
                    }
                }
            }
            for &l in &m.loops {
                in_macros.insert(l);
                if !content_params.is_empty() {
                    params_by_loop.insert(l, content_params.clone());
                }
            }
        }
        for (i, l) in self.loops.iter().enumerate() {
            let over_param = || match (l.iter, params_by_loop.get(&i)) {
                (Expr::Var(v), Some(params)) => params.contains(v.id),
                _ => false,
            };
            let over_bare_content =
                || !in_macros.contains(&i) && matches!(l.iter, Expr::Var(v) if v.id == "content");
            if bound_to_content(l.iter) || over_param() || over_bare_content() {
                return Some(target_name(l.target).map(|_| ()));
            }
        }
        None
    }
}

fn var_name<'a>(e: &Expr<'a>) -> Option<&'a str> {
    match e {
        Expr::Var(v) => Some(v.id),
        _ => None,
    }
}

fn target_name<'a>(e: &Expr<'a>) -> Result<&'a str, TupleTarget> {
    var_name(e).ok_or(TupleTarget)
}

/// `ns.rest` as the dotted name `"ns.rest"` (`_attr_dotted_name`).
fn dotted_name(e: &Expr<'_>) -> Option<String> {
    let mut parts = Vec::new();
    let mut node = e;
    while let Expr::GetAttr(g) = node {
        parts.push(g.name);
        node = &g.expr;
    }
    let Expr::Var(v) = node else { return None };
    parts.push(v.id);
    parts.reverse();
    Some(parts.join("."))
}

/// `varname` itself, or its dotted alias `ns.rest` (`_is_var_access`).
fn is_var_access(e: &Expr<'_>, varname: &str) -> bool {
    match e {
        Expr::Var(v) => v.id == varname,
        Expr::GetAttr(g) => match varname.rsplit_once('.') {
            Some((base, attr)) => g.name == attr && is_var_access(&g.expr, base),
            None => false,
        },
        _ => false,
    }
}

/// `varname.key` or `varname['key']` (`_is_attr_access`).
fn is_attr_access(e: &Expr<'_>, varname: &str, key: &str) -> bool {
    match e {
        Expr::GetItem(g) => {
            is_var_access(&g.expr, varname)
                && matches!(&g.subscript_expr, Expr::Const(c) if c.value.as_str() == Some(key))
        }
        Expr::GetAttr(g) => is_var_access(&g.expr, varname) && g.name == key,
        _ => false,
    }
}

/// The access, or a filter, test or slice of it (`_is_var_or_elems_access`).
fn is_var_or_elems_access(e: &Expr<'_>, varname: &str, key: Option<&str>) -> bool {
    match e {
        Expr::Filter(f) => f.expr.as_ref().is_some_and(|inner| is_var_or_elems_access(inner, varname, key)),
        Expr::Test(t) => is_var_or_elems_access(&t.expr, varname, key),
        Expr::Slice(s) => is_var_or_elems_access(&s.expr, varname, key),
        _ => match key {
            Some(key) => is_attr_access(e, varname, key),
            None => is_var_access(e, varname),
        },
    }
}
