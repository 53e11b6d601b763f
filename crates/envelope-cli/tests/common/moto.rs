//! moto, the S3-compatible server of the S3 tests, on 127.0.0.1 (installed by
//! scripts/install-mcp-tools.sh into its venv, first on PATH in scripts/test.sh), and the
//! environment that points the S3 store at it.

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A moto server on a free loopback port, killed on drop.
pub struct Moto {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
}

impl Moto {
    /// Starts one and waits until it answers (60 s at most).
    pub fn start() -> Moto {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("python3")
            .args([
                "-m",
                "moto.server",
                "-H",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 with moto[server] (scripts/install-mcp-tools.sh puts it in ~/.cache/envelope-tools/venv; scripts/test.sh puts that first on PATH)");
        let moto = Moto { child, port };
        let deadline = Instant::now() + Duration::from_secs(60);
        while http(port, "GET", "/", b"").is_none_or(|status| status != 200) {
            assert!(
                Instant::now() < deadline,
                "moto did not start on 127.0.0.1:{port}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        moto
    }

    /// `http://127.0.0.1:<port>`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A minimal unsigned HTTP/1.1 request to loopback; the status code, if any answer came.
pub fn http(port: u16, method: &str, path: &str, body: &[u8]) -> Option<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).ok()?;
    stream.write_all(body).ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    response.split_whitespace().nth(1)?.parse().ok()
}

/// The environment of an `envelope` process whose `s3://` store is `endpoint`.
pub fn s3_env(endpoint: &str) -> Vec<(&'static str, String)> {
    vec![
        ("AWS_ENDPOINT", endpoint.to_owned()),
        ("AWS_ALLOW_HTTP", "true".into()),
        ("AWS_ACCESS_KEY_ID", "test".into()),
        ("AWS_SECRET_ACCESS_KEY", "test".into()),
        ("AWS_REGION", "us-east-1".into()),
    ]
}
