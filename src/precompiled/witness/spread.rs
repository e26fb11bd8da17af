//! The witness generator of a recording that knows where its circuit's parts put their
//! values ([`Part`]): every part [`crate::branches::spread`] runs in a branch gets the range
//! of the system's own aux vector that the part fills in the sequential run, so the parts'
//! witnesses are written at once, in place, and nothing is copied after (a branch that wrote
//! into a vector of its own and was copied in cost more than the part saved: the native
//! witness paths take a few nanoseconds per constraint).
//!
//! The recorded parts are a placement, never a promise the witness depends on. What they do
//! not describe runs in the system, one after another, as [`Witness`] does: a spread where
//! the recording has none, a branch of a branch. What does not fit them (a part that
//! allocates more or fewer aux variables than its range, a circuit that groups its parts
//! otherwise on this machine, a branch appended out of order, a damaged file) takes a
//! detour: from there the system keeps its values as written ranges and vectors of its own,
//! in order, and copies them into one vector at the end. Either way the witness is the
//! sequential run's; [`WriterValues`] keeps every range to one writer.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, Landing, LinearCombination, Spreading, SynthesisError,
    Variable, Ways,
};
use ff::PrimeField;

use crate::error::{Error, Fault};
use crate::precompiled::witness::generator::{
    alloc_input_value, append_zeros, out_of_memory, room_for_one, Witness,
};
use crate::precompiled::witness::kinds::AuxKinds;
use crate::precompiled::witness::parts::Part;
use crate::precompiled::witness::windows::{Refused, WriterValues, Written};
use crate::protocol::{lay_out_for_proving, root_without_names, CountsInputs};
use crate::vectors::reserve;

/// Whether a witness's parts are generated at once where the recording places them
/// ([`crate::tuning::Knobs::spread_witness`]).
static SPREAD: AtomicBool = AtomicBool::new(true);

pub(crate) fn set_enabled(on: bool) {
    SPREAD.store(on, Ordering::Relaxed);
}

/// Whether witnesses are generated in the ranges the recording places the parts in.
pub(crate) fn enabled() -> bool {
    SPREAD.load(Ordering::Relaxed)
}

/// A witness generator writing its aux values into one range of a shared vector.
pub(crate) struct SpreadWitness<'r, Scalar: PrimeField> {
    inputs: Vec<Scalar>,
    aux: Sink<Scalar>,
    constraints: usize,
    /// The recorded parts (the root's; none for a branch or a system from `new()`).
    parts: &'r [Part],
    /// The first of `parts` neither handed out nor passed.
    next_part: Cell<usize>,
    /// A branch's inputs before its own: those of its system when taken.
    inputs_at_branch: usize,
    /// Set when values were asked for that cannot be given in one slice.
    misread: Cell<bool>,
}

/// Where a system's aux values go: its range, or the detour once one did not fit.
struct Sink<Scalar: Copy> {
    range: WriterValues<Scalar>,
    /// The index of the next value in the system's vector.
    position: usize,
    detour: Option<Detour<Scalar>>,
    /// Why the witness cannot be had.
    fault: Option<Fault>,
    /// Where values go when memory ran out, so a native path runs on to the error.
    scratch: Vec<Scalar>,
    /// The kinds of the values in the range, classified as they are written.
    kinds: AuxKinds,
}

/// A system's values, in order, once one did not fit its range: written ranges and vectors
/// of its own; its next values go to `own`.
struct Detour<Scalar: Copy> {
    pieces: Vec<WrittenPiece<Scalar>>,
    own: Vec<Scalar>,
}

#[derive(Clone)]
enum WrittenPiece<Scalar: Copy> {
    Written(Written<Scalar>),
    Own(Vec<Scalar>),
}

impl<Scalar: Copy> WrittenPiece<Scalar> {
    fn as_slice(&self) -> &[Scalar] {
        match self {
            WrittenPiece::Written(written) => written.as_slice(),
            WrittenPiece::Own(values) => values,
        }
    }
}

impl<Scalar: Copy> Detour<Scalar> {
    fn slices(&self) -> impl Iterator<Item = &[Scalar]> + Clone {
        self.pieces
            .iter()
            .map(WrittenPiece::as_slice)
            .chain(std::iter::once(&self.own[..]))
    }

