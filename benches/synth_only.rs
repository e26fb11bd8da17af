//! Synthesis-only benchmark: PoRep, WindowPoSt and SnapDeals partitions and their parts
//! synthesized with each optimization off and on, in one run, with counters.
//!
//! Environment (all optional):
//! - `SYNTH_CIRCUITS`: comma-separated from `porep,poseidon,post,snap,labeling,merkle,mixed`
//!   (default `porep,poseidon,post`)
//! - `SYNTH_SIZE`: challenges of `porep`, `poseidon` and `snap`, sectors of `post`, labels
//!   in `labeling`, depth of `merkle`, size of `mixed` (default 1, 1, 2, 2, 1, 8, 2)
//! - `SYNTH_VARIANTS`: comma-separated variant names (default: all)
//! - `SYNTH_REPS`: timed repetitions per variant for the report (default 5)
//! - `SYNTH_CRITERION=0`: skip the criterion pass, report only
//! - `SYNTH_BATCHES`: members of the proved batches, comma-separated (default `2,4,10`;
//!   `0` skips the batch section)
//! - `SYNTH_BATCH_CIRCUIT`: the batches' member, a circuit name with an optional `:size`
//!   (default `merkle:2`)
//! - `SYNTH_REPORT`: where the JSON report goes (default `target/synth_only/report.json`)
//!
//! The batch section proves batches of one circuit with bellperson's
//! `create_random_proof_batch` and with the drop-in at 1, 2 and the batch size members in
//! flight (same randomness, proofs checked identical), after one cold batch that records;
//! it reports each batch's wall time and peak heap. The report (one table per circuit, then
//! the batches) goes to stdout and, as JSON, to `target/synth_only/report.json`.

use std::cell::RefCell;
use std::time::Instant;

use criterion::{BenchmarkId, Criterion};
use synthpool::precompiled::{ProvingBuffers, Recording};
use synthpool::tuning::PoolStats;
use synthpool::{ProverVectors, Shape, SynthesisOptions};
use synthpool_bench::alloc;
use synthpool_bench::batches::{self, BatchRow, Batches};
use synthpool_bench::circuits::GadgetSet;
use synthpool_bench::counters;
use synthpool_bench::report::{Report, Row};
use synthpool_bench::variants::{one_thread_pool, Path, Variant, Workload, VARIANTS};

#[global_allocator]
static ALLOCATOR: alloc::Counting = alloc::Counting;

type Fr = blstrs::Scalar;

fn env_list(name: &str) -> Option<Vec<String>> {
    std::env::var(name).ok().map(|v| {
        v.split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    })
}

fn or_exit<T>(result: Result<T, String>) -> T {
    result.unwrap_or_else(|message| {
        eprintln!("synth_only: {message}");
        std::process::exit(2)
    })
}

fn workloads() -> Vec<Workload> {
    let size = std::env::var("SYNTH_SIZE")
        .ok()
        .and_then(|s| s.parse().ok());
    env_list("SYNTH_CIRCUITS")
        .unwrap_or_else(|| vec!["porep".into(), "poseidon".into(), "post".into()])
        .iter()
        .map(|name| or_exit(Workload::by_name(name, size)))
        .collect()
}

/// The batch section's member and batch sizes, or `None` when it is skipped.
fn batch_plan() -> Option<(Workload, Vec<usize>)> {
    let sizes: Vec<usize> = env_list("SYNTH_BATCHES")
        .unwrap_or_else(|| vec!["2".into(), "4".into(), "10".into()])
        .iter()
        .map(|n| {
            n.parse()
                .map_err(|_| format!("SYNTH_BATCHES: `{n}` is not a number of members"))
        })
        .map(or_exit)
        .collect();
    if sizes.contains(&0) {
        return None;
    }
    let circuit = std::env::var("SYNTH_BATCH_CIRCUIT").unwrap_or_else(|_| "merkle:2".into());
    let (name, size) = match circuit.split_once(':') {
        None => (circuit.as_str(), None),
        Some((name, size)) => (
            name,
            Some(or_exit(size.parse().map_err(|_| {
                format!("SYNTH_BATCH_CIRCUIT: `{size}` is not a size")
            }))),
        ),
    };
    Some((or_exit(Workload::by_name(name, size)), sizes))
}

fn batches() -> Vec<BatchRow> {
    let Some((workload, sizes)) = batch_plan() else {
        return Vec::new();
    };
    let batches = or_exit(Batches::new(workload));
    println!(
        "\nbatches: parameters for {} generated in {:.1} s",
        workload.label(),
        batches.setup_s
    );
    or_exit(batches.measure(&sizes))
}

fn variants() -> Vec<Variant> {
    match env_list("SYNTH_VARIANTS") {
        None => VARIANTS.to_vec(),
        Some(names) => names.iter().map(|n| or_exit(Variant::by_name(n))).collect(),
    }
}

