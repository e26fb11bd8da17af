//! Synthesizes one partition of a real Filecoin circuit of filecoin-proofs 19.1 and reports
//! nanoseconds per constraint, median of the repetitions, and the recording's bytes per
//! nonzero; or proves it with bellperson and with the drop-in and compares the proofs:
//!
//! `real-circuit [2KiB|8MiB|window-post|winning-post|snap] [pce|direct|first|none|prove|bellperson|digest] [REPS]`
//!
//! - `2KiB`, `8MiB`: a PoRep C2 partition (storage-proofs-porep's `StackedCircuit`, two
//!   challenges as filecoin-proofs asks of those sizes), the sector sealed by the crate's
//!   own replication;
//! - `window-post`, `winning-post`: storage-proofs-post's `FallbackPoStCircuit` for 2 KiB
//!   sectors as filecoin-proofs sizes it (two sectors of ten challenges; 66 of one),
//!   over tree_r_last trees of random replicas built by storage-proofs-core;
//! - `snap`: storage-proofs-update's `EmptySectorUpdateCircuit` of a 2 KiB committed-capacity
//!   sector sealed here, random data encoded into it by the crate's `encode_into`;
//! - `pce`: recorded once, then per repetition the witness and the evaluation into recycled
//!   buffers (reported apart); one thread with `RAYON_NUM_THREADS=1` (every mode is timed on
//!   a thread of a rayon pool of that many threads);
//! - `direct`: `synthpool::synthesize`;
//! - `first`: what the drop-in spends on a member of a first batch, whose structure it has
//!   not seen: recording while synthesizing directly, then checking that the recording
//!   reproduces the vectors (`synthpool::tuning::record_first_member`);
//! - `none`: builds the circuits only, for instruction counts by difference;
//! - `prove`: random parameters for the circuit, then two members proven by bellperson's
//!   `create_random_proof_batch` and by synthpool's drop-in, cold (recording) and warm, from
//!   the same rng: every proof byte-identical to bellperson's and verified;
//! - `bellperson`: bellperson 0.27's synthesis algorithm (`bellperson_synthesis.rs`), timed:
//!   upstream's synthesis in the unpatched build;
//! - `digest`: only prints the digest of the circuit's constraints and assignment (see
//!   `digest.rs`).
//!
//! Built without synthpool (`--no-default-features`, upstream's crates alone) only
//! `bellperson` and `digest` run.
//!
//! Every other mode first checks the circuit's digest against the one the unpatched build
//! printed (pinned in `digest.rs`): the patched crates synthesize upstream's constraints, term
//! for term, over upstream's assignment. Then, before timing, the pre-compiled vectors are
//! checked equal to direct synthesis, direct synthesis on the pool's threads (a PoRep or
//! SnapDeals partition's challenges, PoSt's chunks of sectors spread over them) equal to one
//! thread's, and a first member's recording pass equal to both.

mod bellperson_synthesis;
mod circuits;
mod digest;
#[cfg(feature = "synthpool")]
mod measure;

use std::time::Instant;

use bellperson::Circuit;
use blstrs::Scalar as Fr;
use rand::SeedableRng;
use rand_xorshift::XorShiftRng;

use circuits::Partitions;
use digest::Digest;

type Error = Box<dyn std::error::Error + Send + Sync>;

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let circuit = args.first().map_or("2KiB", String::as_str);
    let mode = args.get(1).map_or("pce", String::as_str);
    let reps: usize = args.get(2).map_or(Ok(3), |r| r.parse())?;
    let cache = tempfile::tempdir()?;
    let dir = cache.path();
    let mut rng = XorShiftRng::from_seed([7; 16]);
    match circuit {
        "2KiB" => check(
            circuit,
            circuits::porep(2048 / 32, &mut rng, dir)?,
            mode,
            reps,
        ),
        "8MiB" => check(
            circuit,
            circuits::porep((8 << 20) / 32, &mut rng, dir)?,
            mode,
            reps,
        ),
        "window-post" => check(circuit, circuits::post(2, 10, &mut rng, dir)?, mode, reps),
        // filecoin-proofs' winning_post_setup_params: its 66 challenges of one sector become
        // 66 sectors of one challenge each in the circuit.
        "winning-post" => check(circuit, circuits::post(66, 1, &mut rng, dir)?, mode, reps),
        "snap" => check(circuit, circuits::update(&mut rng, dir)?, mode, reps),
        other => {
            Err(format!("circuit `{other}`: 2KiB, 8MiB, window-post, winning-post or snap").into())
        }
    }
}

/// Digests the first partition's circuit, checks it against upstream's, then runs `mode`.
fn check<C: Circuit<Fr> + Clone + Send>(
    name: &str,
    partitions: Partitions<C>,
    mode: &str,
    reps: usize,
) -> Result<(), Error> {
    let (circuit, inputs) = partitions.into_iter().next().ok_or("no partition")?;
    let (digest, constraints) = Digest::of(circuit.clone())?;
    if mode == "digest" {
        println!("{name}: {constraints} constraints of its own, digest {digest}");
        return Ok(());
    }
    match digest::upstream(name) {
        Some(pinned) if pinned == digest => {
            println!(
                "{name}: {constraints} constraints of its own, identical to upstream's ({digest})"
            )
        }
        Some(pinned) => {
            return Err(format!(
                "{name}: digest {digest}, upstream's is {pinned}: the constraints differ"
            )
            .into())
        }
        None => return Err(format!("{name}: no upstream digest pinned").into()),
    }
    // Timed on a thread of a rayon pool (of `RAYON_NUM_THREADS` threads, as the global one),
    // as the bench times: with one thread, a parallel loop then runs where it is called.
    // Called from outside the pool, each loop wakes a worker and waits for it, some tens
    // of microseconds: nothing beside a real sector's millions of constraints, a tenth of
    // a 2 KiB WindowPoSt's few milliseconds.
    let pool = rayon::ThreadPoolBuilder::new().build()?;
    pool.install(|| match mode {
        "bellperson" => bellperson(circuit, reps),
        _ => run(circuit, &inputs, mode, reps),
    })
}

/// Times bellperson's synthesis algorithm on `reps` copies of `circuit`.
fn bellperson<C: Circuit<Fr> + Clone>(circuit: C, reps: usize) -> Result<(), Error> {
    let mut times = Vec::new();
    for circuit in vec![circuit; reps] {
        let start = Instant::now();
        let constraints = bellperson_synthesis::Synthesis::run(circuit)?;
        times.push(start.elapsed().as_nanos() as f64 / constraints as f64);
    }
    times.sort_by(f64::total_cmp);
    let median = times.get(times.len() / 2).copied().unwrap_or(f64::NAN);
    println!("bellperson's synthesis: {median:.1} ns per constraint");
    Ok(())
}

#[cfg(feature = "synthpool")]
fn run<C: Circuit<Fr> + Clone + Send>(
    circuit: C,
    inputs: &[Fr],
    mode: &str,
    reps: usize,
) -> Result<(), Error> {
    measure::run(circuit, inputs, mode, reps)
}

#[cfg(not(feature = "synthpool"))]
fn run<C>(_: C, _: &[Fr], mode: &str, _: usize) -> Result<(), Error> {
    Err(
        format!("mode `{mode}` needs synthpool: built without it, `bellperson` and `digest` run")
            .into(),
    )
}
