#!/usr/bin/env bash
# Points a filecoin-ffi checkout (what curio and lotus build their prover from) at
# synthpool: patches a rust-fil-proofs checkout of the matching filecoin-proofs release with
# scripts/patch-fork.sh, then gives filecoin-ffi's Rust crate (rust/Cargo.toml, `filcrypto`)
# a `[patch.crates-io]` that takes the filecoin-proofs crates from that checkout (the five
# the recipe changes, and those of filecoin-proofs, fr32 and sha2raw it has, which a
# rust-fil-proofs checkout names by path) and bellpepper-core from synthpool,
# for every crate of its graph (the fvm crates verify through the same filecoin-proofs-api
# 19.1); updates
# rust/Cargo.lock, so filecoin-ffi's `cargo build --locked` builds it; and removes
# filecoin-ffi's install marker and installed library, so its `make` builds them again.
#
#   scripts/patch-ffi.sh FILECOIN_FFI RUST_FIL_PROOFS
#
# filecoin-ffi releases it knows: v1.36.0 and v1.36.1 (filecoin-proofs-api 19.1, which
# curio and lotus pin today); any other is refused, naming its version. Every expected file
# and line is checked before anything is changed: when one is missing the script names it
# and exits non-zero, changing nothing. Running it again changes nothing. Needs cargo
# (network access the first time, for crates the patched graph adds) and perl.
set -euo pipefail

usage() {
    echo "usage: $0 FILECOIN_FFI RUST_FIL_PROOFS   (checkouts of filecoin-ffi v1.36 and of rust-fil-proofs at filecoin-proofs 19.1)" >&2
    exit 2
}
[[ $# -eq 2 ]] || usage
fail() {
    echo "patch-ffi: $*" >&2
    exit 1
}
command -v perl >/dev/null || { echo "patch-ffi: perl is required" >&2; exit 2; }
command -v cargo >/dev/null || { echo "patch-ffi: cargo is required" >&2; exit 2; }

FFI=$(cd "$1" 2>/dev/null && pwd) || { echo "patch-ffi: $1: no such directory" >&2; exit 2; }
FORK=$(cd "$2" 2>/dev/null && pwd) || { echo "patch-ffi: $2: no such directory" >&2; exit 2; }
SYNTHPOOL=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
for path in "$FFI" "$FORK" "$SYNTHPOOL"; do
    if [[ $path == *'"'* || $path == *'\'* ]]; then
        echo "patch-ffi: the path $path cannot be written in a Cargo.toml" >&2
        exit 2
    fi
done

# filecoin-ffi's release, and the filecoin-proofs-api it builds on.
VERSION_JSON=$FFI/version.json
MANIFEST=$FFI/rust/Cargo.toml
LOCK=$FFI/rust/Cargo.lock
[[ -f $VERSION_JSON ]] || fail "$VERSION_JSON: not found (is $FFI a filecoin-ffi checkout?)"
version=$(perl -ne 'print $1 if /"version"\s*:\s*"([^"]+)"/' "$VERSION_JSON")
case $version in
    v1.36.0 | v1.36.1) ;;
    *) fail "filecoin-ffi $version ($VERSION_JSON): not a release this script knows (v1.36.0, v1.36.1: filecoin-proofs-api 19.1)" ;;
esac
for file in "$MANIFEST" "$LOCK"; do
    [[ -f $file ]] || fail "$file: not found (is $FFI a filecoin-ffi checkout?)"
done
API_LINE='filecoin-proofs-api = { version = "19.1", default-features = false }'
grep -qxF "$API_LINE" "$MANIFEST" || fail "$MANIFEST: expected the line '$API_LINE'"

# The rust-fil-proofs checkout: the release filecoin-proofs-api 19.1 builds on.
crate_version() {
    perl -ne 'if (/^\[package\]/) { $p = 1 } elsif (/^\[/) { $p = 0 } print $1 if $p && /^version\s*=\s*"([^"]+)"/' "$1"
}
RECIPE=(filecoin-hashers:14.1.0 storage-proofs-core:19.1.0 storage-proofs-porep:19.1.0
    storage-proofs-post:19.1.0 storage-proofs-update:19.1.0)
FAMILY=()
for crate in "${RECIPE[@]}" filecoin-proofs:19.1.0 fr32:12.1.0 sha2raw:14.1.0; do
    name=${crate%%:*}
    wanted=${crate##*:}
    toml=$FORK/$name/Cargo.toml
    if [[ ! -f $toml ]]; then
        [[ " ${RECIPE[*]} " != *" $crate "* ]] ||
            fail "$toml: not found (is $FORK a rust-fil-proofs checkout?)"
        continue
    fi
    FAMILY+=("$crate")
    found=$(crate_version "$toml")
    [[ $found == "$wanted" ]] ||
        fail "$toml: $name $found; filecoin-ffi $version builds on $name $wanted (filecoin-proofs 19.1): check out that release"
done
# In name order, so the section is the same whichever crates the checkout has.
mapfile -t FAMILY < <(printf '%s\n' "${FAMILY[@]}" | sort)

# The section this script writes. An existing [patch.crates-io] must be exactly it.
BLOCK="
# synthpool: the prover's crates from this checkout of rust-fil-proofs, patched by
# synthpool's scripts/patch-fork.sh, and bellpepper-core from synthpool, for every crate:
# $FORK
[patch.crates-io]
bellpepper-core = { path = \"$SYNTHPOOL/gadgets\" }"
for crate in "${FAMILY[@]}"; do
    BLOCK+="
${crate%%:*} = { path = \"$FORK/${crate%%:*}\" }"
done
lines=$(($(wc -l <<<"$BLOCK") - 1))
manifest_done=0
if grep -q '^\[patch\.crates-io\]' "$MANIFEST"; then
    if [[ "$(tail -n "$lines" "$MANIFEST")" == "$(tail -n "$lines" <<<"$BLOCK")" ]]; then
        manifest_done=1
    else
        fail "$MANIFEST: has a [patch.crates-io] section other than this script's (for other checkouts?): remove it and run again"
    fi
fi

# Everything checked: patch the fork (which checks its own files before changing any).
"$SYNTHPOOL/scripts/patch-fork.sh" "$FORK"

lock_before=$(cksum <"$LOCK")
if [[ $manifest_done == 0 ]]; then
    # Replaced atomically, its mode kept.
    temporary=$(mktemp "$MANIFEST.XXXXXX")
    cp -p "$MANIFEST" "$temporary"
    { cat "$MANIFEST"; printf '%s\n' "$BLOCK"; } >"$temporary"
    mv "$temporary" "$MANIFEST"
fi
# The lock follows the manifest: cargo keeps every other entry as it was.
cargo metadata --manifest-path "$MANIFEST" --format-version 1 >/dev/null
if [[ $manifest_done == 0 || "$(cksum <"$LOCK")" != "$lock_before" ]]; then
    # filecoin-ffi's make installs the library once and marks it; built anew from here.
    rm -f "$FFI/.install-filcrypto" "$FFI/libfilcrypto.a" "$FFI/filcrypto.h" "$FFI/filcrypto.pc"
fi

# One bellpepper-core in the graph, ours; the prover's crates from the fork.
source "$SYNTHPOOL/scripts/one-core.sh"
one_core "$MANIFEST" "$SYNTHPOOL" "$FORK" "${FAMILY[*]}" --all-features
echo "patch-ffi: filecoin-ffi $version ($FFI) now builds on $FORK and synthpool: one bellpepper-core in its graph, synthpool's" >&2
