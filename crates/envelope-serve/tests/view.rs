//! The MCP view of a registry: tool names and their collisions, schemas, annotations,
//! access filtering, and results that validate against the advertised output schema.

use envelope_ops::{
    AccessControl, CallError, Context, HandlerError, Identity, OperationSpec, OperationType,
    Registry, handler_fn,
};
use envelope_serve::{ToolNames, call_result, tools};
use serde_json::{Value, json};

fn registry() -> Registry {
    let mut registry = Registry::new();
    let mut list = OperationSpec::new("files", "list.all", OperationType::Query);
    list.description = "Every file".into();
    list.output_schema = json!({"type": "array", "items": {"type": "string"}});
    registry
        .register(
            list,
            handler_fn(|_, _| async { Ok::<_, HandlerError>(json!(["a", "b"])) }),
        )
        .unwrap();
    let mut stat = OperationSpec::new("files", "stat", OperationType::Query);
    stat.input_schema =
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]});
    stat.output_schema = json!({"type": "object", "properties": {"size": {"type": "integer"}}, "required": ["size"]});
    registry
        .register(
            stat,
            handler_fn(|_, _| async { Ok::<_, HandlerError>(json!({"size": 3})) }),
        )
        .unwrap();
    let mut delete = OperationSpec::new("files", "delete", OperationType::Mutation);
    delete.access_control = AccessControl {
        required_scopes: vec!["files:write".into()],
        ..AccessControl::default()
    };
    registry
        .register(
            delete,
            handler_fn(|_, _| async { Ok::<_, HandlerError>(json!(null)) }),
        )
        .unwrap();
    registry
}

fn by_name(tools: &[Value]) -> std::collections::BTreeMap<String, Value> {
    tools
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_owned(), t.clone()))
        .collect()
}

#[test]
fn tools_carry_names_schemas_and_annotations_and_hide_what_the_caller_may_not_call() {
    let registry = registry();
    let anonymous = by_name(&tools(&registry, None));
    assert_eq!(
        anonymous.keys().collect::<Vec<_>>(),
        ["files_list_all", "files_stat"],
        "delete needs a scope"
    );
    let list = &anonymous["files_list_all"];
    assert_eq!(list["description"], "Every file");
    assert_eq!(list["annotations"]["readOnlyHint"], true);
    assert_eq!(
        list["outputSchema"]["properties"]["result"]["type"],
        "array"
    );
    assert_eq!(list["inputSchema"]["type"], "object");
    assert_eq!(
        anonymous["files_stat"]["outputSchema"]["required"],
        json!(["size"])
    );

    let writer = Identity {
        id: "w".into(),
        scopes: vec!["files:write".into()],
        resources: None,
    };
    let all = by_name(&tools(&registry, Some(&writer)));
    assert_eq!(all["files_delete"]["annotations"]["readOnlyHint"], false);
    assert!(
        all["files_delete"].get("outputSchema").is_none(),
        "unknown output: none advertised"
    );
    let names = ToolNames::new(
        registry
            .specs()
            .map(|s| s.id())
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str),
    )
    .unwrap();
    assert_eq!(names.id_of("files_list_all"), Some("files.list.all"));
}

#[tokio::test]
async fn every_result_validates_against_the_advertised_output_schema() {
    let registry = registry();
    let listed = by_name(&tools(&registry, None));
    for (tool, id, input) in [
        ("files_list_all", "files.list.all", json!({})),
        ("files_stat", "files.stat", json!({"path": "x"})),
    ] {
        let envelope = registry
            .execute(id, input, &Context::default())
            .await
            .map(|done| done.envelope);
        let result = call_result(envelope);
        assert_eq!(result["isError"], false);
        let schema = &listed[tool]["outputSchema"];
        let validator = jsonschema::validator_for(schema).unwrap();
        assert!(
            validator.is_valid(&result["structuredContent"]),
            "{tool}: {result}"
        );
        let mirrored: Value =
            serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(
            mirrored, result["structuredContent"],
            "the text block mirrors it"
        );
    }
}

#[test]
fn errors_and_mcp_envelopes_become_their_results() {
    let denied = call_result(Err(
        CallError::new("ACCESS_DENIED", "no").with_details(json!({"need": ["s"]}))
    ));
    assert_eq!(denied["isError"], true);
    let text: Value = serde_json::from_str(denied["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        text,
        json!({"code": "ACCESS_DENIED", "message": "no", "details": {"need": ["s"]}})
    );

    let mcp = json!({"data": [{"type": "text", "text": "boom"}],
        "meta": {"source": "mcp", "isError": true, "content": [{"type": "text", "text": "boom"}]}});
    let result = call_result(Ok(mcp));
    assert_eq!(
        result,
        json!({"content": [{"type": "text", "text": "boom"}], "isError": true})
    );
}
