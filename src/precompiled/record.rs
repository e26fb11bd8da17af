//! The recording constraint system: runs a circuit once and keeps its A, B, C matrices,
//! dictionary-coded; optionally computes the witness in the same pass.

use bellpepper_core::{
    ConstraintSystem, Index, Landing, LinearCombination, SynthesisError, Variable,
};
use ff::PrimeField;
use rayon::prelude::*;

use super::companion::{Companion, StructureOnly};
use super::dictionary::Dictionary;
use super::matrix::{column, encoded, to_positions, Matrix, MatrixBuilder, INPUT_FLAG};
use super::parts::{Part, Parts};
use crate::branches::{parallel_appends, BranchPoint};
use crate::error::Unallocated;
use crate::error::{Error, Limit, Side, VariableKind};
use crate::eval::is_dropped;
use crate::pool::LcPool;
use crate::protocol::{root_without_names, CountsInputs};
use crate::shape::Shape;

/// Why a recording failed; kept until the recording is finished, since `enforce` and
/// `extend` cannot return errors.
#[derive(Clone, Debug)]
enum Fault {
    Unallocated(Unallocated),
    Limit(Limit),
    ExtendWithoutOne,
    MisplacedBranch(BranchPoint),
    OutOfMemory { what: &'static str, elements: u64 },
}

impl From<Fault> for Error {
    fn from(fault: Fault) -> Error {
        match fault {
            Fault::Unallocated(fault) => fault.into(),
            Fault::Limit(limit) => Error::Limit(limit),
            Fault::ExtendWithoutOne => Error::ExtendWithoutOne,
            Fault::MisplacedBranch(at) => at.into(),
            Fault::OutOfMemory { what, elements } => Error::OutOfMemory { what, elements },
        }
    }
}

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
pub(super) struct Recorder<Scalar: PrimeField, V = StructureOnly> {
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

    /// A branch: no rows, the counts so far (its own variables are numbered after them, as
    /// here), a dictionary and pool of its own, and the companion's branch.
    fn branch(&self) -> Option<Self> {
        self.branches(1)?.pop()
    }

    /// Branches as [`Self::branch`] describes them, their companions taken at once (a first
    /// member's assignment then shares one copy of its values where that saves copies).
    fn branches(&self, count: usize) -> Option<Vec<Self>> {
        let companions = self.companion.branches(count)?;
        self.branches_with(companions, count)
    }

    /// It keeps no names, and a part recorded here numbers its variables where `extend`
    /// would renumber them.
    fn parts_in_place(&self) -> bool {
        true
    }

    /// Its branches copy no values of their own (a first member's companion lends them its
    /// own for small parts), and the places it notes let every witness from the recording
    /// spread the parts.
    fn spreads_small_parts(&self) -> bool {
        true
    }

    /// Branches as [`Self::branches`] has them, the companion's for small parts.
    fn lend_branches(&mut self, count: usize) -> Option<Vec<Self>> {
        let companions = self.companion.lend_branches(count)?;
        self.branches_with(companions, count)
    }

    /// The companion takes back what it lent.
    fn branches_done(&mut self) {
        self.companion.branches_done();
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
            let fault = match fault {
                Fault::Unallocated(f) => Fault::Unallocated(f.shifted(self.shape(), at)),
                other => other.clone(),
            };
            self.note(fault);
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
}

/// The parts a spread ran, as a branch per part taken at `point` would have placed them:
/// those this system ran after another since `here`'s first start (each ending where the next
/// begins, the last at `end`, where the branch lands), then the branch's, which begin at
/// `point` and at each of `theirs` in its numbering, the last ending at `branch_end`. With no
/// starts on either side, the branch whole.
fn spread_parts(
    here: &[usize],
    end: usize,
    theirs: &[usize],
    branch_end: usize,
    point: usize,
) -> Vec<Part> {
    // Consecutive parts as (first aux variable, count): each ends where the next begins.
    fn pieces(
        starts: impl Iterator<Item = usize> + Clone,
        last_end: usize,
    ) -> impl Iterator<Item = (usize, usize)> {
        let ends = starts.clone().skip(1).chain([last_end]);
        starts
            .zip(ends)
            .map(|(start, end)| (start, end.saturating_sub(start)))
    }
    let in_place = pieces(here.iter().copied(), end);
    let branch = pieces(
        std::iter::once(point).chain(theirs.iter().copied()),
        branch_end,
    )
    .map(|(start, len)| (end + start.saturating_sub(point), len));
    in_place
        .chain(branch)
        .map(|(at, len)| Part { point, at, len })
        .collect()
}

impl<Scalar: PrimeField, V: Companion<Scalar>> Recorder<Scalar, V> {
    /// Branches of this recorder, one per companion taken for them.
    fn branches_with(&self, companions: Vec<V>, count: usize) -> Option<Vec<Self>> {
        let branches = companions
            .into_iter()
            .map(|companion| Recorder {
                inputs: self.inputs,
                aux: self.aux,
                matrices: Default::default(),
                dictionary: Dictionary::new(),
                lcs: self.lcs.like(),
                fault: None,
                companion,
                branched_at: Some(BranchPoint {
                    inputs: self.inputs,
                    aux: self.aux,
                }),
                parts: Vec::new(),
                starts: Vec::new(),
            })
            .collect::<Vec<_>>();
        // A companion handing back another number than asked: no branches.
        (branches.len() == count).then_some(branches)
    }

