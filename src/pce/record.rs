//! The recording constraint system: runs a circuit once without witness values and keeps
//! its A, B, C matrices, dictionary-coded.

use std::collections::HashMap;

use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Term, Variable};
use ff::PrimeField;

use super::matrix::{Matrix, INPUT_FLAG};
use crate::pool::VecPool;

/// Distinct coefficients of a circuit, each with a `u16` id. Ids 0 and 1 are always one and
/// minus one, which dominate these circuits and are recognized without hashing.
pub(crate) struct Dictionary<Scalar> {
    pub(crate) values: Vec<Scalar>,
    ids: HashMap<Box<[u8]>, u16>,
}

impl<Scalar: PrimeField> Dictionary<Scalar> {
    pub(crate) fn new() -> Self {
        Dictionary {
            values: vec![Scalar::ONE, -Scalar::ONE],
            ids: HashMap::new(),
        }
    }

    /// The id of `coeff`, adding it when new.
    pub(crate) fn id(&mut self, coeff: &Scalar) -> Result<u16, SynthesisError> {
        if *coeff == self.values[0] {
            return Ok(0);
        }
        if *coeff == self.values[1] {
            return Ok(1);
        }
        let repr = coeff.to_repr();
        if let Some(&id) = self.ids.get(repr.as_ref()) {
            return Ok(id);
        }
        let id = u16::try_from(self.values.len()).map_err(|_| {
            SynthesisError::IncompatibleLengthVector(
                "more than 65536 distinct coefficients: the circuit does not fit a u16 dictionary"
                    .into(),
            )
        })?;
        self.values.push(*coeff);
        self.ids.insert(repr.as_ref().into(), id);
        Ok(id)
    }
}

/// A constraint system that records constraints instead of evaluating them.
pub struct Recorder<Scalar: PrimeField> {
    pub(crate) inputs: usize,
    pub(crate) aux: usize,
    pub(crate) a: Matrix,
    pub(crate) b: Matrix,
    pub(crate) c: Matrix,
    pub(crate) dictionary: Dictionary<Scalar>,
    pool: VecPool<Term<Scalar>>,
    pub(crate) fault: Option<String>,
}

fn column(index: Index, inputs: usize, aux: usize) -> Result<u32, String> {
    let (index, bound, flag, kind) = match index {
        Index::Input(i) => (i, inputs, INPUT_FLAG, "input"),
        Index::Aux(i) => (i, aux, 0, "aux"),
    };
    if index >= bound {
        return Err(format!(
            "references {kind} variable {index} but only {bound} exist"
        ));
    }
    u32::try_from(index)
        .ok()
        .filter(|&i| i < INPUT_FLAG)
        .map(|i| i | flag)
        .ok_or_else(|| format!("{kind} variable {index} exceeds 2^31, the column limit"))
}

impl<Scalar: PrimeField> Recorder<Scalar> {
    fn append(&mut self, which: usize, lc: &LinearCombination<Scalar>) -> Result<(), String> {
        let (inputs, aux) = (self.inputs, self.aux);
        let matrix = match which {
            0 => &mut self.a,
            1 => &mut self.b,
            _ => &mut self.c,
        };
        for (var, coeff) in lc.iter() {
            if *coeff == Scalar::ZERO {
                continue;
            }
            matrix
                .columns
                .push(column(var.get_unchecked(), inputs, aux)?);
            let id = self.dictionary.id(coeff).map_err(|e| e.to_string())?;
            matrix.coeff_ids.push(id);
        }
        let end = u32::try_from(matrix.columns.len())
            .map_err(|_| "more than 2^32 nonzeros in one matrix".to_string())?;
        matrix.row_starts.push(end);
        Ok(())
    }

    fn fresh_lc(pool: &mut VecPool<Term<Scalar>>) -> LinearCombination<Scalar> {
        LinearCombination::from_buffers(pool.take(), pool.take())
    }

