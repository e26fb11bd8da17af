//! One partition on every core: independent parts of a circuit (a PoRep or SnapDeals
//! partition's challenges, a SnapDeals apex tree's row of hashes) synthesized at once on the
//! rayon pool's threads, the first in the constraint system itself and others in branches of
//! it, the branches then appended in order, so the result is the one-thread result bit for
//! bit.
//!
//! A branch ([`bellpepper_core::Spreading::branches`]) continues from its system as it
//! stood when taken: it reads the variables allocated before (the partition's commitments,
//! replica_id's bits) under their indices, and numbers its own after them.
//! [`ConstraintSystem::extend`] then appends what it added: a prover's assignment appends
//! rows, values and densities (and marks the densities of the earlier variables the branch
//! used); a recorder renumbers the branch's own variables to where they land. Every part is
//! synthesized exactly as it would be in the system itself, in the same order within the
//! part, and the parts land in their order: the same constraints in the same order, the
//! same variables, for any number of threads. Parts whose outputs later parts read (the
//! hashes of a tree's row, read by the next row) return them through [`spread_returning`],
//! which moves each to where its branch landed ([`bellpepper_core::Spreading::landing`]);
//! [`spread_small_returning`] spreads such parts only where the system says parts small
//! beside what it holds pay ([`Ways::small_parts`]).
//!
//! What branches cost: a prover's assignment gives each branch a copy of its values so far,
//! made by the pool's threads, or, for two branches or more and many values, one copy read
//! by all the branches taken at that point ([`bellpepper_core::Spreading::branches`]): few values
//! after a PoRep partition's shared variables; 5.9 million before a 32 GiB SnapDeals
//! partition's challenges. Before each row of its apex tree there are up to as many, for a
//! row of far fewer: those rows go through [`spread_small_returning`], which the assignment
//! does not spread (the recorder and the witness generator do). Then fresh memory for what
//! each branch adds, and one copy of that into the system. So a system that copies
//! its branches in (a prover's assignment, a recorder) gets one branch per thread, each
//! running consecutive parts one after another: on two threads half the parts are copied,
//! not all but the first. A recording notes where each part's aux variables landed, as a
//! branch per part would have put them, whatever the threads it was made on, and the witness
//! generated from it hands each part a branch of its own with that range of the system's own
//! vector, to write in place with nothing to copy (`precompiled/witness/spread.rs`;
//! docs/journal.md has the measurements).

use std::sync::atomic::{AtomicBool, Ordering};

use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{
    ConstraintSystem, Landing, LinearCombination, SynthesisError, Variable, Ways,
};
use ff::PrimeField;
use rayon::prelude::*;

use crate::protocol::root_without_names;

/// Whether [`spread`] spreads parts at all ([`crate::tuning::Knobs::branches`]).
static SPREADING: AtomicBool = AtomicBool::new(true);

/// Whether [`spread`] takes a branch per thread for a system that copies its branches in
/// ([`crate::tuning::Knobs::branch_per_thread`]).
static BRANCH_PER_THREAD: AtomicBool = AtomicBool::new(true);

pub(crate) fn set_branches(on: bool) {
    SPREADING.store(on, Ordering::Relaxed);
}

pub(crate) fn set_branch_per_thread(on: bool) {
    BRANCH_PER_THREAD.store(on, Ordering::Relaxed);
}

/// What [`spread`] did with the parts.
#[derive(Debug)]
#[must_use = "parts handed back must still be synthesized"]
pub enum Spread<P> {
    /// Every part was synthesized, in a branch appended in order or in the system itself.
    Done,
    /// The parts, untouched, for the caller's own way: where branches are turned off
    /// ([`crate::tuning::Knobs::branches`]), where the system cannot take a branch, and, with
    /// one part or one thread, where it cannot take the parts in place either.
    Here(Vec<P>),
}

