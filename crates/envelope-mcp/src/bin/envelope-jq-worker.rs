//! `envelope-jq-worker`: runs one `envelope_read` jq filter in its own process (see
//! `envelope_mcp::drill::jq_worker`). Started by the proxy with `ENVELOPE_JQ_WORKER=1`; the
//! `envelope` binary can play the same part, this one serves tests and separate installs.

fn main() {
    envelope_mcp::drill::jq_worker::worker_main_if_requested();
    eprintln!(
        "envelope-jq-worker is started by the envelope proxy (with {}=1), not by hand",
        envelope_mcp::drill::jq_worker::WORKER_ENV
    );
    std::process::exit(2);
}
