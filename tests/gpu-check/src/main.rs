//! The GPU check: on a machine with an NVIDIA GPU, the same batch proven by bellperson
//! 0.27's own prover and by synthpool's drop-ins (cold, then warm, at k = 1, 2 and the
//! batch size), every proof byte-compared with bellperson's and verified, with the batch's
//! wall time, synthesis and proving time per member and peak host memory.
//!
//! Built with `--features cuda` it proves with bellperson's kernels (lotus' build); with
//! `--features supraseal` through bellperson's `cuda-supraseal` (curio's), from the
//! `.params` file. Both print a digest of bellperson's proofs of the batch, which must
//! agree: the same parameters, circuits and rng give the same proofs on either prover.
//!
//! Usage: `gpu-check PARAMS [CIRCUIT] [MEMBERS]`: PARAMS is the `.params` file (made from
//! a fixed seed and written there when absent), CIRCUIT `merkle:DEPTH` or
//! `porep:CHALLENGES` (the bench's circuits; default `merkle:2`), MEMBERS the batch size
//! (default 4). Exit status 0 when every proof is identical and verifies.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use bellperson::groth16::{self, Proof};
use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::{Bls12, Scalar as Fr};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;
use synthpool::groth16 as dropins;
use synthpool::precompiled::Recording;
use synthpool_bench::circuits::{GadgetSet, MerklePath};
use synthpool_bench::porep::{Partition, PartitionParts, SectorShape};

#[cfg(all(feature = "cuda", feature = "supraseal"))]
compile_error!("build the GPU check with `cuda` or with `supraseal`, once each");

#[cfg(not(any(feature = "cuda", feature = "supraseal")))]
compile_error!("build the GPU check with `--features cuda` or `--features supraseal`");

#[cfg(feature = "cuda")]
#[path = "cuda.rs"]
mod prover;
#[cfg(feature = "supraseal")]
#[path = "supraseal.rs"]
mod prover;

/// Which bench circuit the members are.
#[derive(Clone, Copy, Debug)]
enum Shape {
    Merkle(usize),
    Porep(usize),
}

/// One member of the batch.
#[derive(Clone)]
enum Member {
    Merkle(MerklePath),
    Porep(Box<Partition>),
}

impl Circuit<Fr> for Member {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        match self {
            Member::Merkle(path) => path.synthesize(cs),
            Member::Porep(partition) => partition.synthesize(cs),
        }
    }
}

impl Shape {
    fn parse(text: &str) -> Result<Shape, String> {
        let (name, size) = text.split_once(':').unwrap_or((text, "1"));
        let size: usize = size
            .parse()
            .map_err(|_| format!("{text}: size is not a number"))?;
        match name {
            "merkle" => Ok(Shape::Merkle(size)),
            "porep" => Ok(Shape::Porep(size)),
            _ => Err(format!(
                "{text}: the circuit is merkle:DEPTH or porep:CHALLENGES"
            )),
        }
    }

    /// The member of `seed`, built with synthpool's gadgets as a patched fork has them.
    fn member(self, seed: u64) -> Member {
        match self {
            Shape::Merkle(depth) => {
                Member::Merkle(MerklePath::sample(seed, depth, GadgetSet::Synthpool))
            }
            Shape::Porep(challenges) => Member::Porep(Box::new(Partition::sample(
                SectorShape::GIB_32,
                PartitionParts::ALL,
                challenges,
                seed,
                GadgetSet::Synthpool,
            ))),
        }
    }

    fn members(self, count: usize) -> Vec<Member> {
        (0..count as u64)
            .map(|seed| self.member(seed + 1))
            .collect()
    }
}

/// The host's peak resident memory since the last reset, in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Resets the peak resident memory to what is resident now (Linux's `clear_refs`).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// Runs `f`, printing its wall time and the peak host memory during it under `label`.
fn measured<T>(label: &str, f: impl FnOnce() -> T) -> T {
    reset_peak_rss();
    let start = Instant::now();
    let value = f();
    println!(
        "{label}: {:.3} s, peak host memory {}",
        start.elapsed().as_secs_f64(),
        gib(peak_rss())
    );
    value
}

fn proof_bytes(proofs: &[Proof<Bls12>]) -> Vec<Vec<u8>> {
    proofs
        .iter()
        .map(|proof| {
            let mut bytes = Vec::new();
            proof.write(&mut bytes).expect("a proof writes");
            bytes
        })
        .collect()
}

