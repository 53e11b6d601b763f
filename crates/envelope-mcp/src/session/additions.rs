//! The proxy's own additions merged into the upstream's answers: the `resources` and
//! `tools` capabilities in `initialize` (and in `server/discover`, its stateless
//! counterpart from 2026-07-28), the `envelope_read` tool in `tools/list`, the artifact
//! template in `resources/templates/list`.
//!
//! These answers are small; they are read as values (key order kept, unknown fields kept)
//! and written back compact.

use serde_json::{Map, Value};

use crate::catalog::tools::{LIST_TOOL, SEARCH_TOOL};
use crate::drill;
use crate::shaping::{self, ToolSettings};

/// What the `initialize` answer says.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Initialized {
    /// The negotiated `protocolVersion`.
    pub revision: Option<String>,
    /// Whether the upstream itself offers resources (else the proxy answers the resource
    /// lists alone).
    pub upstream_has_resources: bool,
}

/// The `initialize` result with the `resources` and `tools` capabilities added where the
/// upstream has none. `None` when the result is not an object (relayed as it is).
pub fn initialize(result: &[u8]) -> Option<(Vec<u8>, Initialized)> {
    let mut value: Value = serde_json::from_slice(result).ok()?;
    let object = value.as_object_mut()?;
    let revision = object
        .get("protocolVersion")
        .and_then(Value::as_str)
        .map(str::to_string);
    let upstream_has_resources = add_capabilities(object)?;
    let info = Initialized {
        revision,
        upstream_has_resources,
    };
    Some((serde_json::to_vec(&value).ok()?, info))
}

/// The `server/discover` result (2026-07-28: `supportedVersions`, `capabilities`,
/// `serverInfo`, `instructions?`, cache hints) with the capabilities added as in
/// [`initialize`]; every other member kept. Also whether the upstream itself offers
/// resources. `None` when the result is not an object.
pub fn discover(result: &[u8]) -> Option<(Vec<u8>, bool)> {
    let mut value: Value = serde_json::from_slice(result).ok()?;
    let upstream_has_resources = add_capabilities(value.as_object_mut()?)?;
    Some((serde_json::to_vec(&value).ok()?, upstream_has_resources))
}

/// Adds the `resources` and `tools` capabilities a result's `capabilities` lacks (creating
/// it when absent); returns whether `resources` was there already. `None` when
/// `capabilities` is not an object.
fn add_capabilities(result: &mut Map<String, Value>) -> Option<bool> {
    let capabilities = result
        .entry("capabilities")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()?;
    let upstream_has_resources = capabilities.contains_key("resources");
    for name in ["resources", "tools"] {
        capabilities
            .entry(name)
            .or_insert_with(|| Value::Object(Map::new()));
    }
    Some(upstream_has_resources)
}

/// A tool as the client saw it: its name and `outputSchema`.
pub type SeenTool = (String, Option<Value>);

/// The `tools/list` result with each tool as shaping advertises it and, on the last page
/// (no `nextCursor`), the `envelope_read` tool appended (and, with a `catalog`,
/// `envelope_search` and `envelope_list`). An upstream tool of a name the proxy offers is
/// hidden: the proxy answers calls to it. Also returns every tool as the client sees it.
pub fn tools_list(
    result: &[u8],
    settings_of: impl Fn(&str) -> ToolSettings,
    catalog: bool,
) -> Option<(Vec<u8>, Vec<SeenTool>)> {
    let mut value: Value = serde_json::from_slice(result).ok()?;
    let object = value.as_object_mut()?;
    let last_page = object.get("nextCursor").is_none_or(Value::is_null);
    let tools = object.get_mut("tools")?.as_array_mut()?;
    tools.retain(|tool| {
        let name = tool.get("name").and_then(Value::as_str);
        // The catalog's names are the proxy's only when it offers them.
        name != Some(READ_TOOL) && !(catalog && matches!(name, Some(SEARCH_TOOL | LIST_TOOL)))
    });
    let mut seen = Vec::with_capacity(tools.len());
    for tool in tools.iter_mut() {
        let Some(name) = tool.get("name").and_then(Value::as_str).map(str::to_string) else {
            continue;
        };
        if let Some(advertised) = shaping::advertised_tool(tool, &settings_of(&name)) {
            *tool = advertised;
        }
        seen.push((name, tool.get("outputSchema").cloned()));
    }
    if last_page {
        tools.push(drill::read_tool());
        if catalog {
            tools.push(crate::catalog::tools::search_tool());
            tools.push(crate::catalog::tools::list_tool());
        }
    }
    Some((serde_json::to_vec(&value).ok()?, seen))
}

