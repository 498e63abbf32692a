#!/usr/bin/env bash
# The whole test suite on a fresh machine: system packages, the package with its training
# and test extras, lint, declared dependencies, types (Python and the page's JavaScript), then
# every test (model, browser and slow ones included).
set -euo pipefail
cd "$(dirname "$0")/.."
export YOLO_OFFLINE=1 YOLO_AUTOINSTALL=false PIP_DISABLE_PIP_VERSION_CHECK=1

bash scripts/system-packages.sh
python3 -m pip install --quiet -e '.[train,test]'

ruff check .
ruff format --check .
deptry .
mypy
npm ci --no-audit --no-fund --prefer-offline
npm run --silent lint
npm test
python3 -m pytest -q "$@"
