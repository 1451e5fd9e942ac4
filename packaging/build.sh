#!/usr/bin/env bash
# Build dist/edge, the single-file executable, with the project's virtual environment.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
"$PYTHON" -m PyInstaller packaging/edge.spec --noconfirm --clean \
    --distpath "${DISTPATH:-dist}" --workpath "${WORKPATH:-build/pyinstaller}" --log-level WARN
ls -l "${DISTPATH:-dist}/edge"
