#!/usr/bin/env bash
# Lint the GitHub Actions workflows (.github/workflows/*.yml), offline.
#
#   bash scripts/lint_workflows.sh
#
# Installs the linters pinned in scripts/requirements-lint.txt from PyPI into
# target/lint-venv, then runs:
# 1. check-jsonschema with its built-in GitHub workflow schema (structure,
#    keys, allowed values), and
# 2. actionlint (expressions, job dependencies, matrix references, inputs of
#    well-known actions, runner labels, deprecated action runtimes).
#    Its shellcheck and pyflakes passes are off, so results do not depend on what
#    happens to be installed.
# Exits non-zero if either reports a problem.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v python3 >/dev/null || { echo "lint_workflows: python3 not found" >&2; exit 1; }
shopt -s nullglob
workflows=(.github/workflows/*.yml .github/workflows/*.yaml)
shopt -u nullglob
if [ "${#workflows[@]}" -eq 0 ]; then
  echo "lint_workflows: no workflow files in .github/workflows" >&2
  exit 1
fi

venv=target/lint-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r scripts/requirements-lint.txt

"$venv/bin/check-jsonschema" --builtin-schema vendor.github-workflows "${workflows[@]}"
"$venv/bin/actionlint" -shellcheck= -pyflakes= "${workflows[@]}"
echo "lint_workflows: OK: ${workflows[*]}"
