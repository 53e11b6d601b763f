//! Swagger 2.0 read into the OpenAPI 3.0 model (issue 29): the document is rewritten as the
//! 3.0 document it describes, then read like any other. See docs/operations.md,
//! "Swagger 2.0".
//!
//! | Swagger 2.0 | OpenAPI 3.0 |
//! |---|---|
//! | `schemes`, `host`, `basePath` | `servers: [{url: "<first scheme>://<host><basePath>"}]` |
//! | `definitions` | `components.schemas` (`#/definitions/X` refs follow) |
//! | `securityDefinitions` | `components.securitySchemes` (`basic` → `http`/`basic`, OAuth2 flows renamed) |
//! | `parameters`, `responses` (global) | inlined where referenced |
//! | a parameter's `type`, `format`, `items`, `enum`, bounds… | its `schema`; `collectionFormat` → `style`/`explode` |
//! | `in: body` | `requestBody`, one content entry per `consumes` type (default `application/json`) |
//! | `in: formData` | `requestBody` of `multipart/form-data` (a `file` field, or `consumes` says so) else `application/x-www-form-urlencoded`, one property per field, `file` → `format: binary` |
//! | a response's `schema` | its `content`, one entry per `produces` type (default `application/json`) |
//! | `x-nullable: true` | `nullable: true` |

use serde_json::{Map, Value, json};

/// Keys of a Swagger 2.0 parameter that describe its value: they go in its `schema`.
const SCHEMA_KEYS: [&str; 16] = [
    "type",
    "format",
    "items",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "enum",
    "multipleOf",
];

const METHODS: [&str; 7] = ["get", "put", "post", "delete", "options", "head", "patch"];

/// The OpenAPI 3.0 document a Swagger 2.0 document describes.
pub fn to_openapi_30(doc: &Value) -> Value {
    let mut out = Map::new();
    out.insert("openapi".into(), "3.0.3".into());
    for key in ["info", "tags", "security", "externalDocs"] {
        if let Some(value) = doc.get(key) {
            out.insert(key.into(), value.clone());
        }
    }
    for (key, value) in doc.as_object().into_iter().flatten() {
        if key.starts_with("x-") {
            out.insert(key.clone(), value.clone());
        }
    }
    if let Some(server) = server(doc) {
        out.insert("servers".into(), json!([{ "url": server }]));
    }
    let consumes = media_list(doc.get("consumes"));
    let produces = media_list(doc.get("produces"));
    let mut paths = Map::new();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        let Some(item) = item.as_object() else {
            paths.insert(path.clone(), item.clone());
            continue;
        };
        let mut converted = Map::new();
        for (key, value) in item {
            if key.starts_with("x-") || key == "summary" || key == "description" {
                converted.insert(key.clone(), value.clone());
            }
        }
        let shared = parameters(doc, item.get("parameters"));
        for method in METHODS {
            let Some(op) = item.get(method).and_then(Value::as_object) else {
                continue;
            };
            converted.insert(
                method.into(),
                operation(doc, op, &shared, &consumes, &produces),
            );
        }
        paths.insert(path.clone(), Value::Object(converted));
    }
    out.insert("paths".into(), Value::Object(paths));
    let mut components = Map::new();
    if let Some(definitions) = doc.get("definitions") {
        components.insert("schemas".into(), definitions.clone());
    }
    if let Some(Value::Object(schemes)) = doc.get("securityDefinitions") {
        let schemes: Map<String, Value> = schemes
            .iter()
            .map(|(name, scheme)| (name.clone(), security_scheme(scheme)))
            .collect();
        components.insert("securitySchemes".into(), Value::Object(schemes));
    }
    out.insert("components".into(), Value::Object(components));
    let mut out = Value::Object(out);
    rewrite(&mut out);
    out
}

/// `<first scheme>://<host><basePath>`; the base path alone without a host (relative to the
/// document's URL, as a 3.x relative server).
fn server(doc: &Value) -> Option<String> {
    let base_path = doc["basePath"].as_str().unwrap_or("");
    let Some(host) = doc["host"].as_str() else {
        return (!base_path.is_empty()).then(|| base_path.to_owned());
    };
    let scheme = doc["schemes"]
        .as_array()
        .and_then(|s| {
            // https when offered, else the first.
            s.iter()
                .find(|v| *v == "https")
                .or_else(|| s.first())
                .and_then(Value::as_str)
        })
        .unwrap_or("https");
    Some(format!("{scheme}://{host}{base_path}"))
}