    /// Where the own variables of a branch taken at `at` (or of a sub-circuit from `new()`)
    /// land when appended now: after ours, its input 0 (the constant one) being ours.
    fn landing_at(&self, at: BranchPoint) -> Landing {
        Landing {
            inputs_from: at.inputs,
            inputs_to: self.inputs.max(1),
            aux_from: at.aux,
            aux_to: self.aux,
        }
    }

    fn append_remapped(&mut self, other: &Self, at: BranchPoint) -> Result<(), Fault> {
        let renumbering = Renumbering::from(self.landing_at(at));
        let mut ids = Vec::with_capacity(other.dictionary.values.len());
        for value in &other.dictionary.values {
            ids.push(self.dictionary.id(value).map_err(Fault::Limit)?);
        }
        for (side, (mine, theirs)) in [Side::A, Side::B, Side::C]
            .into_iter()
            .zip(self.matrices.iter().zip(&other.matrices))
        {
            if mine.columns.len() as u64 + theirs.columns.len() as u64 > u64::from(u32::MAX) {
                return Err(Fault::Limit(Limit::Nonzeros { side }));
            }
        }
        // Room for all of it, fallibly, and the columns checked before anything is
        // appended: a refused extension leaves the matrices as they were.
        for (mine, theirs) in self.matrices.iter_mut().zip(&other.matrices) {
            room(&mut mine.columns, theirs.columns.len(), "recorded terms")?;
            room(
                &mut mine.coeff_ids,
                theirs.coeff_ids.len(),
                "recorded terms",
            )?;
            room(
                &mut mine.row_starts,
                theirs.row_starts.len(),
                "recorded rows",
            )?;
        }
        // Every column `other` recorded names a variable it had allocated, so where all its
        // own variables land within the column limit no column can fail; otherwise the
        // first column that lands beyond it (in the order the matrices are appended) is
        // the error, and one past the limit that no row names is none.
        if !renumbering.fits(other.inputs, other.aux) {
            for theirs in &other.matrices {
                if let Some(fault) = theirs
                    .columns
                    .iter()
                    .find_map(|&col| renumbering.column(col).err())
                {
                    return Err(fault);
                }
            }
        }
        // Each matrix's copies split over the pool's threads where appends are parallel,
        // as a branch's vectors are: each thread faults in its share of the fresh pages,
        // where a matrix per thread left the largest on one.
        let parallel = parallel_appends();
        let copy = |(mine, theirs): (&mut MatrixBuilder, &MatrixBuilder)| {
            let base = mine.columns.len() as u32;
            let columns = |&col: &u32| renumbering.within_limit(col);
            append_mapped(&mut mine.columns, &theirs.columns, columns, parallel);
            let ids = |&id: &u16| ids[id as usize];
            append_mapped(&mut mine.coeff_ids, &theirs.coeff_ids, ids, parallel);
            let starts = |&start: &u32| base + start;
            append_mapped(
                &mut mine.row_starts,
                &theirs.row_starts[1..],
                starts,
                parallel,
            );
        };
        if parallel {
            let pairs = self.matrices[..].par_iter_mut().zip(&other.matrices[..]);
            pairs.for_each(copy);
        } else {
            self.matrices.iter_mut().zip(&other.matrices).for_each(copy);
        }
        Ok(())
    }
}

/// Appends `theirs`, each mapped, to `mine` (room for it reserved): on the pool's threads
/// where `parallel` (rayon's `par_extend` of a slice writes in place), else in order.
fn append_mapped<T: Sync, U: Send>(
    mine: &mut Vec<U>,
    theirs: &[T],
    map: impl Fn(&T) -> U + Sync + Send,
    parallel: bool,
) {
    if parallel {
        mine.par_extend(theirs.par_iter().map(map));
    } else {
        mine.extend(theirs.iter().map(map));
    }
}

/// Where a branch's own variables land when it is appended: each kind's first own index in
/// the branch (`from`) and here (`to`). Variables before `from` are the system's, under the
/// same index. Renumbering is done in 64 bits, so no index wraps into another variable.
#[derive(Clone, Copy)]
struct Renumbering {
    aux_from: u64,
    aux_to: u64,
    input_from: u64,
    input_to: u64,
}

impl From<Landing> for Renumbering {
    fn from(landing: Landing) -> Self {
        Renumbering {
            aux_from: landing.aux_from as u64,
            aux_to: landing.aux_to as u64,
            input_from: landing.inputs_from as u64,
            input_to: landing.inputs_to as u64,
        }
    }
}

impl Renumbering {
    /// The variable `col` names, renumbered: its kind and index here.
    fn target(self, col: u32) -> (VariableKind, u64) {
        let shift = |index: u64, from: u64, to: u64| {
            if index < from {
                index
            } else {
                index - from + to
            }
        };
        if col & INPUT_FLAG == 0 {
            let index = shift(u64::from(col), self.aux_from, self.aux_to);
            (VariableKind::Aux, index)
        } else {
            let index = u64::from(col & !INPUT_FLAG);
            let index = shift(index, self.input_from, self.input_to);
            (VariableKind::Input, index)
        }
    }

