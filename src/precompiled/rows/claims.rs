//! Rows that state a value: `(Σ c_i · x_i) · 1 = v`, with general coefficients on the
//! `x_i` (neptune's `ensure_allocated`, every MDS combination of a Poseidon hash). Their A
//! must equal the value of `v`, so instead of summing each one (tens of full field products)
//! evaluation checks all of them at once and takes `A·w = v`.
//!
//! The check: with `ρ` drawn at random when the recording is built or loaded, the claimed
//! rows `r_1 < r_2 < ...` hold together if `Σ_j ρ^j (A_{r_j}·w − v_{r_j}) = 0`, which is one
//! sum over the distinct variables the rows read, `Σ_k γ_k · w_k`, its coefficients `γ_k`
//! folded once per recording. Rows that hold make it zero exactly, so then every claimed
//! row's A is exactly `v` and evaluation is bit-identical to summing them. A witness for
//! which some claimed row does not hold makes it zero only when `ρ` is a root of a nonzero
//! polynomial of degree at most the number of claimed rows: probability at most
//! `rows / 2^128` over the draw (`ρ` comes from 128 bits of the process's randomness).
//! When the sum is not zero, every claimed row is summed exactly instead, so an
//! unsatisfied row is found and named as any other.
//!
//! The folded coefficients are kept as `16·γ_k`: the sum is zero exactly when the sum of
//! the `γ_k · w_k` is (16 is invertible), and that is the form the eight-lane products take
//! their constants in (`crate::lanes`), so both paths read the same coefficients.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::ops::Range;
use std::sync::OnceLock;

use ff::PrimeField;
use rayon::prelude::*;

use crate::error::Error;
use crate::precompiled::rows::matrix::Matrix;
use crate::precompiled::rows::row_sets::{pieces, RankedRows, RowSet};
use crate::precompiled::storage::sections::{SectionReader, SectionWriter, Sections, Source};
use crate::precompiled::storage::words::Words;

/// The rows of a recording that state a value, and the folded check.
pub(crate) struct Claims<Scalar> {
    /// Which rows are claimed.
    rows: RankedRows,
    /// Per claimed row, the position of its stated value `v`.
    stated: Words<u32>,
    /// The distinct positions the check reads, and their folded coefficients `γ_k`, times
    /// 16: made when the claims are found; for claims read from a file, converted from
    /// their canonical representations (`reprs`) on first use, in parallel, so opening a
    /// file does not pay for it (`None`: one is no field element, and the check never
    /// holds, so every claimed row is summed).
    positions: Words<u32>,
    coefficients: OnceLock<Option<Vec<Scalar>>>,
    reprs: Words<u8>,
}

impl<Scalar> Default for Claims<Scalar> {
    fn default() -> Self {
        Claims {
            rows: RankedRows::default(),
            stated: Words::default(),
            positions: Words::default(),
            coefficients: OnceLock::from(Some(Vec::new())),
            reprs: Words::default(),
        }
    }
}

/// The eight-lane products, where the field and CPU have them.
#[cfg(all(target_arch = "x86_64", feature = "neptune-11"))]
type ClaimLanes = Option<crate::precompiled::rows::lanes_x86_64::Lanes>;
#[cfg(not(all(target_arch = "x86_64", feature = "neptune-11")))]
#[derive(Clone, Copy)]
struct ClaimLanes;

/// The lanes for `Scalar` (only blstrs' field has them, where the CPU does).
#[cfg_attr(
    not(all(target_arch = "x86_64", feature = "neptune-11")),
    allow(clippy::extra_unused_type_parameters)
)]
fn lanes<Scalar: PrimeField>() -> ClaimLanes {
    #[cfg(all(target_arch = "x86_64", feature = "neptune-11"))]
    return crate::precompiled::rows::lanes_x86_64::Lanes::for_field::<Scalar>();
    #[cfg(not(all(target_arch = "x86_64", feature = "neptune-11")))]
    ClaimLanes
}

/// `weight · coefficient(k)` for `k < n` (at most eight) into `out`: eight at a time on
/// the lanes where there are some, one by one otherwise.
#[inline]
fn scale<'c, Scalar: PrimeField>(
    lanes: ClaimLanes,
    weight: &Scalar,
    n: usize,
    coefficient: impl Fn(usize) -> &'c Scalar,
    out: &mut [Scalar; 8],
) {
    #[cfg(all(target_arch = "x86_64", feature = "neptune-11"))]
    if let Some(lanes) = lanes {
        return lanes.scale(weight, n, coefficient, out);
    }
    #[cfg(not(all(target_arch = "x86_64", feature = "neptune-11")))]
    let ClaimLanes = lanes;
    for (k, out) in out.iter_mut().enumerate().take(n) {
        *out = *weight * coefficient(k);
    }
}

