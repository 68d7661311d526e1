#!/usr/bin/env bash
# One GPU round, run on the GPU machine from the repository root after the parts of pack.sh are in $KIT.
# Stages run in the order given: unpack index reader reader-mix retriever-mix recall folds decide evaluate suite speed
# fetch compile
# (see README.md for what each costs).
#   bash tools/gpu_round/job.sh unpack index reader
set -euo pipefail

KIT=${KIT:-/tmp/kit}
OUT=${OUT:-$KIT/out}
PYTHON=${PYTHON:-python3}
MODEL=$KIT/checkpoint
DATA=$KIT/data
KB=${KB:-$DATA/entities.jsonl}
DEV=${DEV:-$DATA/dev.ttl}
ROUND=$KIT/reader-round
# The model card's next reader round: the shipped reader on the shipped retriever's candidates, 64 per passage.
READER_EPOCHS=${READER_EPOCHS:-2}
READER_LR=${READER_LR:-1e-5}
READER_SEED=${READER_SEED:-131}
READER_EXTRA=${READER_EXTRA:-}  # e.g. "--max-passages 8 --dev-docs 2" for a smoke run
# whose candidates the reader rounds read: the shipped retriever, or a retriever round's ($KIT/retriever-mix-round)
READER_RETRIEVER=${READER_RETRIEVER:-$KIT/checkpoint}
# Issue 45's round: the same on AIDA train plus passages of KB descriptions (1,800: 13 % of the mix), every described
# candidate shown title-only with probability MIX_TITLE_ONLY besides the dropout that balances golds and negatives.
MIX_ROUND=$KIT/reader-mix-round
MIX_PASSAGES=${MIX_PASSAGES:-1800}
MIX_TITLE_ONLY=${MIX_TITLE_ONLY:-0.2}
# Issue 45's retriever round: both towers from the shipped retriever against the whole KB's competitors, mined again
# from a new index each epoch, on the same mix (AIDA train plus MIX_PASSAGES description passages).
RETRIEVER_ROUND=$KIT/retriever-mix-round
RETRIEVER_EPOCHS=${RETRIEVER_EPOCHS:-2}
RETRIEVER_LR=${RETRIEVER_LR:-2e-5}
RETRIEVER_SEED=${RETRIEVER_SEED:-137}
RETRIEVER_EXTRA=${RETRIEVER_EXTRA:-}  # e.g. "--max-passages 8 --dev-docs 2" for a smoke run
# The learned decision's round (issue 75): FOLDS readers, each trained from the base encoder on AIDA train without
# one run of consecutive documents (--leave-out-fold K/N; the trainer writes the fold's own mention table into it), then
# the decision trained on AIDA train read by them: every document by the reader that did not see it.
TRAIN=${TRAIN:-$DATA/train.ttl}
FOLDS=${FOLDS:-2}
FOLD_EPOCHS=${FOLD_EPOCHS:-2}
FOLD_LR=${FOLD_LR:-5e-5}
FOLD_SEED=${FOLD_SEED:-151}
FOLD_EXTRA=${FOLD_EXTRA:-}  # e.g. "--max-passages 8 --dev-docs 2" for a smoke run
DECISION_EXTRA=${DECISION_EXTRA:-}  # e.g. "--documents 8"
DECISION_ROUND=$KIT/decision-round
# the out-of-domain sets whose recall the recall stage measures beside AIDA-A's (OKE's golds are owl:sameAs, which
# bench.dev_recall does not follow)
RECALL_SETS=${RECALL_SETS:-ace2004 spotlight microposts2014-train}
SUITE_MODELS=${SUITE_MODELS:-mix}  # which checkpoints the suite stage measures: shipped, round, mix
SPEED_DOCS=${SPEED_DOCS:-216}
COMPILE_MODES=${COMPILE_MODES:-reduce-overhead default}  # torch.compile modes the compile stage times
export ENTQA_CACHE=$KIT/cache PYTHONUNBUFFERED=1
# where unpack installs the wheels the image lacks (set before it exists, so that the stages after unpack in the
# same call find them)
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
mkdir -p "$OUT"

index_dir() {  # the cache folder that the index of checkpoint $1 (default the shipped one) is built in and read from
    "$PYTHON" - "${1:-$MODEL}" "$KB" <<'PY'
import sys
from annotator.model.checkpoint import load_config, load_retriever
from annotator.entity_index import cached_index_dir, entity_tower_id
config = load_config(sys.argv[1])
print(cached_index_dir(kb_path=sys.argv[2], entity_tower_id=entity_tower_id(load_retriever(sys.argv[1], config)),
                       config=config))
PY
}

