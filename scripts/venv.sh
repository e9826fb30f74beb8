# Sourced by scripts/lab and scripts/test: make .venv (Python >= 3.11) and
# install the project (detector, lab and test tools) into it, again whenever pyproject.toml changes.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ensure_venv() {
    if [ ! -x .venv/bin/python ]; then
        local python
        python=$(command -v python3.11 || command -v python3.12 || command -v python3.13 || command -v python3 || true)
        if [ -z "$python" ] || ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
            echo "LoopGuard needs Python 3.11 or newer (found: ${python:-none})" >&2
            return 1
        fi
        echo "Creating .venv with $("$python" --version)"
        "$python" -m venv .venv
    fi
    local stamp=.venv/.loopguard-pyproject.sha256
    local digest
    digest=$(sha256sum pyproject.toml | cut -d' ' -f1)
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ]; then
        echo "Installing LoopGuard and its test tools into .venv (pyproject.toml changed)"
        .venv/bin/python -m pip install --quiet -e '.[lab,test]'
        echo "$digest" > "$stamp"
    fi
}
