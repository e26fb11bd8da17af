//! The recording constraint system: runs a circuit once and keeps its A, B, C matrices,
//! dictionary-coded; optionally computes the witness in the same pass.

use bellpepper_core::{
    ConstraintSystem, Index, Landing, LinearCombination, Spreading, SynthesisError, Variable, Ways,
};
use ff::PrimeField;
use rayon::prelude::*;

use crate::error::Unallocated;
use crate::error::{Error, Fault, Limit, Side, VariableKind};
use crate::eval::is_dropped;
use crate::pool::LcPool;
use crate::precompiled::record::companion::{Companion, StructureOnly};
use crate::precompiled::record::dictionary::Dictionary;
use crate::precompiled::rows::matrix::{
    column, encoded, to_positions, Matrix, MatrixBuilder, INPUT_FLAG,
};
use crate::precompiled::witness::parts::{Part, Parts};
use crate::protocol::{root_without_names, CountsInputs};
use crate::shape::{BranchPoint, Shape};

use self::appending::spread_parts;

/// Room for `additional` more elements, reserved fallibly (doubling as `Vec` does).
#[inline]
fn room<T>(vector: &mut Vec<T>, additional: usize, what: &'static str) -> Result<(), Fault> {
    if vector.capacity() - vector.len() >= additional {
        return Ok(());
    }
    vector
        .try_reserve(additional)
        .map_err(|_| Fault::OutOfMemory {
            what,
            elements: additional as u64,
        })
}

/// A constraint system that records constraints into matrices, with a [`Companion`] that
/// sees the same allocations and constraints.
pub(crate) struct Recorder<Scalar: PrimeField, V = StructureOnly> {
    inputs: usize,
    aux: usize,
    matrices: [MatrixBuilder; 3],
    dictionary: Dictionary<Scalar>,
    lcs: LcPool<Scalar>,
    fault: Option<Fault>,
    companion: V,
    /// Where this recorder was branched from its system, if it is a branch.
    branched_at: Option<BranchPoint>,
    /// The parts spread from this system, where their aux variables landed: each branch
    /// appended here, or each part it ran after another (a branch's own branches are not
    /// kept: a witness generator's branches do not branch).
    parts: Vec<Part>,
    /// Where the parts run here after another began ([`ConstraintSystem::next_part`]), as
    /// aux counts, since a branch was last appended here or since this branch was taken.
    starts: Vec<usize>,
}

/// What a finished recorder hands over: counts, matrices, dictionary.
pub(crate) struct Recorded<Scalar> {
    pub(crate) inputs: usize,
    pub(crate) aux: usize,
    pub(crate) matrices: [Matrix; 3],
    pub(crate) dictionary: Vec<Scalar>,
    pub(crate) parts: Parts,
}

impl<Scalar: PrimeField, V: Companion<Scalar>> Recorder<Scalar, V> {
    fn rows(&self) -> usize {
        self.matrices[0].row_starts.len() - 1
    }

    fn shape(&self) -> Shape {
        Shape {
            inputs: self.inputs,
            aux: self.aux,
            constraints: self.rows(),
        }
    }

    /// The recording (or the first fault of the circuit), its columns converted to
    /// positions, and the companion.
    pub(crate) fn finish(self) -> (Result<Recorded<Scalar>, Error>, V) {
        let recorded = match self.fault {
            Some(fault) => Err(fault.into()),
            None => {
                let mut matrices = self.matrices;
                to_positions(&mut matrices, self.aux);
                Ok(Recorded {
                    inputs: self.inputs,
                    aux: self.aux,
                    matrices: matrices.map(Matrix::from),
                    dictionary: self.dictionary.values,
                    parts: Parts(self.parts),
                })
            }
        };
        (recorded, self.companion)
    }

    /// The memory the recorder or its companion could not have, if either ran out.
    pub(crate) fn memory_error(&self) -> Option<Error> {
        match &self.fault {
            Some(Fault::OutOfMemory { what, elements }) => Some(Error::OutOfMemory {
                what,
                elements: *elements,
            }),
            _ => self.companion.memory_error(),
        }
    }

    fn note(&mut self, fault: Fault) {
        self.fault.get_or_insert(fault);
    }

