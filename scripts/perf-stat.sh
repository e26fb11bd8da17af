#!/usr/bin/env bash
# Tagged counter runs of the synth-only runner, and comparisons between two tags.
#
#   scripts/perf-stat.sh run --tag NAME [--variant V] [--circuit C] [--size N] [--reps N]
#                            [--repeat N] [--rev GITREV] [--sim] [--desc TEXT] [--dry-run]
#   scripts/perf-stat.sh compare BASE HEAD
#   scripts/perf-stat.sh kernel [--circuit C] [--size N] [--variant V] [--rev GITREV] [--dry-run]
#   scripts/perf-stat.sh parse-perf FILE         (figures from `perf stat -x,` output)
#   scripts/perf-stat.sh parse-cachegrind FILE   (figures from valgrind cachegrind stderr)
#
# `run` builds the bench package's synth_runner (of the working tree, or of GITREV in a worktree), runs it
# under `perf stat` (--repeat times) with the bench's event set, or, with --sim or when perf
# has no hardware events here, under cachegrind (simulated, and labelled so), and stores the
# raw output, parsed figures, command, revision, machine and description in perf-stat/NAME/.
# Results are written to a temporary directory and renamed into place only when complete.
# `kernel` counts (callgrind, deterministic) the instructions of pre-compiled evaluation alone
# (`evaluate_rows`) per constraint and per nonzero: the difference of 3 and 1 repetitions.
# --dry-run checks the arguments and prints the runner's arguments without building or
# measuring anything.
set -euo pipefail
# Failures inside $(...) must stop the script too (a failed build must not measure a stale
# binary).
shopt -s inherit_errexit

root=$(cd "$(dirname "$0")/.." && pwd)
store="${PERF_STAT_DIR:-$root/perf-stat}"
events="cycles,instructions,cache-references,cache-misses,L1-dcache-load-misses,branches,branch-misses,task-clock,page-faults"

die() {
    echo "perf-stat.sh: $*" >&2
    exit 2
}

