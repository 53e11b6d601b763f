//! Validation: the reference fixtures, each rule triggered on purpose, the profile ladder,
//! NDJSON streams (including memory bounds on huge lines), ctxo and tool-result-envelope.

mod common;

use std::io::{BufReader, Read};
use std::path::Path;

use envelope::FormatId;
use envelope::validate::stream::{Line, StreamValidator, read_line, validate_stream};
use envelope::validate::{Options, Profile, Report, validate_document};
use serde_json::{Value, json};

fn fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/protocol-v1")
}

fn options(format: Option<FormatId>, profile: Profile) -> Options {
    Options::new(format, profile)
}

fn pv1(profile: Profile) -> Options {
    options(Some(FormatId::ProtocolV1), profile)
}

fn rules_of(report: &Report) -> Vec<&'static str> {
    let mut ids: Vec<_> = report.findings.iter().map(|f| f.rule).collect();
    ids.dedup();
    ids
}

fn check(doc: &Value, opts: &Options) -> Report {
    validate_document(&serde_json::to_vec(doc).unwrap(), opts)
}

fn ok_envelope() -> Value {
    json!({
        "version": 1, "status": "ok", "command": "fs/ls",
        "data": {"entries": ["a", "b"]},
        "meta": {"ts": "2026-05-12T12:34:56Z", "duration_ms": 42, "source": "run"},
        "error": {}
    })
}

fn error_envelope() -> Value {
    json!({
        "version": 1, "status": "error", "command": "http/openapi",
        "data": {"hint": "Missing required parameter 'username'."},
        "meta": {"ts": "2026-05-12T12:34:56Z", "duration_ms": 42, "source": "run"},
        "error": {"code": "EARG", "message": "Invalid arguments", "details": {"missing": ["username"]}}
    })
}

#[test]
fn every_reference_fixture_is_valid_under_compat() {
    let fixtures = common::protocol_v1_fixtures();
    for path in &fixtures {
        let report = validate_document(&std::fs::read(path).unwrap(), &pv1(Profile::Compat));
        assert!(
            report.is_valid(),
            "{}: {:#?}",
            path.display(),
            report.findings
        );
    }
    assert!(
        fixtures.len() >= 37,
        "only {} fixtures found",
        fixtures.len()
    );
}

#[test]
fn the_job_event_fixture_stream_is_valid() {
    let file = std::fs::File::open(fixtures().join("envelopes/progress-stream.ndjson")).unwrap();
    let report = validate_stream(BufReader::new(file), &Options::default(), 1 << 20).unwrap();
    assert!(report.is_valid(), "{:#?}", report.findings);
    assert_eq!(
        report.format, None,
        "a job-event stream is no envelope format"
    );
}

#[test]
fn good_envelopes_are_valid_under_every_profile() {
    for profile in Profile::ALL {
        for doc in [ok_envelope(), error_envelope()] {
            let report = check(&doc, &pv1(profile));
            assert!(
                report.findings.is_empty(),
                "{profile}: {:#?}",
                report.findings
            );
        }
    }
}

