//! The public API: loading, template selection, errors, request handling.

use llmsift_templates::{ChatTemplate, DateTime, RenderRequest, TemplateError, TemplateSet};
use serde_json::json;

fn user(text: &str) -> serde_json::Value {
    json!({"role": "user", "content": text})
}

fn render(source: &str, request: &RenderRequest) -> Result<String, TemplateError> {
    ChatTemplate::new(source)?.render(request)
}

#[test]
fn named_templates_are_picked_as_transformers_does() {
    let config = json!({
        "chat_template": [
            {"name": "default", "template": "D{{ messages|length }}"},
            {"name": "tool_use", "template": "T{{ tools|length }}"},
            {"name": "rag", "template": "R"}
        ],
        "bos_token": {"content": "<s>", "lstrip": false},
        "eos_token": "</s>"
    });
    let set = TemplateSet::from_tokenizer_config(&config.to_string()).unwrap();
    assert_eq!(set.names().collect::<Vec<_>>(), ["default", "tool_use", "rag"]);
    let plain = RenderRequest::new(vec![user("hi")]);
    assert_eq!(set.render(&plain).unwrap(), "D1");
    // Tools given, even an empty list, select "tool_use".
    assert_eq!(set.render(&plain.clone().with_tools(vec![])).unwrap(), "T0");
    assert_eq!(
        set.render(&plain.clone().with_tools(vec![json!({})]).with_template_name("default")).unwrap(),
        "D1"
    );
    assert_eq!(set.render(&plain.clone().with_template_name("rag")).unwrap(), "R");
    let missing = set.render(&plain.with_template_name("nope")).unwrap_err();
    assert!(matches!(missing, TemplateError::NotFound { requested: Some(ref n), .. } if n == "nope"));
    let default = set.select(None, false).unwrap();
    assert_eq!(default.bos_token(), Some("<s>"));
    assert_eq!(default.eos_token(), Some("</s>"));
}

#[test]
fn several_templates_without_default_need_a_name() {
    let config = json!({"chat_template": [{"name": "a", "template": "A"}, {"name": "b", "template": "B"}]});
    let set = TemplateSet::from_tokenizer_config(&config.to_string()).unwrap();
    let err = set.render(&RenderRequest::new(vec![user("hi")])).unwrap_err();
    assert!(matches!(err, TemplateError::NotFound { requested: None, .. }), "{err}");
    assert_eq!(set.render(&RenderRequest::new(vec![user("hi")]).with_template_name("b")).unwrap(), "B");
}

#[test]
fn a_broken_template_fails_only_when_selected() {
    let config = json!({"chat_template": [
        {"name": "default", "template": "ok"},
        {"name": "tool_use", "template": "{% if %}"}
    ]});
    let set = TemplateSet::from_tokenizer_config(&config.to_string()).unwrap();
    assert_eq!(set.render(&RenderRequest::new(vec![user("hi")])).unwrap(), "ok");
    let err = set.render(&RenderRequest::new(vec![user("hi")]).with_tools(vec![])).unwrap_err();
    assert!(matches!(err, TemplateError::Syntax(_)), "{err}");
}

