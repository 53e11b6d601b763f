//! Who may talk to an HTTP endpoint of ours: the DNS-rebinding rules of the MCP spec and
//! bearer tokens. The MCP endpoint (`--listen`) and `envelope serve`'s HTTP view (`--http`)
//! apply the same [`Guard`].
//!
//! - A server bound to a loopback address answers only requests whose `Host` is a loopback
//!   name (421 otherwise): a page on another site that rebinds its name to 127.0.0.1 cannot
//!   reach it.
//! - A request with an `Origin` that is not a loopback origin gets 403 (none is fine: not a
//!   browser).
//! - With tokens, a request must carry `Authorization: Bearer <one of them>` (401); the
//!   scheme is case-insensitive (`bearer`, `BEARER`).
//! - Two `Host` headers, or two `Origin` headers: 400 (which one would the check trust?).
//! - A request target in absolute form (`POST http://evil.example/mcp`) has its authority
//!   checked like `Host` (an HTTP/1.1 server must prefer it to `Host`); both when both are
//!   present.
//!
//! Tokens are at least [`MIN_TOKEN_LEN`] printable ASCII characters ([`check_token`]), for
//! `proxy --listen` (`ENVELOPE_TOKEN`) and `serve` (`--tokens`) alike.

use std::net::IpAddr;

use hyper::header::{self, HeaderMap};
use hyper::{StatusCode, Uri};

/// The shortest bearer token accepted, by `proxy --listen` and `serve` alike: a shorter one
/// is guessable.
pub const MIN_TOKEN_LEN: usize = 16;

/// Whether `token` may be a bearer token: at least [`MIN_TOKEN_LEN`] characters, printable
/// ASCII without spaces (what an `Authorization` header carries). The error never quotes the
/// token.
///
/// ```
/// use envelope_mcp::transport::http_guard::check_token;
///
/// assert!(check_token("0123456789abcdef").is_ok());
/// assert!(check_token("s3cret").unwrap_err().to_string().contains("at least 16"));
/// assert!(check_token("0123456789 abcdef").unwrap_err().to_string().contains("spaces"));
/// ```
///
/// # Errors
///
/// A token too short, or with characters a header cannot carry.
pub fn check_token(token: &str) -> Result<(), WeakToken> {
    if token.len() < MIN_TOKEN_LEN {
        return Err(WeakToken::TooShort { len: token.len() });
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(WeakToken::NotPrintable);
    }
    Ok(())
}

/// Why a token cannot be a bearer token ([`check_token`]); the message never quotes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WeakToken {
    /// Shorter than [`MIN_TOKEN_LEN`]: guessable.
    #[error(
        "it is {len} characters long: give at least {MIN_TOKEN_LEN} (a random secret, such as the output of `openssl rand -hex 16`)"
    )]
    TooShort {
        /// Its length in bytes.
        len: usize,
    },
    /// Holds spaces or characters past printable ASCII.
    #[error(
        "it holds spaces or characters outside printable ASCII, which an Authorization header cannot carry"
    )]
    NotPrintable,
}

/// The checks of one HTTP server.
#[derive(Clone, Default)]
pub struct Guard {
    /// The bearer tokens accepted (any one of them); empty: no token asked.
    pub tokens: Vec<String>,
    /// The server is bound to a non-loopback address (with tokens): any `Host` is fine.
    pub any_host: bool,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("tokens", &self.tokens.len())
            .field("any_host", &self.any_host)
            .finish()
    }
}

/// A request refused by the [`Guard`]: the status and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// 400, 401, 403 or 421.
    pub status: StatusCode,
    /// One sentence for the client.
    pub message: String,
}

impl Guard {
    /// Checks a request's headers; on success, the token it presented (`None` when the
    /// guard asks for none).
    ///
    /// ```
    /// use envelope_mcp::transport::http_guard::Guard;
    /// use hyper::header::{HeaderMap, HeaderValue};
    ///
    /// let guard = Guard { tokens: vec!["s3cret".into()], any_host: false };
    /// let mut headers = HeaderMap::new();
    /// headers.insert("host", HeaderValue::from_static("127.0.0.1:8080"));
    /// assert_eq!(guard.check(&headers).unwrap_err().status, 401);
    /// headers.insert("authorization", HeaderValue::from_static("Bearer s3cret"));
    /// assert_eq!(guard.check(&headers).unwrap(), Some("s3cret"));
    /// headers.insert("host", HeaderValue::from_static("evil.example:8080"));
    /// assert_eq!(guard.check(&headers).unwrap_err().status, 421);
    /// ```
    pub fn check(&self, headers: &HeaderMap) -> Result<Option<&str>, Refused> {
        self.check_target(None, headers)
    }

