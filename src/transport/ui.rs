//! The memory browser: a static page at `/ui` that signs in with an API
//! token and uses the JSON API (README "Memory browser").
//!
//! Its assets are embedded in the binary and served to anyone: they hold
//! nothing of any tenant. The page keeps the token the person pastes in the
//! tab's `sessionStorage` and sends it as `Authorization: Bearer` with every
//! call, so what it shows and may change is what that token allows. Every
//! answer here carries a strict Content-Security-Policy (scripts and styles
//! only from these files, nothing inline, no framing) and the headers that
//! stop MIME sniffing and referrers.

use super::http::{error, make_header, Response};

/// The page's path; its assets are under `/ui/`.
pub const UI_PATH: &str = "/ui";

/// The Content-Security-Policy of every `/ui` answer.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self'; img-src 'self'; connect-src 'self'; object-src 'none'; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The embedded assets: path after `/ui`, media type, bytes.
pub const ASSETS: &[(&str, &str, &[u8])] = &[
    (
        "",
        "text/html; charset=utf-8",
        include_bytes!("ui/index.html"),
    ),
    (
        "/",
        "text/html; charset=utf-8",
        include_bytes!("ui/index.html"),
    ),
    (
        "/app.js",
        "text/javascript; charset=utf-8",
        include_bytes!("ui/app.js"),
    ),
    (
        "/markdown.js",
        "text/javascript; charset=utf-8",
        include_bytes!("ui/markdown.js"),
    ),
    (
        "/graph.js",
        "text/javascript; charset=utf-8",
        include_bytes!("ui/graph.js"),
    ),
    (
        "/app.css",
        "text/css; charset=utf-8",
        include_bytes!("ui/app.css"),
    ),
];

/// What follows [`UI_PATH`] when `path` is the page or one of its assets'
/// paths (known or not: an unknown one is a 404 with the same headers).
pub fn asset_path(path: &str) -> Option<&str> {
    path.strip_prefix(UI_PATH)
        .filter(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Whether `origin` is the origin of a page served by this server under
/// the name `host` (which the `Host` allow-list then checks).
pub fn is_same_origin(origin: &str, host: Option<&str>) -> bool {
    let Some(host) = host.map(str::trim).filter(|h| !h.is_empty()) else {
        return false;
    };
    ["http://", "https://"].iter().any(|scheme| {
        origin
            .strip_prefix(scheme)
            .is_some_and(|rest| rest.eq_ignore_ascii_case(host))
    })
}

/// The answer for the asset at `asset` (what follows `/ui`).
pub(super) fn serve(asset: &str) -> Response {
    let found = ASSETS.iter().find(|(path, _, _)| *path == asset);
    let response = match found {
        Some((_, media_type, bytes)) => Response::from_data(bytes.to_vec())
            .with_status_code(200)
            .with_header(make_header("Content-Type", media_type))
            .with_header(make_header("Cache-Control", "no-cache")),
        None => error(404, "no_route", "no such page"),
    };
    with_security_headers(response)
}

fn with_security_headers(response: Response) -> Response {
    response
        .with_header(make_header(
            "Content-Security-Policy",
            CONTENT_SECURITY_POLICY,
        ))
        .with_header(make_header("X-Content-Type-Options", "nosniff"))
        .with_header(make_header("X-Frame-Options", "DENY"))
        .with_header(make_header("Referrer-Policy", "no-referrer"))
        .with_header(make_header("Cross-Origin-Opener-Policy", "same-origin"))
        .with_header(make_header("Cross-Origin-Resource-Policy", "same-origin"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_host_is_the_same_origin() {
        let host = Some("127.0.0.1:8080");
        assert!(is_same_origin("http://127.0.0.1:8080", host));
        assert!(is_same_origin("https://127.0.0.1:8080", host));
        assert!(!is_same_origin("http://127.0.0.1:8081", host));
        assert!(!is_same_origin("http://127.0.0.1:8080.evil", host));
        assert!(!is_same_origin("null", host));
        assert!(!is_same_origin("http://127.0.0.1:8080", None));
    }

    #[test]
    fn asset_paths_are_under_ui() {
        assert_eq!(asset_path("/ui"), Some(""));
        assert_eq!(asset_path("/ui/app.css"), Some("/app.css"));
        assert_eq!(asset_path("/uiapp.css"), None);
        assert_eq!(serve("/nope").status_code(), 404);
    }
}
