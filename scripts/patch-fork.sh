#!/usr/bin/env bash
# Applies synthpool's fork recipe to a checkout of a filecoin-proofs 19.x workspace:
#
#   1. the workspace's Cargo.toml: `[patch.crates-io] bellpepper-core = { path = ".../gadgets" }`,
#      so every crate of the graph builds on synthpool's core;
#   2. filecoin-hashers/src/sha256.rs and
#      storage-proofs-porep/src/stacked/circuit/create_label.rs: `sha256_circuit` comes from
#      `synthpool::sha256` instead of `bellperson::gadgets::sha256`;
#   3. filecoin-hashers/src/poseidon.rs, storage-proofs-porep/src/stacked/circuit/hash.rs,
#      storage-proofs-update/src/{poseidon/circuit.rs,circuit.rs,gadgets.rs}: `poseidon_hash`
#      comes from `synthpool::poseidon` instead of `neptune::circuit` (every call of
#      neptune's circuit in filecoin-proofs 19.x);
#   4. storage-proofs-core/src/compound_proof.rs: `circuit_proofs` proves each batch with
#      synthpool's drop-in for the workspace's bellperson (0.26 or 0.27),
#      `create_random_proof_batch_remaking`, which synthesizes through cached recordings and
#      is given a way to make each partition's circuit again from its vanilla proof (kept
#      for it), so a member a recording fails is synthesized again directly; under
#      `cuda-supraseal`, it hands the drop-in the parameters with the path of their
#      `.params` file (`SuprasealParametersWithFile`), whose head has the verifying key;
#   5. the five crates' Cargo.toml: a `synthpool` path dependency, with the `neptune-11`
#      feature where Poseidon is hashed and the bellperson feature for storage-proofs-core
#      (a dependency an earlier recipe added gains the features it lacks);
#   6. storage-proofs-core's `cuda`, `cuda-supraseal` and `opencl` features (those it has)
#      also turn on synthpool's, so the drop-in matches the prover the fork is built with;
#   7. storage-proofs-porep/src/stacked/circuit/proof.rs: `StackedCircuit` synthesizes its
#      challenges with `synthpool::branches::spread`, on every thread of the rayon pool where
#      the constraint system can branch (synthpool's can; others run the loop as before);
#   8. storage-proofs-post/src/fallback/circuit.rs: `FallbackPoStCircuit` synthesizes its
#      chunks of sectors with `synthpool::branches::spread` likewise, in the system itself
#      (every chunk on one thread, the first on more; systems that can do neither take
#      upstream's systems from `new()`);
#   9. storage-proofs-update/src/circuit.rs: `EmptySectorUpdateCircuit` (SnapDeals)
#      synthesizes its challenges with `synthpool::branches::spread` likewise, the loop's body
#      made a closure that the loop calls where the system cannot branch;
#  10. storage-proofs-update/src/gadgets.rs: `apex_por` hashes each row of a partition's apex
#      tree with `synthpool::branches::spread_small_returning` (the row's outputs handed
#      on to the next row) where the system spreads parts that small (recording, the witness
#      from a recording), upstream's row kept elsewhere (direct synthesis, where each branch
#      would copy the tree so far).
#
# Usage: scripts/patch-fork.sh [--circuits-only] DIR
#
# --circuits-only leaves out 4 and 6 and storage-proofs-core's dependency: the circuits
# only, for a prover that synthesizes on its own (curio's cuzk, scripts/patch-cuzk.sh);
# and storage-proofs-update/src/circuit.rs's `EmptySectorUpdateCircuit` gains `Clone` (for
# any tree type, as the PoRep and PoSt circuits have it), so that prover can keep a
# partition's circuit to synthesize again where synthpool fails on it.
#
# Every file is checked before any is changed: when an expected line is missing the script
# names the file and exits non-zero, changing nothing. Running it again on a patched
# checkout changes nothing. Files are replaced atomically (temporary + rename). Nothing
# else is touched.
set -euo pipefail

usage() {
    echo "usage: $0 [--circuits-only] DIR   (DIR: a filecoin-proofs 19.x workspace checkout)" >&2
    exit 2
}
CIRCUITS_ONLY=0
if [[ ${1-} == --circuits-only ]]; then
    CIRCUITS_ONLY=1
    shift
