//! The MCP conformance suite (`@modelcontextprotocol/conformance`, server scenarios), run by
//! `scripts/conformance.sh` against the fixture upstream (`tests/fixtures/http/
//! conformance_server.py`) directly, then through our endpoints: every scenario that passes
//! directly must pass through them.
//!
//! - through the two HTTP transports of this crate, joined by a pass-through pipe (the HTTP
//!   server's sessions, each piped to the fixture over the HTTP client);
//! - through `envelope proxy --listen` in front of the fixture over stdio (the binary of
//!   envelope-cli, which `cargo test --workspace` builds first); the endpoint command can be
//!   replaced with `ENVELOPE_CONFORMANCE_ENDPOINT` (arguments split on spaces, `{port}` for
//!   the port).

mod http_support;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use envelope_mcp::transport::http_server::{
    self, DEFAULT_IDLE_TIMEOUT, ListenOptions, SessionStarter,
};
use envelope_mcp::transport::{Incoming, Link, http_client};
use http_support::{fixture, free_port, node, python, wait_for_port};
use serde_json::Value;

/// What the script reports.
#[derive(Debug)]
struct Summary {
    passed: BTreeSet<String>,
    failed: BTreeSet<String>,
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/conformance.sh")
}

/// Runs the suite with these script arguments (`--url URL` or `-- COMMAND...`).
async fn run_suite(args: &[String]) -> Summary {
    node(); // fails with the install hint when Node 22 is missing
    let output = tokio::process::Command::new("bash")
        .arg(script())
        .args(args)
        .kill_on_drop(true)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "conformance.sh failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let summary: Value = serde_json::from_str(stdout.trim()).expect("the script prints JSON");
    let names = |key: &str| -> BTreeSet<String> {
        summary[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_owned())
            .collect()
    };
    eprintln!("conformance {args:?}: {summary}");
    Summary {
        passed: names("passed"),
        failed: names("failed"),
    }
}

/// The fixture upstream run directly over HTTP: the baseline.
async fn baseline() -> Summary {
    let fixture = fixture("conformance_server.py")
        .to_string_lossy()
        .into_owned();
    let args: Vec<String> = ["--", python(), &fixture, "http", "{port}"]
        .map(str::to_owned)
        .into();
    let direct = run_suite(&args).await;
    // The scenarios the fixture exists for: if one of these fails, the fixture is broken.
    for scenario in [
        "server-initialize",
        "tools-call-simple-text",
        "tools-call-with-progress",
        "tools-call-sampling",
        "tools-call-elicitation",
        "resources-read-text",
        "prompts-get-with-args",
        "dns-rebinding-protection",
    ] {
        assert!(
            direct.passed.contains(scenario),
            "the fixture fails {scenario}: {direct:?}"
        );
    }
    direct
}

fn assert_passes_what_the_fixture_passes(direct: &Summary, through: &Summary) {
    let lost: Vec<&String> = direct.passed.difference(&through.passed).collect();
    assert!(
        lost.is_empty(),
        "pass directly but not through the endpoint: {lost:?}\n{through:?}"
    );
}

/// A session starter that pipes each client session to the upstream URL, frame for frame.
fn pipe_to(url: String) -> SessionStarter {
    Arc::new(move |client: Link, _| {
        let url = url.clone();
        tokio::spawn(async move {
            match http_client::connect(&url, &[]).await {
                Ok(upstream) => pipe(client, upstream).await,
                Err(error) => eprintln!("pipe: {error}"),
            }
        });
    })
}

async fn pipe(client: Link, upstream: Link) {
    let Link {
        inbound: mut from_client,
        outbound: to_client,
    } = client;
    let Link {
        inbound: mut from_upstream,
        outbound: to_upstream,
    } = upstream;
    let up = async move {
        while let Some(Incoming::Frame(frame)) = from_client.recv().await {
            if to_upstream.send(frame).await.is_err() {
                break;
            }
        }
    };
    let down = async move {
        while let Some(Incoming::Frame(frame)) = from_upstream.recv().await {
            if to_client.send(frame).await.is_err() {
                break;
            }
        }
    };
    // Either side gone ends both: dropping the senders closes the other side's session.
    tokio::select! { () = up => {}, () = down => {} }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_transports_pass_what_the_fixture_passes() {
    let direct = baseline().await;

    let port = free_port();
    let _upstream = tokio::process::Command::new(python())
        .arg(fixture("conformance_server.py"))
        .args(["http", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    wait_for_port(port, Duration::from_secs(30)).await;
    let options = ListenOptions {
        addr: "127.0.0.1:0".parse().unwrap(),
        tokens: Vec::new(),
        idle_timeout: DEFAULT_IDLE_TIMEOUT,
        limits: Default::default(),
    };
    let server = http_server::bind(options, pipe_to(format!("http://127.0.0.1:{port}/mcp")))
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.run());

    let through = run_suite(&[
        "--url".into(),
        format!("http://127.0.0.1:{}/mcp", addr.port()),
    ])
    .await;
    assert_passes_what_the_fixture_passes(&direct, &through);
    assert!(through.failed.is_empty(), "{through:?}");
}

/// `envelope proxy --listen` in front of the fixture over stdio, or the endpoint command in
/// `ENVELOPE_CONFORMANCE_ENDPOINT`.
fn proxy_endpoint(store: &std::path::Path) -> Vec<String> {
    if let Ok(command) = std::env::var("ENVELOPE_CONFORMANCE_ENDPOINT") {
        return command.split(' ').map(str::to_owned).collect();
    }
    // target/debug/deps/conformance-HASH -> target/debug/envelope
    let exe = std::env::current_exe().unwrap();
    let envelope = exe.parent().unwrap().parent().unwrap().join("envelope");
    assert!(
        envelope.exists(),
        "build the CLI first: cargo build -p envelope-cli ({} is missing)",
        envelope.display()
    );
    let fixture = fixture("conformance_server.py")
        .to_string_lossy()
        .into_owned();
    [
        envelope.to_string_lossy().as_ref(),
        "proxy",
        "--store",
        store.to_str().unwrap(),
        "--listen",
        "127.0.0.1:{port}",
        "--",
        python(),
        &fixture,
        "stdio",
    ]
    .iter()
    .map(|arg| arg.to_string())
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn envelope_proxy_passes_what_the_fixture_passes() {
    let direct = baseline().await;
    let store = tempfile::tempdir().unwrap();
    let mut args = vec!["--".to_owned()];
    args.extend(proxy_endpoint(store.path()));
    let through = run_suite(&args).await;
    assert_passes_what_the_fixture_passes(&direct, &through);
}
