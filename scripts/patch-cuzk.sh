#!/usr/bin/env bash
# Points curio's cuzk proving daemon (extern/cuzk in a curio checkout) at synthpool:
#
#   1. patches a rust-fil-proofs checkout of the release cuzk builds on (filecoin-proofs
#      19.0.1) with `scripts/patch-fork.sh --circuits-only` (native SHA-256 and Poseidon,
#      spreading; cuzk proves with its own prover, so no prover edit);
#   2. cuzk's workspace takes those crates and synthpool's bellpepper-core from
#      `[patch.crates-io]`, and cuzk-pce's path dependency on curio's bellpepper-core goes to
#      synthpool's: one bellpepper-core in the graph, ours;
#   3. the names curio's bellpepper-core adds, which cuzk's bellperson fork and cuzk-pce
#      call, are spelled as synthpool's core spells them (`from_buffers`, `into_buffers`,
#      `input_terms`, `aux_terms`); the fork's `gpu/locks.rs` calls fs2's `try_lock_shared`
#      by its trait (from Rust 1.89 std's own method shadows it); rust-toolchain.toml asks for
#      1.89.0, synthpool's minimum;
#   4. cuzk-core depends on synthpool and gains `synthpool_seam.rs` (scripts/cuzk/), which
#      `synthesize_auto` tries first for every proof kind (see that file); any error there
#      falls back to cuzk's own synthesis for the batch, logged at warn, and
#      CUZK_DISABLE_PCE=1 keeps cuzk's standard path;
#   5. extern/cuzk/Cargo.lock follows, so `cargo build --locked` builds it.
#
#   scripts/patch-cuzk.sh CURIO RUST_FIL_PROOFS
#
# curio releases it knows: v1.28.4 (each file it edits is checked against that release's
# SHA-256); any other tree is refused, naming the file that differs. Every file is checked
# before any is changed; running it again changes nothing (it records what it wrote in
# extern/cuzk/.synthpool-patch). Needs cargo (network access the first time, for crates the
# patched graph adds), perl and sha256sum.
set -euo pipefail

