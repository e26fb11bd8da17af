//! Variables and linear combinations of them.

use std::ops::{Add, Sub};

use ff::PrimeField;
use serde::{Deserialize, Serialize};

use crate::terms::Terms;

/// A variable of a constraint system: an input (public) or an aux (private) slot.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Variable(pub Index);

impl Variable {
    /// Wraps a raw index. Circuits normally get variables from `alloc` / `alloc_input` instead.
    pub fn new_unchecked(idx: Index) -> Variable {
        Variable(idx)
    }

    /// The raw index of this variable.
    pub fn get_unchecked(&self) -> Index {
        self.0
    }
}

/// Position of a variable among the inputs or among the aux variables.
#[derive(Copy, Clone, PartialEq, Debug, Eq, Hash, Serialize, Deserialize)]
pub enum Index {
    /// The n-th public input; input 0 is the constant one.
    Input(usize),
    /// The n-th private (auxiliary) variable.
    Aux(usize),
}

/// A term as stored and exposed to evaluation kernels: `(variable index, coefficient)`.
pub type Term<Scalar> = (usize, Scalar);

/// A sum of variables times coefficients.
///
/// Terms are kept merged (one per variable) and ordered: inputs by index, then aux variables
/// by index. A term whose coefficients cancel to zero is kept, as upstream does, so `len()`
/// and `iter()` report it; evaluators skip it.
///
/// Besides the upstream API, an LC can be built on buffers a caller recycles
/// ([`LinearCombination::from_buffers`] / [`LinearCombination::into_buffers`]) and its terms
/// can be read as slices ([`LinearCombination::input_terms`] / [`LinearCombination::aux_terms`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LinearCombination<Scalar: PrimeField> {
    inputs: Terms<Scalar>,
    aux: Terms<Scalar>,
}

impl<Scalar: PrimeField> Default for LinearCombination<Scalar> {
    fn default() -> Self {
        Self::zero()
    }
}

impl<Scalar: PrimeField> LinearCombination<Scalar> {
    /// The empty combination. Allocates nothing until the first term is added.
    pub fn zero() -> LinearCombination<Scalar> {
        LinearCombination {
            inputs: Terms::default(),
            aux: Terms::default(),
        }
    }

    /// An empty combination that stores its terms in the two given buffers.
    ///
    /// The buffers are cleared; their capacity is kept, so a caller that hands the same
    /// buffers back in (see [`LinearCombination::into_buffers`]) builds LCs without allocating.
    pub fn from_buffers(inputs: Vec<Term<Scalar>>, aux: Vec<Term<Scalar>>) -> Self {
        LinearCombination {
            inputs: Terms::from_buffer(inputs),
            aux: Terms::from_buffer(aux),
        }
    }

    /// Gives back the input and aux term buffers (sorted, merged terms still in them).
    pub fn into_buffers(self) -> (Vec<Term<Scalar>>, Vec<Term<Scalar>>) {
        (self.inputs.into_buffer(), self.aux.into_buffer())
    }

    /// The input terms, sorted by index, one per variable.
    pub fn input_terms(&self) -> &[Term<Scalar>] {
        self.inputs.as_slice()
    }

    /// The aux terms, sorted by index, one per variable.
    pub fn aux_terms(&self) -> &[Term<Scalar>] {
        self.aux.as_slice()
    }

    /// Reserves room for `inputs` more input terms and `aux` more aux terms.
    pub fn reserve(&mut self, inputs: usize, aux: usize) {
        self.inputs.reserve(inputs);
        self.aux.reserve(aux);
    }

    /// The combination `coeff * var`.
    pub fn from_coeff(var: Variable, coeff: Scalar) -> Self {
        match var.0 {
            Index::Input(i) => LinearCombination {
                inputs: Terms::single(i, coeff),
                aux: Terms::default(),
            },
            Index::Aux(i) => LinearCombination {
                inputs: Terms::default(),
                aux: Terms::single(i, coeff),
            },
        }
    }

    /// The combination `1 * var`.
    pub fn from_variable(var: Variable) -> Self {
        Self::from_coeff(var, Scalar::ONE)
    }

