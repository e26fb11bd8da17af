//! Timing and proving with synthpool (the patched build only).

use std::time::Instant;

use bellperson::groth16;
use bellperson::Circuit;
use blstrs::{Bls12, Scalar as Fr};
use rand::SeedableRng;
use rand_xorshift::XorShiftRng;
use synthpool::precompiled::{ProvingBuffers, Recording};

use crate::Error;

/// Times or proves `circuit`, as `mode` says.
pub fn run<C: Circuit<Fr> + Clone + Send>(
    circuit: C,
    inputs: &[Fr],
    mode: &str,
    reps: usize,
) -> Result<(), Error> {
    let start = Instant::now();
    let recording = Recording::<Fr>::record(circuit.clone())?;
    let constraints = recording.shape().constraints;
    let record_ms = start.elapsed().as_secs_f64() * 1e3;
    let mut buffers = ProvingBuffers::default();
    let direct = synthpool::synthesize(circuit.clone())?;
    if *buffers.synthesize(&recording, circuit.clone())? != direct {
        return Err("pre-compiled vectors differ from direct synthesis".into());
    }
    drop(direct);
    if mode == "prove" {
        return prove(circuit, inputs);
    }

    let per_constraint =
        |from: Instant, to: Instant| (to - from).as_nanos() as f64 / constraints as f64;
    let (mut total, mut witness, mut evaluation) = (vec![], vec![], vec![]);
    for circuit in vec![circuit; reps] {
        let t0 = Instant::now();
        match mode {
            "pce" => {
                let w = buffers.witness(&recording, circuit)?;
                let t1 = Instant::now();
                buffers.evaluate(&recording, w)?;
                witness.push(per_constraint(t0, t1));
                evaluation.push(per_constraint(t1, Instant::now()));
            }
            "direct" => drop(synthpool::synthesize(circuit)?),
            // What a first batch costs per member it records: recording while
            // synthesizing directly, and checking the recording reproduces the vectors.
            "first" => drop(synthpool::tuning::record_first_member(circuit)?),
            "none" => {}
            other => {
                return Err(format!(
                    "mode `{other}`: pce, direct, first, none, prove, bellperson or digest"
                )
                .into())
            }
        }
        total.push(per_constraint(t0, Instant::now()));
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let split = if mode == "pce" {
        format!(
            " (witness {:.1}, evaluation {:.1})",
            median(witness),
            median(evaluation)
        )
    } else {
        String::new()
    };
    println!(
        "{constraints} constraints, record {record_ms:.0} ms, recording {:.2} bytes per nonzero \
         ({} nonzeros), {mode}: {:.1} ns per constraint{split}",
        recording.bytes_per_nonzero(),
        recording.nonzeros(),
        median(total),
    );
    Ok(())
}

/// Two members of `circuit` proven by bellperson and by the drop-in (cold, then warm) from
/// the same rng: the proofs byte-identical and verified against `inputs`.
fn prove<C: Circuit<Fr> + Clone + Send>(circuit: C, inputs: &[Fr]) -> Result<(), Error> {
    let mut rng = XorShiftRng::from_seed([9; 16]);
    let start = Instant::now();
    let params = groth16::generate_random_parameters::<Bls12, _, _>(circuit.clone(), &mut rng)?;
    println!("parameters: {:.1} s", start.elapsed().as_secs_f64());
    let pvk = groth16::prepare_verifying_key(&params.vk);
    let bytes = |proofs: &[groth16::Proof<Bls12>]| -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        for proof in proofs {
            proof.write(&mut out)?;
        }
        Ok(out)
    };
    let members = || vec![circuit.clone(); 2];
    let theirs = groth16::create_random_proof_batch(
        members(),
        &params,
        &mut XorShiftRng::from_seed([3; 16]),
    )?;
    for proof in &theirs {
        if !groth16::verify_proof(&pvk, proof, inputs)? {
            return Err("bellperson's proof does not verify".into());
        }
    }
    let theirs = bytes(&theirs)?;
    // Cold (recorded) and warm in this process: no recording from another.
    synthpool::groth16::set_cache_dir(None);
    for batch in ["cold", "warm"] {
        let start = Instant::now();
        let ours = synthpool::groth16::v0_27::create_random_proof_batch(
            members(),
            &params,
            &mut XorShiftRng::from_seed([3; 16]),
        )?;
        // Byte-identical to bellperson's verified proofs, so verified too.
        if bytes(&ours)? != theirs {
            return Err(format!("the drop-in's {batch} proofs differ from bellperson's").into());
        }
        println!(
            "drop-in, {batch}: 2 proofs byte-identical to bellperson's, verified, {:.1} s",
            start.elapsed().as_secs_f64()
        );
    }
    let stats = synthpool::groth16::stats::<Fr>();
    println!(
        "drop-in store: recorded {}, trusted {}, evaluated batches {}",
        stats.recorded, stats.trusted, stats.evaluated_batches
    );
    Ok(())
}
