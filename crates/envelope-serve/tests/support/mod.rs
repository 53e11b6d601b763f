//! A registry of small operations, a service over it with a store in a temporary folder,
//! and an MCP client speaking to `envelope_serve::mcp::run` over an in-memory pipe.
#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use envelope_mcp::stats::Stats;
use envelope_mcp::transport::stdio;
use envelope_ops::{
    AccessControl, CallError, HandlerError, Identity, OperationSpec, OperationType, Registry,
    handler_fn, subscription_fn,
};
use envelope_serve::dispatch::Dispatch;
use envelope_serve::service::{Service, Settings};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A secret the big operation returns: it must never reach a client.
pub const SECRET: &str = "ghp_0123456789abcdefghijklmnopqrstuvwxyz";

/// Set when a `slow.wait` call is stopped before it finishes.
#[derive(Default, Clone)]
pub struct Flags {
    pub stopped: Arc<AtomicBool>,
}

struct SetOnDrop(Arc<AtomicBool>, bool);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        if !self.1 {
            self.0.store(true, Ordering::SeqCst);
        }
    }
}

fn op(registry: &mut Registry, spec: OperationSpec, handler: Box<dyn envelope_ops::Handler>) {
    registry.register(spec, handler).unwrap();
}

/// The operations the tests call.
pub fn registry(flags: &Flags) -> Registry {
    let mut registry = Registry::new();

    let mut stat = OperationSpec::new("files", "stat", OperationType::Query);
    stat.description = "Size of a file".into();
    stat.input_schema = json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": false});
    stat.output_schema = json!({"type": "object", "properties": {"size": {"type": "integer"}, "path": {"type": "string"}}, "required": ["size"]});
    op(
        &mut registry,
        stat,
        handler_fn(|input: Value, _| async move {
            Ok::<_, HandlerError>(json!({"size": 3, "path": input["path"]}))
        }),
    );

    let mut delete = OperationSpec::new("files", "delete", OperationType::Mutation);
    delete.access_control = AccessControl {
        required_scopes: vec!["files:write".into()],
        ..AccessControl::default()
    };
    op(
        &mut registry,
        delete,
        handler_fn(|_, _| async { Ok::<_, HandlerError>(json!({"deleted": true})) }),
    );

    let mut upper = OperationSpec::new("text", "upper", OperationType::Query);
    upper.input_schema = json!({"type": "string"});
    upper.output_schema = json!({"type": "string"});
    op(
        &mut registry,
        upper,
        handler_fn(|input: Value, _| async move {
            Ok::<_, HandlerError>(json!(input.as_str().unwrap_or_default().to_uppercase()))
        }),
    );

    let mut big = OperationSpec::new("data", "big", OperationType::Query);
    big.input_schema = json!({"type": "object", "properties": {"rows": {"type": "integer"}}});
    big.output_schema =
        json!({"type": "object", "properties": {"rows": {"type": "array"}}, "required": ["rows"]});
    op(
        &mut registry,
        big,
        handler_fn(|input: Value, _| async move {
            let count = input["rows"].as_u64().unwrap_or(2000);
            let rows: Vec<Value> = (0..count)
                .map(|i| json!({"id": i, "name": format!("row number {i}"), "token": SECRET}))
                .collect();
            Ok::<_, HandlerError>(json!({ "rows": rows }))
        }),
    );

    let stopped = flags.stopped.clone();
    let mut wait = OperationSpec::new("slow", "wait", OperationType::Query);
    wait.input_schema = json!({"type": "object", "properties": {"ms": {"type": "integer"}}});
    op(
        &mut registry,
        wait,
        handler_fn(move |input: Value, _| {
            let stopped = stopped.clone();
            async move {
                let mut guard = SetOnDrop(stopped, false);
                let ms = input["ms"].as_u64().unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                guard.1 = true;
                Ok::<_, HandlerError>(json!({"waited": ms}))
            }
        }),
    );

    let ticks = OperationSpec::new("clock", "ticks", OperationType::Subscription);
    op(
        &mut registry,
        ticks,
        subscription_fn(|input: Value, _| {
            let count = input["count"].as_u64().unwrap_or(3);
            futures::stream::iter((1..=count).map(|i| Ok::<_, HandlerError>(json!({"tick": i}))))
        }),
    );

    let mut person = OperationSpec::new("people", "add", OperationType::Mutation);
    person.input_schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"type": "object", "properties": {"city": {"type": "string"}}}},
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
        "additionalProperties": false
    });
    op(
        &mut registry,
        person,
        handler_fn(|input: Value, _| async move { Ok::<_, HandlerError>(input) }),
    );

    let failing = OperationSpec::new("fail", "always", OperationType::Mutation);
    op(
        &mut registry,
        failing,
        handler_fn(|_, _| async {
            Err::<Value, _>(HandlerError::Call(
                CallError::new("BROKEN", "it broke; password=hunter2-very-secret").with_details(
                    json!({"stderr": "token: ghp_0123456789abcdefghijklmnopqrstuvwxyz"}),
                ),
            ))
        }),
    );
    registry
}