    fn recycle(&mut self, lc: LinearCombination<Scalar>) {
        let (inputs, aux) = lc.into_buffers();
        self.pool.give(inputs);
        self.pool.give(aux);
    }

    /// Appends one row per input: `input * 0 = 0`, as the prover does before proving.
    pub(crate) fn add_input_constraints(&mut self) {
        for i in 0..self.inputs {
            self.enforce(
                || "",
                |lc| lc + Variable::new_unchecked(Index::Input(i)),
                |lc| lc,
                |lc| lc,
            );
        }
    }
}

impl<Scalar: PrimeField> ConstraintSystem<Scalar> for Recorder<Scalar> {
    type Root = Self;

    fn new() -> Self {
        Recorder {
            inputs: 0,
            aux: 0,
            a: Matrix::new(),
            b: Matrix::new(),
            c: Matrix::new(),
            dictionary: Dictionary::new(),
            pool: VecPool::new(1024),
            fault: None,
        }
    }

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
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
        let a = a(Self::fresh_lc(&mut self.pool));
        let b = b(Self::fresh_lc(&mut self.pool));
        let c = c(Self::fresh_lc(&mut self.pool));
        let row = self.a.rows();
        for (which, lc) in [&a, &b, &c].into_iter().enumerate() {
            if let Err(fault) = self.append(which, lc) {
                // Keep the three matrices the same height, and report the first fault.
                if self.fault.is_none() {
                    self.fault = Some(format!("constraint {row} {fault}"));
                }
                for matrix in [&mut self.a, &mut self.b, &mut self.c] {
                    matrix.row_starts.truncate(row + 1);
                    let start = matrix.row_starts[row];
                    matrix.columns.truncate(start as usize);
                    matrix.coeff_ids.truncate(start as usize);
                    matrix.row_starts.push(start);
                }
                break;
            }
        }
        self.recycle(a);
        self.recycle(b);
        self.recycle(c);
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }

    fn is_extensible() -> bool {
        true
    }

    /// Appends `other`'s rows with its variables renumbered to where `extend` puts them in
    /// the assignment: its aux after ours, its inputs after ours except its input 0 (the
    /// constant one), which is ours.
    fn extend(&mut self, other: &Self) {
        if self.fault.is_none() {
            self.fault = other.fault.clone();
        }
        let aux_offset = self.aux as u32;
        let input_offset = self.inputs.saturating_sub(1) as u32;
        let remap = |col: u32| -> u32 {
            if col & INPUT_FLAG == 0 {
                col + aux_offset
            } else if col == INPUT_FLAG {
                col
            } else {
                col + input_offset
            }
        };
        let mut ids = Vec::with_capacity(other.dictionary.values.len());
        for value in &other.dictionary.values {
            match self.dictionary.id(value) {
                Ok(id) => ids.push(id),
                Err(e) => {
                    self.fault.get_or_insert(e.to_string());
                    return;
                }
            }
        }
        let too_many = [
            (&self.a, &other.a),
            (&self.b, &other.b),
            (&self.c, &other.c),
        ]
        .iter()
        .any(|(mine, theirs)| mine.nonzeros() + theirs.nonzeros() > u32::MAX as usize);
        if too_many {
            self.fault
                .get_or_insert("more than 2^32 nonzeros in one matrix".to_string());
            return;
        }
        for (mine, theirs) in [
            (&mut self.a, &other.a),
            (&mut self.b, &other.b),
            (&mut self.c, &other.c),
        ] {
            let base = mine.columns.len() as u32;
            mine.columns
                .extend(theirs.columns.iter().map(|&c| remap(c)));
            mine.coeff_ids
                .extend(theirs.coeff_ids.iter().map(|&id| ids[id as usize]));
            mine.row_starts
                .extend(theirs.row_starts[1..].iter().map(|&start| base + start));
        }
        self.aux += other.aux;
        self.inputs += other.inputs.saturating_sub(1);
    }
}
