//! The pipeline with a prover whose verdicts the test decides: what a proof that does not
//! verify does to a trusted recording, with and without a way to make the member again, and
//! what a member whose own proof does not verify returns. The field is pasta's, whose store
//! no other test of the library touches.

use std::collections::VecDeque;

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use pasta_curves::Fp;

use super::*;
use crate::groth16::{clear, set_cache_dir, stats, CacheStats};
use crate::prover::Proven;

/// `x · x = y`, `y` public; a member whose `y` is not `x²` has a witness its row rejects.
#[derive(Clone)]
struct ClaimedSquare {
    x: u64,
    y: u64,
}

impl Circuit<Fp> for ClaimedSquare {
    fn synthesize<CS: ConstraintSystem<Fp>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x = cs.alloc(|| "x", || Ok(Fp::from(self.x)))?;
        let y = cs.alloc_input(|| "y", || Ok(Fp::from(self.y)))?;
        cs.enforce(|| "x * x = y", |lc| lc + x, |lc| lc + x, |lc| lc + y);
        Ok(())
    }
}

fn claimed_squares(xs: &[u64]) -> Vec<ClaimedSquare> {
    xs.iter().map(|&x| ClaimedSquare { x, y: x * x }).collect()
}

/// A prover whose proof of a member is its `c` vector, and whose verdicts are the test's,
/// in the order proofs are verified (true once they run out).
struct Judged {
    verdicts: VecDeque<bool>,
}

impl MemberProver<Fp> for Judged {
    type Proof = Vec<Fp>;
    const KEEPS_FOR_FREE: bool = false;

    fn prove(
        &mut self,
        vectors: ProverVectors<Fp>,
        _: Fp,
        _: Fp,
        keep: bool,
    ) -> Result<Proven<Vec<Fp>, Fp>, Error> {
        Ok((vectors.c.clone(), keep.then_some(vectors)))
    }

    fn verifies(&mut self, _: &Vec<Fp>, _: &[Fp]) -> bool {
        self.verdicts.pop_front().unwrap_or(true)
    }

    fn fits(&self, _: &ProverVectors<Fp>) -> Result<(), Error> {
        Ok(())
    }
}

/// Proves `circuits` with the verdicts `verdicts`, making members again from `circuits`
/// when `remakes`.
fn prove(
    circuits: Vec<ClaimedSquare>,
    verdicts: &[bool],
    remakes: bool,
) -> Result<Vec<Vec<Fp>>, Error> {
    let kept = circuits.clone();
    let remake = |i: usize| Ok(kept[i].clone());
    let zeros = vec![Fp::zero(); circuits.len()];
    let verdicts = VecDeque::from(verdicts.to_vec());
    prove_batch(
        circuits,
        remakes.then_some(&remake as &Remake<'_, ClaimedSquare>),
        Randomness {
            r: &zeros,
            s: &zeros,
        },
        Some(&|_| Some([7; crate::precompiled::KEY_LEN])),
        move |_| {
            Ok(Judged {
                verdicts: verdicts.clone(),
            })
        },
        Holding {
            in_flight: 1,
            retain: false,
        },
    )
}

/// The proofs of `xs`, each the `c` its direct synthesis gives.
fn direct_proofs(xs: &[u64]) -> Vec<Vec<Fp>> {
    claimed_squares(xs)
        .into_iter()
        .map(|circuit| crate::synthesize::synthesize(circuit).unwrap().c)
        .collect()
}

fn grown(before: &CacheStats) -> (u64, u64, u64) {
    let now = stats::<Fp>();
    (
        now.trusted - before.trusted,
        now.rejected - before.rejected,
        now.redone_members - before.redone_members,
    )
}

/// One test, in order: the store is the process's.
#[test]
fn recordings_are_judged_by_the_proofs_they_make() {
    set_cache_dir(None);
    trusted_recordings_keep_being_verified();
    a_member_the_recording_fails_is_made_again_and_judged_by_its_own_proof();
}

fn trusted_recordings_keep_being_verified() {
    clear::<Fp>();
    let xs = [3, 4];
    // Recorded and trusted.
    let before = stats::<Fp>();
    assert_eq!(
        prove(claimed_squares(&xs), &[], true).unwrap(),
        direct_proofs(&xs)
    );
    assert_eq!(grown(&before), (1, 0, 0));

    // A proof from the trusted recording that does not verify: the member is made again
    // and proven directly, the recording dropped.
    let before = stats::<Fp>();
    assert_eq!(
        prove(claimed_squares(&xs), &[false], true).unwrap(),
        direct_proofs(&xs)
    );
    assert_eq!(grown(&before), (0, 1, 1));
    assert_eq!(stats::<Fp>().recorded - before.recorded, 0);

    // Without a way to make it again: the batch fails, the recording is dropped.
    prove(claimed_squares(&xs), &[], true).unwrap();
    let before = stats::<Fp>();
    let err = prove(claimed_squares(&xs), &[false], false).expect_err("a failed proof");
    assert!(matches!(err, Error::Member { .. }), "{err}");
    assert!(err.chain().contains("does not verify"), "{}", err.chain());
    assert_eq!(grown(&before), (0, 1, 0));

    // Made again, its own proof does not verify either: the member's failure, not the
    // recording's, which stays.
    prove(claimed_squares(&xs), &[], true).unwrap();
    let before = stats::<Fp>();
    let err = prove(claimed_squares(&xs), &[false, false], true).expect_err("an invalid proof");
    assert!(err.chain().contains("its own synthesis"), "{}", err.chain());
    assert_eq!(grown(&before), (0, 0, 0));
    assert_eq!(
        prove(claimed_squares(&xs), &[], true).unwrap(),
        direct_proofs(&xs),
        "the recording serves on"
    );
    assert_eq!(stats::<Fp>().recorded - before.recorded, 0);
}

fn a_member_the_recording_fails_is_made_again_and_judged_by_its_own_proof() {
    clear::<Fp>();
    prove(claimed_squares(&[2]), &[], true).unwrap();
    // A witness the recorded row rejects: made again directly; its own proof does not
    // verify (as a real prover's would not), so the member fails and the recording stays.
    let wrong = vec![ClaimedSquare { x: 5, y: 24 }];
    let before = stats::<Fp>();
    let err = prove(wrong.clone(), &[false], true).expect_err("a rejected witness");
    assert!(err.chain().contains("row 0"), "{}", err.chain());
    assert_eq!(grown(&before), (0, 0, 0));
    // Its own proof verifying instead says the recording was wrong: dropped.
    let before = stats::<Fp>();
    let proofs = prove(wrong, &[true], true).unwrap();
    assert_eq!(
        proofs[0],
        crate::synthesize::synthesize(ClaimedSquare { x: 5, y: 24 })
            .unwrap()
            .c
    );
    assert_eq!(grown(&before), (0, 1, 1));
}
