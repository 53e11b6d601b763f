//! From a resolved document to operations: one per path and method, with its name, type,
//! input and output schemas, and what the request needs (where each parameter goes, how it
//! is serialised, the body, the media types to accept).

use crate::error::TextError;
use serde_json::{Map, Value, json};

use super::body::{Body, BodyKind};
use super::document::Version;
use super::media::{is_event_stream, is_json};
use super::relax::normalised;
use super::style::Style;
use crate::spec::{OperationSpec, OperationType};

/// The HTTP methods an operation may have, in the order they are read.
const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Where a parameter goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum In {
    /// In the path template.
    Path,
    /// In the query string.
    Query,
    /// A request header.
    Header,
    /// In the `Cookie` header.
    Cookie,
}

impl In {
    fn parse(s: &str) -> Option<In> {
        Some(match s {
            "path" => In::Path,
            "query" => In::Query,
            "header" => In::Header,
            "cookie" => In::Cookie,
            _ => return None,
        })
    }

    /// Its spelling in the document (and in a prefixed input key, `header.X`).
    pub fn as_str(self) -> &'static str {
        match self {
            In::Path => "path",
            In::Query => "query",
            In::Header => "header",
            In::Cookie => "cookie",
        }
    }
}

/// One parameter of an endpoint.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Param {
    /// Its name in the request.
    pub name: String,
    /// Its key in the operation's input: the name, or `<in>.<name>` when the name is used
    /// twice or is `body`.
    pub key: String,
    /// Where it goes.
    pub location: In,
    /// How it is written.
    pub style: Style,
    /// Whether arrays and objects are exploded.
    pub explode: bool,
    /// Query values may keep reserved characters.
    pub allow_reserved: bool,
}

/// What an operation's request needs.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Endpoint {
    /// The method, upper case.
    pub method: String,
    /// The path template (`/pet/{petId}`).
    pub path: String,
    /// Its parameters.
    pub params: Vec<Param>,
    /// The request body, when the operation takes one (its media type, how it is written).
    pub body: Option<Body>,
    /// The media types of its success responses: JSON first, then the others.
    pub accept: Vec<String>,
    /// A `text/event-stream` success response: a subscription.
    pub streaming: bool,
    /// A streaming operation whose success responses offer other types too (JSON beside
    /// the event stream): it can also be called once, asking for those.
    pub answers_once: bool,
    /// The operation's own server (its `servers`, else its path item's), variables
    /// replaced by their defaults; as the document writes it until the source resolves it
    /// to an absolute URL. `None`: the source's base URL.
    pub server: Option<String>,
    /// An operation of `envelope serve`'s HTTP view (`x-envelope-input: "body"`): the whole
    /// input is the body, a success is an operations envelope (passed on as it is), an
    /// error is a `{code, message, details}` CallError (its code kept).
    pub envelope_api: bool,
}

