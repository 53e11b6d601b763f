//! A real `nats-server` (installed by scripts/install-mcp-tools.sh as
//! `$ENVELOPE_TOOLS/nats/bin/nats-server`) on a free port of 127.0.0.1, stopped when dropped.
#![allow(dead_code)]

#[path = "../../../envelope-mcp/tests/common/tools.rs"]
mod tools;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running nats-server.
pub struct NatsServer {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
}

impl NatsServer {
    /// Starts one and waits until it accepts connections (30 s at most).
    pub fn start() -> NatsServer {
        let binary = tools::tool("nats/bin/nats-server");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(binary)
            .args(["-a", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nats-server starts");
        let ready = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < ready, "nats-server did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        NatsServer { child, port }
    }

    /// `nats://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
