//! The recording constraint system: runs a circuit once and keeps its A, B, C matrices,
//! dictionary-coded; optionally computes the witness in the same pass.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use ff::PrimeField;

use super::matrix::{column, to_positions, Matrix, MatrixBuilder, INPUT_FLAG};
use super::witness::Witness;
use crate::assignment::ProvingAssignment;
use crate::error::{Error, Limit, Side, Unallocated, VariableKind};
use crate::eval::is_dropped;
use crate::pool::LcPool;
use crate::protocol::{root_without_names, CountsInputs};
use crate::shape::Shape;

/// A hasher for coefficient bytes: they are field elements, not attacker-chosen keys, so a
/// multiply-rotate hash is enough and several times cheaper than SipHash.
#[derive(Default)]
struct CoefficientHasher(u64);

impl Hasher for CoefficientHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word))
                .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Distinct coefficients of a circuit, each with a `u16` id. Ids 0 and 1 are always one and
/// minus one, which dominate these circuits and are recognized without hashing.
pub(crate) struct Dictionary<Scalar> {
    values: Vec<Scalar>,
    ids: HashMap<Box<[u8]>, u16, BuildHasherDefault<CoefficientHasher>>,
    /// The id last looked up: gadgets write runs of coefficients (a word's bits times
    /// 2^k, 2^(k+1), ...) that get consecutive ids when first seen and come back in one
    /// order or the other, so the same id or a neighbour usually answers the following
    /// lookup without hashing.
    last: usize,
    /// Per id, the ids looked up after it the last two times, the latest first: a gadget
    /// called again writes the same coefficients in the same order (Poseidon's MDS and
    /// partial-round rows, whose ids were handed out in another order, and whose values
    /// two kinds of row share), so these answer most of what the neighbours do not.
    next: Vec<[u16; 2]>,
    /// Lookups that were hashed.
    #[cfg(test)]
    hashed: usize,
}

impl<Scalar: PrimeField> Dictionary<Scalar> {
    fn new() -> Self {
        Dictionary {
            values: vec![Scalar::ONE, -Scalar::ONE],
            ids: HashMap::default(),
            last: 0,
            next: vec![[0; 2]; 2],
            #[cfg(test)]
            hashed: 0,
        }
    }

    /// The id of `coeff`, adding it when new: one and minus one, the id that followed the
    /// last one before, and the neighbours of the last id, are checked here, the rest
    /// hashed in [`Self::hashed_id`].
    #[inline(always)]
    fn id(&mut self, coeff: &Scalar) -> Result<u16, Limit> {
        if *coeff == self.values[0] {
            return Ok(0);
        }
        if *coeff == self.values[1] {
            return Ok(1);
        }
        let last = self.last;
        let [latest, before] = self.next[last].map(usize::from);
        for id in [latest, before, last + 1, last, last.wrapping_sub(1)] {
            if self.values.get(id) == Some(coeff) {
                return Ok(self.seen(last, id));
            }
        }
        let id = self.hashed_id(coeff)?;
        Ok(self.seen(last, usize::from(id)))
    }

    /// Notes that `id` followed `last`, and makes it the last.
    #[inline(always)]
    fn seen(&mut self, last: usize, id: usize) -> u16 {
        let next = &mut self.next[last];
        if usize::from(next[0]) != id {
            *next = [id as u16, next[0]];
        }
        self.last = id;
        id as u16
    }

    #[inline(never)]
    fn hashed_id(&mut self, coeff: &Scalar) -> Result<u16, Limit> {
        #[cfg(test)]
        {
            self.hashed += 1;
        }
        let key = Key::of(coeff);
        let key = key.as_ref();
        let id = match self.ids.get(key) {
            Some(&id) => id,
            None => {
                let id = u16::try_from(self.values.len()).map_err(|_| Limit::Coefficients)?;
                self.values.push(*coeff);
                self.next.push([0; 2]);
                self.ids.insert(key.into(), id);
                id
            }
        };
        Ok(id)
    }
}

/// The bytes a coefficient is hashed by: a blstrs scalar's Montgomery limbs, one-to-one
/// with the values as the canonical bytes are but without the conversion to them (a
/// multiplication per lookup); any other field's canonical bytes.
enum Key<Repr> {
    #[cfg(feature = "neptune-11")]
    Limbs([u8; 32]),
    Canonical(Repr),
}

impl<Repr: AsRef<[u8]>> Key<Repr> {
    fn of<Scalar: PrimeField<Repr = Repr>>(coeff: &Scalar) -> Self {
        #[cfg(feature = "neptune-11")]
        if crate::lanes::is_blstrs::<Scalar>() {
            let words = crate::lanes::limbs(coeff);
            return Key::Limbs(std::array::from_fn(|k| words[k / 8].to_le_bytes()[k % 8]));
        }
        Key::Canonical(coeff.to_repr())
    }
}

