#!/usr/bin/env bash
# One partition's synthesis on 1, 2, 4, ... threads: the bench's `porep` partition (the
# 32 GiB PoRep circuit's challenges; `CIRCUIT=snap`: the 32 GiB SnapDeals partition's, its
# apex tree whole), direct (`default`: the challenges spread over the
# pool) and from a recording (`pce-spread`: the parts' witness in place, the evaluation by
# rows; `pce-spread-cached`: the same with its rows stored through the caches, to see what
# the streaming stores save where many cores share the memory bus; `pce-spread-classify-
# after`: the witness values classified by evaluation, read back from memory, to see what
# classifying them as they are written saves there), each thread count in a process of its
# own. For machines with
# more cores than a two-core development VM that have no Rust toolchain (a GPU prover's
# host): only the binary goes there.
#
#   scripts/scaling.sh build
#       builds the bench here and copies it, stripped, to target/scaling/synth_only
#   scripts/scaling.sh run [CHALLENGES] [THREADS...]
#       runs it on this machine into $OUT (default target/scaling/out): CHALLENGES (default
#       8, 58 million constraints; a 32 GiB partition has 18; with `CIRCUIT=snap`, 20 are
#       23 million, 86 the whole 81 million) at each thread count (default 1, 2, 4, ... up
#       to the cores), then prints ns per constraint and the speed-up against the first
#       count. Direct synthesis uses at most CHALLENGES threads.
#
# Cost per constraint is flat in the number of challenges (docs/journal.md), so a
# smaller CHALLENGES keeps the one-thread run short without changing the ratios much.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$ROOT/target/scaling

usage() {
    echo "usage: $0 build | [CIRCUIT=porep|snap] $0 run [CHALLENGES] [THREADS...]" >&2
    exit 2
}

build() {
    mkdir -p "$BIN"
    local executable
    executable=$(cargo bench --manifest-path "$ROOT/Cargo.toml" --bench synth_only --no-run \
        --message-format=json | grep -o '"executable":"[^"]*synth_only[^"]*"' | tail -1 |
        cut -d'"' -f4)
    [[ -x $executable ]] || { echo "scaling: no bench executable built" >&2; exit 1; }
    strip -o "$BIN/synth_only" "$executable"
    ls -l "$BIN/synth_only"
}

run() {
    local challenges=${1:-8}
    [[ $challenges =~ ^[1-9][0-9]*$ ]] || usage
    shift || true
    local threads=("$@")
    if [[ ${#threads[@]} -eq 0 ]]; then
        local t=1 cores
        cores=$(nproc)
        while ((t <= cores)); do threads+=("$t"); t=$((t * 2)); done
    fi
    for t in "${threads[@]}"; do
        [[ $t =~ ^[1-9][0-9]*$ ]] || usage
    done
    local circuit=${CIRCUIT:-porep}
    [[ $circuit == porep || $circuit == snap ]] || usage
    local out=${OUT:-$BIN/out}
    mkdir -p "$out"
    { nproc; grep -m1 "model name" /proc/cpuinfo || true; free -g | head -2; } |
        tee "$out/machine.txt"
    local variants=(default pce-spread pce-spread-cached pce-spread-classify-after) summary=$out/scaling.txt
    : > "$summary"
    for t in "${threads[@]}"; do
        echo "== $circuit x$challenges on $t threads" | tee -a "$out/scaling.log"
        RAYON_NUM_THREADS=$t SYNTH_CIRCUITS=$circuit SYNTH_SIZE=$challenges SYNTH_REPS=3 \
            SYNTH_BATCHES=0 SYNTH_CRITERION=0 SYNTH_REPORT="$out/$circuit-$t.json" \
            SYNTH_VARIANTS=$(IFS=,; echo "${variants[*]}") \
            "$BIN/synth_only" --bench 2>&1 | tee "$out/$circuit-$t.log" >> "$out/scaling.log"
        for variant in "${variants[@]}"; do
            # The table's rows start at the line's first column, the variants' descriptions
            # above it are indented.
            awk -v v="$variant" -v t="$t" 'index($0, v " ") == 1 { print v, t, $2 }' \
                "$out/$circuit-$t.log" >> "$summary"
        done
    done
    echo "variant threads ns/constraint speed-up" | tee "$out/speed-ups.txt"
    awk '!($1 in first) { first[$1] = $3 } { printf "%s %s %s %.2fx\n", $1, $2, $3, first[$1] / $3 }' \
        "$summary" | sort -s -k1,1 | tee -a "$out/speed-ups.txt"
}

case ${1:-} in
build) [[ $# -eq 1 ]] || usage; build ;;
run) shift; run "$@" ;;
*) usage ;;
esac