    /// The values, in order, as pieces of their own (for another system to append).
    fn to_pieces(&self) -> Vec<WrittenPiece<Scalar>> {
        let mut pieces = self.pieces.clone();
        pieces.push(WrittenPiece::Own(self.own.clone()));
        pieces
    }
}

/// The fault of aux values the witness could not grow by `elements`.
fn no_room(elements: usize) -> Fault {
    Fault::OutOfMemory {
        what: "aux values",
        elements: elements as u64,
    }
}

impl<Scalar: PrimeField> Sink<Scalar> {
    fn new(range: WriterValues<Scalar>, kinds: AuxKinds) -> Self {
        Sink {
            position: range.position(),
            range,
            detour: None,
            fault: None,
            scratch: Vec::new(),
            kinds,
        }
    }

    /// Classifies the values written so far once enough are waiting: at the start of a
    /// call, where no slice handed out before can still be written. (A detour abandoned the
    /// kinds, so only the range's values are ever classified.)
    #[inline]
    fn catch_up(&mut self) {
        self.kinds.catch_up(self.range.written());
    }

    /// From here on, the values are kept as pieces: what was written in the range so far,
    /// closed, then values of this system's own.
    #[cold]
    fn take_detour(&mut self) -> &mut Detour<Scalar> {
        // Its values are no longer one slice in order: evaluation classifies them all.
        self.kinds.abandon();
        let range = &self.range;
        self.detour.get_or_insert_with(|| Detour {
            pieces: vec![WrittenPiece::Written(range.close())],
            own: Vec::new(),
        })
    }

    /// Appends `value`, in the range or on the detour.
    #[inline]
    fn push(&mut self, value: Scalar) -> Result<(), SynthesisError> {
        self.catch_up();
        let detour = match &mut self.detour {
            Some(detour) => detour,
            None => match self.range.push(value) {
                Ok(()) => {
                    self.position += 1;
                    return Ok(());
                }
                Err(Refused::OutOfMemory) => {
                    self.fault.get_or_insert(no_room(1));
                    return Err(out_of_memory());
                }
                Err(_) => self.take_detour(),
            },
        };
        if let Err(error) = room_for_one(&mut detour.own, "aux values") {
            self.fault.get_or_insert(no_room(1));
            return Err(error);
        }
        detour.own.push(value);
        self.position += 1;
        Ok(())
    }

    /// Appends `n` zeros and returns them to be overwritten.
    fn fill(&mut self, n: usize) -> &mut [Scalar] {
        self.catch_up();
        if self.detour.is_none() {
            match self.range.fill(n, Scalar::ZERO) {
                Ok(()) => {
                    self.position += n;
                    return self.range.last_mut(n);
                }
                Err(Refused::OutOfMemory) => return self.scratch(n),
                Err(_) => {
                    self.take_detour();
                }
            }
        }
        let room = match &mut self.detour {
            Some(detour) => reserve(&mut detour.own, n, "aux values").is_ok(),
            None => false,
        };
        if !room {
            return self.scratch(n);
        }
        let Some(detour) = &mut self.detour else {
            unreachable!("taken above")
        };
        let start = detour.own.len();
        detour.own.resize(start + n, Scalar::ZERO);
        self.position += n;
        &mut detour.own[start..]
    }

    /// Notes that `n` values found no memory and hands out a scratch for them.
    #[cold]
    fn scratch(&mut self, n: usize) -> &mut [Scalar] {
        self.fault.get_or_insert(no_room(n));
        self.scratch.clear();
        self.scratch.resize(n, Scalar::ZERO);
        &mut self.scratch
    }

    /// Copies `values` in, as they come.
    fn copy(&mut self, values: &[Scalar]) {
        self.fill(values.len()).copy_from_slice(values);
    }