#[test]
fn config_errors_are_typed() {
    assert!(matches!(TemplateSet::from_tokenizer_config("{"), Err(TemplateError::Config(_))));
    assert!(matches!(TemplateSet::from_tokenizer_config("{}"), Err(TemplateError::NotFound { .. })));
    assert!(matches!(
        TemplateSet::from_tokenizer_config(r#"{"chat_template": 3}"#),
        Err(TemplateError::Config(_))
    ));
    assert!(matches!(
        TemplateSet::from_tokenizer_config(r#"{"chat_template": "x", "bos_token": 1}"#),
        Err(TemplateError::Config(_))
    ));
    assert!(matches!(
        TemplateSet::from_tokenizer_config_file("/nonexistent/tokenizer_config.json"),
        Err(TemplateError::Io { .. })
    ));
}

#[test]
fn special_tokens_come_from_the_config_and_kwargs_override_them() {
    let config = json!({"chat_template": "{{ bos_token }}|{{ pad_token }}|{{ eos_token }}", "bos_token": "<s>",
                        "pad_token": {"content": "<pad>"}, "eos_token": "</s>"});
    let set = TemplateSet::from_tokenizer_config(&config.to_string()).unwrap();
    let request = RenderRequest::new(vec![user("hi")]);
    assert_eq!(set.render(&request).unwrap(), "<s>|<pad>|</s>");
    assert_eq!(set.render(&request.with_kwarg("eos_token", json!("<end>"))).unwrap(), "<s>|<pad>|<end>");
}

#[test]
fn raise_exception_is_reported_with_its_message() {
    let err = render(
        "{{ raise_exception('Only user and assistant roles!') }}",
        &RenderRequest::new(vec![user("x")]),
    )
    .unwrap_err();
    assert_eq!(err, TemplateError::Raised("Only user and assistant roles!".into()));
    let err = render(
        "{% macro m() %}{{ raise_exception('deep') }}{% endmacro %}{% for x in [1] %}{{ m() }}{% endfor %}",
        &RenderRequest::new(vec![user("x")]),
    )
    .unwrap_err();
    assert_eq!(err, TemplateError::Raised("deep".into()));
}

#[test]
fn syntax_and_render_errors_are_typed() {
    assert!(matches!(ChatTemplate::new("{% for %}"), Err(TemplateError::Syntax(_))));
    let err = render("{{ 'a' + 1 }}", &RenderRequest::new(vec![user("x")])).unwrap_err();
    assert!(matches!(err, TemplateError::Render(_)), "{err}");
}

#[test]
fn bad_requests_are_rejected() {
    let t = ChatTemplate::new("x").unwrap();
    assert!(matches!(t.render(&RenderRequest::new(vec![])), Err(TemplateError::Request(_))));
    assert!(matches!(t.render(&RenderRequest::new(vec![json!([1])])), Err(TemplateError::Request(_))));
    let shadowing = RenderRequest::new(vec![user("x")]).with_kwarg("add_generation_prompt", json!(true));
    assert!(matches!(t.render(&shadowing), Err(TemplateError::Request(_))));
}

#[test]
fn strftime_now_uses_the_pinned_date() {
    let request = RenderRequest::new(vec![user("x")]).with_now(DateTime::new(2024, 7, 26, 0, 0, 0).unwrap());
    assert_eq!(render("{{ strftime_now('%d %B %Y') }}", &request).unwrap(), "26 July 2024");
    // Unpinned: the current UTC date, in the same shape.
    let now = render("{{ strftime_now('%Y-%m-%d') }}", &RenderRequest::new(vec![user("x")])).unwrap();
    assert_eq!(now.len(), 10);
}

#[test]
fn messages_reach_the_template_normalised() {
    let request = RenderRequest::new(vec![json!({
        "role": "assistant",
        "content": null,
        "reasoning": "because",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"x\": [1, 2]}"}}]
    })]);
    let source = "{% set m = messages[0] %}{{ m.content is defined }}|{{ m.reasoning_content }}|{{ m.thinking }}|\
                  {{ m.reasoning }}|{% for k, v in m.tool_calls[0].function.arguments|items %}{{ k }}={{ v|tojson }}{% endfor %}";
    assert_eq!(render(source, &request).unwrap(), "False|because|because|because|x=[1, 2]");
}

#[test]
fn absent_tools_are_python_none() {
    let request = RenderRequest::new(vec![user("x")]);
    let source = "{{ tools is none }}|{{ tools is not none }}|{{ tools }}|{{ tools|tojson }}|{{ 'y' if tools else 'n' }}\
                  |{{ tools is defined }}|{{ documents is none }}|{{ tools|selectattr('x')|list }}";
    assert_eq!(render(source, &request).unwrap(), "True|False|None|null|n|True|True|[]");
    // Iterating None fails, as in Python.
    assert!(render("{% for t in tools %}{% endfor %}", &request).is_err());
    assert_eq!(
        render("{% for t in tools %}{{ t }}{% endfor %}", &request.with_tools(vec![json!(1)])).unwrap(),
        "1"
    );
}

#[test]
fn generation_blocks_render_their_body() {
    let request = RenderRequest::new(vec![user("x"), json!({"role": "assistant", "content": "y"})]);
    let source = "{% for m in messages %}{% if m.role == 'assistant' %}\n  {%- generation %}{{ m.content }}{% endgeneration %}\n{% else %}{{ m.content }}{% endif %}{% endfor %}";
    assert_eq!(render(source, &request).unwrap(), "xy");
}

#[test]
fn template_files_load() {
    let dir = std::env::temp_dir().join(format!("llmsift-templates-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("chat_template.jinja");
    std::fs::write(&path, "{{ messages[0].content }}\n").unwrap();
    let set = TemplateSet::from_template_file(&path).unwrap();
    assert_eq!(set.render(&RenderRequest::new(vec![user("hi")])).unwrap(), "hi");
    assert_eq!(ChatTemplate::from_file(&path).unwrap().source(), "{{ messages[0].content }}\n");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn templates_can_be_shared_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<ChatTemplate>();
    assert_send_sync::<TemplateSet>();
    assert_send_sync::<TemplateError>();
}