fi
[[ $# -eq 1 ]] || usage
command -v perl >/dev/null || { echo "patch-fork: perl is required" >&2; exit 2; }

FORK=$(cd "$1" 2>/dev/null && pwd) || { echo "patch-fork: $1: no such directory" >&2; exit 2; }
SYNTHPOOL=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ $SYNTHPOOL == *'"'* || $SYNTHPOOL == *'\'* ]]; then
    echo "patch-fork: synthpool's path $SYNTHPOOL cannot be written in a Cargo.toml" >&2
    exit 2
fi

ROOT_TOML=$FORK/Cargo.toml
CORE_TOML=$FORK/storage-proofs-core/Cargo.toml
HASHERS_TOML=$FORK/filecoin-hashers/Cargo.toml
POREP_TOML=$FORK/storage-proofs-porep/Cargo.toml
UPDATE_TOML=$FORK/storage-proofs-update/Cargo.toml
POST_TOML=$FORK/storage-proofs-post/Cargo.toml
HASHERS_SHA=$FORK/filecoin-hashers/src/sha256.rs
POREP_LABEL=$FORK/storage-proofs-porep/src/stacked/circuit/create_label.rs
HASHERS_POSEIDON=$FORK/filecoin-hashers/src/poseidon.rs
POREP_HASH=$FORK/storage-proofs-porep/src/stacked/circuit/hash.rs
UPDATE_POSEIDON=$FORK/storage-proofs-update/src/poseidon/circuit.rs
UPDATE_CIRCUIT=$FORK/storage-proofs-update/src/circuit.rs
UPDATE_GADGETS=$FORK/storage-proofs-update/src/gadgets.rs
CORE_PROOF=$FORK/storage-proofs-core/src/compound_proof.rs
POREP_PROOF=$FORK/storage-proofs-porep/src/stacked/circuit/proof.rs
POST_CIRCUIT=$FORK/storage-proofs-post/src/fallback/circuit.rs

for file in "$ROOT_TOML" "$CORE_TOML" "$HASHERS_TOML" "$POREP_TOML" "$UPDATE_TOML" "$HASHERS_SHA" \
    "$POREP_LABEL" "$HASHERS_POSEIDON" "$POREP_HASH" "$UPDATE_POSEIDON" "$UPDATE_CIRCUIT" \
    "$UPDATE_GADGETS" "$CORE_PROOF" "$POREP_PROOF" "$POST_TOML" "$POST_CIRCUIT"; do
    [[ -f $file ]] || { echo "patch-fork: $file: not found (is $FORK a filecoin-proofs 19.x workspace?)" >&2; exit 1; }
done

# The bellperson release storage-proofs-core uses: from its own manifest, or from the
# workspace's `[workspace.dependencies]` when it inherits the version.
bellperson_version() {
    perl -e '
        my ($crate, $root) = @ARGV;
        sub version_in {
            my ($file, $table) = @_;
            open(my $fh, "<", $file) or die "patch-fork: $file: $!\n";
            my ($section, $found) = ("", undef);
            while (my $line = <$fh>) {
                if ($line =~ /^\s*\[([^\]]+)\]/) { $section = $1; $section =~ s/\s//g; next; }
                if ($section eq "$table.bellperson" && $line =~ /^\s*version\s*=\s*"([^"]+)"/) { $found = $1; }
                if ($section eq "$table.bellperson" && $line =~ /^\s*workspace\s*=\s*true/) { $found = "workspace"; }
                if ($section eq $table && $line =~ /^\s*bellperson\s*=\s*"([^"]+)"/) { $found = $1; }
                if ($section eq $table && $line =~ /^\s*bellperson\s*=\s*\{.*\bversion\s*=\s*"([^"]+)"/) { $found = $1; }
                if ($section eq $table && $line =~ /^\s*bellperson(\.workspace\s*=\s*true|\s*=\s*\{.*\bworkspace\s*=\s*true)/) { $found = "workspace"; }
            }
            return $found;
        }
        my $version = version_in($crate, "dependencies");
        my $where = $crate;
        if (defined $version && $version eq "workspace") {
            $version = version_in($root, "workspace.dependencies");
            $where = $root;
        }
        defined $version or die "patch-fork: $where: no bellperson version found\n";
        if ($version =~ /^[=^~]?\s*0\.26(\.|$)/) { print "0.26\n"; }
        elsif ($version =~ /^[=^~]?\s*0\.27(\.|$)/) { print "0.27\n"; }
        else { die "patch-fork: $where: bellperson \"$version\" is neither 0.26 nor 0.27, the releases synthpool supports\n"; }
    ' "$CORE_TOML" "$ROOT_TOML"
}
BELLPERSON=$(bellperson_version)
BELLPERSON_MODULE=v${BELLPERSON//./_}

# One edit of one file, run in two passes: `check` (every file, nothing written) and
# `apply`. The edit is chosen by KIND; the perl program prints `patched` or `unchanged`,
# or dies naming the file.
edit() {
    local mode=$1 kind=$2 file=$3
    MODE=$mode KIND=$kind SYNTHPOOL=$SYNTHPOOL BELLPERSON=$BELLPERSON BELLPERSON_MODULE=$BELLPERSON_MODULE \
        perl -e '
        use strict;
        use warnings;
        my $file = $ARGV[0];
        my ($mode, $kind) = ($ENV{MODE}, $ENV{KIND});
        open(my $in, "<", $file) or die "patch-fork: $file: $!\n";
        my $text = do { local $/; <$in> };
        close($in);
        my $before = $text;
        my $gadgets = "$ENV{SYNTHPOOL}/gadgets";

        # Takes ITEMS out of the grouped `use CRATE::{...};` import (a group left with one
        # plain item becomes a plain import); returns where the import now ends.
        sub take_from_group {
            my ($crate, $items) = @_;
            $text =~ /^use \Q$crate\E::\{.*?^?\};\n/ms
                or die "patch-fork: $file: no grouped `use $crate\::{...};` import found\n";
            my ($start, $end) = ($-[0], $+[0]);
            my $block = substr($text, $start, $end - $start);
            for my $item (@$items) {
                my $pattern = quotemeta($item);
                $block =~ s/(?<![\w:])$pattern\s*,\s*// or $block =~ s/,\s*(?<![\w:])$pattern(?=\s*\})//
                    or die "patch-fork: $file: expected `$item` in its `use $crate\::{...};` import, not found\n";
            }
            $block =~ s/^use \Q$crate\E::\{\s*([\w:]+(?: as \w+)?)\s*\};\n/use $crate\::$1;\n/;
            substr($text, $start, $end - $start) = $block;
            return $start + length($block);
        }
        # Moves ITEMS out of the grouped `use CRATE::{...};` into `use synthpool::...;`.
        sub swap_imports {
            my ($crate, $items, $replacement) = @_;
            return if index($text, $replacement) >= 0 && !grep { group_has($crate, $_) } @$items;
            my $end = take_from_group($crate, $items);
            substr($text, $end, 0) = "$replacement\n" if index($text, $replacement) < 0;
        }
        sub group_has {
            my ($crate, $item) = @_;
            return 0 unless $text =~ /^use \Q$crate\E::\{(.*?)^?\};\n/ms;
            my $pattern = quotemeta($item);
            return $1 =~ /(?<![\w:])$pattern(?![\w])/;
        }
        # The Poseidon gadget of neptune, imported alone or in a group: from synthpool instead.
        sub swap_poseidon {
            my $replacement = "use synthpool::poseidon::poseidon_hash;";
            return if $text =~ s/^use neptune::circuit::poseidon_hash;\n/$replacement\n/m;
            return if index($text, $replacement) >= 0 && $text !~ /\bneptune::circuit\b|\bcircuit::poseidon_hash\b/;
            swap_imports("neptune", ["circuit::poseidon_hash"], $replacement);
        }
        # The `[dependencies.synthpool]` table: added, or given the features it lacks.
        sub synthpool_dependency {
            my @features = @_;
            if ($text =~ /^\s*synthpool\s*=/m) {
                die "patch-fork: $file: synthpool is a dependency in a form this script does not edit\n";
            }
            if ($text !~ /^\[dependencies\.synthpool\][^\n]*\n((?:(?!\[)[^\n]*\n)*)/m) {
                my $list = join(", ", map { "\"$_\"" } @features);
                $text .= "\n" unless $text =~ /\n\z/;
                $text .= "\n[dependencies.synthpool]\npath = \"$ENV{SYNTHPOOL}\"\n";
                $text .= "features = [$list]\n" if @features;
                return;
            }
            my ($body, $at, $length) = ($1, $-[1], length($1));
            my @missing;
            if ($body =~ /^features\s*=\s*\[([^\]]*)\]/m) {
                my $have = $1;
                @missing = grep { $have !~ /"\Q$_\E"/ } @features;
                return unless @missing;
                my @listed = ($have =~ /"([^"]*)"/g, @missing);
                my $list = join(", ", map { "\"$_\"" } @listed);
                $body =~ s/^features\s*=\s*\[[^\]]*\]/features = [$list]/m;
            } elsif (@features) {
                my $list = join(", ", map { "\"$_\"" } @features);
                $body .= "features = [$list]\n";
            } else {
                return;
            }
            substr($text, $at, $length) = $body;
        }

        # The crate GPU features (those it has) also turn on synthpool features of the same name,
        # so the drop-in is built for the prover the fork is built with.
        sub gpu_features {
            $text =~ /^\[features\][^\n]*\n((?:(?!\[)[^\n]*\n)*)/m
                or die "patch-fork: $file: no [features] table\n";
            my ($body, $at, $length) = ($1, $-[1], length($1));
            for my $feature ("cuda", "cuda-supraseal", "opencl") {
                my $item = "\"synthpool/$feature\"";
                next unless $body =~ /^(\Q$feature\E\s*=\s*\[)([^\]]*)\]/m;
                my ($open, $list, $start, $end) = ($1, $2, $-[2], $+[2]);
                next if index($list, $item) >= 0;
                my $grown;
                if ($list =~ /\n/) {
                    # One item per line: a line of its own, indented as the others.
                    my ($indent) = $list =~ /\n([ \t]*)\S/;
                    $indent //= "    ";
                    (my $kept = $list) =~ s/,?\s*\z//;
                    $grown = "$kept,\n$indent$item,\n";
                } else {
                    (my $kept = $list) =~ s/,?\s*\z//;
                    $grown = $kept =~ /\S/ ? "$kept, $item" : $item;
                }
                substr($body, $start, $end - $start) = $grown;
            }
            substr($text, $at, $length) = $body;
        }
        # In `CompoundProof::circuit_proofs`, under `cuda-supraseal`: the parameters with the
        # file they were loaded from, whose head gives the drop-in the verifying key its
        # recordings earn trust against (supraseal parameters hold no key of their own).
        sub supraseal_file {
            my $marker = "SuprasealParametersWithFile::new(";
            return if index($text, $marker) >= 0;
            $text =~ /\bfn circuit_proofs\(.*?^([ \t]*)let mut rng = OsRng;\n/ms
                or die "patch-fork: $file: expected `let mut rng = OsRng;` in `fn circuit_proofs`, not found\n";
            my ($end, $i) = ($+[0], $1);
            my $block = "${i}// synthpool: under cuda-supraseal, the parameters with their file, whose head gives\n"
                . "${i}// the verifying key recordings earn trust against and the sizes checked before supraseal.\n"
                . "${i}#[cfg(feature = \"cuda-supraseal\")]\n"
                . "${i}let groth_params = &synthpool::prover::$ENV{BELLPERSON_MODULE}::SuprasealParametersWithFile::new(\n"
                . "${i}    groth_params,\n"
                . "${i}    crate::parameter_cache::parameter_cache_params_path(&Self::cache_identifier(pub_params)),\n"
                . "${i});\n";
            substr($text, $end, 0) = $block;
        }

        # Takes ITEMS out of the grouped `use CRATE::{...};` import (where an earlier recipe
        # left them, it took them from synthpool instead: that import goes).
        sub drop_imports {
            my ($crate, $items, $earlier) = @_;
            $text =~ s/^\Q$earlier\E\n//m;
            take_from_group($crate, $items) if grep { group_has($crate, $_) } @$items;
        }

        # In `CompoundProof::circuit_proofs`: the vanilla proofs kept (the circuits made from
        # references to them), and each batch proven by the drop-in of synthpool with a way to make
        # the circuit of a member again from its vanilla proof.
        sub remake_members {
            return if index($text, "create_random_proof_batch_remaking(") >= 0;
            my $build = qr/^(\s*)let mut circuits = vanilla_proofs\n(\s*)\.into_par_iter\(\)\n(\s*\.enumerate\(\)\n\s*\.map\(\|\(k, vanilla_proof\)\| \{\n\s*Self::circuit\(\n\s*pub_in,\n\s*C::ComponentPrivateInputs::default\(\),\n\s*)&vanilla_proof,\n/m;
            $text =~ s/$build/$1let mut circuits = vanilla_proofs\n$2.par_iter()\n$3vanilla_proof,\n/
                or die "patch-fork: $file: expected `vanilla_proofs.into_par_iter()` building the circuits in `fn circuit_proofs`, not found\n";
            $text =~ s/^[ \t]*\/\/ The same function is used within the while loop below, decide on the function once and\n[ \t]*\/\/ not on every iteration\.\n[ \t]*let create_random_proof_batch_fun = if priority \{\n[ \t]*create_random_proof_batch_in_priority\n[ \t]*\} else \{\n[ \t]*create_random_proof_batch\n[ \t]*\};\n\n//m
                or die "patch-fork: $file: expected `let create_random_proof_batch_fun = if priority` in `fn circuit_proofs`, not found\n";
            $text =~ /^([ \t]*)let proofs = create_random_proof_batch_fun\(batch, groth_params, &mut rng\)\?;\n/m
                or die "patch-fork: $file: expected `create_random_proof_batch_fun(batch, groth_params, &mut rng)` in `fn circuit_proofs`, not found\n";
            my ($start, $end, $i) = ($-[0], $+[0], $1);
            my $block = "${i}// synthpool: a member whose recording fails is made again from its vanilla proof\n"
                . "${i}// and synthesized directly, so no recording file ever costs a proof.\n"
                . "${i}let first = groth_proofs.len();\n"
                . "${i}let remake = |i: usize| {\n"
                . "${i}    Self::circuit(\n"
                . "${i}        pub_in,\n"
                . "${i}        C::ComponentPrivateInputs::default(),\n"
                . "${i}        &vanilla_proofs[first + i],\n"
                . "${i}        pub_params,\n"
                . "${i}        Some(first + i),\n"
                . "${i}    )\n"
                . "${i}};\n"
                . "${i}let proofs = synthpool::groth16::$ENV{BELLPERSON_MODULE}::create_random_proof_batch_remaking(\n"
                . "${i}    batch,\n"
                . "${i}    remake,\n"
                . "${i}    groth_params,\n"
                . "${i}    priority,\n"
                . "${i}    &mut rng,\n"
                . "${i})?;\n";
            substr($text, $start, $end - $start) = $block;
        }

        # In `StackedCircuit::synthesize`, before the loop over the challenges: the same
        # challenges spread over branches, the loop kept for systems that cannot branch.
        sub spread_challenges {
            return if index($text, "synthpool::branches::spread(") >= 0;
            my $call = qr/proof\.synthesize\(\s*&mut cs\.namespace\(\|\| format!\("challenge_\{\}", i\)\),\s*&comm_d_num,\s*&comm_c_num,\s*&comm_r_last_num,\s*&replica_id_bits,\s*\)\?;/;
            $text =~ /^([ \t]*)for \(i, proof\) in proofs\.into_iter\(\)\.enumerate\(\) \{\n\s*$call\n\s*\}\n/m
                or die "patch-fork: $file: expected the loop `for (i, proof) in proofs.into_iter().enumerate()` of StackedCircuit, not found\n";
            my ($start, $i) = ($-[0], $1);
            my $block = "${i}// synthpool: the challenges on every thread of the rayon pool where the constraint\n"
                . "${i}// system can branch, bit-identical to the loop below, which runs where it cannot.\n"
                . "${i}let proofs = match synthpool::branches::spread(cs, proofs, |cs, i, proof| {\n"
                . "${i}    proof.synthesize(\n"
                . "${i}        &mut cs.namespace(|| format!(\"challenge_{}\", i)),\n"
                . "${i}        &comm_d_num,\n"
                . "${i}        &comm_c_num,\n"
                . "${i}        &comm_r_last_num,\n"
                . "${i}        &replica_id_bits,\n"
                . "${i}    )\n"
                . "${i}})? {\n"
                . "${i}    synthpool::branches::Spread::Done => return Ok(()),\n"
                . "${i}    synthpool::branches::Spread::Here(proofs) => proofs,\n"
                . "${i}};\n";
            substr($text, $start, 0) = $block;
        }

        # In `FallbackPoStCircuit::synthesize_extendable`: the chunks of sectors spread over
        # branches, the systems from `new()` kept for systems that cannot branch.
        sub spread_sectors {
            return if index($text, "synthpool::branches::spread(") >= 0;
            my $import = "use rayon::prelude::{ParallelIterator, ParallelSlice};\n";
            index($text, $import) >= 0
                or die "patch-fork: $file: expected the import `$import` of FallbackPoStCircuit, not found\n";
            $text =~ /^([ \t]*)let chunk_size = \(sectors\.len\(\) \/ num_chunks\)\.max\(1\);\n\s*let css = sectors\n\s*\.par_chunks\(chunk_size\)\n/m
                or die "patch-fork: $file: expected `let css = sectors.par_chunks(chunk_size)` in FallbackPoStCircuit, not found\n";
            my ($start, $end, $i) = ($-[0], $+[0], $1);
            my $block = "${i}let chunk_size = (sectors.len() / num_chunks).max(1);\n"
                . "${i}// synthpool: the chunks on every thread of the rayon pool where the constraint system\n"
                . "${i}// can branch (the first in the system itself), bit-identical to the systems from\n"
                . "${i}// `new()` below, which run where it cannot.\n"
                . "${i}let sector_groups: Vec<_> = sectors.chunks(chunk_size).collect();\n"
                . "${i}let sector_groups = match synthpool::branches::spread(cs, sector_groups, |cs, _, sector_group| {\n"
                . "${i}    for (i, sector) in sector_group.iter().enumerate() {\n"
                . "${i}        let mut cs = cs.namespace(|| format!(\"sector_{}\", i));\n"
                . "${i}        sector.synthesize(&mut cs)?;\n"
                . "${i}    }\n"
                . "${i}    Ok(())\n"
                . "${i}})? {\n"
                . "${i}    synthpool::branches::Spread::Done => return Ok(()),\n"
                . "${i}    synthpool::branches::Spread::Here(sector_groups) => sector_groups,\n"
                . "${i}};\n"
                . "${i}let css = sector_groups\n"
                . "${i}    .into_par_iter()\n";
            substr($text, $start, $end - $start) = $block;
            my $at = index($text, $import);
            substr($text, $at, length($import)) = "use rayon::prelude::{IntoParallelIterator, ParallelIterator};\n";
        }

        # In `EmptySectorUpdateCircuit::synthesize`: the loop over the challenges, whose body
        # reads only what was allocated before it, becomes a closure; the challenges are
        # spread over branches, and the loop calls the closure where the system cannot branch.
        sub spread_update_challenges {
            return if index($text, "synthpool::branches::spread(") >= 0;
            $text =~ /^([ \t]*)for \(c_index, c_bits_without_partition\) in generated_bits\.into_iter\(\)\.enumerate\(\) \{\n/mg
                or die "patch-fork: $file: expected the loop `for (c_index, c_bits_without_partition) in generated_bits.into_iter().enumerate()` of EmptySectorUpdateCircuit, not found\n";
            my ($start, $i) = ($-[0], $1);
            # The body: every line up to the first that closes the loop at its indentation.
            $text =~ /\G((?:(?!\Q$i\E\}\n)[^\n]*\n)*?)\Q$i\E\}\n/g
                or die "patch-fork: $file: the end of EmptySectorUpdateCircuit\x27s loop over its challenges not found\n";
            my ($body, $end) = ($1, $+[0]);
            my $block = "${i}// synthpool: the challenges on every thread of the rayon pool where the constraint\n"
                . "${i}// system can branch, bit-identical to the loop below, which runs where it cannot.\n"
                . "${i}let synthesize_challenge = |cs: &mut CS::Root,\n"
                . "${i}                            c_index: usize,\n"
                . "${i}                            c_bits_without_partition: Vec<AllocatedBit>|\n"
                . "${i} -> Result<(), SynthesisError> {\n"
                . $body
                . "${i}    Ok(())\n"
                . "${i}};\n"
                . "${i}match synthpool::branches::spread(cs, generated_bits, &synthesize_challenge)? {\n"
                . "${i}    synthpool::branches::Spread::Done => {}\n"
                . "${i}    synthpool::branches::Spread::Here(generated_bits) => {\n"
                . "${i}        for (c_index, c_bits_without_partition) in generated_bits.into_iter().enumerate() {\n"
                . "${i}            synthesize_challenge(cs.get_root(), c_index, c_bits_without_partition)?;\n"
                . "${i}        }\n"
                . "${i}    }\n"
                . "${i}}\n";
            substr($text, $start, $end - $start) = $block;
        }

        # In `apex_por`: the hashes of each row of the apex tree spread where the system spreads
        # small parts, their outputs handed on to the next row; the published row elsewhere.
        sub spread_apex_rows {
            return if index($text, "synthpool::branches::spread_small_returning(") >= 0;
            index($text, "synthpool::branches::spread_returning(&mut cs, siblings_row") < 0
                or die "patch-fork: $file: apex_por was patched by an earlier recipe (its rows spread on every system); restore the published file and run again\n";
            $text =~ /^([ \t]*)let row = (apex_tree\n[ \t]*\.last\(\)\n[ \t]*\.unwrap\(\)\n[ \t]*\.chunks\(2\)\n[\s\S]*?\.collect::<Result<Vec<AllocatedNum<Fr>>, SynthesisError>>\(\)\?);\n/m
                or die "patch-fork: $file: expected the apex tree\x27s row `let row = apex_tree.last().unwrap().chunks(2)` in apex_por, not found\n";
            my ($start, $end, $i, $row) = ($-[0], $+[0], $1, $2);
            index($row, "apex_tree generation hash (tree_row={}, siblings={})") >= 0
                && $row =~ /hash2_circuit\(/
                or die "patch-fork: $file: the apex tree\x27s row in apex_por is not the published one\n";
            $row =~ s/\n/\n    /g;
            my $block = "${i}// synthpool: the row\x27s hashes on every thread of the rayon pool where the\n"
                . "${i}// constraint system spreads small parts, bit-identical to upstream\x27s row below,\n"
                . "${i}// which runs elsewhere.\n"
                . "${i}let siblings_row: Vec<&[AllocatedNum<Fr>]> = apex_tree.last().unwrap().chunks(2).collect();\n"
                . "${i}let row = match synthpool::branches::spread_small_returning(&mut cs, siblings_row, |cs, i, siblings| {\n"
                . "${i}    <TreeDHasher as Hasher>::Function::hash2_circuit(\n"
                . "${i}        cs.namespace(|| {\n"
                . "${i}            format!(\n"
                . "${i}                \"apex_tree generation hash (tree_row={}, siblings={})\",\n"
                . "${i}                row_index, i,\n"
                . "${i}            )\n"
                . "${i}        }),\n"
                . "${i}        &siblings[0],\n"
                . "${i}        &siblings[1],\n"
                . "${i}    )\n"
                . "${i}})? {\n"
                . "${i}    synthpool::branches::Returned::Done(row) => row,\n"
                . "${i}    synthpool::branches::Returned::Here(_) => $row,\n"
                . "${i}};\n";
            substr($text, $start, $end - $start) = $block;
        }

        if ($kind eq "patch") {
            $text =~ /^\s*\[workspace\]/m
                or die "patch-fork: $file: not a workspace manifest (no [workspace] table)\n";
            my $line = "bellpepper-core = { path = \"$gadgets\" }";
            if (index($text, $line) < 0) {
                if ($text =~ /^\[patch\.crates-io\][^\n]*\n(?:(?!\[)[^\n]*\n)*/m) {
                    my $section = $&;
                    if ($section =~ /^\s*bellpepper-core\s*=[^\n]*/m) {
                        die "patch-fork: $file: [patch.crates-io] already patches bellpepper-core elsewhere: $&\n";
                    }
                    $text =~ s/^(\[patch\.crates-io\][^\n]*\n)/$1# synthpool: every crate of the graph builds on its bellpepper-core\n$line\n/m;
                } else {
                    $text .= "\n" unless $text =~ /\n\z/;
                    $text .= "\n[patch.crates-io]\n# synthpool: every crate of the graph builds on its bellpepper-core\n$line\n";
                }
            }
        } elsif ($kind eq "dependency-with-poseidon") {
            synthpool_dependency("neptune-11");
        } elsif ($kind eq "dependency-with-prover") {
            synthpool_dependency("bellperson-$ENV{BELLPERSON}");
        } elsif ($kind eq "sha256") {
            swap_imports("bellperson", ["sha256::sha256 as sha256_circuit"],
                "use synthpool::sha256::sha256 as sha256_circuit;");
        } elsif ($kind eq "poseidon") {
            swap_poseidon();
        } elsif ($kind eq "dependency") {
            synthpool_dependency();
        } elsif ($kind eq "spread") {
            spread_challenges();
        } elsif ($kind eq "spread-update") {
            spread_update_challenges();
        } elsif ($kind eq "spread-apex") {
            spread_apex_rows();
        } elsif ($kind eq "spread-sectors") {
            spread_sectors();
        } elsif ($kind eq "clone-update") {
            my $marker = "// synthpool: the SnapDeals circuit clones whatever its tree type";
            if (index($text, $marker) < 0) {
                my $derived = "#[derive(Clone)]\npub struct PrivateInputs<TreeR>\n";
                my $at = index($text, $derived);
                $at >= 0 or die "patch-fork: $file: expected `#[derive(Clone)]` on `PrivateInputs<TreeR>`, not found\n";
                substr($text, $at, length($derived)) = "pub struct PrivateInputs<TreeR>\n";
                my $component = "impl<TreeR> CircuitComponent for EmptySectorUpdateCircuit<TreeR>\n";
                $at = index($text, $component);
                $at >= 0 or die "patch-fork: $file: expected `$component` not found\n";
                my $bound = "where\n    TreeR: MerkleTreeTrait<Hasher = TreeRHasher>,\n";
                substr($text, $at, 0) = "$marker (as the PoRep and\n"
                    . "// PoSt circuits do), so a prover can keep a partition\x27s circuit for a second synthesis.\n"
                    . "impl<TreeR> Clone for PrivateInputs<TreeR>\n$bound\{\n"
                    . "    fn clone(&self) -> Self {\n        PrivateInputs {\n"
                    . "            comm_c: self.comm_c,\n            root_r_old: self.root_r_old,\n"
                    . "            root_r_new: self.root_r_new,\n            apex_leafs: self.apex_leafs.clone(),\n"
                    . "            challenge_proofs: self.challenge_proofs.clone(),\n        }\n    }\n}\n\n"
                    . "impl<TreeR> Clone for EmptySectorUpdateCircuit<TreeR>\n$bound\{\n"
                    . "    fn clone(&self) -> Self {\n        EmptySectorUpdateCircuit {\n"
                    . "            pub_params: self.pub_params.clone(),\n            pub_inputs: self.pub_inputs.clone(),\n"
                    . "            priv_inputs: self.priv_inputs.clone(),\n        }\n    }\n}\n\n";
            }
        } elsif ($kind eq "gpu-features") {
            gpu_features();
        } elsif ($kind eq "prover") {
            drop_imports("bellperson", ["create_random_proof_batch", "create_random_proof_batch_in_priority"],
                "use synthpool::groth16::$ENV{BELLPERSON_MODULE}::{create_random_proof_batch, create_random_proof_batch_in_priority};");
            remake_members();
            supraseal_file();
        } else {
            die "patch-fork: unknown edit $kind\n";
        }

        if ($text eq $before) { print "unchanged\n"; exit 0; }
        if ($mode eq "apply") {
            my $temporary = "$file.synthpool-patch.$$";
            open(my $out, ">", $temporary) or die "patch-fork: $temporary: $!\n";
            print $out $text or die "patch-fork: $temporary: $!\n";
            close($out) or die "patch-fork: $temporary: $!\n";
            my $permissions = (stat($file))[2] & 07777;
            chmod($permissions, $temporary);
            rename($temporary, $file) or do { unlink($temporary); die "patch-fork: $file: $!\n"; };
        }
        print "patched\n";
    ' "$file"
}

EDITS=(
    "patch $ROOT_TOML"
    "dependency-with-poseidon $HASHERS_TOML"
    "dependency-with-poseidon $POREP_TOML"
    "dependency-with-poseidon $UPDATE_TOML"
    "dependency-with-prover $CORE_TOML"
    "gpu-features $CORE_TOML"
    "sha256 $HASHERS_SHA"
    "sha256 $POREP_LABEL"
    "poseidon $HASHERS_POSEIDON"
    "poseidon $POREP_HASH"
    "poseidon $UPDATE_POSEIDON"
    "poseidon $UPDATE_CIRCUIT"
    "poseidon $UPDATE_GADGETS"
    "prover $CORE_PROOF"
    "spread $POREP_PROOF"
    "dependency $POST_TOML"
    "spread-sectors $POST_CIRCUIT"
    "spread-update $UPDATE_CIRCUIT"
    "spread-apex $UPDATE_GADGETS"
)

if [[ $CIRCUITS_ONLY == 1 ]]; then
    circuits=()
    for entry in "${EDITS[@]}"; do
        [[ $entry == "dependency-with-prover "* || $entry == "gpu-features "* || $entry == "prover "* ]] ||
            circuits+=("$entry")
    done
    EDITS=("${circuits[@]}" "clone-update $UPDATE_CIRCUIT")
fi
for entry in "${EDITS[@]}"; do
    read -r kind file <<<"$entry"
    edit check "$kind" "$file" >/dev/null
done
for entry in "${EDITS[@]}"; do
    read -r kind file <<<"$entry"
    status=$(edit apply "$kind" "$file")
    echo "${file#"$FORK"/}: $status"
done
echo "synthpool applied to $FORK (bellperson $BELLPERSON)"
