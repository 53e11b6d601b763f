//! Parameter values serialised per `style` and `explode` (OpenAPI 3.x, "Style Values" and
//! "Style Examples"). The serialisers are given an encoder for names, keys and values (the
//! path's, the query's, or none for headers), and keep the delimiters literal: `;color=blue,black`.

use serde_json::Value;

/// A parameter's `style`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Style {
    /// `;color=blue` (path).
    Matrix,
    /// `.blue` (path).
    Label,
    /// `color=blue` (query, cookie; the query's default).
    Form,
    /// `blue,black` (path and header default).
    Simple,
    /// `color=blue%20black` (query arrays and objects).
    SpaceDelimited,
    /// `color=blue|black` (query arrays and objects).
    PipeDelimited,
    /// `color[R]=100` (query objects).
    DeepObject,
}

impl Style {
    /// From the document's spelling; `None` for an unknown style.
    pub fn parse(name: &str) -> Option<Style> {
        Some(match name {
            "matrix" => Style::Matrix,
            "label" => Style::Label,
            "form" => Style::Form,
            "simple" => Style::Simple,
            "spaceDelimited" => Style::SpaceDelimited,
            "pipeDelimited" => Style::PipeDelimited,
            "deepObject" => Style::DeepObject,
            _ => return None,
        })
    }

    /// The default style of a parameter location: `form` for query and cookie, `simple`
    /// for path and header.
    pub fn default_for(location: &str) -> Style {
        match location {
            "query" | "cookie" => Style::Form,
            _ => Style::Simple,
        }
    }
}

/// Serialises `name` = `value` in `style`. A query style (`form`, `spaceDelimited`,
/// `pipeDelimited`, `deepObject`) gives `name=value` pairs joined with `&`; `simple` the
/// value alone; `label` and `matrix` their prefixed forms. Scalars inside arrays and
/// objects are written as text; nested arrays and objects (which the spec does not define)
/// as JSON text. `null` is the empty value (`color=`, `;color`, `.`).
///
/// ```
/// use envelope_ops::openapi::style::{serialize, Style};
/// use serde_json::json;
///
/// let id = |s: &str| s.to_string();
/// let color = json!(["blue", "black", "brown"]);
/// assert_eq!(serialize("color", &color, Style::Form, true, &id), "color=blue&color=black&color=brown");
/// assert_eq!(serialize("color", &color, Style::Matrix, false, &id), ";color=blue,black,brown");
/// ```
pub fn serialize(
    name: &str,
    value: &Value,
    style: Style,
    explode: bool,
    encode: &dyn Fn(&str) -> String,
) -> String {
    let n = encode(name);
    match value {
        Value::Array(items) => {
            let values: Vec<String> = items.iter().map(|v| encode(&text(v))).collect();
            array(&n, &values, style, explode)
        }
        Value::Object(map) => {
            let pairs: Vec<(String, String)> = map
                .iter()
                .map(|(k, v)| (encode(k), encode(&text(v))))
                .collect();
            object(&n, &pairs, style, explode)
        }
        scalar => {
            let s = encode(&text(scalar));
            match style {
                Style::Matrix if scalar.is_null() => format!(";{n}"),
                Style::Matrix => format!(";{n}={s}"),
                Style::Label => format!(".{s}"),
                Style::Simple => s,
                _ => format!("{n}={s}"),
            }
        }
    }
}

fn array(n: &str, values: &[String], style: Style, explode: bool) -> String {
    let each = |prefix: &str, sep: &str| {
        values
            .iter()
            .map(|v| format!("{prefix}{v}"))
            .collect::<Vec<_>>()
            .join(sep)
    };
    match style {
        Style::Matrix if values.is_empty() => format!(";{n}"),
        Style::Matrix if explode => each(&format!(";{n}="), ""),
        Style::Matrix => format!(";{n}={}", values.join(",")),
        Style::Label if explode => format!(".{}", values.join(".")),
        Style::Label => format!(".{}", values.join(",")),
        Style::Simple => values.join(","),
        // An empty array is the empty value; exploded query arrays repeat the name (the
        // spec's table, which deepObject, undefined for arrays, follows too).
        _ if values.is_empty() => format!("{n}="),
        Style::Form | Style::SpaceDelimited | Style::PipeDelimited | Style::DeepObject
            if explode || style == Style::DeepObject =>
        {
            each(&format!("{n}="), "&")
        }
        Style::SpaceDelimited => format!("{n}={}", values.join("%20")),
        Style::PipeDelimited => format!("{n}={}", values.join("|")),
        Style::Form | Style::DeepObject => format!("{n}={}", values.join(",")),
    }
}

fn object(n: &str, pairs: &[(String, String)], style: Style, explode: bool) -> String {
    let joined = |inner: &str, sep: &str| {
        pairs
            .iter()
            .map(|(k, v)| format!("{k}{inner}{v}"))
            .collect::<Vec<_>>()
            .join(sep)
    };
    match style {
        Style::Matrix if pairs.is_empty() => format!(";{n}"),
        Style::Matrix if explode => pairs.iter().map(|(k, v)| format!(";{k}={v}")).collect(),
        Style::Matrix => format!(";{n}={}", joined(",", ",")),
        Style::Label if explode => format!(".{}", joined("=", ".")),
        Style::Label => format!(".{}", joined(",", ",")),
        Style::Simple if explode => joined("=", ","),
        Style::Simple => joined(",", ","),
        Style::DeepObject => pairs
            .iter()
            .map(|(k, v)| format!("{n}[{k}]={v}"))
            .collect::<Vec<_>>()
            .join("&"),
        _ if pairs.is_empty() => format!("{n}="),
        Style::Form if explode => joined("=", "&"),
        Style::Form => format!("{n}={}", joined(",", ",")),
        Style::SpaceDelimited => format!("{n}={}", joined("%20", "%20")),
        Style::PipeDelimited => format!("{n}={}", joined("|", "|")),
    }
}

/// A value as text: strings as they are, `null` empty, numbers and booleans as JSON
/// writes them, arrays and objects as JSON text.
pub fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Percent-encodes everything but the unreserved characters (`A-Z a-z 0-9 - . _ ~`), and
/// also keeps the reserved ones that are safe inside a query value when `allow_reserved`.
///
/// ```
/// use envelope_ops::openapi::style::percent_encode;
/// assert_eq!(percent_encode("a b/ç", false), "a%20b%2F%C3%A7");
/// assert_eq!(percent_encode("a/b:c", true), "a/b:c");
/// ```
pub fn percent_encode(s: &str, allow_reserved: bool) -> String {
    // `&`, `=`, `#` and `+` stay encoded even when reserved characters are allowed: kept
    // literal they would change the query's structure.
    const RESERVED_KEPT: &[u8] = b":/?[]@!$'()*,;";
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~')
            || (allow_reserved && RESERVED_KEPT.contains(&b))
        {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