/// (what is changed, the mutation, the rules reported).
type Case = (&'static str, fn(&mut Value), &'static [&'static str]);

/// Mutates a copy of `base` by each case and asserts that `opts` reports exactly the case's
/// rules; returns each case's name and mutated document for further checks.
fn check_cases(base: &Value, cases: &[Case], opts: &Options) -> Vec<(&'static str, Value)> {
    cases
        .iter()
        .map(|(what, mutate, expected)| {
            let mut doc = base.clone();
            mutate(&mut doc);
            let report = check(&doc, opts);
            assert_eq!(
                rules_of(&report),
                *expected,
                "{what}: {:#?}",
                report.findings
            );
            (*what, doc)
        })
        .collect()
}

#[test]
fn each_compat_rule_fires_on_its_own_defect() {
    let cases: &[Case] = &[
        ("version 2", |v| v["version"] = json!(2), &["pv1.version"]),
        (
            "version missing",
            |v| drop(v.as_object_mut().unwrap().remove("version")),
            &["pv1.version"],
        ),
        (
            "version 1.0 (Go int)",
            |v| v["version"] = json!(1.0),
            &["pv1.type"],
        ),
        (
            "version as a string",
            |v| v["version"] = json!("1"),
            &["pv1.type"],
        ),
        (
            "blank command",
            |v| v["command"] = json!("  "),
            &["pv1.command"],
        ),
        (
            "status progress",
            |v| v["status"] = json!("progress"),
            &["pv1.status"],
        ),
        ("status OK", |v| v["status"] = json!("OK"), &["pv1.status"]),
        (
            "ok with a code",
            |v| v["error"] = json!({"code": "EARG"}),
            &["pv1.ok-with-error"],
        ),
        (
            "ts missing",
            |v| drop(v["meta"].as_object_mut().unwrap().remove("ts")),
            &["pv1.ts"],
        ),
        (
            "ts +00:00",
            |v| v["meta"]["ts"] = json!("2026-05-12T12:34:56+00:00"),
            &["pv1.ts"],
        ),
        (
            "ts not a date",
            |v| v["meta"]["ts"] = json!("yesterday"),
            &["pv1.ts"],
        ),
        (
            "meta not an object",
            |v| v["meta"] = json!([]),
            &["pv1.type", "pv1.ts"],
        ),
        ("seq 1.5", |v| v["meta"]["seq"] = json!(1.5), &["pv1.type"]),
        (
            "artifact without sha256:",
            |v| v["data"] = json!({"artifact": "md5:abc"}),
            &["pv1.artifact"],
        ),
        (
            "cas_digest without artifact",
            |v| v["meta"]["cas_digest"] = json!(format!("sha256:{}", "a".repeat(64))),
            &["pv1.cas-digest-without-artifact"],
        ),
        (
            "cas_digest differs from artifact",
            |v| {
                v["data"] = json!({"artifact": format!("sha256:{}", "a".repeat(64))});
                v["meta"]["cas_digest"] = json!(format!("sha256:{}", "b".repeat(64)));
            },
            &["pv1.artifact"],
        ),
        (
            "cache without key",
            |v| v["meta"]["source"] = json!("cache"),
            &["pv1.cache-key"],
        ),
        (
            "memory without name",
            |v| {
                v["meta"]["source"] = json!("memory");
                v["meta"]["memory"] = json!({"type": "kv"});
            },
            &["pv1.memory"],
        ),
    ];
    for (what, doc) in check_cases(&ok_envelope(), cases, &pv1(Profile::Compat)) {
        assert!(!check(&doc, &pv1(Profile::Compat)).is_valid(), "{what}");
    }
}

#[test]
fn error_envelope_rules() {
    let cases: &[Case] = &[
        (
            "no code",
            |v| v["error"] = json!({"message": "boom"}),
            &["pv1.error-incomplete"],
        ),
        (
            "blank message",
            |v| v["error"]["message"] = json!(" "),
            &["pv1.error-incomplete"],
        ),
        (
            "error null",
            |v| v["error"] = Value::Null,
            &["pv1.error-incomplete"],
        ),
        (
            "status_code 200",
            |v| v["data"] = json!({"summary": {"status_code": 200}}),
            &["pv1.status-code"],
        ),
        (
            "status_code \"302\"",
            |v| v["data"] = json!({"summary": {"status_code": "302"}}),
            &["pv1.status-code"],
        ),
    ];
    check_cases(&error_envelope(), cases, &pv1(Profile::Compat));
    // In range, and a non-numeric string, are fine.
    for code in [json!(404), json!("503"), json!("n/a")] {
        let mut doc = error_envelope();
        doc["data"] = json!({"summary": {"status_code": code}});
        assert!(check(&doc, &pv1(Profile::Compat)).is_valid(), "{code}");
    }
}

#[test]
fn strict_adds_unknown_fields_and_text_defects() {
    let mut doc = ok_envelope();
    doc["extra"] = json!(1);
    doc["meta"]["trace_id"] = json!("t-1"); // part of the shape
    doc["meta"]["colour"] = json!("blue");
    let compat = check(&doc, &pv1(Profile::Compat));
    assert!(compat.is_valid(), "{:#?}", compat.findings);
    let strict = check(&doc, &pv1(Profile::Strict));
    let pointers: Vec<_> = strict
        .findings
        .iter()
        .map(|f| (f.rule, f.pointer.as_str()))
        .collect();
    assert_eq!(
        pointers,
        [
            ("pv1.unknown-field", "/extra"),
            ("pv1.unknown-field", "/meta/colour")
        ]
    );
    // error.details belongs to the shape.
    assert!(check(&error_envelope(), &pv1(Profile::Strict)).is_valid());

    let text = serde_json::to_string(&ok_envelope()).unwrap();
    let defects: [(&str, Vec<u8>, &str); 4] = [
        (
            "bom",
            [b"\xEF\xBB\xBF".as_slice(), text.as_bytes()].concat(),
            "text.bom",
        ),
        (
            "trailing",
            format!("{text} {{}}").into_bytes(),
            "text.trailing-data",
        ),
        (
            "duplicate",
            text.replacen(
                "\"command\":\"fs/ls\"",
                "\"command\":\"fs/ls\",\"command\":\"fs/cat\"",
                1,
            )
            .into_bytes(),
            "text.duplicate-key",
        ),
        ("utf8", invalid_utf8(&text), "text.utf8"),
    ];
    for (what, bytes, rule) in defects {
        let compat = validate_document(&bytes, &pv1(Profile::Compat));
        assert!(
            compat.is_valid(),
            "{what} under compat: {:#?}",
            compat.findings
        );
        let strict = validate_document(&bytes, &pv1(Profile::Strict));
        assert_eq!(rules_of(&strict), [rule], "{what}: {:#?}", strict.findings);
    }
}

/// `text` with the `u` of `"run"` replaced by a byte that is not UTF-8.
fn invalid_utf8(text: &str) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    bytes[text.find("run").unwrap() + 1] = 0xFF;
    bytes
}

#[test]
fn duplicate_keys_are_found_at_any_depth_with_their_pointer() {
    let text = br#"{"version":1,"status":"ok","command":"fs/ls","data":{"a":[{"k":1,"k":2}]},"meta":{"ts":"2026-05-12T12:34:56Z"},"error":{}}"#;
    let report = validate_document(text, &pv1(Profile::Strict));
    assert_eq!(report.findings.len(), 1, "{:#?}", report.findings);
    assert_eq!(report.findings[0].pointer, "/data/a/0/k");
}

#[test]
fn spec_adds_the_documents_musts() {
    let cases: &[Case] = &[
        (
            "command pattern",
            |v| v["command"] = json!("foxctl.example.inline"),
            &["pv1.command-pattern"],
        ),
        (
            "negative duration",
            |v| v["meta"]["duration_ms"] = json!(-1),
            &["pv1.duration"],
        ),
        (
            "short digest",
            |v| {
                v["data"] = json!({"artifact": "sha256:abc"});
                v["meta"]["cas_digest"] = json!("sha256:abc");
            },
            &["pv1.digest"],
        ),
        (
            "preview of 1 KB",
            |v| v["data"] = json!({"summary": {"preview": "x".repeat(1022)}}),
            &["pv1.preview-size"],
        ),
        (
            "ok error with details",
            |v| v["error"] = json!({"details": {}}),
            &["pv1.ok-error-object"],
        ),
    ];
    for (what, doc) in check_cases(&ok_envelope(), cases, &pv1(Profile::Spec)) {
        let compat = check(&doc, &pv1(Profile::Compat));
        assert!(
            compat.is_valid(),
            "{what} under compat: {:#?}",
            compat.findings
        );
    }
    // A preview of 1023 bytes serialized is under 1 KB.
    let mut doc = ok_envelope();
    doc["data"] = json!({"summary": {"preview": "x".repeat(1021)}});
    assert!(check(&doc, &pv1(Profile::Spec)).is_valid());

    let mut doc = error_envelope();
    doc["error"]["code"] = json!("EMBEDDING_PROVIDER_FAILURE");
    assert_eq!(
        rules_of(&check(&doc, &pv1(Profile::Spec))),
        ["pv1.error-code"]
    );
}

#[test]
fn all_findings_are_reported_not_only_the_first() {
    let doc = json!({"version": 2, "status": "done", "command": "", "meta": {"ts": "", "duration_ms": "fast"}, "error": 5});
    let report = check(&doc, &pv1(Profile::Spec));
    let rules = rules_of(&report);
    for rule in [
        "pv1.type",
        "pv1.version",
        "pv1.command",
        "pv1.status",
        "pv1.ts",
    ] {
        assert!(rules.contains(&rule), "{rule} missing from {rules:?}");
    }
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.pointer == "/meta/duration_ms")
    );
    assert!(report.findings.iter().any(|f| f.pointer == "/error"));
}

