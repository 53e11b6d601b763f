//! `execute`: look up, access, input validation, handler, wrap, output check, cast, errors.

mod common;
use common::{assert_valid_envelope, runtime};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use envelope_ops::{
    AccessControl, CallError, Context, ErrorSchema, HandlerError, Identity, OperationSpec,
    OperationType, Registry, handler_fn,
};
use serde_json::{Value, json};

fn echo_registry(spec: OperationSpec) -> Registry {
    let mut registry = Registry::new();
    registry
        .register(
            spec,
            handler_fn(|input: Value, _| async move { Ok::<_, HandlerError>(input) }),
        )
        .unwrap();
    registry
}

fn returning(result: Result<Value, HandlerError>) -> Registry {
    let result = Arc::new(std::sync::Mutex::new(Some(result)));
    let mut spec = OperationSpec::new("t", "op", OperationType::Mutation);
    spec.error_schemas.push(ErrorSchema {
        code: "QUOTA_EXCEEDED".into(),
        description: "too many calls".into(),
        schema: json!({}),
        http_status: Some(429),
    });
    let mut registry = Registry::new();
    registry
        .register(
            spec,
            handler_fn(move |_, _| {
                let result = result.lock().unwrap().take().unwrap();
                async move { result }
            }),
        )
        .unwrap();
    registry
}

fn run(
    registry: &Registry,
    id: &str,
    input: Value,
    ctx: &Context,
) -> Result<envelope_ops::Executed, CallError> {
    runtime().block_on(registry.execute(id, input, ctx))
}

#[test]
fn a_result_is_wrapped_in_a_valid_local_envelope() {
    let registry = echo_registry(OperationSpec::new("t", "echo", OperationType::Query));
    let before = envelope_ops::wrap::now_ms();
    let done = run(
        &registry,
        "t.echo",
        json!({"x": [1, 2]}),
        &Context::default(),
    )
    .unwrap();
    assert_eq!(done.envelope["data"], json!({"x": [1, 2]}));
    assert_eq!(done.envelope["meta"]["source"], "local");
    assert_eq!(done.envelope["meta"]["operationId"], "t.echo");
    let ts = done.envelope["meta"]["timestamp"].as_u64().unwrap();
    assert!(ts >= before && ts <= envelope_ops::wrap::now_ms());
    assert!(done.warnings.is_empty());
    assert_valid_envelope(&done.envelope);
}

#[test]
fn an_unknown_id_is_operation_not_found() {
    let registry = echo_registry(OperationSpec::new("t", "echo", OperationType::Query));
    let e = run(&registry, "t.nope", json!({}), &Context::default()).unwrap_err();
    assert_eq!(e.code, "OPERATION_NOT_FOUND");
    assert_eq!(e.details.unwrap()["operationId"], "t.nope");
}

#[test]
fn access_is_checked_on_every_call_and_no_identity_is_denied() {
    let mut spec = OperationSpec::new("t", "secret", OperationType::Query);
    spec.access_control = AccessControl {
        required_scopes: vec!["admin".into()],
        ..AccessControl::default()
    };
    let registry = echo_registry(spec);
    let e = run(&registry, "t.secret", json!({}), &Context::default()).unwrap_err();
    assert_eq!(e.code, "ACCESS_DENIED");
    let user = |scopes: &[&str]| {
        Context::default().with_identity(Identity {
            id: "u".into(),
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
            resources: None,
        })
    };
    assert_eq!(
        run(&registry, "t.secret", json!({}), &user(&["read"]))
            .unwrap_err()
            .code,
        "ACCESS_DENIED"
    );
    assert!(run(&registry, "t.secret", json!({}), &user(&["admin"])).is_ok());
}

#[test]
fn invalid_input_is_a_validation_error_with_every_finding_pointer() {
    let mut spec = OperationSpec::new("t", "add", OperationType::Query);
    spec.input_schema = json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}},
        "required": ["a", "b"]
    });
    let registry = echo_registry(spec);
    let e = run(
        &registry,
        "t.add",
        json!({"a": "one", "b": 2.5, "tags": ["x", 3]}),
        &Context::default(),
    )
    .unwrap_err();
    assert_eq!(e.code, "VALIDATION_ERROR");
    let findings = e.details.unwrap()["findings"].as_array().unwrap().clone();
    let mut pointers: Vec<&str> = findings
        .iter()
        .map(|f| f["pointer"].as_str().unwrap())
        .collect();
    pointers.sort();
    assert_eq!(pointers, ["/a", "/b", "/tags/1"]);
    assert!(
        findings
            .iter()
            .all(|f| !f["message"].as_str().unwrap().is_empty())
    );
}