/// The folded coefficients, summed per position. The rows that state values read aux
/// variables allocated shortly before them (a Poseidon hash's rows read the hash's own
/// variables), so their sums live in a window of positions that slides forward, each slot
/// a position modulo its size, and leave it in position order; an aux position behind the
/// window (rare) and the inputs (the constant one above all, after every aux position) are
/// summed apart and merged at the end.
struct Fold<Scalar> {
    /// The first input's position: aux positions are below it.
    inputs: u32,
    /// The lowest position the window holds.
    base: u32,
    window: Vec<Scalar>,
    /// Sums that left the window, by position.
    out: Vec<(u32, Scalar)>,
    /// Sums of aux positions behind the window, and of inputs.
    apart: HashMap<u32, Scalar>,
}

/// Positions the window holds: a power of two.
const WINDOW: u32 = 1 << 14;

impl<Scalar: PrimeField> Fold<Scalar> {
    /// Nothing summed yet, for a recording whose inputs start at position `inputs`.
    fn new(inputs: u32) -> Self {
        Fold {
            inputs,
            base: 0,
            window: vec![Scalar::ZERO; WINDOW as usize],
            out: Vec::new(),
            apart: HashMap::new(),
        }
    }

    /// Adds `value` to the sum of `position`.
    #[inline]
    fn add(&mut self, position: u32, value: Scalar) {
        if position < self.base || position >= self.inputs {
            *self.apart.entry(position).or_insert(Scalar::ZERO) += value;
            return;
        }
        if position - self.base >= WINDOW {
            // Keep half a window behind the new position.
            self.advance(position - WINDOW / 2);
        }
        self.window[(position % WINDOW) as usize] += value;
    }

    /// Moves the sums of positions below `base` out of the window.
    fn advance(&mut self, base: u32) {
        let end = base.min(self.base.saturating_add(WINDOW));
        for position in self.base..end {
            let slot = &mut self.window[(position % WINDOW) as usize];
            if *slot != Scalar::ZERO {
                self.out
                    .push((position, std::mem::replace(slot, Scalar::ZERO)));
            }
        }
        self.base = base;
    }

    /// Every nonzero sum, by position. A sum of zero weighs nothing in the check, so it
    /// may be left out.
    fn finish(mut self) -> Vec<(u32, Scalar)> {
        self.advance(self.base.saturating_add(WINDOW));
        let mut out = self.out;
        if !self.apart.is_empty() {
            out.extend(self.apart);
            combine(&mut out);
        }
        out
    }
}

/// Sorts `sums` by position (on the pool's threads), sums those of the same position and
/// leaves out the sums of zero.
fn combine<Scalar: PrimeField>(sums: &mut Vec<(u32, Scalar)>) {
    sums.par_sort_unstable_by_key(|(position, _)| *position);
    sums.dedup_by(|(p, later), (q, earlier)| {
        let same = p == q;
        if same {
            *earlier += *later;
        }
        same
    });
    sums.retain(|(_, sum)| *sum != Scalar::ZERO);
}

/// The claimed rows of one piece of the rows, its fold weighted from `16·ρ` at its first
/// claimed row.
struct ClaimPiece<Scalar> {
    /// Which of the piece's rows are claimed, from its first.
    claimed: RowSet,
    /// Per claimed row, the position of its stated value.
    stated: Vec<u32>,
    /// The piece's folded coefficients, by position.
    sums: Vec<(u32, Scalar)>,
}

