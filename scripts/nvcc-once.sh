#!/usr/bin/env bash
# nvcc for scripts/gpu-builds.sh, first on its PATH under the name `nvcc`: each GPU kernel
# that ec-gpu-gen's build scripts generate (bellperson's and neptune's `cuda` builds) is
# compiled once per cache directory, however many builds generate it. Those kernels are one
# self-contained file (no #include), generated afresh by every build of the crate: a fatbin
# takes nvcc 4 to 8 minutes on two cores, and CI builds the same kernels in up to six
# configurations (features, the root's and the kits' target directories). ec-gpu-gen lists
# its fields and multiexps in hash sets, so bellperson's kernel comes out in one of a few
# orders, each a source of its own here: a build finds its kernel compiled where an earlier
# one drew the same order (neptune's, one field, always).
#
#   SYNTHPOOL_NVCC=/path/to/nvcc SYNTHPOOL_NVCC_CACHE=DIR nvcc ARGS...
#
# A call of ec-gpu-gen's shape (`--fatbin` among the options, then `--output-file X.fatbin
# Y.cu` last) is answered from DIR where a fatbin of the same source compiled with the same
# options by the same nvcc (its path and `--version`) under the same NVCC_PREPEND_FLAGS and
# NVCC_APPEND_FLAGS is there, and compiled and kept there otherwise. Every other call (the
# cc crate's compiles of sppark and supraseal, whose sources include headers) runs
# SYNTHPOOL_NVCC unchanged.
set -euo pipefail

real=${SYNTHPOOL_NVCC:?nvcc-once: SYNTHPOOL_NVCC must name the real nvcc}
cache=${SYNTHPOOL_NVCC_CACHE:?nvcc-once: SYNTHPOOL_NVCC_CACHE must name the cache directory}
if [[ $(realpath "$real") == $(realpath "$0") ]]; then
    echo "nvcc-once: SYNTHPOOL_NVCC is this script ($real), not nvcc" >&2
    exit 2
fi

args=("$@")
n=${#args[@]}
if ((n < 4)) || [[ ${args[n - 3]} != --output-file || ${args[n - 2]} != *.fatbin || ${args[n - 1]} != *.cu ]] ||
    [[ " ${args[*]:0:n-3} " != *" --fatbin "* ]]; then
    exec "$real" "$@"
fi

output=${args[n - 2]}
source=${args[n - 1]}
if grep -q '^[[:space:]]*#[[:space:]]*include' "$source"; then
    # Not a generated kernel: what it includes is not part of the key.
    exec "$real" "$@"
fi
key=$(
    {
        printf '%s\0' "$real" "$("$real" --version)" "${NVCC_PREPEND_FLAGS-}" "${NVCC_APPEND_FLAGS-}" \
            "${args[@]:0:n-3}"
        cat "$source"
    } | sha256sum
)
kept=$cache/${key%% *}.fatbin
if [[ ! -f $kept ]]; then
    "$real" "$@"
    mkdir -p "$cache"
    # Another build may compile the same kernel at the same time: each writes a file of its
    # own and renames it into place, so a reader sees a whole fatbin or none.
    cp "$output" "$kept.$$"
    mv -f "$kept.$$" "$kept"
    exit 0
fi
echo "nvcc-once: $(basename "$source") compiled before with the same options ($kept)" >&2
cp "$kept" "$output"