/// The name of the proxy's own tool.
pub const READ_TOOL: &str = "envelope_read";

/// The `resources/templates/list` result with the artifact template appended on the last
/// page.
pub fn templates_list(result: &[u8]) -> Option<Vec<u8>> {
    let mut value: Value = serde_json::from_slice(result).ok()?;
    let object = value.as_object_mut()?;
    if object.get("nextCursor").is_some_and(|c| !c.is_null()) {
        return None;
    }
    object
        .entry("resourceTemplates")
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()?
        .push(drill::resource_template());
    serde_json::to_vec(&value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(_: &str) -> ToolSettings {
        ToolSettings {
            limit: 100,
            tokens: None,
            redact: true,
            pass_through: false,
            emit: None,
            channels: Default::default(),
        }
    }

    #[test]
    fn capabilities_are_added_and_unknown_fields_kept() {
        let result = br#"{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true},"zz":1},"serverInfo":{"name":"s"},"future":[1]}"#;
        let (bytes, info) = initialize(result).unwrap();
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            r#"{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true},"zz":1,"resources":{}},"serverInfo":{"name":"s"},"future":[1]}"#
        );
        assert_eq!(info.revision.as_deref(), Some("2025-06-18"));
        assert!(!info.upstream_has_resources);
        let (_, info) =
            initialize(br#"{"capabilities":{"resources":{"subscribe":true}}}"#).unwrap();
        assert!(info.upstream_has_resources);
        assert!(initialize(b"[1]").is_none());
    }

    #[test]
    fn discover_gains_the_capabilities_and_keeps_the_rest() {
        let result = br#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"prompts":{}},"serverInfo":{"name":"s","version":"1"},"ttlMs":1000,"cacheScope":"public"}"#;
        let (bytes, has_resources) = discover(result).unwrap();
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"prompts":{},"resources":{},"tools":{}},"serverInfo":{"name":"s","version":"1"},"ttlMs":1000,"cacheScope":"public"}"#
        );
        assert!(!has_resources);
        let (bytes, has_resources) =
            discover(br#"{"capabilities":{"resources":{"x":1}}}"#).unwrap();
        assert!(has_resources);
        assert_eq!(
            bytes,
            br#"{"capabilities":{"resources":{"x":1},"tools":{}}}"#
        );
        // No capabilities at all: added; capabilities that are not an object: as it is.
        let (bytes, _) = discover(br#"{"supportedVersions":[]}"#).unwrap();
        assert_eq!(
            bytes,
            br#"{"supportedVersions":[],"capabilities":{"resources":{},"tools":{}}}"#
        );
        assert!(discover(br#"{"capabilities":7}"#).is_none());
        assert!(discover(b"null").is_none());
    }

    #[test]
    fn read_tool_goes_on_the_last_page_only() {
        let page = br#"{"tools":[{"name":"a","inputSchema":{},"outputSchema":{"type":"object"}},{"name":"envelope_read"}],"nextCursor":"p2"}"#;
        let (bytes, seen) = tools_list(page, settings, false).unwrap();
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(value["tools"].as_array().unwrap().len(), 1);
        assert_eq!(
            seen,
            vec![("a".to_string(), Some(serde_json::json!({"type":"object"})))]
        );
        let (bytes, _) = tools_list(br#"{"tools":[{"name":"b"}]}"#, settings, false).unwrap();
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(value["tools"][1]["name"], READ_TOOL);
        assert_eq!(value["tools"].as_array().unwrap().len(), 2);
        // With a catalog, search and list follow; an upstream tool of their names is hidden.
        let page = br#"{"tools":[{"name":"b"},{"name":"envelope_search"}]}"#;
        let (bytes, _) = tools_list(page, settings, true).unwrap();
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        let names: Vec<&str> = value["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["b", READ_TOOL, SEARCH_TOOL, LIST_TOOL]);
        // Without one, the upstream's tool of that name is the upstream's.
        let (bytes, _) = tools_list(page, settings, false).unwrap();
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(value["tools"][1]["name"], SEARCH_TOOL);
        assert_eq!(value["tools"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn template_is_appended() {
        let bytes =
            templates_list(br#"{"resourceTemplates":[{"uriTemplate":"x://{a}"}]}"#).unwrap();
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(value["resourceTemplates"].as_array().unwrap().len(), 2);
        assert!(templates_list(br#"{"resourceTemplates":[],"nextCursor":"n"}"#).is_none());
    }
}
