//! Executing an OpenAPI operation: the request built from the input (each parameter where
//! it belongs, serialised per its style), sent with `reqwest`, and the response as an `http`
//! envelope — or a CallError with the status, headers and body.

use std::collections::BTreeMap;
use std::time::Duration;

use base64::Engine as _;
use reqwest::header::{ACCEPT, CONTENT_TYPE, COOKIE, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

use super::derive::{Endpoint, In};
use super::media::is_json;
use super::style::{Style, percent_encode, serialize};
use crate::error::{CallError, codes};

/// What every request of a source carries: where to send it, extra and auth headers, the
/// timeout, the client.
pub struct Target {
    /// The server's base URL, without a trailing `/`.
    pub base_url: String,
    /// Headers sent with every request (configured ones, then auth).
    pub headers: HeaderMap,
    /// Per request.
    pub timeout: Duration,
    /// Shared by the source's operations.
    pub client: reqwest::Client,
    /// The source's name, for errors (`openapi.petstore`).
    pub source: String,
}

/// The request of `endpoint` for `input` (an object of parameter keys plus `body`).
pub fn build(
    target: &Target,
    endpoint: &Endpoint,
    input: &Value,
    accept_override: Option<&str>,
) -> Result<reqwest::RequestBuilder, CallError> {
    let whole = input;
    let empty = Map::new();
    let input = input.as_object().unwrap_or(&empty);
    let mut path = endpoint.path.clone();
    let mut query = Vec::new();
    let mut cookies = Vec::new();
    let mut headers = target.headers.clone();
    for param in &endpoint.params {
        let Some(value) = input.get(&param.key) else {
            continue;
        };
        match param.location {
            In::Path => {
                let encode = |s: &str| percent_encode(s, false);
                let text = serialize(&param.name, value, param.style, param.explode, &encode);
                // Every occurrence of the template variable.
                path = path.replace(&format!("{{{}}}", param.name), &text);
                // `.` and `..` are not percent-encoded (unreserved), and URL parsers resolve
                // them, encoded too (`%2E%2E`, WHATWG): `repo: ".."` sent
                // `/repos/o/../issues/1/labels` to `/repos/issues/1/labels`, another
                // endpoint (found by schemathesis over GitHub's document). Refused.
                if dot_segments(&path) > dot_segments(&endpoint.path) {
                    return Err(CallError::new(
                        codes::VALIDATION_ERROR,
                        format!(
                            "{}: {value} makes a `.` or `..` path segment, which would send the request to another path",
                            param.key
                        ),
                    ));
                }
            }
            In::Query => {
                let reserved = param.allow_reserved;
                let encode = move |s: &str| percent_encode(s, reserved);
                query.push(serialize(
                    &param.name,
                    value,
                    param.style,
                    param.explode,
                    &encode,
                ));
            }
            In::Header => {
                let id = |s: &str| s.to_owned();
                let text = serialize(&param.name, value, Style::Simple, param.explode, &id);
                let name = HeaderName::try_from(param.name.as_str())
                    .map_err(|e| invalid(&param.key, e))?;
                let value = HeaderValue::try_from(text).map_err(|e| invalid(&param.key, e))?;
                headers.insert(name, value);
            }
            In::Cookie => {
                let encode = |s: &str| percent_encode(s, false);
                cookies.push(serialize(
                    &param.name,
                    value,
                    Style::Form,
                    param.explode,
                    &encode,
                ));
            }
        }
    }
    let base_url = endpoint.server.as_deref().unwrap_or(&target.base_url);
    let url = url_of(base_url, &path, &query);
    if !cookies.is_empty() {
        let value = HeaderValue::try_from(cookies.join("; ")).map_err(|e| invalid("cookie", e))?;
        headers.insert(COOKIE, value);
    }
    let accept = match accept_override {
        Some(accept) => accept.to_owned(),
        None if endpoint.accept.is_empty() => "application/json".to_owned(),
        None => endpoint.accept.join(", "),
    };
    headers.insert(
        ACCEPT,
        HeaderValue::try_from(accept).map_err(|e| invalid("Accept", e))?,
    );
    let method = reqwest::Method::from_bytes(endpoint.method.as_bytes())
        .map_err(|e| invalid("method", e))?;
    let mut request = target
        .client
        .request(method, url)
        .headers(headers)
        .timeout(target.timeout);
    // `envelope serve`'s operations take the whole input as the body.
    if endpoint.envelope_api {
        let media = endpoint
            .body
            .as_ref()
            .map_or("application/json", |b| &b.media);
        request = request
            .header(CONTENT_TYPE, media)
            .body(serde_json::to_vec(whole).expect("a value serialises"));
    } else if let Some(body) = &endpoint.body
        && let Some((content_type, bytes)) = super::body::encode(body, input)?
    {
        let content_type =
            HeaderValue::try_from(content_type).map_err(|e| invalid("Content-Type", e))?;
        request = request.header(CONTENT_TYPE, content_type).body(bytes);
    }
    Ok(request)
}

/// The request's URL: the base URL's path, then the operation's; the query the base URL
/// carries, then the one the document's path carries (`/v1/models?beta=true`, as some
/// documents write fixed parameters), then the query parameters — one `?`, the parts joined
/// by `&`.
///
/// ```text
/// url_of("http://h/api?key=k", "/v1/models?beta=true", ["limit=3"])
///   == "http://h/api/v1/models?key=k&beta=true&limit=3"
/// ```
fn url_of(base_url: &str, path: &str, query: &[String]) -> String {
    let (base, base_query) = base_url.split_once('?').unwrap_or((base_url, ""));
    let (path, path_query) = path.split_once('?').unwrap_or((path, ""));
    let parts: Vec<&str> = [base_query, path_query]
        .into_iter()
        .chain(query.iter().map(String::as_str))
        .map(|part| part.trim_matches('&'))
        .filter(|part| !part.is_empty())
        .collect();
    let mut url = format!("{}{path}", base.trim_end_matches('/'));
    if !parts.is_empty() {
        url.push('?');
        url.push_str(&parts.join("&"));
    }
    url
}

/// The `.` and `..` segments of a path (before any query it carries).
fn dot_segments(path: &str) -> usize {
    let path = path.split_once('?').map_or(path, |(path, _)| path);
    path.split('/').filter(|s| *s == "." || *s == "..").count()
}

fn invalid(what: &str, e: impl std::fmt::Display) -> CallError {
    CallError::new(
        codes::VALIDATION_ERROR,
        format!("{what}: not valid in an HTTP request: {e}"),
    )
}

/// Sends `request`: the response, or EXECUTION_ERROR / TIMEOUT naming the source.
pub async fn send(
    target: &Target,
    request: reqwest::RequestBuilder,
) -> Result<reqwest::Response, CallError> {
    request.send().await.map_err(|e| {
        let message = format!(
            "{}: the request failed: {}",
            target.source,
            super::error_chain(&e)
        );
        if e.is_timeout() {
            CallError::new(codes::TIMEOUT, message)
        } else if e.is_builder() {
            CallError::new(codes::EXECUTION_ERROR, message)
        } else {
            // Refused, reset, a name that does not resolve: the service is not there.
            CallError::new(codes::EXECUTION_ERROR, message)
                .with_details(json!({ "source": target.source, "upstream": "unreachable" }))
        }
    })
}

/// The most bytes of a response body read (its data is held in memory, as a command's
/// stdout is): more is an EXECUTION_ERROR.
pub const MAX_BODY: usize = crate::command::MAX_STDOUT;

/// The body, chunk by chunk, refused once it passes [`MAX_BODY`].
async fn read_capped(
    target: &Target,
    mut response: reqwest::Response,
) -> Result<Vec<u8>, CallError> {
    let mut body = Vec::new();
    loop {
        let chunk = response.chunk().await.map_err(|e| {
            let message = format!(
                "{}: reading the response: {}",
                target.source,
                super::error_chain(&e)
            );
            match e.is_timeout() {
                true => CallError::new(codes::TIMEOUT, message),
                // The answer broke off.
                false => CallError::new(codes::EXECUTION_ERROR, message)
                    .with_details(json!({ "source": target.source, "upstream": "unreachable" })),
            }
        })?;
        let Some(chunk) = chunk else { return Ok(body) };
        if body.len() + chunk.len() > MAX_BODY {
            return Err(CallError::new(
                codes::EXECUTION_ERROR,
                format!(
                    "{}: the response body is over {MAX_BODY} bytes (not read further)",
                    target.source
                ),
            )
            .with_details(json!({ "maxBodyBytes": MAX_BODY })));
        }
        body.extend_from_slice(&chunk);
    }
}

/// The response's headers as a string map (several values joined with `, `).
pub fn header_map(headers: &HeaderMap) -> Map<String, Value> {
    let mut joined: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, value) in headers {
        joined
            .entry(name.as_str().to_owned())
            .or_default()
            .push(String::from_utf8_lossy(value.as_bytes()).into_owned());
    }
    joined
        .into_iter()
        .map(|(k, v)| (k, Value::from(v.join(", "))))
        .collect()
}

