//! A branch's recording appended to the recorder it was taken from: its own variables
//! renumbered to where they land, its rows copied after the recorder's (on the pool's
//! threads), and where its parts put their aux values carried over.

use super::*;

/// The parts a spread ran, as a branch per part taken at `point` would have placed them:
/// those this system ran after another since `here`'s first start (each ending where the next
/// begins, the last at `end`, where the branch lands), then the branch's, which begin at
/// `point` and at each of `theirs` in its numbering, the last ending at `branch_end`. With no
/// starts on either side, the branch whole.
pub(super) fn spread_parts(
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
    pub(super) fn branches_with(&self, companions: Vec<V>, count: usize) -> Option<Vec<Self>> {
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
    pub(super) fn landing_at(&self, at: BranchPoint) -> Landing {
        Landing {
            inputs_from: at.inputs,
            inputs_to: self.inputs.max(1),
            aux_from: at.aux,
            aux_to: self.aux,
        }
    }

    pub(super) fn append_remapped(&mut self, other: &Self, at: BranchPoint) -> Result<(), Fault> {
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
        // Each matrix's copies split over the pool's threads, as a branch's vectors are:
        // each thread faults in its share of the fresh pages, where a matrix per thread left
        // the largest on one.
        let copy = |(mine, theirs): (&mut MatrixBuilder, &MatrixBuilder)| {
            let base = mine.columns.len() as u32;
            let columns = |&col: &u32| renumbering.within_limit(col);
            append_mapped(&mut mine.columns, &theirs.columns, columns);
            let ids = |&id: &u16| ids[id as usize];
            append_mapped(&mut mine.coeff_ids, &theirs.coeff_ids, ids);
            let starts = |&start: &u32| base + start;
            append_mapped(&mut mine.row_starts, &theirs.row_starts[1..], starts);
        };
        let pairs = self.matrices[..].par_iter_mut().zip(&other.matrices[..]);
        pairs.for_each(copy);
        Ok(())
    }
}

/// Appends `theirs`, each mapped, to `mine` (room for it reserved), on the pool's threads
/// (rayon's `par_extend` of a slice writes in place).
fn append_mapped<T: Sync, U: Send>(
    mine: &mut Vec<U>,
    theirs: &[T],
    map: impl Fn(&T) -> U + Sync + Send,
) {
    mine.par_extend(theirs.par_iter().map(map));
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
