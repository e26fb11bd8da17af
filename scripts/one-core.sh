# Sourced by scripts/patch-ffi.sh and scripts/patch-cuzk.sh once a manifest and its lock are
# patched: the graph `cargo tree` shows for it (with ARGS) holds one bellpepper-core,
# synthpool's, and takes each crate of FAMILY (`name:version`) from FORK or not at all.
#
#   one_core MANIFEST SYNTHPOOL FORK "FAMILY..." ARGS...
#
# Calls `fail` (the sourcing script's) naming what is wrong.
one_core() {
    local manifest=$1 synthpool=$2 fork=$3 family=$4
    shift 4
    local packages cores crate name found
    packages=$(cargo tree --manifest-path "$manifest" --locked "$@" -e normal,build \
        --prefix none --format '{p}' | sed 's/ (\*)$//' | sort -u)
    cores=$(grep -c '^bellpepper-core ' <<<"$packages" || true)
    [[ $cores == 1 ]] ||
        fail "$manifest: $cores bellpepper-core packages in the graph: $(grep '^bellpepper-core ' <<<"$packages" | tr '\n' ' ')"
    grep -qF "bellpepper-core v0.2.1 ($synthpool/gadgets)" <<<"$packages" ||
        fail "$manifest: bellpepper-core does not resolve to $synthpool/gadgets"
    for crate in $family; do
        name=${crate%%:*}
        found=$(grep -E "^$name v" <<<"$packages" || true)
        [[ -z $found || $found == "$name v${crate##*:} ($fork/$name)" ]] ||
            fail "$manifest: $name resolves to $(tr '\n' ' ' <<<"$found"), not (only) $fork/$name"
    done
}
