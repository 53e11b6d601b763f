//! Errors that quote the input: a decoder's message can repeat a value (serde's `invalid
//! type: string "…"`) and its location names keys, so with redaction on they are masked
//! like the output.

use super::text::redact_text;
use crate::error::{Error, Location};

fn masked(text: String) -> String {
    redact_text(&text).map_or(text, |(m, _)| m)
}

fn masked_location(mut location: Location) -> Location {
    // Each segment of the pointer alone: the place stays readable, the secret goes.
    location.pointer = location.pointer.map(|p| {
        p.split('#')
            .map(|doc| {
                doc.split('/')
                    .map(|token| {
                        let key = crate::json::pointer::unescape(token);
                        match redact_text(&key) {
                            Some((m, _)) => crate::json::pointer::escape(&m),
                            None => token.to_string(),
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .collect::<Vec<_>>()
            .join("#")
    });
    location
}

/// `error` with every secret in its messages and location masked.
pub fn redact_error(error: Error) -> Error {
    match error {
        Error::Json {
            kind,
            message,
            location,
        } => Error::Json {
            kind,
            message: masked(message),
            location: masked_location(location),
        },
        Error::NotAnEnvelope {
            format,
            reason,
            location,
        } => Error::NotAnEnvelope {
            format,
            reason: masked(reason),
            location: masked_location(location),
        },
        Error::UnsupportedVersion {
            format,
            message,
            location,
        } => Error::UnsupportedVersion {
            format,
            message: masked(message),
            location: masked_location(location),
        },
        Error::WrongType {
            format,
            expected,
            location,
        } => Error::WrongType {
            format,
            expected,
            location: masked_location(location),
        },
        Error::Missing { format, location } => Error::Missing {
            format,
            location: masked_location(location),
        },
        Error::Base64 {
            format,
            message,
            location,
        } => Error::Base64 {
            format,
            message: masked(message),
            location: masked_location(location),
        },
        Error::Undetected(reason) => Error::Undetected(masked(reason)),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_and_pointers_are_masked_and_the_code_kept() {
        let error = Error::NotAnEnvelope {
            format: "mcp",
            reason: "unexpected Bearer zqErr0rTok3n".into(),
            location: Location::pointer("/meta/AKIAZQ3456789ABCDEFG#/x"),
        };
        let masked = redact_error(error);
        assert_eq!(masked.code(), "format.not-an-envelope");
        assert_eq!(
            masked.to_string(),
            "mcp: unexpected Bearer *** (at /meta/***#/x)"
        );
    }
}