    /// All terms: inputs in index order, then aux variables in index order.
    pub fn iter(&self) -> impl Iterator<Item = (Variable, &Scalar)> + '_ {
        let inputs = self.inputs.as_slice().iter();
        let aux = self.aux.as_slice().iter();
        inputs
            .map(|(i, coeff)| (Variable(Index::Input(*i)), coeff))
            .chain(aux.map(|(i, coeff)| (Variable(Index::Aux(*i)), coeff)))
    }

    /// The input terms as `(index, coefficient)` in index order.
    #[inline]
    pub fn iter_inputs(&self) -> impl Iterator<Item = (&usize, &Scalar)> + '_ {
        self.inputs.as_slice().iter().map(|(i, coeff)| (i, coeff))
    }

    /// The aux terms as `(index, coefficient)` in index order.
    #[inline]
    pub fn iter_aux(&self) -> impl Iterator<Item = (&usize, &Scalar)> + '_ {
        self.aux.as_slice().iter().map(|(i, coeff)| (i, coeff))
    }

    /// All terms with mutable coefficients, in the order of [`LinearCombination::iter`].
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (Variable, &mut Scalar)> + '_ {
        let inputs = self.inputs.coeffs_mut();
        let aux = self.aux.coeffs_mut();
        inputs
            .map(|(i, coeff)| (Variable(Index::Input(i)), coeff))
            .chain(aux.map(|(i, coeff)| (Variable(Index::Aux(i)), coeff)))
    }

    /// Adds `coeff * var` in place.
    #[inline]
    pub fn add_assign_term(&mut self, coeff: Scalar, var: Variable) {
        match var.0 {
            Index::Input(i) => self.inputs.add(i, coeff),
            Index::Aux(i) => self.aux.add(i, coeff),
        }
    }

    /// Adds `coeff * other` in place, one pass over both term lists, no temporary.
    pub fn add_assign_scaled(&mut self, coeff: Scalar, other: &LinearCombination<Scalar>) {
        if coeff == Scalar::ONE {
            self.inputs.merge(other.inputs.as_slice(), |c| c);
            self.aux.merge(other.aux.as_slice(), |c| c);
        } else {
            self.inputs.merge(other.inputs.as_slice(), |c| c * coeff);
            self.aux.merge(other.aux.as_slice(), |c| c * coeff);
        }
    }

    /// Subtracts `coeff * other` in place, one pass over both term lists, no temporary.
    pub fn sub_assign_scaled(&mut self, coeff: Scalar, other: &LinearCombination<Scalar>) {
        if coeff == Scalar::ONE {
            self.inputs.merge(other.inputs.as_slice(), |c| -c);
            self.aux.merge(other.aux.as_slice(), |c| -c);
        } else {
            self.inputs.merge(other.inputs.as_slice(), |c| -(c * coeff));
            self.aux.merge(other.aux.as_slice(), |c| -(c * coeff));
        }
    }

    /// `self + coeff * var`, merging with an existing term for `var`.
    pub fn add_unsimplified(
        mut self,
        (coeff, var): (Scalar, Variable),
    ) -> LinearCombination<Scalar> {
        self.add_assign_term(coeff, var);
        self
    }

    /// `self - coeff * var`, merging with an existing term for `var`.
    pub fn sub_unsimplified(
        mut self,
        (coeff, var): (Scalar, Variable),
    ) -> LinearCombination<Scalar> {
        self.add_assign_term(-coeff, var);
        self
    }

    /// Number of terms, cancelled (zero) ones included.
    pub fn len(&self) -> usize {
        self.inputs.as_slice().len() + self.aux.as_slice().len()
    }

    /// True when there are no terms at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of the combination for the given assignments.
    ///
    /// Panics if a term's index is outside the assignment slices, as upstream does.
    pub fn eval(&self, input_assignment: &[Scalar], aux_assignment: &[Scalar]) -> Scalar {
        sum_terms(self.input_terms(), input_assignment)
            + sum_terms(self.aux_terms(), aux_assignment)
    }
}

fn sum_terms<Scalar: PrimeField>(terms: &[Term<Scalar>], assignment: &[Scalar]) -> Scalar {
    terms.iter().fold(Scalar::ZERO, |acc, &(index, coeff)| {
        let value = assignment[index];
        if coeff == Scalar::ONE {
            acc + value
        } else {
            acc + value * coeff
        }
    })
}

impl<Scalar: PrimeField> Add<(Scalar, Variable)> for LinearCombination<Scalar> {
    type Output = LinearCombination<Scalar>;

    fn add(self, term: (Scalar, Variable)) -> LinearCombination<Scalar> {
        self.add_unsimplified(term)
    }
}

impl<Scalar: PrimeField> Sub<(Scalar, Variable)> for LinearCombination<Scalar> {
    type Output = LinearCombination<Scalar>;

    fn sub(self, term: (Scalar, Variable)) -> LinearCombination<Scalar> {
        self.sub_unsimplified(term)
    }
}

