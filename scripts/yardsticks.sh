#!/usr/bin/env bash
# Every yardstick a candidate model is measured on, one block per set, then both real sets pooled:
# the figures of models/README.md ("The shipped model on every set") and each session's "Yardsticks" in models/HISTORY.md come from this command.
#
#   bash scripts/yardsticks.sh [MODEL_DIR] [HELD_OUT_SCENES]
#
# MODEL_DIR defaults to the checkout's models/; $BACKEND picks the engine (default auto: the fastest here,
# openvino on a CPU with bfloat16 arithmetic, else onnx; see scorer.vision.backends). The real photos are read from $REAL_PHOTOS
# (default: ../shared/real-photos beside the checkout). HELD_OUT_SCENES is a folder written by
# `okgin data generate ... --procedural-fraction 1 --style-pool heldout` (index styles no
# model was trained on; the command is in datasets/README.md); without it that set is skipped.
# Each block ends with the line okgin eval ends with: "precision P recall R F1 F exact-images K/N";
# sets with corner-index labels add the per-stage line (detector recall, classifier accuracy). The
# last block pools the cards of both real sets (poker-cards-fmjio and all of rf-zk7wu-phone). Before it,
# poker-cards-fmjio as a webcam would give it (scripts/webcam-like.py with its defaults: narrowed to 0.75 of
# its width, grey noise, dead pixels, JPEG 80), written afresh each time; reported, not pooled.
# Last, both real sets again with their label errata applied (scripts/real-photo-errata.py: copies labelled
# right, written afresh each time), each and pooled: beside the published labels, never instead of them.
# With $KEEP_JSON set to a folder, each set's okgin eval JSON (card counts unrounded) is kept there as KEY.json,
# beside the webcam-like photos. With $AGAINST set to another model folder, each set is read by it too
# (okgin eval --against) and a line after each block says whether MODEL_DIR reads it better: photos read with
# fewer and more errors, the sign test, the paired bootstrap interval of the F1 change (scorer.vision.comparison);
# the pooled blocks add up the photos of both sets for their sign test, and one more block adds up every set's
# photos, each once (the black deck and the close-ups are in rf-zk7wu-phone), the errata copies left out.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
model="${1:-$repo/models}"
held_out="${2:-}"
real="${REAL_PHOTOS:-$repo/../shared/real-photos}"
if [[ -n "${KEEP_JSON:-}" ]]; then
    totals="$KEEP_JSON"
    mkdir -p "$totals"
else
    totals="$(mktemp -d)"
    trap 'rm -rf "$totals"' EXIT
fi

summary() {  # summary JSON... : the summary line of okgin eval's JSON totals, their card counts added up
    python3 - "$@" <<'PY'
import json, sys
# from the counts, not the JSON's figures (rounded to four places), so that 0.97446 prints as okgin eval prints it
sets = [json.load(open(path)) for path in sys.argv[1:]]
found = sum(t["cards_found"] for t in sets)
labelled = sum(t["cards_labelled"] for t in sets)
invented = sum(t["cards_invented"] for t in sets)
precision = found / (found + invented) if found + invented else 0.0
recall = found / labelled if labelled else 0.0
f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
exact, images = sum(t["exact_images"] for t in sets), sum(t["images"] for t in sets)
print(f"precision {precision:.3f} recall {recall:.3f} F1 {f1:.3f} exact-images {exact}/{images}")
PY
}

score() {  # score KEY NAME IMAGES LABELS [okgin eval options...]
    local key="$1" name="$2" images="$3" labels="$4"
    shift 4
    echo "== $name"
    okgin eval --model "$model" --backend "${BACKEND:-auto}" --images "$images" --labels "$labels" --json \
        ${AGAINST:+--against "$AGAINST"} "$@" > "$totals/$key.json"
    python3 - "$totals/$key.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])).get("stages")
if s:
    print(f"detector recall {s['detector_recall']:.2f} ({s['detector_recall_iou']:.2f} at IoU >= {s['match_iou']}), "
          f"classifier accuracy {s['classifier_accuracy']:.2f} on {s['indices']} labelled indices")
PY
    summary "$totals/$key.json"
    if [[ -n "${AGAINST:-}" ]]; then against "$totals/$key.json"; fi
}