    /// [`Guard::check`] of a whole request: its headers and its target, whose authority
    /// (absolute form, `POST http://host/mcp`) is checked like `Host`.
    ///
    /// # Errors
    ///
    /// As [`Guard::check`].
    pub fn check_request<B>(&self, request: &hyper::Request<B>) -> Result<Option<&str>, Refused> {
        self.check_target(Some(request.uri()), request.headers())
    }

    fn check_target(
        &self,
        target: Option<&Uri>,
        headers: &HeaderMap,
    ) -> Result<Option<&str>, Refused> {
        for name in [header::HOST, header::ORIGIN] {
            if headers.get_all(&name).iter().nth(1).is_some() {
                return Err(Refused {
                    status: StatusCode::BAD_REQUEST,
                    message: format!("bad request: more than one {name} header"),
                });
            }
        }
        if !self.any_host {
            let host = header_str(headers, "host").unwrap_or("");
            if !is_loopback_host(host) {
                return Err(Refused {
                    status: StatusCode::MISDIRECTED_REQUEST,
                    message: format!(
                        "the Host header {host:?} is not a loopback name (DNS-rebinding protection)"
                    ),
                });
            }
            if let Some(authority) = target.and_then(Uri::authority) {
                let authority = authority.as_str();
                if !is_loopback_host(authority) {
                    return Err(Refused {
                        status: StatusCode::MISDIRECTED_REQUEST,
                        message: format!(
                            "the request target's authority {authority:?} is not a loopback name (DNS-rebinding protection)"
                        ),
                    });
                }
            }
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let allowed = origin.to_str().ok().is_some_and(is_loopback_origin);
            if !allowed {
                return Err(Refused {
                    status: StatusCode::FORBIDDEN,
                    message: "forbidden: the Origin is not a loopback origin".into(),
                });
            }
        }
        if self.tokens.is_empty() {
            return Ok(None);
        }
        let presented = header_str(headers, "authorization")
            .and_then(bearer)
            .unwrap_or("");
        // Every token is compared (no early exit), each in constant time.
        let mut matched = None;
        for token in &self.tokens {
            if same_secret(presented.as_bytes(), token.as_bytes()) {
                matched = Some(token.as_str());
            }
        }
        matched.map(Some).ok_or_else(|| Refused {
            status: StatusCode::UNAUTHORIZED,
            message: "unauthorized: send Authorization: Bearer <token>".into(),
        })
    }
}

/// The credentials of `Authorization: Bearer <token>`, the scheme in any case (RFC 9110:
/// auth schemes are case-insensitive).
fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim_start_matches(' '))
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// `localhost`, a loopback IPv4 address or `[::1]`, with or without a port.
pub fn is_loopback_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        match rest.split_once(']') {
            Some((inside, "")) => inside,
            Some((inside, port)) if port.strip_prefix(':').is_some_and(is_port) => inside,
            _ => return false,
        }
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) if is_port(port) => name,
            Some(_) => return false,
            None => host,
        }
    };
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn is_port(digits: &str) -> bool {
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && digits.parse::<u16>().is_ok()
}

/// `http(s)://` and a loopback host, nothing after it.
pub fn is_loopback_origin(origin: &str) -> bool {
    origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .is_some_and(|host| !host.contains('/') && is_loopback_host(host))
}

