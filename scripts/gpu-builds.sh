#!/usr/bin/env bash
# Builds, without running and without a GPU, every GPU configuration users prove with:
# synthpool's `cuda-supraseal` (curio), `cuda` and `opencl` (lotus workers), each linted
# with warnings denied; the GPU check (tests/gpu-check) for both of its provers; the
# patched filecoin-proofs crates with `cuda-supraseal`, from the checkout tests/patch_fork.rs
# leaves in target/fork-kit, and the stand-in for filecoin-ffi's crate it patches there,
# with `cuda-supraseal` and with `cuda`, as curio and lotus build it (run the tests first).
# .ci/run calls it after the tests.
#
#   scripts/gpu-builds.sh
#
# nvcc comes from scripts/cuda-toolkit.sh, each kernel that bellperson's and neptune's build
# scripts generate compiled once (scripts/nvcc-once.sh); the OpenCL headers and ICD loader
# from Debian's packages (ocl-icd-opencl-dev, opencl-headers), installed with apt-get when
# missing.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

step() {
    echo "gpu-builds: $*" >&2
}

if [[ ! -f /usr/include/CL/cl.h ]] || ! ls /usr/lib/*/libOpenCL.so >/dev/null 2>&1; then
    step "installing Debian's OpenCL headers and ICD loader"
    as_root=()
    [[ $(id -u) == 0 ]] || as_root=(sudo)
    "${as_root[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq ocl-icd-opencl-dev opencl-headers
fi

eval "$(scripts/cuda-toolkit.sh)"
nvcc --version | tail -n 2 >&2
# The kernels bellperson's and neptune's build scripts generate, compiled once each however
# many of the builds below generate them (scripts/nvcc-once.sh).
SYNTHPOOL_NVCC=$CUDA_PATH/bin/nvcc
export SYNTHPOOL_NVCC SYNTHPOOL_NVCC_CACHE=$ROOT/target/nvcc-once/kernels
mkdir -p target/nvcc-once/bin
ln -sfn "$ROOT/scripts/nvcc-once.sh" target/nvcc-once/bin/nvcc
export PATH=$ROOT/target/nvcc-once/bin:$PATH

lint() {
    step "clippy $*"
    cargo clippy "$@" -- -D warnings
}

# The library under each of bellperson's GPU features (its lib only: the tests run on the CPU
# builds, and the supraseal drop-ins run in tests/supraseal against a CPU stand-in). With
# bellperson 0.27 only: bellperson 0.26's GPU code does not compile on Rust 1.89 and later
# (std's File::try_lock shadows fs2's in its gpu/locks.rs), whoever depends on it.
lint -p synthpool --lib --features bellperson-0.27,neptune-11,cuda-supraseal
# filecoin-proofs' cuda-supraseal turns on the storage-proofs crates' cuda as well: both.
lint -p synthpool --lib --features bellperson-0.27,neptune-11,cuda,cuda-supraseal
lint -p synthpool --lib --features bellperson-0.27,neptune-11,cuda
lint -p synthpool --lib --features bellperson-0.27,neptune-11,opencl
step "rustdoc cuda-supraseal"
RUSTDOCFLAGS=-Dwarnings cargo doc -p synthpool --no-deps --features bellperson-0.27,neptune-11,cuda-supraseal

# The GPU check, as scripts/gpu-check.sh builds it for the machine it is carried to.
lint --manifest-path tests/gpu-check/Cargo.toml --features cuda
lint --manifest-path tests/gpu-check/Cargo.toml --features supraseal

# The patched fork as curio builds it.
kit=target/fork-kit/checkout
if [[ ! -f $kit/Cargo.toml ]]; then
    echo "gpu-builds: $kit is missing: run cargo test --workspace (tests/patch_fork.rs makes it)" >&2
    exit 2
fi
step "patched fork kit, storage-proofs-core/cuda-supraseal"
(
    cd "$kit"
    CARGO_TARGET_DIR="$ROOT/target/fork-kit/target" cargo check \
        -p storage-proofs-core -p storage-proofs-porep -p storage-proofs-update \
        --no-default-features --features storage-proofs-core/cuda-supraseal
)
# filecoin-ffi's crate as curio (cuda-supraseal) and lotus (cuda) build it, pointed at the
# patched crates by scripts/patch-ffi.sh (tests/patch_fork.rs ran it), in the target
# directory of the lints above, whose GPU builds it shares.
ffi=target/fork-kit/filecoin-ffi/rust
if [[ ! -f $ffi/Cargo.toml ]]; then
    echo "gpu-builds: $ffi is missing: run cargo test --workspace (tests/patch_fork.rs makes it)" >&2
    exit 2
fi
for gpu in cuda-supraseal cuda; do
    step "filecoin-ffi stand-in, patched, $gpu"
    CARGO_TARGET_DIR="$ROOT/target" cargo check --manifest-path "$ffi/Cargo.toml" --locked --no-default-features \
        --features "multicore-sdr,$gpu"
done
step "done"
