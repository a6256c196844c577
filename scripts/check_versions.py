#!/usr/bin/env python3
"""Check that the release versions agree.

Compares the Cargo package version (Cargo.toml), the version of the Python
package that maturin builds from mcp/pyproject.toml, and optionally a release
tag and built wheels. Exits 0 when they all agree, 1 with one clear line per
disagreement otherwise, 2 on a bad command line or unreadable file.

Usage (from anywhere; paths default to this repository):
    python3 scripts/check_versions.py
    python3 scripts/check_versions.py --tag mcp-v0.4.0
    python3 scripts/check_versions.py --wheel dist/alayasiki_mcp-*.whl

The Python version "as maturin produces it": with `dynamic = ["version"]`
maturin takes the Cargo version and writes it in PEP 440 form, so a plain
X.Y.Z stays X.Y.Z and the pre-releases alpha.N / beta.N / rc.N become aN / bN
/ rcN. A literal `project.version` must equal that. Cargo versions outside
those forms (build metadata, other pre-release labels) are refused, since
they have no single agreed PEP 440 spelling. `--wheel` reads the version the
build really wrote (the wheel's METADATA and its file name) and checks that
the wheel came from mcp/pyproject.toml (its Requires-Python) and holds only
the alayasiki-mcp executable, no Python entry points. Needs Python 3.11+.
"""
import argparse
import pathlib
import re
import sys
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
TAG_PREFIX = "mcp-v"
SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-(alpha|beta|rc)\.(0|[1-9]\d*))?$"
)
PEP440_PRE = {"alpha": "a", "beta": "b", "rc": "rc"}


class Usage(Exception):
    pass


def load_toml(path):
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise Usage(f"cannot read {path}: {e.strerror}") from e
    try:
        import tomllib  # Python 3.11+
    except ImportError as e:
        raise Usage("needs Python 3.11 or newer (tomllib)") from e
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise Usage(f"{path} is not valid TOML: {e}") from e


def cargo_version(cargo_toml):
    pkg = load_toml(cargo_toml).get("package", {})
    version = pkg.get("version")
    if not isinstance(version, str):
        raise Usage(f"{cargo_toml} has no [package] version string")
    return version


def pep440_from_cargo(version):
    m = SEMVER.match(version)
    if not m:
        return None
    major, minor, patch, label, number = m.groups()
    base = f"{major}.{minor}.{patch}"
    return base if label is None else f"{base}{PEP440_PRE[label]}{number}"


def python_version(pyproject, cargo_ver, problems):
    """The version maturin gives the wheel, or None when it cannot be told."""
    project = load_toml(pyproject).get("project", {})
    if project.get("name") != "alayasiki-mcp":
        problems.append(f"{pyproject}: project.name is {project.get('name')!r}, expected 'alayasiki-mcp'")
    dynamic = project.get("dynamic", [])
    literal = project.get("version")
    if "version" in dynamic and literal is not None:
        problems.append(f"{pyproject}: project.version is set and also listed in dynamic")
        return None
    derived = pep440_from_cargo(cargo_ver)
    if derived is None:
        problems.append(
            f"Cargo version {cargo_ver!r} is not X.Y.Z or X.Y.Z-(alpha|beta|rc).N, "
            "so its Python version is ambiguous"
        )
        return None
    if "version" in dynamic:
        return derived
    if literal is None:
        problems.append(f"{pyproject}: neither project.version nor dynamic = [\"version\"]")
        return None
    if literal != derived:
        problems.append(
            f"{pyproject}: project.version {literal!r} != {derived!r} (from Cargo version {cargo_ver!r})"
        )
    return literal


def read_wheel(path):
    """(METADATA text, file names) of a built wheel."""
    if not path.is_file():
        raise Usage(f"{path}: no such wheel file")
    if not path.name.endswith(".whl") or len(path.name.split("-")) < 5:
        raise Usage(f"{path} is not a wheel file name (NAME-VERSION-PY-ABI-PLATFORM.whl)")
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
            meta_names = [n for n in names if n.endswith(".dist-info/METADATA")]
            if len(meta_names) != 1:
                raise Usage(f"{path} has {len(meta_names)} .dist-info/METADATA files, expected 1")
            return zf.read(meta_names[0]).decode("utf-8"), names
    except (OSError, zipfile.BadZipFile) as e:
        raise Usage(f"cannot read wheel {path}: {e}") from e