usage() {
    sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

# perf stat -x, lines: value,unit,event,variance%,... -> "event value" and "event_noise_pct N".
parse_perf() {
    awk -F, '
        NF >= 3 && $3 != "" {
            name = $3; gsub(/-/, "_", name); sub(/:u$/, "", name)
            if ($1 ~ /not (supported|counted)/) { print name " n/a"; next }
            print name " " $1
            if ($4 ~ /%$/) { noise = $4; sub(/%$/, "", noise); print name "_noise_pct " noise }
        }' "$1"
}

# cachegrind's summary on stderr -> instructions, D1/LL misses, branches, mispredicts.
parse_cachegrind() {
    awk '
        function num(s) { gsub(/,/, "", s); return s }
        /I *refs:/        { print "instructions " num($4) }
        /D *refs:/        { print "data_refs " num($4) }
        /D1 *misses:/     { print "d1_misses " num($4) }
        /LLd *misses:/    { print "lld_misses " num($4) }
        /Branches:/       { print "branches " num($3) }
        /Mispredicts:/    { print "branch_misses " num($3) }' "$1"
}

value_of() { # value_of FILE KEY
    awk -v key="$2" '$1 == key { print $2; exit }' "$1"
}

perf_has_hardware() {
    command -v perf >/dev/null 2>&1 || return 1
    local out
    out=$(perf stat -x, -e instructions true 2>&1 >/dev/null) || return 1
    ! grep -q "not supported\|not counted\|Permission\|No such" <<<"$out"
}

# build_in TREE TARGET_DIR -> builds the runner of the tree at TREE, prints its path. Older
# trees have the bench package at bench/, or the runner as an example of the library.
build_in() {
    local tree=$1 target=$2
    if [[ -f $tree/benches/support/src/bin/synth_runner.rs || -f $tree/bench/src/bin/synth_runner.rs ]]; then
        (cd "$tree" && CARGO_TARGET_DIR="$target" cargo build --release -p synthpool-bench --bin synth_runner >&2) ||
            die "building synth_runner in $tree failed"
        echo "$target/release/synth_runner"
    else
        (cd "$tree" && CARGO_TARGET_DIR="$target" cargo build --release --example synth_runner >&2) ||
            die "building examples/synth_runner in $tree failed"
        echo "$target/release/examples/synth_runner"
    fi
}

build_runner() { # build_runner REV -> prints the runner path
    local rev=$1
    if [[ -z $rev ]]; then
        build_in "$root" "$root/target"
        return
    fi
    local commit
    commit=$(git -C "$root" rev-parse --verify "$rev^{commit}" 2>/dev/null) || die "unknown revision '$rev'"
    local tree="$root/target/perf-stat-worktrees/$commit"
    if [[ ! -d $tree ]]; then
        git -C "$root" worktree add --detach "$tree" "$commit" >&2
    fi
    build_in "$tree" "$root/target/perf-stat-build"
}

# dry_run REV ARGS... -> what a run would measure, without building or measuring.
dry_run() {
    local rev=$1
    shift
    echo "revision: ${rev:-the working tree}"
    echo "runner arguments: $*"
}

cmd_run() {
    local tag="" variant=baseline circuit=labeling size="" reps=1 repeat=5 rev="" sim=0 desc=""
    local dry=0
    while [[ $# -gt 0 ]]; do
        case $1 in
            --dry-run) dry=1; shift ;;
            --tag) tag=${2:?--tag needs a value}; shift 2 ;;
            --variant) variant=${2:?--variant needs a value}; shift 2 ;;
            --circuit) circuit=${2:?--circuit needs a value}; shift 2 ;;
            --size) size=${2:?--size needs a value}; shift 2 ;;
            --reps) reps=${2:?--reps needs a value}; shift 2 ;;
            --repeat) repeat=${2:?--repeat needs a value}; shift 2 ;;
            --rev) rev=${2:?--rev needs a value}; shift 2 ;;
            --sim) sim=1; shift ;;
            --desc) desc=${2:?--desc needs a value}; shift 2 ;;
            *) die "unknown argument '$1' for run" ;;
        esac
    done
    [[ -n $tag ]] || die "run needs --tag NAME"
    [[ $tag =~ ^[A-Za-z0-9._-]+$ ]] || die "tag '$tag' may hold only letters, digits, '.', '_' and '-'"
    [[ -e $store/$tag ]] && die "tag '$tag' exists already in $store; pick another name or remove it"
    local args=(--circuit "$circuit" --variant "$variant" --reps "$reps")
    [[ -n $size ]] && args+=(--size "$size")
    if [[ $dry == 1 ]]; then
        dry_run "$rev" "${args[@]}"
        return
    fi

    local mode=perf
    if [[ $sim == 1 ]]; then
        mode=cachegrind
    elif ! perf_has_hardware; then
        echo "perf-stat.sh: perf has no hardware events here (missing perf, no PMU, or not permitted);" >&2
        echo "perf-stat.sh: falling back to cachegrind: the figures are SIMULATED, not counted." >&2
        mode=cachegrind
    fi
    if [[ $mode == cachegrind ]]; then
        command -v valgrind >/dev/null 2>&1 || die "valgrind is not installed (needed for --sim)"
    fi

    local runner
    runner=$(build_runner "$rev") || exit 2
    # Validate the arguments (unknown variant or circuit) before anything is recorded.
    "$runner" "${args[@]}" --reps 0 >/dev/null || die "the runner rejected: ${args[*]}"

    mkdir -p "$store"
    local work
    work=$(mktemp -d "$store/.partial-$tag.XXXXXX")
    trap 'rm -rf "$work"' EXIT

    if [[ $mode == perf ]]; then
        local command=(perf stat -x, -r "$repeat" -e "$events" -o "$work/raw.txt" -- "$runner" "${args[@]}")
        "${command[@]}" >"$work/runner.txt"
        parse_perf "$work/raw.txt" >"$work/figures.txt"
    else
        local command=(valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes
            --cachegrind-out-file="$work/cachegrind.out" "$runner" "${args[@]}")
        "${command[@]}" >"$work/runner.txt" 2>"$work/raw.txt"
        parse_cachegrind "$work/raw.txt" >"$work/figures.txt"
        cg_annotate "$work/cachegrind.out" 2>/dev/null |
            awk '/file:function/ { on = 1; next } on && $1 ~ /^[0-9,]+$/ { ir = $1; gsub(/,/, "", ir); fn = $NF; print ir, fn }' |
            head -n 25 >"$work/top.txt"
    fi
    local line
    line=$(tail -n 1 "$work/runner.txt")
    for field in constraints allocations_per_constraint bytes_per_constraint; do
        sed -n "s/.*\b$field=\([^ ]*\).*/$field \1/p" <<<"$line" >>"$work/figures.txt"
    done
    echo "mode $mode" >>"$work/figures.txt"
    printf '%q ' "${command[@]}" >"$work/command.txt"
    echo >>"$work/command.txt"
    {
        git -C "$root" rev-parse HEAD
        [[ -n $rev ]] && echo "measured revision: $rev"
        git -C "$root" diff --quiet || echo "working tree has uncommitted changes"
    } >"$work/revision.txt"
    { uname -a; nproc; grep -m1 "model name" /proc/cpuinfo || true; } >"$work/machine.txt"
    echo "${desc:-$circuit ${size:-default} / $variant, reps $reps}" >"$work/description.txt"

    mv "$work" "$store/$tag"
    trap - EXIT
    echo "stored $store/$tag ($mode)"
    cat "$store/$tag/figures.txt"
}

