//! Request bodies of every media type a document may name: how each becomes inputs (derive)
//! and how those inputs become the bytes on the wire (encode). See docs/operations.md,
//! "Request bodies".
//!
//! | media type | inputs | on the wire |
//! |---|---|---|
//! | `application/json`, `*+json` | `body` (the schema) | the JSON text |
//! | `application/x-www-form-urlencoded` | one input per field | `a=1&b=x%20y` |
//! | `multipart/form-data` | one input per field, a file as base64 | one part per field |
//! | `text/*`, XML, YAML | `body`, a string | the text, UTF-8 |
//! | anything else (`application/octet-stream`, `image/png`, `*/*`) | `body`, base64 | the bytes |

use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::document::Version;
use super::media::{essence, is_json};
use super::relax::normalised;
use super::style::{Style, percent_encode, serialize, text};
use crate::error::{CallError, codes};

/// How a body is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BodyKind {
    /// `application/json` or `*+json`: the `body` input as JSON text.
    Json,
    /// `application/x-www-form-urlencoded`: the fields, form style.
    Form,
    /// `multipart/form-data`: one part per field; files from base64.
    Multipart,
    /// `text/*`, XML, YAML: the `body` string as it is.
    Text,
    /// Any other media type: the `body` input is base64 of the bytes sent.
    Binary,
}

impl BodyKind {
    /// The kind of a media type (parameters ignored).
    pub fn of(media: &str) -> BodyKind {
        let essence = essence(media);
        if is_json(&essence) {
            BodyKind::Json
        } else if essence == "application/x-www-form-urlencoded" {
            BodyKind::Form
        } else if essence == "multipart/form-data" {
            BodyKind::Multipart
        } else if essence.starts_with("text/")
            || essence == "application/xml"
            || essence.ends_with("+xml")
            || essence == "application/yaml"
            || essence == "application/x-yaml"
        {
            BodyKind::Text
        } else {
            BodyKind::Binary
        }
    }

    /// The order in which a document's media types are preferred: JSON, then form fields,
    /// multipart, text, bytes.
    fn rank(self) -> u8 {
        match self {
            BodyKind::Json => 0,
            BodyKind::Form => 1,
            BodyKind::Multipart => 2,
            BodyKind::Text => 3,
            BodyKind::Binary => 4,
        }
    }
}

/// One field of a form or multipart body that is an input of its own.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Field {
    /// Its name in the body.
    pub name: String,
    /// Its input key: the name, or `body.<name>` when a parameter has that key (or the name
    /// is `body`).
    pub key: String,
    /// A file (multipart: `format: binary`, or a `contentMediaType`): the input is base64.
    pub file: bool,
    /// The part's `Content-Type` (multipart: `encoding.<field>.contentType`, a file's
    /// `contentMediaType`).
    pub content_type: Option<String>,
    /// Form: `encoding.<field>.style` (default `form`).
    pub style: Style,
    /// Form: `encoding.<field>.explode` (default true for `form`).
    pub explode: bool,
}

/// What an operation's request body needs.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Body {
    /// The media type chosen from the document's (`application/json`, …).
    pub media: String,
    /// How it is written.
    pub kind: BodyKind,
    /// Form and multipart bodies whose schema lists `properties`: each field is an input.
    /// Empty otherwise (the body is the `body` input: an object of fields for a form).
    pub fields: Vec<Field>,
    /// The document's `requestBody.required`.
    pub required: bool,
}

/// Base64 as `decode` reads it (standard alphabet, canonical padding, the unused bits of
/// the last symbol zero, blanks around): `contentEncoding` alone is an annotation, which
/// validators and generators (schemathesis) do not check, so text that is no base64 was
/// valid by the input schema and refused after (issue 29, over GitHub's upload).
pub const BASE64_PATTERN: &str =
    r"^\s*(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?\s*$";

/// The schema of a file input: base64 text, or an object with the content, a file name
/// and a content type.
fn file_schema(description: Option<&Value>) -> Value {
    let base64 = json!({"type": "string", "contentEncoding": "base64", "pattern": BASE64_PATTERN});
    let mut schema = json!({"anyOf": [
        base64,
        {"type": "object", "required": ["content"], "additionalProperties": false,
         "properties": {"content": base64, "filename": {"type": "string"},
                        "contentType": {"type": "string"}}}
    ]});
    let text = "a file: its bytes in base64, or {content (base64), filename, contentType}";
    schema["description"] = match description.and_then(Value::as_str) {
        Some(d) => format!("{d} ({text})").into(),
        None => text.into(),
    };
    schema
}