/// Compares secrets in time that does not depend on where they differ.
pub fn same_secret(presented: &[u8], expected: &[u8]) -> bool {
    presented.len() == expected.len()
        && presented
            .iter()
            .zip(expected)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    #[test]
    fn loopback_hosts() {
        for host in [
            "localhost",
            "localhost:8080",
            "127.0.0.1",
            "127.0.0.1:1",
            "[::1]",
            "[::1]:9",
            "LOCALHOST:3",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "evil.com",
            "evil.com:80",
            "10.0.0.1:80",
            "localhost.evil.com",
            "[::2]:1",
            "127.0.0.1:x",
            "",
            "::1",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }

    #[test]
    fn loopback_origins() {
        assert!(is_loopback_origin("http://localhost:3000"));
        assert!(is_loopback_origin("https://127.0.0.1"));
        assert!(is_loopback_origin("http://[::1]:8080"));
        assert!(!is_loopback_origin("http://evil.com"));
        assert!(!is_loopback_origin("null"));
        assert!(!is_loopback_origin("ftp://localhost"));
        assert!(!is_loopback_origin("http://localhost/path"));
    }

    #[test]
    fn secrets() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abd", b"abc"));
        assert!(!same_secret(b"ab", b"abc"));
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, HeaderValue::from_static(value));
        }
        headers
    }

    #[test]
    fn any_of_several_tokens_passes_and_is_named() {
        let guard = Guard {
            tokens: vec!["alpha".into(), "bravo".into()],
            any_host: true,
        };
        let presented = headers(&[("authorization", "Bearer bravo")]);
        assert_eq!(guard.check(&presented).unwrap(), Some("bravo"));
        for wrong in ["Bearer brav", "Bearer bravo2", "bravo", "Basic bravo", ""] {
            let presented = headers(&[("authorization", wrong)]);
            assert_eq!(guard.check(&presented).unwrap_err().status, 401, "{wrong}");
        }
    }

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        let guard = Guard {
            tokens: vec!["bravo".into()],
            any_host: true,
        };
        for value in [
            "Bearer bravo",
            "bearer bravo",
            "BEARER bravo",
            "bEaReR  bravo",
        ] {
            let presented = headers(&[("authorization", value)]);
            assert_eq!(guard.check(&presented).unwrap(), Some("bravo"), "{value}");
        }
        for wrong in ["Bearerbravo", "Bearer: bravo", "Bear bravo", "bearer"] {
            let presented = headers(&[("authorization", wrong)]);
            assert_eq!(guard.check(&presented).unwrap_err().status, 401, "{wrong}");
        }
    }

    #[test]
    fn two_hosts_or_two_origins_are_a_bad_request() {
        for any_host in [false, true] {
            let guard = Guard {
                tokens: Vec::new(),
                any_host,
            };
            for name in ["host", "origin"] {
                let mut presented = headers(&[("host", "localhost:1")]);
                presented.append(name, HeaderValue::from_static("http://localhost:1"));
                presented.append(name, HeaderValue::from_static("localhost:2"));
                let refused = guard.check(&presented).unwrap_err();
                assert_eq!(refused.status, 400, "{name}");
                assert!(refused.message.contains("more than one"), "{refused:?}");
            }
        }
    }

    #[test]
    fn an_absolute_target_is_checked_like_host() {
        let guard = Guard::default();
        let request = |target: &str, host: &str| {
            hyper::Request::post(target)
                .header("host", host)
                .body(())
                .unwrap()
        };
        let foreign = request("http://evil.example/mcp", "localhost:1");
        let refused = guard.check_request(&foreign).unwrap_err();
        assert_eq!(refused.status, 421);
        assert!(refused.message.contains("evil.example"), "{refused:?}");
        // Both are checked: a loopback target does not excuse a foreign Host.
        let bad_host = request("http://127.0.0.1:1/mcp", "evil.example");
        assert_eq!(guard.check_request(&bad_host).unwrap_err().status, 421);
        let fine = request("http://127.0.0.1:1/mcp", "localhost:1");
        assert_eq!(guard.check_request(&fine).unwrap(), None);
        let origin_form = request("/mcp", "localhost:1");
        assert_eq!(guard.check_request(&origin_form).unwrap(), None);
        // Bound for the network (any Host), the target's authority is not checked either.
        let open = Guard {
            tokens: Vec::new(),
            any_host: true,
        };
        assert_eq!(open.check_request(&foreign).unwrap(), None);
    }

    #[test]
    fn short_tokens_are_refused() {
        assert!(check_token(&"x".repeat(MIN_TOKEN_LEN)).is_ok());
        let error = check_token(&"x".repeat(MIN_TOKEN_LEN - 1))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("15 characters") && error.contains("16"),
            "{error}"
        );
        assert!(check_token("0123456789abcdef\t").is_err());
    }

    #[test]
    fn a_foreign_origin_is_forbidden_even_with_a_token() {
        let guard = Guard {
            tokens: vec!["t".into()],
            any_host: false,
        };
        let presented = headers(&[
            ("host", "localhost:1"),
            ("origin", "http://evil.example"),
            ("authorization", "Bearer t"),
        ]);
        assert_eq!(guard.check(&presented).unwrap_err().status, 403);
    }

    #[test]
    fn no_tokens_no_check() {
        let guard = Guard::default();
        assert_eq!(
            guard.check(&headers(&[("host", "[::1]:80")])).unwrap(),
            None
        );
    }
}