#[test]
fn syntax_errors_are_findings_with_a_location() {
    let report = validate_document(
        b"{\n  \"version\": 1,\n  \"status\": }",
        &pv1(Profile::Spec),
    );
    assert_eq!(rules_of(&report), ["json.syntax"]);
    assert_eq!(report.findings[0].line, Some(3));
    let report = validate_document(b"{\"version\": 1, \"sta", &pv1(Profile::Spec));
    assert_eq!(rules_of(&report), ["json.eof"]);
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let report = validate_document(deep.as_bytes(), &pv1(Profile::Spec));
    assert_eq!(rules_of(&report), ["json.depth"]);
    // serde_json reads 127 levels; the 128th opening bracket is the finding, told from
    // other syntax errors by its position (a bracket that starts a value, 127 deep).
    let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let report = validate_document(nested(127).as_bytes(), &Options::default());
    assert_eq!(rules_of(&report), ["format.undetected"]);
    let report = validate_document(nested(128).as_bytes(), &Options::default());
    assert_eq!(rules_of(&report), ["json.depth"]);
    assert_eq!(report.findings[0].column, Some(128));
    let objects = format!("{}{}", r#"{"a":"#.repeat(128), "}".repeat(128));
    let report = validate_document(objects.as_bytes(), &Options::default());
    assert_eq!(rules_of(&report), ["json.depth"]);
    // Another error at a bracket as deep is a syntax error.
    let other = format!("{}{}", "[".repeat(126), r#"{"a" []}"#);
    let report = validate_document(other.as_bytes(), &Options::default());
    assert_eq!(rules_of(&report), ["json.syntax"]);
    let report = validate_document(&[0xFF, 0x00, 0x13, 0x37], &Options::default());
    assert!(!report.is_valid());
}

#[test]
fn detection_picks_the_rules() {
    let report = check(&ok_envelope(), &Options::default());
    assert_eq!(report.format, Some(FormatId::ProtocolV1));
    let report = check(&json!([1, 2]), &Options::default());
    assert_eq!(rules_of(&report), ["format.undetected"]);
}

// ---- streams ----

fn progress(seq: i64, pct: f64) -> Value {
    json!({"version": 1, "status": "progress", "command": "fs/index",
           "data": {"stage": "scan", "pct": pct}, "meta": {"ts": "2026-05-12T12:34:56Z", "seq": seq}})
}

fn stream(lines: &[Value], eol: &str) -> Vec<u8> {
    lines
        .iter()
        .map(|l| format!("{}{eol}", serde_json::to_string(l).unwrap()))
        .collect::<String>()
        .into_bytes()
}

fn check_stream(bytes: &[u8], cap: usize) -> Report {
    validate_stream(bytes, &Options::default(), cap).unwrap()
}

#[test]
fn a_good_progress_stream_is_valid_with_lf_or_crlf() {
    let lines = [
        progress(0, 0.0),
        progress(1, 50.0),
        progress(2, 50.0),
        ok_envelope(),
    ];
    for eol in ["\n", "\r\n"] {
        let report = check_stream(&stream(&lines, eol), 1 << 20);
        assert!(
            report.findings.is_empty(),
            "{eol:?}: {:#?}",
            report.findings
        );
        assert_eq!(report.format, Some(FormatId::ProtocolV1));
    }
}

#[test]
fn stream_rules_fire_with_line_numbers() {
    let cases: Vec<(&str, Vec<Value>, &str, u64)> = vec![
        (
            "seq from 1",
            vec![progress(1, 0.0), ok_envelope()],
            "stream.seq",
            1,
        ),
        (
            "seq repeats",
            vec![progress(0, 0.0), progress(0, 1.0), ok_envelope()],
            "stream.seq",
            2,
        ),
        (
            "pct decreases",
            vec![progress(0, 60.0), progress(1, 40.0), ok_envelope()],
            "stream.pct",
            2,
        ),
        (
            "pct over 100",
            vec![progress(0, 101.0), ok_envelope()],
            "stream.pct",
            1,
        ),
        (
            "after terminal",
            vec![progress(0, 0.0), ok_envelope(), progress(1, 9.0)],
            "stream.after-terminal",
            3,
        ),
        (
            "two terminals",
            vec![ok_envelope(), error_envelope()],
            "stream.after-terminal",
            2,
        ),
    ];
    for (what, lines, rule, line) in cases {
        let report = check_stream(&stream(&lines, "\n"), 1 << 20);
        let found: Vec<_> = report.findings.iter().map(|f| (f.rule, f.line)).collect();
        assert_eq!(found, [(rule, Some(line))], "{what}");
    }
    let report = check_stream(&stream(&[progress(0, 0.0)], "\n"), 1 << 20);
    assert_eq!(rules_of(&report), ["stream.terminal"]);
    let report = check_stream(b"", 1 << 20);
    assert_eq!(rules_of(&report), ["stream.empty"]);
}

#[test]
fn a_stream_cut_mid_line_says_so() {
    let mut bytes = stream(&[progress(0, 0.0)], "\n");
    bytes.extend_from_slice(br#"{"version":1,"status":"ok","comm"#);
    let report = check_stream(&bytes, 1 << 20);
    let found: Vec<_> = report.findings.iter().map(|f| (f.rule, f.line)).collect();
    assert_eq!(
        found,
        [
            ("json.eof", Some(2)),
            ("stream.truncated", Some(2)),
            ("stream.terminal", None)
        ]
    );
}

#[test]
fn blank_lines_warn_and_garbage_lines_are_findings() {
    let mut bytes = stream(&[progress(0, 0.0)], "\n");
    bytes.extend_from_slice(b"\n\x00\x01garbage\xFF\n");
    bytes.extend_from_slice(&stream(&[ok_envelope()], "\n"));
    let report = check_stream(&bytes, 1 << 20);
    let found: Vec<_> = report.findings.iter().map(|f| (f.rule, f.line)).collect();
    assert_eq!(
        found,
        [
            ("stream.blank-line", Some(2)),
            ("text.utf8", Some(3)),
            ("json.syntax", Some(3))
        ]
    );
}

/// A reader of one huge line of `len` bytes, produced on the fly.
struct HugeLine {
    left: u64,
}

impl Read for HugeLine {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Ok(0);
        }
        let n = (buf.len() as u64).min(self.left) as usize;
        buf[..n].fill(b'x');
        self.left -= n as u64;
        if self.left == 0 {
            buf[n - 1] = b'\n';
        }
        Ok(n)
    }
}

#[test]
fn a_line_over_the_cap_is_skipped_without_being_stored() {
    let cap = 1 << 16;
    let len = 256u64 << 20; // 256 MiB
    let mut reader = BufReader::with_capacity(1 << 16, HugeLine { left: len });
    let mut buf = Vec::new();
    let line = read_line(&mut reader, &mut buf, cap).unwrap();
    assert_eq!(line, Some(Line::TooLong { len: len - 1 }));
    assert!(
        buf.capacity() <= 2 * cap,
        "the buffer grew to {}",
        buf.capacity()
    );
    assert_eq!(read_line(&mut reader, &mut buf, cap).unwrap(), None);

    let mut bytes = stream(&[progress(0, 0.0)], "\n");
    bytes.extend_from_slice(&[b'x'; 1000]);
    bytes.push(b'\n');
    bytes.extend_from_slice(&stream(&[ok_envelope()], "\n"));
    let report = check_stream(&bytes, 500);
    let found: Vec<_> = report.findings.iter().map(|f| (f.rule, f.line)).collect();
    assert_eq!(found, [("stream.line-too-long", Some(2))]);
}

#[test]
fn findings_are_capped_and_counted() {
    let bad = "{}\n".repeat(5000);
    let report = check_stream(bad.as_bytes(), 1 << 20);
    assert!(report.findings.len() <= 1001);
    let last = report.findings.last().unwrap();
    assert_eq!(last.rule, "stream.more-findings");
    assert!(!report.is_valid());
}

#[test]
fn job_event_rules() {
    let bytes = b"{\"ts\":\"2025-11-12T10:30:00Z\",\"percent\":120}\n{\"ts\":\"later\",\"message\":5,\"colour\":1}\n";
    let report = validate_stream(&bytes[..], &options(None, Profile::Spec), 1 << 20).unwrap();
    let found: Vec<_> = report.findings.iter().map(|f| (f.rule, f.line)).collect();
    assert_eq!(
        found,
        [
            ("job.percent", Some(1)),
            ("job.ts", Some(2)),
            ("job.type", Some(2)),
            ("job.unknown-field", Some(2))
        ]
    );
}

// ---- ctxo and tool-result-envelope ----

#[test]
fn ctxo_meta_must_agree_with_the_payload() {
    let ctxo = |doc: &Value| check(doc, &options(Some(FormatId::Ctxo), Profile::Spec));
    let good = json!({"impactedSymbols": [1, 2], "_meta": {"totalItems": 5, "returnedItems": 2, "truncated": true, "totalBytes": 900, "hint": "ask for less"}});
    assert!(
        ctxo(&good).findings.is_empty(),
        "{:#?}",
        ctxo(&good).findings
    );
    let whole = json!({"results": [{"id": 1}], "_meta": {"totalItems": 1, "returnedItems": 1, "truncated": false, "totalBytes": 22}});
    assert!(ctxo(&whole).findings.is_empty());

    let cases: &[Case] = &[
        (
            "returned > total",
            |v| v["_meta"]["returnedItems"] = json!(6),
            &[
                "ctxo.returned-gt-total",
                "ctxo.truncated-flag",
                "ctxo.array-length",
            ],
        ),
        (
            "flag false",
            |v| v["_meta"]["truncated"] = json!(false),
            &["ctxo.truncated-flag", "ctxo.array-length"],
        ),
        (
            "no hint",
            |v| drop(v["_meta"].as_object_mut().unwrap().remove("hint")),
            &["ctxo.hint"],
        ),
        (
            "array too long",
            |v| v["impactedSymbols"] = json!([1, 2, 3]),
            &["ctxo.array-length"],
        ),
        (
            "counts as strings",
            |v| v["_meta"]["totalItems"] = json!("5"),
            &["ctxo.meta-type"],
        ),
        (
            "no _meta",
            |v| drop(v.as_object_mut().unwrap().remove("_meta")),
            &["ctxo.meta-missing"],
        ),
    ];
    check_cases(&good, cases, &options(Some(FormatId::Ctxo), Profile::Spec));
}

#[test]
fn tool_result_envelope_fields() {
    let tre = |doc: Value| {
        check(
            &doc,
            &options(Some(FormatId::ToolResultEnvelope), Profile::Spec),
        )
    };
    let good = json!({"result": [1], "__envelope": {"version": "1", "tool": null, "provider": null, "model": null, "toolCallId": null, "contentType": 2, "payloadPath": "result", "schemaRef": null, "compat": ["result", "list", "items"], "createdUtc": "2026-01-02T03:04:05.5Z", "tags": []}});
    assert!(
        tre(good.clone()).findings.is_empty(),
        "{:#?}",
        tre(good).findings
    );
    let cases: &[Case] = &[
        (
            "content type 9",
            |v| v["__envelope"]["contentType"] = json!(9),
            &["tre.content-type"],
        ),
        (
            "content type name",
            |v| v["__envelope"]["contentType"] = json!("LIST"),
            &[],
        ),
        (
            "version 1",
            |v| v["__envelope"]["version"] = json!(1),
            &["tre.version"],
        ),
        (
            "payloadPath elsewhere",
            |v| v["__envelope"]["payloadPath"] = json!("data"),
            &["tre.payload-path"],
        ),
        (
            "tool number",
            |v| v["__envelope"]["Tool"] = json!(3),
            &["tre.type"],
        ),
        (
            "local time",
            |v| v["__envelope"]["createdUtc"] = json!("2026-01-02T03:04:05+01:00"),
            &["tre.created"],
        ),
    ];
    let base = json!({"result": [1], "__envelope": {"version": "1", "contentType": 2, "payloadPath": "result", "createdUtc": "2026-01-02T03:04:05Z"}});
    check_cases(
        &base,
        cases,
        &options(Some(FormatId::ToolResultEnvelope), Profile::Spec),
    );
}

// ---- tool-envelope-v1, operations, MCP ----

fn examples() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

#[test]
fn the_bundled_examples_and_our_encoder_outputs_are_valid() {
    for source in FormatId::ALL {
        let bytes = std::fs::read(examples().join(format!("{source}.json"))).unwrap();
        let report = validate_document(&bytes, &Options::default());
        assert_eq!(report.format, Some(source));
        // The protocol-v1 example is the reference's inline fixture: its command is no group/name.
        let expected: &[&str] = if source == FormatId::ProtocolV1 {
            &["pv1.command-pattern"]
        } else {
            &[]
        };
        assert_eq!(
            rules_of(&report),
            expected,
            "{source}: {:#?}",
            report.findings
        );
        let env = envelope::decode(source, &bytes, &envelope::DecodeOptions::default()).unwrap();
        for target in FormatId::ALL {
            let out = envelope::encode(target, &env, &envelope::EncodeOptions::default()).unwrap();
            let report = validate_document(&out.bytes, &options(Some(target), Profile::Strict));
            assert!(
                report.is_valid(),
                "{source} → {target}: {:#?}",
                report.findings
            );
        }
    }
}

fn tev1_result(inner: &Value, summary: &str, is_error: bool) -> Value {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(serde_json::to_vec(inner).unwrap());
    let mut v = json!({"content": [{"type": "text", "text": summary}, {"type": "text", "text": format!("__ENVELOPE_V1__:{b64}")}]});
    if is_error {
        v["isError"] = json!(true);
    }
    v
}

#[test]
fn tool_envelope_v1_rules() {
    let tev1 = |doc: &Value| check(doc, &options(Some(FormatId::ToolEnvelopeV1), Profile::Spec));
    let inner = json!({"payload": {"x": 1}, "meta": {"tool": "t", "ts": "2026-07-04T00:00:00.000Z", "version": 1}});
    assert!(tev1(&tev1_result(&inner, "hi", false)).findings.is_empty());

    let mut v2 = inner.clone();
    v2["meta"]["version"] = json!(2);
    let report = tev1(&tev1_result(&v2, "hi", false));
    assert_eq!(rules_of(&report), ["tev1.version-mismatch"]);
    assert_eq!(report.findings[0].pointer, "/content/1/text#/meta/version");

    let mut doc = tev1_result(&inner, "hi", false);
    let text = doc["content"][1]["text"]
        .as_str()
        .unwrap()
        .trim_end_matches('=')
        .replace('+', "-");
    doc["content"][1]["text"] = json!(format!("{text}"));
    let report = tev1(&doc);
    assert!(
        rules_of(&report).contains(&"tev1.base64"),
        "{:#?}",
        report.findings
    );

    let mut doc = tev1_result(&inner, "hi", false);
    doc["content"][1]["text"] = json!("__ENVELOPE_V2__:e30=");
    assert!(rules_of(&tev1(&doc)).contains(&"tev1.prefix"));

    // An error result: the payload shape and block 0 rendered from it.
    let error = json!({"payload": {"category": "validation", "code": "TOOL_VALIDATION_F6511EDE", "message": "Required field missing: request", "recoverable": false}, "meta": {"tool": "mcp", "ts": "2026-07-04T00:00:00.000Z", "version": 1}});
    let block0 =
        "\u{274C} Validation error [TOOL_VALIDATION_F6511EDE]: Required field missing: request";
    let report = tev1(&tev1_result(&error, block0, true));
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
    assert_eq!(
        rules_of(&tev1(&tev1_result(&error, "Validation failed", true))),
        ["tev1.block0"]
    );
    let mut broken = error.clone();
    broken["payload"]
        .as_object_mut()
        .unwrap()
        .remove("recoverable");
    broken["meta"]["tool"] = json!("t");
    let report = tev1(&tev1_result(&broken, block0, true));
    assert!(
        rules_of(&report).starts_with(&["tev1.error-payload"]),
        "{:#?}",
        report.findings
    );
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.pointer == "/content/1/text#/payload/recoverable")
    );
}