/// Whether a multipart field's schema is a file (or an array of files): `format: binary`
/// (3.0) or a `contentMediaType` without a `contentEncoding` (3.1).
fn is_file(schema: &Value) -> bool {
    schema["format"] == "binary"
        || (schema.get("contentMediaType").is_some() && schema.get("contentEncoding").is_none())
}

/// The body of `request` (a `requestBody` object): its inputs added to `properties` and
/// `required` (parameter keys already there), and what the request needs. `None` when the
/// body has no `content`.
pub fn derive(
    request: &Map<String, Value>,
    properties: &mut Map<String, Value>,
    required: &mut Vec<Value>,
    version: Version,
) -> Option<Body> {
    let content = request.get("content").and_then(Value::as_object)?;
    // The preferred kind; the document's order among media types of one kind.
    let (media, entry) = content
        .iter()
        .min_by_key(|(media, _)| BodyKind::of(media).rank())?;
    let kind = BodyKind::of(media);
    let body_required = request
        .get("required")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let schema = entry
        .get("schema")
        .map(|s| normalised(s, version))
        .unwrap_or(json!({}));
    let mut fields = Vec::new();
    let body_schema = match kind {
        BodyKind::Json => Some(schema),
        BodyKind::Text => Some(match schema["type"] == "string" {
            true => schema,
            false => json!({"type": "string"}),
        }),
        BodyKind::Binary => {
            let mut base64 = json!({"type": "string", "contentEncoding": "base64",
                "pattern": BASE64_PATTERN,
                "description": format!("the {media} body's bytes in base64")});
            if let Some(d) = schema.get("description") {
                base64["description"] = d.clone();
            }
            Some(base64)
        }
        BodyKind::Form | BodyKind::Multipart => match schema.get("properties") {
            Some(Value::Object(props)) => {
                let listed = |name: &str| {
                    schema["required"]
                        .as_array()
                        .is_some_and(|r| r.iter().any(|n| n == name))
                };
                for (name, field_schema) in props {
                    let key = match properties.contains_key(name) || name == "body" {
                        true => format!("body.{name}"),
                        false => name.clone(),
                    };
                    let encoding = &entry["encoding"][name];
                    let items = &field_schema["items"];
                    let file = kind == BodyKind::Multipart
                        && (is_file(field_schema) || (items.is_object() && is_file(items)));
                    let input = match (file, field_schema["type"] == "array") {
                        (true, true) => json!({"type": "array",
                            "items": file_schema(items.get("description"))}),
                        (true, false) => file_schema(field_schema.get("description")),
                        (false, _) => field_schema.clone(),
                    };
                    let style = encoding["style"]
                        .as_str()
                        .and_then(Style::parse)
                        .unwrap_or(Style::Form);
                    let content_type = encoding["contentType"]
                        .as_str()
                        .filter(|t| !t.contains(',') && !t.contains('*'))
                        .or_else(|| field_schema["contentMediaType"].as_str())
                        .or_else(|| items["contentMediaType"].as_str())
                        .map(str::to_owned);
                    if body_required && listed(name) {
                        required.push(Value::from(key.clone()));
                    }
                    properties.insert(key.clone(), input);
                    fields.push(Field {
                        name: name.clone(),
                        key,
                        file,
                        content_type,
                        style,
                        explode: encoding["explode"]
                            .as_bool()
                            .unwrap_or(style == Style::Form),
                    });
                }
                None
            }
            // No listed fields (`additionalProperties`, `allOf`, none): `body` is an object
            // of fields.
            _ => Some(schema),
        },
    };
    if let Some(schema) = body_schema {
        properties.insert("body".into(), schema);
        if body_required {
            required.push("body".into());
        }
    }
    Some(Body {
        media: media.clone(),
        kind,
        fields,
        required: body_required,
    })
}

