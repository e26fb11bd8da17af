//! Synthesizes one workload with one variant, for `scripts/perf-stat.sh` to run under
//! `perf stat` or cachegrind.
//!
//! Usage: synth_runner [--circuit porep|poseidon|labeling|merkle|mixed] [--size N] [--variant NAME] [--reps N] [--check]
//!
//! `--check` only checks the arguments (names the workload and variant, or fails).
//! Direct variants first synthesize once with their own options (the presize variant takes
//! its shape from that run), pre-compiled ones record the circuit instead; then `--reps`
//! more runs, so each process does the same work apart from what the variant changes. The
//! one-off first step is part of the process: compare by the difference of two `--reps`.

use std::process::ExitCode;

use synthpool::precompiled::{ProvingBuffers, Recording};
use synthpool_bench::alloc;
use synthpool_bench::circuits::GadgetSet;
use synthpool_bench::variants::{Path, Variant, Workload};

// The bench's counting allocator (the system allocator, or jemalloc with
// `--features jemalloc`), so the runner reports allocations like the bench does.
#[global_allocator]
static ALLOCATOR: alloc::Counting = alloc::Counting;

type Fr = blstrs::Scalar;

struct Args {
    workload: Workload,
    variant: Variant,
    reps: usize,
    check: bool,
}

fn parse() -> Result<Args, String> {
    let mut circuit = "porep".to_string();
    let mut size = None;
    let mut variant = "baseline".to_string();
    let mut reps = 1;
    let mut check = false;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--circuit" => circuit = value()?,
            "--size" => size = Some(value()?.parse().map_err(|e| format!("--size: {e}"))?),
            "--variant" => variant = value()?,
            "--reps" => reps = value()?.parse().map_err(|e| format!("--reps: {e}"))?,
            "--check" => check = true,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(Args {
        workload: Workload::by_name(&circuit, size)?,
        variant: Variant::by_name(&variant)?,
        reps,
        check,
    })
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("synth_runner: {message}");
            return ExitCode::from(2);
        }
    };
    if args.check {
        println!("{} / {}", args.workload.label(), args.variant.name);
        return ExitCode::SUCCESS;
    }
    let run = |options: &synthpool::SynthesisOptions| {
        args.workload.synthesize(args.variant.gadgets, options)
    };
    // Pre-compiled variants record first and take the shape from the recording; direct ones
    // synthesize once with their own options (the presize variant takes its shape from it).
    let recording = match args.variant.path {
        Path::Direct => None,
        _ => match Recording::<Fr>::record(args.workload.circuit(GadgetSet::Synthpool)) {
            Ok(recording) => Some(recording),
            Err(e) => {
                eprintln!("synth_runner: recording failed: {e}");
                return ExitCode::FAILURE;
            }
        },
    };
    let shape = match &recording {
        Some(recording) => recording.shape(),
        None => {
            let first_options = args.variant.options(Default::default()).with_shape(None);
            match run(&first_options) {
                Ok((shape, _)) => shape,
                Err(e) => {
                    eprintln!("synth_runner: synthesis failed: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
    };
    let options = args.variant.options(shape);
    let mut buffers: Vec<ProvingBuffers<Fr>> = (0..rayon::current_num_threads())
        .map(|_| ProvingBuffers::default())
        .collect();
    let mut kept = Vec::new();
    let (calls_before, bytes_before) = alloc::totals();
    // The variant's settings (the lanes, its threads) for the whole run.
    let (buffers, kept) = (&mut buffers, &mut kept);
    let ran = args.variant.with_settings(|| {
        (0..args.reps).try_for_each(|_| match &recording {
            Some(recording) => {
                args.workload
                    .synthesize_precompiled(recording, &args.variant, buffers, kept)
            }
            None => run(&options).map(drop),
        })
    });
    if let Err(e) = ran {
        eprintln!("synth_runner: synthesis failed: {e}");
        return ExitCode::FAILURE;
    }
    let (calls_after, bytes_after) = alloc::totals();
    // Per constraint synthesized over the measured repetitions; the first, shape-finding
    // run excluded.
    let synthesized = shape.constraints * args.variant.batch() * args.reps.max(1);
    let per_constraint = |x: u64| x as f64 / synthesized as f64;
    // Pre-compiled variants add their nonzeros per constraint, what the evaluation's
    // instructions per nonzero are counted against.
    let nonzeros = recording.as_ref().map_or(String::new(), |recording| {
        let rows = recording.shape().constraints.max(1);
        let per_row = recording.nonzeros() as f64 / rows as f64;
        format!(" nonzeros_per_constraint={per_row:.4}")
    });
    println!(
        "circuit={} variant={} allocator={} constraints={} reps={} allocations_per_constraint={:.4} bytes_per_constraint={:.1}{nonzeros}",
        args.workload.label().replace(' ', "_"),
        args.variant.name,
        alloc::NAME,
        shape.constraints * args.variant.batch(),
        args.reps,
        per_constraint(calls_after - calls_before),
        per_constraint(bytes_after - bytes_before),
    );
    ExitCode::SUCCESS
}
