use super::*;
use crate::branches::{on_threads, spread, Spread};
use crate::precompiled::Recording;
use blstrs::Scalar as Fr;
use ff::Field;

/// What a circuit does with the witness generator's branches.
#[derive(Clone, Copy, PartialEq)]
enum Use {
    /// Spreads its parts.
    Spread,
    /// Takes a branch, drops it unused, and runs the parts here.
    DropBranch,
    /// Takes a branch, never drops it, and runs the parts here.
    LeakBranch,
    /// Runs part 0 here, parts 1 and 2 in branches, and appends part 2 before part 1.
    AppendReversed,
    /// Runs the parts here in the order `AppendReversed` appends them.
    InThatOrder,
    /// Spreads its parts, which read their system's aux values.
    ReadValues,
}

/// One shared variable, then three parts of 2, 3 and 4 aux variables and constraints.
struct ThreeParts(Use);

impl Circuit<Fr> for ThreeParts {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x = cs.alloc(|| "x", || Ok(Fr::from(3)))?;
        let part = |cs: &mut CS::Root, i: usize| {
            if self.0 == Use::ReadValues {
                let _ = cs.aux_slice();
            }
            for k in 0..i + 2 {
                let y = cs.alloc(|| "y", || Ok(Fr::from((10 * i + k) as u64)))?;
                cs.enforce(|| "", |lc| lc + x, |lc| lc + y, |lc| lc + y + y + y);
            }
            Ok(())
        };
        let parts = match self.0 {
            Use::Spread | Use::ReadValues => {
                match spread(cs, vec![0, 1, 2], |cs, _, i| part(cs, i))? {
                    Spread::Done => return Ok(()),
                    Spread::Here(parts) => parts,
                }
            }
            Use::DropBranch => {
                drop(cs.spreading().and_then(|spreading| spreading.branches(1)));
                vec![0, 1, 2]
            }
            Use::LeakBranch => {
                std::mem::forget(cs.spreading().and_then(|spreading| spreading.branches(1)));
                vec![0, 1, 2]
            }
            Use::AppendReversed => {
                let Some([mut one, mut two]) = cs
                    .spreading()
                    .and_then(|spreading| spreading.branches(2))
                    .and_then(|branches| <[_; 2]>::try_from(branches).ok())
                else {
                    panic!("a witness generator from a recording with parts branches");
                };
                let root = cs.get_root();
                part(root, 0)?;
                part(&mut one, 1)?;
                part(&mut two, 2)?;
                root.extend(&two);
                root.extend(&one);
                vec![]
            }
            Use::InThatOrder => vec![0, 2, 1],
        };
        for i in parts {
            part(cs.get_root(), i)?;
        }
        Ok(())
    }
}

/// `parts` parts of `per_part` values each (0, 1 and others) and as many constraints;
/// a witness generator writes most of them through `allocate_empty`, in runs of
/// irregular lengths, after the call that handed out their slots.
struct ManyValues {
    parts: usize,
    per_part: usize,
}

impl Circuit<Fr> for ManyValues {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let five = Fr::from(5);
        let x = cs.alloc(|| "x", || Ok(five))?;
        let value = |i: usize, k: usize| match (i + k * 7) % 5 {
            0 => Fr::ZERO,
            1 | 3 => Fr::ONE,
            j => Fr::from((k + j) as u64) + Fr::ONE,
        };
        let part = |cs: &mut CS::Root, i: usize| {
            let (mut k, mut run) = (0, 1);
            while k < self.per_part {
                let n = run.min(self.per_part - k);
                if cs.is_witness_generator() && run % 2 == 0 {
                    let (slots, _) = cs.allocate_empty(n, 0);
                    for (j, slot) in slots.iter_mut().enumerate() {
                        *slot = value(i, k + j);
                    }
                    for _ in 0..n {
                        // A witness generator calls none of these closures.
                        cs.enforce(|| "", |lc| lc, |lc| lc, |lc| lc);
                    }
                } else {
                    for j in 0..n {
                        let y = cs.alloc(|| "y", || Ok(value(i, k + j)))?;
                        cs.enforce(|| "", |lc| lc + x, |lc| lc + y, |lc| lc + (five, y));
                    }
                }
                k += n;
                run = run * 3 % 701 + 1;
            }
            Ok(())
        };
        let parts = match spread(cs, (0..self.parts).collect(), |cs, _, i| part(cs, i))? {
            Spread::Done => return Ok(()),
            Spread::Here(parts) => parts,
        };
        for i in parts {
            part(cs.get_root(), i)?;
        }
        Ok(())
    }
}

#[test]
fn values_are_classified_as_written_on_one_thread_or_several() {
    let circuit = || ManyValues {
        parts: 3,
        per_part: 5000,
    };
    let recording = on_threads(2, || Recording::record(circuit()).unwrap());
    assert_eq!(recording.parts.0.len(), 2, "two parts in branches");
    for threads in [1, 2, 3] {
        let witness = on_threads(threads, || recording.witness(circuit()).unwrap());
        let classified = witness.kinds.classified().expect("not abandoned");
        let mut whole = crate::precompiled::witness::kinds::ValueKinds::default();
        whole.classify(&[], &witness.aux).unwrap();
        // What waits for the next call: less than a chunk, and the last run (up to 701).
        assert!(
            classified.len() + 1024 + 701 > witness.aux.len(),
            "{threads} threads: {} of {} classified",
            classified.len(),
            witness.aux.len()
        );
        assert_eq!(
            classified,
            &whole.map()[..classified.len()],
            "{threads} threads"
        );
        // Evaluated with its kinds, as with none: the same vectors.
        let unclassified = Witness::unclassified(
            witness.inputs.clone(),
            witness.aux.clone(),
            witness.constraints,
        );
        let vectors = recording.evaluate(witness).unwrap();
        assert_eq!(vectors, recording.evaluate(unclassified).unwrap());
    }
}

#[test]
fn branches_misused_still_give_the_sequential_witness_or_an_error() {
    let recording = on_threads(2, || Recording::record(ThreeParts(Use::Spread)).unwrap());
    assert_eq!(recording.parts.0.len(), 2, "two parts in branches");
    let sequential = |circuit| on_threads(1, || recording.witness(circuit).unwrap());
    let serial = sequential(ThreeParts(Use::Spread));
    assert_eq!(serial.aux().len(), 10);
    let witness = |circuit| on_threads(2, || recording.witness(circuit));
    assert_eq!(witness(ThreeParts(Use::Spread)).unwrap(), serial);
    assert_eq!(witness(ThreeParts(Use::DropBranch)).unwrap(), serial);
    assert_eq!(witness(ThreeParts(Use::LeakBranch)).unwrap(), serial);
    let reordered = sequential(ThreeParts(Use::InThatOrder));
    assert_ne!(reordered, serial);
    let detour = witness(ThreeParts(Use::AppendReversed)).unwrap();
    assert_eq!(detour, reordered);
    // Its values were copied out of order: evaluation classifies them all.
    assert_eq!(detour.kinds.classified(), None);
    let refused = witness(ThreeParts(Use::ReadValues));
    assert!(
        matches!(refused, Err(Error::ScatteredAux(_))),
        "{refused:?}"
    );
}
