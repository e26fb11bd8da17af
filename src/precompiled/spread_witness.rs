//! The witness generator of a recording that knows where its circuit's parts put their
//! values ([`Parts`]): every part [`crate::branches::spread`] runs in a branch gets the range
//! of the system's own aux vector that the part fills in the sequential run, so the parts'
//! witnesses are written at once, in place, and nothing is copied after (a branch that wrote
//! into a vector of its own and was copied in cost more than the part saved: the native
//! witness paths take a few nanoseconds per constraint).
//!
//! What the recorded parts do not describe runs in the system, one after another, as
//! [`Witness`] does: a spread where the recording has none, a branch of a branch, systems
//! from `new()` appended with `extend`. What contradicts them (a part that allocates more or
//! fewer aux variables than its range, a branch handed back out of order or to another
//! system) is [`Error::PartMisfit`], never a value out of place: the ranges are enforced by
//! [`Values`].

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use ff::PrimeField;

use super::parts::Part;
use super::windows::{Refused, Values};
use super::witness::Witness;
use crate::protocol::{lay_out_for_proving, root_without_names, CountsInputs};
use crate::Error;

/// Whether a witness is generated one part after another even where the recording places
/// the parts ([`crate::tuning::set_spread_witness`]).
static SERIAL: AtomicBool = AtomicBool::new(false);

pub(crate) fn set_enabled(on: bool) {
    SERIAL.store(!on, Ordering::Relaxed);
}

/// Whether witnesses are generated in the ranges the recording places the parts in.
pub(crate) fn enabled() -> bool {
    !SERIAL.load(Ordering::Relaxed)
}

/// A witness generator writing its aux values into one range of a shared vector.
pub(crate) struct SpreadWitness<'r, Scalar: PrimeField> {
    inputs: Vec<Scalar>,
    aux: Values<Scalar>,
    constraints: usize,
    /// The recorded parts (the root's; none for a branch or a system from `new()`).
    parts: &'r [Part],
    /// The first of `parts` neither handed out nor passed.
    next_part: Cell<usize>,
    /// A branch's inputs before its own: those of its system when taken.
    inputs_at_branch: usize,
    /// The first thing that did not fit.
    fault: Option<Fault>,
    /// Set when a branch was asked for its aux values, which it cannot give in order.
    misread: Cell<bool>,
    /// Where values a range refused go, so a native path runs on to the error.
    scratch: Vec<Scalar>,
}

impl<'r, Scalar: PrimeField> SpreadWitness<'r, Scalar> {
    fn with(inputs: Vec<Scalar>, aux: Values<Scalar>, parts: &'r [Part]) -> Self {
        SpreadWitness {
            inputs_at_branch: inputs.len(),
            inputs,
            aux,
            constraints: 0,
            parts,
            next_part: Cell::new(0),
            fault: None,
            misread: Cell::new(false),
            scratch: Vec::new(),
        }
    }

    /// Generates the witness of `circuit` into `buffers` (emptied, with room for the
    /// recorded counts), handing the recorded `parts` their ranges.
    pub(crate) fn generate<C: Circuit<Scalar>>(
        buffers: Witness<Scalar>,
        parts: &'r [Part],
        circuit: C,
    ) -> Result<Witness<Scalar>, Error> {
        let mut cs = Self::with(buffers.inputs, Values::root(buffers.aux), parts);
        let outcome = lay_out_for_proving(&mut cs, circuit);
        // What did not fit explains the circuit's error, if it has one.
        let witness = cs.finish()?;
        outcome?;
        Ok(witness)
    }

    fn finish(self) -> Result<Witness<Scalar>, Error> {
        if let Some(fault) = self.fault {
            return Err(fault.into());
        }
        if self.misread.get() {
            return Err(Fault::Misfit(MISREAD).into());
        }
        let aux = self
            .aux
            .into_vec()
            .map_err(|_| Error::from(Fault::Misfit("a branch outlived the synthesis")))?;
        Ok(Witness {
            inputs: self.inputs,
            aux,
            constraints: self.constraints,
        })
    }