impl<Repr: AsRef<[u8]>> AsRef<[u8]> for Key<Repr> {
    fn as_ref(&self) -> &[u8] {
        match self {
            #[cfg(feature = "neptune-11")]
            Key::Limbs(bytes) => bytes,
            Key::Canonical(repr) => repr.as_ref(),
        }
    }
}

/// What else happens to every allocation and constraint a recorder sees: nothing
/// ([`StructureOnly`]), witness generation ([`Witness`]), or direct synthesis
/// ([`ProvingAssignment`]), so one pass over a circuit both records it and produces what
/// that pass would have produced alone.
pub(super) trait Companion<Scalar: PrimeField>: Default + Send {
    /// A new aux variable whose value `f` computes.
    fn alloc<F>(&mut self, f: F) -> Result<(), SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>;
    /// A new input whose value `f` computes.
    fn alloc_input<F>(&mut self, f: F) -> Result<(), SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>;
    /// A constraint, as the circuit built it (zero terms included), with the value of its
    /// A side where the circuit gave it.
    fn enforce(
        &mut self,
        a: &LinearCombination<Scalar>,
        known_a: Option<Scalar>,
        b: &LinearCombination<Scalar>,
        c: &LinearCombination<Scalar>,
    );
    /// A sub-circuit's pass, appended.
    fn extend(&mut self, other: &Self);
    /// The memory this companion could not have, if it ran out (the circuit was told with
    /// an I/O error).
    fn memory_error(&self) -> Option<Error> {
        None
    }
}

/// Records the structure only: value closures are never run, as for parameter generation.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct StructureOnly;

impl<Scalar: PrimeField> Companion<Scalar> for StructureOnly {
    fn alloc<F>(&mut self, _: F) -> Result<(), SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
    {
        Ok(())
    }

    fn alloc_input<F>(&mut self, _: F) -> Result<(), SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
    {
        Ok(())
    }

    fn enforce(
        &mut self,
        _: &LinearCombination<Scalar>,
        _: Option<Scalar>,
        _: &LinearCombination<Scalar>,
        _: &LinearCombination<Scalar>,
    ) {
    }

    fn extend(&mut self, _: &Self) {}
}

impl<Scalar: PrimeField> Companion<Scalar> for Witness<Scalar> {
    fn alloc<F>(&mut self, f: F) -> Result<(), SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
    {
        ConstraintSystem::alloc(self, || "", f).map(drop)
    }

    fn alloc_input<F>(&mut self, f: F) -> Result<(), SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
    {
        ConstraintSystem::alloc_input(self, || "", f).map(drop)
    }

    fn enforce(
        &mut self,
        _: &LinearCombination<Scalar>,
        _: Option<Scalar>,
        _: &LinearCombination<Scalar>,
        _: &LinearCombination<Scalar>,
    ) {
        self.constraints += 1;
    }

    fn extend(&mut self, other: &Self) {
        ConstraintSystem::extend(self, other)
    }
}

impl<Scalar: PrimeField> Companion<Scalar> for ProvingAssignment<Scalar> {
    fn alloc<F>(&mut self, f: F) -> Result<(), SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
    {
        ConstraintSystem::alloc(self, || "", f).map(drop)
    }

    fn alloc_input<F>(&mut self, f: F) -> Result<(), SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
    {
        ConstraintSystem::alloc_input(self, || "", f).map(drop)
    }

    fn enforce(
        &mut self,
        a: &LinearCombination<Scalar>,
        known_a: Option<Scalar>,
        b: &LinearCombination<Scalar>,
        c: &LinearCombination<Scalar>,
    ) {
        self.evaluate_constraint(a, known_a, b, c);
    }

    fn extend(&mut self, other: &Self) {
        ConstraintSystem::extend(self, other)
    }

    fn memory_error(&self) -> Option<Error> {
        ProvingAssignment::memory_error(self)
    }
}

