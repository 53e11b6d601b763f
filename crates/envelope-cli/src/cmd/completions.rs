//! `envelope completions SHELL`: the shell's completion script, generated from the same
//! flag definitions the binary parses, so it never falls behind them.

use clap::CommandFactory as _;
use clap_complete::Shell;

use crate::cli::Cli;
use crate::{CmdResult, input};

/// Prints the completion script for `shell` to stdout.
pub fn run(shell: Shell) -> CmdResult {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "envelope", &mut script);
    input::write_stdout(&script)
}
