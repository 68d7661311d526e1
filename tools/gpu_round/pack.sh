#!/usr/bin/env bash
# Packs what one GPU round needs (the checkpoint, the KB, AIDA, the wheels the GPU image lacks) into folders
# .gpu/1, .gpu/2, ... of at most PART_MIB each, so that each fits one size-limited transfer (see README.md).
# Run from the repository root on the development machine; takes a few minutes (xz of the 1M-entity KB).
set -euo pipefail

SHARED=${SHARED:-../shared/data}
CHECKPOINT=${CHECKPOINT:-models/entqa-minilm}
KB=${KB:-$SHARED/kb/entities.jsonl.gz}
PART_MIB=${PART_MIB:-60}
# The GPU image's Python (3.12) lacks these; versions as in requirements.txt's resolution here.
# pydantic and spectree: the settings parser (every command line) and the JSON API (the web app of `speed`);
# pyoxigraph: the NIF writer's IRI check; lightgbm and scipy: the learned decision (stage decide). The list is
# checked against an image of torch and transformers only (README).
WHEELS=${WHEELS:-"faiss-cpu==1.15.1 rdflib==7.6.0 flask==3.1.3 werkzeug==3.1.9 itsdangerous==2.2.0 blinker==1.9.0
    gunicorn==27.0.1 pyahocorasick==2.3.1 pydantic==2.14.4 pydantic-core==2.50.5 annotated-types==0.8.0
    typing-inspection==0.4.5 typing-extensions==4.16.0 spectree==3.0.0 pyoxigraph==0.5.13 lightgbm==4.7.0
    scipy==1.17.1"}

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/data" "$stage/wheels"

# shellcheck disable=SC2086  # one word per wheel
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d "$stage/wheels" $WHEELS
cp "$SHARED/aida/train.ttl" "$SHARED/aida/dev.ttl" "$stage/data/"
mkdir -p "$stage/data/ood-dev"  # the dev suite's out-of-domain sets (3 MB)
cp "$SHARED"/ood-dev/*.ttl "$stage/data/ood-dev/"
# Plain JSON lines: xz over the whole archive compresses them better than their gzip does.
case "$KB" in
    *.gz) gzip -dc "$KB" > "$stage/data/entities.jsonl" ;;
    *) cp "$KB" "$stage/data/entities.jsonl" ;;
esac
# The demo KB and its index stay behind: the round uses the full KB and builds its index there.
mkdir -p "$stage/checkpoint"
(cd "$CHECKPOINT" && find . -path ./index -prune -o -path ./kb -prune -o -type f -print0 |
    xargs -0 cp --parents -t "$stage/checkpoint")

rm -rf .gpu
mkdir -p .gpu
echo "compressing $(du -sh "$stage" | cut -f1) ..." >&2
tar -C "$stage" -cf - . | xz -T0 -6 | split -b "${PART_MIB}M" -d -a 2 - .gpu/kit.tar.xz.
n=0
for piece in .gpu/kit.tar.xz.*; do
    n=$((n + 1))
    mkdir -p ".gpu/$n"
    mv "$piece" ".gpu/$n/"
done
du -sh .gpu/*/
echo "$n parts; next: tools/gpu_round/README.md" >&2