fn media_list(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// A parameter list with `#/parameters/X` references replaced by the global parameter.
fn parameters(doc: &Value, list: Option<&Value>) -> Vec<Value> {
    list.and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .map(|p| {
                    match p["$ref"]
                        .as_str()
                        .and_then(|r| r.strip_prefix("#/parameters/"))
                    {
                        Some(name) => doc["parameters"][name].clone(),
                        None => p.clone(),
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

fn operation(
    doc: &Value,
    op: &Map<String, Value>,
    shared: &[Value],
    consumes: &[String],
    produces: &[String],
) -> Value {
    let mut out = Map::new();
    for (key, value) in op {
        if !matches!(
            key.as_str(),
            "parameters" | "responses" | "consumes" | "produces" | "schemes"
        ) {
            out.insert(key.clone(), value.clone());
        }
    }
    let own = parameters(doc, op.get("parameters"));
    // The path item's, overridden by the operation's (same name and `in`).
    let mut merged: Vec<Value> = shared
        .iter()
        .filter(|p| {
            !own.iter()
                .any(|o| o["name"] == p["name"] && o["in"] == p["in"])
        })
        .cloned()
        .collect();
    merged.extend(own);
    let consumes = match media_list(op.get("consumes")) {
        own if !own.is_empty() => own,
        _ if !consumes.is_empty() => consumes.to_vec(),
        _ => vec!["application/json".to_owned()],
    };
    let produces = match media_list(op.get("produces")) {
        own if !own.is_empty() => own,
        _ if !produces.is_empty() => produces.to_vec(),
        _ => vec!["application/json".to_owned()],
    };
    let mut params = Vec::new();
    let mut fields = Map::new();
    let mut required_fields = Vec::new();
    let mut has_file = false;
    for param in &merged {
        match param["in"].as_str() {
            Some("body") => {
                let schema = param.get("schema").cloned().unwrap_or(json!({}));
                let content: Map<String, Value> = consumes
                    .iter()
                    .map(|m| (m.clone(), json!({ "schema": schema })))
                    .collect();
                let mut body = json!({ "content": content });
                if param["required"] == true {
                    body["required"] = true.into();
                }
                if let Some(description) = param.get("description") {
                    body["description"] = description.clone();
                }
                out.insert("requestBody".into(), body);
            }
            Some("formData") => {
                let name = param["name"].as_str().unwrap_or_default().to_owned();
                let mut schema = value_schema(param);
                if schema["type"] == "file" {
                    has_file = true;
                    schema = json!({"type": "string", "format": "binary"});
                }
                if let Some(description) = param.get("description") {
                    schema["description"] = description.clone();
                }
                if param["required"] == true {
                    required_fields.push(Value::from(name.clone()));
                }
                fields.insert(name, schema);
            }
            _ => params.push(parameter(param)),
        }
    }
    if !fields.is_empty() {
        let media = match has_file
            || consumes
                .iter()
                .any(|m| m.starts_with("multipart/form-data"))
        {
            true => "multipart/form-data",
            false => "application/x-www-form-urlencoded",
        };
        let mut schema = json!({"type": "object", "properties": fields});
        if !required_fields.is_empty() {
            schema["required"] = Value::Array(required_fields);
        }
        out.insert(
            "requestBody".into(),
            json!({"required": schema.get("required").is_some(), "content": {media: {"schema": schema}}}),
        );
    }
    if !params.is_empty() {
        out.insert("parameters".into(), Value::Array(params));
    }
    let mut responses = Map::new();
    for (code, response) in op
        .get("responses")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let response = match response["$ref"]
            .as_str()
            .and_then(|r| r.strip_prefix("#/responses/"))
        {
            Some(name) => &doc["responses"][name],
            None => response,
        };
        responses.insert(code.clone(), self::response(response, &produces));
    }
    out.insert("responses".into(), Value::Object(responses));
    Value::Object(out)
}

/// A non-body parameter: its value keys as its `schema`, `collectionFormat` as style.
fn parameter(param: &Value) -> Value {
    let mut out = Map::new();
    for (key, value) in param.as_object().into_iter().flatten() {
        if !SCHEMA_KEYS.contains(&key.as_str())
            && key != "collectionFormat"
            && key != "allowEmptyValue"
        {
            out.insert(key.clone(), value.clone());
        }
    }
    out.insert("schema".into(), value_schema(param));
    if param["type"] == "array" {
        let location = param["in"].as_str().unwrap_or("");
        let (style, explode) = match param["collectionFormat"].as_str().unwrap_or("csv") {
            "multi" => ("form", true),
            "ssv" => ("spaceDelimited", false),
            "pipes" => ("pipeDelimited", false),
            _ if location == "query" || location == "formData" => ("form", false),
            _ => ("simple", false),
        };
        out.insert("style".into(), style.into());
        out.insert("explode".into(), explode.into());
    }
    Value::Object(out)
}

fn value_schema(param: &Value) -> Value {
    let schema: Map<String, Value> = param
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(key, _)| SCHEMA_KEYS.contains(&key.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Value::Object(schema)
}

fn response(response: &Value, produces: &[String]) -> Value {
    let mut out = Map::new();
    out.insert(
        "description".into(),
        response.get("description").cloned().unwrap_or("".into()),
    );
    if let Some(Value::Object(headers)) = response.get("headers") {
        let headers: Map<String, Value> = headers
            .iter()
            .map(|(name, header)| {
                let mut converted = json!({ "schema": value_schema(header) });
                if let Some(description) = header.get("description") {
                    converted["description"] = description.clone();
                }
                (name.clone(), converted)
            })
            .collect();
        out.insert("headers".into(), Value::Object(headers));
    }
    if let Some(schema) = response.get("schema") {
        let schema = match schema["type"] == "file" {
            true => json!({"type": "string", "format": "binary"}),
            false => schema.clone(),
        };
        let content: Map<String, Value> = produces
            .iter()
            .map(|m| (m.clone(), json!({ "schema": schema })))
            .collect();
        out.insert("content".into(), Value::Object(content));
    }
    Value::Object(out)
}

fn security_scheme(scheme: &Value) -> Value {
    match scheme["type"].as_str() {
        Some("basic") => {
            let mut out = json!({"type": "http", "scheme": "basic"});
            if let Some(d) = scheme.get("description") {
                out["description"] = d.clone();
            }
            out
        }
        Some("oauth2") => {
            let flow = match scheme["flow"].as_str() {
                Some("implicit") => "implicit",
                Some("password") => "password",
                Some("application") => "clientCredentials",
                _ => "authorizationCode",
            };
            let mut details = json!({"scopes": scheme.get("scopes").cloned().unwrap_or(json!({}))});
            for key in ["authorizationUrl", "tokenUrl"] {
                if let Some(url) = scheme.get(key) {
                    details[key] = url.clone();
                }
            }
            json!({"type": "oauth2", "flows": { flow: details }})
        }
        _ => scheme.clone(),
    }
}

/// References to `#/definitions/X` follow the schemas to `#/components/schemas/X`;
/// `x-nullable: true` is 3.0's `nullable: true`.
fn rewrite(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get_mut("$ref")
                && let Some(name) = target.strip_prefix("#/definitions/")
            {
                *target = format!("#/components/schemas/{name}");
            }
            if map.get("x-nullable") == Some(&Value::Bool(true)) {
                map.insert("nullable".into(), true.into());
            }
            map.values_mut().for_each(rewrite);
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn security_definitions_servers_and_file_fields() {
        let doc = json!({
            "swagger": "2.0", "basePath": "/api",
            "securityDefinitions": {
                "basic": {"type": "basic"},
                "oauth": {"type": "oauth2", "flow": "application", "tokenUrl": "https://t", "scopes": {"r": "read"}},
                "key": {"type": "apiKey", "name": "k", "in": "query"}
            },
            "paths": {"/up": {"post": {"consumes": ["application/x-www-form-urlencoded"], "parameters": [
                {"name": "file", "in": "formData", "type": "file"},
                {"name": "ids", "in": "formData", "type": "array", "items": {"type": "integer"}}],
                "responses": {"200": {"description": "a file", "schema": {"type": "file"}}}}}}
        });
        let out = to_openapi_30(&doc);
        assert_eq!(
            out["servers"][0]["url"], "/api",
            "no host: the base path alone"
        );
        let schemes = &out["components"]["securitySchemes"];
        assert_eq!(schemes["basic"], json!({"type": "http", "scheme": "basic"}));
        assert_eq!(
            schemes["oauth"]["flows"]["clientCredentials"]["tokenUrl"],
            "https://t"
        );
        assert_eq!(schemes["key"], doc["securityDefinitions"]["key"]);
        let body = &out["paths"]["/up"]["post"]["requestBody"]["content"];
        // A file field makes the body multipart whatever `consumes` says.
        let schema = &body["multipart/form-data"]["schema"];
        assert_eq!(
            schema["properties"]["file"],
            json!({"type": "string", "format": "binary"})
        );
        assert_eq!(schema["properties"]["ids"]["items"]["type"], "integer");
        assert_eq!(
            out["paths"]["/up"]["post"]["responses"]["200"]["content"]["application/json"]["schema"],
            json!({"type": "string", "format": "binary"})
        );
    }
}
