//! synthpool's seam for curio's cuzk (`scripts/cuzk/synthpool_seam.rs`, compiled here as in
//! cuzk-core) run on one real circuit of filecoin-proofs 19.1 as cuzk's patched
//! `synthesize_auto` runs it, every prover compared with direct synthesis of the same
//! circuit (whose constraints are first checked against upstream's digest):
//!
//! `cuzk-standin [2KiB|8MiB|window-post|winning-post|snap]`
//!
//! 1. a first batch of two: the first synthesized directly while recorded, the second from
//!    the recording;
//! 2. a batch from the recording into a pinned pool's buffers (some larger than asked): every
//!    prover over them, every buffer back in the pool with its own size once released;
//! 3. a batch from the recording where the pool has no room: vectors of the heap;
//! 4. a fallback forced: a circuit whose synthesis fails once fails the seam, and the batch
//!    is synthesized again from the caller's circuits;
//! 5. for `8MiB` and `winning-post`: another structure under the same key first (cuzk names
//!    every PoRep size `Porep32G`; a window PoSt under the winning id): the seam refuses it
//!    (other counts), the fallback makes it, and the key's next batch records it.
//!
//! Direct synthesis (`synthpool::synthesize`, bellperson's vectors bit for bit) stands for
//! cuzk's own synthesis, the fork's, which CI cannot build.

mod pinned_pool;
mod srs_manager;
#[path = "../../../../../scripts/cuzk/synthpool_seam.rs"]
mod synthpool_seam;

#[path = "../../real-circuit/src/circuits.rs"]
mod circuits;
#[path = "../../real-circuit/src/digest.rs"]
mod digest;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use bellperson::groth16::ProvingAssignment;
use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ec_gpu_gen::multiexp_cpu::DensityTracker;
use rand::SeedableRng;
use rand_xorshift::XorShiftRng;
use synthpool::ProverVectors;

use pinned_pool::PinnedPool;
use srs_manager::CircuitId;
use synthpool_seam::Synthesized;

type Error = Box<dyn std::error::Error + Send + Sync>;

fn main() -> Result<(), Error> {
    let circuit = std::env::args().nth(1).unwrap_or_else(|| "2KiB".into());
    let cache = tempfile::tempdir()?;
    let dir = cache.path();
    let mut rng = XorShiftRng::from_seed([7; 16]);
    // The other structure's sector in a directory of its own (its trees' files).
    let apart = dir.join("other");
    std::fs::create_dir_all(&apart)?;
    match circuit.as_str() {
        "2KiB" => run(
            &circuit,
            first(circuits::porep(2048 / 32, &mut rng, dir)?)?,
            CircuitId::Porep32G,
            None,
        ),
        "8MiB" => {
            // Sealed first, so the 8 MiB partition is the one real-circuit's tool makes.
            let partition = first(circuits::porep((8 << 20) / 32, &mut rng, dir)?)?;
            let other = first(circuits::porep(2048 / 32, &mut rng, &apart)?)?;
            run(&circuit, partition, CircuitId::Porep32G, Some(other))
        }
        "window-post" => run(
            &circuit,
            first(circuits::post(2, 10, &mut rng, dir)?)?,
            CircuitId::WindowPost32G,
            None,
        ),
        "winning-post" => {
            let partition = first(circuits::post(66, 1, &mut rng, dir)?)?;
            let other = first(circuits::post(2, 10, &mut rng, &apart)?)?;
            run(&circuit, partition, CircuitId::WinningPost32G, Some(other))
        }
        "snap" => run(
            &circuit,
            first(circuits::update(&mut rng, dir)?)?,
            CircuitId::SnapDeals32G,
            None,
        ),
        other => {
            Err(format!("circuit `{other}`: 2KiB, 8MiB, window-post, winning-post or snap").into())
        }
    }
}

fn first<C>(partitions: circuits::Partitions<C>) -> Result<C, Error> {
    Ok(partitions.into_iter().next().ok_or("no partition")?.0)
}