/// Synthesizes `parts` into `cs` as `synthesize(cs, i, part)` for each in order would, on
/// every thread of the current rayon pool: the parts cut into runs of consecutive parts,
/// one per thread (one per part where `cs` writes branches in place,
/// [`Ways::branches_in_place`]), the first run in `cs` itself (in the storage it already
/// has), each other in a branch of `cs` taken before any part starts, all at once, then the
/// branches appended in order; a part run after another in the same system is announced to
/// it ([`bellpepper_core::Spreading::next_part`]). With one part or one thread, a system
/// that takes parts in place ([`Ways::parts_in_place`]) runs them all itself, one after
/// another, so a caller whose own way is a system from `new()` per group of parts
/// (storage-proofs-post's) copies nothing there either.
///
/// `synthesize` may read any variable allocated in `cs` before this call, and nothing a part
/// allocates may be used by another part or after this call (the parts are independent, as a
/// PoRep partition's challenges are). A part's error is returned (the first in order), as the
/// loop would have returned it, with `cs` as the loop leaves it: the parts before it appended,
/// and what the failing part added before it failed. So what a branch's system noted about
/// the failure (memory it could not have) reaches `cs`, which names it as it would have named
/// its own.
///
/// Returns [`Spread::Here`] with the parts untouched where spreading cannot help, so the
/// caller runs its own loop and a system that cannot branch (a test system keeping names)
/// sees the circuit exactly as before.
pub fn spread<Scalar, CS, P, F>(
    cs: &mut CS,
    parts: Vec<P>,
    synthesize: F,
) -> Result<Spread<P>, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
    P: Send,
    F: Fn(&mut CS::Root, usize, P) -> Result<(), SynthesisError> + Sync,
{
    Ok(match spread_parts(cs, parts, synthesize, false, false)? {
        Returned::Done(_) => Spread::Done,
        Returned::Here(parts) => Spread::Here(parts),
    })
}

/// What [`spread_returning`] did with the parts.
#[derive(Debug)]
#[must_use = "parts handed back must still be synthesized"]
pub enum Returned<P, R> {
    /// Every part was synthesized, as [`Spread::Done`]; what each returned, in the parts'
    /// order, naming the system's variables.
    Done(Vec<R>),
    /// The parts, untouched, as [`Spread::Here`]; also where the system cannot say where a
    /// branch's variables land ([`bellpepper_core::Spreading::landing`]).
    Here(Vec<P>),
}

/// [`spread`] for parts that hand variables on: each returns what it allocated for later
/// use (a hash's output, which the next row of a tree hashes), and gets it back naming the
/// variable where it landed in `cs`, as if the part had run there. The parts stay
/// independent of each other; what they return may be used once this call has returned.
pub fn spread_returning<Scalar, CS, P, R, F>(
    cs: &mut CS,
    parts: Vec<P>,
    synthesize: F,
) -> Result<Returned<P, R>, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
    P: Send,
    R: Relocate + Send,
    F: Fn(&mut CS::Root, usize, P) -> Result<R, SynthesisError> + Sync,
{
    spread_parts(cs, parts, synthesize, true, false)
}

/// [`spread_returning`] for parts small beside what `cs` holds before them, such as a tree's
/// rows, each spread after all the rows below it: where `cs` says such parts are not worth
/// spreading
/// ([`Ways::small_parts`]: a system whose branches start from a copy of
/// the values so far) it returns [`Returned::Here`] with the parts untouched, and the caller
/// runs them here. A recorder spreads them (the places it notes let the witness from its
/// recording write them at once), and so does that witness, whose branches copy nothing
/// (SnapDeals' apex tree: docs/journal.md).
pub fn spread_small_returning<Scalar, CS, P, R, F>(
    cs: &mut CS,
    parts: Vec<P>,
    synthesize: F,
) -> Result<Returned<P, R>, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
    P: Send,
    R: Relocate + Send,
    F: Fn(&mut CS::Root, usize, P) -> Result<R, SynthesisError> + Sync,
{
    spread_parts(cs, parts, synthesize, true, true)
}

/// What a part returns to its caller, moved to where its variables land when its branch is
/// appended ([`spread_returning`]).
pub trait Relocate: Sized {
    /// The same value naming, through `landing`, the system's variables.
    fn relocate(self, landing: &Landing) -> Result<Self, SynthesisError>;
}

impl Relocate for () {
    fn relocate(self, _: &Landing) -> Result<Self, SynthesisError> {
        Ok(())
    }
}

impl Relocate for Variable {
    fn relocate(self, landing: &Landing) -> Result<Self, SynthesisError> {
        Ok(landing.variable(self))
    }
}

