//! The catalog against a real folder store and a real SQLite file.

use std::sync::Arc;

use envelope_store::{FileStore, Scoped, Store};
use serde_json::{Value, json};

use super::tools::{Caller, call_list, call_search};
use super::*;
use crate::drill;

struct Fixture {
    _dir: tempfile::TempDir,
    store: Arc<dyn Store>,
    catalog: Catalog,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FileStore::new(dir.path().join("store")));
    std::fs::create_dir_all(dir.path().join("store")).unwrap();
    let catalog = Catalog::for_store(dir.path().join("store").to_str().unwrap()).unwrap();
    Fixture {
        _dir: dir,
        store,
        catalog,
    }
}

impl Fixture {
    /// The store as `owner` sees it.
    fn view(&self, owner: Option<&str>) -> Arc<dyn Store> {
        match owner {
            Some(o) => Arc::new(Scoped::new(self.store.clone(), Some(o.to_string()))),
            None => self.store.clone(),
        }
    }

    /// Stores `result` as `owner` and indexes it; returns its digest.
    fn put(&self, owner: Option<&str>, tool: &str, result: &Value) -> Digest {
        let store = self.view(owner);
        let digest = store
            .put(result.to_string().as_bytes(), "application/json", &[])
            .unwrap()
            .digest;
        self.catalog.index(Job {
            store,
            digest,
            owner: owner.map(str::to_string),
            tool: tool.to_string(),
            arguments: Some(br#"{"b": 2, "a": [1, {"y": 1, "x": 0}]}"#.to_vec()),
            held: None,
        });
        digest
    }

    fn search(&self, owner: Option<&str>, arguments: Value) -> Value {
        let store = self.view(owner);
        let caller = Caller {
            catalog: &self.catalog,
            store: store.as_ref(),
            owner,
        };
        call_search(&arguments, &caller, 16 * 1024)
    }

    fn list(&self, owner: Option<&str>, arguments: Value, limit: usize) -> Value {
        let store = self.view(owner);
        let caller = Caller {
            catalog: &self.catalog,
            store: store.as_ref(),
            owner,
        };
        call_list(&arguments, &caller, limit)
    }
}

fn text(body: &str) -> Value {
    json!({"content": [{"type": "text", "text": body}]})
}

fn hits(answer: &Value) -> Vec<Value> {
    assert_eq!(answer.get("isError"), None, "{answer}");
    answer["structuredContent"]["hits"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn fts5_is_compiled_in() {
    let conn = Connection::open_in_memory().unwrap();
    let yes: i64 = conn
        .query_row("SELECT sqlite_compileoption_used('ENABLE_FTS5')", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(yes, 1);
}

#[test]
fn a_hit_names_the_line_its_context_and_where_to_read_on() {
    let f = fixture();
    let body = (0..500)
        .map(|i| match i {
            321 => "ERROR disk quota exceeded on /var".to_string(),
            _ => format!("line {i} all is well"),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let digest = f.put(None, "read_file", &text(&body));
    let answer = f.search(None, json!({"query": "quota"}));
    let hits = hits(&answer);
    assert_eq!(hits.len(), 1);
    let hit = &hits[0];
    assert_eq!(hit["uri"], drill::artifact_uri(&digest));
    assert_eq!(hit["pointer"], "/content/0/text");
    assert_eq!(hit["text"], "ERROR disk quota exceeded on /var");
    assert_eq!(hit["before"], "line 320 all is well");
    assert_eq!(hit["after"], "line 322 all is well");
    // The offset is the line's first character in the text.
    let offset = hit["offset"].as_u64().unwrap() as usize;
    let rest: String = body.chars().skip(offset).collect();
    assert!(rest.starts_with("ERROR disk quota"), "{rest:.40}");
    // The text mirrors the structured answer.
    let mirror: Value =
        serde_json::from_str(answer["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(mirror, answer["structuredContent"]);
}

#[test]
fn bm25_ranks_the_denser_match_first() {
    let f = fixture();
    let sparse = f.put(
        None,
        "t",
        &text("the kernel log has one panic in a very long line full of many other words here"),
    );
    let dense = f.put(None, "t", &text("panic panic: kernel panic"));
    let hits = hits(&f.search(None, json!({"query": "panic"})));
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0]["uri"], drill::artifact_uri(&dense));
    assert_eq!(hits[1]["uri"], drill::artifact_uri(&sparse));
    // All words must match; when none match together, any may.
    let answer = f.search(None, json!({"query": "kernel panic"}));
    assert_eq!(answer["structuredContent"]["matched"], "all");
    let answer = f.search(None, json!({"query": "kernel zebra"}));
    assert_eq!(answer["structuredContent"]["matched"], "any");
    assert_eq!(hits_of(&answer), 2);
}

fn hits_of(answer: &Value) -> usize {
    hits(answer).len()
}

#[test]
fn records_are_hits_at_their_item_index() {
    let f = fixture();
    let rows: Vec<Value> = (0..50)
        .map(|i| json!({"id": i, "name": if i == 37 { "zanzibar" } else { "plain" }}))
        .collect();
    let structured = json!({"rows": rows});
    let result = json!({
        "content": [{"type": "text", "text": structured.to_string()}],
        "structuredContent": structured,
    });
    f.put(None, "query", &result);
    let hits = hits(&f.search(None, json!({"query": "zanzibar"})));
    assert_eq!(hits.len(), 1, "the mirror text is not indexed twice");
    assert_eq!(hits[0]["pointer"], "/structuredContent/rows");
    assert_eq!(hits[0]["offset"], 37);
    assert_eq!(hits[0]["text"], r#"{"id":37,"name":"zanzibar"}"#);
    assert!(hits[0].get("before").is_none());
}

#[test]
fn each_owner_sees_only_its_own_results() {
    let f = fixture();
    f.put(Some("alice"), "t", &text("alice secret plan"));
    f.put(Some("bob"), "t", &text("bob secret plan"));
    let alice = hits(&f.search(Some("alice"), json!({"query": "secret"})));
    assert_eq!(alice.len(), 1);
    assert_eq!(alice[0]["text"], "alice secret plan");
    assert_eq!(
        hits_of(&f.search(Some("bob"), json!({"query": "alice"}))),
        0
    );
    let listed = f.list(Some("bob"), json!({}), 16384);
    let results = listed["structuredContent"]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["summary"], "1 line: bob secret plan");
    // Another owner's result named by URI: the same answer as one never stored.
    let bob_uri = results[0]["uri"].as_str().unwrap();
    let answer = f.search(Some("alice"), json!({"query": "secret", "uri": bob_uri}));
    assert_eq!(answer["isError"], true);
    assert!(
        answer["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("is not in the store")
    );
    // No owner (no tokens): everything.
    assert_eq!(hits_of(&f.search(None, json!({"query": "secret"}))), 2);
    // The same result stored by both: one text indexed, each sees it once.
    f.put(Some("alice"), "t", &text("shared words"));
    f.put(Some("bob"), "t", &text("shared words"));
    assert_eq!(
        hits_of(&f.search(Some("alice"), json!({"query": "shared"}))),
        1
    );
    assert_eq!(
        hits_of(&f.search(Some("bob"), json!({"query": "shared"}))),
        1
    );
}

#[test]
fn odd_queries_are_words_or_clear_errors() {
    let f = fixture();
    f.put(
        None,
        "t",
        &text("a \"quoted\" NEAR(x) col:umn AND or -minus x*y"),
    );
    for query in [
        "NEAR(",
        "col:umn",
        "\"unbalanced",
        "AND",
        "-minus",
        "x*y",
        "^start",
        "a\"b",
        "quoted\"",
        "'single'",
    ] {
        let answer = f.search(None, json!({"query": query}));
        assert_eq!(answer.get("isError"), None, "{query}: {answer}");
    }
    assert_eq!(hits_of(&f.search(None, json!({"query": "NEAR("}))), 1);
    assert_eq!(hits_of(&f.search(None, json!({"query": "col:umn"}))), 1);
    assert_eq!(hits_of(&f.search(None, json!({"query": "qu*"}))), 1);
    for (arguments, says) in [
        (json!({"query": "--- !!"}), "no word to search for"),
        (json!({"query": "{}[]()"}), "no word to search for"),
        (json!({"query": ""}), "`query` is missing"),
        (json!({}), "`query` is missing"),
        (json!({"query": 7}), "must be a string"),
        (json!({"query": "x", "limit": 0}), "from 1 to 50"),
        (
            json!({"query": "x", "uri": "file:///etc"}),
            "not an artifact URI",
        ),
        (
            json!({"query": "x", "pattern": "y"}),
            "has no argument \"pattern\"",
        ),
        (json!({"query": "x".repeat(1001)}), "over 1000 characters"),
        (json!([1]), "must be an object"),
    ] {
        let answer = f.search(None, arguments.clone());
        assert_eq!(answer["isError"], true, "{arguments}");
        let text = answer["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(says), "{arguments}: {text}");
    }
}

#[test]
fn unicode_words_and_offsets() {
    let f = fixture();
    let body = "日本語のテキスト\nCafé crème brûlée\nПривет мир 🌍\nemoji 🎉 party";
    f.put(None, "t", &text(body));
    for (query, line) in [
        ("cafe", "Café crème brûlée"),
        ("BRÛLÉE", "Café crème brûlée"),
        ("привет", "Привет мир 🌍"),
        ("日本語のテキスト", "日本語のテキスト"),
        ("party", "emoji 🎉 party"),
    ] {
        let hits = hits(&f.search(None, json!({"query": query})));
        assert_eq!(hits.len(), 1, "{query}");
        assert_eq!(hits[0]["text"], line);
        let offset = hits[0]["offset"].as_u64().unwrap() as usize;
        let rest: String = body.chars().skip(offset).collect();
        assert!(rest.starts_with(line), "{query}: offset {offset}");
    }
}

#[test]
fn list_is_newest_first_and_pages_within_the_limit() {
    let f = fixture();
    let mut digests = Vec::new();
    for i in 0..30 {
        digests.push(f.put(
            Some("o"),
            &format!("tool{i}"),
            &text(&format!("result {i}")),
        ));
    }
    let answer = f.list(Some("o"), json!({"limit": 5}), 16384);
    let page = &answer["structuredContent"];
    assert_eq!(page["total"], 30);
    assert_eq!(page["next_offset"], 5);
    let first = &page["results"][0];
    assert_eq!(first["tool"], "tool29");
    assert_eq!(first["uri"], drill::artifact_uri(&digests[29]));
    assert_eq!(first["kind"], "text");
    assert_eq!(first["size"], text("result 29").to_string().len());
    // The digest of the canonical arguments (keys sorted), never the arguments.
    assert_eq!(
        first["arguments_digest"],
        Digest::of(br#"{"a":[1,{"x":0,"y":1}],"b":2}"#).to_string()
    );
    let answer = f.list(Some("o"), json!({"offset": 25}), 16384);
    let page = &answer["structuredContent"];
    assert_eq!(page["results"].as_array().unwrap().len(), 5);
    assert_eq!(page["results"][4]["tool"], "tool0");
    assert_eq!(page["next_offset"], Value::Null);
    // A small limit: fewer entries, and next_offset where the answer stopped.
    let answer = f.list(Some("o"), json!({}), 1500);
    assert!(answer.to_string().len() <= 1500);
    let shown = answer["structuredContent"]["results"]
        .as_array()
        .unwrap()
        .len();
    assert!((1..20).contains(&shown), "{shown}");
    assert_eq!(answer["structuredContent"]["next_offset"], shown);
    let answer = f.list(Some("o"), json!({"limit": "x"}), 16384);
    assert_eq!(answer["isError"], true);
}

#[test]
fn search_answers_fit_the_limit() {
    let f = fixture();
    let body = (0..200)
        .map(|i| format!("needle {i} {}", "hay ".repeat(80)))
        .collect::<Vec<_>>()
        .join("\n");
    f.put(None, "t", &text(&body));
    let store = f.view(None);
    let caller = Caller {
        catalog: &f.catalog,
        store: store.as_ref(),
        owner: None,
    };
    for limit in [256, 1000, 4096, 16384] {
        let answer = call_search(&json!({"query": "needle", "limit": 50}), &caller, limit);
        assert!(answer.to_string().len() <= limit, "{limit}");
        if limit >= 1000 {
            assert!(!hits(&answer).is_empty(), "{limit}");
            assert_eq!(answer["structuredContent"]["more"], true);
        }
    }
}

#[test]
fn evicted_results_leave_list_and_search() {
    let f = fixture();
    let gone = f.put(None, "t", &text("ephemeral words"));
    f.put(None, "t", &text("lasting words"));
    assert_eq!(hits_of(&f.search(None, json!({"query": "words"}))), 2);
    f.store.remove(&gone).unwrap();
    let hits = hits(&f.search(None, json!({"query": "words"})));
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["text"], "lasting words");
    f.catalog.flush();
    let (entries, total) = f.catalog.list(None, 10, 0).unwrap();
    assert_eq!((entries.len(), total), (1, 1), "forgotten by the catalog");
}

#[test]
fn the_catalog_file_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FileStore::new(dir.path()));
    let digest = store
        .put(
            text("persisted line").to_string().as_bytes(),
            "application/json",
            &[],
        )
        .unwrap()
        .digest;
    {
        let catalog = Catalog::for_store(dir.path().to_str().unwrap()).unwrap();
        catalog.index(Job {
            store: store.clone(),
            digest,
            owner: None,
            tool: "t".into(),
            arguments: None,
            held: None,
        });
        catalog.flush();
    }
    assert!(dir.path().join(FILE_NAME).is_file());
    let catalog = Catalog::for_store(dir.path().to_str().unwrap()).unwrap();
    let found = catalog
        .search(None, &Terms::parse("persisted").unwrap(), None, 5)
        .unwrap();
    assert_eq!(found.hits.len(), 1);
    // A folder that cannot hold it: a clear error naming the file.
    let error = Catalog::for_store("/proc/no-such-dir/store")
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("catalog.sqlite3 cannot be opened"),
        "{error}"
    );
}

/// Lines `0..n` of a log: line `i` says `beacon` once, or three times (a denser BM25
/// match) when `dense(i)`; `filler` words around it.
fn beacon_log(n: usize, dense: impl Fn(usize) -> bool) -> String {
    (0..n)
        .map(|i| match dense(i) {
            true => format!("line {i} beacon beacon beacon"),
            false => format!("line {i} beacon among many other filler words of this line"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn texts(hits: &[Value]) -> Vec<String> {
    hits.iter()
        .map(|h| h["text"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn under_the_rank_cap_the_hits_are_those_of_an_uncapped_search() {
    let f = fixture();
    f.put(None, "t", &text(&beacon_log(40, |i| i % 7 == 3)));
    f.put(None, "t", &text(&beacon_log(25, |i| i == 11)));
    let query = json!({"query": "beacon", "limit": 20});
    f.catalog.set_rank_cap(usize::MAX);
    let uncapped = f.search(None, query.clone());
    // 65 matching lines: a cap of 65 (exactly the matches) or more ranks them all.
    for cap in [65, 66, 1000] {
        f.catalog.set_rank_cap(cap);
        let capped = f.search(None, query.clone());
        assert_eq!(capped, uncapped, "cap {cap}");
        assert_eq!(capped["structuredContent"].get("ranked"), None, "cap {cap}");
    }
    // And the dense lines (7 of the first result, 1 of the second) are first.
    let texts = texts(&hits(&uncapped));
    assert_eq!(texts.len(), 20);
    assert!(
        texts[..7]
            .iter()
            .all(|t| t.ends_with("beacon beacon beacon")),
        "{texts:?}"
    );
}

#[test]
fn over_the_rank_cap_the_best_of_the_newest_lines_and_the_answer_says_so() {
    let f = fixture();
    // The older result has the densest lines; the newer one a single dense line (its 45th).
    f.put(None, "t", &text(&beacon_log(30, |i| i < 5)));
    f.put(None, "t", &text(&beacon_log(50, |i| i == 45)));
    f.catalog.set_rank_cap(20);
    let answer = f.search(None, json!({"query": "beacon", "limit": 5}));
    let shown = texts(&hits(&answer));
    // The newest 20 matching lines are lines 30..50 of the newer result: its dense line
    // first, then others of those 20, none of the older result.
    assert_eq!(shown[0], "line 45 beacon beacon beacon", "{shown:?}");
    for text in &shown {
        let line: usize = text.split(' ').nth(1).unwrap().parse().unwrap();
        assert!(line >= 30, "{text} is not among the newest 20 matches");
    }
    assert_eq!(
        answer["structuredContent"]["ranked"],
        "the newest 20 of 80 matching lines (the hits are the best of these by BM25; more words, a phrase or a uri narrow the search)"
    );
    assert_eq!(answer["structuredContent"]["more"], true);
    // The mirror in the text block carries it too.
    let mirror: Value =
        serde_json::from_str(answer["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(mirror, answer["structuredContent"]);
    // Without the cap the older result's dense lines win.
    f.catalog.set_rank_cap(usize::MAX);
    let all = texts(&hits(
        &f.search(None, json!({"query": "beacon", "limit": 5})),
    ));
    assert!(all.iter().any(|t| t.starts_with("line 0 ")), "{all:?}");
}

#[test]
fn the_rank_cap_counts_only_the_lines_the_caller_may_see() {
    let f = fixture();
    let alice = f.put(Some("alice"), "t", &text(&beacon_log(30, |_| false)));
    f.put(Some("bob"), "t", &text(&beacon_log(100, |i| i % 2 == 0)));
    f.put(Some("alice"), "t", &text(&beacon_log(12, |i| i == 3)));
    f.catalog.set_rank_cap(10);
    let answer = f.search(Some("alice"), json!({"query": "beacon"}));
    let ranked = answer["structuredContent"]["ranked"].as_str().unwrap();
    assert!(
        ranked.starts_with("the newest 10 of 42 matching lines"),
        "{ranked}"
    );
    // Bob's denser lines are neither counted nor shown.
    assert!(
        texts(&hits(&answer))
            .iter()
            .all(|t| !t.ends_with("beacon beacon beacon") || t.starts_with("line 3 "))
    );
    // One result: only its lines count.
    let uri = drill::artifact_uri(&alice);
    let answer = f.search(Some("alice"), json!({"query": "beacon", "uri": uri}));
    let ranked = answer["structuredContent"]["ranked"].as_str().unwrap();
    assert!(
        ranked.starts_with("the newest 10 of 30 matching lines"),
        "{ranked}"
    );
    assert!(hits(&answer).iter().all(|h| h["uri"] == uri));
    // Under the cap within the result: no `ranked`, and every hit from that result.
    f.catalog.set_rank_cap(30);
    let answer = f.search(Some("alice"), json!({"query": "beacon", "uri": uri}));
    assert_eq!(answer["structuredContent"].get("ranked"), None, "{answer}");
    // Bob's 100 lines counted for bob (and nobody's for a query of no match).
    f.catalog.set_rank_cap(10);
    let answer = f.search(Some("bob"), json!({"query": "beacon"}));
    let ranked = answer["structuredContent"]["ranked"].as_str().unwrap();
    assert!(
        ranked.starts_with("the newest 10 of 100 matching lines"),
        "{ranked}"
    );
    assert_eq!(
        hits_of(&f.search(Some("carol"), json!({"query": "beacon"}))),
        0
    );
}

#[test]
fn counts_read_with_thousands_and_the_tool_names_the_cap() {
    assert_eq!(tools::thousands(0), "0");
    assert_eq!(tools::thousands(999), "999");
    assert_eq!(tools::thousands(5000), "5,000");
    assert_eq!(tools::thousands(183_211), "183,211");
    assert_eq!(tools::thousands(1_000_000), "1,000,000");
    let description = tools::search_tool()["description"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        description.contains(&format!("newest {} are shown", tools::thousands(RANK_CAP))),
        "{description}"
    );
}

#[test]
fn a_count_stopped_at_its_cap_still_ranks_the_newest_lines() {
    let f = fixture();
    f.put(None, "t", &text(&beacon_log(60, |i| i == 2)));
    f.put(None, "t", &text(&beacon_log(40, |i| i == 37)));
    f.catalog.set_rank_cap(10);
    f.catalog.set_count_cap(25);
    let answer = f.search(None, json!({"query": "beacon", "limit": 3}));
    let ranked = answer["structuredContent"]["ranked"].as_str().unwrap();
    assert!(
        ranked.starts_with("the newest 10 of more than 25 matching lines"),
        "{ranked}"
    );
    // The newest 10 are lines 30..40 of the newer result, its dense line 37 first.
    let shown = texts(&hits(&answer));
    assert_eq!(shown[0], "line 37 beacon beacon beacon", "{shown:?}");
    for text in &shown {
        let line: usize = text.split(' ').nth(1).unwrap().parse().unwrap();
        assert!(line >= 30, "{text} is not among the newest 10 matches");
    }
}

/// A job that holds the stored bytes is indexed from them, not from the store (here the
/// artifact is gone from the store before the catalog's thread gets to it: read back, it
/// would fail); a job queued while another holds bytes lets its own go and reads the store;
/// every held job, once done, frees its place.
#[test]
fn held_bytes_are_indexed_without_reading_the_store_back() {
    let f = fixture();
    let result = text("first line\nthe held needle\nlast line");
    let bytes = result.to_string().into_bytes();
    let digest = f.store.put(&bytes, "application/json", &[]).unwrap().digest;
    f.store.remove(&digest).unwrap();
    let len = bytes.len();
    f.catalog.index(Job {
        store: f.store.clone(),
        digest,
        owner: None,
        tool: "held".into(),
        arguments: None,
        held: Some(crate::held::Held::new(bytes, 0..len)),
    });
    f.catalog.flush();
    let found = f
        .catalog
        .search(None, &Terms::parse("needle").unwrap(), None, 5)
        .unwrap();
    assert_eq!(found.hits.len(), 1, "{found:?}");
    assert_eq!(found.hits[0].digest, digest.to_string());
    assert_eq!(f.catalog.inner.holding.load(Ordering::SeqCst), 0);

    // Without its bytes and without the artifact, there is nothing to index.
    let gone = text("a gone haystack");
    let gone_bytes = gone.to_string().into_bytes();
    let gone_digest = f
        .store
        .put(&gone_bytes, "application/json", &[])
        .unwrap()
        .digest;
    f.store.remove(&gone_digest).unwrap();
    f.catalog.index(Job {
        store: f.store.clone(),
        digest: gone_digest,
        owner: None,
        tool: "gone".into(),
        arguments: None,
        held: None,
    });
    f.catalog.flush();
    let found = f
        .catalog
        .search(None, &Terms::parse("haystack").unwrap(), None, 5)
        .unwrap();
    assert!(found.hits.is_empty(), "{found:?}");

    // The bound: with one job holding bytes, the next lets its own go (and is read from
    // the store, where it is).
    f.catalog.inner.holding.store(HELD_JOBS, Ordering::SeqCst);
    let third = text("read back from the store");
    let third_bytes = third.to_string().into_bytes();
    let third_digest = f
        .store
        .put(&third_bytes, "application/json", &[])
        .unwrap()
        .digest;
    let len = third_bytes.len();
    let held = crate::held::Held::new(third_bytes, 0..len);
    f.catalog.index(Job {
        store: f.store.clone(),
        digest: third_digest,
        owner: None,
        tool: "third".into(),
        arguments: None,
        held: Some(held.clone()),
    });
    f.catalog.flush();
    assert_eq!(Arc::strong_count(&held), 1, "the job let its bytes go");
    assert_eq!(f.catalog.inner.holding.load(Ordering::SeqCst), HELD_JOBS);
    let found = f
        .catalog
        .search(None, &Terms::parse("store").unwrap(), None, 5)
        .unwrap();
    assert_eq!(found.hits.len(), 1, "{found:?}");
}