cmd_compare() {
    [[ $# -eq 2 ]] || die "compare needs two tags: BASE HEAD"
    local base=$store/$1 head=$store/$2
    for dir in "$base" "$head"; do
        [[ -f $dir/figures.txt ]] || die "no complete results for tag '$(basename "$dir")' in $store"
    done
    local mode_base mode_head
    mode_base=$(value_of "$base/figures.txt" mode)
    mode_head=$(value_of "$head/figures.txt" mode)
    [[ $mode_base == "$mode_head" ]] ||
        die "cannot compare a $mode_base run with a $mode_head run; rerun one of them"
    echo "$1 -> $2 ($mode_base$([[ $mode_base == cachegrind ]] && echo ', simulated'))"

    # Noise: perf's own run-to-run variation (at least 1%); cachegrind is deterministic.
    local metrics
    if [[ $mode_base == perf ]]; then
        metrics="cycles instructions ipc cache_misses L1_dcache_load_misses branch_misses task_clock page_faults allocations_per_constraint"
    else
        metrics="instructions d1_misses lld_misses branches branch_misses allocations_per_constraint"
    fi
    printf '%-28s %16s %16s %9s  %s\n' metric "$1" "$2" delta verdict
    for metric in $metrics; do
        local a b na nb
        if [[ $metric == ipc ]]; then
            a=$(awk '$1=="instructions"{i=$2} $1=="cycles"{c=$2} END{if (i+0>0 && c+0>0) printf "%.4f", i/c}' "$base/figures.txt")
            b=$(awk '$1=="instructions"{i=$2} $1=="cycles"{c=$2} END{if (i+0>0 && c+0>0) printf "%.4f", i/c}' "$head/figures.txt")
            na=$(value_of "$base/figures.txt" cycles_noise_pct)
            nb=$(value_of "$head/figures.txt" cycles_noise_pct)
        else
            a=$(value_of "$base/figures.txt" "$metric")
            b=$(value_of "$head/figures.txt" "$metric")
            na=$(value_of "$base/figures.txt" "${metric}_noise_pct")
            nb=$(value_of "$head/figures.txt" "${metric}_noise_pct")
        fi
        awk -v m="$metric" -v a="$a" -v b="$b" -v na="${na:-0}" -v nb="${nb:-0}" -v mode="$mode_base" '
            BEGIN {
                if (a == "" || b == "" || a == "n/a" || b == "n/a" || a + 0 == 0) {
                    printf "%-28s %16s %16s %9s  %s\n", m, (a == "" ? "n/a" : a), (b == "" ? "n/a" : b), "", "not comparable"
                    exit
                }
                d = 100 * (b - a) / a
                noise = (mode == "cachegrind") ? 0.5 : (na > nb ? na : nb)
                if (mode != "cachegrind" && noise < 1) noise = 1
                if (m == "allocations_per_constraint" && noise < 0.5) noise = 0.5
                higher_is_better = (m == "ipc")
                verdict = "within noise (" sprintf("%.1f", noise) "%)"
                if (d > noise) verdict = higher_is_better ? "IMPROVED" : "REGRESSED"
                if (d < -noise) verdict = higher_is_better ? "REGRESSED" : "IMPROVED"
                printf "%-28s %16s %16s %+8.2f%%  %s\n", m, a, b, d, verdict
            }'
    done
    if [[ -f $base/top.txt && -f $head/top.txt ]]; then
        echo
        echo "instructions by function (cachegrind, top of each tag):"
        printf '%-70s %14s %14s %9s\n' function "$1" "$2" delta
        awk 'FNR == NR { base[$2] = $1; order[++n] = $2; next }
             { head[$2] = $1; if (!($2 in base)) order[++n] = $2 }
             END {
                 for (i = 1; i <= n; i++) {
                     f = order[i]; a = base[f] + 0; b = head[f] + 0
                     d = (a > 0) ? sprintf("%+.1f%%", 100 * (b - a) / a) : "new"
                     if (b == 0) d = "gone"
                     printf "%-70s %14d %14d %9s\n", substr(f, 1, 70), a, b, d
                 }
             }' "$base/top.txt" "$head/top.txt"
    fi
}

cmd_kernel() {
    local variant=pce-reuse-1t circuit=merkle size=2 rev="" dry=0
    while [[ $# -gt 0 ]]; do
        case $1 in
            --dry-run) dry=1; shift ;;
            --variant) variant=${2:?--variant needs a value}; shift 2 ;;
            --circuit) circuit=${2:?--circuit needs a value}; shift 2 ;;
            --size) size=${2:?--size needs a value}; shift 2 ;;
            --rev) rev=${2:?--rev needs a value}; shift 2 ;;
            *) die "unknown argument '$1' for kernel" ;;
        esac
    done
    local args=(--circuit "$circuit" --size "$size" --variant "$variant")
    if [[ $dry == 1 ]]; then
        dry_run "$rev" "${args[@]}"
        return
    fi
    command -v valgrind >/dev/null 2>&1 || die "valgrind is not installed (needed for kernel)"
    local runner
    runner=$(build_runner "$rev") || exit 2
    local probe
    probe=$("$runner" "${args[@]}" --reps 0) || die "the runner rejected: ${args[*]}"
    grep -q "nonzeros_per_constraint=" <<<"$probe" ||
        die "variant '$variant' evaluates no recording (pick a pre-compiled one, e.g. pce-reuse-1t)"
    local work
    work=$(mktemp -d)
    # shellcheck disable=SC2064 # the path is fixed now; `work` is local to this function
    trap "rm -rf '$work'" EXIT
    local reps
    for reps in 1 3; do
        valgrind --tool=callgrind --toggle-collect='*evaluate_rows*' \
            --callgrind-out-file="$work/callgrind.$reps" "$runner" "${args[@]}" --reps "$reps" \
            >"$work/runner.$reps" 2>"$work/raw.$reps"
    done
    local line collected1 collected3
    line=$(tail -n 1 "$work/runner.3")
    collected1=$(awk '/Collected/ { gsub(/,/, "", $4); print $4 }' "$work/raw.1")
    collected3=$(awk '/Collected/ { gsub(/,/, "", $4); print $4 }' "$work/raw.3")
    awk -v one="$collected1" -v three="$collected3" -v line="$line" 'BEGIN {
        n = split(line, fields, " ")
        for (i = 1; i <= n; i++) { split(fields[i], kv, "="); value[kv[1]] = kv[2] }
        per_constraint = (three - one) / (2 * value["constraints"])
        printf "%s / %s: evaluation %.1f instructions per constraint, %.2f per nonzero (%.4f nonzeros per constraint; callgrind)\n",
            value["circuit"], value["variant"], per_constraint,
            per_constraint / value["nonzeros_per_constraint"], value["nonzeros_per_constraint"]
    }'
    rm -rf "$work"
    trap - EXIT
}

[[ $# -ge 1 ]] || usage
sub=$1
shift
case $sub in
    run) cmd_run "$@" ;;
    compare) cmd_compare "$@" ;;
    kernel) cmd_kernel "$@" ;;
    parse-perf) [[ -f ${1:-} ]] || die "parse-perf needs a file"; parse_perf "$1" ;;
    parse-cachegrind) [[ -f ${1:-} ]] || die "parse-cachegrind needs a file"; parse_cachegrind "$1" ;;
    -h | --help | help) usage ;;
    *) die "unknown command '$sub' (run, compare, kernel, parse-perf, parse-cachegrind)" ;;
esac
