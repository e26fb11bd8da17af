//! The term list behind one half (inputs or aux) of a `LinearCombination`.
//!
//! Invariants, relied on by every method here and by the evaluation kernels that read the
//! terms as slices:
//! 1. Entries are sorted by strictly increasing variable index: one entry per index.
//! 2. A term whose coefficients cancelled to zero stays in the list (upstream keeps it too:
//!    `len()` and `iter()` see it; the evaluators skip it).
//! 3. The backing `Vec` may come from a caller's buffer pool; it is only ever grown, never
//!    shrunk, so a recycled buffer keeps its capacity.

/// A sorted, merged list of `(variable index, coefficient)` pairs.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Terms<Scalar> {
    entries: Vec<(usize, Scalar)>,
}

impl<Scalar> Default for Terms<Scalar> {
    fn default() -> Self {
        Terms {
            entries: Vec::new(),
        }
    }
}

impl<Scalar: Copy + core::ops::AddAssign> Terms<Scalar> {
    /// Adopts `buffer` as storage, discarding its contents but keeping its capacity.
    pub(crate) fn from_buffer(mut buffer: Vec<(usize, Scalar)>) -> Self {
        buffer.clear();
        Terms { entries: buffer }
    }

    pub(crate) fn single(index: usize, coeff: Scalar) -> Self {
        Terms {
            entries: vec![(index, coeff)],
        }
    }

    pub(crate) fn into_buffer(self) -> Vec<(usize, Scalar)> {
        self.entries
    }

    pub(crate) fn as_slice(&self) -> &[(usize, Scalar)] {
        &self.entries
    }

    pub(crate) fn coeffs_mut(&mut self) -> impl Iterator<Item = (usize, &mut Scalar)> + '_ {
        self.entries
            .iter_mut()
            .map(|(index, coeff)| (*index, coeff))
    }

    pub(crate) fn reserve(&mut self, additional: usize) {
        self.entries.reserve(additional);
    }

    /// Adds `coeff` to the coefficient of `index`, inserting the term if it is new.
    #[inline]
    pub(crate) fn add(&mut self, index: usize, coeff: Scalar) {
        // Gadgets mostly add variables in allocation order, so the end is checked first and
        // the binary search (and the memmove of an insert) is the rare case.
        match self.entries.last_mut() {
            None => {
                self.entries.push((index, coeff));
                return;
            }
            Some(last) if last.0 < index => {
                self.entries.push((index, coeff));
                return;
            }
            Some(last) if last.0 == index => {
                last.1 += coeff;
                return;
            }
            Some(_) => {}
        }
        match self.entries.binary_search_by_key(&index, |entry| entry.0) {
            Ok(position) => self.entries[position].1 += coeff,
            Err(position) => self.entries.insert(position, (index, coeff)),
        }
    }

    /// Adds `map(c)` for every term `(i, c)` of `other`, which obeys invariant 1.
    ///
    /// Equivalent to calling [`Terms::add`] once per term of `other`, but costs one pass over
    /// both lists instead of one memmove per out-of-order term.
    pub(crate) fn merge(&mut self, other: &[(usize, Scalar)], map: impl Fn(Scalar) -> Scalar) {
        let (first_new, last_old) = match (other.first(), self.entries.last()) {
            (None, _) => return,
            (Some(first), Some(last)) => (first.0, last.0),
            (Some(_), None) => {
                self.entries
                    .extend(other.iter().map(|&(index, coeff)| (index, map(coeff))));
                return;
            }
        };
        if first_new > last_old {
            self.entries
                .extend(other.iter().map(|&(index, coeff)| (index, map(coeff))));
            return;
        }
        if other.len() <= 2 {
            for &(index, coeff) in other {
                self.add(index, map(coeff));
            }
            return;
        }
        self.merge_interleaved(other, map);
    }

    /// The general case of [`Terms::merge`]: grow by the number of new indices, then merge
    /// from the back so every entry moves at most once.
    fn merge_interleaved(&mut self, other: &[(usize, Scalar)], map: impl Fn(Scalar) -> Scalar) {
        let old_len = self.entries.len();
        let fresh = count_missing(&self.entries, other);
        let filler = other[0];
        self.entries.resize(old_len + fresh, filler);

        let mut read_old = old_len;
        let mut read_new = other.len();
        let mut write = old_len + fresh;
        while read_new > 0 {
            let (new_index, new_coeff) = other[read_new - 1];
            write -= 1;
            if read_old > 0 && self.entries[read_old - 1].0 > new_index {
                self.entries[write] = self.entries[read_old - 1];
                read_old -= 1;
            } else if read_old > 0 && self.entries[read_old - 1].0 == new_index {
                let mut merged = self.entries[read_old - 1].1;
                merged += map(new_coeff);
                self.entries[write] = (new_index, merged);
                read_old -= 1;
                read_new -= 1;
            } else {
                self.entries[write] = (new_index, map(new_coeff));
                read_new -= 1;
            }
        }
        debug_assert_eq!(write, read_old);
    }
}