    /// `col` renumbered, or the column limit's error where its variable lands beyond it.
    fn column(self, col: u32) -> Result<u32, Fault> {
        let (kind, index) = self.target(col);
        column(kind == VariableKind::Input, index)
            .ok_or(Fault::Limit(Limit::Column { kind, index }))
    }

    /// Whether every own variable of a branch that ends at `inputs` inputs and `aux` aux
    /// variables lands within the column limit.
    fn fits(self, inputs: usize, aux: usize) -> bool {
        let lands = |count: usize, from: u64, to: u64, is_input: bool| {
            let count = count as u64;
            count <= from || column(is_input, count - 1 - from + to).is_some()
        };
        lands(aux, self.aux_from, self.aux_to, false)
            && lands(inputs, self.input_from, self.input_to, true)
    }

    /// `col` renumbered, for a column known to land within the limit ([`Self::fits`], or
    /// checked one by one).
    fn within_limit(self, col: u32) -> u32 {
        let (kind, index) = self.target(col);
        debug_assert!(index < u64::from(INPUT_FLAG));
        encoded(kind == VariableKind::Input, index as u32)
    }
}

#[cfg(test)]
mod tests {
    use bellpepper_core::{ConstraintSystem, Index, Variable};
    use blstrs::Scalar as Fr;
    use ff::Field;

    use super::{spread_parts, Part, Recorder};
    use crate::error::{Error, Limit, Side, VariableKind};

    #[test]
    fn parts_run_after_another_are_placed_as_branches_of_their_own() {
        let part = |point, at, len| Part { point, at, len };
        // Spread at 10: the system ran parts from 14 and 17 after its first (ending at 20);
        // the branch, landing at 20, ran parts from 10 and, in its numbering, 12, up to 15.
        assert_eq!(
            spread_parts(&[14, 17], 20, &[12], 15, 10),
            [
                part(10, 14, 3),
                part(10, 17, 3),
                part(10, 20, 2),
                part(10, 22, 3)
            ]
        );
        assert_eq!(spread_parts(&[], 20, &[], 15, 10), [part(10, 20, 5)]);
    }

    fn with_one() -> Recorder<Fr> {
        let mut recorder = <Recorder<Fr> as ConstraintSystem<Fr>>::new();
        recorder.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
        recorder
    }

    /// A system holding x, and a branch of it with its own y and the row x = y.
    fn system_and_branch() -> (Recorder<Fr>, Recorder<Fr>) {
        let mut system = with_one();
        let x = system.alloc(|| "x", || Ok(Fr::ONE)).unwrap();
        let mut branch = system.branch().expect("a recorder branches");
        let y = branch.alloc(|| "y", || Ok(Fr::ONE)).unwrap();
        branch.enforce(
            || "x = y",
            |lc| lc + x,
            |lc| lc + Recorder::<Fr>::one(),
            |lc| lc + y,
        );
        (system, branch)
    }

