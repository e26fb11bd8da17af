//! Element 0's coefficient rows through the partial rounds, made once per thread and set of
//! constants instead of once per hash.
//!
//! In a partial round element 0 becomes `Σ_{i≥1} w_hat[i] · element i` plus the s-box
//! output, so its row over the basis is a sum of products of rows that only the constants
//! decide: at arity 8, about 17,000 field products per hash, where its witness needs about
//! 1,900. Those rows are the same for every hash with the same constants, so the
//! constraint-building path takes them from here.
//!
//! Reuse is by content, never by address: rows serve a hash only if the rows the partial
//! rounds start from and every partial round's `w_hat` and `v_rest` are equal to the ones
//! they were made from, so constants that differ in any element the rows depend on get rows
//! of their own. The rows are made by the same arithmetic a hash would do, so they are the
//! same field elements, bit for bit. Each thread keeps its own (no sharing, no locks), the
//! last few sets of constants it used.

use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;

use ff::PrimeField;

/// Sets of constants kept per thread: the Filecoin circuits use one per arity (2, 4, 8 and
/// 11, and the update's arity-2 randomness hash).
const KEPT: usize = 8;

thread_local! {
    static MADE: RefCell<Vec<Rc<dyn Any>>> = const { RefCell::new(Vec::new()) };
}

/// A partial round's sparse matrix: `w_hat` and `v_rest`.
pub(super) type Sparse<'c, Scalar> = (&'c [Scalar], &'c [Scalar]);

/// Element 0's row after each partial round, with what it was made from.
pub(super) struct PartialRows<Scalar> {
    start: Vec<Vec<Scalar>>,
    sparse: Vec<(Vec<Scalar>, Vec<Scalar>)>,
    firsts: Vec<Vec<Scalar>>,
}

