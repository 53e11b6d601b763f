//! `subscribe`: the same admission as `execute`, then one envelope per item, an error as the
//! last item, any operation as a stream.

mod common;
use common::{assert_valid_envelope, runtime};

use envelope_ops::{
    AccessControl, Context, HandlerError, OperationSpec, OperationType, Registry, codes,
    handler_fn, subscription_fn,
};
use futures::StreamExt;
use serde_json::{Value, json};

/// `count.up`: yields `{n: 0..input.n}`; after `input.fail_at` items, an error (and then
/// more items, which must never be seen).
fn counter(spec: OperationSpec) -> Registry {
    let mut registry = Registry::new();
    registry
        .register(
            spec,
            subscription_fn(|input: Value, _| {
                let n = input["n"].as_u64().unwrap_or(0);
                let fail_at = input["fail_at"].as_u64();
                futures::stream::iter((0..n).map(move |i| match fail_at {
                    Some(at) if i == at => Err(HandlerError::Failed(format!("broke at {i}"))),
                    _ => Ok(json!({ "n": i })),
                }))
            }),
        )
        .unwrap();
    registry
}

fn counter_spec() -> OperationSpec {
    let mut spec = OperationSpec::new("count", "up", OperationType::Subscription);
    spec.input_schema = json!({
        "type": "object",
        "properties": { "n": { "type": "integer" }, "fail_at": { "type": "integer" } },
        "required": ["n"]
    });
    spec
}

#[test]
fn each_item_is_a_valid_envelope_of_its_own() {
    let registry = counter(counter_spec());
    let context = Context::default();
    let items: Vec<_> = runtime().block_on(
        registry
            .subscribe("count.up", json!({"n": 4}), &context)
            .unwrap()
            .collect(),
    );
    assert_eq!(items.len(), 4);
    for (i, item) in items.into_iter().enumerate() {
        let env = item.unwrap().envelope;
        assert_valid_envelope(&env);
        assert_eq!(env["data"], json!({ "n": i }));
        assert_eq!(env["meta"]["operationId"], "count.up");
        assert_eq!(env["meta"]["source"], "local");
    }
}

#[test]
fn items_are_cast_to_the_output_schema() {
    let mut spec = counter_spec();
    spec.output_schema = json!({
        "type": "object",
        "properties": { "n": { "type": "string" } },
        "required": ["n"]
    });
    let registry = counter(spec);
    let context = Context::default();
    let first = runtime()
        .block_on(
            registry
                .subscribe("count.up", json!({"n": 1}), &context)
                .unwrap()
                .next(),
        )
        .unwrap()
        .unwrap();
    // Cast never converts between types: the number is replaced by the created string.
    assert_eq!(first.envelope["data"], json!({"n": ""}));
    assert!(!first.warnings.is_empty(), "the mismatch is warned about");
}

#[test]
fn an_error_is_the_last_item() {
    let registry = counter(counter_spec());
    let context = Context::default();
    let items: Vec<_> = runtime().block_on(
        registry
            .subscribe("count.up", json!({"n": 10, "fail_at": 2}), &context)
            .unwrap()
            .collect(),
    );
    assert_eq!(items.len(), 3, "two items, then the error, then nothing");
    assert!(items[0].is_ok() && items[1].is_ok());
    let error = items[2].as_ref().unwrap_err();
    assert_eq!(error.code, codes::EXECUTION_ERROR);
    assert!(error.message.contains("broke at 2"), "{}", error.message);
}

#[test]
fn admission_is_refused_before_any_item() {
    let mut spec = counter_spec();
    spec.access_control = AccessControl {
        required_scopes: vec!["clock:read".into()],
        ..AccessControl::default()
    };
    let registry = counter(spec);
    let context = Context::default();
    let denied = registry
        .subscribe("count.up", json!({"n": 1}), &context)
        .err()
        .unwrap();
    assert_eq!(denied.code, codes::ACCESS_DENIED);
    let missing = registry
        .subscribe("count.down", json!({"n": 1}), &context)
        .err()
        .unwrap();
    assert_eq!(missing.code, codes::OPERATION_NOT_FOUND);

    let registry = counter(counter_spec());
    let invalid = registry
        .subscribe("count.up", json!({"n": "three"}), &context)
        .err()
        .unwrap();
    assert_eq!(invalid.code, codes::VALIDATION_ERROR);
}

#[test]
fn a_query_subscribed_to_yields_its_one_result() {
    let mut registry = Registry::new();
    registry
        .register(
            OperationSpec::new("math", "double", OperationType::Query),
            handler_fn(|input: Value, _| async move {
                Ok::<_, HandlerError>(json!(input["n"].as_i64().unwrap_or(0) * 2))
            }),
        )
        .unwrap();
    let context = Context::default();
    let items: Vec<_> = runtime().block_on(
        registry
            .subscribe("math.double", json!({"n": 21}), &context)
            .unwrap()
            .collect(),
    );
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].as_ref().unwrap().envelope["data"], 42);
}

#[test]
fn a_subscription_executed_as_a_call_is_refused() {
    let registry = counter(counter_spec());
    let e = runtime()
        .block_on(registry.execute("count.up", json!({"n": 1}), &Context::default()))
        .unwrap_err();
    assert_eq!(e.code, codes::EXECUTION_ERROR);
    assert!(e.message.contains("subscribe"), "{}", e.message);
}