/// The operations of `doc` (local refs resolved) in namespace `ns`, each with its endpoint.
/// With `keep_ids`, an `operationId` of the form `namespace.name` is the operation's id as
/// it is (the source's namespace is not added). A path item or operation that is not an
/// object, or a parameter without a name or a known `in`, is an error naming its place.
pub fn operations(
    doc: &Value,
    ns: &str,
    version: Version,
    keep_ids: bool,
) -> Result<Vec<(OperationSpec, Endpoint)>, TextError> {
    let api_version = doc["info"]["version"].as_str().unwrap_or("").to_owned();
    let mut out = Vec::new();
    let Some(paths) = doc.get("paths").and_then(Value::as_object) else {
        return Ok(out);
    };
    for (path, item) in paths {
        let Some(item) = item.as_object() else {
            return Err(format!("paths.{path} is not an object").into());
        };
        let shared = item.get("parameters").cloned().unwrap_or(json!([]));
        for method in METHODS {
            let Some(op) = item.get(method) else { continue };
            let at = format!("paths.{path}.{method}");
            let Some(op) = op.as_object() else {
                return Err(format!("{at} is not an object").into());
            };
            let mut operation = operation(
                ns,
                path,
                method,
                op,
                &shared,
                &api_version,
                version,
                keep_ids,
                &at,
            )?;
            // Operation-level servers override the path item's, which override the
            // document's.
            operation.1.server = op
                .get("servers")
                .and_then(server_url)
                .or_else(|| item.get("servers").and_then(server_url));
            out.push(operation);
        }
    }
    // Two operations the document names alike (two paths without `operationId` that
    // derive one name, an `operationId` used twice): the later ones (in document order)
    // end with `_` and a short hash of their method and path, so that none is dropped and
    // the same document gives the same names every time.
    let mut seen = std::collections::HashSet::new();
    for (spec, endpoint) in &mut out {
        if !seen.insert(spec.id()) {
            let place = format!("{} {}", endpoint.method, endpoint.path);
            let hash = envelope_store::Digest::of(place.as_bytes()).hex();
            spec.name = format!("{}_{}", spec.name, &hash[..8]);
            seen.insert(spec.id());
        }
    }
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
fn operation(
    ns: &str,
    path: &str,
    method: &str,
    op: &Map<String, Value>,
    shared: &Value,
    api_version: &str,
    version: Version,
    keep_ids: bool,
    at: &str,
) -> Result<(OperationSpec, Endpoint), String> {
    let operation_id = op.get("operationId").and_then(Value::as_str);
    let (ns, operation_id) = match operation_id.and_then(|id| id.split_once('.')) {
        Some((namespace, name)) if keep_ids && !namespace.is_empty() && !name.is_empty() => {
            (namespace, Some(name))
        }
        _ => (ns, operation_id),
    };
    let name = operation_id
        .map(str::to_owned)
        .unwrap_or_else(|| derived_name(method, path));
    let raw = merged_params(shared, op.get("parameters"), at)?;
    let params = keyed(&raw);

    let mut properties = Map::new();
    let mut required = Vec::new();
    for ((param, doc), key) in raw.iter().zip(&params) {
        let mut schema = param_schema(doc, version);
        refuse_unsendable(&mut schema, param.location, doc);
        if let Some(text) = doc.get("description").and_then(Value::as_str)
            && let Some(object) = schema.as_object_mut()
        {
            object
                .entry("description")
                .or_insert_with(|| Value::from(text));
        }
        properties.insert(key.key.clone(), schema);
        if param.required {
            required.push(Value::from(key.key.clone()));
        }
    }
    let body = op
        .get("requestBody")
        .and_then(Value::as_object)
        .and_then(|request| super::body::derive(request, &mut properties, &mut required, version));
    // `envelope serve`'s operations: the body is the whole input, the answer an envelope.
    let envelope_api = op.get("x-envelope-input").and_then(Value::as_str) == Some("body")
        && raw.is_empty()
        && body.as_ref().is_some_and(|b| b.kind == BodyKind::Json);
    let input_schema = if envelope_api {
        properties.remove("body").unwrap_or(json!({}))
    } else {
        let mut input_schema = json!({"type": "object", "properties": properties});
        if !required.is_empty() {
            input_schema["required"] = Value::Array(required);
        }
        input_schema
    };

    let (mut output_schema, accept, streaming) = success(op, version);
    // `data` is `anyOf [output, Offloaded]` in serve's documents: the output is the first.
    if envelope_api {
        let data = output_schema.pointer("/properties/data");
        if let Some(data) = data.and_then(|d| d.pointer("/anyOf/0")).or(data) {
            output_schema = data.clone();
        }
    }
    let declared = op
        .get("x-envelope-type")
        .and_then(Value::as_str)
        .and_then(|t| serde_json::from_value::<OperationType>(Value::from(t)).ok());
    let kind = match (declared, streaming, method) {
        (Some(kind), _, _) => kind,
        (None, true, _) => OperationType::Subscription,
        (None, false, "get") => OperationType::Query,
        _ => OperationType::Mutation,
    };
    let mut spec = OperationSpec::new(ns, &name, kind);
    spec.version = api_version.to_owned();
    spec.title = op.get("summary").and_then(Value::as_str).map(str::to_owned);
    spec.description = op
        .get("description")
        .or_else(|| op.get("summary"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    spec.tags = op
        .get("tags")
        .and_then(Value::as_array)
        .map(|t| {
            t.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    spec.input_schema = input_schema;
    spec.output_schema = output_schema;
    let answers_once = streaming && accept.iter().any(|t| !is_event_stream(t));
    let endpoint = Endpoint {
        method: method.to_ascii_uppercase(),
        path: path.to_owned(),
        params: params.into_iter().map(|k| k.param).collect(),
        body,
        accept,
        streaming,
        answers_once,
        server: None,
        envelope_api,
    };
    Ok((spec, endpoint))
}

/// The URL of the first server of a `servers` list, each `{variable}` replaced by its
/// `default` (`{origin}` → `https://uploads.github.com`); `None` for an empty list.
///
/// ```
/// use envelope_ops::openapi::derive::server_url;
/// let servers = serde_json::json!([{"url": "{origin}/v{v}", "variables": {
///     "origin": {"default": "https://uploads.example.com"}, "v": {"default": "2"}}}]);
/// assert_eq!(server_url(&servers).as_deref(), Some("https://uploads.example.com/v2"));
/// ```
pub fn server_url(servers: &Value) -> Option<String> {
    let server = servers.as_array()?.first()?;
    let mut url = server.get("url")?.as_str()?.to_owned();
    if let Some(variables) = server.get("variables").and_then(Value::as_object) {
        for (name, variable) in variables {
            if let Some(default) = variable.get("default").and_then(Value::as_str) {
                url = url.replace(&format!("{{{name}}}"), default);
            }
        }
    }
    Some(url)
}

/// `<method>_<path parts without parameters, joined by _>`, `root` for `/`.
///
/// ```
/// use envelope_ops::openapi::derive::derived_name;
/// assert_eq!(derived_name("get", "/pet/{petId}/uploadImage"), "get_pet_uploadImage");
/// assert_eq!(derived_name("post", "/"), "post_root");
/// assert_eq!(derived_name("get", "/v1/models?beta=true"), "get_v1_models");
/// ```
pub fn derived_name(method: &str, path: &str) -> String {
    // A query the path carries (`/v1/models?beta=true`) is not part of the name.
    let path = path.split('?').next().unwrap_or(path);
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && !p.starts_with('{'))
        .collect();
    let rest = if parts.is_empty() {
        "root".to_owned()
    } else {
        parts.join("_")
    };
    format!("{method}_{rest}")
}

struct RawParam {
    name: String,
    location: In,
    required: bool,
}

/// The path item's parameters overridden by the operation's (same name and `in`).
fn merged_params(
    shared: &Value,
    own: Option<&Value>,
    at: &str,
) -> Result<Vec<(RawParam, Value)>, String> {
    let mut out: Vec<(RawParam, Value)> = Vec::new();
    let lists = [shared, own.unwrap_or(&Value::Null)];
    for list in lists {
        let Some(list) = list.as_array() else {
            continue;
        };
        for doc in list {
            let name = doc["name"]
                .as_str()
                .ok_or_else(|| format!("{at}: a parameter has no name"))?;
            let location = doc["in"].as_str().and_then(In::parse).ok_or_else(|| {
                format!(
                    "{at}: parameter {name:?} has no valid `in` (path, query, header or cookie)"
                )
            })?;
            let required = location == In::Path || doc["required"].as_bool().unwrap_or(false);
            out.retain(|(p, _)| !(p.name == name && p.location == location));
            out.push((
                RawParam {
                    name: name.to_owned(),
                    location,
                    required,
                },
                doc.clone(),
            ));
        }
    }
    Ok(out)
}

struct Keyed {
    key: String,
    param: Param,
}

/// Each parameter with its input key: its name, or `<in>.<name>` when two parameters share
/// the name or the name is `body`.
fn keyed(raw: &[(RawParam, Value)]) -> Vec<Keyed> {
    raw.iter()
        .map(|(p, doc)| {
            let shared = raw.iter().filter(|(q, _)| q.name == p.name).count() > 1;
            let key = if shared || p.name == "body" {
                format!("{}.{}", p.location.as_str(), p.name)
            } else {
                p.name.clone()
            };
            let style = doc["style"]
                .as_str()
                .and_then(Style::parse)
                .unwrap_or_else(|| Style::default_for(p.location.as_str()));
            let explode = doc["explode"].as_bool().unwrap_or(style == Style::Form);
            Keyed {
                key: key.clone(),
                param: Param {
                    name: p.name.clone(),
                    key,
                    location: p.location,
                    style,
                    explode,
                    allow_reserved: doc["allowReserved"].as_bool().unwrap_or(false),
                },
            }
        })
        .collect()
}

/// What a plain `type: string` parameter (no `enum` or `const`) cannot be sent as (issue
/// 29, found by schemathesis over GitHub's document behind Prism), refused by its schema so
/// that the call fails with VALIDATION_ERROR naming the input before any request, and
/// served documents say so: an empty string in a path parameter, where it makes another
/// path (`/repos//r/issues` names no repository), and in a query parameter without
/// `allowEmptyValue: true` (OpenAPI 3.0 and 3.1: empty values are not allowed by default;
/// Prism reads `q=` as no `q`) — `minLength: 1` unless the schema has one; `.` or `..` as a
/// `simple` path parameter — `not: {enum: [".", ".."]}` unless the schema has a `not`.
fn refuse_unsendable(schema: &mut Value, location: In, doc: &Value) {
    let empty_allowed = match location {
        In::Path => false,
        In::Query => doc["allowEmptyValue"].as_bool().unwrap_or(false),
        In::Header | In::Cookie => true,
    };
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    // Only a plain string: another type, or values the document lists, are its own.
    if object.get("type").and_then(Value::as_str) != Some("string")
        || object.contains_key("enum")
        || object.contains_key("const")
    {
        return;
    }
    // `.` and `..` as a whole path segment (the default `simple` style) would be resolved
    // by URL parsers, sending the request elsewhere: refused by the schema too, so that
    // the served documents say so (request.rs refuses them in any style).
    let simple = matches!(
        doc.get("style").and_then(Value::as_str),
        None | Some("simple")
    );
    if location == In::Path && simple && !object.contains_key("not") {
        object.insert("not".into(), json!({"enum": [".", ".."]}));
    }
    if !empty_allowed && !object.contains_key("minLength") {
        object.insert("minLength".into(), 1.into());
    }
}

fn param_schema(doc: &Value, version: Version) -> Value {
    if let Some(schema) = doc.get("schema") {
        return normalised(schema, version);
    }
    // `content` instead of `schema`: the first media type's schema.
    doc.get("content")
        .and_then(Value::as_object)
        .and_then(|c| c.values().next())
        .and_then(|m| m.get("schema"))
        .map(|s| normalised(s, version))
        .unwrap_or(json!({}))
}

/// The output schema (the first 2xx JSON response's), the media types to accept, and
/// whether a 2xx response is an event stream.
fn success(op: &Map<String, Value>, version: Version) -> (Value, Vec<String>, bool) {
    let mut codes: Vec<(&String, &Value)> = op
        .get("responses")
        .and_then(Value::as_object)
        .map(|r| r.iter().filter(|(code, _)| code.starts_with('2')).collect())
        .unwrap_or_default();
    codes.sort_by_key(|(code, _)| code.to_ascii_uppercase());
    let mut schema = None;
    let mut json_types = Vec::new();
    let mut other_types = Vec::new();
    let mut streaming = false;
    for (_, response) in codes {
        let Some(content) = response.get("content").and_then(Value::as_object) else {
            continue;
        };
        for (media, entry) in content {
            if is_event_stream(media) {
                streaming = true;
                other_types.push(media.clone());
            } else if is_json(media) {
                if schema.is_none() {
                    schema = entry.get("schema").map(|s| normalised(s, version));
                }
                json_types.push(media.clone());
            } else {
                other_types.push(media.clone());
            }
        }
    }
    json_types.dedup();
    other_types.dedup();
    let mut accept = json_types;
    accept.extend(other_types);
    (schema.unwrap_or(json!({})), accept, streaming)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_types_and_schemas() {
        let doc = json!({
            "openapi": "3.0.3", "info": {"version": "1.2"},
            "paths": {
                "/items/{id}": {
                    "parameters": [{"name": "id", "in": "path", "schema": {"type": "integer"}}],
                    "get": {"operationId": "getItem", "parameters": [
                        {"name": "id", "in": "header", "schema": {"type": "string"}},
                        {"name": "tags", "in": "query", "required": true, "schema": {"type": "array", "items": {"type": "string"}}},
                        {"name": "body", "in": "query", "schema": {"type": "string", "nullable": true}}],
                        "responses": {"200": {"content": {"application/json": {"schema": {"type": "object", "nullable": true}}}}}},
                    "post": {"requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "number", "minimum": 0, "exclusiveMinimum": true}}}},
                        "responses": {"201": {"content": {"text/plain": {}}}}}
                },
                "/": {"get": {"responses": {"200": {"content": {"text/event-stream": {}}}}}}
            }
        });
        let ops = operations(&doc, "x", Version::V30, false).unwrap();
        let names: Vec<_> = ops.iter().map(|(s, _)| (s.name.clone(), s.kind)).collect();
        assert_eq!(
            names,
            [
                ("getItem".to_string(), OperationType::Query),
                ("post_items".to_string(), OperationType::Mutation),
                ("get_root".to_string(), OperationType::Subscription),
            ]
        );
        let (get, endpoint) = &ops[0];
        let props = get.input_schema["properties"].as_object().unwrap();
        let keys: Vec<&String> = props.keys().collect();
        // `id` twice (path and header) and a parameter named `body`: prefixed.
        assert_eq!(keys, ["path.id", "header.id", "tags", "query.body"]);
        assert_eq!(get.input_schema["required"], json!(["path.id", "tags"]));
        assert_eq!(props["query.body"]["type"], json!(["string", "null"]));
        assert_eq!(get.output_schema["type"], json!(["object", "null"]));
        assert_eq!(get.version, "1.2");
        assert_eq!(endpoint.accept, ["application/json"]);
        let (post, endpoint) = &ops[1];
        // The path item's `id` applies to every method of the path.
        assert_eq!(post.input_schema["required"], json!(["id", "body"]));
        assert_eq!(
            post.input_schema["properties"]["body"],
            json!({"type": "number", "exclusiveMinimum": 0})
        );
        assert_eq!(
            endpoint.body.as_ref().map(|b| (b.media.as_str(), b.kind)),
            Some(("application/json", BodyKind::Json))
        );
        assert_eq!(post.output_schema, json!({}));
        assert!(ops[2].1.streaming);
    }

    /// GitHub's `owner` and `q` are plain strings: `""` made `/repos//r/issues` and `q=`
    /// (Prism: "must have required property 'q'"), sent where nothing could answer them.
    #[test]
    fn dot_segments_and_empty_strings_are_refused_where_the_document_does_not_allow_them() {
        let doc = json!({
            "openapi": "3.0.3", "info": {"version": "1"},
            "paths": {"/repos/{owner}/{n}/{pick}": {"get": {"operationId": "op", "parameters": [
                {"name": "owner", "in": "path", "required": true, "schema": {"type": "string"}},
                {"name": "n", "in": "path", "required": true, "schema": {"type": "integer"}},
                {"name": "pick", "in": "path", "required": true, "schema": {"type": "string", "enum": ["a", "b"]}},
                {"name": "q", "in": "query", "required": true, "schema": {"type": "string"}},
                {"name": "sort", "in": "query", "schema": {"type": "string", "minLength": 0}},
                {"name": "flag", "in": "query", "allowEmptyValue": true, "schema": {"type": "string"}},
                {"name": "opt", "in": "query", "schema": {"type": "string", "nullable": true}},
                {"name": "X-Note", "in": "header", "schema": {"type": "string"}}
            ], "responses": {}}}}
        });
        let ops = operations(&doc, "x", Version::V30, false).unwrap();
        let props = &ops[0].0.input_schema["properties"];
        let min = |key: &str| props[key].get("minLength").cloned();
        assert_eq!(min("owner"), Some(json!(1)));
        assert_eq!(props["owner"]["not"], json!({"enum": [".", ".."]}));
        assert_eq!(props["q"].get("not"), None);
        assert_eq!(min("q"), Some(json!(1)));
        // Not a plain string, or the document says what it allows: left as written.
        assert_eq!(min("n"), None);
        assert_eq!(props["pick"], json!({"type": "string", "enum": ["a", "b"]}));
        assert_eq!(min("sort"), Some(json!(0)));
        assert_eq!(min("flag"), None);
        assert_eq!(min("opt"), None);
        assert_eq!(min("X-Note"), None);
    }

    #[test]
    fn operations_named_alike_are_all_kept_with_stable_distinct_names() {
        let doc = json!({
            "openapi": "3.0.3", "info": {"version": "1"},
            "paths": {
                "/pets": {"get": {"responses": {}}},
                "/pets/{id}": {"get": {"responses": {}}},
                "/a": {"post": {"operationId": "make", "responses": {}}},
                "/b": {"post": {"operationId": "make", "responses": {}}}
            }
        });
        let names = || -> Vec<String> {
            operations(&doc, "x", Version::V30, false)
                .unwrap()
                .into_iter()
                .map(|(spec, _)| spec.name)
                .collect()
        };
        let first = names();
        assert_eq!(first.len(), 4);
        assert_eq!(first[0], "get_pets");
        assert_eq!(first[2], "make");
        for (i, plain) in [(1, "get_pets_"), (3, "make_")] {
            let hash = first[i]
                .strip_prefix(plain)
                .unwrap_or_else(|| panic!("{first:?}"));
            assert!(
                hash.len() == 8 && hash.chars().all(|c| c.is_ascii_hexdigit()),
                "{first:?}"
            );
        }
        // The hash is of the method and path: the same in every run.
        let hash = envelope_store::Digest::of(b"GET /pets/{id}").hex();
        assert_eq!(first[1], format!("get_pets_{}", &hash[..8]));
        assert_eq!(names(), first);
    }

    #[test]
    fn envelope_serve_operations_keep_their_ids_types_and_inputs() {
        let input = json!({"type": "string", "minLength": 1});
        let doc = json!({"openapi": "3.1.0", "paths": {
            "/ops/text.upper": {"post": {
                "operationId": "text.upper", "x-envelope-type": "query", "x-envelope-input": "body",
                "requestBody": {"required": true, "content": {"application/json": {"schema": input}}},
                "responses": {"200": {"content": {"application/json": {"schema": {
                    "type": "object", "properties": {"data": {"type": "string"}, "meta": {"type": "object"}}}}}}}
            }},
            "/plain": {"post": {"operationId": "a.b", "x-envelope-type": "no-such-type",
                "requestBody": {"content": {"application/json": {"schema": input}}}}}
        }});
        let kept = operations(&doc, "remote", Version::V31, true).unwrap();
        let (spec, endpoint) = &kept[0];
        assert_eq!(spec.id(), "text.upper");
        assert_eq!(spec.kind, OperationType::Query);
        assert_eq!(spec.input_schema, input, "the body is the whole input");
        assert_eq!(
            spec.output_schema,
            json!({"type": "string"}),
            "the envelope's data"
        );
        assert!(endpoint.envelope_api);
        // Without the extensions: a body property, the method's type; an unknown type is
        // ignored.
        let (plain, endpoint) = &kept[1];
        assert_eq!(plain.id(), "a.b");
        assert_eq!(plain.kind, OperationType::Mutation);
        assert_eq!(plain.input_schema["properties"]["body"], input);
        assert!(!endpoint.envelope_api);
        // Without keepIds the source's namespace comes first.
        let prefixed = operations(&doc, "remote", Version::V31, false).unwrap();
        assert_eq!(prefixed[0].0.id(), "remote.text.upper");
    }

    #[test]
    fn a_parameter_without_in_is_an_error_naming_its_place() {
        let doc = json!({"paths": {"/a": {"get": {"parameters": [{"name": "q"}]}}}});
        let e = operations(&doc, "x", Version::V31, false).unwrap_err();
        let e = e.message();
        assert!(e.contains("paths./a.get") && e.contains("\"q\""), "{e}");
    }
}
