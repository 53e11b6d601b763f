//! One jq filter compiled and run with jaq, on the thread or in the process it is given
//! (the evaluator both [`jq`](super::jq) and [`jq_worker`](super::jq_worker) use): its
//! output bounds, its error sentences, and the functions it may not call.

use std::time::{Duration, Instant};

use jaq_core::load::{Arena, File, Loader};
use jaq_core::native::Fun;
use jaq_core::{Compiler, Ctx, Native, Vars, data};
use jaq_json::Val;
use serde_json::Value;

/// How long a caller waits for a filter.
pub const TIME_LIMIT: Duration = Duration::from_secs(2);
/// The most outputs a filter may produce.
pub const MAX_OUTPUTS: usize = 100_000;
/// The most bytes of output JSON a filter may produce (all outputs together).
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024 * 1024;
/// The stack of each worker thread (deep, not endless, recursion).
pub const STACK_SIZE: usize = 64 * 1024 * 1024;

type D = data::JustLut<Val>;

/// The answer when a filter ran past [`TIME_LIMIT`].
pub(super) fn too_slow() -> String {
    format!(
        "the jq filter ran longer than {}s and was stopped; narrow it (select with `pointer` \
         first, avoid unbounded `range`/`repeat`/recursion)",
        TIME_LIMIT.as_secs()
    )
}

/// Compiles and runs the filter (on a worker thread, or in the worker process).
pub(super) fn evaluate(code: &str, input: &Value, deadline: Instant) -> Result<Value, String> {
    let arena = Arena::default();
    let loader = Loader::new(
        jaq_core::defs()
            .chain(jaq_std::defs())
            .chain(jaq_json::defs()),
    );
    let modules = loader
        .load(&arena, File { code, path: () })
        .map_err(|errs| parse_message(code, errs))?;
    let filter = Compiler::default()
        .with_funs(functions())
        .compile(modules)
        .map_err(|errs| {
            let found: Vec<String> = errs
                .into_iter()
                .flat_map(|(_, undefined)| undefined)
                .map(|(name, what)| {
                    format!(
                        "undefined {} `{name}` at character {}",
                        what.as_str(),
                        char_at(code, name)
                    )
                })
                .collect();
            format!("the jq filter does not compile: {}", found.join("; "))
        })?;

    let bytes = serde_json::to_vec(input).map_err(|e| e.to_string())?;
    let input = jaq_json::read::parse_single(&bytes)
        .map_err(|e| format!("the value cannot be given to jq: {e}"))?;
    let ctx = Ctx::<D>::new(&filter.lut, Vars::new([]));

    let mut outputs = Vec::new();
    let mut size = 0usize;
    for output in filter.id.run((ctx, input)) {
        if Instant::now() > deadline {
            return Err(too_slow());
        }
        let val = output.map_err(|exn| match exn.get_err() {
            Ok(err) => format!("the jq filter failed: {err}"),
            Err(exn) => match exn.get_halt() {
                Ok(code) => format!("the jq filter called halt (exit code {code})"),
                Err(_) => "the jq filter failed".to_string(),
            },
        })?;
        let text = val.to_string();
        size += text.len();
        if outputs.len() == MAX_OUTPUTS || size > MAX_OUTPUT_BYTES {
            return Err(format!(
                "the jq filter produced more than {MAX_OUTPUTS} outputs or {} MiB; narrow it",
                MAX_OUTPUT_BYTES >> 20
            ));
        }
        let value: Value = serde_json::from_str(&text).map_err(|_| {
            format!(
                "the jq filter produced a value that is not JSON ({}); jaq allows byte strings, \
                 non-string keys and NaN, JSON does not",
                abbreviate(&text, 80)
            )
        })?;
        outputs.push(value);
    }
    Ok(if outputs.len() == 1 {
        outputs.pop().unwrap_or_default()
    } else {
        Value::Array(outputs)
    })
}

/// jaq's native functions, less those that reach outside the filter.
fn functions() -> impl Iterator<Item = Fun<D>> {
    jaq_core::funs()
        .chain(jaq_std::funs())
        .chain(jaq_json::funs())
        .map(|(name, args, native)| match name {
            "env" => (
                name,
                args,
                Native::new(|_| {
                    jaq_core::native::bome(Err(jaq_core::Error::str(
                        "env is not available in envelope_read",
                    )))
                }),
            ),
            // What `stderr`, `debug` and `halt_error` print through.
            "stderr_empty" | "debug_empty" => {
                (name, args, Native::new(|_| Box::new(std::iter::empty())))
            }
            _ => (name, args, native),
        })
}

/// jaq's lex and parse errors as one sentence with character positions.
fn parse_message(code: &str, errs: jaq_core::load::Errors<&str, ()>) -> String {
    use jaq_core::load::Error;
    let mut found = Vec::new();
    for (_, err) in errs {
        match err {
            Error::Io(items) => found.extend(
                items
                    .into_iter()
                    .map(|(path, e)| format!("cannot load {path}: {e}")),
            ),
            Error::Lex(items) => found.extend(items.into_iter().map(|(expect, at)| {
                let expected = match expect {
                    jaq_core::load::lex::Expect::Delim(open) => format!("a match for `{open}`"),
                    other => other.as_str().to_string(),
                };
                format!("expected {expected} at character {}", char_at(code, at))
            })),
            Error::Parse(items) => found.extend(items.into_iter().map(|(expect, at)| {
                let near = if at.is_empty() {
                    "the end".to_string()
                } else {
                    format!("{:?}", abbreviate(at, 20))
                };
                format!(
                    "expected {} at character {} (found {near})",
                    expect.as_str(),
                    char_at(code, at)
                )
            })),
        }
    }
    format!("the jq filter does not parse: {}", found.join("; "))
}

/// The character position (from 1) where `part`, a slice of `code`, starts.
fn char_at(code: &str, part: &str) -> usize {
    let start = (part.as_ptr() as usize)
        .checked_sub(code.as_ptr() as usize)
        .filter(|s| *s <= code.len())
        .unwrap_or(0);
    code.get(..start).map_or(0, |before| before.chars().count()) + 1
}

fn abbreviate(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}
