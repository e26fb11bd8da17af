//! Synthesizes one partition of a real PoRep C2 circuit (2 KiB or 8 MiB sector, two
//! challenges as filecoin-proofs asks of those sizes) and reports nanoseconds per
//! constraint, median of the repetitions, and the recording's bytes per nonzero:
//!
//! `real-circuit [2KiB|8MiB] [pce|direct|none] [REPS]`
//!
//! - `pce`: recorded once, then per repetition the witness and the evaluation into recycled
//!   buffers (reported apart); one thread with `RAYON_NUM_THREADS=1`;
//! - `direct`: `synthpool::synthesize`;
//! - `none`: builds the circuits only, for instruction counts by difference.
//!
//! Before timing, the pre-compiled vectors are checked equal to direct synthesis.

use std::time::Instant;

use blstrs::Scalar as Fr;
use ff::Field;
use filecoin_hashers::{poseidon::PoseidonHasher, sha256::Sha256Hasher, Hasher};
use fr32::fr_into_bytes;
use generic_array::typenum::{U0, U8};
use rand::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;
use storage_proofs_core::api_version::ApiVersion;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::drgraph::BASE_DEGREE;
use storage_proofs_core::merkle::DiskTree;
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_core::test_helper::setup_replica;
use storage_proofs_porep::stacked::{
    Challenges, PrivateInputs, PublicInputs, SetupParams, StackedCompound, StackedDrg,
    TemporaryAuxCache, EXP_DEGREE,
};
use synthpool::precompiled::{ProvingBuffers, Recording};

/// tree_c and tree_r_last of 2 KiB and 8 MiB sectors: one octal tree.
type Tree = DiskTree<PoseidonHasher, U8, U0, U0>;
type Porep<'a> = StackedDrg<'a, Tree, Sha256Hasher>;

type Error = Box<dyn std::error::Error>;

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let nodes = match args.first().map_or("2KiB", String::as_str) {
        "2KiB" => 2048 / 32,
        "8MiB" => (8 << 20) / 32,
        other => return Err(format!("sector size `{other}`: 2KiB or 8MiB").into()),
    };
    let mode = args.get(1).map_or("pce", String::as_str);
    let reps: usize = args.get(2).map_or(Ok(3), |r| r.parse())?;

    // A sealed sector of random data, by storage-proofs-porep's own replication.
    let mut rng = XorShiftRng::from_seed([7; 16]);
    let replica_id = Fr::random(&mut rng);
    let data: Vec<u8> = (0..nodes)
        .flat_map(|_| fr_into_bytes(&Fr::random(&mut rng)))
        .collect();
    let cache = tempfile::tempdir()?;
    let replica_path = cache.path().join("replica");
    let mut replica = setup_replica(&data, &replica_path);
    let setup = SetupParams {
        nodes,
        degree: BASE_DEGREE,
        expansion_degree: EXP_DEGREE,
        porep_id: [5; 32],
        challenges: Challenges::new_interactive(2),
        num_layers: 2,
        api_version: ApiVersion::V1_2_0,
        api_features: vec![],
    };
    let params = Porep::setup(&setup)?;
    let (labels, _) = Porep::replicate_phase1(&params, &replica_id.into(), cache.path())?;
    let (tau, (p_aux, t_aux)) = Porep::replicate_phase2(
        &params,
        labels,
        replica.as_mut().into(),
        None,
        cache.path().to_path_buf(),
        replica_path.clone(),
    )?;
    drop(replica);
    let public = PublicInputs::<<PoseidonHasher as Hasher>::Domain, _> {
        replica_id: replica_id.into(),
        seed: Some(rng.gen()),
        tau: Some(tau),
        k: None,
    };
    let t_aux = TemporaryAuxCache::new(&t_aux, replica_path, false)?;
    let private = PrivateInputs { p_aux, t_aux };
    let proofs = Porep::prove_all_partitions(&params, &public, &private, 1)?;
    let circuit = || {
        <StackedCompound<Tree, Sha256Hasher> as CompoundProof<Porep<'_>, _>>::circuit(
            &public,
            (),
            &proofs[0],
            &params,
            None,
        )
    };

    let start = Instant::now();
    let recording = Recording::<Fr>::record(circuit()?)?;
    let constraints = recording.shape().constraints;
    let record_ms = start.elapsed().as_secs_f64() * 1e3;
    let mut buffers = ProvingBuffers::default();
    let direct = synthpool::synthesize(circuit()?)?;
    if *buffers.synthesize(&recording, circuit()?)? != direct {
        return Err("pre-compiled vectors differ from direct synthesis".into());
    }
    drop(direct);

    let circuits = (0..reps)
        .map(|_| circuit())
        .collect::<Result<Vec<_>, _>>()?;
    let per_constraint =
        |from: Instant, to: Instant| (to - from).as_nanos() as f64 / constraints as f64;
    let (mut total, mut witness, mut evaluation) = (vec![], vec![], vec![]);
    for circuit in circuits {
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
            "none" => {}
            other => return Err(format!("mode `{other}`: pce, direct or none").into()),
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
