//! Local servers the tests start (Prism, the echo server) and what they need: a free port,
//! a child killed when dropped, a wait until it listens; and the fixtures' folder.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `tests/fixtures/<name>`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A port free on 127.0.0.1 now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A child process killed when dropped.
pub struct Server(pub Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits until `child` listens on `port`; fails if it exits first, or after three
/// minutes (Prism reads GitHub's 13 MB document before it listens: ~15 s on a busy
/// 2-core machine).
pub fn wait_for(port: u16, what: &str, child: &mut Child) {
    let ready = Instant::now() + Duration::from_secs(180);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(child.try_wait().unwrap().is_none(), "{what} exited");
        assert!(Instant::now() < ready, "{what} did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The echo server of tests/fixtures (any request under `/echo` is answered with what
/// arrived), on a free port, listening.
pub fn echo_server() -> (Server, u16) {
    let port = free_port();
    let mut child = Command::new("python3")
        .arg(fixture("http_echo_server.py"))
        .arg(port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(port, "the echo server", &mut child);
    (Server(child), port)
}
