#!/bin/bash
# Build .dev/ (git-ignored): what a lent GPU machine needs for scripts/gpu-round.py, and the command it runs.
#
# That machine has PyTorch but not ultralytics, none of Debian's fonts or rendered decks, no network, and takes
# 64 MiB with the checkout (26 MiB). So: the ultralytics wheel, a stand-in for polars (40 MB; ultralytics reads
# results.csv with it inside a try), the train-pool fonts that draw suits plus the smallest that draw ranks
# (~45 MB, xz), the smallest rendered decks (~27 MB of PNG) and GIMP's patterns. Then, with the device tool:
#
#   run  command: SEED=4100 SECONDS_BUDGET=440 bash .dev/run.sh   carry: [".dev"]   timeout_s: 560
#
# (STAGES=detector or classifier trains one alone; DARK_PERCENT sets the share of dark-faced procedural styles)
#
# and okgin average-weights / scripts/yardsticks.sh on the weights it brings back, like any candidate.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .dev && mkdir -p .dev/whl .dev/stub/polars
exclude="$(git rev-parse --git-dir)/info/exclude"
mkdir -p "$(dirname "$exclude")" && (grep -qx "/.dev/" "$exclude" 2>/dev/null || echo "/.dev/" >>"$exclude")

version=$(python3 -c 'import importlib.metadata as m; print(m.version("ultralytics"))')
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 -d .dev/whl "ultralytics==$version"
cat >.dev/stub/polars/__init__.py <<'EOF'
"""Stand-in for polars, which ultralytics imports only to read results.csv, inside a try."""


def read_csv(*args, **kwargs):
    raise RuntimeError("polars stand-in: not installed on this machine")
EOF

python3 - <<'EOF'
import os
from pathlib import Path

from scorer.synth import procedural
from scorer.synth.faces import DEFAULT_FACES_DIR, available_decks

suits = set(procedural.suit_fonts("train"))
ranks = sorted(set(procedural.rank_fonts("train")) - suits, key=os.path.getsize)
chosen, total = sorted(suits), sum(map(os.path.getsize, suits))
for path in ranks:
    if total + os.path.getsize(path) <= 45e6:
        chosen.append(path)
        total += os.path.getsize(path)
Path(".dev/fonts.list").write_text("".join(f"{str(p).lstrip('/')}\n" for p in chosen))
size = lambda deck: sum(f.stat().st_size for f in (DEFAULT_FACES_DIR / deck).iterdir())  # noqa: E731
decks, total = [], 0
for deck in sorted(available_decks(), key=size):
    if total + size(deck) <= 27e6:
        decks.append(f"faces/{deck}")
        total += size(deck)
Path(".dev/faces.list").write_text("".join(f"{deck}\n" for deck in decks))
print(f"{len(chosen)} fonts, {len(decks)} decks")
EOF
tar -cf - -C / -T .dev/fonts.list | xz -T0 -6 >.dev/fonts.tar.xz
tar -cf - -C datasets -T .dev/faces.list | xz -T0 -1 >.dev/faces.tar.xz
tar -cJf .dev/patterns.tar.xz -C / usr/share/gimp/2.0/patterns 2>/dev/null || tar -cJf .dev/patterns.tar.xz -T /dev/null

cat >.dev/run.sh <<'EOF'
#!/bin/bash
# On the lent machine: install the wheel, unpack fonts, decks and patterns, check CUDA, then one gpu-round.
set -o pipefail
export PYTHONUNBUFFERED=1 YOLO_OFFLINE=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .dev/whl/*.whl || exit 2
export PYTHONPATH=/tmp/site:$PWD/.dev/stub
tar -xJf .dev/fonts.tar.xz -C / && tar -xJf .dev/patterns.tar.xz -C / && tar -xJf .dev/faces.tar.xz -C datasets || exit 3
nproc; df -h /dev/shm | tail -1
python3 -c "
import torch; from ultralytics import YOLO
from scorer.synth import procedural
print(torch.__version__, torch.cuda.get_device_name(0), len(procedural.rank_fonts('train')), 'rank fonts')
YOLO('models/corner-detector.pt').predict(torch.zeros(1, 3, 320, 320), device=0, verbose=False)
" || exit 4
budget=${SECONDS_BUDGET:-440}
timeout $((budget + 40)) python3 scripts/gpu-round.py --init models --work /tmp/round --out "$OUT" \
  --seed "${SEED:-4100}" --seconds "$budget" --render-share "${RENDER_SHARE:-0.35}" \
  --stages "${STAGES:-detector,classifier}" ${DARK_PERCENT:+--dark-percent "$DARK_PERCENT"} --device 0 2>&1 \
  | tr '\r' '\n' | grep -v -E "it/s|^ +[0-9]+/[0-9]+ " | tail -40
for stage in detector:det classifier:cls; do  # when the round was stopped before it copied them
  for f in weights/best.pt weights/last.pt results.csv; do
    [ -e "$OUT/${stage#*:}-$(basename $f)" ] || cp "/tmp/round/${stage%:*}/$f" "$OUT/${stage#*:}-$(basename $f)" 2>/dev/null
  done
done
ls -la "$OUT"
EOF
tracked=$(git ls-files -z | xargs -0 stat -c %s | awk '{s += $1} END {print s}')
bundle=$(du -sb .dev | cut -f1)
echo "checkout $((tracked / 1048576)) MiB + .dev $((bundle / 1048576)) MiB (a device call takes 64 MiB)"