#[test]
fn output_that_misses_its_schema_is_a_warning_and_is_cast() {
    let mut spec = OperationSpec::new("t", "echo", OperationType::Query);
    spec.output_schema = json!({
        "type": "object",
        "properties": {"count": {"type": "integer"}, "items": {"type": "array", "maxItems": 2}},
        "required": ["count", "items"]
    });
    let registry = echo_registry(spec.clone());
    let done = run(
        &registry,
        "t.echo",
        json!({"count": "3", "items": [1, 2, 3], "other": 1}),
        &Context::default(),
    )
    .unwrap();
    assert_eq!(done.envelope["data"], json!({"count": 0, "items": [1, 2]}));
    assert!(!done.warnings.is_empty());
    assert!(
        done.warnings.iter().any(|w| w.contains("/count")),
        "{:?}",
        done.warnings
    );
    assert!(jsonschema::is_valid(
        &spec.output_schema,
        &done.envelope["data"]
    ));
    assert_valid_envelope(&done.envelope);
    // Output that matches is neither warned about nor touched (extra members kept).
    let done = run(
        &registry,
        "t.echo",
        json!({"count": 1, "items": [], "other": 1}),
        &Context::default(),
    )
    .unwrap();
    assert_eq!(
        done.envelope["data"],
        json!({"count": 1, "items": [], "other": 1})
    );
    assert!(done.warnings.is_empty());
}

#[test]
fn a_handler_envelope_passes_through_untouched() {
    let http = json!({"data": {"id": 1}, "meta": {"source": "http", "statusCode": 201, "headers": {"x-a": "1"}, "contentType": "application/json"}});
    let mut spec = OperationSpec::new("t", "echo", OperationType::Query);
    spec.output_schema = json!({"type": "object", "required": ["name"]});
    let registry = echo_registry(spec);
    let done = run(&registry, "t.echo", http.clone(), &Context::default()).unwrap();
    assert_eq!(done.envelope, http, "not cast, not rewrapped");
    assert!(
        done.warnings.iter().any(|w| w.contains("name")),
        "{:?}",
        done.warnings
    );
    // An MCP result with isError is an envelope too, not an error.
    let mcp = json!({"data": [{"type": "text", "text": "boom"}], "meta": {"source": "mcp", "isError": true, "content": [{"type": "text", "text": "boom"}]}});
    let done = run(&registry, "t.echo", mcp.clone(), &Context::default()).unwrap();
    assert_eq!(done.envelope, mcp);
    assert_valid_envelope(&done.envelope);
}

#[test]
fn handler_errors_map_to_the_spec_codes() {
    let e = run(
        &returning(Err(HandlerError::Failed(
            "rate limit: QUOTA_EXCEEDED".into(),
        ))),
        "t.op",
        json!({}),
        &Context::default(),
    )
    .unwrap_err();
    assert_eq!(
        (e.code.as_str(), e.message.as_str()),
        ("QUOTA_EXCEEDED", "rate limit: QUOTA_EXCEEDED")
    );
    let e = run(
        &returning(Err(HandlerError::Failed("disk full".into()))),
        "t.op",
        json!({}),
        &Context::default(),
    )
    .unwrap_err();
    assert_eq!(e.code, "EXECUTION_ERROR");
    let e = run(
        &returning(Err(HandlerError::Raw(json!(42)))),
        "t.op",
        json!({}),
        &Context::default(),
    )
    .unwrap_err();
    assert_eq!(e.code, "UNKNOWN_ERROR");
    assert_eq!(e.details.unwrap(), json!({"raw": 42}));
    let own = CallError::new("ABORTED", "stopped").with_details(json!({"why": "test"}));
    let e = run(
        &returning(Err(HandlerError::Call(own.clone()))),
        "t.op",
        json!({}),
        &Context::default(),
    )
    .unwrap_err();
    assert_eq!(e, own);
}

#[test]
fn a_deadline_stops_the_handler_with_timeout() {
    let finished = Arc::new(AtomicBool::new(false));
    let flag = finished.clone();
    let mut registry = Registry::new();
    registry
        .register(
            OperationSpec::new("t", "slow", OperationType::Query),
            handler_fn(move |_, _| {
                let flag = flag.clone();
                async move {
                    tokio::time::sleep(Duration::from_millis(600)).await;
                    flag.store(true, Ordering::SeqCst);
                    Ok::<_, HandlerError>(json!(1))
                }
            }),
        )
        .unwrap();
    let rt = runtime();
    let started = Instant::now();
    let ctx = Context::default().with_deadline(Instant::now() + Duration::from_millis(50));
    let e = rt
        .block_on(registry.execute("t.slow", json!({}), &ctx))
        .unwrap_err();
    assert_eq!(e.code, "TIMEOUT");
    assert!(started.elapsed() < Duration::from_millis(500));
    // The handler was dropped: it never finishes, even given the time.
    rt.block_on(async { tokio::time::sleep(Duration::from_millis(700)).await });
    assert!(!finished.load(Ordering::SeqCst));
}