#[test]
fn operations_rules_and_output_schema() {
    let ops = |doc: &Value, opts: &Options| check(doc, opts);
    let plain = options(Some(FormatId::Operations), Profile::Spec);
    let good = json!({"data": {"sum": 5}, "meta": {"source": "local", "operationId": "math.add", "timestamp": 1783123200000u64}});
    assert!(ops(&good, &plain).findings.is_empty());
    let http = json!({"data": [], "meta": {"source": "http", "statusCode": 200, "headers": {"etag": "x"}, "contentType": "application/json"}});
    assert!(
        ops(&http, &plain).findings.is_empty(),
        "{:#?}",
        ops(&http, &plain).findings
    );

    let mut ftp = good.clone();
    ftp["meta"]["source"] = json!("ftp");
    assert_eq!(rules_of(&ops(&ftp, &plain)), ["ops.source"]);
    let mut bad_http = http.clone();
    bad_http["meta"]["statusCode"] = json!(700);
    bad_http["meta"]["headers"]["set-cookie"] = json!(["a", "b"]);
    let found: Vec<_> = ops(&bad_http, &plain)
        .findings
        .iter()
        .map(|f| f.pointer.clone())
        .collect();
    assert_eq!(found, ["/meta/statusCode", "/meta/headers/set-cookie"]);
    let mcp = json!({"data": {"a": 1}, "meta": {"source": "mcp", "isError": false, "content": [{"type": "resource_link", "uri": "x"}], "structuredContent": {"a": 2}}});
    let rules = rules_of(&ops(&mcp, &plain));
    assert_eq!(rules, ["mcp.block", "ops.mcp-data"]);

    let schema =
        json!({"type": "object", "required": ["sum"], "properties": {"sum": {"type": "integer"}}});
    let with_schema = plain.clone().with_output_schema(&schema).unwrap();
    assert!(ops(&good, &with_schema).findings.is_empty());
    let mut wrong = good.clone();
    wrong["data"] = json!({"sum": "five"});
    let report = ops(&wrong, &with_schema);
    assert_eq!(rules_of(&report), ["ops.output-schema"]);
    assert_eq!(report.findings[0].pointer, "/data/sum");
}

