//! Sources: one that fails is a warning naming it, and the others are still registered.

mod common;
use common::runtime;

use envelope_ops::source::{OperationSource, Operations, SourceFuture, register_all};
use envelope_ops::{
    Context, HandlerError, OperationSpec, OperationType, Registry, RegistryError, handler_fn,
};
use serde_json::{Value, json};

/// A source giving `names` in namespace `ns`, or failing with `error`.
struct Fake {
    ns: &'static str,
    names: &'static [&'static str],
    error: Option<&'static str>,
}

impl OperationSource for Fake {
    fn name(&self) -> String {
        format!("fake.{}", self.ns)
    }

    fn operations(&self) -> SourceFuture<'_> {
        Box::pin(async move {
            if let Some(message) = self.error {
                return Err(RegistryError::Invalid {
                    path: self.name(),
                    message: message.into(),
                });
            }
            let ops: Operations =
                self.names
                    .iter()
                    .map(|name| {
                        let spec = OperationSpec::new(self.ns, *name, OperationType::Query);
                        let handler = handler_fn(move |_: Value, _| async move {
                            Ok::<_, HandlerError>(json!(name))
                        });
                        (spec, handler)
                    })
                    .collect();
            Ok(ops)
        })
    }
}

#[test]
fn a_failing_source_is_a_warning_and_the_rest_keep_working() {
    let sources: Vec<Box<dyn OperationSource>> = vec![
        Box::new(Fake {
            ns: "a",
            names: &["one", "two"],
            error: None,
        }),
        Box::new(Fake {
            ns: "down",
            names: &["x"],
            error: Some("connection refused"),
        }),
        // A duplicate id is refused alone; its sibling is registered.
        Box::new(Fake {
            ns: "a",
            names: &["one", "three"],
            error: None,
        }),
    ];
    let mut registry = Registry::new();
    let rt = runtime();
    let warnings = rt.block_on(register_all(&mut registry, &sources));
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].starts_with("fake.down: not registered")
            && warnings[0].contains("connection refused"),
        "{warnings:?}"
    );
    assert!(
        warnings[1].starts_with("fake.a: ") && warnings[1].contains("a.one is defined twice"),
        "{warnings:?}"
    );
    let ids: Vec<String> = registry.specs().map(|s| s.id()).collect();
    assert_eq!(ids, ["a.one", "a.three", "a.two"]);
    let done = rt
        .block_on(registry.execute("a.three", json!({}), &Context::default()))
        .unwrap();
    assert_eq!(done.envelope["data"], "three");
}