    /// Appends one constraint's A, B and C to the matrices, or notes the fault and takes
    /// the row back from every matrix. One call per constraint, kept out of line: `enforce`
    /// is instantiated for every gadget's closures, and a call per side (with a loop over
    /// the sides) cost a tenth of the appends' instructions (callgrind, real 2 KiB PoRep).
    #[inline(never)]
    fn record_row(&mut self, [a, b, c]: [&LinearCombination<Scalar>; 3]) {
        let row = self.rows();
        let appended = self
            .append(row, Side::A, a)
            .and_then(|()| self.append(row, Side::B, b))
            .and_then(|()| self.append(row, Side::C, c));
        if let Err(fault) = appended {
            self.note(fault);
            for matrix in &mut self.matrices {
                matrix.truncate_rows(row);
            }
        }
    }

    /// Appends the nonzero terms of `lc` to `side`'s matrix as its `row` (taken before A's
    /// row is appended, which counts rows).
    #[inline(always)]
    fn append(
        &mut self,
        row: usize,
        side: Side,
        lc: &LinearCombination<Scalar>,
    ) -> Result<(), Fault> {
        let (inputs, aux) = (self.inputs, self.aux);
        let matrix = &mut self.matrices[side as usize];
        let dictionary = &mut self.dictionary;
        let at = |kind| Position { row, side, kind };
        let terms = lc.input_terms().len() + lc.aux_terms().len();
        room(&mut matrix.columns, terms, "recorded terms")?;
        room(&mut matrix.coeff_ids, terms, "recorded terms")?;
        room(&mut matrix.row_starts, 1, "recorded rows")?;
        append_terms(
            matrix,
            dictionary,
            lc.input_terms(),
            inputs,
            at(VariableKind::Input),
        )?;
        append_terms(
            matrix,
            dictionary,
            lc.aux_terms(),
            aux,
            at(VariableKind::Aux),
        )?;
        let end = u32::try_from(matrix.columns.len())
            .map_err(|_| Fault::Limit(Limit::Nonzeros { side }))?;
        matrix.row_starts.push(end);
        Ok(())
    }
}

/// Where terms being appended come from, for the fault that names one.
#[derive(Clone, Copy)]
struct Position {
    row: usize,
    side: Side,
    kind: VariableKind,
}

/// Appends the nonzero `terms` of one kind (`allocated` of them exist) to `matrix`.
#[inline(always)]
fn append_terms<Scalar: PrimeField>(
    matrix: &mut MatrixBuilder,
    dictionary: &mut Dictionary<Scalar>,
    terms: &[(usize, Scalar)],
    allocated: usize,
    at: Position,
) -> Result<(), Fault> {
    let is_input = at.kind == VariableKind::Input;
    // An index below both the allocated count and the column limit is a column as it
    // stands, so one comparison per term checks both (this loop runs for every term of a
    // partition); `refused` says which one a term broke.
    let valid = allocated.min(INPUT_FLAG as usize);
    for (index, coeff) in terms {
        if is_dropped(coeff) {
            continue;
        }
        if *index >= valid {
            return Err(refused(*index, allocated, at));
        }
        matrix.columns.push(encoded(is_input, *index as u32));
        matrix
            .coeff_ids
            .push(dictionary.id(coeff).map_err(Fault::Limit)?);
    }
    Ok(())
}

/// Why a term at `index` of a kind with `allocated` variables cannot be recorded: the
/// variable does not exist, or its column is past the limit.
#[cold]
fn refused(index: usize, allocated: usize, at: Position) -> Fault {
    if index >= allocated {
        Fault::Unallocated(Unallocated {
            constraint: at.row,
            side: at.side,
            kind: at.kind,
            index,
            allocated,
        })
    } else {
        Fault::Limit(Limit::Column {
            kind: at.kind,
            index: index as u64,
        })
    }
}

impl<Scalar: PrimeField, V> CountsInputs for Recorder<Scalar, V> {
    fn input_count(&self) -> usize {
        self.inputs
    }
}

impl<Scalar: PrimeField, V: Companion<Scalar>> ConstraintSystem<Scalar> for Recorder<Scalar, V> {
    type Root = Self;

    fn new() -> Self {
        Recorder {
            inputs: 0,
            aux: 0,
            matrices: Default::default(),
            dictionary: Dictionary::new(),
            lcs: LcPool::new(1024),
            fault: None,
            companion: V::default(),
            branched_at: None,
            parts: Vec::new(),
            starts: Vec::new(),
        }
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        // Out of memory the recording cannot go on: the circuit stops here.
        if let Some(Fault::OutOfMemory { .. }) = self.fault {
            return Err(SynthesisError::IoError(
                std::io::ErrorKind::OutOfMemory.into(),
            ));
        }
        self.companion.alloc(f)?;
        self.aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.companion.alloc_input(f)?;
        self.inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.enforce_with_a_value(|| "", a, None, b, c)
    }

