//! The `envelope` binary: flags are parsed into [`cli::Cli`], each subcommand lives in its
//! own module, and every failure maps to an exit code (1 invalid input, 2 usage or I/O).

mod cli;
mod cmd;
mod input;

use std::io::Write as _;
use std::process::ExitCode;

use clap::Parser as _;

/// Decoding a large document is mostly allocation; mimalloc halves it (docs/benchmarks.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Why a command failed, which decides its exit code.
pub enum Failure {
    /// The input is not what it should be (exit 1).
    Invalid(String),
    /// The command line or the file system is at fault (exit 2).
    Usage(String),
}

/// Store errors that are about the store itself (it cannot be read or written, it is not
/// a folder, a link was planted in it, the S3 endpoint cannot be reached), not about the
/// input: exit 2, like any other I/O error.
fn is_store_io(code: &str) -> bool {
    matches!(code, "io" | "backend" | "link")
}

impl From<envelope_store::StoreError> for Failure {
    fn from(e: envelope_store::StoreError) -> Self {
        let message = format!("error[{}]: {e}", e.code());
        if is_store_io(e.code()) {
            Failure::Usage(message)
        } else {
            Failure::Invalid(message)
        }
    }
}

impl From<envelope::Error> for Failure {
    fn from(e: envelope::Error) -> Self {
        let message = format!("error[{}]: {e}", e.code());
        if matches!(e, envelope::Error::Store(_)) && is_store_io(e.code()) {
            Failure::Usage(message)
        } else {
            Failure::Invalid(message)
        }
    }
}

pub type CmdResult = Result<(), Failure>;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let result = match cli.command {
        cli::Command::Detect(args) => cmd::detect::run(&args),
        cli::Command::Convert(args) => cmd::convert::run(&args),
        cli::Command::Wrap(args) => cmd::wrap::run(&args),
        cli::Command::Unwrap(args) => cmd::unwrap::run(&args),
        cli::Command::Shape(args) => cmd::shape::run(&args),
        cli::Command::Artifact(args) => cmd::artifact::run(&args),
        cli::Command::Validate(args) => cmd::validate::run(&args),
        cli::Command::Demo(args) => cmd::demo::run(&args),
        cli::Command::Completions(args) => cmd::completions::run(args.shell),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            let (code, message) = match failure {
                Failure::Invalid(m) => (1, m),
                Failure::Usage(m) => (2, m),
            };
            let _ = writeln!(std::io::stderr(), "envelope: {message}");
            ExitCode::from(code)
        }
    }
}