    /// Appends a branch's values: in place when they are its range, full and next in order;
    /// else as they lie, on the detour.
    fn append_branch(&mut self, branch: &Sink<Scalar>) {
        if self.detour.is_none() && branch.detour.is_none() {
            // Before the range comes back: a failure takes the detour, which abandons them.
            self.kinds
                .append(self.range.written(), &branch.kinds, branch.range.written());
            if self.range.take_back(&branch.range).is_ok() {
                self.position = self.range.position();
                return;
            }
        }
        let theirs = match &branch.detour {
            None => vec![WrittenPiece::Written(branch.range.close())],
            Some(detour) => detour.to_pieces(),
        };
        let added: usize = theirs.iter().map(|piece| piece.as_slice().len()).sum();
        let detour = self.take_detour();
        if !detour.own.is_empty() {
            let own = std::mem::take(&mut detour.own);
            detour.pieces.push(WrittenPiece::Own(own));
        }
        detour.pieces.extend(theirs);
        self.position += added;
    }

    /// The values as one vector: the range's own storage when nothing took the detour and no
    /// branch is alive, else a copy.
    fn into_vec(self) -> Result<Vec<Scalar>, Error> {
        match &self.detour {
            None => match self.range.into_vec() {
                Ok(values) => Ok(values),
                // A branch kept alive past the synthesis: the values are copied out.
                Err(range) => joined(std::iter::once(range.written())),
            },
            Some(detour) => joined(detour.slices()),
        }
    }
}

/// The slices' values in one vector (reserved first: running out of memory is an error).
fn joined<'s, Scalar: Copy + 's>(
    slices: impl Iterator<Item = &'s [Scalar]> + Clone,
) -> Result<Vec<Scalar>, Error> {
    let mut values = Vec::new();
    reserve(
        &mut values,
        slices.clone().map(<[Scalar]>::len).sum(),
        "aux values",
    )?;
    for slice in slices {
        values.extend_from_slice(slice);
    }
    Ok(values)
}

impl<'r, Scalar: PrimeField> SpreadWitness<'r, Scalar> {
    fn with(
        inputs: Vec<Scalar>,
        range: WriterValues<Scalar>,
        kinds: AuxKinds,
        parts: &'r [Part],
    ) -> Self {
        SpreadWitness {
            inputs_at_branch: inputs.len(),
            inputs,
            aux: Sink::new(range, kinds),
            constraints: 0,
            parts,
            next_part: Cell::new(0),
            misread: Cell::new(false),
        }
    }

    /// Generates the witness of `circuit` into `buffers` (emptied, with room for the
    /// recorded counts), handing the recorded `parts` their ranges.
    pub(crate) fn generate<C: Circuit<Scalar>>(
        buffers: Witness<Scalar>,
        parts: &'r [Part],
        circuit: C,
    ) -> Result<Witness<Scalar>, Error> {
        let mut cs = Self::with(
            buffers.inputs,
            WriterValues::root(buffers.aux),
            buffers.kinds,
            parts,
        );
        let outcome = lay_out_for_proving(&mut cs, circuit);
        // Running out of memory reaches the circuit as an I/O error; it is ours.
        let witness = cs.finish()?;
        outcome?;
        Ok(witness)
    }

    fn finish(mut self) -> Result<Witness<Scalar>, Error> {
        if let Some(fault) = self.aux.fault {
            return Err(fault.into());
        }
        if self.misread.get() {
            return Err(Fault::ScatteredAux(
                "in a branch, or after a part left its recorded place",
            )
            .into());
        }
        let kinds = std::mem::take(&mut self.aux.kinds);
        Ok(Witness {
            aux: self.aux.into_vec()?,
            inputs: self.inputs,
            constraints: self.constraints,
            kinds,
        })
    }
}

impl<Scalar: PrimeField> CountsInputs for SpreadWitness<'_, Scalar> {
    fn input_count(&self) -> usize {
        self.inputs.len()
    }
}

impl<'r, Scalar: PrimeField> ConstraintSystem<Scalar> for SpreadWitness<'r, Scalar> {
    type Root = Self;

