//! The resources and prompts of the registry's MCP servers, relayed under their source's
//! namespace so that two servers never clash and every request finds its server again.
//!
//! - A resource URI (or URI template) `U` of `mcpServers.<ns>` is listed as
//!   `envelope+mcp://<ns>/U`, its `name` as `<ns>/name`; `resources/read` of that URI reads `U`
//!   from that server (the contents' URIs namespaced the same way).
//! - A prompt `p` is listed as `<ns>_p` (the rule of tool names); `prompts/get` of that name
//!   gets `p` from that server.
//! - A source's `accessControl` guards its resources and prompts as it guards its tools:
//!   a caller it refuses does not see them listed, and reading or getting one answers as
//!   for one that does not exist.
//! - Lists gather every page of every server (servers without resources or prompts, or that
//!   fail, are skipped with a log line) into one page.
//!
//! Results are relayed as the servers give them; they are not shaped (as the proxy relays
//! them). A server's own subscription to resource updates is not relayed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use envelope_mcp::drill;
use envelope_mcp::message::code;
use envelope_mcp::stats::log;
use envelope_ops::mcp::connection::Failure;
use envelope_ops::relay::RelayTarget;
use envelope_ops::{Identity, Registry};
use serde_json::{Value, json};

use crate::tool_name;

/// The scheme of relayed resource URIs.
pub const SCHEME: &str = "envelope+mcp://";

/// Pages of one list followed at most per server.
const MAX_PAGES: usize = 100;

/// A JSON-RPC error: code and message.
pub type RpcFailure = (i64, String);

/// The relay of one registry's MCP servers.
#[derive(Default)]
pub struct Relayed {
    /// Listed prompt names to their server's namespace and own name (filled by listing).
    prompts: Mutex<HashMap<String, (String, String)>>,
}

/// `envelope+mcp://<ns>/<uri>`.
pub fn namespaced_uri(namespace: &str, uri: &str) -> String {
    format!("{SCHEME}{namespace}/{uri}")
}

/// The namespace and the server's own URI of a relayed URI.
///
/// ```
/// use envelope_serve::relayed::{namespaced_uri, split_uri};
/// let uri = namespaced_uri("everything", "test://static/resource/1");
/// assert_eq!(split_uri(&uri), Some(("everything", "test://static/resource/1")));
/// assert_eq!(split_uri("file:///etc/passwd"), None);
/// ```
pub fn split_uri(uri: &str) -> Option<(&str, &str)> {
    uri.strip_prefix(SCHEME)?
        .split_once('/')
        .filter(|(ns, rest)| !ns.is_empty() && !rest.is_empty())
}

/// The server of `namespace`, when `identity` may use it.
fn server<'a>(
    registry: &'a Registry,
    namespace: &str,
    identity: Option<&Identity>,
) -> Option<&'a Arc<dyn RelayTarget>> {
    registry
        .mcp_servers()
        .iter()
        .find(|s| s.namespace() == namespace)
        .filter(|s| s.allows(identity))
}

fn failure(f: Failure) -> RpcFailure {
    match f {
        Failure::Rpc { code, message, .. } => (code, message),
        other => (code::INTERNAL_ERROR, other.to_string()),
    }
}

impl Relayed {
    /// Every item of `key` in every page of `method` of every server, each rewritten by
    /// `rewrite(namespace, item)`.
    async fn gather(
        registry: &Registry,
        identity: Option<&Identity>,
        method: &str,
        key: &str,
        mut rewrite: impl FnMut(&str, &mut Value),
    ) -> Vec<Value> {
        let mut all = Vec::new();
        for server in registry.mcp_servers().iter().filter(|s| s.allows(identity)) {
            let mut cursor: Option<Value> = None;
            for _ in 0..MAX_PAGES {
                let params = cursor
                    .as_ref()
                    .map_or_else(|| json!({}), |c| json!({ "cursor": c }));
                let page = match server.request(method, params).await {
                    Ok(page) => page,
                    Err(e) => {
                        log::debug(
                            "serve.relay_list_skipped",
                            &[
                                ("source", server.namespace().into()),
                                ("method", method.into()),
                                ("error", e.to_string().into()),
                            ],
                        );
                        break;
                    }
                };
                for mut item in page[key].as_array().cloned().unwrap_or_default() {
                    rewrite(server.namespace(), &mut item);
                    all.push(item);
                }
                match page.get("nextCursor") {
                    Some(next) if !next.is_null() && Some(next) != cursor.as_ref() => {
                        cursor = Some(next.clone())
                    }
                    _ => break,
                }
            }
        }
        all
    }