/// Why a recording failed; kept until the recording is finished, since `enforce` and
/// `extend` cannot return errors.
#[derive(Clone, Debug)]
enum Fault {
    Unallocated(Unallocated),
    Limit(Limit),
    ExtendWithoutOne,
    OutOfMemory { what: &'static str, elements: u64 },
}

impl From<Fault> for Error {
    fn from(fault: Fault) -> Error {
        match fault {
            Fault::Unallocated(fault) => fault.into(),
            Fault::Limit(limit) => Error::Limit(limit),
            Fault::ExtendWithoutOne => Error::ExtendWithoutOne,
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
}

/// What a finished recorder hands over: counts, matrices, dictionary.
pub(crate) struct Recorded<Scalar> {
    pub(crate) inputs: usize,
    pub(crate) aux: usize,
    pub(crate) matrices: [Matrix; 3],
    pub(crate) dictionary: Vec<Scalar>,
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

    /// Appends the nonzero terms of `lc` to the current row of `side`'s matrix.
    fn append(&mut self, side: Side, lc: &LinearCombination<Scalar>) -> Result<(), Fault> {
        let row = self.rows();
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
    for (index, coeff) in terms {
        if is_dropped(coeff) {
            continue;
        }
        if *index >= allocated {
            return Err(Fault::Unallocated(Unallocated {
                constraint: at.row,
                side: at.side,
                kind: at.kind,
                index: *index,
                allocated,
            }));
        }
        let column = column(is_input, *index as u64).ok_or(Fault::Limit(Limit::Column {
            kind: at.kind,
            index: *index as u64,
        }))?;
        matrix.columns.push(column);
        matrix
            .coeff_ids
            .push(dictionary.id(coeff).map_err(Fault::Limit)?);
    }
    Ok(())
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
            let row = self.rows();
            for (side, lc) in [(Side::A, &a), (Side::B, &b), (Side::C, &c)] {
                if let Err(fault) = self.append(side, lc) {
                    self.note(fault);
                    for matrix in &mut self.matrices {
                        matrix.truncate_rows(row);
                    }
                    break;
                }
            }
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

    /// Appends `other`'s rows with its variables renumbered to where `extend` puts them in
    /// the assignment: its aux after ours, its inputs after ours except its input 0 (the
    /// constant one), which is ours. Renumbering is done in 64 bits and checked against the
    /// column limit, so no index ever wraps into another variable.
    fn extend(&mut self, other: &Self) {
        if let Some(fault) = &other.fault {
            let fault = match fault {
                Fault::Unallocated(f) => Fault::Unallocated(f.shifted(self.shape())),
                other => other.clone(),
            };
            self.note(fault);
        }
        if other.inputs > 0 && self.inputs == 0 {
            self.note(Fault::ExtendWithoutOne);
        }
        // After a fault the recording is refused at the end anyway: only the counts and the
        // companion go on.
        if self.fault.is_none() {
            if let Err(fault) = self.append_remapped(other) {
                self.note(fault);
            }
        }
        self.companion.extend(&other.companion);
        self.aux += other.aux;
        self.inputs += other.inputs.saturating_sub(1);
    }
}

impl<Scalar: PrimeField, V: Companion<Scalar>> Recorder<Scalar, V> {
    fn append_remapped(&mut self, other: &Self) -> Result<(), Fault> {
        let aux_offset = self.aux as u64;
        let input_offset = self.inputs.saturating_sub(1) as u64;
        let remap = |col: u32| -> Result<u32, Fault> {
            let (kind, index) = if col & INPUT_FLAG == 0 {
                (VariableKind::Aux, u64::from(col) + aux_offset)
            } else if col == INPUT_FLAG {
                return Ok(col);
            } else {
                (
                    VariableKind::Input,
                    u64::from(col & !INPUT_FLAG) + input_offset,
                )
            };
            column(kind == VariableKind::Input, index)
                .ok_or(Fault::Limit(Limit::Column { kind, index }))
        };
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
        // Check every column before changing anything, so a refused extension leaves the
        // matrices of equal height.
        for theirs in &other.matrices {
            for &col in &theirs.columns {
                remap(col)?;
            }
        }
        for (mine, theirs) in self.matrices.iter_mut().zip(&other.matrices) {
            let base = mine.columns.len() as u32;
            for &col in &theirs.columns {
                mine.columns.push(remap(col)?);
            }
            mine.coeff_ids
                .extend(theirs.coeff_ids.iter().map(|&id| ids[id as usize]));
            mine.row_starts
                .extend(theirs.row_starts[1..].iter().map(|&start| base + start));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::Scalar as Fr;
    use ff::Field;
    use rand_core::SeedableRng;
    use rand_xorshift::XorShiftRng;

    /// Two kinds of row sharing coefficients in different orders, written again and again
    /// (as Poseidon's MDS and partial-round rows are): every value keeps one id, and once
    /// both orders have been seen twice, nothing is hashed.
    #[test]
    fn repeated_sequences_keep_their_ids_without_hashing() {
        let mut rng = XorShiftRng::seed_from_u64(5);
        let shared: Vec<Fr> = (0..40).map(|_| Fr::random(&mut rng)).collect();
        let forward: Vec<Fr> = shared.clone();
        let strided: Vec<Fr> = (0..40).map(|i| shared[(i * 7) % 40]).collect();
        let mut dictionary = Dictionary::<Fr>::new();
        let mut ids = std::collections::HashMap::new();
        let mut hashed_per_pass = Vec::new();
        for _ in 0..4 {
            let before = dictionary.hashed;
            for row in [&forward, &strided] {
                for value in row.iter().chain([&Fr::ONE, &-Fr::ONE]) {
                    let id = dictionary.id(value).unwrap();
                    assert_eq!(dictionary.values[usize::from(id)], *value);
                    let known = *ids.entry(id).or_insert(*value);
                    assert_eq!(known, *value, "one id, one value");
                }
            }
            hashed_per_pass.push(dictionary.hashed - before);
        }
        assert_eq!(
            dictionary.values.len(),
            42,
            "one and minus one, and the 40 values"
        );
        assert_eq!(hashed_per_pass[2..], [0, 0], "{hashed_per_pass:?}");
    }
}
