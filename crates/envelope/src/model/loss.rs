//! The loss report: what an encoding could not hold.

/// Something the target format could not hold, or had to reshape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loss {
    /// A canonical field name (`summary`, `error.next_tool`) or a JSON Pointer into the
    /// source document (`/meta/runner`).
    pub field: String,
    /// Why, in words (`mcp has no place for it`).
    pub reason: String,
}

/// Everything an encoding left out or reshaped. Empty = nothing lost.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LossReport {
    /// The losses, in the order the encoder met them.
    pub items: Vec<Loss>,
}

impl LossReport {
    /// Whether nothing was lost.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Records that `field` was lost or reshaped, and why.
    pub fn push(&mut self, field: impl Into<String>, reason: impl Into<String>) {
        self.items.push(Loss {
            field: field.into(),
            reason: reason.into(),
        });
    }
}