    /// Notes why `n` values were refused and returns the error the circuit is told.
    #[cold]
    fn refused(&mut self, refused: Refused, n: usize) -> SynthesisError {
        let fault = *self.fault.get_or_insert(Fault::of(refused, n));
        SynthesisError::IoError(std::io::Error::other(Error::from(fault).to_string()))
    }
}

const MISREAD: &str = "a branch was asked for its aux values";

/// What did not fit, kept until the end (`extend` and the slices cannot return errors).
#[derive(Clone, Copy, Debug)]
enum Fault {
    OutOfMemory(usize),
    Misfit(&'static str),
}

impl Fault {
    fn of(refused: Refused, n: usize) -> Fault {
        match refused {
            Refused::OutOfMemory => Fault::OutOfMemory(n),
            Refused::Full => Fault::Misfit("a part allocated more aux variables than its range"),
            Refused::RangeOut => {
                Fault::Misfit("the system reached a part's range while that part was running")
            }
            Refused::NotNext => {
                Fault::Misfit("a branch was appended out of order, unfinished, or elsewhere")
            }
        }
    }
}

impl From<Fault> for Error {
    fn from(fault: Fault) -> Error {
        match fault {
            Fault::OutOfMemory(n) => Error::OutOfMemory {
                what: "aux values",
                elements: n as u64,
            },
            Fault::Misfit(problem) => Error::PartMisfit { problem },
        }
    }
}

impl<Scalar: PrimeField> CountsInputs for SpreadWitness<'_, Scalar> {
    fn input_count(&self) -> usize {
        self.inputs.len()
    }
}

fn append_zeros<Scalar: PrimeField>(values: &mut Vec<Scalar>, n: usize) -> &mut [Scalar] {
    let start = values.len();
    values.resize(start + n, Scalar::ZERO);
    &mut values[start..]
}

impl<'r, Scalar: PrimeField> ConstraintSystem<Scalar> for SpreadWitness<'r, Scalar> {
    type Root = Self;