/// What the pre-compiled and drop-in variants of one workload share: the recording (of
/// the circuit built with our gadgets), one set of buffers per rayon thread, carried
/// between runs, and the storage the drop-in variant with retention keeps between runs.
struct Precompiled {
    recording: Recording<Fr>,
    /// The median of `reps` recordings.
    record_ms: f64,
    buffers: RefCell<Vec<ProvingBuffers<Fr>>>,
    kept: RefCell<Vec<ProverVectors<Fr>>>,
}

impl Precompiled {
    fn new(workload: &Workload, reps: usize) -> Self {
        let mut times = Vec::new();
        let mut recorded = None;
        for _ in 0..reps.max(1) {
            let start = Instant::now();
            let recording = Recording::record(workload.circuit(GadgetSet::Synthpool))
                .expect("the bench circuits record");
            times.push(start.elapsed().as_secs_f64() * 1e3);
            recorded = Some(recording);
        }
        let recording = recorded.expect("recorded at least once");
        let record_ms = median(times);
        let threads = rayon::current_num_threads();
        Precompiled {
            recording,
            record_ms,
            buffers: RefCell::new((0..threads).map(|_| ProvingBuffers::default()).collect()),
            kept: RefCell::new(Vec::new()),
        }
    }
}

/// Synthesizes once as `variant` says; returns the pool counters of direct synthesis.
fn run(
    workload: &Workload,
    variant: &Variant,
    shape: Shape,
    precompiled: &Precompiled,
) -> Option<PoolStats> {
    let (mut buffers, mut kept) = (
        precompiled.buffers.borrow_mut(),
        precompiled.kept.borrow_mut(),
    );
    // Plain `&mut`s (not the RefCell guards) can move onto the variant's threads.
    let (buffers, kept): (&mut [ProvingBuffers<Fr>], &mut Vec<ProverVectors<Fr>>) =
        (&mut buffers, &mut kept);
    let recording = &precompiled.recording;
    variant.with_settings(|| match variant.path {
        Path::Direct => {
            workload
                .synthesize(variant.gadgets, &variant.options(shape))
                .expect("the bench circuits are satisfiable")
                .1
        }
        _ => {
            workload
                .synthesize_precompiled(recording, variant, buffers, kept)
                .expect("the bench circuits are satisfiable");
            None
        }
    })
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

/// Witness and evaluation time per constraint, measured apart, for one circuit of a
/// recorded variant, on the variant's threads.
fn precompiled_split(
    workload: &Workload,
    variant: &Variant,
    precompiled: &Precompiled,
) -> (f64, f64) {
    let recording = &precompiled.recording;
    let n = recording.shape().constraints as f64;
    let (recycled, native) = match variant.path {
        Path::Recorded { recycled, native } => (recycled, native),
        Path::PerThread { recycled } => (recycled, true),
        Path::Direct | Path::DropIn { .. } => unreachable!("only recorded paths are split"),
    };
    let mut guard = precompiled.buffers.borrow_mut();
    // A plain `&mut` (not the RefCell guard) can move into the one-thread pool.
    let buffers: &mut ProvingBuffers<Fr> = &mut guard[0];
    let split = |buffers: &mut ProvingBuffers<Fr>| {
        let start = Instant::now();
        let witness = workload
            .witness(recording, buffers, variant.gadgets, (recycled, native))
            .expect("the bench circuits are satisfiable");
        let witness_ns = start.elapsed().as_nanos() as f64 / n;
        let start = Instant::now();
        Workload::evaluate(recording, buffers, witness, recycled).expect("shapes match");
        (witness_ns, start.elapsed().as_nanos() as f64 / n)
    };
    variant.with_settings(|| split(buffers))
}

fn measure(
    workload: &Workload,
    variants: &[Variant],
    reps: usize,
    counters: &mut counters::Counters,
) -> Vec<Row> {
    let shape = workload
        .synthesize(GadgetSet::Upstream, &SynthesisOptions::default())
        .expect("the bench circuits are satisfiable")
        .0;
    let precompiled = Precompiled::new(workload, reps);
    // Round-robin repetitions, so drift on a noisy machine hits every variant alike.
    let mut times = vec![Vec::new(); variants.len()];
    for _ in 0..reps {
        for (variant, times) in variants.iter().zip(&mut times) {
            let n = (shape.constraints * variant.batch()) as f64;
            let start = Instant::now();
            run(workload, variant, shape, &precompiled);
            times.push(start.elapsed().as_nanos() as f64 / n);
        }
    }
    let mut rows: Vec<Row> = Vec::new();
    for (variant, times) in variants.iter().zip(times) {
        let (before_calls, before_bytes) = alloc::totals();
        let n = (shape.constraints * variant.batch()) as f64;
        let (pool_stats, readings) =
            counters.measure(|| run(workload, variant, shape, &precompiled));
        let (after_calls, after_bytes) = alloc::totals();
        let get = |name: &str| {
            readings
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, r)| r.value)
        };
        let ratio =
            |x: Option<f64>, y: Option<f64>| x.zip(y).filter(|(_, y)| *y > 0.0).map(|(x, y)| x / y);
        let recorded = variant.path.records().then_some(&precompiled);
        let split = recorded.map(|r| {
            let splits = (0..reps.max(1)).map(|_| precompiled_split(workload, variant, r));
            let (witness, evaluation): (Vec<f64>, Vec<f64>) = splits.unzip();
            (median(witness), median(evaluation))
        });
        rows.push(Row {
            circuit: workload.label(),
            variant: variant.name,
            description: variant.about,
            constraints: shape.constraints,
            ns_per_constraint: median(times),
            ratio_to_baseline: None,
            instructions_per_constraint: get("instructions").map(|v| v / n),
            ipc: ratio(get("instructions"), get("cycles")),
            cache_miss_rate: ratio(get("cache_misses"), get("cache_references")),
            l1d_misses_per_constraint: get("l1d_read_misses").map(|v| v / n),
            branch_miss_rate: ratio(get("branch_misses"), get("branch_instructions")),
            task_clock_ns: get("task_clock_ns"),
            page_faults: get("page_faults"),
            counters_scaled: readings.iter().any(|(_, r)| r.scaled),
            allocations_per_constraint: (after_calls - before_calls) as f64 / n,
            bytes_per_constraint: (after_bytes - before_bytes) as f64 / n,
            pool_hit_rate: pool_stats.map(|s| s.hit_rate()),
            record_ms: recorded.map(|r| r.record_ms),
            witness_ns_per_constraint: split.map(|(w, _)| w),
            evaluate_ns_per_constraint: split.map(|(_, e)| e),
            bytes_per_nonzero: recorded.map(|r| r.recording.bytes_per_nonzero()),
            nonzeros_per_constraint: recorded.map(|r| {
                r.recording.nonzeros() as f64 / r.recording.shape().constraints.max(1) as f64
            }),
            dictionary_len: recorded.map(|r| r.recording.dictionary_len()),
        });
    }
    // Ratio = baseline time / variant time: above 1 is faster than the baseline.
    if let Some(base) = rows
        .iter()
        .find(|r| r.variant == "baseline")
        .map(|r| r.ns_per_constraint)
    {
        for row in &mut rows {
            row.ratio_to_baseline = Some(base / row.ns_per_constraint);
        }
    }
    rows
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some(batches::FRESH_BATCH) {
        or_exit(batches::fresh_batch(&args[1..]));
        return;
    }
    let workloads = workloads();
    let variants = variants();
    let reps = std::env::var("SYNTH_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5)
        .max(1);
    let mut counters = counters::Counters::open(&[one_thread_pool()]);
    if let Some(reason) = &counters.unavailable {
        println!("note: {reason}.\nReporting software counters and allocations only.");
    }
    println!(
        "allocator: {}, {} repetitions per variant, round-robin",
        alloc::NAME,
        reps
    );
    for v in &variants {
        let native = if v.kernel.is_native() {
            ""
        } else {
            " (prefetch not compiled in: portable loop)"
        };
        println!("  {:<9} {}{}", v.name, v.about, native);
    }

    let rows: Vec<Row> = workloads
        .iter()
        .flat_map(|w| measure(w, &variants, reps, &mut counters))
        .collect();
    let batches = batches();
    let report = Report {
        schema: synthpool_bench::report::SCHEMA,
        allocator: alloc::NAME,
        hardware_counters: counters.unavailable.as_deref(),
        rows: &rows,
        batches: &batches,
    };
    print!("{}", report.table());
    let path = std::env::var_os("SYNTH_REPORT").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/synth_only/report.json"),
        std::path::PathBuf::from,
    );
    match report.write_json(&path) {
        Ok(()) => println!("\nreport written to {}", path.display()),
        Err(e) => eprintln!("\nsynth_only: {e}"),
    }

    if std::env::var("SYNTH_CRITERION").as_deref() == Ok("0") {
        return;
    }
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(std::time::Duration::from_millis(500))
        .configure_from_args();
    for workload in &workloads {
        let shape = workload
            .synthesize(GadgetSet::Upstream, &SynthesisOptions::default())
            .expect("the bench circuits are satisfiable")
            .0;
        let precompiled = Precompiled::new(workload, 1);
        let mut group = criterion.benchmark_group(workload.label());
        for variant in &variants {
            group.bench_function(BenchmarkId::from_parameter(variant.name), |b| {
                b.iter(|| run(workload, variant, shape, &precompiled))
            });
        }
        group.finish();
    }
    criterion.final_summary();
}
