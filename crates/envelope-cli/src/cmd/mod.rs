//! One module per subcommand.

pub mod artifact;
pub mod completions;
pub mod convert;
pub mod demo;
pub mod detect;
pub mod ops;
pub mod proxy;
pub mod serve;
pub mod setup;
pub mod shape;
pub mod unwrap;
pub mod validate;
pub mod wrap;
