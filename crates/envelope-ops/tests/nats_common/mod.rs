//! A real `nats-server` (installed by scripts/install-mcp-tools.sh as
//! `$ENVELOPE_TOOLS/nats/bin/nats-server`) on a free port of 127.0.0.1, stopped when dropped.
#![allow(dead_code)]

#[path = "../../../envelope-mcp/tests/common/tools.rs"]
mod tools;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A running nats-server.
pub struct NatsServer {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
}

impl NatsServer {
    /// Starts one and waits until it accepts connections (30 s at most). The server picks
    /// its own free port (`-p -1`) and writes it to a ports file: no race with another test
    /// choosing the same port.
    pub fn start() -> NatsServer {
        let binary = tools::tool("nats/bin/nats-server");
        let dir = std::env::temp_dir().join(format!(
            "envelope-nats-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let mut child = Command::new(binary)
            .args(["-a", "127.0.0.1", "-p", "-1", "--ports_file_dir"])
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nats-server starts");
        let ports_file = dir.join(format!("nats-server_{}.ports", child.id()));
        let ready = Instant::now() + Duration::from_secs(30);
        let port = loop {
            let ports = std::fs::read_to_string(&ports_file).unwrap_or_default();
            let port = serde_json::from_str::<serde_json::Value>(&ports)
                .ok()
                .and_then(|p| p["nats"][0].as_str().map(str::to_owned))
                .and_then(|url| url.rsplit(':').next()?.parse::<u16>().ok());
            if let Some(port) = port
                && std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
            {
                break port;
            }
            assert!(child.try_wait().unwrap().is_none(), "nats-server exited");
            assert!(Instant::now() < ready, "nats-server did not listen");
            std::thread::sleep(Duration::from_millis(20));
        };
        let _ = std::fs::remove_dir_all(&dir);
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