#[test]
fn mcp_rules_revisions_mirror_and_output_schema() {
    let plain = options(Some(FormatId::Mcp), Profile::Spec);
    let good = json!({"content": [{"type": "text", "text": "{\"n\":1}"}, {"type": "resource_link", "uri": "file:///a", "name": "a", "size": 3}], "structuredContent": {"n": 1}});
    assert!(
        check(&good, &plain).findings.is_empty(),
        "{:#?}",
        check(&good, &plain).findings
    );

    let mut no_name = good.clone();
    no_name["content"][1]
        .as_object_mut()
        .unwrap()
        .remove("name");
    let report = check(&no_name, &plain);
    assert_eq!(rules_of(&report), ["mcp.block"]);
    assert_eq!(report.findings[0].pointer, "/content/1/name");

    let mut mirror = good.clone();
    mirror["structuredContent"] = json!({"n": 2});
    assert_eq!(rules_of(&check(&mirror, &plain)), ["mcp.mirror"]);

    let old = plain.clone().with_mcp_revision("2025-03-26").unwrap();
    let report = check(&good, &old);
    let found: Vec<_> = report
        .findings
        .iter()
        .map(|f| (f.rule, f.pointer.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            ("mcp.revision", "/content/1/type"),
            ("mcp.revision", "/structuredContent")
        ]
    );
    assert!(plain.clone().with_mcp_revision("2030-01-01").is_err());

    let schema = json!({"type": "object", "properties": {"n": {"type": "string"}}});
    let typed = plain.clone().with_output_schema(&schema).unwrap();
    let report = check(&good, &typed);
    assert_eq!(rules_of(&report), ["mcp.output-schema"]);
    assert_eq!(report.findings[0].pointer, "/structuredContent/n");

    let garbage = json!({"content": [{"type": "image", "data": "not base64!", "mimeType": "image/png"}, {"type": "resource", "resource": {"uri": "x", "text": "a", "blob": "b"}}, 7]});
    let found: Vec<_> = check(&garbage, &plain)
        .findings
        .iter()
        .map(|f| f.pointer.clone())
        .collect();
    assert_eq!(
        found,
        ["/content/0/data", "/content/1/resource", "/content/2"]
    );
}