impl<Scalar: PrimeField> Relocate for AllocatedNum<Scalar> {
    /// bellpepper-core's `AllocatedNum` has no public constructor from its variable and
    /// value: it is allocated again in a system whose one allocation is the landed variable.
    fn relocate(self, landing: &Landing) -> Result<Self, SynthesisError> {
        let value = self.get_value();
        let mut place = Place(Some(landing.variable(self.get_variable())));
        AllocatedNum::alloc(&mut place, || {
            value.ok_or(SynthesisError::AssignmentMissing)
        })
    }
}

impl<T: Relocate> Relocate for Vec<T> {
    fn relocate(self, landing: &Landing) -> Result<Self, SynthesisError> {
        self.into_iter()
            .map(|item| item.relocate(landing))
            .collect()
    }
}

/// A system whose one allocation (aux or input) is a given variable, its value computed
/// if the circuit has one (a missing value is no error: the variable is still placed).
struct Place(Option<Variable>);

impl Place {
    fn take(&mut self) -> Result<Variable, SynthesisError> {
        self.0.take().ok_or_else(|| {
            SynthesisError::IncompatibleLengthVector(
                "a relocated value allocates one variable".into(),
            )
        })
    }
}

impl<Scalar: PrimeField> ConstraintSystem<Scalar> for Place {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let _ = f();
        self.take()
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let _ = f();
        self.take()
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
    }

    root_without_names!();
}

/// [`spread`] and [`spread_returning`]: the parts' results relocated where `relocate` says
/// they name variables (a system that cannot say where they land then gets the parts back);
/// where `small` is true, a system not spreading small parts gets them back too.
fn spread_parts<Scalar, CS, P, R, F>(
    cs: &mut CS,
    parts: Vec<P>,
    synthesize: F,
    relocate: bool,
    small: bool,
) -> Result<Returned<P, R>, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
    P: Send,
    R: Relocate + Send,
    F: Fn(&mut CS::Root, usize, P) -> Result<R, SynthesisError> + Sync,
{
    let ways = cs
        .spreading()
        .map_or(Ways::default(), |spreading| spreading.ways());
    if !SPREADING.load(Ordering::Relaxed) || (small && !ways.small_parts) {
        return Ok(Returned::Here(parts));
    }
    if parts.len() < 2 || rayon::current_num_threads() < 2 {
        if !ways.parts_in_place {
            return Ok(Returned::Here(parts));
        }
        let root = cs.get_root();
        let mut results = Vec::with_capacity(parts.len());
        for (i, part) in parts.into_iter().enumerate() {
            results.push(synthesize(root, i, part)?);
        }
        return Ok(Returned::Done(results));
    }
    // A branch copied in costs a copy of what it made and of the values before it, so such a
    // system gets a branch per thread, each running consecutive parts; one written in place
    // costs neither, and a branch per part lets the pool share them out.
    let runs = if ways.branches_in_place || !BRANCH_PER_THREAD.load(Ordering::Relaxed) {
        parts.len()
    } else {
        parts.len().min(rayon::current_num_threads())
    };
    // A system that hands back another number of branches than asked is taken as one that
    // cannot branch: every part must run exactly once.
    let branches = match cs
        .spreading()
        .and_then(|spreading| spreading.branches(runs - 1))
    {
        Some(branches) if branches.len() == runs - 1 => branches,
        _ => return Ok(Returned::Here(parts)),
    };
    // Where a branch lands when appended now, as the system says (`None`: it cannot say).
    let landing = |cs: &mut CS, branch: &CS::Root| cs.spreading()?.landing(branch);
    if relocate && landing(cs, &branches[0]).is_none() {
        return Ok(Returned::Here(parts));
    }
    let mut runs = consecutive(parts, runs).into_iter();
    let first = runs.next().expect("two runs or more");
    let root = cs.get_root();
    let (first, others) = rayon::join(
        || run(root, first, &synthesize),
        || {
            branches
                .into_par_iter()
                .zip(runs.collect::<Vec<_>>())
                .map(|(mut branch, parts)| {
                    let outcome = run(&mut branch, parts, &synthesize);
                    (branch, outcome)
                })
                .collect::<Vec<(CS::Root, Result<Vec<R>, SynthesisError>)>>()
        },
    );
    let mut results = first?;
    for (branch, outcome) in others {
        let landing = match relocate {
            true => landing(cs, &branch),
            false => None,
        };
        cs.get_root().extend(&branch);
        let returned = outcome?;
        match landing {
            Some(landing) => {
                for result in returned {
                    results.push(result.relocate(&landing)?);
                }
            }
            None if relocate => {
                return Err(SynthesisError::IncompatibleLengthVector(
                    "the system no longer says where a branch's variables land".into(),
                ))
            }
            None => results.extend(returned),
        }
    }
    Ok(Returned::Done(results))
}

