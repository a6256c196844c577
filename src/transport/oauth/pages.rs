//! The facade's two pages, rendered on the server with no script: the
//! consent page a person sees before the upstream sign-in, and the page
//! that says why an authorization cannot go on (shown instead of a
//! redirect whenever the redirect URI itself is in doubt).

use super::super::http::{make_header, Response};

/// Headers every facade page carries: nothing runs, nothing frames it,
/// nothing caches it, and no URL leaks to another site as a referrer.
fn page(status: u16, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title><style>{STYLE}</style></head><body><main>{body}</main></body></html>",
        title = escape(title),
    );
    Response::from_data(html.into_bytes())
        .with_status_code(status)
        .with_header(make_header("Content-Type", "text/html; charset=utf-8"))
        .with_header(make_header(
            "Content-Security-Policy",
            "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
        ))
        .with_header(make_header("X-Frame-Options", "DENY"))
        .with_header(make_header("Cache-Control", "no-store"))
        // `same-origin`, not `no-referrer`: with the latter browsers send
        // `Origin: null` on the consent form's POST, which the origin
        // check refuses; other sites still learn nothing.
        .with_header(make_header("Referrer-Policy", "same-origin"))
}

const STYLE: &str =
    "body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1b1d21}\
main{max-width:32rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:12px;\
box-shadow:0 1px 4px #0002}h1{font-size:1.3rem;margin-top:0}code{word-break:break-all}\
dl{display:grid;grid-template-columns:auto 1fr;gap:.3rem 1rem}dt{color:#5b6070}dd{margin:0}\
.actions{display:flex;gap:1rem;margin-top:1.5rem}button{font:inherit;padding:.6rem 1.4rem;\
border-radius:8px;border:1px solid #8a8f9c;background:#fff;cursor:pointer}\
button.allow{background:#1f5fd6;color:#fff;border-color:#1f5fd6}\
@media (prefers-color-scheme: dark){body{background:#15171b;color:#e6e8ec}\
main{background:#1f2228}button{background:#2a2e36;color:#e6e8ec}dt{color:#a0a6b4}}";

/// `s` safe inside HTML text and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// What the consent page shows.
pub struct Consent<'a> {
    pub consent_id: &'a str,
    pub client_name: &'a str,
    pub client_id: &'a str,
    pub by_metadata_document: bool,
    pub redirect_host: &'a str,
    pub resource: &'a str,
}

/// The consent page: which client, where the code goes, to what memory.
pub fn consent(c: &Consent<'_>, action: &str) -> Response {
    let how = if c.by_metadata_document {
        "described by its metadata document at"
    } else {
        "registered with this server as"
    };
    let body = format!(
        "<h1>Allow {name} to use your memory?</h1>\
         <p>An application is asking to read and write the memory at this server \
         on your behalf. You sign in with your organisation's account next.</p>\
         <dl><dt>Application</dt><dd>{name}</dd>\
         <dt>Identified</dt><dd>{how} <code>{id}</code></dd>\
         <dt>Sends you back to</dt><dd><code>{host}</code></dd>\
         <dt>Memory</dt><dd><code>{resource}</code></dd></dl>\
         <p>Only allow applications you started yourself.</p>\
         <form method=\"post\" action=\"{action}\">\
         <input type=\"hidden\" name=\"consent\" value=\"{consent}\">\
         <div class=\"actions\"><button class=\"allow\" name=\"decision\" value=\"allow\">Allow</button>\
         <button name=\"decision\" value=\"deny\">Deny</button></div></form>",
        name = escape(c.client_name),
        id = escape(c.client_id),
        host = escape(c.redirect_host),
        resource = escape(c.resource),
        consent = escape(c.consent_id),
        action = escape(action),
    );
    page(200, "Allow access to your memory?", &body)
}

/// A page saying the authorization cannot go on, and why.
pub fn refusal(status: u16, why: &str) -> Response {
    let body = format!(
        "<h1>This sign-in cannot continue</h1><p>{}</p>\
         <p>Start again from your application.</p>",
        escape(why)
    );
    page(status, "Sign-in cannot continue", &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_escaped() {
        assert_eq!(
            escape("<script>\"x\"&'y'</script>"),
            "&lt;script&gt;&quot;x&quot;&amp;&#39;y&#39;&lt;/script&gt;"
        );
    }
}
