//! Secrets redaction on parsed values, or in one pass over JSON text that writes what the
//! parsed value's redaction writes ([`redact_json_text`]: no document is built, and the
//! output is valid JSON all the same).
//!
//! Three kinds of rules (docs/redaction.md in the repository has the full list and the
//! decisions):
//! - names: the value under a secret-like key is masked keeping its JSON type and shape:
//!   a string becomes `"***"`, a number `0`, and an array or object keeps its length and
//!   keys while every string in it becomes `"***"` and every number `0` (null and booleans
//!   stay); the member is reported once, at its place. Keys are split into words
//!   (`_`, `-`, `.`, spaces, camelCase) and a key is a secret when its last words name one,
//!   so `max_tokens`, `token_count`, `auth_method` and `author` are not secrets while
//!   `auth_token` and `X-Api-Key` are ([`secret_key_rule`]).
//! - free text: tokens inside any string (bearer tokens, cloud and SaaS keys, JWTs, private
//!   key blocks, `password="…"` pairs) are replaced in place ([`redact_text`]).
//! - documents inside strings: a string holding a JSON object or array, or base64 of text,
//!   is redacted inside and written again in its own form.
//!
//! Keys are text too: a key holding a secret is replaced by its masked text (`ghp_…` →
//! `***`), unique among its siblings (`*** (2)`), in payloads, extension pointers and every
//! report. Every metadata field of the envelope is redacted; a protocol-v1 command keeps its
//! `<group>/<name>` shape ([`COMMAND_MASK`]).
//!
//! Redacting twice changes nothing the second time, and reports nothing.

mod across;
mod anchors;
mod envelope;
mod errors;
mod escaped;
mod keys;
#[cfg(test)]
mod oracle;
mod pairs;
pub(crate) mod pieces;
mod pointers;
mod stream;
mod text;
mod value;

pub(crate) use across::KeysAcross;
pub(crate) use envelope::{Apart, redact_envelope_apart};
pub use envelope::{COMMAND_MASK, redact_envelope};
pub use errors::redact_error;
pub use keys::secret_key_rule;
pub(crate) use stream::is_clean_document;
pub(crate) use stream::redact_json_text_in;
pub use stream::{RedactedText, compact_json_text, redact_json_text};
pub use text::redact_text;
pub use value::redact_value;

/// New names for the keys of one object, in order: `None` keeps a key, `Some((masked,
/// rules))` replaces a key holding a secret by its masked text, unique among its siblings
/// (` (2)`, ` (3)`, …), as [`redact_value`] renames them.
pub fn masked_keys<'k>(keys: impl Iterator<Item = &'k str>) -> Vec<Option<(String, Vec<String>)>> {
    value::rename_keys(keys)
        .into_iter()
        .map(|renamed| renamed.map(|r| (r.key, r.rules)))
        .collect()
}

/// What replaces a secret.
pub const MASK: &str = "***";