/// Synthesizes `parts` (numbered as the caller's list numbers them) one after another in
/// `cs`, telling it where each after the first begins; stops at the first error.
fn run<Scalar, CS, P, R, F>(
    cs: &mut CS,
    parts: Vec<(usize, P)>,
    synthesize: &F,
) -> Result<Vec<R>, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
    F: Fn(&mut CS, usize, P) -> Result<R, SynthesisError>,
{
    let mut results = Vec::with_capacity(parts.len());
    for (k, (i, part)) in parts.into_iter().enumerate() {
        if let (1.., Some(spreading)) = (k, cs.spreading()) {
            spreading.next_part();
        }
        results.push(synthesize(cs, i, part)?);
    }
    Ok(results)
}

/// `parts`, numbered, cut into `runs` runs of consecutive parts whose lengths differ by one at
/// most, the longer first.
fn consecutive<P>(parts: Vec<P>, runs: usize) -> Vec<Vec<(usize, P)>> {
    let (shortest, longer) = (parts.len() / runs, parts.len() % runs);
    let mut parts = parts.into_iter().enumerate();
    (0..runs)
        .map(|run| {
            parts
                .by_ref()
                .take(shortest + usize::from(run < longer))
                .collect()
        })
        .collect()
}

/// `work` on a rayon pool of `threads` threads (the unit tests' way to vary them).
#[cfg(test)]
pub(crate) fn on_threads<R: Send>(threads: usize, work: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(work)
}

#[cfg(test)]
mod tests {
    use bellpepper_core::{Index, LinearCombination, Spreading, Variable};
    use blstrs::Scalar as Fr;

    use super::*;

