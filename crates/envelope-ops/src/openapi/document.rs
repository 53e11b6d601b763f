//! Reading an OpenAPI document: a path or an http(s) URL, JSON or YAML, OpenAPI 3.0 or 3.1.
//! Its local `$ref`s are then resolved by [`super::refs`].

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

/// Where a document came from, for error messages and relative server URLs.
#[derive(Clone, Debug)]
pub struct Location {
    /// The spec as written (a path or a URL).
    pub shown: String,
    /// The URL, when it was fetched.
    pub url: Option<reqwest::Url>,
}

/// The OpenAPI versions read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// 3.0.x: schemas have `nullable` and boolean `exclusiveMinimum`/`exclusiveMaximum`.
    V30,
    /// 3.1.x: schemas are JSON Schema 2020-12.
    V31,
}

/// Reads `spec`: fetched when it is an http(s) URL, else a file (relative to `dir` when
/// given). Returns the text and where it came from.
pub async fn load(
    spec: &str,
    dir: Option<&Path>,
    timeout: Duration,
) -> Result<(String, Location), String> {
    if spec.starts_with("http://") || spec.starts_with("https://") {
        let url = reqwest::Url::parse(spec).map_err(|e| format!("{spec}: not a URL: {e}"))?;
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| format!("{spec}: {e}"))?;
        let response = client.get(url.clone()).send().await.map_err(|e| {
            format!(
                "{spec}: cannot fetch the document: {}",
                super::error_chain(&e)
            )
        })?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("{spec}: fetching the document gave HTTP {status}"));
        }
        let text = response
            .text()
            .await
            .map_err(|e| format!("{spec}: cannot read the document: {e}"))?;
        let location = Location {
            shown: spec.to_string(),
            url: Some(url),
        };
        return Ok((text, location));
    }
    let path = match dir {
        Some(dir) if Path::new(spec).is_relative() => dir.join(spec),
        _ => Path::new(spec).to_path_buf(),
    };
    let text = tokio::fs::read_to_string(&path)
        .await
        .map_err(|e| format!("{}: cannot read the document: {e}", path.display()))?;
    let location = Location {
        shown: path.display().to_string(),
        url: None,
    };
    Ok((text, location))
}

/// Parses the text as JSON when it starts with `{`, else as YAML, and checks it is an
/// OpenAPI 3.0 or 3.1 document with `paths` (or, 3.1, `webhooks`-only documents have no
/// operations to give).
///
/// ```
/// use envelope_ops::openapi::document::{parse, Version};
///
/// let (doc, version) = parse("openapi: 3.1.0\ninfo: {title: t, version: '2'}\npaths: {}\n").unwrap();
/// assert_eq!(version, Version::V31);
/// assert_eq!(doc["info"]["version"], "2");
/// assert!(parse("swagger: '1.2'\n").unwrap_err().message().contains("Swagger 1.2"));
/// // Swagger 2.0 is read as the OpenAPI 3.0 document it describes.
/// let (doc, version) = parse("swagger: '2.0'\nhost: h\nbasePath: /v1\npaths: {}\n").unwrap();
/// assert_eq!((version, doc["servers"][0]["url"].as_str()), (Version::V30, Some("https://h/v1")));
/// // A YAML integer beyond 64 bits is read as the nearest float, not refused.
/// let (doc, _) = parse("openapi: 3.1.0\npaths: {}\nx-min: -9223372036854776000\n").unwrap();
/// assert_eq!(doc["x-min"].as_f64(), Some(-9223372036854776000.0));
/// ```
pub fn parse(text: &str) -> Result<(Value, Version), crate::error::TextError> {
    parse_text(text).map_err(crate::error::TextError)
}

/// [`parse`], its error a sentence.
fn parse_text(text: &str) -> Result<(Value, Version), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let doc: Value = if text.trim_start().starts_with('{') {
        serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?
    } else {
        yaml_serde::from_str::<Json>(text)
            .map_err(|e| format!("not valid YAML: {e}"))?
            .0
    };
    let Some(root) = doc.as_object() else {
        return Err("the document is not an object".into());
    };
    if let Some(swagger) = root.get("swagger") {
        let version = swagger.as_str().unwrap_or("");
        if !version.starts_with("2.") {
            return Err(format!(
                "Swagger {version} (`swagger`) is not supported (Swagger 2.0 and OpenAPI 3.0 and 3.1 are)"
            ));
        }
        let doc = super::swagger::to_openapi_30(&doc);
        return Ok((doc, Version::V30));
    }
    let version = match root.get("openapi").and_then(Value::as_str) {
        Some(v) if v.starts_with("3.0") => Version::V30,
        Some(v) if v.starts_with("3.1") => Version::V31,
        Some(v) => return Err(format!("OpenAPI {v} is not supported (3.0 and 3.1 are)")),
        None => return Err("no `openapi` version field: not an OpenAPI 3 document".into()),
    };
    match root.get("paths") {
        None | Some(Value::Object(_)) => {}
        Some(_) => return Err("`paths` is not an object".into()),
    }
    Ok((doc, version))
}

/// A YAML document as JSON values. serde_json's own reading refuses an integer beyond 64
/// bits (`minimum: -9223372036854776000`, written by generators from a float): here it is
/// the nearest float, as a JSON reader takes it. Everything else is read as serde_json
/// reads it (a float that is not finite is `null`).
struct Json(Value);

impl<'de> serde::Deserialize<'de> for Json {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonVisitor).map(Json)
    }
}

struct JsonVisitor;

impl<'de> serde::de::Visitor<'de> for JsonVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_i128<E>(self, v: i128) -> Result<Value, E> {
        Ok(i64::try_from(v).map_or_else(|_| float(v as f64), Value::from))
    }

    fn visit_u128<E>(self, v: u128) -> Result<Value, E> {
        Ok(u64::try_from(v).map_or_else(|_| float(v as f64), Value::from))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(float(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Json(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some((key, Json(value))) = map.next_entry::<String, Json>()? {
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

fn float(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}