#[test]
fn the_schema_layer_reports_what_no_rule_covers() {
    // operations with an http meta whose contentType is a number: a rule says so; the
    // schema's complaint about the same place is not repeated.
    let doc = json!({"data": 1, "meta": {"source": "http", "statusCode": 200, "headers": {}, "contentType": 5}});
    let report = check(&doc, &options(Some(FormatId::Operations), Profile::Spec));
    assert_eq!(rules_of(&report), ["ops.meta"]);
    // A tool-result-envelope whose tags hold a number: the rule; and an `__envelope` that
    // lacks contentType, which only the schema requires.
    let doc =
        json!({"result": 1, "__envelope": {"version": "1", "payloadPath": "result", "tags": [1]}});
    let report = check(
        &doc,
        &options(Some(FormatId::ToolResultEnvelope), Profile::Spec),
    );
    assert_eq!(
        rules_of(&report),
        ["schema.violation", "tre.type"],
        "{:#?}",
        report.findings
    );
    assert_eq!(report.findings[0].pointer, "/__envelope");
}

// ---- the stream fast path ----

/// One protocol-v1 line, mutated at random: each mutation is either harmless or breaks a
/// rule the fast path must not miss.
fn mutated_line(g: &mut common::Gen, seq: i64, pct: f64) -> String {
    let mut v = progress(seq, pct);
    for _ in 0..g.below(3) {
        let mut set_data = |key: &str, value: Value| {
            if let Some(data) = v["data"].as_object_mut() {
                data.insert(key.into(), value);
            }
        };
        match g.below(24) {
            0 => v["version"] = json!(2),
            1 => v["version"] = json!(1.0),
            2 => v["command"] = json!(" "),
            3 => v["command"] = json!("Fs.Index"),
            4 => v["status"] = json!("ok"),
            5 => v["status"] = json!("error"),
            6 => v["meta"]["ts"] = json!("2026-02-30T00:00:00Z"),
            7 => v["meta"]["ts"] = json!("2026-05-12T12:34:56.123456789Z"),
            8 => v["meta"]["duration_ms"] = json!(-5),
            9 => v["meta"]["seq"] = json!(-1),
            10 => v["meta"]["seq"] = json!("3"),
            11 => set_data("pct", json!(150)),
            12 => set_data("pct", json!("half")),
            13 => v["data"] = json!([1, 2]),
            14 => set_data("artifact", json!("sha256:abc")),
            15 => v["meta"]["cas_digest"] = json!(format!("sha256:{}", "a".repeat(64))),
            16 => v["meta"]["source"] = json!("cache"),
            17 => v["error"] = json!({"code": "EARG"}),
            18 => v["error"] = json!({}),
            19 => v["extra"] = json!(1),
            20 => v["meta"]["trace_id"] = json!(g.string()),
            21 => {
                let value = g.value(2);
                set_data("message", value)
            }
            22 => v["meta"]["profiles"] = json!(["a", null]),
            _ => set_data("summary", json!({"preview": "x"})),
        }
    }
    let text = serde_json::to_string(&v).unwrap();
    match g.below(8) {
        // A duplicate key deep in data, or at the top.
        0 => text.replacen("\"stage\":", "\"stage\":1,\"stage\":", 1),
        1 => text.replacen("{\"version\"", "{\"status\":\"progress\",\"version\"", 1),
        2 => format!("{text} "),
        3 => format!("{text}x"),
        _ => text,
    }
}