/// Settings with a store in `dir`.
pub fn settings(dir: &std::path::Path, limit: usize) -> Settings {
    Settings {
        limit,
        tokens: None,
        redact: true,
        timeout: Duration::from_secs(30),
        idle_timeout: Duration::from_secs(5),
        store: Arc::new(envelope_store::FileStore::new(dir.join("store"))),
        policy: Default::default(),
        managed: None,
        catalog: None,
    }
}

/// A service over [`registry`], calls in process.
pub fn service(dir: &std::path::Path, limit: usize, flags: &Flags) -> Arc<Service> {
    let dispatch = Dispatch::local(Arc::new(registry(flags)));
    Arc::new(Service::new(dispatch, settings(dir, limit), Arc::new(Stats::default())).unwrap())
}

/// An MCP client of one `mcp::run` session over an in-memory pipe.
pub struct Client {
    writer: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    /// Notifications read while waiting for a response.
    pub notifications: Vec<Value>,
}

impl Client {
    /// A session of `service` as `identity`.
    pub fn start(service: Arc<Service>, identity: Option<Identity>) -> Client {
        let (client_side, server_side) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_side);
        let (link, _written) = stdio::link(server_read, server_write);
        tokio::spawn(envelope_serve::mcp::run(link, service, identity));
        let (read, writer) = tokio::io::split(client_side);
        Client {
            writer,
            lines: BufReader::new(read).lines(),
            notifications: Vec::new(),
        }
    }

    pub async fn send(&mut self, message: &Value) {
        self.send_raw(&message.to_string()).await;
    }

    pub async fn send_raw(&mut self, line: &str) {
        self.writer.write_all(line.as_bytes()).await.unwrap();
        self.writer.write_all(b"\n").await.unwrap();
    }

    /// The next message, within 10 s.
    pub async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("an answer within 10 s")
            .unwrap()
            .expect("the session is open");
        serde_json::from_str(&line).unwrap()
    }

    /// The next message, or `None` when nothing comes within `wait`.
    pub async fn maybe_next(&mut self, wait: Duration) -> Option<Value> {
        let line = tokio::time::timeout(wait, self.lines.next_line())
            .await
            .ok()?
            .ok()??;
        Some(serde_json::from_str(&line).unwrap())
    }

    /// Sends a request and returns its response (notifications before it are kept).
    pub async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let message = self.next().await;
            if message.get("id") == Some(&json!(id)) {
                return message;
            }
            self.notifications.push(message);
        }
    }

    /// `initialize` at `revision`, then `notifications/initialized`.
    pub async fn initialize(&mut self, revision: &str) -> Value {
        let params = json!({"protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}});
        let answer = self.request(0, "initialize", params).await;
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        answer
    }

    /// The stored result `resources/read` of `uri` gives (its text parsed).
    pub async fn read_stored(&mut self, id: u64, uri: &str) -> Value {
        let read = self
            .request(id, "resources/read", json!({ "uri": uri }))
            .await;
        let text = read["result"]["contents"][0]["text"].as_str();
        serde_json::from_str(text.unwrap_or_else(|| panic!("no text: {read}"))).unwrap()
    }

    /// `tools/call` of `name` with `arguments`: the response.
    pub async fn call(&mut self, id: u64, name: &str, arguments: Value) -> Value {
        self.request(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        )
        .await
    }
}

/// The URI of a result's first `resource_link` block.
pub fn link_uri(result: &Value) -> Option<String> {
    result["content"]
        .as_array()?
        .iter()
        .find(|block| block["type"] == "resource_link")?["uri"]
        .as_str()
        .map(str::to_owned)
}
