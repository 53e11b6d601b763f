//! The `{data, meta}` envelope of a local result (the `operations` format of the
//! `envelope` crate, `meta.source = "local"`).

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

/// Whether a handler's result is already an envelope (`{data, meta}` with `meta.source`
/// `local`, `http` or `mcp`): such a result is passed through untouched.
pub use envelope::formats::operations::is_response_envelope as is_envelope;

/// `{data, meta: {source: "local", operationId, timestamp}}`, the timestamp in Unix ms.
///
/// ```
/// use envelope_ops::wrap::local;
/// use serde_json::json;
///
/// let env = local(json!([1, 2]), "math.range", 1700000000000);
/// assert_eq!(env.to_string(), r#"{"data":[1,2],"meta":{"source":"local","operationId":"math.range","timestamp":1700000000000}}"#);
/// ```
pub fn local(data: Value, operation_id: &str, timestamp_ms: u64) -> Value {
    let mut meta = Map::with_capacity(3);
    meta.insert("source".into(), Value::from("local"));
    meta.insert("operationId".into(), Value::from(operation_id));
    meta.insert("timestamp".into(), Value::from(timestamp_ms));
    let mut env = Map::with_capacity(2);
    env.insert("data".into(), data);
    env.insert("meta".into(), Value::Object(meta));
    Value::Object(env)
}

/// Now, in Unix milliseconds.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