against() {  # against JSON... : the comparison with $AGAINST, one set's or the photos of several added up
    python3 - "$@" <<'PY'
import json, os, sys
from scorer.vision.comparison import sign_test
sets = [json.load(open(path))["against"] for path in sys.argv[1:]]
better, worse = sum(s["photos_better"] for s in sets), sum(s["photos_worse"] for s in sets)
line = f"against {os.environ['AGAINST']}: photos read with fewer errors {better}, with more {worse}; sign test p {sign_test(better, worse):.3f}"
if len(sets) == 1:
    low, high = sets[0]["interval_95"]
    line += f"; F1 {sets[0]['reference_f1']:.4f} -> {sets[0]['candidate_f1']:.4f}, 95% interval [{low:+.4f}, {high:+.4f}]"
print(line)
PY
}

poker="$real/poker-cards-fmjio"
score poker "poker-cards-fmjio (88 phone photos, one poker deck)" "$poker/images" "$poker/labels" \
    --classes "$poker/classes.txt"
zk="$real/rf-zk7wu-phone"
score zk "rf-zk7wu-phone (160 photos)" "$zk/images" "$zk/labels" --classes "$zk/classes.txt"
score black "rf-zk7wu-phone, black deck (60 photos)" "$zk/images" "$zk/labels" --classes "$zk/classes.txt" \
    --only 'IMG_77*' --only 'IMG_78*'
score closeups "rf-zk7wu-phone, close-ups (100 photos)" "$zk/images" "$zk/labels" --classes "$zk/classes.txt" \
    --only 'IMG_2022*'
python3 "$repo/scripts/webcam-like.py" "$poker" "$totals/poker-webcam" > /dev/null
score webcam "poker-cards-fmjio as a webcam gives it (scripts/webcam-like.py)" "$totals/poker-webcam/images" \
    "$totals/poker-webcam/labels" --classes "$totals/poker-webcam/classes.txt"
if [[ -n "$held_out" ]]; then
    score held_out "held-out index styles ($held_out, val scenes)" "$held_out/images/val" "$held_out/labels/val"
fi
echo "== both real sets pooled (poker-cards-fmjio + rf-zk7wu-phone)"
summary "$totals/poker.json" "$totals/zk.json"
if [[ -n "${AGAINST:-}" ]]; then
    against "$totals/poker.json" "$totals/zk.json"
    echo "== every set above together (each photo once: both real sets, the webcam-like photos, the held-out scenes)"
    against "$totals/poker.json" "$totals/zk.json" "$totals/webcam.json" ${held_out:+"$totals/held_out.json"}
fi
for name in poker-cards-fmjio rf-zk7wu-phone; do
    python3 "$repo/scripts/real-photo-errata.py" "$real/$name" "$totals/errata/$name" > /dev/null
done
score poker_errata "poker-cards-fmjio, labels corrected (datasets/real-photo-errata.csv)" \
    "$totals/errata/poker-cards-fmjio/images" "$totals/errata/poker-cards-fmjio/labels" \
    --classes "$totals/errata/poker-cards-fmjio/classes.txt"
score zk_errata "rf-zk7wu-phone, labels corrected (datasets/real-photo-errata.csv)" \
    "$totals/errata/rf-zk7wu-phone/images" "$totals/errata/rf-zk7wu-phone/labels" \
    --classes "$totals/errata/rf-zk7wu-phone/classes.txt"
echo "== both real sets pooled, labels corrected"
summary "$totals/poker_errata.json" "$totals/zk_errata.json"
if [[ -n "${AGAINST:-}" ]]; then against "$totals/poker_errata.json" "$totals/zk_errata.json"; fi