impl<Scalar: PrimeField> ClaimPiece<Scalar> {
    /// The claimed rows among `rows` (see [`Claims::new`]), the `l`-th of them (from 1)
    /// weighted `16·ρ^l`; `ones` says which entries of `dictionary` are 1.
    fn new(
        [a, b, c]: &[Matrix; 3],
        rows: Range<usize>,
        one: u32,
        dictionary: &[Scalar],
        ones: &[bool],
        general: &(impl Fn(u16) -> bool + Sync),
        rho: Scalar,
    ) -> Self {
        // Every row is asked whether its B and C are one variable with coefficient 1: B's
        // variable (the one) tested first, the coefficient looked up in `ones`.
        let unit = |matrix: &Matrix, row: usize, column: Option<u32>| {
            let start = matrix.row_starts[row] as usize;
            (matrix.row_starts[row + 1] as usize == start + 1
                && column.is_none_or(|column| matrix.columns[start] == column)
                && ones[usize::from(matrix.coeff_ids[start])])
            .then(|| matrix.columns[start])
        };
        let mut claimed = RowSet::with_rows(rows.len());
        let mut stated = Vec::new();
        // Starting from 16 keeps every coefficient 16 times itself (see the module's
        // comment).
        let mut weight = Scalar::from(16);
        let mut folded = Fold::new(one);
        let lanes = lanes::<Scalar>();
        for row in rows.clone() {
            let (Some(_), Some(v)) = (unit(b, row, Some(one)), unit(c, row, None)) else {
                continue;
            };
            if v == one || !a.picks_on_a_variable(row, one, general) {
                continue;
            }
            let (columns, ids) = a.row(row);
            claimed.insert(row - rows.start);
            stated.push(v);
            weight *= rho;
            let mut products = [Scalar::ZERO; 8];
            for (columns, ids) in columns.chunks(8).zip(ids.chunks(8)) {
                let coefficient = |k: usize| &dictionary[usize::from(ids[k])];
                scale(lanes, &weight, ids.len(), coefficient, &mut products);
                for (&column, product) in columns.iter().zip(products) {
                    folded.add(column, product);
                }
            }
            folded.add(v, -weight);
        }
        ClaimPiece {
            claimed,
            stated,
            sums: folded.finish(),
        }
    }
}

/// A random element for the check: 128 bits from the process's randomness (the keys of
/// std's `RandomState`, drawn from the operating system).
fn random<Scalar: PrimeField>() -> Scalar {
    let state = std::collections::hash_map::RandomState::new();
    let word = |salt: u64| {
        let mut hasher = state.build_hasher();
        hasher.write_u64(salt);
        hasher.finish()
    };
    let high = u128::from(word(1)) << 64 | u128::from(word(2));
    Scalar::from_u128(high)
}

impl<Scalar: PrimeField> Claims<Scalar> {
    /// The claimed rows of the matrices `[a, b, c]`, whose constant one is at position
    /// `one` and whose dictionary is `dictionary`: a row whose B is the one with
    /// coefficient 1, whose C is one other variable with coefficient 1, and whose A has
    /// `general` hold of some coefficient on a variable other than the one.
    pub(crate) fn new(
        matrices: &[Matrix; 3],
        one: u32,
        dictionary: &[Scalar],
        general: impl Fn(u16) -> bool + Sync,
    ) -> Self {
        let pieces = pieces(matrices[0].rows());
        Self::by_pieces(matrices, pieces, one, dictionary, general, random())
    }

    /// [`Claims::new`] with `ρ` given, its rows looked at in `pieces` (from [`pieces`] or
    /// [`crate::precompiled::rows::row_sets::pieces_of`]) on the pool's threads.
    fn by_pieces(
        matrices: &[Matrix; 3],
        pieces: Vec<Range<usize>>,
        one: u32,
        dictionary: &[Scalar],
        general: impl Fn(u16) -> bool + Sync,
        rho: Scalar,
    ) -> Self {
        // Which dictionary entries are 1, for the pieces' per-row tests.
        let ones: Vec<bool> = dictionary.iter().map(|c| *c == Scalar::ONE).collect();
        let mut found: Vec<ClaimPiece<Scalar>> = pieces
            .into_par_iter()
            .map(|rows| ClaimPiece::new(matrices, rows, one, dictionary, &ones, &general, rho))
            .collect();
        // The partition's claimed row `j` (from 1) weighs `16·ρ^j`; a piece weighed its own
        // from `16·ρ`, so its sums are multiplied by `ρ` to the power of the claimed rows
        // before it.
        let mut before = Scalar::ONE;
        let factors: Vec<Scalar> = found
            .iter()
            .map(|piece| {
                let factor = before;
                before *= rho.pow_vartime([piece.stated.len() as u64]);
                factor
            })
            .collect();
        found
            .par_iter_mut()
            .zip(factors)
            .for_each(|(piece, factor)| {
                for (_, sum) in &mut piece.sums {
                    *sum *= factor;
                }
            });
        if found.iter().all(|piece| piece.stated.is_empty()) {
            // A recording without claimed rows holds nothing for them.
            return Claims::default();
        }
        let mut sums = Vec::with_capacity(found.iter().map(|piece| piece.sums.len()).sum());
        let mut stated = Vec::new();
        let mut sets = Vec::with_capacity(found.len());
        for piece in found {
            sums.extend(piece.sums);
            stated.extend(piece.stated);
            sets.push(piece.claimed);
        }
        // Pieces read some of the same positions (variables allocated before the pieces'
        // rows, the constant one): their sums are summed.
        combine(&mut sums);
        let (positions, coefficients): (Vec<u32>, Vec<Scalar>) = sums.into_iter().unzip();
        Claims {
            rows: RowSet::joined(sets).ranked(),
            stated: stated.into(),
            positions: positions.into(),
            coefficients: OnceLock::from(Some(coefficients)),
            reprs: Words::default(),
        }
    }