    /// `resources/list`: every server's resources, namespaced.
    pub async fn resources(&self, registry: &Registry, identity: Option<&Identity>) -> Value {
        let resources = Self::gather(
            registry,
            identity,
            "resources/list",
            "resources",
            |ns, item| {
                namespace_member(item, "uri", |uri| namespaced_uri(ns, uri));
                namespace_member(item, "name", |name| format!("{ns}/{name}"));
            },
        )
        .await;
        json!({ "resources": resources })
    }

    /// `resources/templates/list`: the artifact template, then every server's templates.
    pub async fn templates(&self, registry: &Registry, identity: Option<&Identity>) -> Value {
        let mut templates = vec![drill::resource_template()];
        templates.extend(
            Self::gather(
                registry,
                identity,
                "resources/templates/list",
                "resourceTemplates",
                |ns, item| {
                    namespace_member(item, "uriTemplate", |uri| namespaced_uri(ns, uri));
                    namespace_member(item, "name", |name| format!("{ns}/{name}"));
                },
            )
            .await,
        );
        json!({ "resourceTemplates": templates })
    }

    /// `resources/read` of a relayed URI.
    ///
    /// # Errors
    ///
    /// -32002 for a URI of no server; the server's own error otherwise.
    pub async fn read(
        &self,
        registry: &Registry,
        identity: Option<&Identity>,
        uri: &str,
    ) -> Result<Value, RpcFailure> {
        let not_found = || {
            (
                drill::RESOURCE_NOT_FOUND,
                format!("resource not found: {uri}"),
            )
        };
        let (namespace, own) = split_uri(uri).ok_or_else(not_found)?;
        let server = server(registry, namespace, identity).ok_or_else(not_found)?;
        let mut result = server
            .request("resources/read", json!({ "uri": own }))
            .await
            .map_err(failure)?;
        if let Some(contents) = result.get_mut("contents").and_then(Value::as_array_mut) {
            for content in contents {
                namespace_member(content, "uri", |uri| namespaced_uri(namespace, uri));
            }
        }
        Ok(result)
    }

    /// `prompts/list`: every server's prompts, named `<ns>_<name>`.
    pub async fn prompts(&self, registry: &Registry, identity: Option<&Identity>) -> Value {
        let mut names = HashMap::new();
        let prompts = Self::gather(registry, identity, "prompts/list", "prompts", |ns, item| {
            let Some(own) = item.get("name").and_then(Value::as_str).map(str::to_owned) else {
                return;
            };
            let name = tool_name(&format!("{ns}.{own}"));
            names.insert(name.clone(), (ns.to_owned(), own));
            item["name"] = name.into();
        })
        .await;
        self.prompts.lock().unwrap().extend(names);
        json!({ "prompts": prompts })
    }

    /// `prompts/get` of a relayed prompt (the prompts are listed first when the name is not
    /// known yet).
    ///
    /// # Errors
    ///
    /// -32602 for an unknown prompt; the server's own error otherwise.
    pub async fn get_prompt(
        &self,
        registry: &Registry,
        identity: Option<&Identity>,
        name: &str,
        arguments: Option<Value>,
    ) -> Result<Value, RpcFailure> {
        let known = |relayed: &Relayed| relayed.prompts.lock().unwrap().get(name).cloned();
        let found = match known(self) {
            Some(found) => Some(found),
            None => {
                self.prompts(registry, identity).await;
                known(self)
            }
        };
        let unknown = || (code::INVALID_PARAMS, format!("unknown prompt: {name}"));
        let (namespace, own) = found.ok_or_else(unknown)?;
        let server = server(registry, &namespace, identity).ok_or_else(unknown)?;
        let mut params = json!({ "name": own });
        if let Some(arguments) = arguments {
            params["arguments"] = arguments;
        }
        server.request("prompts/get", params).await.map_err(failure)
    }
}

fn namespace_member(item: &mut Value, key: &str, rewrite: impl Fn(&str) -> String) {
    if let Some(text) = item.get(key).and_then(Value::as_str) {
        let rewritten = rewrite(text);
        item[key] = rewritten.into();
    }
}
