//! Which JSON-RPC methods each era of the protocol has: the legacy
//! revisions (2024-11-05 to 2025-11-25) and the modern, stateless one
//! (2026-07-28), with the feature methods a catalog may offer.

use super::catalog::{Catalog, Feature};

/// Methods both eras have (`mcp::Server::dispatch` serves them).
const SHARED_METHODS: &[&str] = &[
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
];

/// Methods only the legacy revisions have.
const LEGACY_ONLY_METHODS: &[&str] = &["initialize", "ping", "logging/setLevel"];

/// Methods only the modern revision has.
const MODERN_ONLY_METHODS: &[&str] = &["server/discover"];

/// Methods of a [`Feature`] a catalog may offer, and whether the modern
/// revision has them too.
const FEATURE_METHODS: &[(&str, Feature, bool)] = &[
    ("completion/complete", Feature::Completion, true),
    ("resources/subscribe", Feature::Subscriptions, false),
    ("resources/unsubscribe", Feature::Subscriptions, false),
];

/// Whether `catalog` offers `method` as a feature method (in the modern
/// revision when `modern`).
fn is_feature_method(catalog: &dyn Catalog, method: &str, modern: bool) -> bool {
    FEATURE_METHODS
        .iter()
        .any(|(m, f, in_modern)| *m == method && (!modern || *in_modern) && catalog.supports(*f))
}

/// Whether the legacy revisions have `method` (anything else is `-32601`).
pub(super) fn is_legacy_method(catalog: &dyn Catalog, method: &str) -> bool {
    SHARED_METHODS.contains(&method)
        || LEGACY_ONLY_METHODS.contains(&method)
        || is_feature_method(catalog, method, false)
}

/// Whether the modern revision has `method`.
pub(super) fn is_modern_method(catalog: &dyn Catalog, method: &str) -> bool {
    SHARED_METHODS.contains(&method)
        || MODERN_ONLY_METHODS.contains(&method)
        || is_feature_method(catalog, method, true)
}
