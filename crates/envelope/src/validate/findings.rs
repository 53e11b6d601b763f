//! Collecting findings: the catalogue decides a rule's severity and whether the profile
//! checks it, so rule code only says what it found.

use super::rules::rule;
use super::{Finding, Profile};

/// Findings of one document or stream line, for one profile.
#[derive(Debug)]
pub struct Findings {
    profile: Profile,
    line: Option<u64>,
    list: Vec<Finding>,
}

impl Findings {
    pub fn new(profile: Profile) -> Self {
        Findings {
            profile,
            line: None,
            list: Vec::new(),
        }
    }

    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// Findings reported from now on are on stream line `line`.
    pub fn at_line(&mut self, line: u64) {
        self.line = Some(line);
    }

    /// Whether the profile checks rule `id`.
    pub fn checks(&self, id: &str) -> bool {
        rule(id).profile <= self.profile
    }

    /// Records a finding of rule `id` if the profile checks it.
    pub fn report(&mut self, id: &str, pointer: impl Into<String>, message: impl Into<String>) {
        self.report_at(id, pointer, self.line, None, message);
    }

    /// Like [`Findings::report`], with a line and column (syntax errors).
    pub fn report_at(
        &mut self,
        id: &str,
        pointer: impl Into<String>,
        line: Option<u64>,
        column: Option<u64>,
        message: impl Into<String>,
    ) {
        let rule = rule(id);
        if rule.profile > self.profile {
            return;
        }
        self.list.push(Finding {
            rule: rule.id,
            severity: rule.severity,
            pointer: pointer.into(),
            line,
            column,
            message: message.into(),
        });
    }

    /// Puts every finding on line `line`.
    pub fn relocate(&mut self, line: u64) {
        for f in &mut self.list {
            f.line = Some(line);
        }
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Finding> {
        self.list.iter()
    }

    /// Appends `other`'s findings.
    pub fn extend(&mut self, other: Findings) {
        self.list.extend(other.list);
    }

    pub fn into_vec(self) -> Vec<Finding> {
        self.list
    }
}