/// The `meta` of an `http` envelope.
pub fn meta(status: u16, headers: Map<String, Value>, content_type: &str) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert("source".into(), "http".into());
    meta.insert("statusCode".into(), status.into());
    meta.insert("headers".into(), Value::Object(headers));
    meta.insert("contentType".into(), content_type.into());
    meta
}

/// A body as data: JSON when the content type says so (and it parses), text for `text/*`,
/// XML and other UTF-8, else base64. Whether it is JSON is returned too (only JSON is cast).
pub fn body_value(content_type: &str, bytes: &[u8]) -> (Value, bool) {
    if is_json(content_type)
        && let Ok(value) = serde_json::from_slice(bytes)
    {
        return (value, true);
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => (Value::from(text), false),
        Err(_) => (
            Value::from(base64::engine::general_purpose::STANDARD.encode(bytes)),
            false,
        ),
    }
}

/// An answer of `envelope serve`'s HTTP view: a 2xx one is an operations envelope, passed on
/// as it is; any other a `{code, message, details}` CallError, its code kept.
pub async fn served_envelope(
    target: &Target,
    response: reqwest::Response,
) -> Result<Value, CallError> {
    let status = response.status();
    let bytes = read_capped(target, response).await?;
    let body = serde_json::from_slice::<Value>(&bytes).unwrap_or_else(|_| {
        Value::from(String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]).into_owned())
    });
    if status.is_success() && crate::wrap::is_envelope(&body) {
        return Ok(body);
    }
    Err(served_error(&target.source, status.as_u16(), body))
}

