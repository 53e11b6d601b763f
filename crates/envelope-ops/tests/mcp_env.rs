//! The environment of a stdio MCP server: the minimal inherited set plus the source's
//! `env`, never the caller's secrets. A file of its own: the test sets a variable of this
//! process, which no other test may race with.

mod mcp_common;

use envelope_ops::Context;
use mcp_common::{everything, load};
use serde_json::{Value, json};

#[tokio::test]
async fn a_secret_of_the_caller_does_not_reach_the_server() {
    // SAFETY: the only test of this binary; nothing else reads the environment meanwhile.
    unsafe { std::env::set_var("ENVELOPE_TEST_SECRET", "hunter2") };
    let mut server = everything();
    server["env"] = json!({"GIVEN": "yes", "HOME": "/tmp/given-home"});
    let loaded = load(json!({"mcpServers": {"everything": server}})).await;
    let env = loaded
        .registry
        .execute("everything.get-env", json!({}), &Context::default())
        .await
        .unwrap()
        .envelope;
    let text = env["data"][0]["text"]
        .as_str()
        .expect("get-env answers text");
    let server_env: Value = serde_json::from_str(text).unwrap();
    assert!(
        server_env.get("ENVELOPE_TEST_SECRET").is_none(),
        "{server_env}"
    );
    assert_eq!(server_env["GIVEN"], "yes");
    assert_eq!(
        server_env["HOME"], "/tmp/given-home",
        "env overrides the inherited"
    );
    assert_eq!(server_env["PATH"], std::env::var("PATH").unwrap());
    let names: Vec<&str> = server_env
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let allowed = [
        "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "GIVEN",
    ];
    // Node may add variables of its own at start; none of the caller's others pass.
    for name in &names {
        assert!(
            allowed.contains(name) || std::env::var_os(name).is_none(),
            "{name} came from the caller: {names:?}"
        );
    }
}
