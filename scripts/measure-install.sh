#!/usr/bin/env bash
# Size and time of an install in a brand-new virtual environment, the figures in README.md.
#
#   bash scripts/measure-install.sh [EXTRAS] [GIT_REF]
#
# EXTRAS is what goes in the brackets ("" for the light install, "train,test" for the
# developer's); GIT_REF (default HEAD) is the commit to install, cloned fresh into a
# temporary directory so that nothing built in this checkout is reused. pip runs with
# --no-cache-dir so that each figure is independent of what was installed before it.
set -euo pipefail
extras="${1:-}"
ref="${2:-HEAD}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

git clone --quiet "$repo" "$work/src"
git -C "$work/src" checkout --quiet "$ref"
python3 -m venv "$work/venv"
spec="."
[[ -n "$extras" ]] && spec=".[$extras]"

start=$(date +%s)
(cd "$work/src" && "$work/venv/bin/pip" install --quiet --no-cache-dir -e "$spec")
seconds=$(($(date +%s) - start))

size=$(du -sh "$work/venv" | cut -f1)
torch=$("$work/venv/bin/python" -c 'import importlib.util as u; print("yes" if u.find_spec("torch") else "no")')
packages=$("$work/venv/bin/pip" list --format=freeze 2>/dev/null | wc -l)
echo "install: pip install -e '$spec' at $(git -C "$work/src" rev-parse --short HEAD)"
echo "venv size: $size   install time: ${seconds}s   packages: $packages   torch: $torch"