usage() {
    echo "usage: $0 CURIO RUST_FIL_PROOFS   (checkouts of curio v1.28.4 and of rust-fil-proofs at filecoin-proofs 19.0.1)" >&2
    exit 2
}
[[ $# -eq 2 ]] || usage
fail() {
    echo "patch-cuzk: $*" >&2
    exit 1
}
for tool in perl cargo sha256sum; do
    command -v "$tool" >/dev/null || { echo "patch-cuzk: $tool is required" >&2; exit 2; }
done

CURIO=$(cd "$1" 2>/dev/null && pwd) || { echo "patch-cuzk: $1: no such directory" >&2; exit 2; }
FORK=$(cd "$2" 2>/dev/null && pwd) || { echo "patch-cuzk: $2: no such directory" >&2; exit 2; }
SYNTHPOOL=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
for path in "$CURIO" "$FORK" "$SYNTHPOOL"; do
    if [[ $path == *'"'* || $path == *'\'* || $path == *$'\n'* ]]; then
        echo "patch-cuzk: the path $path cannot be written in a Cargo.toml" >&2
        exit 2
    fi
done
CUZK=$CURIO/extern/cuzk
[[ -d $CUZK ]] || fail "$CUZK: not found (is $CURIO a curio checkout with cuzk?)"
SEAM=$SYNTHPOOL/scripts/cuzk/synthpool_seam.rs
STAMP=$CUZK/.synthpool-patch

# Each file this script edits, with its SHA-256 in curio v1.28.4.
RELEASE=(
    "extern/cuzk/Cargo.toml 328e5a9557debce555900eb6b5172d39c9542660e08ab36daad33958690984b2"
    "extern/cuzk/Cargo.lock f396c84b2b9251dc6a30d45e6b878b19477a4b25700ac4bd140f9826afff487f"
    "extern/cuzk/rust-toolchain.toml b49341a3f0f974f268a4f38860508d02ab67b6ef171be62c2cdc4374ee225d26"
    "extern/cuzk/cuzk-core/Cargo.toml ff5d9c1d21c504277a2582080b7fba167177dcfc4b7467028a327feb42a0fd48"
    "extern/cuzk/cuzk-core/src/lib.rs cf702768983c8bab25359036d5c230441ac65e306d0c56006646d11e2082644c"
    "extern/cuzk/cuzk-core/src/pipeline.rs 02ba970cb9fa3a8f6650cd134f850c055000f1e4262e9f5fdb295e9783b0b320"
    "extern/cuzk/cuzk-pce/Cargo.toml 029b26375ea80e39f57fd753144aebd99cd06de969e5b2c6f201b58acf22fd48"
    "extern/cuzk/cuzk-pce/src/recording_cs.rs 339a09c9e6191f8a1317d1273c320c6a0a24d6afd5887ff381f048ae4a8d40dd"
    "extern/bellperson/src/gpu/locks.rs 361d99e70ab8b263e7ec993e197cd7e493393019eb5572bf02ecdc41be077fbf"
    "extern/bellperson/src/groth16/prover/mod.rs dff65ead7f56beeb6db0ca4775b40ce4afd215546783c387b0ab1ddc280928d4"
    "extern/bellperson/src/lc.rs acb2827f85271c11e59cab6851c1b8176e6af900794f7cb1b0f6ccf393627a88"
)
digest() {
    sha256sum "$1" | cut -d' ' -f1
}
# What an earlier run wrote: the checkouts it was for, then each file's SHA-256 after it.
stamped() {
    [[ ! -f $STAMP ]] || awk -v file="$1" '$1 == file { print $2 }' "$STAMP"
}
if [[ -f $STAMP ]]; then
    for pair in "synthpool $SYNTHPOOL" "rust-fil-proofs $FORK"; do
        grep -qxF "$pair" "$STAMP" ||
            fail "$CUZK was patched for another ${pair%% *} checkout ($STAMP): check out curio's extern/ again and run this"
    done
fi
TODO=()
for entry in "${RELEASE[@]}"; do
    file=${entry%% *}
    [[ -f $CURIO/$file ]] || fail "$CURIO/$file: not found (is $CURIO a curio v1.28.4 checkout?)"
    found=$(digest "$CURIO/$file")
    if [[ $found == "${entry##* }" ]]; then
        TODO+=("$file")
    elif [[ $found != "$(stamped "$file")" ]]; then
        fail "$CURIO/$file: not curio v1.28.4's (SHA-256 $found), nor as this script left it: it knows curio v1.28.4 only"
    fi
done
target_seam=$CUZK/cuzk-core/src/synthpool_seam.rs
if [[ -e $target_seam && $(digest "$target_seam") != "$(stamped extern/cuzk/cuzk-core/src/synthpool_seam.rs)" ]] &&
    ! cmp -s "$SEAM" "$target_seam"; then
    fail "$target_seam: exists and is not what this script wrote"
fi

# The rust-fil-proofs checkout: the release cuzk's lock builds on, not patched with the
# prover edit (synthpool's drop-in needs bellperson 0.27 under cuda-supraseal; cuzk's
# bellperson is a 0.26 fork).
crate_version() {
    perl -ne 'if (/^\[package\]/) { $p = 1 } elsif (/^\[/) { $p = 0 } print $1 if $p && /^version\s*=\s*"([^"]+)"/' "$1"
}
# Each crate with the versions that release has: the git tag filecoin-proofs-v19.0.1 leaves
# filecoin-hashers, fr32 and sha2raw at x.y.0 in their manifests, while crates.io has the
# same sources as x.y.1 (what cuzk's lock names).
FAMILY=()
for crate in filecoin-hashers:14.0.1:14.0.0 storage-proofs-core:19.0.1 storage-proofs-porep:19.0.1 \
    storage-proofs-post:19.0.1 storage-proofs-update:19.0.1 filecoin-proofs:19.0.1 \
    fr32:12.0.1:12.0.0 sha2raw:14.0.1:14.0.0; do
    name=${crate%%:*}
    versions=${crate#*:}
    toml=$FORK/$name/Cargo.toml
    if [[ ! -f $toml ]]; then
        [[ $name == filecoin-proofs || $name == fr32 || $name == sha2raw ]] ||
            fail "$toml: not found (is $FORK a rust-fil-proofs checkout?)"
        continue
    fi
    found=$(crate_version "$toml")
    [[ ":$versions:" == *":$found:"* ]] ||
        fail "$toml: $name $found; cuzk at curio v1.28.4 builds on $name ${versions%%:*} (filecoin-proofs 19.0.1): check out that release"
    FAMILY+=("$name:$found")
done
! grep -q 'synthpool' "$FORK/storage-proofs-core/Cargo.toml" ||
    fail "$FORK/storage-proofs-core/Cargo.toml: patched with the prover edit (scripts/patch-fork.sh without --circuits-only), which cuzk's bellperson fork cannot build: use a fresh checkout"

# One edit of one file: KIND chosen below; prints `patched` or `unchanged`, or dies naming
# what it expected. MODE `check` writes nothing.
edit() {
    local mode=$1 kind=$2 file=$3
    MODE=$mode KIND=$kind SYNTHPOOL=$SYNTHPOOL FORK=$FORK FAMILY="${FAMILY[*]}" perl -e '
        use strict;
        use warnings;
        my $file = $ARGV[0];
        my ($mode, $kind) = ($ENV{MODE}, $ENV{KIND});
        open(my $in, "<", $file) or die "patch-cuzk: $file: $!\n";
        my $text = do { local $/; <$in> };
        close($in);
        my $before = $text;
        my $gadgets = "$ENV{SYNTHPOOL}/gadgets";
        # Replaces each of PAIRS (old => new) exactly COUNT times in all.
        sub rename_all {
            my ($count, @pairs) = @_;
            my $done = 0;
            while (my ($old, $new) = splice(@pairs, 0, 2)) {
                $done += ($text =~ s/\Q$old\E/$new/g);
            }
            $done == $count or die "patch-cuzk: $file: $done of the $count expected names found\n";
        }
        sub replace_once {
            my ($old, $new) = @_;
            my $at = index($text, $old);
            $at >= 0 or die "patch-cuzk: $file: expected text not found: " . (split /\n/, $old)[0] . "\n";
            substr($text, $at, length($old)) = $new;
        }
        if ($kind eq "workspace") {
            my @lines = ("bellpepper-core = { path = \"$gadgets\" }");
            push @lines, map { my $name = s/:.*//r; "$name = { path = \"$ENV{FORK}/$name\" }" }
                split / /, $ENV{FAMILY};
            replace_once("bellpepper-core = { path = \"../bellpepper-core\" }\nsupraseal-c2 = { path = \"../supraseal-c2\" }\n",
                "supraseal-c2 = { path = \"../supraseal-c2\" }\n"
                . "# synthpool (scripts/patch-cuzk.sh): its bellpepper-core, and the circuits from\n"
                . "# rust-fil-proofs patched by its scripts/patch-fork.sh --circuits-only\n"
                . join("", map { "$_\n" } @lines));
        } elsif ($kind eq "toolchain") {
            replace_once("channel = \"1.86.0\"", "channel = \"1.89.0\"");
        } elsif ($kind eq "core-manifest") {
            replace_once("libc = \"0.2\"\n", "libc = \"0.2\"\nsynthpool = { path = \"$ENV{SYNTHPOOL}\" }\n");
        } elsif ($kind eq "core-lib") {
            replace_once("pub mod pipeline;\n",
                "pub mod pipeline;\n#[cfg(feature = \"cuda-supraseal\")]\npub mod synthpool_seam;\n");
        } elsif ($kind eq "pipeline") {
            replace_once("    C: bellperson::Circuit<Fr> + Send,\n{\n    // Check if PCE is already cached for this circuit type.\n",
                "    C: bellperson::Circuit<Fr> + Clone + Send + Sync + \x27static,\n{\n    // Check if PCE is already cached for this circuit type.\n");
            my $opaque = "impl bellperson::Circuit<Fr> + Send>";
            rename_all(3, $opaque, "impl bellperson::Circuit<Fr> + Clone + Send + Sync>");
            replace_once("    if !pce_disabled {\n",
                "    if !pce_disabled {\n"
                . "        // synthpool (scripts/patch-cuzk.sh) first; on any error, cuzk\x27s synthesis below.\n"
                . "        match crate::synthpool_seam::synthesize(&circuits, circuit_id, pinned_pool) {\n"
                . "            Ok(synthesized) => {\n"
                . "                cache_hint(circuit_id, &synthesized.1);\n"
                . "                return Ok(synthesized);\n"
                . "            }\n"
                . "            Err(crate::synthpool_seam::Declined::Failed(error)) => warn!(\n"
                . "                circuit_id = %circuit_id,\n"
                . "                %error,\n"
                . "                \"synthpool failed on this batch; cuzk\x27s own synthesis makes it\"\n"
                . "            ),\n"
                . "            Err(crate::synthpool_seam::Declined::Refused) => {}\n"
                . "        }\n");
        } elsif ($kind eq "pce-manifest") {
            replace_once("bellpepper-core = { path = \"../../bellpepper-core\" }", "bellpepper-core = { path = \"$gadgets\" }");
        } elsif ($kind eq "terms") {
            rename_all(6, "input_terms_slice()", "input_terms()", "aux_terms_slice()", "aux_terms()");
        } elsif ($kind eq "recycled") {
            rename_all(6, "LinearCombination::zero_recycled(", "LinearCombination::from_buffers(", ".recycle()", ".into_buffers()");
        } elsif ($kind eq "locks") {
            replace_once("        if let Err(err) = File::create(tmp_path(PRIORITY_LOCK_NAME, None))\n"
                . "            .unwrap()\n            .try_lock_shared()\n        {\n",
                "        if let Err(err) = fs2::FileExt::try_lock_shared(\n"
                . "            &File::create(tmp_path(PRIORITY_LOCK_NAME, None)).unwrap(),\n        ) {\n");
        } else {
            die "patch-cuzk: unknown edit $kind\n";
        }
        if ($text eq $before) { print "unchanged\n"; exit 0; }
        if ($mode eq "apply") {
            my $temporary = "$file.synthpool-patch.$$";
            open(my $out, ">", $temporary) or die "patch-cuzk: $temporary: $!\n";
            print $out $text or die "patch-cuzk: $temporary: $!\n";
            close($out) or die "patch-cuzk: $temporary: $!\n";
            chmod((stat($file))[2] & 07777, $temporary);
            rename($temporary, $file) or do { unlink($temporary); die "patch-cuzk: $file: $!\n"; };
        }
        print "patched\n";
    ' "$CURIO/$file"
}
kind_of() {
    case $1 in
        extern/cuzk/Cargo.toml) echo workspace ;;
        extern/cuzk/rust-toolchain.toml) echo toolchain ;;
        extern/cuzk/cuzk-core/Cargo.toml) echo core-manifest ;;
        extern/cuzk/cuzk-core/src/lib.rs) echo core-lib ;;
        extern/cuzk/cuzk-core/src/pipeline.rs) echo pipeline ;;
        extern/cuzk/cuzk-pce/Cargo.toml) echo pce-manifest ;;
        extern/cuzk/cuzk-pce/src/recording_cs.rs | extern/bellperson/src/lc.rs) echo terms ;;
        extern/bellperson/src/groth16/prover/mod.rs) echo recycled ;;
        extern/bellperson/src/gpu/locks.rs) echo locks ;;
        extern/cuzk/Cargo.lock) echo lock ;;
    esac
}
for file in "${TODO[@]}"; do
    kind=$(kind_of "$file")
    [[ $kind == lock ]] || edit check "$kind" "$file" >/dev/null