impl<Scalar: PrimeField> PartialRows<Scalar> {
    /// The rows for partial rounds entered with the state's rows `start` and mixing with
    /// `sparse`, one per round: this thread's earlier ones if made from equal inputs, else
    /// made now (and kept, the oldest set dropped beyond [`KEPT`]).
    pub(super) fn for_rounds(start: &[Vec<Scalar>], sparse: &[Sparse<'_, Scalar>]) -> Rc<Self> {
        let found = MADE.try_with(|made| {
            made.borrow()
                .iter()
                .filter_map(|entry| Rc::clone(entry).downcast::<Self>().ok())
                .find(|rows| rows.made_from(start, sparse))
        });
        if let Ok(Some(rows)) = found {
            return rows;
        }
        let rows = Rc::new(Self::make(start, sparse));
        // A thread whose locals are being torn down makes its rows every time instead.
        let _ = MADE.try_with(|made| {
            let mut made = made.borrow_mut();
            if made.len() == KEPT {
                made.remove(0);
            }
            made.push(Rc::clone(&rows) as Rc<dyn Any>);
        });
        rows
    }

    /// Element 0's row after partial round `round` (counted from the first partial round).
    pub(super) fn first(&self, round: usize) -> &[Scalar] {
        &self.firsts[round]
    }

    fn made_from(&self, start: &[Vec<Scalar>], sparse: &[Sparse<'_, Scalar>]) -> bool {
        self.start == start
            && self.sparse.len() == sparse.len()
            && self
                .sparse
                .iter()
                .zip(sparse)
                .all(|((w, v), (w_hat, v_rest))| w == w_hat && v == v_rest)
    }

    /// What each partial round does to the rows: element 0 becomes the `w_hat` sum of the
    /// others' rows, with `w_hat[0]` on the new s-box output; element `j ≥ 1` gains
    /// `v_rest[j - 1]` on it.
    fn make(start: &[Vec<Scalar>], sparse: &[Sparse<'_, Scalar>]) -> Self {
        let mut rows = start.to_vec();
        let mut firsts = Vec::with_capacity(sparse.len());
        for (w_hat, v_rest) in sparse {
            let mut first: Vec<Scalar> = (0..rows.first().map_or(0, Vec::len))
                .map(|k| {
                    rows[1..]
                        .iter()
                        .zip(&w_hat[1..])
                        .fold(Scalar::ZERO, |acc, (row, w)| acc + row[k] * w)
                })
                .collect();
            first.push(w_hat[0]);
            for (row, v) in rows[1..].iter_mut().zip(v_rest.iter()) {
                row.push(*v);
            }
            rows[0].clone_from(&first);
            firsts.push(first);
        }
        PartialRows {
            start: start.to_vec(),
            sparse: sparse
                .iter()
                .map(|(w, v)| (w.to_vec(), v.to_vec()))
                .collect(),
            firsts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::Scalar as Fr;

    fn fr(n: u64) -> Fr {
        Fr::from(n)
    }

    /// Owned sparse matrices, `(w_hat, v_rest)` per round.
    type Matrices = Vec<(Vec<Fr>, Vec<Fr>)>;

    fn inputs(seed: u64) -> (Vec<Vec<Fr>>, Matrices) {
        let start = (0..3)
            .map(|j| (0..3).map(|k| fr(seed + 10 * j + k)).collect())
            .collect();
        let sparse = (0..4)
            .map(|r| {
                let w = (0..3).map(|i| fr(seed + 100 + 7 * r + i)).collect();
                let v = (0..2).map(|i| fr(seed + 200 + 5 * r + i)).collect();
                (w, v)
            })
            .collect();
        (start, sparse)
    }

    fn view(sparse: &[(Vec<Fr>, Vec<Fr>)]) -> Vec<Sparse<'_, Fr>> {
        sparse.iter().map(|(w, v)| (&w[..], &v[..])).collect()
    }

    #[test]
    fn the_rows_are_the_partial_rounds_products() {
        let (start, sparse) = inputs(1);
        let rows = PartialRows::make(&start, &view(&sparse));
        // Round 0 by hand: Σ_{i≥1} w[i]·start[i][k], then w[0] on the new s-box output.
        let (w, _) = &sparse[0];
        let expected: Vec<Fr> = (0..3)
            .map(|k| w[1] * start[1][k] + w[2] * start[2][k])
            .chain([w[0]])
            .collect();
        assert_eq!(rows.first(0), &expected[..]);
        // Each round's row is one longer: one more s-box output in the basis.
        assert_eq!(rows.first(3).len(), 7);
    }

    #[test]
    fn rows_are_reused_only_for_equal_inputs() {
        let (start, sparse) = inputs(1);
        let first = PartialRows::for_rounds(&start, &view(&sparse));
        let again = PartialRows::for_rounds(&start, &view(&sparse));
        assert!(Rc::ptr_eq(&first, &again), "equal inputs reuse the rows");

        // One element of one round's v_rest changed: rows of their own, equal to fresh ones.
        let mut other = sparse.clone();
        other[2].1[1] += fr(1);
        let changed = PartialRows::for_rounds(&start, &view(&other));
        assert!(!Rc::ptr_eq(&first, &changed));
        let fresh = PartialRows::make(&start, &view(&other));
        assert_eq!(changed.firsts, fresh.firsts);
        assert_ne!(changed.firsts, first.firsts);

        // Other starting rows, or fewer rounds: not reused either.
        let (moved, _) = inputs(2);
        let from_moved = PartialRows::for_rounds(&moved, &view(&sparse));
        assert_eq!(
            from_moved.firsts,
            PartialRows::make(&moved, &view(&sparse)).firsts
        );
        let fewer = PartialRows::for_rounds(&start, &view(&sparse[..3]));
        assert_eq!(fewer.firsts.len(), 3);
    }

    #[test]
    fn a_thread_keeps_a_bounded_number_of_sets() {
        std::thread::spawn(|| {
            for seed in 0..(KEPT as u64 + 3) {
                let (start, sparse) = inputs(1000 * seed);
                PartialRows::for_rounds(&start, &view(&sparse));
            }
            assert_eq!(MADE.with(|made| made.borrow().len()), KEPT);
        })
        .join()
        .unwrap();
    }
}