#[test]
fn a_subscription_is_not_executed() {
    let registry = echo_registry(OperationSpec::new(
        "t",
        "events",
        OperationType::Subscription,
    ));
    let e = run(&registry, "t.events", json!({}), &Context::default()).unwrap_err();
    assert_eq!(e.code, "EXECUTION_ERROR");
    assert!(e.message.contains("subscription"));
}

#[test]
fn bad_operations_are_refused_at_registration() {
    let ok = || handler_fn(|v: Value, _| async move { Ok::<_, HandlerError>(v) });
    let mut registry = Registry::new();
    let mut bad_schema = OperationSpec::new("t", "a", OperationType::Query);
    bad_schema.input_schema = json!({"type": "no-such-type"});
    let e = registry.register(bad_schema, ok()).unwrap_err();
    assert_eq!(e.code(), "registry.operation");
    assert!(e.to_string().contains("inputSchema"), "{e}");
    let e = registry
        .register(OperationSpec::new("a.b", "c", OperationType::Query), ok())
        .unwrap_err();
    assert!(e.to_string().contains("'.'"), "{e}");
    registry
        .register(OperationSpec::new("t", "a", OperationType::Query), ok())
        .unwrap();
    let e = registry
        .register(OperationSpec::new("t", "a", OperationType::Query), ok())
        .unwrap_err();
    assert_eq!(e.code(), "registry.duplicate");
    assert_eq!(registry.len(), 1);
}

/// Issue 29: a deferred operation is built when first needed and only then: a call builds
/// the one called; `visit_specs` builds the others for a look and keeps none; `specs`
/// keeps what it builds; a loader's error is the call's, never a panic.
#[test]
fn deferred_operations_are_built_once_when_needed_and_a_listing_keeps_none() {
    let built = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut registry = Registry::new();
    for name in ["a", "b", "c", "broken"] {
        let built = built.clone();
        registry
            .register_deferred(
                "lazy",
                name,
                Box::new(move || {
                    built.fetch_add(1, Ordering::SeqCst);
                    if name == "broken" {
                        return Err("the entry is damaged".into());
                    }
                    let mut spec = OperationSpec::new("lazy", name, OperationType::Query);
                    spec.input_schema = json!({"type": "object", "required": ["n"]});
                    let handler = handler_fn(|input: Value, _| async move {
                        Ok::<_, HandlerError>(input["n"].clone())
                    });
                    Ok((spec, handler))
                }),
            )
            .unwrap();
    }
    let count = || built.load(Ordering::SeqCst);
    assert_eq!(registry.len(), 4);
    assert_eq!(registry.ids().count(), 4);
    assert_eq!(count(), 0, "registering builds nothing");
    let done = run(&registry, "lazy.b", json!({"n": 7}), &Context::default()).unwrap();
    assert_eq!(done.envelope["data"], 7);
    let refused = run(&registry, "lazy.b", json!({}), &Context::default()).unwrap_err();
    assert_eq!(refused.code, "VALIDATION_ERROR");
    assert_eq!(count(), 1, "a call builds the operation it calls, once");
    // A look at every spec: the three others built for it and dropped.
    let mut seen = Vec::new();
    let failed = registry.visit_specs(|spec| {
        seen.push(spec.id());
        true
    });
    assert_eq!(seen, ["lazy.a", "lazy.b", "lazy.c"]);
    assert_eq!(failed.len(), 1);
    assert!(
        failed[0].starts_with("lazy.broken: the entry is damaged"),
        "{failed:?}"
    );
    assert_eq!(count(), 4);
    registry.visit_specs(|_| true);
    assert_eq!(count(), 7, "a listing keeps nothing it built");
    // Stopping early builds no more.
    registry.visit_specs(|_| false);
    assert_eq!(count(), 8);
    // `specs` keeps what it builds (a failed build is kept as failed).
    assert_eq!(registry.specs().count(), 3);
    assert_eq!(registry.specs().count(), 3);
    assert_eq!(count(), 11);
    let e = run(
        &registry,
        "lazy.broken",
        json!({"n": 1}),
        &Context::default(),
    )
    .unwrap_err();
    assert_eq!(e.code, "EXECUTION_ERROR");
    assert!(
        e.message
            .contains("could not be loaded: the entry is damaged"),
        "{}",
        e.message
    );
    assert_eq!(count(), 11);
    // A loader that gives another id is refused, not registered under the wrong name.
    let mut registry = Registry::new();
    registry
        .register_deferred(
            "x",
            "one",
            Box::new(|| {
                let handler =
                    handler_fn(|_: Value, _| async move { Ok::<_, HandlerError>(json!(1)) });
                Ok((
                    OperationSpec::new("x", "two", OperationType::Query),
                    handler,
                ))
            }),
        )
        .unwrap();
    let e = run(&registry, "x.one", json!({}), &Context::default()).unwrap_err();
    assert!(e.message.contains("x.two"), "{}", e.message);
    assert!(registry.spec("x.one").is_none());
}