    /// Records the constraint as [`ConstraintSystem::enforce`] does; `a_value` only spares
    /// the companion the sum.
    fn enforce_with_a_value<A, AR, LA, LB, LC>(
        &mut self,
        _: A,
        a: LA,
        a_value: Option<Scalar>,
        b: LB,
        c: LC,
    ) where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let a = a(self.lcs.fresh());
        let b = b(self.lcs.fresh());
        let c = c(self.lcs.fresh());
        // Once a recording has failed it records nothing more (the first fault is its
        // error; pushing further rows could itself run out of memory).
        if self.fault.is_none() {
            self.record_row([&a, &b, &c]);
        }
        self.companion.enforce(&a, a_value, &b, &c);
        self.lcs.recycle(a);
        self.lcs.recycle(b);
        self.lcs.recycle(c);
    }

    root_without_names!();

    fn is_extensible() -> bool {
        true
    }

    /// Appends `other`'s rows with its own variables renumbered to where `extend` puts them
    /// in the assignment, after ours: a branch's own are those it allocated after where it
    /// was taken (the ones before are ours, under the same indices); a sub-circuit from
    /// `new()` owns all but its input 0 (the constant one, ours). Renumbering is done in 64
    /// bits and checked against the column limit, so no index ever wraps into another
    /// variable.
    fn extend(&mut self, other: &Self) {
        let at = other.branched_at.unwrap_or(BranchPoint::FROM_NEW);
        if other.branched_at.is_some() && !at.within(self.inputs, self.aux) {
            self.note(Fault::MisplacedBranch(at));
            return;
        }
        if let Some(fault) = &other.fault {
            self.note(fault.clone().shifted(self.shape(), at));
        }
        // A sub-circuit's input 0 stands for the constant one; a branch's inputs are ours.
        if other.branched_at.is_none() && other.inputs > 0 && self.inputs == 0 {
            self.note(Fault::ExtendWithoutOne);
        }
        // After a fault the recording is refused at the end anyway: only the counts and the
        // companion go on.
        if self.fault.is_none() {
            if let Err(fault) = self.append_remapped(other, at) {
                self.note(fault);
            }
        }
        let here = std::mem::take(&mut self.starts);
        if other.branched_at.is_some() && self.branched_at.is_none() && self.fault.is_none() {
            let parts = spread_parts(&here, self.aux, &other.starts, other.aux, at.aux);
            let last = self.parts.last().map_or(0, |part| part.at + part.len);
            // Parts that would not lie in order (starts noted by another spread than this
            // branch's) are a hint lost: the branch is then noted whole, as one part.
            let parts = match Parts(parts).validate_after(last, self.aux + other.aux - at.aux) {
                Ok(parts) => parts,
                Err(_) => spread_parts(&[], self.aux, &[], other.aux, at.aux),
            };
            match room(&mut self.parts, parts.len(), "recorded parts") {
                Ok(()) => self.parts.extend(parts),
                Err(fault) => self.note(fault),
            }
        }
        self.companion.extend(&other.companion);
        self.aux += other.aux - at.aux;
        self.inputs += other.inputs.saturating_sub(at.inputs);
    }

    fn spreading(&mut self) -> Option<&mut dyn Spreading<Self>> {
        Some(self)
    }
}

impl<Scalar: PrimeField, V: Companion<Scalar>> Spreading<Recorder<Scalar, V>>
    for Recorder<Scalar, V>
{
    fn ways(&self) -> Ways {
        Ways {
            parts_in_place: true,
            branches_in_place: false,
            small_parts: true,
        }
    }

    /// Branches as [`Self::branch`] describes them, their companions taken at once (a first
    /// member's assignment then shares one copy of its values where that saves copies).
    fn branches(&self, count: usize) -> Option<Vec<Self>> {
        let companions = self.companion.branches(count)?;
        self.branches_with(companions, count)
    }

    /// Notes where the part begins, so it is recorded as a part of its own: a recording
    /// places a circuit's parts alike whatever the number of threads it was made on.
    fn next_part(&mut self) {
        if let Err(fault) = room(&mut self.starts, 1, "recorded parts") {
            self.note(fault);
            return;
        }
        self.starts.push(self.aux);
    }

    /// A branch's own variables are renumbered after ours, as `extend` renumbers them.
    fn landing(&self, branch: &Self) -> Option<Landing> {
        Some(self.landing_at(branch.branched_at?))
    }
}

mod appending;
#[cfg(test)]
mod tests;