#[test]
fn the_fast_path_finds_exactly_what_the_general_path_finds() {
    let mut g = common::Gen::new(0x5eed);
    let (mut fast_lines, mut all_lines) = (0, 0);
    for round in 0..400 {
        let lines = 1 + g.below(6) as i64;
        let mut stream = String::new();
        for i in 0..lines {
            stream.push_str(&mutated_line(&mut g, i, i as f64 * 10.0));
            stream.push_str(if g.below(2) == 0 { "\n" } else { "\r\n" });
        }
        if g.below(2) == 0 {
            stream.push_str(&serde_json::to_string(&ok_envelope()).unwrap());
            stream.push('\n');
        }
        for profile in Profile::ALL {
            for format in [None, Some(FormatId::ProtocolV1)] {
                let run = |fast: bool| {
                    let mut v = StreamValidator::new(options(format, profile));
                    if !fast {
                        v = v.without_fast_path();
                    }
                    for (i, line) in stream.split_inclusive('\n').enumerate() {
                        v.line(i as u64 + 1, line.trim_end_matches('\n').as_bytes(), true);
                    }
                    (v.fast_lines(), v.finish().findings)
                };
                let (fast, with_fast_path) = run(true);
                let (none, general) = run(false);
                assert_eq!(none, 0);
                assert_eq!(
                    with_fast_path, general,
                    "round {round}, {profile}, {format:?}:\n{stream}"
                );
                fast_lines += fast;
                all_lines += stream.lines().count() as u64;
            }
        }
    }
    // Both paths were exercised: the fast one on a good share of the lines, not all.
    assert!(
        fast_lines * 5 > all_lines && fast_lines < all_lines,
        "{fast_lines} of {all_lines}"
    );
}

// ---- hostile input ----

