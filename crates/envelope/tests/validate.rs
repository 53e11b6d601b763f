//! Validation: the reference fixtures, each rule triggered on purpose, the profile ladder,
//! NDJSON streams (including memory bounds on huge lines), ctxo and tool-result-envelope.

mod common;

use std::io::{BufReader, Read};
use std::path::Path;

use envelope::FormatId;
use envelope::validate::stream::{Line, StreamValidator, read_line, validate_stream};
use envelope::validate::{Options, Profile, Report, StreamKind, validate_document};
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

/// A job-event stream is protocol-v1's other kind of stream: the report names the format
/// (issue 12 item 10; it used to say no format), whether protocol-v1 is given or not.
#[test]
fn the_job_event_fixture_stream_is_a_valid_protocol_v1_stream() {
    for format in [None, Some(FormatId::ProtocolV1)] {
        let file =
            std::fs::File::open(fixtures().join("envelopes/progress-stream.ndjson")).unwrap();
        let report = validate_stream(
            BufReader::new(file),
            &options(format, Profile::Spec),
            1 << 20,
        )
        .unwrap();
        assert!(report.is_valid(), "{format:?}: {:#?}", report.findings);
        assert_eq!(report.format, Some(FormatId::ProtocolV1), "{format:?}");
        assert_eq!(report.formats, [FormatId::ProtocolV1]);
        assert_eq!(report.stream, Some(StreamKind::JobEvents));
    }
    // A progress stream says so too; a document is no stream.
    let report = check_stream(&stream(&[progress(0, 0.0), ok_envelope()], "\n"), 1 << 20);
    assert_eq!(report.stream, Some(StreamKind::Progress));
    let report = check(&ok_envelope(), &pv1(Profile::Spec));
    assert_eq!(
        (report.stream, &report.formats[..]),
        (None, &[FormatId::ProtocolV1][..])
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

    // What Go's decoder reads past (compat valid) is a finding from strict on; a byte-order
    // mark and trailing data, which it refuses, are findings from compat on (issue 12 item
    // 11: they used to wait for strict).
    let text = serde_json::to_string(&ok_envelope()).unwrap();
    let defects: [(&str, Vec<u8>, &str); 3] = [
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
        (
            "lone surrogate",
            text.replacen("fs/ls", "fs/l\\ud800s", 1).into_bytes(),
            "text.surrogate",
        ),
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

// ---- streams: line numbers, independent lines (issue 12 item 10) ----

/// Runs `bytes` through a stream validator, with or without the fast path and independent
/// lines.
fn run_stream(bytes: &[u8], opts: Options, fast: bool, independent: bool) -> Report {
    let mut v = StreamValidator::new(opts);
    if !fast {
        v = v.without_fast_path();
    }
    if independent {
        v = v.independent();
    }
    v.run(bytes, 1 << 20).unwrap()
}

/// (rule, line) of every finding.
fn lines_of(report: &Report) -> Vec<(&'static str, Option<u64>)> {
    report.findings.iter().map(|f| (f.rule, f.line)).collect()
}

/// Every finding about a line carries its number: rule findings (not only syntax errors),
/// schema findings, in every format, through the fast path and the general path.
#[test]
fn every_finding_of_a_stream_line_has_its_line() {
    // A 3-line progress stream whose line 2 breaks a document rule.
    let mut bad = progress(1, 20.0);
    bad["meta"]["ts"] = json!("2026-05-12T12:34:56+02:00");
    let bytes = stream(&[progress(0, 10.0), bad, ok_envelope()], "\n");
    for fast in [true, false] {
        for independent in [false, true] {
            for format in [None, Some(FormatId::ProtocolV1)] {
                let report = run_stream(&bytes, options(format, Profile::Spec), fast, independent);
                let found: Vec<_> = report
                    .findings
                    .iter()
                    .map(|f| (f.rule, f.pointer.as_str(), f.line))
                    .collect();
                assert_eq!(
                    found,
                    [("pv1.ts", "/meta/ts", Some(2))],
                    "fast path {fast}, independent {independent}, {format:?}"
                );
            }
        }
    }

    // Another format: rule and schema findings of line 2.
    let mcp_ok = json!({"content": [{"type": "text", "text": "hi"}]});
    let mcp_bad = json!({"content": [{"type": "image"}], "isError": "no"});
    let bytes = stream(&[mcp_ok.clone(), mcp_bad, mcp_ok], "\n");
    let report = check_stream(&bytes, 1 << 20);
    assert!(report.findings.len() >= 2, "{:#?}", report.findings);
    assert!(
        report.findings.iter().all(|f| f.line == Some(2)),
        "{:#?}",
        report.findings
    );
    assert_eq!(report.stream, Some(StreamKind::Envelopes));

    // Strict text findings and the compat reading of repeated keys, on line 3.
    let ok = serde_json::to_string(&ok_envelope()).unwrap();
    let line3 = ok.replacen("\"version\":1", "\"version\":\"1\",\"version\":1", 1);
    let bytes = format!(
        "{}\n{}\n{line3}\n",
        serde_json::to_string(&progress(0, 0.0)).unwrap(),
        serde_json::to_string(&progress(1, 0.0)).unwrap()
    );
    let compat = check_stream_with(bytes.as_bytes(), Profile::Compat);
    assert_eq!(lines_of(&compat), [("pv1.type", Some(3))]);
    // strict reads the last value of a repeated key, and reports the repetition.
    let strict = check_stream_with(bytes.as_bytes(), Profile::Strict);
    assert_eq!(lines_of(&strict), [("text.duplicate-key", Some(3))]);

    // Job events.
    let bytes =
        b"{\"ts\":\"2025-11-12T10:30:00Z\"}\n{\"ts\":\"2025-11-12T10:30:00Z\",\"percent\":-1}\n";
    let report = check_stream(bytes, 1 << 20);
    assert_eq!(lines_of(&report), [("job.percent", Some(2))]);
}

fn check_stream_with(bytes: &[u8], profile: Profile) -> Report {
    validate_stream(bytes, &options(None, profile), 1 << 20).unwrap()
}

/// The findings about the whole stream, not about a line.
const WHOLE_STREAM: [&str; 3] = ["stream.terminal", "stream.empty", "stream.more-findings"];

fn one_line(v: &Value) -> String {
    serde_json::to_string(v).unwrap()
}

/// A batch of independent results: an MCP result, a protocol-v1 ok envelope and an
/// operations envelope.
fn mixed_batch() -> String {
    let mcp = json!({"content": [{"type": "text", "text": "2 open issues"}]});
    let operations = json!({"data": {"sum": 5}, "meta": {"source": "local", "operationId": "math.add", "timestamp": 1783123200000u64}});
    format!(
        "{}\n{}\n{}\n",
        one_line(&mcp),
        one_line(&ok_envelope()),
        one_line(&operations)
    )
}

#[test]
fn independent_lines_are_documents_of_their_own() {
    let batch = mixed_batch();
    for fast in [true, false] {
        let report = run_stream(batch.as_bytes(), Options::default(), fast, true);
        assert!(report.is_valid(), "{:#?}", report.findings);
        assert_eq!(report.stream, Some(StreamKind::Independent));
        assert_eq!(
            report.formats,
            [FormatId::Mcp, FormatId::ProtocolV1, FormatId::Operations]
        );
        assert_eq!(report.format, None, "several formats");
    }
    // Without it, the batch is judged as one stream of its first line's kind.
    let report = check_stream(batch.as_bytes(), 1 << 20);
    assert_eq!(
        lines_of(&report),
        [("stream.kind", Some(2)), ("stream.kind", Some(3))]
    );
    // The same with the protocol-v1 line first: a progress stream, ended by it.
    let lines: Vec<&str> = batch.lines().collect();
    let reordered = format!("{}\n{}\n{}\n", lines[1], lines[0], lines[2]);
    let report = check_stream(reordered.as_bytes(), 1 << 20);
    assert_eq!(report.stream, Some(StreamKind::Progress));
    assert!(!report.is_valid());
    assert_eq!(
        lines_of(&report),
        [("stream.kind", Some(2)), ("stream.kind", Some(3))]
    );
    let report = run_stream(reordered.as_bytes(), Options::default(), true, true);
    assert!(report.is_valid(), "{:#?}", report.findings);

    // No rule across lines: progress envelopes of several jobs, out of order, no terminal.
    let log = stream(
        &[progress(5, 90.0), progress(2, 10.0), progress(2, 10.0)],
        "\n",
    );
    for fast in [true, false] {
        let report = run_stream(&log, Options::default(), fast, true);
        assert!(report.is_valid(), "{:#?}", report.findings);
        assert_eq!(report.format, Some(FormatId::ProtocolV1));
        assert_eq!(report.formats, [FormatId::ProtocolV1]);
    }
    assert!(!check_stream(&log, 1 << 20).is_valid());

    // What a line breaks on its own still counts, with its line.
    let mut no_seq = progress(0, 10.0);
    no_seq["meta"].as_object_mut().unwrap().remove("seq");
    let log = stream(
        &[ok_envelope(), no_seq, progress(3, 150.0), json!({"x": 1})],
        "\n",
    );
    for fast in [true, false] {
        let report = run_stream(&log, Options::default(), fast, true);
        assert_eq!(
            lines_of(&report),
            [
                ("stream.seq", Some(2)),
                ("stream.pct", Some(3)),
                ("format.undetected", Some(4))
            ]
        );
    }

    // A job event among envelopes is protocol-v1's; a given format holds for every line.
    let log = format!(
        "{}\n{{\"ts\":\"2025-11-12T10:30:00Z\",\"message\":\"m\"}}\n",
        one_line(&ok_envelope())
    );
    let report = run_stream(log.as_bytes(), Options::default(), true, true);
    assert!(report.is_valid(), "{:#?}", report.findings);
    assert_eq!(report.formats, [FormatId::ProtocolV1]);
    let report = run_stream(
        batch.as_bytes(),
        options(Some(FormatId::Mcp), Profile::Spec),
        true,
        true,
    );
    assert!(!report.is_valid());
    assert!(report.findings.iter().all(|f| f.line.is_some()));
    assert_eq!(report.formats, [FormatId::Mcp]);

    // Empty.
    let report = run_stream(b"", Options::default(), true, true);
    assert_eq!(lines_of(&report), [("stream.empty", None)]);
}

/// Both stream paths agree with independent lines too, and every finding but those about
/// the whole stream has the number of a line of the stream.
#[test]
fn independent_lines_and_line_numbers_on_mutated_streams() {
    let mut g = common::Gen::new(0x11e5);
    for round in 0..300 {
        let lines = 1 + g.below(6) as i64;
        let mut text = String::new();
        for i in 0..lines {
            let line = match g.below(5) {
                0 => one_line(&ok_envelope()),
                1 => mixed_batch()
                    .lines()
                    .nth(g.below(3) as usize)
                    .unwrap()
                    .to_string(),
                _ => mutated_line(&mut g, i, i as f64 * 10.0),
            };
            text.push_str(&line);
            text.push('\n');
        }
        let count = text.lines().count() as u64;
        for profile in Profile::ALL {
            for format in [None, Some(FormatId::ProtocolV1)] {
                for independent in [false, true] {
                    let fast =
                        run_stream(text.as_bytes(), options(format, profile), true, independent);
                    let general = run_stream(
                        text.as_bytes(),
                        options(format, profile),
                        false,
                        independent,
                    );
                    assert_eq!(
                        fast.findings, general.findings,
                        "round {round}, {profile}, {format:?}, independent {independent}:\n{text}"
                    );
                    for f in &fast.findings {
                        if WHOLE_STREAM.contains(&f.rule) {
                            assert_eq!(f.line, None, "{f}");
                        } else {
                            assert!(
                                f.line.is_some_and(|l| (1..=count).contains(&l)),
                                "round {round}: {f} has no line of the stream\n{text}"
                            );
                        }
                    }
                }
            }
        }
    }
}

// ---- compat reads the text as Go's json.Unmarshal does (issue 12 item 11) ----

/// Each input's compat verdict is the shipped validator's: Go's `json.Unmarshal` into the
/// shipped types, then its rules. The Go error (or `<nil>`) is in each case's comment, as Go
/// 1.19 printed it for the shipped types.
#[test]
fn compat_refuses_what_go_refuses_and_reads_what_go_reads() {
    let ok = serde_json::to_string(&ok_envelope()).unwrap();
    assert!(ok.contains("\"duration_ms\":42") && ok.contains("\"version\":1,"));
    let with = |from: &str, to: &str| ok.replacen(from, to, 1).into_bytes();
    let cases: Vec<(&str, Vec<u8>, &[&str])> = vec![
        // invalid character 'ï' looking for beginning of value
        (
            "byte-order mark",
            [b"\xEF\xBB\xBF".as_slice(), ok.as_bytes()].concat(),
            &["text.bom"],
        ),
        // invalid character '{' after top-level value
        (
            "a second document",
            format!("{ok} {{}}").into_bytes(),
            &["text.trailing-data"],
        ),
        // invalid character 'x' after top-level value
        (
            "trailing garbage",
            format!("{ok}x").into_bytes(),
            &["text.trailing-data"],
        ),
        // invalid character '\x00' after top-level value
        (
            "trailing NUL",
            format!("{ok}\0").into_bytes(),
            &["text.trailing-data"],
        ),
        // <nil>
        (
            "trailing whitespace",
            format!("{ok} \n\t\r\n").into_bytes(),
            &[],
        ),
        // <nil> (read as U+FFFD)
        ("invalid UTF-8 in a string", invalid_utf8(&ok), &[]),
        // <nil> (read as U+FFFD)
        ("a lone surrogate", with("fs/ls", "fs/\\ud800ls"), &[]),
        ("a lone low surrogate", with("fs/ls", "fs/\\udc00ls"), &[]),
        // invalid character 'N' looking for beginning of value
        ("NaN", with("42", "NaN"), &["json.syntax"]),
        // invalid character 'I' looking for beginning of value
        ("Infinity", with("42", "Infinity"), &["json.syntax"]),
        // invalid character '+' looking for beginning of value
        ("a leading +", with("42", "+42"), &["json.syntax"]),
        // invalid character '4' after object key:value pair
        ("a leading zero", with("42", "042"), &["json.syntax"]),
        // invalid character '}' looking for beginning of object key string
        ("a trailing comma", with("{}}", "{},}"), &["json.syntax"]),
        // json: cannot unmarshal number 18446744073709551615 into Go struct field
        // Envelope.version of type int
        (
            "version beyond int64",
            with("\"version\":1", "\"version\":18446744073709551615"),
            &["pv1.type"],
        ),
        // json: cannot unmarshal number 9223372036854775808 into Go struct field
        // Meta.meta.duration_ms of type int64
        (
            "duration_ms beyond int64",
            with("42", "9223372036854775808"),
            &["pv1.type"],
        ),
        // <nil>
        (
            "duration_ms the largest int64",
            with("42", "9223372036854775807"),
            &[],
        ),
        // json: cannot unmarshal number 1e2 into Go struct field Envelope.version of type int
        ("an exponent", with("42", "4.2e1"), &["pv1.type"]),
        // <nil>: Go skips fields it does not know, whatever their type; the seed document's
        // meta.trace_id is one of them.
        (
            "trace_id of another type",
            with("\"source\"", "\"trace_id\":5,\"source\""),
            &[],
        ),
    ];
    for (what, bytes, expected) in &cases {
        let report = validate_document(bytes, &pv1(Profile::Compat));
        assert_eq!(
            rules_of(&report),
            *expected,
            "{what}: {:#?}",
            report.findings
        );
    }
    // trace_id is typed from strict on.
    let report = validate_document(
        &with("\"source\"", "\"trace_id\":5,\"source\""),
        &pv1(Profile::Strict),
    );
    assert_eq!(rules_of(&report), ["pv1.type"]);
}

/// A repeated key is read again by Go on top of what the earlier one filled: a struct is
/// merged field by field, `null` resets a pointer, slice or `data` and leaves anything else,
/// and a wrong JSON type anywhere fails the decode. Compat gives Go's verdicts; strict
/// reports the duplicate (or the key in another case), so every document compat finds
/// invalid stays invalid up the ladder.
#[test]
fn compat_reads_repeated_keys_as_go_does() {
    let ok = serde_json::to_string(&ok_envelope()).unwrap();
    let ts = "\"ts\":\"2026-05-12T12:34:56Z\"";
    let error = serde_json::to_string(&error_envelope()).unwrap();
    let cases: Vec<(&str, String, &[&str])> =
        vec![
        // The last of two scalars wins.
        (
            "status",
            ok.replacen("\"status\":\"ok\"", "\"status\":\"error\",\"status\":\"ok\"", 1),
            &[],
        ),
        // meta is merged: ts stays (last-wins would lose it).
        (
            "meta merged",
            ok.replacen(
                "\"error\":{}",
                "\"meta\":{\"source\":\"cache\",\"cache_key\":\"k\"},\"error\":{}",
                1,
            ),
            &[],
        ),
        // Keys in another case merge into the same struct.
        (
            "META merged",
            ok.replacen("\"error\":{}", "\"META\":{\"Runner\":\"exec\"},\"error\":{}", 1),
            &[],
        ),
        // null leaves a struct value and a string as they were.
        (
            "meta null",
            ok.replacen("\"error\":{}", "\"meta\":null,\"error\":{}", 1),
            &[],
        ),
        (
            "command null",
            ok.replacen("\"status\"", "\"command\":\"fs/ls\",\"command\":null,\"status\"", 1)
                .replacen("\"command\":\"fs/ls\",\"data\"", "\"data\"", 1),
            &[],
        ),
        // A pointer struct is merged, and reset by null.
        (
            "memory merged",
            ok.replacen(
                "\"source\":\"run\"",
                "\"source\":\"memory\",\"memory\":{\"name\":\"n\"},\"memory\":{\"type\":\"kv\"}",
                1,
            ),
            &[],
        ),
        (
            "memory reset",
            ok.replacen(
                "\"source\":\"run\"",
                "\"source\":\"memory\",\"memory\":{\"name\":\"n\",\"type\":\"kv\"},\"memory\":null",
                1,
            ),
            &["pv1.memory"],
        ),
        // error is merged: code from one, message from the other.
        (
            "error merged",
            error.replacen(
                "\"error\":{",
                "\"error\":{\"code\":\"EARG\"},\"error\":{",
                1,
            )
            .replacen("{\"code\":\"EARG\",\"message\"", "{\"message\"", 1),
            &[],
        ),
        // data is replaced whole: the artifact of the first is gone.
        (
            "data replaced",
            ok.replacen("\"data\":", "\"data\":{\"artifact\":\"md5:x\"},\"data\":", 1),
            &[],
        ),
        // A wrong type anywhere fails Go's decode, even when a later key is right...
        (
            "version \"1\" then 1",
            ok.replacen("\"version\":1", "\"version\":\"1\",\"version\":1", 1),
            &["pv1.type"],
        ),
        // ...or when the later one is wrong and the earlier one stays.
        (
            "version 1 then \"1\"",
            ok.replacen("\"version\":1", "\"version\":1,\"version\":\"1\"", 1),
            &["pv1.type"],
        ),
        (
            "ts 5 inside an earlier meta",
            ok.replacen("\"meta\":{", "\"meta\":{\"ts\":5},\"meta\":{", 1),
            &["pv1.type"],
        ),
        (
            "meta a string, then an object",
            ok.replacen("\"meta\":{", "\"meta\":\"m\",\"meta\":{", 1),
            &["pv1.type"],
        ),
    ];
    assert!(ok.contains(ts));
    for (what, text, expected) in &cases {
        assert!(text.len() > ok.len() - 20, "{what}: the case did not apply");
        let compat = validate_document(text.as_bytes(), &pv1(Profile::Compat));
        assert_eq!(
            rules_of(&compat),
            *expected,
            "{what}: {text}\n{:#?}",
            compat.findings
        );
        let strict = validate_document(text.as_bytes(), &pv1(Profile::Strict));
        let strict_rules = rules_of(&strict);
        assert!(
            strict_rules.contains(&"text.duplicate-key")
                || strict_rules.contains(&"pv1.unknown-field"),
            "{what}: {:#?}",
            strict.findings
        );
    }
    // The same verdicts on a stream line, through either path.
    let line = &cases[1].1;
    let bytes = format!("{}\n{line}\n", one_line(&progress(0, 0.0)));
    for fast in [true, false] {
        let report = run_stream(bytes.as_bytes(), pv1(Profile::Compat), fast, false);
        assert!(report.is_valid(), "{:#?}", report.findings);
    }
    // The stream rules read the line as the document rules do: meta.seq from an earlier meta.
    let split = one_line(&progress(1, 10.0)).replacen(
        "\"meta\":{\"ts\":\"2026-05-12T12:34:56Z\",\"seq\":1}",
        "\"meta\":{\"seq\":1},\"meta\":{\"ts\":\"2026-05-12T12:34:56Z\"}",
        1,
    );
    assert!(split.contains("{\"seq\":1}"), "{split}");
    let bytes = format!(
        "{}\n{split}\n{}\n",
        one_line(&progress(0, 0.0)),
        one_line(&ok_envelope())
    );
    for fast in [true, false] {
        let report = run_stream(bytes.as_bytes(), pv1(Profile::Compat), fast, false);
        assert!(report.is_valid(), "{:#?}", report.findings);
    }
    let strict = run_stream(bytes.as_bytes(), pv1(Profile::Strict), true, false);
    assert_eq!(
        lines_of(&strict),
        [("text.duplicate-key", Some(2)), ("stream.seq", Some(2))]
    );
}

/// Where compat still differs from Go, as docs/validation.md says: serde_json, which reads
/// the text, reads `-0` as the float -0.0 (Go: the integer 0), cannot hold a number beyond
/// the range of a double even where Go skips it (an unknown field), and nests at most 127
/// levels (Go: 10,000).
#[test]
fn compat_documented_differences_from_go() {
    let ok = serde_json::to_string(&ok_envelope()).unwrap();
    let with = |from: &str, to: &str| ok.replacen(from, to, 1).into_bytes();
    // (what, the document, the finding, what docs/validation.md says)
    let cases: [(&str, Vec<u8>, &str, &str); 3] = [
        ("-0", with("42", "-0"), "pv1.type", "`-0`"),
        (
            "1e400 in an unknown field",
            with("\"source\"", "\"extra\":1e400,\"source\""),
            "json.syntax",
            "`1e400`",
        ),
        (
            "200 levels in data",
            with(
                "\"entries\"",
                &format!(
                    "\"deep\":{}{},\"entries\"",
                    "[".repeat(200),
                    "]".repeat(200)
                ),
            ),
            "json.depth",
            "10,000 levels",
        ),
    ];
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/validation.md"),
    )
    .unwrap();
    for (what, bytes, rule, documented) in cases {
        let report = validate_document(&bytes, &pv1(Profile::Compat));
        assert_eq!(rules_of(&report), [rule], "{what}: {:#?}", report.findings);
        assert!(
            doc.contains(documented),
            "docs/validation.md does not mention {what} ({documented:?})"
        );
    }
}
