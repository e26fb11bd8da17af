//! The branching protocol: how a constraint system that can branch takes a circuit's
//! independent parts synthesized on other threads (synthpool's `branches::spread`), reached
//! through [`crate::ConstraintSystem::spreading`]. Every other system answers `None`, and the
//! circuit runs as before.

use crate::{Index, Variable};

/// How a system takes the parts a caller spreads, in one value: what the caller needs to
/// know before it takes any branch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ways {
    /// Independent parts synthesized here one after another lay out exactly what each
    /// synthesized in a system from [`crate::ConstraintSystem::new`] and appended in order with
    /// [`crate::ConstraintSystem::extend`] lays out, whatever names their namespaces repeat (a
    /// system that keeps no names): with no other thread to run them on, a caller runs them
    /// here and copies nothing.
    pub parts_in_place: bool,
    /// A branch writes where its parts land here, so appending it copies nothing: a caller
    /// takes a branch per part, for the pool's threads to share out. Otherwise appending a
    /// branch copies what it made, and a caller takes one branch per thread, each running
    /// consecutive parts (see [`Spreading::next_part`]).
    pub branches_in_place: bool,
    /// Parts small beside what this system holds before them (the rows of a tree, each
    /// spread after all the rows below it) are worth spreading: a branch copies nothing it
    /// holds, or what the system notes of the parts serves later runs. Otherwise a caller
    /// keeps them here.
    pub small_parts: bool,
}

/// What a system that can branch does for a caller spreading parts over it.
pub trait Spreading<Root> {
    /// How it takes parts.
    fn ways(&self) -> Ways;

    /// `count` new root systems that continue from this one as it stands, taken at once for
    /// parts synthesized on other threads (a system whose branches hold a copy of what it
    /// holds can make one copy for all of them). A branch holds every variable allocated
    /// here so far under the same index and numbers its own after them; its constraints
    /// start empty. Branches taken at one point, each given parts that read only variables
    /// allocated before that point, and handed back in order to the root's
    /// [`crate::ConstraintSystem::extend`], lay out exactly what synthesizing those parts here one
    /// after another lays out. `None` where it cannot take them now.
    fn branches(&self, count: usize) -> Option<Vec<Root>>;

    /// Called where a caller runs a part in this system (or a branch of it) right after
    /// another instead of in a branch of its own: a system that notes where parts land notes
    /// it as it would a part in a branch taken where the other branches were, so what it
    /// notes does not depend on how many threads ran the parts. The default does nothing.
    fn next_part(&mut self) {}

    /// Where the variables of `branch`, taken here, land when it is appended now with
    /// [`crate::ConstraintSystem::extend`]: a variable a part allocated in the branch (a hash's
    /// output) then names, through the landing, the same variable here. `None` where the
    /// system cannot say: a caller whose parts hand variables on synthesizes them here.
    fn landing(&self, branch: &Root) -> Option<Landing>;
}

/// Where a branch's own variables land in its system once appended
/// ([`Spreading::landing`]): the branch's inputs from `inputs_from` on become the
/// system's from `inputs_to` on, its aux variables from `aux_from` on the system's from
/// `aux_to` on, in order; the variables below those (the system's own when the branch was
/// taken) stay as they are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Landing {
    /// The branch's first own input.
    pub inputs_from: usize,
    /// Where it lands in the system.
    pub inputs_to: usize,
    /// The branch's first own aux variable.
    pub aux_from: usize,
    /// Where it lands in the system.
    pub aux_to: usize,
}

impl Landing {
    /// A branch that numbers its variables where they land (it writes in place).
    pub const IN_PLACE: Landing = Landing {
        inputs_from: 0,
        inputs_to: 0,
        aux_from: 0,
        aux_to: 0,
    };

    /// The system's variable that `variable` of the branch becomes.
    pub fn variable(&self, variable: Variable) -> Variable {
        let moved = |index: usize, from: usize, to: usize| match index.checked_sub(from) {
            Some(own) => to + own,
            None => index,
        };
        Variable::new_unchecked(match variable.get_unchecked() {
            Index::Input(i) => Index::Input(moved(i, self.inputs_from, self.inputs_to)),
            Index::Aux(i) => Index::Aux(moved(i, self.aux_from, self.aux_to)),
        })
    }
}