/// How many indices of `other` do not occur in `sorted`; both obey invariant 1.
fn count_missing<Scalar>(sorted: &[(usize, Scalar)], other: &[(usize, Scalar)]) -> usize {
    let mut missing = 0;
    let mut cursor = 0;
    for &(index, _) in other {
        while cursor < sorted.len() && sorted[cursor].0 < index {
            cursor += 1;
        }
        if cursor == sorted.len() || sorted[cursor].0 != index {
            missing += 1;
        }
    }
    missing
}

#[cfg(test)]
mod tests {
    use super::Terms;

    fn naive(ops: &[(usize, i64)]) -> Vec<(usize, i64)> {
        let mut out: Vec<(usize, i64)> = Vec::new();
        for &(index, coeff) in ops {
            match out.iter_mut().find(|entry| entry.0 == index) {
                Some(entry) => entry.1 += coeff,
                None => out.push((index, coeff)),
            }
        }
        out.sort_by_key(|entry| entry.0);
        out
    }

    #[test]
    fn add_keeps_sorted_merged_and_cancelled_terms() {
        let ops = [(5, 1), (2, 3), (5, -1), (9, 2), (0, 1), (2, 1), (7, 4)];
        let mut terms = Terms::default();
        for &(index, coeff) in &ops {
            terms.add(index, coeff);
        }
        assert_eq!(terms.as_slice(), naive(&ops).as_slice());
        assert!(terms.as_slice().contains(&(5, 0)));
    }

    #[test]
    fn merge_equals_repeated_add() {
        let base = [(1, 1), (4, 2), (6, 3), (10, 4)];
        let others: [&[(usize, i64)]; 5] = [
            &[(0, 1), (4, -2), (5, 1), (11, 1)],
            &[(11, 1), (12, 1), (13, 1)],
            &[(0, 7)],
            &[(1, 1), (4, 1), (6, 1), (10, 1)],
            &[(2, 1), (3, 1), (7, 1), (8, 1), (9, 1)],
        ];
        for other in others {
            let mut merged = Terms::default();
            let mut added = Terms::default();
            for &(index, coeff) in &base {
                merged.add(index, coeff);
                added.add(index, coeff);
            }
            merged.merge(other, |c| -3 * c);
            for &(index, coeff) in other {
                added.add(index, -3 * coeff);
            }
            assert_eq!(merged, added, "merging {other:?}");
        }
    }

    #[test]
    fn recycled_buffer_keeps_capacity() {
        let mut buffer = Vec::with_capacity(64);
        buffer.push((3usize, 1i64));
        let terms = Terms::from_buffer(buffer);
        assert!(terms.as_slice().is_empty());
        assert!(terms.into_buffer().capacity() >= 64);
    }
}