/// Mutated examples and fixtures, as documents and as streams, in every profile: findings,
/// never a panic, and the two stream paths agree.
#[test]
fn mutated_inputs_give_findings_never_panics() {
    let mut seeds: Vec<Vec<u8>> = FormatId::ALL
        .iter()
        .map(|f| std::fs::read(examples().join(format!("{f}.json"))).unwrap())
        .collect();
    seeds.push(std::fs::read(fixtures().join("envelopes/progress-stream.ndjson")).unwrap());
    seeds.push(stream(
        &[progress(0, 0.0), progress(1, 5.0), ok_envelope()],
        "\n",
    ));
    let mut g = common::Gen::new(7);
    for _ in 0..1500 {
        let mut doc = seeds[g.below(seeds.len() as u64) as usize].clone();
        for _ in 0..=g.below(4) {
            let at = g.below(doc.len() as u64) as usize;
            match g.below(4) {
                0 => doc[at] = g.next() as u8,
                1 => {
                    doc.remove(at);
                }
                2 => doc.truncate(at),
                _ => doc.insert(at, b"{}[]\",:0e-\\\n"[g.below(12) as usize]),
            }
            if doc.is_empty() {
                break;
            }
        }
        for profile in Profile::ALL {
            let report = validate_document(&doc, &options(None, profile));
            assert!(report.findings.iter().all(|f| !f.message.is_empty()));
            let run = |fast: bool| {
                let mut v = StreamValidator::new(options(None, profile));
                if !fast {
                    v = v.without_fast_path();
                }
                v.run(&doc[..], 256).unwrap().findings
            };
            assert_eq!(run(true), run(false), "{}", String::from_utf8_lossy(&doc));
        }
    }
}

#[test]
fn deep_nesting_and_garbage_inside_a_stream_are_located() {
    let mut bytes = stream(&[progress(0, 0.0)], "\n");
    bytes.extend_from_slice(format!("{}{}\n", "[".repeat(50_000), "]".repeat(50_000)).as_bytes());
    bytes.extend_from_slice(&[0x00, 0xFF, 0xFE, b'\n']);
    bytes.extend_from_slice(&stream(&[ok_envelope()], "\n"));
    let report = check_stream(&bytes, 1 << 20);
    let found: Vec<_> = report.findings.iter().map(|f| (f.rule, f.line)).collect();
    assert_eq!(
        found,
        [
            ("json.depth", Some(2)),
            ("text.utf8", Some(3)),
            ("json.syntax", Some(3))
        ]
    );
}

/// docs/validation.md lists every rule of the catalogue.
#[test]
fn the_documentation_lists_every_rule() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/validation.md"),
    )
    .unwrap();
    for rule in envelope::validate::RULES {
        assert!(
            doc.contains(&format!("| `{}` |", rule.id)),
            "{} is not documented",
            rule.id
        );
    }
}

/// Many defects at once: every one reported once, the schema's duplicates left out (the
/// lookup is sorted, so this stays linear-ish instead of rules × schema errors).
#[test]
fn a_document_with_many_defects_reports_each_once() {
    let blocks: Vec<Value> = (0..20_000)
        .map(|i| json!({"type": "resource_link", "uri": format!("file:///{i}")}))
        .collect();
    let doc = json!({"content": blocks});
    let report = check(&doc, &options(Some(FormatId::Mcp), Profile::Spec));
    assert_eq!(report.findings.len(), 20_000);
    assert!(report.findings.iter().all(|f| f.rule == "mcp.block"));
    assert_eq!(report.findings[19_999].pointer, "/content/19999/name");
}

/// A stream line whose `data` has 200,000 keys (one repeated at the end): read in linear
/// time by the fast path's key set, and the duplicate found.
#[test]
fn a_huge_object_in_a_stream_line_is_checked_for_duplicates() {
    let mut data = serde_json::Map::new();
    for i in 0..200_000 {
        data.insert(format!("k{i}"), json!(i));
    }
    let mut line = progress(0, 0.0);
    line["data"] = Value::Object(data);
    let text = serde_json::to_string(&line).unwrap();
    let text = text.replacen("\"k0\":0", "\"k0\":0,\"k199999\":1", 1);
    let mut bytes = text.into_bytes();
    bytes.push(b'\n');
    bytes.extend_from_slice(&stream(&[ok_envelope()], "\n"));
    let report = validate_stream(
        &bytes[..],
        &options(Some(FormatId::ProtocolV1), Profile::Strict),
        1 << 24,
    )
    .unwrap();
    let found: Vec<_> = report
        .findings
        .iter()
        .map(|f| (f.rule, f.pointer.as_str(), f.line))
        .collect();
    assert_eq!(found, [("text.duplicate-key", "/data/k199999", Some(1))]);
}

/// Go's decoder fills fields from keys in any case (a later key wins): compat reads the same
/// way; strict calls such keys unknown.
#[test]
fn compat_reads_keys_in_any_case_like_go() {
    let doc = json!({"Version": 1, "STATUS": "ok", "command": "fs/ls",
                     "Meta": {"Ts": "2026-05-12T12:34:56Z", "Source": "memory", "Memory": {"NAME": "n", "Type": "kv"}},
                     "Error": {}});
    let compat = check(&doc, &pv1(Profile::Compat));
    assert!(compat.findings.is_empty(), "{:#?}", compat.findings);
    let strict = check(&doc, &pv1(Profile::Strict));
    assert!(rules_of(&strict).contains(&"pv1.unknown-field"));
    assert!(rules_of(&strict).contains(&"pv1.version"));
    // The later of two spellings wins.
    let doc = json!({"version": 1, "Version": 2, "status": "ok", "command": "fs/ls", "meta": {"ts": "2026-05-12T12:34:56Z"}});
    assert_eq!(
        rules_of(&check(&doc, &pv1(Profile::Compat))),
        ["pv1.version"]
    );
}