/// The content type and bytes of `body` for `input`; `None` when the input gives nothing to
/// send (no `body`, no field) and the document does not require a body. JSON is sent
/// whenever the input has `body`, falsy values (`0`, `false`, `""`) included.
pub fn encode(
    body: &Body,
    input: &Map<String, Value>,
) -> Result<Option<(String, Vec<u8>)>, CallError> {
    let whole = input.get("body");
    let concrete = |fallback: &str| match body.media.contains('*') {
        true => fallback.to_owned(),
        false => body.media.clone(),
    };
    match body.kind {
        BodyKind::Json => Ok(whole.map(|value| {
            (
                body.media.clone(),
                serde_json::to_vec(value).expect("a value serialises"),
            )
        })),
        BodyKind::Text => Ok(whole.map(|value| (concrete("text/plain"), text(value).into_bytes()))),
        BodyKind::Binary => whole
            .map(|value| {
                let bytes = decode("body", value.as_str().unwrap_or(""))?;
                Ok((concrete("application/octet-stream"), bytes))
            })
            .transpose(),
        BodyKind::Form | BodyKind::Multipart => {
            let values: Vec<(&Field, &Value)> = match body.fields.is_empty() {
                false => body
                    .fields
                    .iter()
                    .filter_map(|f| input.get(&f.key).map(|v| (f, v)))
                    .collect(),
                true => Vec::new(),
            };
            let loose: Vec<(Field, &Value)> = match (body.fields.is_empty(), whole) {
                (true, Some(Value::Object(map))) => map
                    .iter()
                    .map(|(name, value)| (loose_field(name), value))
                    .collect(),
                _ => Vec::new(),
            };
            let values: Vec<(&Field, &Value)> = values
                .into_iter()
                .chain(loose.iter().map(|(f, v)| (f, *v)))
                .collect();
            if values.is_empty() && !body.required && whole.is_none() {
                return Ok(None);
            }
            match body.kind {
                BodyKind::Form => Ok(Some((
                    "application/x-www-form-urlencoded".to_owned(),
                    form(&values).into_bytes(),
                ))),
                _ => multipart(&values).map(Some),
            }
        }
    }
}

/// A field of a body given as one object (`body: {name: value}`).
fn loose_field(name: &str) -> Field {
    Field {
        name: name.to_owned(),
        key: name.to_owned(),
        file: false,
        content_type: None,
        style: Style::Form,
        explode: true,
    }
}

/// `application/x-www-form-urlencoded`: each field as a form-style query part (arrays
/// repeat the name when exploded), names and values percent-encoded.
fn form(values: &[(&Field, &Value)]) -> String {
    let encode = |s: &str| percent_encode(s, false);
    values
        .iter()
        .map(|(field, value)| serialize(&field.name, value, field.style, field.explode, &encode))
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("&")
}

fn decode(key: &str, text: &str) -> Result<Vec<u8>, CallError> {
    base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| {
            CallError::new(
                codes::VALIDATION_ERROR,
                format!("{key}: not base64: {e}"),
            )
            .with_details(json!({"findings": [{"pointer": format!("/{key}"), "message": format!("not base64: {e}")}]}))
        })
}

/// `multipart/form-data` (RFC 7578): one part per field, an array one part per item; a
/// file's bytes decoded from base64 (`filename` the field's name unless given), an object
/// as JSON (`application/json`), any other value as text.
fn multipart(values: &[(&Field, &Value)]) -> Result<(String, Vec<u8>), CallError> {
    let mut random = [0u8; 12];
    getrandom::fill(&mut random).map_err(|e| {
        CallError::new(codes::EXECUTION_ERROR, format!("a multipart boundary: {e}"))
    })?;
    let boundary = format!(
        "envelope-{}",
        random
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    );
    let mut out = Vec::new();
    for (field, value) in values {
        let items: Vec<&Value> = match value {
            Value::Array(items) if field.file || !items.iter().any(Value::is_object) => {
                items.iter().collect()
            }
            other => vec![other],
        };
        for item in items {
            let (bytes, filename, content_type) = match field.file {
                true => {
                    let (content, filename, content_type) = match item {
                        Value::Object(file) => (
                            file.get("content").and_then(Value::as_str).unwrap_or(""),
                            file.get("filename").and_then(Value::as_str),
                            file.get("contentType").and_then(Value::as_str),
                        ),
                        other => (other.as_str().unwrap_or(""), None, None),
                    };
                    let content_type = content_type
                        .or(field.content_type.as_deref())
                        .unwrap_or("application/octet-stream");
                    (
                        decode(&field.key, content)?,
                        Some(filename.unwrap_or(&field.name).to_owned()),
                        Some(content_type.to_owned()),
                    )
                }
                false => match item {
                    Value::Object(_) | Value::Array(_) => (
                        item.to_string().into_bytes(),
                        None,
                        Some(
                            field
                                .content_type
                                .clone()
                                .unwrap_or_else(|| "application/json".into()),
                        ),
                    ),
                    scalar => (text(scalar).into_bytes(), None, field.content_type.clone()),
                },
            };
            out.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
            let mut disposition = format!("form-data; name=\"{}\"", quoted(&field.name));
            if let Some(filename) = filename {
                disposition.push_str(&format!("; filename=\"{}\"", quoted(&filename)));
            }
            out.extend_from_slice(format!("Content-Disposition: {disposition}\r\n").as_bytes());
            if let Some(content_type) = content_type {
                out.extend_from_slice(format!("Content-Type: {content_type}\r\n").as_bytes());
            }
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(&bytes);
            out.extend_from_slice(b"\r\n");
        }
    }
    out.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    Ok((format!("multipart/form-data; boundary={boundary}"), out))
}