impl<Scalar: PrimeField> Add<Variable> for LinearCombination<Scalar> {
    type Output = LinearCombination<Scalar>;

    fn add(self, other: Variable) -> LinearCombination<Scalar> {
        self.add_unsimplified((Scalar::ONE, other))
    }
}

impl<Scalar: PrimeField> Sub<Variable> for LinearCombination<Scalar> {
    type Output = LinearCombination<Scalar>;

    fn sub(self, other: Variable) -> LinearCombination<Scalar> {
        self.sub_unsimplified((Scalar::ONE, other))
    }
}

impl<'a, Scalar: PrimeField> Add<&'a LinearCombination<Scalar>> for LinearCombination<Scalar> {
    type Output = LinearCombination<Scalar>;

    fn add(mut self, other: &'a LinearCombination<Scalar>) -> LinearCombination<Scalar> {
        self.add_assign_scaled(Scalar::ONE, other);
        self
    }
}

impl<'a, Scalar: PrimeField> Sub<&'a LinearCombination<Scalar>> for LinearCombination<Scalar> {
    type Output = LinearCombination<Scalar>;

    fn sub(mut self, other: &'a LinearCombination<Scalar>) -> LinearCombination<Scalar> {
        self.sub_assign_scaled(Scalar::ONE, other);
        self
    }
}

impl<'a, Scalar: PrimeField> Add<(Scalar, &'a LinearCombination<Scalar>)>
    for LinearCombination<Scalar>
{
    type Output = LinearCombination<Scalar>;

    fn add(
        mut self,
        (coeff, other): (Scalar, &'a LinearCombination<Scalar>),
    ) -> LinearCombination<Scalar> {
        self.add_assign_scaled(coeff, other);
        self
    }
}

impl<'a, Scalar: PrimeField> Sub<(Scalar, &'a LinearCombination<Scalar>)>
    for LinearCombination<Scalar>
{
    type Output = LinearCombination<Scalar>;

    fn sub(
        mut self,
        (coeff, other): (Scalar, &'a LinearCombination<Scalar>),
    ) -> LinearCombination<Scalar> {
        self.sub_assign_scaled(coeff, other);
        self
    }
}

#[cfg(test)]
mod tests {
    use blstrs::Scalar as Fr;
    use ff::Field;

    use super::*;

    fn aux(i: usize) -> Variable {
        Variable(Index::Aux(i))
    }

    fn input(i: usize) -> Variable {
        Variable(Index::Input(i))
    }

    #[test]
    fn terms_merge_per_variable_inputs_first_and_keep_cancelled_ones() {
        let lc = LinearCombination::<Fr>::zero() + aux(3) + (Fr::from(2u64), input(1)) + aux(1)
            - aux(3)
            + (Fr::from(5u64), input(0));
        let terms: Vec<(Variable, Fr)> = lc.iter().map(|(v, c)| (v, *c)).collect();
        assert_eq!(
            terms,
            [
                (input(0), Fr::from(5u64)),
                (input(1), Fr::from(2u64)),
                (aux(1), Fr::ONE),
                (aux(3), Fr::ZERO),
            ]
        );
        assert_eq!(lc.len(), 4);
    }

    #[test]
    fn scaled_combinations_add_and_subtract_in_place() {
        let x = LinearCombination::<Fr>::zero() + aux(0) + (Fr::from(3u64), aux(2));
        let mut lc = LinearCombination::zero() + aux(2);
        lc.add_assign_scaled(Fr::from(2u64), &x);
        lc.sub_assign_scaled(Fr::ONE, &x);
        let values = [Fr::from(10u64), Fr::from(20u64), Fr::from(30u64)];
        // (1 + 2*3 - 3) * 30 + (2 - 1) * 10
        assert_eq!(lc.eval(&[], &values), Fr::from(4 * 30 + 10u64));
        let sum = LinearCombination::zero() + &x - &x;
        assert_eq!(sum.eval(&[], &values), Fr::ZERO);
    }

    #[test]
    fn buffers_go_back_with_their_terms_and_come_back_empty() {
        let mut lc = LinearCombination::<Fr>::from_buffers(Vec::with_capacity(8), Vec::new());
        lc.add_assign_term(Fr::ONE, input(2));
        let (inputs, aux_terms) = lc.into_buffers();
        assert_eq!(inputs, vec![(2, Fr::ONE)]);
        assert!(aux_terms.is_empty());
        let again = LinearCombination::<Fr>::from_buffers(inputs, aux_terms);
        assert!(again.is_empty());
        assert!(again.into_buffers().0.capacity() >= 8);
    }
}