/// Which synthesis made a batch.
#[derive(Debug, PartialEq)]
enum Made {
    Synthpool,
    Fallback(String),
}

/// cuzk's `synthesize_auto` as scripts/patch-cuzk.sh leaves it: the seam first; on its
/// error, cuzk's synthesis (here direct synthesis) of the caller's circuits.
fn synthesize_auto<C>(
    circuits: Vec<C>,
    circuit_id: &CircuitId,
    pinned_pool: Option<&Arc<PinnedPool>>,
) -> Result<(Synthesized, Made), Error>
where
    C: Circuit<Fr> + Clone + Send + Sync + 'static,
{
    match synthpool_seam::synthesize(&circuits, circuit_id, pinned_pool) {
        Ok(synthesized) => Ok((synthesized, Made::Synthpool)),
        Err(declined) => {
            let start = Instant::now();
            let (mut provers, mut inputs, mut auxes) = (Vec::new(), Vec::new(), Vec::new());
            for circuit in circuits {
                let v = synthpool::synthesize(circuit)?;
                provers.push(ProvingAssignment::from_pce(
                    v.a,
                    v.b,
                    v.c,
                    v.a_aux_density,
                    v.b_input_density,
                    v.b_aux_density,
                ));
                inputs.push(Arc::new(v.input_assignment));
                auxes.push(Arc::new(v.aux_assignment));
            }
            Ok((
                (start, provers, inputs, auxes),
                Made::Fallback(declined.to_string()),
            ))
        }
    }
}

/// Every prover and assignment of `synthesized` equal to `expected`, field for field.
fn same(
    synthesized: &Synthesized,
    expected: &[ProverVectors<Fr>],
    what: &str,
) -> Result<(), Error> {
    let (_, provers, inputs, auxes) = synthesized;
    if provers.len() != expected.len() {
        return Err(format!(
            "{what}: {} provers for {} circuits",
            provers.len(),
            expected.len()
        )
        .into());
    }
    for (i, want) in expected.iter().enumerate() {
        let p = &provers[i];
        let densities = |d: &DensityTracker| (d.bv.clone(), d.total_density);
        let checks = [
            ("a", p.a == want.a),
            ("b", p.b == want.b),
            ("c", p.c == want.c),
            (
                "a_aux_density",
                densities(&p.a_aux_density) == densities(&want.a_aux_density),
            ),
            (
                "b_input_density",
                densities(&p.b_input_density) == densities(&want.b_input_density),
            ),
            (
                "b_aux_density",
                densities(&p.b_aux_density) == densities(&want.b_aux_density),
            ),
            ("input assignment", *inputs[i] == want.input_assignment),
            ("aux assignment", *auxes[i] == want.aux_assignment),
        ];
        if let Some((field, _)) = checks.iter().find(|(_, equal)| !equal) {
            return Err(
                format!("{what}: circuit {i}: {field} differs from direct synthesis").into(),
            );
        }
    }
    Ok(())
}