/// The CallError an answer of `envelope serve` holds; one that holds none is an
/// EXECUTION_ERROR with the status and body.
pub fn served_error(source: &str, status: u16, body: Value) -> CallError {
    let shaped = body["code"].is_string() && body["message"].is_string();
    if shaped && let Ok(error) = serde_json::from_value::<CallError>(body.clone()) {
        return error;
    }
    CallError::new(
        codes::EXECUTION_ERROR,
        format!("{source}: HTTP {status}: not an answer of envelope serve"),
    )
    .with_details(json!({ "status": status, "body": body, "upstream": "answered" }))
}

/// A whole response: a 2xx one as its envelope (`data`, JSON cast to `output_schema` when
/// there is one), any other as EXECUTION_ERROR with `{status, headers, body}`.
pub async fn envelope(
    target: &Target,
    response: reqwest::Response,
    output_schema: &Value,
) -> Result<Value, CallError> {
    let status = response.status();
    let headers = header_map(response.headers());
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default();
    let bytes = read_capped(target, response).await?;
    let (data, is_json) = body_value(&content_type, &bytes);
    if !status.is_success() {
        return Err(CallError::new(
            codes::EXECUTION_ERROR,
            format!(
                "{}: HTTP {}{}",
                target.source,
                status.as_u16(),
                status
                    .canonical_reason()
                    .map(|r| format!(" {r}"))
                    .unwrap_or_default()
            ),
        )
        .with_details(json!({
            "status": status.as_u16(), "headers": headers, "body": data, "upstream": "answered"
        })));
    }
    let data = if is_json && !crate::spec::is_unknown_schema(output_schema) {
        crate::cast::cast(output_schema, data).value
    } else {
        data
    };
    Ok(json!({ "data": data, "meta": meta(status.as_u16(), headers, &content_type) }))
}

#[cfg(test)]
mod tests {
    use super::url_of;

    #[test]
    fn a_query_in_the_path_or_the_base_url_is_merged_with_the_parameters() {
        let q = |parts: &[&str]| parts.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        assert_eq!(
            url_of("http://h", "/v1/models?beta=true", &q(&["limit=3"])),
            "http://h/v1/models?beta=true&limit=3"
        );
        assert_eq!(
            url_of("http://h", "/v1/models?beta=true", &[]),
            "http://h/v1/models?beta=true"
        );
        assert_eq!(
            url_of("http://h/api/?key=k", "/m?a=1&", &q(&["b=2", "c=3"])),
            "http://h/api/m?key=k&a=1&b=2&c=3"
        );
        assert_eq!(url_of("http://h", "/m?", &[]), "http://h/m");
        assert_eq!(url_of("http://h", "/m", &q(&["b=2"])), "http://h/m?b=2");
    }
}