/// One redaction: which rule, where (never the secret itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redaction {
    /// Stable rule id (`key:password`, `text:bearer`, …).
    pub rule: String,
    /// Where: a canonical field, then a JSON Pointer inside it (`payload/config/token`); a
    /// `#` enters a document held in a string (`payload/body#/token`). Keys in it are
    /// masked keys.
    pub at: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_match_on_word_boundaries() {
        for secret in [
            "password",
            "db_password",
            "apiKey",
            "X-Api-Key",
            "api_key",
            "apikey",
            "auth_token",
            "AUTHORIZATION",
            "clientSecret",
            "private_key",
            "ssh-key",
            "credentials",
            "refresh_token",
            "Token",
            "set-cookie",
            "AWS_SECRET_ACCESS_KEY",
            "master_key",
            "passphrase",
            "password_b64",
            "token_2",
            "password2",
            "passwords",
            "db_pass",
            "DB_PASS",
            "smtp_pass",
            "db_pw",
            "password_hash",
            "identitytoken",
            "clientsecret",
            "api_keys",
            "refresh_tokens",
            "AccountKey",
            "SharedAccessKey",
        ] {
            assert!(secret_key_rule(secret).is_some(), "{secret}");
        }
        for plain in [
            "max_tokens",
            "author",
            "oauth_url",
            "tokens",
            "keyboard",
            "monkey",
            "passage",
            "authority",
            "authored_by",
            "key",
            "token_count",
            "auth_method",
            "access_key_id",
            "public_key",
            "sort_key",
            "bypass",
            "compass",
            "pass",
            "pw",
            "input_tokens",
            "ssh_keys",
            "access-control-allow-credentials",
            "withCredentials",
            "password_policy",
        ] {
            assert_eq!(secret_key_rule(plain), None, "{plain}");
        }
    }

    #[test]
    fn free_text_patterns() {
        let cases = [
            (
                "Authorization: Bearer abc.def-123",
                "Authorization: Bearer ***",
            ),
            ("key AKIAABCDEFGHIJKLMNOP used", "key *** used"),
            (
                "ghp_0123456789abcdefghijABCDEFGHIJ012345 leaked",
                "*** leaked",
            ),
            ("jwt eyJhbGciOi.eyJzdWIiOi.sig-_x end", "jwt *** end"),
            ("slack xoxb-1234567890-abc", "slack ***"),
            ("stripe sk_live_abcdefghij12", "stripe ***"),
            ("url?password=hunter2&x=1", "url?password=***&x=1"),
            ("token: \"abc\"", "token: \"***\""),
            ("a\nPassphrase: correct horse\nb", "a\nPassphrase: ***\nb"),
            ("note password: x y", "note password: *** y"),
            ("Authorization: Basic dTpw", "Authorization: Basic ***"),
            ("Authorization: Token abc", "Authorization: Token ***"),
            (
                r#"log {\"api_key\":\"k1\"}"#,
                r#"log {\"api_key\":\"***\"}"#,
            ),
            (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- after",
                "*** after",
            ),
        ];
        for (input, expected) in cases {
            let (masked, rules) = redact_text(input).unwrap_or_else(|| panic!("{input}"));
            assert_eq!(masked, expected);
            assert!(!rules.is_empty());
            // Idempotent: a second pass finds nothing.
            assert_eq!(redact_text(&masked), None, "{masked}");
        }
        assert_eq!(redact_text("max_tokens=5 and tokens: 7"), None);
        // Inside an identifier (`_` on either side): still found.
        for inside in [
            "planted_AKIAABCDEFGHIJKLMNOP_end",
            "x_ghp_0123456789abcdefghijABCDEFGHIJ012345_y",
            "tool_sk_live_abcdefghij0123456789_z",
        ] {
            let (masked, _) = redact_text(inside).unwrap_or_else(|| panic!("{inside}"));
            assert!(masked.contains(MASK) && masked.len() < 20, "{masked}");
        }
    }

    #[test]
    fn new_free_text_rules_mask_only_the_secret() {
        let telegram = format!("123456789:AA{}", "b1C2d3".repeat(6));
        let cases = [
            ("postgres://u:p4ss@h/db", "postgres://u:***@h/db"),
            ("redis://:p4ss@h:6379", "redis://:***@h:6379"),
            (
                "mongodb+srv://ann:zqS3cret@cluster0.example.net/x",
                "mongodb+srv://ann:***@cluster0.example.net/x",
            ),
            (
                "curl -u user:pass https://x.example",
                "curl -u user:*** https://x.example",
            ),
            ("curl --user ann:pw1 x", "curl --user ann:*** x"),
            (
                "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGX\n=ab12\n-----END PGP PRIVATE KEY BLOCK-----\nafter",
                "***\nafter",
            ),
            (
                r#"x {\\\"password\\\":\\\"zq1\\\"} y"#,
                r#"x {\\\"password\\\":\\\"***\\\"} y"#,
            ),
            (
                "hook https://hooks.slack.com/services/T0000AAAA/B0000BBBB/abcdEFGH1234ijkl",
                "hook https://hooks.slack.com/services/***",
            ),
            (
                "azure ?sv=2022&sig=abcDEF123%2Bxyz456%3D&se=1",
                "azure ?sv=2022&sig=***&se=1",
            ),
            (
                "TWILIO AC0123456789abcdef0123456789abcdef 00112233445566778899aabbccddeeff",
                "TWILIO AC0123456789abcdef0123456789abcdef ***",
            ),
        ];
        for (input, expected) in cases {
            let (masked, _) = redact_text(input).unwrap_or_else(|| panic!("{input}"));
            assert_eq!(masked, expected);
            assert_eq!(redact_text(&masked), None, "{masked}");
        }
        let url = format!("https://api.telegram.org/bot{telegram}/sendMessage");
        assert_eq!(
            redact_text(&url).map(|(m, _)| m).as_deref(),
            Some("https://api.telegram.org/bot***/sendMessage")
        );
        // A kubeconfig's key data: base64 of a private key, after its name.
        let key = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB0zq\n-----END EC PRIVATE KEY-----\n";
        let line = format!(
            "    client-key-data: {}",
            base64::Engine::encode(&base64::engine::general_purpose::STANDARD, key)
        );
        let (masked, rules) = redact_text(&line).expect("masked");
        assert_eq!(masked, "    client-key-data: ***");
        assert_eq!(rules, ["text:base64_secret"]);
        for kept in [
            "PWD=/home/ann/project",
            r#"{"pwd": "/home/ann/x"}"#,
            "access-control-allow-credentials: true",
            "sk-circle-bounce-delay-and-more-words",
            "pass: 3",
            "First pass: done",
            "db_pass: 3",
            "https://example.com:8443/a@b",
            "commit 0123456789abcdef0123456789abcdef01234567 by AKIA",
        ] {
            assert_eq!(redact_text(kept), None, "{kept}");
        }
    }

    #[test]
    fn values_under_secret_keys_become_the_mask_and_the_report_has_no_secret() {
        let mut v = json!({"user": "ann", "password": "hunter2", "nested": {"apiKey": {"v": 1}, "max_tokens": 5}, "empty": {"token": ""}});
        let mut report = Vec::new();
        redact_value(&mut v, "payload", &mut report);
        assert_eq!(
            v,
            json!({"user": "ann", "password": "***", "nested": {"apiKey": {"v": 0}, "max_tokens": 5}, "empty": {"token": ""}})
        );
        assert_eq!(
            report,
            vec![
                Redaction {
                    rule: "key:password".into(),
                    at: "payload/password".into()
                },
                Redaction {
                    rule: "key:api_key".into(),
                    at: "payload/nested/apiKey".into()
                },
            ]
        );
        let mut again = Vec::new();
        redact_value(&mut v, "payload", &mut again);
        assert!(again.is_empty());
    }

    /// Documents with values under secret names that are not strings, the compact JS text
    /// their redaction writes (byte for byte), and where it reports.
    const TYPED: [(&str, &str, &[&str]); 6] = [
        // An array of strings: same length, every string masked (an empty one kept).
        (
            r#"{"signing_keys": ["ssh-ed25519 AAAAC3Nza", "k2", ""], "n": 1}"#,
            r#"{"signing_keys":["***","***",""],"n":1}"#,
            &["key:signing_key@doc/signing_keys"],
        ),
        // A nested object: keys and order kept, strings masked, numbers 0, flags and null
        // kept, an inner secret name masked as part of the outer member.
        (
            r#"{"api_key": {"id": 42, "on": true, "off": false, "none": null, "name": "prod",
                "scopes": ["read", "write"], "inner": {"password": 7, "ratio": 0.5, "zero": 0}}}"#,
            r#"{"api_key":{"id":0,"on":true,"off":false,"none":null,"name":"***","scopes":["***","***"],"inner":{"password":0,"ratio":0,"zero":0}}}"#,
            &["key:api_key@doc/api_key"],
        ),
        // Numbers: 0 (a zero has nothing to hide).
        (
            r#"{"password": 1234, "db_pass": 0, "client_secret": -3.5e2, "auth": true}"#,
            r#"{"password":0,"db_pass":0,"client_secret":0,"auth":true}"#,
            &["key:password@doc/password", "key:secret@doc/client_secret"],
        ),
        // GitHub's `GET /meta`: a list of keys under a secret name, next to plain members.
        (
            r#"{"verifiable_password_authentication": false, "commit_signing_keys": [{"key_identifier": "abc", "key": "ssh-ed25519 AAAA", "ttl": 3600, "expired": null}]}"#,
            r#"{"verifiable_password_authentication":false,"commit_signing_keys":[{"key_identifier":"***","key":"***","ttl":0,"expired":null}]}"#,
            &["key:signing_key@doc/commit_signing_keys"],
        ),
        // What the weak name keeps (a path) stays, the rest is masked; a container of
        // nothing to hide is left alone and not reported.
        (
            r#"{"pwd": ["/home/ann", "hunter2", 5], "token": {"a": null, "b": "***", "c": [0, false]}}"#,
            r#"{"pwd":["/home/ann","***",0],"token":{"a":null,"b":"***","c":[0,false]}}"#,
            &["key:pwd@doc/pwd"],
        ),
        // A kept string is redacted as any string: what it holds is reported at its place,
        // after the member.
        (
            r#"{"pwd": ["/home/ann/ghp_0123456789abcdefghijABCDEFGHIJ012345", "x"]}"#,
            r#"{"pwd":["/home/ann/***","***"]}"#,
            &["key:pwd@doc/pwd", "text:github_token@doc/pwd/0"],
        ),
    ];

    fn places(report: &[Redaction]) -> Vec<String> {
        report
            .iter()
            .map(|r| format!("{}@{}", r.rule, r.at))
            .collect()
    }

    #[test]
    fn values_under_secret_names_keep_their_type_and_shape_on_every_path() {
        for (input, expected, reported) in TYPED {
            // The parsed value.
            let mut v: serde_json::Value = serde_json::from_str(input).unwrap();
            let mut report = Vec::new();
            redact_value(&mut v, "doc", &mut report);
            let written = crate::json::to_vec(&v, crate::json::Dialect::Js);
            assert_eq!(String::from_utf8(written).unwrap(), expected, "{input}");
            assert_eq!(places(&report), reported, "{input}");
            // The one-pass redaction of the text, compact or spread out.
            let pretty = serde_json::to_string_pretty(
                &serde_json::from_str::<serde_json::Value>(input).unwrap(),
            )
            .unwrap();
            for text in [input, pretty.as_str()] {
                let pass = redact_json_text(text.as_bytes(), "doc").expect("written by the pass");
                assert_eq!(
                    String::from_utf8(pass.bytes.expect("masked")).unwrap(),
                    expected,
                    "{text}"
                );
                assert_eq!(places(&pass.report), reported, "{text}");
                assert_eq!(is_clean_document(text, 0), Some(false), "{text}");
            }
            // The same document held in a string: redacted inside, reported after `#`.
            let held = serde_json::to_string(&json!({ "body": input })).unwrap();
            let pass = redact_json_text(held.as_bytes(), "doc").expect("written by the pass");
            let out: serde_json::Value = serde_json::from_slice(&pass.bytes.unwrap()).unwrap();
            assert_eq!(out["body"], expected, "{held}");
            let inner: Vec<String> = reported
                .iter()
                .map(|r| r.replacen("@doc", "@doc/body#", 1))
                .collect();
            assert_eq!(places(&pass.report), inner, "{held}");
            // Idempotent: the output has nothing left to hide on any path.
            let mut again: serde_json::Value = serde_json::from_str(expected).unwrap();
            let mut report = Vec::new();
            redact_value(&mut again, "doc", &mut report);
            assert!(report.is_empty(), "{expected}: {report:?}");
            assert_eq!(
                again,
                serde_json::from_str::<serde_json::Value>(expected).unwrap()
            );
            let pass = redact_json_text(expected.as_bytes(), "doc").unwrap();
            assert!(pass.bytes.is_none() && pass.report.is_empty(), "{expected}");
            assert_eq!(is_clean_document(expected, 0), Some(true), "{expected}");
        }
    }

    #[test]
    fn a_pair_in_free_text_is_masked_as_text() {
        let (masked, _) = redact_text("log password: 1234 y").expect("masked");
        assert_eq!(masked, "log password: *** y");
    }

    #[test]
    fn a_key_holding_a_secret_inside_a_masked_value_is_renamed() {
        let mut v =
            json!({"api_keys": {"ghp_0123456789abcdefghijABCDEFGHIJ012345": "k", "n": [1, "a"]}});
        let mut report = Vec::new();
        redact_value(&mut v, "doc", &mut report);
        assert_eq!(v, json!({"api_keys": {"***": "***", "n": [0, "***"]}}));
        assert_eq!(
            places(&report),
            [
                "key:api_key@doc/api_keys",
                "text:github_token@doc/api_keys/***"
            ]
        );
        let mut report = Vec::new();
        redact_value(&mut v, "doc", &mut report);
        assert!(report.is_empty());
    }

    #[test]
    fn an_extension_named_like_a_secret_keeps_its_type() {
        let mut env = crate::model::Envelope::default();
        env.extensions.push(crate::model::Extension {
            pointer: "/meta/signing_keys".into(),
            value: json!([{"kid": "a", "n": 3}]),
        });
        let report = redact_envelope(&mut env);
        assert_eq!(env.extensions[0].value, json!([{"kid": "***", "n": 0}]));
        assert_eq!(
            places(&report),
            ["key:signing_key@extensions/meta/signing_keys"]
        );
        assert!(redact_envelope(&mut env).is_empty());
    }
}