    /// A system of its own (a sub-circuit's), appended by copying.
    fn new() -> Self {
        // Its values are copied into a system, which classifies them there.
        Self::with(
            Vec::new(),
            WriterValues::root(Vec::new()),
            AuxKinds::abandoned(),
            &[],
        )
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(f()?)?;
        // Where the value lies in the system's vector: its index in the sequential run.
        Ok(Variable::new_unchecked(Index::Aux(self.aux.position - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        alloc_input_value(&mut self.inputs, f)
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

    /// A branch is appended in place where it filled the range it was handed and comes next,
    /// as it lies otherwise; a system from `new()` is copied in.
    fn extend(&mut self, other: &Self) {
        self.constraints += other.constraints;
        if let Some(fault) = other.aux.fault.clone() {
            self.aux.fault.get_or_insert(fault);
        }
        if other.misread.get() {
            self.misread.set(true);
        }
        if other.aux.range.is_branch() {
            self.inputs.extend_from_slice(
                other
                    .inputs
                    .get(other.inputs_at_branch..)
                    .unwrap_or_default(),
            );
            self.aux.append_branch(&other.aux);
            return;
        }
        // A sub-circuit from `new()`: its input 0 stands for the constant one, ours.
        self.inputs
            .extend_from_slice(other.inputs.get(1..).unwrap_or_default());
        match &other.aux.detour {
            None => self.aux.copy(other.aux.range.written()),
            Some(detour) => detour.slices().for_each(|values| self.aux.copy(values)),
        }
    }

    fn is_witness_generator(&self) -> bool {
        true
    }

    fn extend_inputs(&mut self, new_inputs: &[Scalar]) {
        self.inputs.extend_from_slice(new_inputs);
    }

    fn extend_aux(&mut self, new_aux: &[Scalar]) {
        self.aux.copy(new_aux);
    }

    fn allocate_empty(&mut self, aux_n: usize, inputs_n: usize) -> (&mut [Scalar], &mut [Scalar]) {
        (
            self.aux.fill(aux_n),
            append_zeros(&mut self.inputs, inputs_n),
        )
    }

    fn allocate_empty_inputs(&mut self, n: usize) -> &mut [Scalar] {
        append_zeros(&mut self.inputs, n)
    }

    fn allocate_empty_aux(&mut self, n: usize) -> &mut [Scalar] {
        self.aux.fill(n)
    }

    fn inputs_slice(&self) -> &[Scalar] {
        &self.inputs
    }

    /// A branch's values do not follow the system's in one slice, nor those of a system on
    /// the detour: asking for them is an error at the end; its values in its range are
    /// given meanwhile.
    fn aux_slice(&self) -> &[Scalar] {
        if self.aux.range.is_branch() || self.aux.detour.is_some() {
            self.misread.set(true);
        }
        self.aux.range.written()
    }

    fn spreading(&mut self) -> Option<&mut dyn Spreading<Self>> {
        Some(self)
    }
}

impl<'r, Scalar: PrimeField> Spreading<SpreadWitness<'r, Scalar>> for SpreadWitness<'r, Scalar> {
    fn ways(&self) -> Ways {
        Ways {
            parts_in_place: true,
            branches_in_place: true,
            small_parts: true,
        }
    }

    /// One [`Self::branch`] per part.
    fn branches(&self, count: usize) -> Option<Vec<Self>> {
        (0..count).map(|_| self.branch()).collect()
    }

    /// A branch numbers its aux values where the recording places them, which is where they
    /// land when the part fills its range (a part that does not leaves the values in order
    /// but no longer one slice, which `aux_slice` refuses); its inputs are appended after ours.
    fn landing(&self, branch: &Self) -> Option<Landing> {
        if !branch.aux.range.is_branch() {
            return None;
        }
        Some(Landing {
            inputs_from: branch.inputs_at_branch,
            inputs_to: self.inputs.len(),
            ..Landing::IN_PLACE
        })
    }
}

impl<'r, Scalar: PrimeField> SpreadWitness<'r, Scalar> {
    /// The next recorded part's range, when the system stands where that part was taken and
    /// the range is free; otherwise none, and the parts run here.
    fn branch(&self) -> Option<Self> {
        if self.aux.detour.is_some() {
            return None;
        }
        let here = self.aux.position;
        let mut next = self.next_part.get();
        // Parts whose ranges this system wrote itself (their spread ran here).
        while self.parts.get(next).is_some_and(|part| part.at < here) {
            next += 1;
        }
        self.next_part.set(next);
        let part = self.parts.get(next).filter(|part| part.point == here)?;
        let range = self.aux.range.hand_out(part.at, part.len)?;
        self.next_part.set(next + 1);
        Some(Self::with(
            self.inputs.clone(),
            range,
            AuxKinds::for_range(&self.aux.kinds, part.len),
            &[],
        ))
    }
}

#[cfg(test)]
mod tests;