    /// A branch's own variables land after the system's, the shared ones stay; a branch of
    /// a larger system is refused.
    #[test]
    fn a_branch_lands_where_it_was_taken_and_nowhere_else() {
        let (mut big, branch) = system_and_branch();
        // The system grows meanwhile (as the first part grows it): y lands after z.
        big.alloc(|| "z", || Ok(Fr::ONE)).unwrap();
        big.extend(&branch);
        assert_eq!((big.inputs, big.aux), (1, 3));
        let columns = |side: usize| big.matrices[side].columns.clone();
        assert_eq!(columns(0), vec![0], "x stays aux 0");
        assert_eq!(columns(2), vec![2], "y lands at aux 2, after z");

        let mut small = with_one();
        small.extend(&branch);
        let (recorded, _) = small.finish();
        assert!(matches!(
            recorded,
            Err(Error::MisplacedBranch { inputs: 1, aux: 1 })
        ));
    }

    /// A term naming a variable past the column limit, or one never allocated, stops the
    /// recording with its own error, naming the constraint, side and variable.
    #[test]
    fn a_term_past_the_column_limit_or_the_allocated_is_refused_by_name() {
        let aux = |index: usize| Variable::new_unchecked(Index::Aux(index));
        let input = |index: usize| Variable::new_unchecked(Index::Input(index));
        let limit = 1usize << 31;
        let unallocated = |side, kind, index, allocated| Error::UnallocatedVariable {
            constraint: 1,
            side,
            kind,
            index,
            allocated,
        };
        let column = Error::Limit(Limit::Column {
            kind: VariableKind::Aux,
            index: limit as u64,
        });
        let cases = [
            (aux(limit - 1), Side::B, None),
            (aux(limit), Side::B, Some(column)),
            (
                aux(limit + 2),
                Side::B,
                Some(unallocated(
                    Side::B,
                    VariableKind::Aux,
                    limit + 2,
                    limit + 2,
                )),
            ),
            (
                input(1),
                Side::C,
                Some(unallocated(Side::C, VariableKind::Input, 1, 1)),
            ),
        ];
        for (variable, side, expected) in cases {
            let mut recorder = with_one();
            // As if allocated one by one: a recorder keeps only the count.
            recorder.aux = limit + 2;
            let x = aux(0);
            recorder.enforce(|| "first", |lc| lc + x, |lc| lc + x, |lc| lc + x);
            recorder.enforce(
                || "second",
                |lc| lc + x,
                |lc| if side == Side::B { lc + variable } else { lc },
                |lc| if side == Side::C { lc + variable } else { lc },
            );
            let (recorded, _) = recorder.finish();
            let got = recorded.err().map(|error| format!("{error:?}"));
            assert_eq!(
                got,
                expected.map(|error| format!("{error:?}")),
                "{variable:?}"
            );
        }
    }

    /// [`system_and_branch`], the branch then with as many own variables as reach the
    /// column limit (`1 << 31` aux in all), and the system grown by two meanwhile, so the
    /// branch's own variables land two further on.
    fn near_the_limit() -> (Recorder<Fr>, Recorder<Fr>) {
        let (mut system, mut branch) = system_and_branch();
        // As if allocated one by one: a recorder keeps only the count.
        branch.aux = 1 << 31;
        for z in ["z1", "z2"] {
            system.alloc(|| z, || Ok(Fr::ONE)).unwrap();
        }
        (system, branch)
    }

    /// Own variables that land past the column limit fail an extension only where a row
    /// names one, and then the first such column in the matrices' order is the error, with
    /// nothing appended.
    #[test]
    fn only_a_named_variable_past_the_column_limit_fails_an_extension() {
        let (mut system, branch) = near_the_limit();
        system.extend(&branch);
        assert!(system.fault.is_none(), "{:?}", system.fault);
        assert_eq!(system.matrices[2].columns, vec![3], "y lands at aux 3");

        let (mut system, mut branch) = near_the_limit();
        let aux = |index: usize| Variable::new_unchecked(Index::Aux(index));
        branch.enforce(
            || "last two",
            |lc| lc + aux(1),
            |lc| lc + aux((1 << 31) - 1),
            |lc| lc + aux((1 << 31) - 2),
        );
        system.extend(&branch);
        assert!(system.matrices.iter().all(|m| m.columns.is_empty()));
        let (recorded, _) = system.finish();
        match recorded {
            Err(Error::Limit(Limit::Column {
                kind: VariableKind::Aux,
                index,
            })) => assert_eq!(index, (1 << 31) + 1, "B's column, the first"),
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("recorded"),
        }
    }
}