    /// A system of its own (a sub-circuit's), appended by copying.
    fn new() -> Self {
        Self::with(Vec::new(), Values::root(Vec::new()), &[])
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let value = f()?;
        if let Err(refused) = self.aux.push(value) {
            return Err(self.refused(refused, 1));
        }
        // Where the value lies in the system's vector: its index in the sequential run.
        Ok(Variable::new_unchecked(Index::Aux(self.aux.position() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        crate::vectors::room_for_one(&mut self.inputs, "input values")
            .map_err(|_| SynthesisError::IoError(std::io::ErrorKind::OutOfMemory.into()))?;
        self.inputs.push(f()?);
        Ok(Variable::new_unchecked(Index::Input(self.inputs.len() - 1)))
    }

    #[inline]
    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.constraints += 1;
    }

    root_without_names!();

    fn is_extensible() -> bool {
        true
    }

    /// The next recorded part's range, when the system stands where that part was taken and
    /// the range is free; otherwise none, and the parts run here.
    fn branch(&self) -> Option<Self> {
        let here = self.aux.position();
        let mut next = self.next_part.get();
        // Parts whose ranges this system wrote itself (their spread ran here).
        while self.parts.get(next).is_some_and(|part| part.at < here) {
            next += 1;
        }
        self.next_part.set(next);
        let part = self.parts.get(next).filter(|part| part.point == here)?;
        let range = self.aux.hand_out(part.at, part.len)?;
        self.next_part.set(next + 1);
        Some(Self::with(self.inputs.clone(), range, &[]))
    }

    fn extend(&mut self, other: &Self) {
        self.constraints += other.constraints;
        if let Some(fault) = other.fault {
            self.fault.get_or_insert(fault);
        }
        if other.misread.get() {
            self.fault.get_or_insert(Fault::Misfit(MISREAD));
        }
        if other.aux.is_branch() {
            // Refused unless it is this system's next range out, full.
            if let Err(refused) = self.aux.take_back(&other.aux) {
                self.refused(refused, 0);
                return;
            }
            self.inputs.extend_from_slice(
                other
                    .inputs
                    .get(other.inputs_at_branch..)
                    .unwrap_or_default(),
            );
        } else {
            // A sub-circuit from `new()`: its input 0 stands for the constant one, ours.
            self.inputs
                .extend_from_slice(other.inputs.get(1..).unwrap_or_default());
            self.extend_aux(other.aux.written());
        }
    }

    fn is_witness_generator(&self) -> bool {
        true
    }

    fn extend_inputs(&mut self, new_inputs: &[Scalar]) {
        self.inputs.extend_from_slice(new_inputs);
    }

    fn extend_aux(&mut self, new_aux: &[Scalar]) {
        self.allocate_empty_aux(new_aux.len())
            .copy_from_slice(new_aux);
    }

    fn allocate_empty(&mut self, aux_n: usize, inputs_n: usize) -> (&mut [Scalar], &mut [Scalar]) {
        let aux = match self.aux.fill(aux_n, Scalar::ZERO) {
            Ok(slots) => slots,
            Err(refused) => {
                self.fault.get_or_insert(Fault::of(refused, aux_n));
                self.scratch.clear();
                self.scratch.resize(aux_n, Scalar::ZERO);
                &mut self.scratch[..]
            }
        };
        (aux, append_zeros(&mut self.inputs, inputs_n))
    }

    fn allocate_empty_inputs(&mut self, n: usize) -> &mut [Scalar] {
        append_zeros(&mut self.inputs, n)
    }

    fn allocate_empty_aux(&mut self, n: usize) -> &mut [Scalar] {
        self.allocate_empty(n, 0).0
    }

    fn inputs_slice(&self) -> &[Scalar] {
        &self.inputs
    }

    /// A branch's values do not follow the system's in one slice: asking a branch is an
    /// error at the end, and it is given its own values meanwhile.
    fn aux_slice(&self) -> &[Scalar] {
        if self.aux.is_branch() {
            self.misread.set(true);
        }
        self.aux.written()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::branches::{spread, Spread};
    use crate::precompiled::Recording;
    use blstrs::Scalar as Fr;

    /// What a circuit does with the witness generator's branches.
    #[derive(Clone, Copy, PartialEq)]
    enum Use {
        /// Spreads its parts.
        Spread,
        /// Takes a branch, drops it unused, and runs the parts here.
        DropBranch,
        /// Takes a branch, never drops it, and runs the parts here.
        LeakBranch,
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
                    drop(cs.get_root().branch());
                    vec![0, 1, 2]
                }
                Use::LeakBranch => {
                    std::mem::forget(cs.get_root().branch());
                    vec![0, 1, 2]
                }
            };
            for i in parts {
                part(cs.get_root(), i)?;
            }
            Ok(())
        }
    }

    fn on_two_threads<R: Send>(work: impl FnOnce() -> R + Send) -> R {
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap()
            .install(work)
    }

    #[test]
    fn branches_dropped_unused_are_written_over_and_misused_ones_are_errors() {
        let recording = on_two_threads(|| Recording::record(ThreeParts(Use::Spread)).unwrap());
        assert_eq!(recording.parts.0.len(), 2, "two parts in branches");
        let serial = recording.witness(ThreeParts(Use::Spread)).unwrap();
        assert_eq!(serial.aux().len(), 10);
        let spread = on_two_threads(|| recording.witness(ThreeParts(Use::Spread)).unwrap());
        assert_eq!(spread, serial);
        let dropped = on_two_threads(|| recording.witness(ThreeParts(Use::DropBranch)).unwrap());
        assert_eq!(dropped, serial, "a dropped branch's range written here");
        for misuse in [Use::LeakBranch, Use::ReadValues] {
            let refused = on_two_threads(|| recording.witness(ThreeParts(misuse)));
            assert!(
                matches!(refused, Err(Error::PartMisfit { .. })),
                "{refused:?}"
            );
        }
    }
}
