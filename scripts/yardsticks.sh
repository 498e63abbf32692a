#!/usr/bin/env bash
# Every yardstick a candidate model must beat the shipped one on, one block per set: the
# figures in models/README.md ("Yardsticks") come from this command.
#
#   bash scripts/yardsticks.sh [MODEL_DIR] [HELD_OUT_SCENES]
#
# MODEL_DIR defaults to the checkout's models/. The real photos are read from $REAL_PHOTOS
# (default: ../shared/real-photos beside the checkout). HELD_OUT_SCENES is a folder written by
# `okgin data generate ... --procedural-fraction 1 --style-pool heldout` (index styles no
# model was trained on; the command is in datasets/README.md); without it that set is skipped.
# Each block ends with okgin eval's own last line: "precision P recall R F1 F exact-images K/N";
# sets with corner-index labels add the per-stage line (detector recall, classifier accuracy).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
model="${1:-$repo/models}"
held_out="${2:-}"
real="${REAL_PHOTOS:-$repo/../shared/real-photos}"

score() {  # score NAME IMAGES LABELS [CLASSES] [okgin eval options...]
    local name="$1" images="$2" labels="$3"
    shift 3
    echo "== $name"
    okgin eval --model "$model" --images "$images" --labels "$labels" "$@" | grep -E '^(detector recall|precision)'
}

poker="$real/poker-cards-fmjio"
score "poker-cards-fmjio (88 phone photos, one poker deck)" \
    "$poker/images" "$poker/labels" --classes "$poker/classes.txt"
zk="$real/rf-zk7wu-phone"
score "rf-zk7wu-phone (160 photos)" "$zk/images" "$zk/labels" --classes "$zk/classes.txt"
score "rf-zk7wu-phone, black deck (60 photos)" "$zk/images" "$zk/labels" --classes "$zk/classes.txt" \
    --only 'IMG_77*' --only 'IMG_78*'
score "rf-zk7wu-phone, close-ups (100 photos)" "$zk/images" "$zk/labels" --classes "$zk/classes.txt" \
    --only 'IMG_2022*'
if [[ -n "$held_out" ]]; then
    score "held-out index styles ($held_out, val scenes)" "$held_out/images/val" "$held_out/labels/val"
fi
