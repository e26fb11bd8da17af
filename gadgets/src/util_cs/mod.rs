//! Tools for testing circuits: a constraint system that keeps names and values, and a way to
//! compare two constraint systems.

use ff::PrimeField;

use crate::LinearCombination;

pub mod test_cs;

/// One recorded constraint: `a`, `b`, `c` and the constraint's full path.
pub type Constraint<Scalar> = (
    LinearCombination<Scalar>,
    LinearCombination<Scalar>,
    LinearCombination<Scalar>,
    String,
);

/// A constraint system whose shape can be inspected and compared with another's.
pub trait Comparable<Scalar: PrimeField> {
    /// Number of inputs, the constant one included.
    fn num_inputs(&self) -> usize;
    /// Number of constraints.
    fn num_constraints(&self) -> usize;
    /// The input names, in allocation order.
    fn inputs(&self) -> Vec<String>;
    /// The aux variable names, in allocation order.
    fn aux(&self) -> Vec<String>;
    /// The recorded constraints, in order.
    fn constraints(&self) -> &[Constraint<Scalar>];

    /// How `self` differs from `other`: the first count mismatch (unless `ignore_counts`),
    /// else the first differing constraint, else `Equal` or `Different` (names differ).
    fn delta<C: Comparable<Scalar>>(&self, other: &C, ignore_counts: bool) -> Delta<Scalar>
    where
        Scalar: PrimeField,
    {
        let (own_inputs, other_inputs) = (self.num_inputs(), other.num_inputs());
        let (own_constraints, other_constraints) =
            (self.num_constraints(), other.num_constraints());
        if !ignore_counts && own_inputs != other_inputs {
            return Delta::InputCountMismatch(own_inputs, other_inputs);
        }
        if !ignore_counts && own_constraints != other_constraints {
            return Delta::ConstraintCountMismatch(own_constraints, other_constraints);
        }
        let (own, theirs) = (self.constraints(), other.constraints());
        if own != theirs {
            // Equal prefixes of different lengths compare unequal but have no differing pair,
            // so that case reports `Different`.
            return match own.iter().zip(theirs).position(|(x, y)| x != y) {
                Some(i) => Delta::ConstraintMismatch(i, own[i].clone(), theirs[i].clone()),
                None => Delta::Different,
            };
        }
        if own_inputs == other_inputs
            && own_constraints == other_constraints
            && self.inputs() == other.inputs()
        {
            Delta::Equal
        } else {
            Delta::Different
        }
    }
}

/// The outcome of [`Comparable::delta`].
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Delta<Scalar: PrimeField> {
    /// Same counts, input names and constraints.
    Equal,
    /// Same constraints, but counts or input names differ.
    Different,
    /// The input counts (self, other) differ.
    InputCountMismatch(usize, usize),
    /// The constraint counts (self, other) differ.
    ConstraintCountMismatch(usize, usize),
    /// The first constraint that differs: its position, ours and theirs.
    ConstraintMismatch(usize, Constraint<Scalar>, Constraint<Scalar>),
}
