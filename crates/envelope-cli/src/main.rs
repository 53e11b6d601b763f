//! The `envelope` binary: flags are parsed into [`cli::Cli`], each subcommand lives in its
//! own module, and every failure maps to an exit code (1 invalid input, 2 usage or I/O).

mod cli;
mod cmd;
mod flags;
mod input;
mod progress;

use std::io::Write as _;
use std::process::ExitCode;

use clap::Parser as _;
use clap::error::ErrorKind;

/// Decoding a large document is mostly allocation; mimalloc halves it (docs/benchmarks.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Why a command failed, which decides its exit code. The message is the whole line after
/// `envelope: `, `error[ID]: text`; build it with [`Failure::invalid`] or
/// [`Failure::usage`] so that it carries its id (every id is listed in docs/errors.md).
pub enum Failure {
    /// The input is not what it should be (exit 1).
    Invalid(String),
    /// The command line or the file system is at fault (exit 2).
    Usage(String),
    /// Already reported on stderr in the command's own form (`envelope call` prints a
    /// CallError as a JSON line): exit 1, nothing more printed.
    Reported,
}

impl Failure {
    /// The input is not what it should be (exit 1), with the error's dotted id.
    pub fn invalid(id: &str, message: impl std::fmt::Display) -> Self {
        Failure::Invalid(format!("error[{id}]: {message}"))
    }

    /// The command line or the file system is at fault (exit 2), with the error's dotted id.
    pub fn usage(id: &str, message: impl std::fmt::Display) -> Self {
        Failure::Usage(format!("error[{id}]: {message}"))
    }
}

/// Store errors that are about the store itself (it cannot be read or written, it is not
/// a folder, a link was planted in it, the S3 endpoint cannot be reached), not about the
/// input: exit 2, like any other I/O error.
fn is_store_io(code: &str) -> bool {
    matches!(code, "store.io" | "store.backend" | "store.link")
}

impl From<envelope_store::StoreError> for Failure {
    fn from(e: envelope_store::StoreError) -> Self {
        // A local command: the full paths (the text a client would get names none).
        if is_store_io(e.code()) {
            Failure::usage(e.code(), e.detailed())
        } else {
            Failure::invalid(e.code(), e.detailed())
        }
    }
}

impl From<envelope::Error> for Failure {
    fn from(e: envelope::Error) -> Self {
        // A store's error with its full paths: this is a local command.
        let store = match &e {
            envelope::Error::Store(sink) => sink
                .get_ref()
                .downcast_ref::<envelope_store::StoreError>()
                .map(|store| format!("artifact store: {}", store.detailed())),
            _ => None,
        };
        let message = store.unwrap_or_else(|| e.to_string());
        if matches!(e, envelope::Error::Store(_)) && is_store_io(e.code()) {
            Failure::usage(e.code(), message)
        } else {
            Failure::invalid(e.code(), message)
        }
    }
}

pub type CmdResult = Result<(), Failure>;

fn main() -> ExitCode {
    // Started by `envelope proxy` to run one jq filter of `envelope_read`: do that and exit.
    envelope_mcp::drill::jq_worker::worker_main_if_requested();
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    let result = flags::check(&cli.command).and_then(|()| match cli.command {
        cli::Command::Detect(args) => cmd::detect::run(&args),
        cli::Command::Convert(args) => cmd::convert::run(&args),
        cli::Command::Wrap(args) => cmd::wrap::run(&args),
        cli::Command::Unwrap(args) => cmd::unwrap::run(&args),
        cli::Command::Shape(args) => cmd::shape::run(&args),
        cli::Command::Artifact(args) => cmd::artifact::run(&args),
        cli::Command::Validate(args) => cmd::validate::run(&args),
        cli::Command::Demo(args) => cmd::demo::run(&args),
        cli::Command::Completions(args) => cmd::completions::run(args.shell),
        cli::Command::Proxy(args) => cmd::proxy::run(&args),
        cli::Command::Ops(args) => cmd::ops::run(&args),
        cli::Command::Call(args) => cmd::ops::call(&args),
        cli::Command::Serve(args) => cmd::serve::run(&args),
        cli::Command::Setup(args) => cmd::setup::run(&args),
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            let (code, message) = match failure {
                Failure::Invalid(m) => (1, m),
                Failure::Usage(m) => (2, m),
                Failure::Reported => return ExitCode::from(1),
            };
            let _ = writeln!(std::io::stderr(), "envelope: {message}");
            ExitCode::from(code)
        }
    }
}

/// A command line clap refuses: `envelope: error[usage.invalid]: …` on one line and exit 2,
/// like every other error. `--help` and `--version` (which clap also reports as errors)
/// print as usual.
fn usage_error(e: &clap::Error) -> ExitCode {
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    let rendered = e.render().to_string();
    let text = rendered.strip_prefix("error: ").unwrap_or(&rendered);
    let _ = writeln!(
        std::io::stderr(),
        "envelope: error[usage.invalid]: {}",
        one_line(text)
    );
    ExitCode::from(2)
}

/// clap's report on one line: its message (a list it ends with joined on), then its tips
/// in parentheses and its usage line; "For more information, try '--help'" goes.
///
/// `unexpected argument '--x' found (tip: to pass '--x' as a value, use '-- --x'); usage:
/// envelope detect [OPTIONS] [FILE]`
fn one_line(rendered: &str) -> String {
    let mut message: Vec<&str> = Vec::new();
    let mut tips: Vec<&str> = Vec::new();
    let mut usage: Vec<&str> = Vec::new();
    let mut in_usage = false;
    for line in rendered.lines() {
        let line = line.trim();
        if line.is_empty() {
            in_usage = false;
        } else if line.starts_with("For more information") {
            continue;
        } else if let Some(first) = line.strip_prefix("Usage: ") {
            usage.push(first);
            in_usage = true;
        } else if in_usage {
            usage.push(line);
        } else if let Some(tip) = line.strip_prefix("tip: ") {
            tips.push(tip);
        } else {
            message.push(line);
        }
    }
    let mut out = message.join(" ");
    if !tips.is_empty() {
        out.push_str(&format!(" (tip: {})", tips.join("; ")));
    }
    if !usage.is_empty() {
        out.push_str(&format!("; usage: {}", usage.join(" | ")));
    }
    out
}