done

# Everything checked: patch the fork (which checks its own files before changing any).
"$SYNTHPOOL/scripts/patch-fork.sh" --circuits-only "$FORK"
for file in "${TODO[@]}"; do
    kind=$(kind_of "$file")
    [[ $kind == lock ]] || echo "$file: $(edit apply "$kind" "$file")"
done
if ! cmp -s "$SEAM" "$target_seam"; then
    cp "$SEAM" "$target_seam.synthpool-patch.$$"
    mv "$target_seam.synthpool-patch.$$" "$target_seam"
    echo "extern/cuzk/cuzk-core/src/synthpool_seam.rs: written"
fi
# What this run left, for the next one to recognise (written again once the lock moved).
write_stamp() {
    {
        echo "synthpool $SYNTHPOOL"
        echo "rust-fil-proofs $FORK"
        for entry in "${RELEASE[@]}"; do
            echo "${entry%% *} $(digest "$CURIO/${entry%% *}")"
        done
        echo "extern/cuzk/cuzk-core/src/synthpool_seam.rs $(digest "$target_seam")"
    } >"$STAMP.tmp"
    mv "$STAMP.tmp" "$STAMP"
}
write_stamp
# The lock follows the manifests: cargo keeps every other entry as it was.
cargo metadata --manifest-path "$CUZK/Cargo.toml" --format-version 1 >/dev/null
# Where the checkout names a crate x.y.0 that the lock has from crates.io as x.y.1 (a git
# checkout of the release, above), cargo keeps crates.io's for cuzk-core: pin it to the
# checkout's, so that one copy of each is built.
for crate in "${FAMILY[@]}"; do
    name=${crate%%:*}
    for locked in $(perl -00 -ne 'print "$1\n" if /^name = "\Q'"$name"'\E"\nversion = "([^"]+)"\nsource = "registry\+/m' "$CUZK/Cargo.lock"); do
        [[ $locked == "${crate##*:}" ]] ||
            cargo update --manifest-path "$CUZK/Cargo.toml" -p "$name@$locked" --precise "${crate##*:}"
    done
done
write_stamp

# One bellpepper-core in the graph, ours; the circuits' crates from the fork.
source "$SYNTHPOOL/scripts/one-core.sh"
one_core "$CUZK/Cargo.toml" "$SYNTHPOOL" "$FORK" "${FAMILY[*]}" --workspace
echo "patch-cuzk: cuzk ($CUZK) now synthesizes through synthpool, on $FORK; build it with curio's make cuzk" >&2