    /// Whether the claimed rows hold together for these values (aux values first, then
    /// inputs): the folded sum is zero.
    pub(crate) fn hold(&self, [inputs, aux]: [&[Scalar]; 2]) -> bool {
        let value = |position: u32| match aux.get(position as usize) {
            Some(value) => value,
            None => &inputs[position as usize - aux.len()],
        };
        let Some(coefficients) = self.folded() else {
            return false;
        };
        #[cfg(all(target_arch = "x86_64", feature = "neptune-11"))]
        let lanes = crate::precompiled::rows::lanes_x86_64::Lanes::for_field::<Scalar>();
        let sum = self
            .positions
            .par_chunks(1 << 12)
            .zip(coefficients.par_chunks(1 << 12))
            .map(|(positions, coefficients)| {
                #[cfg(all(target_arch = "x86_64", feature = "neptune-11"))]
                if let Some(lanes) = lanes {
                    return lanes.dot(positions, coefficients, value);
                }
                positions
                    .iter()
                    .zip(coefficients)
                    .fold(Scalar::ZERO, |acc, (&p, c)| acc + *value(p) * c)
            })
            .reduce(|| Scalar::ZERO, |x, y| x + y);
        sum == Scalar::ZERO
    }

    /// The folded coefficients, converted from the file's representations on first use;
    /// `None` when one of them is no field element (or they do not match the positions).
    fn folded(&self) -> Option<&[Scalar]> {
        self.coefficients
            .get_or_init(|| {
                let len = repr_len::<Scalar>();
                if self.reprs.len() != self.positions.len() * len {
                    return None;
                }
                self.reprs
                    .par_chunks(len)
                    .map(|bytes| {
                        let mut repr = Scalar::Repr::default();
                        repr.as_mut().copy_from_slice(bytes);
                        Option::from(Scalar::from_repr(repr))
                    })
                    .collect()
            })
            .as_deref()
    }

    /// The position of the value row `row` states, if it is a claimed row.
    #[inline]
    pub(crate) fn stated(&self, row: usize) -> Option<u32> {
        self.rows.index(row).map(|index| self.stated[index])
    }

    /// Claimed rows.
    pub(crate) fn len(&self) -> usize {
        self.stated.len()
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.rows.bytes()
            + 4 * (self.stated.len() + self.positions.len())
            + std::mem::size_of::<Scalar>() * self.folded().map_or(0, <[Scalar]>::len)
    }
}

/// The folded coefficients are written as their canonical representations (a field
/// element's memory form is the field's own business) and converted on first use; the rest
/// is read in place.
impl<Scalar: PrimeField> Sections for Claims<Scalar> {
    fn write_sections(&self, out: &mut SectionWriter<'_>) -> io::Result<()> {
        self.rows.write_sections(out)?;
        out.words(&self.stated)?;
        out.words(&self.positions)?;
        match self.folded() {
            Some(coefficients) => {
                let mut reprs = Vec::with_capacity(coefficients.len() * repr_len::<Scalar>());
                for coefficient in coefficients {
                    reprs.extend_from_slice(coefficient.to_repr().as_ref());
                }
                out.words(&reprs)
            }
            None => out.words(&self.reprs),
        }
    }

    fn read_sections<S: Source>(input: &mut SectionReader<S>) -> Result<Self, Error> {
        let rows = RankedRows::read_sections(input)?;
        let stated = input.words()?;
        let positions: Words<u32> = input.words()?;
        let reprs = input.exactly(
            positions.len() * repr_len::<Scalar>(),
            "folded coefficients",
        )?;
        Ok(Claims {
            rows,
            stated,
            positions,
            coefficients: OnceLock::new(),
            reprs,
        })
    }
}

/// Bytes of a field element's canonical representation.
fn repr_len<Scalar: PrimeField>() -> usize {
    Scalar::Repr::default().as_ref().len()
}

#[cfg(test)]
mod tests;
