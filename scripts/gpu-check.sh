#!/usr/bin/env bash
# The GPU check (tests/gpu-check): bellperson 0.27's own provers (cuda, and cuda-supraseal
# from the .params file) against synthpool's drop-ins, every proof byte-compared and
# verified. Built here, run on a machine with an NVIDIA GPU and its driver (no Rust there).
#
#   scripts/gpu-check.sh build
#       builds target/gpu-check/gpu-check-cuda and target/gpu-check/gpu-check-supraseal
#       (release, stripped; nvcc from scripts/cuda-toolkit.sh; kernels for sm_75 to sm_90)
#   scripts/gpu-check.sh run [CIRCUIT] [MEMBERS]
#       runs both on this machine's GPU into $OUT (default target/gpu-check/out): the first
#       makes the parameters, both prove the same batch, and their digests of bellperson's
#       proofs must agree. CIRCUIT: merkle:DEPTH (default merkle:2) or porep:CHALLENGES.
#
# Exit status 0 when both binaries report every proof identical and verified, and agree.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$ROOT/target/gpu-check
MANIFEST=$ROOT/tests/gpu-check/Cargo.toml

usage() {
    echo "usage: $0 build | run [merkle:DEPTH|porep:CHALLENGES] [MEMBERS]" >&2
    exit 2
}

build() {
    eval "$("$ROOT/scripts/cuda-toolkit.sh")"
    mkdir -p "$BIN"
    # bellperson's kernels (ec-gpu-gen) for Turing to Hopper: its default stops at sm_86.
    export EC_GPU_CUDA_NVCC_ARGS="--fatbin --gpu-architecture=sm_90 \
--generate-code=arch=compute_90,code=sm_90 --generate-code=arch=compute_89,code=sm_89 \
--generate-code=arch=compute_86,code=sm_86 --generate-code=arch=compute_80,code=sm_80 \
--generate-code=arch=compute_75,code=sm_75"
    cargo build --release --manifest-path "$MANIFEST" --features cuda
    cp "$ROOT/target/release/gpu-check" "$BIN/gpu-check-cuda"
    # supraseal builds sm_80 code (and PTX); Hopper gets its own code instead of a JIT.
    # nvcc alone reads NVCC_APPEND_FLAGS (CXXFLAGS would reach the host compiler too).
    NVCC_APPEND_FLAGS="-gencode arch=compute_90,code=sm_90" \
        cargo build --release --manifest-path "$MANIFEST" --features supraseal
    cp "$ROOT/target/release/gpu-check" "$BIN/gpu-check-supraseal"
    ls -l "$BIN"/gpu-check-*
}

run() {
    local circuit=${1:-merkle:2} members=${2:-4}
    local out=${OUT:-$BIN/out}
    mkdir -p "$out"
    local params
    params=$(mktemp -d)/check.params
    { nvidia-smi -L || true; nproc; } | tee "$out/machine.txt"
    local status=0
    for prover in cuda supraseal; do
        echo "== $prover" | tee -a "$out/gpu-check.log"
        timeout 240 "$BIN/gpu-check-$prover" "$params" "$circuit" "$members" 2>&1 |
            tee "$out/$prover.log" | tee -a "$out/gpu-check.log" || status=1
    done
    rm -f "$params"
    local digests
    digests=$(grep -h "^bellperson's proofs digest:" "$out/cuda.log" "$out/supraseal.log" | sort -u | wc -l)
    if [[ $digests != 1 ]] || ! grep -q "^RESULT ok" "$out/cuda.log" || ! grep -q "^RESULT ok" "$out/supraseal.log"; then
        status=1
    fi
    if [[ $status == 0 ]]; then
        echo "GPU CHECK ok: both provers agree" | tee -a "$out/gpu-check.log"
    else
        echo "GPU CHECK failed" | tee -a "$out/gpu-check.log"
    fi
    return $status
}

case ${1:-} in
build) [[ $# -eq 1 ]] || usage; build ;;
run) shift; [[ $# -le 2 ]] || usage; run "$@" ;;
*) usage ;;
esac
