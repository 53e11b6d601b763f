//! from_mcp against `@modelcontextprotocol/server-everything` over stdio (Node 22): its
//! tools become operations with their schemas, types and titles; a call gives an `mcp`
//! envelope whose data is the structured content, else the content.

mod common;
mod mcp_common;

use envelope_ops::{Context, OperationType};
use mcp_common::{everything, load};
use serde_json::json;

#[tokio::test]
async fn tools_become_operations_with_schemas_types_and_titles() {
    let loaded = load(json!({"mcpServers": {"everything": everything()}})).await;
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let registry = &loaded.registry;
    let echo = registry.spec("everything.echo").expect("echo is listed");
    assert_eq!(echo.kind, OperationType::Query, "readOnlyHint: true");
    assert_eq!(echo.input_schema["properties"]["message"]["type"], "string");
    assert!(
        echo.output_schema.as_object().unwrap().is_empty(),
        "no outputSchema: unknown"
    );
    let weather = registry.spec("everything.get-structured-content").unwrap();
    assert_eq!(
        weather.title.as_deref(),
        Some("Get Structured Content Tool")
    );
    assert_eq!(
        weather.output_schema["properties"]["temperature"]["type"],
        "number"
    );
    let logging = registry
        .spec("everything.toggle-simulated-logging")
        .unwrap();
    assert_eq!(logging.kind, OperationType::Mutation, "readOnlyHint: false");
    assert!(registry.specs().all(|s| s.namespace == "everything"));
}

#[tokio::test]
async fn structured_content_is_the_data() {
    let loaded = load(json!({"mcpServers": {"everything": everything()}})).await;
    let done = loaded
        .registry
        .execute(
            "everything.get-structured-content",
            json!({"location": "Chicago"}),
            &Context::default(),
        )
        .await
        .unwrap();
    let env = &done.envelope;
    let expected = json!({"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82});
    assert_eq!(env["data"], expected);
    assert_eq!(env["meta"]["source"], "mcp");
    assert_eq!(env["meta"]["isError"], false);
    assert_eq!(env["meta"]["structuredContent"], expected);
    assert_eq!(env["meta"]["content"][0]["type"], "text");
    assert!(done.warnings.is_empty(), "{:?}", done.warnings);
    common::assert_valid_envelope(env);
}

#[tokio::test]
async fn without_structured_content_the_content_is_the_data() {
    let loaded = load(json!({"mcpServers": {"everything": everything()}})).await;
    let env = loaded
        .registry
        .execute(
            "everything.echo",
            json!({"message": "hi"}),
            &Context::default(),
        )
        .await
        .unwrap()
        .envelope;
    assert_eq!(env["data"], json!([{"type": "text", "text": "Echo: hi"}]));
    assert_eq!(env["data"], env["meta"]["content"]);
    assert!(env["meta"].get("structuredContent").is_none());
    common::assert_valid_envelope(&env);
}

#[tokio::test]
async fn input_is_validated_against_the_tool_schema_before_the_call() {
    let loaded = load(json!({"mcpServers": {"everything": everything()}})).await;
    let e = loaded
        .registry
        .execute(
            "everything.get-structured-content",
            json!({"location": "Paris"}),
            &Context::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, "VALIDATION_ERROR", "{e:?}");
    assert_eq!(e.details.unwrap()["findings"][0]["pointer"], "/location");
}

#[tokio::test]
async fn access_control_of_the_source_applies_to_each_operation() {
    let mut server = everything();
    server["accessControl"] = json!({"requiredScopes": ["tools"]});
    let loaded = load(json!({"mcpServers": {"everything": server}})).await;
    let input = json!({"message": "x"});
    let e = loaded
        .registry
        .execute("everything.echo", input.clone(), &Context::default())
        .await
        .unwrap_err();
    assert_eq!(e.code, "ACCESS_DENIED");
    let caller = envelope_ops::Identity {
        id: "t".into(),
        scopes: vec!["tools".into()],
        resources: None,
    };
    let ok = loaded
        .registry
        .execute(
            "everything.echo",
            input,
            &Context::default().with_identity(caller),
        )
        .await;
    assert!(ok.is_ok(), "{ok:?}");
}