/// A name or file name inside a quoted `Content-Disposition` parameter: `"`, CR and LF
/// percent-encoded (the HTML standard's multipart encoding).
fn quoted(name: &str) -> String {
    name.replace('"', "%22")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_have_their_kind_and_json_is_preferred() {
        for (media, kind) in [
            ("application/json; charset=utf-8", BodyKind::Json),
            ("application/merge-patch+json", BodyKind::Json),
            ("application/x-www-form-urlencoded", BodyKind::Form),
            ("multipart/form-data", BodyKind::Multipart),
            ("text/plain", BodyKind::Text),
            ("text/*", BodyKind::Text),
            ("application/xml", BodyKind::Text),
            ("application/octet-stream", BodyKind::Binary),
            ("image/png", BodyKind::Binary),
            ("*/*", BodyKind::Binary),
        ] {
            assert_eq!(BodyKind::of(media), kind, "{media}");
        }
        let request = json!({"content": {
            "text/plain": {}, "application/octet-stream": {},
            "application/vnd.api+json": {"schema": {"type": "object"}}}});
        let (mut properties, mut required) = (Map::new(), Vec::new());
        let body = derive(
            request.as_object().unwrap(),
            &mut properties,
            &mut required,
            Version::V31,
        )
        .unwrap();
        assert_eq!(body.media, "application/vnd.api+json");
        assert_eq!(properties["body"], json!({"type": "object"}));
    }

    #[test]
    fn a_wildcard_media_type_is_sent_as_a_concrete_one() {
        for (media, kind, input, sent) in [
            (
                "text/*",
                BodyKind::Text,
                json!({"body": "hi"}),
                "text/plain",
            ),
            (
                "*/*",
                BodyKind::Binary,
                json!({"body": "aGk="}),
                "application/octet-stream",
            ),
        ] {
            let body = Body {
                media: media.into(),
                kind,
                fields: vec![],
                required: false,
            };
            let (content_type, bytes) = encode(&body, input.as_object().unwrap()).unwrap().unwrap();
            assert_eq!(
                (content_type.as_str(), bytes.as_slice()),
                (sent, &b"hi"[..])
            );
        }
    }

    #[test]
    fn a_bad_base64_file_is_a_validation_error_naming_its_input() {
        let body = Body {
            media: "application/octet-stream".into(),
            kind: BodyKind::Binary,
            fields: vec![],
            required: false,
        };
        let input = json!({"body": "not base64!"});
        let e = encode(&body, input.as_object().unwrap()).unwrap_err();
        assert_eq!(e.code, codes::VALIDATION_ERROR);
        assert!(e.message.starts_with("body: not base64"), "{}", e.message);
        let input = json!({});
        assert!(encode(&body, input.as_object().unwrap()).unwrap().is_none());
    }

    /// The input schema's pattern accepts exactly what `decode` reads.
    #[test]
    fn the_base64_pattern_accepts_what_decode_reads() {
        let pattern = matches_pattern(BASE64_PATTERN);
        let mut cases: Vec<String> = ["", "QQ==", "QUI=", "QUJD", " aGVsbG8=\n", "+/+/"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        cases.extend(
            [
                "QR==",
                "QUJ=",
                "QQ=",
                "QQ",
                "Q===",
                "%%%",
                "aGVs bG8=",
                "-_-_",
                "# hi",
            ]
            .map(String::from),
        );
        for n in 0..40u8 {
            let bytes: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37).wrapping_add(n)).collect();
            cases.push(base64::engine::general_purpose::STANDARD.encode(&bytes));
        }
        for case in cases {
            let decoded = decode("body", &case).is_ok();
            assert_eq!(pattern(&case), decoded, "{case:?}");
        }
    }

    /// The pattern checked by the JSON Schema validator the registry uses.
    fn matches_pattern(pattern: &str) -> impl Fn(&str) -> bool {
        let validator =
            jsonschema::validator_for(&json!({"type": "string", "pattern": pattern})).unwrap();
        move |text| validator.is_valid(&json!(text))
    }
}
