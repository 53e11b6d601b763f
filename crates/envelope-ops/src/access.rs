//! The access check of `execute` (the reference semantics, applied on every call).

use serde_json::json;

use crate::context::Identity;
use crate::error::{CallError, codes};
use crate::spec::AccessControl;

/// Checks `identity` against `rules`: all of `requiredScopes`; one of `requiredScopesAny`
/// when it is not empty; with both `resourceType` and `resourceAction`, a resource whose key
/// starts with `"<resourceType>:"` listing the action. An operation with any requirement
/// called without an identity is denied.
///
/// ```
/// use envelope_ops::access::check;
/// use envelope_ops::{AccessControl, Identity};
///
/// let rules = AccessControl { required_scopes: vec!["read".into()], ..Default::default() };
/// assert!(check(&rules, None).is_err());
/// let reader = Identity { id: "a".into(), scopes: vec!["read".into()], resources: None };
/// assert!(check(&rules, Some(&reader)).is_ok());
/// ```
pub fn check(rules: &AccessControl, identity: Option<&Identity>) -> Result<(), CallError> {
    let resource = match (&rules.resource_type, &rules.resource_action) {
        (Some(t), Some(a)) => Some((t.as_str(), a.as_str())),
        _ => None,
    };
    let has_requirements = !rules.required_scopes.is_empty()
        || !rules.required_scopes_any.is_empty()
        || resource.is_some();
    if !has_requirements {
        return Ok(());
    }
    let Some(identity) = identity else {
        return Err(denied(
            "the operation has access requirements and the call has no identity",
        ));
    };
    let has = |scope: &String| identity.scopes.contains(scope);
    let missing: Vec<&String> = rules.required_scopes.iter().filter(|s| !has(s)).collect();
    if !missing.is_empty() {
        return Err(denied(format!("missing scopes {missing:?}"))
            .with_details(json!({ "missingScopes": missing })));
    }
    if !rules.required_scopes_any.is_empty() && !rules.required_scopes_any.iter().any(has) {
        return Err(denied(format!(
            "needs one of the scopes {:?}",
            rules.required_scopes_any
        ))
        .with_details(json!({ "requiredScopesAny": rules.required_scopes_any })));
    }
    if let Some((kind, action)) = resource {
        let prefix = format!("{kind}:");
        let allowed = identity.resources.as_ref().is_some_and(|resources| {
            resources.iter().any(|(key, actions)| {
                key.starts_with(&prefix) && actions.iter().any(|a| a == action)
            })
        });
        if !allowed {
            return Err(denied(format!("no {kind} resource allows {action:?}"))
                .with_details(json!({ "resourceType": kind, "resourceAction": action })));
        }
    }
    Ok(())
}

fn denied(message: impl Into<String>) -> CallError {
    CallError::new(codes::ACCESS_DENIED, message)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn who(scopes: &[&str], resources: Option<&[(&str, &[&str])]>) -> Identity {
        Identity {
            id: "t".into(),
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
            resources: resources.map(|r| {
                r.iter()
                    .map(|(k, v)| (k.to_string(), v.iter().map(|a| a.to_string()).collect()))
                    .collect::<BTreeMap<_, _>>()
            }),
        }
    }

    fn rules(all: &[&str], any: &[&str], resource: Option<(&str, &str)>) -> AccessControl {
        AccessControl {
            required_scopes: all.iter().map(|s| s.to_string()).collect(),
            required_scopes_any: any.iter().map(|s| s.to_string()).collect(),
            resource_type: resource.map(|r| r.0.to_string()),
            resource_action: resource.map(|r| r.1.to_string()),
            custom_auth: None,
        }
    }

    #[test]
    fn no_requirements_allow_anyone_even_without_identity() {
        assert!(check(&AccessControl::default(), None).is_ok());
    }

    #[test]
    fn every_required_scope_is_needed() {
        let r = rules(&["a", "b"], &[], None);
        assert!(check(&r, Some(&who(&["a", "b", "c"], None))).is_ok());
        let e = check(&r, Some(&who(&["a"], None))).unwrap_err();
        assert_eq!(e.code, "ACCESS_DENIED");
        assert_eq!(e.details.unwrap()["missingScopes"], json!(["b"]));
    }

    #[test]
    fn one_of_the_any_scopes_is_enough() {
        let r = rules(&[], &["x", "y"], None);
        assert!(check(&r, Some(&who(&["y"], None))).is_ok());
        assert!(check(&r, Some(&who(&["z"], None))).is_err());
        assert!(check(&r, None).is_err());
    }

    #[test]
    fn a_resource_needs_the_type_prefix_and_the_action() {
        let r = rules(&[], &[], Some(("repo", "write")));
        assert!(check(&r, Some(&who(&[], Some(&[("repo:1", &["read", "write"])])))).is_ok());
        assert!(check(&r, Some(&who(&[], Some(&[("repo:1", &["read"])])))).is_err());
        // "repository:1" does not start with "repo:".
        assert!(check(&r, Some(&who(&[], Some(&[("repository:1", &["write"])])))).is_err());
        assert!(check(&r, Some(&who(&[], None))).is_err());
    }

    #[test]
    fn a_resource_type_without_an_action_is_no_requirement() {
        let r = AccessControl {
            resource_type: Some("repo".into()),
            ..AccessControl::default()
        };
        assert!(check(&r, None).is_ok());
    }
}