    /// What a system saw, in order.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Observed {
        Part(usize),
        /// `next_part` before a part.
        Next,
        /// A branch appended.
        Branch,
    }

    /// A system that only notes what [`spread`] does with it.
    #[derive(Default)]
    struct Log {
        seen: Vec<Observed>,
        in_place: bool,
    }

    impl ConstraintSystem<Fr> for Log {
        type Root = Self;

        fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
        where
            F: FnOnce() -> Result<Fr, SynthesisError>,
            A: FnOnce() -> AR,
            AR: Into<String>,
        {
            Ok(Variable::new_unchecked(Index::Aux(0)))
        }

        fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
        where
            F: FnOnce() -> Result<Fr, SynthesisError>,
            A: FnOnce() -> AR,
            AR: Into<String>,
        {
            Ok(Variable::new_unchecked(Index::Input(0)))
        }

        fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
        where
            A: FnOnce() -> AR,
            AR: Into<String>,
            LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
            LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
            LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        {
        }

        root_without_names!();

        fn extend(&mut self, other: &Self) {
            self.seen.push(Observed::Branch);
            self.seen.extend_from_slice(&other.seen);
        }

        fn spreading(&mut self) -> Option<&mut dyn Spreading<Self>> {
            Some(self)
        }
    }

    impl Spreading<Log> for Log {
        fn ways(&self) -> Ways {
            Ways {
                parts_in_place: true,
                branches_in_place: self.in_place,
                small_parts: false,
            }
        }

        fn branches(&self, count: usize) -> Option<Vec<Log>> {
            let branch = || Log {
                seen: Vec::new(),
                in_place: self.in_place,
            };
            Some((0..count).map(|_| branch()).collect())
        }

        fn next_part(&mut self) {
            self.seen.push(Observed::Next);
        }

        fn landing(&self, _: &Log) -> Option<Landing> {
            None
        }
    }

    /// What `spread` made of `parts` parts on `threads` threads.
    fn spread_over(threads: usize, parts: usize, in_place: bool) -> Vec<Observed> {
        let mut log = Log {
            seen: Vec::new(),
            in_place,
        };
        let spread = on_threads(threads, || {
            spread(&mut log, (0..parts).collect(), |cs: &mut Log, i, part| {
                assert_eq!(i, part, "a part numbered as the list numbers it");
                cs.seen.push(Observed::Part(part));
                Ok(())
            })
        });
        assert!(matches!(spread, Ok(Spread::Done)));
        log.seen
    }

    #[test]
    fn systems_that_copy_branches_get_one_per_thread_running_consecutive_parts() {
        use Observed::{Branch as B, Next as N, Part as P};
        for in_place in [false, true] {
            assert_eq!(spread_over(1, 3, in_place), [P(0), P(1), P(2)]);
        }
        assert_eq!(
            spread_over(2, 5, false),
            [P(0), N, P(1), N, P(2), B, P(3), N, P(4)]
        );
        assert_eq!(
            spread_over(3, 5, false),
            [P(0), N, P(1), B, P(2), N, P(3), B, P(4)]
        );
        assert_eq!(spread_over(4, 2, false), [P(0), B, P(1)]);
        for threads in [2, 3] {
            assert_eq!(
                spread_over(threads, 4, true),
                [P(0), B, P(1), B, P(2), B, P(3)]
            );
        }
    }

    #[test]
    fn parts_handing_variables_on_come_back_where_the_system_cannot_land_them() {
        let part = |cs: &mut Log, _: usize, part: usize| {
            cs.seen.push(Observed::Part(part));
            Ok(Variable::new_unchecked(Index::Aux(part)))
        };
        let mut log = Log::default();
        let spread = on_threads(2, || spread_returning(&mut log, vec![0, 1, 2], part));
        assert!(matches!(spread, Ok(Returned::Here(parts)) if parts == [0, 1, 2]));
        assert_eq!(log.seen, [], "nothing ran");
        // On one thread the parts run here: their variables are the system's already.
        let spread = on_threads(1, || spread_returning(&mut log, vec![0, 1], part));
        let aux = |i| Variable::new_unchecked(Index::Aux(i));
        assert!(matches!(spread, Ok(Returned::Done(outputs)) if outputs == [aux(0), aux(1)]));
    }

    #[test]
    fn small_parts_come_back_untouched_where_the_system_does_not_spread_them() {
        let part = |cs: &mut Log, _: usize, part: usize| {
            cs.seen.push(Observed::Part(part));
            Ok(())
        };
        for threads in [1, 2] {
            let mut log = Log::default();
            let spread = on_threads(threads, || {
                spread_small_returning(&mut log, vec![0, 1], part)
            });
            assert!(matches!(spread, Ok(Returned::Here(parts)) if parts == [0, 1]));
            assert_eq!(log.seen, [], "nothing ran on {threads} threads");
        }
    }

    #[test]
    fn a_relocated_number_names_the_landed_variable_with_its_value() {
        let landing = Landing {
            inputs_from: 3,
            inputs_to: 5,
            aux_from: 10,
            aux_to: 40,
        };
        for (index, moved) in [
            (Index::Aux(12), Index::Aux(42)),
            (Index::Aux(9), Index::Aux(9)),
            (Index::Input(3), Index::Input(5)),
            (Index::Input(2), Index::Input(2)),
        ] {
            for value in [Some(Fr::from(5)), None] {
                let mut place = Place(Some(Variable::new_unchecked(index)));
                let num = AllocatedNum::alloc(&mut place, || {
                    value.ok_or(SynthesisError::AssignmentMissing)
                })
                .unwrap();
                let relocated = num.relocate(&landing).unwrap();
                assert_eq!(relocated.get_variable().get_unchecked(), moved);
                assert_eq!(relocated.get_value(), value);
            }
        }
    }

    #[test]
    fn runs_of_consecutive_parts_differ_by_one_at_most() {
        for parts in 1..12 {
            for runs in 1..=parts {
                let cut = consecutive((0..parts).collect::<Vec<_>>(), runs);
                assert_eq!(cut.len(), runs);
                let lengths: Vec<usize> = cut.iter().map(Vec::len).collect();
                assert!(lengths.windows(2).all(|w| w[0] == w[1] || w[0] == w[1] + 1));
                let flat: Vec<(usize, usize)> = cut.into_iter().flatten().collect();
                assert_eq!(flat, (0..parts).map(|i| (i, i)).collect::<Vec<_>>());
            }
        }
    }
}
