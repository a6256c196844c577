//! What `uvx alayasiki-mcp` users get: the release version, the pinned
//! install lines in README, the project URLs of the wheel, and `cargo run`
//! choosing the stdio server.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_alayasiki-mcp");
const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The newest release already published under the PyPI name; ours must
/// be newer, or `uvx alayasiki-mcp` keeps installing that one.
const PUBLISHED: (u64, u64, u64) = (0, 3, 0);
/// Where the project lives (the repository the PyPI name publishes from).
const REPOSITORY: &str = "https://github.com/takurot/aLayaSiki";

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn semver(v: &str) -> (u64, u64, u64) {
    let core = v.split('-').next().unwrap();
    let parts: Vec<u64> = core.split('.').map(|p| p.parse().unwrap()).collect();
    (parts[0], parts[1], parts[2])
}

#[test]
fn the_binary_reports_a_version_newer_than_the_published_release() {
    let out = Command::new(BIN)
        .env("ALAYASIKI_IN_PROCESS", "1")
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    let printed = String::from_utf8(out.stdout).unwrap();
    assert_eq!(printed.trim(), format!("alayasiki-mcp {VERSION}"));
    assert!(
        semver(VERSION) > PUBLISHED,
        "{VERSION} is not newer than the published {PUBLISHED:?}"
    );
}

#[test]
fn readme_install_lines_pin_this_version() {
    let readme = read("README.md");
    let pin = format!("alayasiki-mcp=={VERSION}");
    assert!(readme.contains(&pin), "README never pins {pin}");
    for (n, line) in readme.lines().enumerate() {
        if let Some(at) = line.find("alayasiki-mcp==") {
            let rest = &line[at + "alayasiki-mcp==".len()..];
            // X.Y.Z (the release checklist's placeholder) is allowed.
            assert!(
                rest.starts_with(VERSION) || rest.starts_with("X.Y.Z"),
                "README line {}: pins another version: {line}",
                n + 1
            );
        }
    }
    assert!(
        !readme.contains("uvx alayasiki-mcp\n") && !readme.contains("uvx alayasiki-mcp --version"),
        "an unpinned uvx line installs whatever holds the name"
    );
}

#[test]
fn package_urls_name_the_project_repository() {
    let cargo = read("Cargo.toml");
    assert!(cargo.contains(&format!("repository = \"{REPOSITORY}\"")));
    assert!(cargo.contains("default-run = \"alayasiki-mcp\""));
    let pyproject = read("mcp/pyproject.toml");
    assert!(pyproject.contains(&format!("Repository = \"{REPOSITORY}\"")));
    assert!(!pyproject.contains("github.com/alayasiki/"), "{pyproject}");
}