/// The parameters at `path`, made from a fixed seed and written there when absent.
fn parameters(path: &Path, shape: Shape) -> Result<(), String> {
    if path.exists() {
        return Ok(());
    }
    let blank = shape.member(0);
    let params = measured("parameters generated", || {
        groth16::generate_random_parameters::<Bls12, _, _>(
            blank,
            &mut XorShiftRng::seed_from_u64(20),
        )
    })
    .map_err(|e| format!("parameter generation: {e}"))?;
    let mut bytes = Vec::new();
    params.write(&mut bytes).map_err(|e| e.to_string())?;
    std::fs::write(path, &bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    println!(
        "parameters written: {} ({} bytes)",
        path.display(),
        bytes.len()
    );
    Ok(())
}

/// What the two provers each implement.
trait Check {
    /// bellperson's own batch.
    fn bellperson(
        &self,
        members: Vec<Member>,
        rng: &mut XorShiftRng,
    ) -> Result<Vec<Proof<Bls12>>, String>;
    /// The drop-in's batch.
    fn dropin(
        &self,
        members: Vec<Member>,
        rng: &mut XorShiftRng,
    ) -> Result<Vec<Proof<Bls12>>, String>;
    /// Proving one synthesized member with given randomness.
    fn prove(
        &self,
        vectors: synthpool::ProverVectors<Fr>,
        r: Fr,
        s: Fr,
    ) -> Result<Proof<Bls12>, String>;
    /// The verifying key.
    fn vk(&self) -> &groth16::VerifyingKey<Bls12>;
}

fn run(params_path: PathBuf, shape: Shape, count: usize) -> Result<(), String> {
    println!("prover: {}", prover::NAME);
    parameters(&params_path, shape)?;
    let check = measured("parameters loaded", || prover::load(&params_path))?;
    let constraints = synthpool::synthesize(shape.member(1))
        .map_err(|e| e.chain())?
        .shape()
        .constraints;
    println!("circuit {shape:?}: {constraints} constraints per member, {count} members");

    let pvk = groth16::prepare_verifying_key(check.vk());
    let publics: Vec<Vec<Fr>> = shape
        .members(count)
        .into_iter()
        .map(|member| {
            synthpool::synthesize(member)
                .map(|vectors| vectors.input_assignment[1..].to_vec())
                .map_err(|e| e.chain())
        })
        .collect::<Result<_, _>>()?;
    let verify = |proofs: &[Proof<Bls12>], who: &str| -> Result<(), String> {
        for (index, (proof, public)) in proofs.iter().zip(&publics).enumerate() {
            if !groth16::verify_proof(&pvk, proof, public).map_err(|e| e.to_string())? {
                return Err(format!(
                    "{who}: the proof of member {index} does not verify"
                ));
            }
        }
        Ok(())
    };

    let reference = measured(&format!("bellperson batch of {count}"), || {
        check.bellperson(shape.members(count), &mut XorShiftRng::seed_from_u64(1))
    })?;
    verify(&reference, "bellperson")?;
    let expected = proof_bytes(&reference);
    let digest = blake2s_simd::blake2s(&expected.concat());
    println!("bellperson's proofs digest: {}", digest.to_hex());

    // Cold and warm in this process: no recording from another.
    dropins::set_cache_dir(None);
    let mut ks = vec![1, 2, count];
    ks.dedup();
    for k in ks {
        dropins::set_in_flight(k).map_err(|e| e.chain())?;
        dropins::clear::<Fr>();
        for round in ["cold", "warm"] {
            let proofs = measured(
                &format!("drop-in batch of {count}, k = {k}, {round}"),
                || check.dropin(shape.members(count), &mut XorShiftRng::seed_from_u64(1)),
            )?;
            verify(&proofs, "drop-in")?;
            if proof_bytes(&proofs) != expected {
                return Err(format!(
                    "drop-in k = {k} {round}: proofs differ from bellperson's"
                ));
            }
        }
    }
    let stats = dropins::stats::<Fr>();
    println!("drop-in store: {stats:?}");
    if stats.trusted == 0 || stats.evaluated_batches == 0 {
        return Err("no recording earned trust: the warm batches were not evaluated".into());
    }

    // Per member: synthesis, directly and from a recording, and proving alone.
    let member = || shape.member(1);
    let direct = measured("synthesis of one member, direct", || {
        synthpool::synthesize(member())
    })
    .map_err(|e| e.chain())?;
    let recording = measured("recording the structure", || {
        Recording::record(shape.member(0))
    })
    .map_err(|e| e.chain())?;
    let recorded = measured("synthesis of one member, from the recording", || {
        recording.synthesize(member())
    })
    .map_err(|e| e.chain())?;
    if recorded != direct {
        return Err("the recording's vectors differ from direct synthesis".into());
    }
    let (r, s) = synthpool::prover::random_rs::<Fr>(1, &mut XorShiftRng::seed_from_u64(9));
    let proof = measured("proving one member", || check.prove(direct, r[0], s[0]))?;
    verify(std::slice::from_ref(&proof), "one member")?;
    println!("RESULT ok: every proof identical to bellperson's and verified");
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(params) = args.first() else {
        eprintln!("usage: gpu-check PARAMS [merkle:DEPTH|porep:CHALLENGES] [MEMBERS]");
        return ExitCode::from(2);
    };
    let shape = match Shape::parse(args.get(1).map_or("merkle:2", String::as_str)) {
        Ok(shape) => shape,
        Err(e) => {
            eprintln!("gpu-check: {e}");
            return ExitCode::from(2);
        }
    };
    let count = match args.get(2).map_or(Ok(4), |n| n.parse::<usize>()) {
        Ok(n) if n > 0 => n,
        _ => {
            eprintln!("gpu-check: MEMBERS is a number of at least 1");
            return ExitCode::from(2);
        }
    };
    match run(PathBuf::from(params), shape, count) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            println!("RESULT failed: {e}");
            ExitCode::FAILURE
        }
    }
}