fn run<C>(name: &str, circuit: C, id: CircuitId, other: Option<C>) -> Result<(), Error>
where
    C: Circuit<Fr> + Clone + Send + Sync + 'static,
{
    check_digest(name, circuit.clone())?;
    let expected = synthpool::synthesize(circuit.clone())?;
    let batch = |n: usize| vec![circuit.clone(); n];
    let expect = |n: usize| vec![expected.clone(); n];

    if let Some(other) = other {
        let (synthesized, made) = synthesize_auto(vec![other.clone()], &id, None)?;
        same(
            &synthesized,
            &[synthpool::synthesize(other)?],
            "another structure",
        )?;
        expect_made(&made, "another structure's batch", true)?;
        let (synthesized, made) = synthesize_auto(batch(1), &id, None)?;
        same(&synthesized, &expect(1), "after another structure")?;
        match made {
            Made::Fallback(why) if why.contains("it is not the recorded circuit") => {
                println!("{name}: under a key another structure holds: refused ({why}), made by the fallback, identical")
            }
            other => return Err(format!("{name}: under another structure's key: {other:?}").into()),
        }
    }

    let (synthesized, made) = synthesize_auto(batch(2), &id, None)?;
    expect_made(&made, "first batch", true)?;
    same(&synthesized, &expect(2), "first batch")?;
    println!("{name}: first batch: recorded beside its synthesis, 2 circuits identical to direct synthesis");

    let bytes = expected.a.len() * std::mem::size_of::<Fr>();
    let pool = Arc::new(PinnedPool::with_limit(6));
    for _ in 0..3 {
        pool.seed(bytes + 4096);
    }
    let (synthesized, made) = synthesize_auto(batch(2), &id, Some(&pool))?;
    expect_made(&made, "pinned batch", true)?;
    same(&synthesized, &expect(2), "pinned batch")?;
    if !synthesized.1.iter().all(ProvingAssignment::is_pinned) {
        return Err(
            format!("{name}: a prover of the pinned batch is not over the pool's buffers").into(),
        );
    }
    drop(synthesized);
    if pool.free_count() != 6 {
        return Err(format!(
            "{name}: {} of 6 buffers back in the pool",
            pool.free_count()
        )
        .into());
    }
    println!("{name}: from the recording into pinned buffers: 2 circuits identical, 6 buffers back in the pool");

    let full = Arc::new(PinnedPool::with_limit(0));
    let (synthesized, made) = synthesize_auto(batch(2), &id, Some(&full))?;
    expect_made(&made, "batch without room", true)?;
    same(&synthesized, &expect(2), "batch without room")?;
    if synthesized.1.iter().any(ProvingAssignment::is_pinned) {
        return Err(format!("{name}: pinned without room").into());
    }
    println!("{name}: from the recording, no room in the pool: 2 circuits identical, on the heap");

    let fail = Arc::new(AtomicBool::new(false));
    let flaky = |n: usize| {
        vec![
            Flaky {
                circuit: circuit.clone(),
                fail: Arc::clone(&fail),
            };
            n
        ]
    };
    let (synthesized, made) = synthesize_auto(flaky(1), &id, None)?;
    expect_made(&made, "flaky circuit's first batch", true)?;
    same(&synthesized, &expect(1), "flaky circuit's first batch")?;
    fail.store(true, Ordering::SeqCst);
    let (synthesized, made) = synthesize_auto(flaky(2), &id, None)?;
    same(&synthesized, &expect(2), "fallback")?;
    match made {
        Made::Fallback(why) => println!("{name}: fallback forced ({why}): 2 circuits identical"),
        Made::Synthpool => return Err(format!("{name}: the seam did not fail").into()),
    }
    Ok(())
}

fn expect_made(made: &Made, what: &str, by_synthpool: bool) -> Result<(), Error> {
    if (*made == Made::Synthpool) == by_synthpool {
        Ok(())
    } else {
        Err(format!("{what}: made {made:?}").into())
    }
}

/// `circuit`, whose synthesis fails once while `fail` is set (shared by its clones).
#[derive(Clone)]
struct Flaky<C> {
    circuit: C,
    fail: Arc<AtomicBool>,
}

impl<C: Circuit<Fr>> Circuit<Fr> for Flaky<C> {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        if self.fail.swap(false, Ordering::SeqCst) {
            return Err(SynthesisError::AssignmentMissing);
        }
        self.circuit.synthesize(cs)
    }
}

fn check_digest<C: Circuit<Fr>>(name: &str, circuit: C) -> Result<(), Error> {
    let (digest, constraints) = digest::Digest::of(circuit)?;
    match digest::upstream(name) {
        Some(pinned) if pinned == digest => {
            println!(
                "{name}: {constraints} constraints of its own, identical to upstream's ({digest})"
            );
            Ok(())
        }
        _ => Err(format!("{name}: digest {digest} is not upstream's").into()),
    }
}