def check_wheel(path, py_ver, requires_python, problems):
    """The wheel's versions agree, and it is the bin wheel mcp/pyproject.toml describes."""
    meta, names = read_wheel(path)
    header = meta.split("\n\n", 1)[0]  # the long description follows the first blank line

    def field(key):
        return re.findall(rf"^{key}: (.*)$", header, re.MULTILINE)

    meta_ver = (field("Version") or [None])[0]
    file_ver = path.name.split("-")[1]
    if py_ver is not None and meta_ver != py_ver:
        problems.append(f"{path.name}: METADATA Version {meta_ver!r} != expected Python version {py_ver!r}")
    if meta_ver != file_ver:
        problems.append(f"{path.name}: file name version {file_ver!r} != METADATA Version {meta_ver!r}")
    # Built from mcp/pyproject.toml (not from Cargo.toml alone): its
    # Requires-Python is there. One executable, no Python entry points.
    if field("Requires-Python") != [requires_python]:
        problems.append(
            f"{path.name}: Requires-Python {field('Requires-Python')} != [{requires_python!r}] "
            "(was it built from mcp/pyproject.toml?)"
        )
    scripts = [n.rsplit("/", 1)[1] for n in names if re.search(r"\.data/scripts/[^/]+$", n)]
    if scripts not in (["alayasiki-mcp"], ["alayasiki-mcp.exe"]):
        problems.append(f"{path.name}: executables {scripts}, expected only alayasiki-mcp")
    if any(n.endswith(".dist-info/entry_points.txt") for n in names):
        problems.append(f"{path.name}: has entry points; the wheel should only ship the executable")


def main(argv):
    ap = argparse.ArgumentParser(description="Check that Cargo, Python package, tag and wheel versions agree.")
    ap.add_argument("--tag", help=f"release tag, {TAG_PREFIX}X.Y.Z; must equal the Cargo version")
    ap.add_argument("--wheel", action="extend", nargs="+", default=[], type=pathlib.Path,
                    help="built wheels whose versions and contents must agree")
    ap.add_argument("--cargo-toml", type=pathlib.Path, default=ROOT / "Cargo.toml")
    ap.add_argument("--pyproject", type=pathlib.Path, default=ROOT / "mcp" / "pyproject.toml")
    args = ap.parse_args(argv)

    problems = []
    cargo_ver = cargo_version(args.cargo_toml)
    py_ver = python_version(args.pyproject, cargo_ver, problems)

    if args.tag is not None:
        ref = args.tag.removeprefix("refs/tags/")
        if not ref.startswith(TAG_PREFIX):
            problems.append(f"tag {args.tag!r} does not start with {TAG_PREFIX!r}")
        elif ref[len(TAG_PREFIX):] != cargo_ver:
            problems.append(
                f"tag {ref!r} names version {ref[len(TAG_PREFIX):]!r} but Cargo.toml has {cargo_ver!r} "
                f"(expected tag {TAG_PREFIX}{cargo_ver})"
            )

    requires_python = load_toml(args.pyproject).get("project", {}).get("requires-python")
    for wheel in args.wheel:
        check_wheel(wheel, py_ver, requires_python, problems)

    if problems:
        for p in problems:
            print(f"check_versions: FAIL: {p}", file=sys.stderr)
        return 1
    parts = [f"Cargo {cargo_ver}", f"Python {py_ver}"]
    if args.tag is not None:
        parts.append(f"tag {args.tag}")
    if args.wheel:
        parts.append(f"{len(args.wheel)} wheel(s)")
    print("check_versions: OK: " + ", ".join(parts))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Usage as e:
        print(f"check_versions: ERROR: {e}", file=sys.stderr)
        sys.exit(2)