timed() {  # runs a command, then prints its wall time; its exit status (also where `set -e` is off, as after ||)
    local start=$SECONDS status=0
    "$@" || status=$?
    echo "[gpu_round] $(( SECONDS - start )) s: $*" >&2
    return "$status"
}

unpack() {
    if compgen -G "$KIT/kit.tar.xz.*" > /dev/null; then
        # Python's lzma where the image has no xz
        cat "$KIT"/kit.tar.xz.* | { if command -v xz > /dev/null; then xz -dc; else "$PYTHON" -c \
            "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.stdin.buffer), sys.stdout.buffer)"; fi; } |
            tar -C "$KIT" -xf -
        rm "$KIT"/kit.tar.xz.*
    fi
    [ -d "$MODEL" ] || { echo "$MODEL missing: copy every part of pack.sh into $KIT first" >&2; exit 1; }
    if ! "$PYTHON" -c "import faiss, rdflib, flask, gunicorn, ahocorasick, pydantic, spectree, pyoxigraph, lightgbm" \
            2> /dev/null; then
        "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
            "$KIT"/wheels/*.whl
    fi
    if command -v nvidia-smi > /dev/null; then nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; fi
    "$PYTHON" -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
}

build_index() {  # the KB's index with the entity tower of checkpoint $1
    timed "$PYTHON" -m annotator.entity_index --model "$1" --kb "$KB"
}

index() {
    build_index "$MODEL"
}

checkpoint_of() {  # shipped | round | mix | retriever-mix -> its folder
    case "$1" in shipped) echo "$MODEL" ;; round) echo "$ROUND" ;; mix) echo "$MIX_ROUND" ;;
        retriever-mix) echo "$RETRIEVER_ROUND" ;;
        *) echo "unknown checkpoint $1: shipped, round, mix or retriever-mix" >&2; exit 2 ;; esac
}

train_reader() {  # the shipped reader fine-tuned on READER_RETRIEVER's candidates, into $1, with options $2...
    local index out=$1
    shift
    index=$(index_dir "$READER_RETRIEVER")
    [ -f "$index/manifest.json" ] || { echo "no index in $index: run the index stage first" >&2; exit 1; }
    # shellcheck disable=SC2086  # READER_EXTRA is a list of options
    timed "$PYTHON" -m annotator.cli.train reader --train "$DATA/train.ttl" --dev "$DEV" --kb "$KB" \
        --retriever "$READER_RETRIEVER" --init-reader "$MODEL" \
        --index-dir "$index" --out "$out" --epochs "$READER_EPOCHS" --batch-size 16 --candidates 64 \
        --eval-kb-size 3000 --dev-docs 216 --eval-top-k 16 --max-entity-len 64 --lr "$READER_LR" \
        --save-steps 1000 --seed "$READER_SEED" "$@" $READER_EXTRA
}

reader() {
    train_reader "$ROUND"
    cp "$ROUND/metrics.jsonl" "$OUT/reader_metrics.jsonl"
}

reader_mix() {
    train_reader "$MIX_ROUND" --kb-passages "$MIX_PASSAGES" --title-only-dropout "$MIX_TITLE_ONLY"
    cp "$MIX_ROUND/metrics.jsonl" "$OUT/reader_mix_metrics.jsonl"
}

retriever_mix() {  # RETRIEVER_EPOCHS epochs of both towers, each against competitors mined from the last one's index
    local from=$MODEL out epoch index
    for epoch in $(seq "$RETRIEVER_EPOCHS"); do
        index=$(index_dir "$from")
        [ -f "$index/manifest.json" ] || build_index "$from"
        out=$KIT/retriever-mix-epoch-$epoch
        # shellcheck disable=SC2086  # RETRIEVER_EXTRA is a list of options
        timed "$PYTHON" -m annotator.cli.train entity-tower --train "$DATA/train.ttl" --dev "$DEV" --kb "$KB" \
            --retriever "$from" --index-dir "$index" --out "$out" --both-towers \
            --kb-passages "$MIX_PASSAGES" --epochs 1 --batch-size 32 --lr "$RETRIEVER_LR" \
            --seed $(( RETRIEVER_SEED + epoch )) --save-steps 1000 $RETRIEVER_EXTRA
        cat "$out/metrics.jsonl" >> "$OUT/retriever_mix_metrics.jsonl"
        from=$out
    done
    build_index "$from"
    ln -sfn "$from" "$RETRIEVER_ROUND"
}

recall() {  # bench.dev_recall of the shipped retriever and the round's on AIDA-A and RECALL_SETS: $OUT/recall.json
    local name dir set datasets=("$DEV") parts=$KIT/recall
    for set in $RECALL_SETS; do datasets+=("$DATA/ood-dev/$set.ttl"); done
    mkdir -p "$parts"
    for name in shipped retriever-mix; do
        dir=$(checkpoint_of "$name")
        [ -d "$dir" ] || continue
        timed "$PYTHON" -m bench.dev_recall --model "$dir" --kb "$KB" --index-dir "$(index_dir "$dir")" \
            --dataset "${datasets[@]}" --at 1 10 16 100 --out "$parts/$name.json"
    done
    "$PYTHON" - "$parts" "$OUT/recall.json" <<'PY'
import json, sys
from pathlib import Path
Path(sys.argv[2]).write_text(json.dumps({part.stem: json.loads(part.read_text(encoding="utf-8"))
                                         for part in sorted(Path(sys.argv[1]).glob("*.json"))}, indent=1),
                             encoding="utf-8")
PY
}

folds() {  # FOLDS fold readers side by side on the one GPU; meanwhile on the CPU the knowledge tables of the shipped
    # checkpoint (the decision's features) and of each fold's mention table (its reading's name test; the same table
    # the fold's trainer writes into its checkpoint, counted here too so that its tables build meanwhile)
    local index k pid failed=0 pids=()
    index=$(index_dir "$MODEL")
    [ -f "$index/manifest.json" ] || { echo "no index in $index: run the index stage first" >&2; exit 1; }
    timed "$PYTHON" -m annotator.knowledge --model "$MODEL" --kb "$KB" > "$KIT/knowledge.log" 2>&1 &
    pids+=($!)
    for k in $(seq "$FOLDS"); do
        mkdir -p "$KIT/fold-$k-table"
        { "$PYTHON" -m annotator.cli.mention_table --train "$TRAIN" --leave-out-fold "$k/$FOLDS" --kb "$KB" \
            --out "$KIT/fold-$k-table/mentions.tsv" &&
          "$PYTHON" -m annotator.knowledge --model "$KIT/fold-$k-table" --kb "$KB"; } > "$KIT/fold-$k-table.log" 2>&1 &
        pids+=($!)
        # shellcheck disable=SC2086  # FOLD_EXTRA is a list of options
        timed "$PYTHON" -m annotator.cli.train reader --train "$TRAIN" --leave-out-fold "$k/$FOLDS" --dev "$DEV" \
            --kb "$KB" --retriever "$MODEL" --index-dir "$index" --out "$KIT/fold-$k" --epochs "$FOLD_EPOCHS" \
            --batch-size 16 --candidates 64 --eval-kb-size 3000 --dev-docs 100 --eval-top-k 16 --max-entity-len 64 \
            --lr "$FOLD_LR" --save-steps 1000 --seed $(( FOLD_SEED + k )) $FOLD_EXTRA > "$KIT/fold-$k.log" 2>&1 &
        pids+=($!)
    done
    # a fold stopped by the call's time limit after an epoch keeps its best checkpoint so far for decide
    for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
    for k in $(seq "$FOLDS"); do tail -n 3 "$KIT/fold-$k.log" "$KIT/fold-$k-table.log" >&2; done
    tail -n 2 "$KIT/knowledge.log" >&2
    [ "$failed" = 0 ] || { echo "a fold or the knowledge tables failed: $KIT/fold-*.log, $KIT/knowledge.log" >&2; exit 1; }
}

decide() {  # the decision trained on AIDA train read by the fold readers: $OUT/decision.tar, $OUT/fold_K_metrics.jsonl
    local k readers=()
    for k in $(seq "$FOLDS"); do
        [ -f "$KIT/fold-$k/config.json" ] ||
            { echo "no fold $k reader in $KIT: run the folds stage first" >&2; exit 1; }
        cp "$KIT/fold-$k/metrics.jsonl" "$OUT/fold_${k}_metrics.jsonl"
        readers+=("$KIT/fold-$k")
    done
    # shellcheck disable=SC2086  # DECISION_EXTRA is a list of options
    timed "$PYTHON" -m annotator.decision.training --model "$MODEL" --kb "$KB" --train "$TRAIN" \
        --fold-models "${readers[@]}" --readings "$KIT/fold-readings" --out "$DECISION_ROUND" $DECISION_EXTRA \
        > "$KIT/decision.log" 2>&1 || { tail -n 30 "$KIT/decision.log" >&2; exit 1; }
    grep -v "it/s]\|batch/s]\|doc/s]" "$KIT/decision.log" | tail -n 12 >&2
    cp "$KIT/decision.log" "$DECISION_ROUND/decision/training.log"
    tar -C "$DECISION_ROUND" -cf "$OUT/decision.tar" decision
}

evaluate() {  # the shipped checkpoint and the round's, on the same GPU
    local name dir
    for name in shipped round; do
        dir=$(checkpoint_of "$name")
        [ -d "$dir" ] || continue
        timed "$PYTHON" -m gerbil.run --in-process "$dir" --kb "$KB" --dataset "AIDA-A=$DEV" \
            --output "$OUT/gerbil_$name.json"
    done
}

suite() {  # AIDA-A and the out-of-domain sets (gerbil.dev_suite) for each of SUITE_MODELS
    local name dir data=$KIT/suite-data
    mkdir -p "$data/aida"
    ln -sfn "$(realpath "$DEV")" "$data/aida/dev.ttl"
    ln -sfn "$(realpath "$DATA/ood-dev")" "$data/ood-dev"
    for name in $SUITE_MODELS; do
        dir=$(checkpoint_of "$name")
        [ -d "$dir" ] || { echo "no $name checkpoint in $dir: skipped" >&2; continue; }
        # shellcheck disable=SC2086  # SUITE_EXTRA is a list of options
        timed "$PYTHON" -m gerbil.dev_suite --in-process "$dir" --kb "$KB" --data "$data" \
            --output "$OUT/dev_suite_$name.json" ${SUITE_EXTRA:-}
    done
}

profile() {  # bench.profile_linker on 40 AIDA-A documents at K=100, with further options
    timed "$PYTHON" -m bench.profile_linker --model "$MODEL" --kb "$KB" --dataset "$DEV" --docs 40 --k 100 "$@"
}

speed() {  # issue 6's GPU figures: where a request's time goes, then AIDA-A through HTTP
    profile --cudnn-attention --without-shape-buckets | tee "$OUT/profile.txt"
    timed "$PYTHON" -m bench.e2e_http --model "$MODEL" --kb "$KB" --dataset "$DEV" --docs "$SPEED_DOCS" \
        --k 100 --out "$OUT/e2e_http.json" --plot "$OUT/e2e_http.png"
}

compile() {  # the reader under torch.compile against eager, last: the GPU's launch overhead (docs/decisions.md#gpu-request-profile)
    # shellcheck disable=SC2086  # one word per mode
    profile --top 5 --compile $COMPILE_MODES | tee "$OUT/compile.txt"
}

fetch() {  # each FETCH round's trained module with its metrics and configs, in pieces under 16 MiB
    local name dir archive module
    # a call brings back 8 files: the retriever's 5 pieces and a reader's 3 need two calls
    for name in ${FETCH:-round mix retriever-mix}; do
        # the name first: checkpoint_of's own refusal ends only its $(...) subshell, which would skip a misspelt name
        case "$name" in round) archive=reader module=reader ;; mix) archive=reader-mix module=reader ;;
            retriever-mix) archive=retriever-mix module=retriever ;;
            *) echo "FETCH names rounds: round, mix or retriever-mix, not $name" >&2; exit 2 ;; esac
        dir=$(checkpoint_of "$name")
        [ -d "$dir" ] || continue
        (cd "$dir" && tar -cf - "$module" metrics.jsonl ./*training_config.json config.json) |
            split -b 15M -d -a 1 - "$OUT/$archive.tar.part-"
        (cd "$OUT" && sha256sum "$archive".tar.part-* > "$archive.tar.sha256")
    done
}

STAGES="unpack index reader reader-mix retriever-mix recall folds decide evaluate suite speed fetch compile"
[ $# -gt 0 ] || { echo "usage: $0 STAGE ..., stages: $STAGES" >&2; exit 2; }
for stage in "$@"; do
    case " $STAGES " in
        *" $stage "*) echo "[gpu_round] stage $stage" >&2; "${stage//-/_}" ;;
        *) echo "unknown stage: $stage (stages: $STAGES)" >&2; exit 2 ;;
    esac
done
