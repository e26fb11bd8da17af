use bellpepper_core::{ConstraintSystem, Index, Spreading, Variable};
use blstrs::Scalar as Fr;
use ff::Field;

use super::{spread_parts, Part, Recorder};
use crate::error::{Error, Limit, Side, VariableKind};

#[test]
fn parts_run_after_another_are_placed_as_branches_of_their_own() {
    let part = |point, at, len| Part { point, at, len };
    // Spread at 10: the system ran parts from 14 and 17 after its first (ending at 20);
    // the branch, landing at 20, ran parts from 10 and, in its numbering, 12, up to 15.
    assert_eq!(
        spread_parts(&[14, 17], 20, &[12], 15, 10),
        [
            part(10, 14, 3),
            part(10, 17, 3),
            part(10, 20, 2),
            part(10, 22, 3)
        ]
    );
    assert_eq!(spread_parts(&[], 20, &[], 15, 10), [part(10, 20, 5)]);
}

fn with_one() -> Recorder<Fr> {
    let mut recorder = <Recorder<Fr> as ConstraintSystem<Fr>>::new();
    recorder.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
    recorder
}

/// A system holding x, and a branch of it with its own y and the row x = y.
fn system_and_branch() -> (Recorder<Fr>, Recorder<Fr>) {
    let mut system = with_one();
    let x = system.alloc(|| "x", || Ok(Fr::ONE)).unwrap();
    let mut branch = system.branches(1).expect("a recorder branches").remove(0);
    let y = branch.alloc(|| "y", || Ok(Fr::ONE)).unwrap();
    branch.enforce(
        || "x = y",
        |lc| lc + x,
        |lc| lc + Recorder::<Fr>::one(),
        |lc| lc + y,
    );
    (system, branch)
}

/// A branch's own variables land after the system's, the shared ones stay; a branch of
/// a larger system is refused.
#[test]
fn a_branch_lands_where_it_was_taken_and_nowhere_else() {
    let (mut big, branch) = system_and_branch();
    // The system grows meanwhile (as the first part grows it): y lands after z.
    big.alloc(|| "z", || Ok(Fr::ONE)).unwrap();
    big.extend(&branch);
    assert_eq!((big.inputs, big.aux), (1, 3));
    let columns = |side: usize| big.matrices[side].columns.clone();
    assert_eq!(columns(0), vec![0], "x stays aux 0");
    assert_eq!(columns(2), vec![2], "y lands at aux 2, after z");

    let mut small = with_one();
    small.extend(&branch);
    let (recorded, _) = small.finish();
    assert!(matches!(
        recorded,
        Err(Error::MisplacedBranch { inputs: 1, aux: 1 })
    ));
}

/// A term naming a variable past the column limit, or one never allocated, stops the
/// recording with its own error, naming the constraint, side and variable.
#[test]
fn a_term_past_the_column_limit_or_the_allocated_is_refused_by_name() {
    let aux = |index: usize| Variable::new_unchecked(Index::Aux(index));
    let input = |index: usize| Variable::new_unchecked(Index::Input(index));
    let limit = 1usize << 31;
    let unallocated = |side, kind, index, allocated| Error::UnallocatedVariable {
        constraint: 1,
        side,
        kind,
        index,
        allocated,
    };
    let column = Error::Limit(Limit::Column {
        kind: VariableKind::Aux,
        index: limit as u64,
    });
    let cases = [
        (aux(limit - 1), Side::B, None),
        (aux(limit), Side::B, Some(column)),
        (
            aux(limit + 2),
            Side::B,
            Some(unallocated(
                Side::B,
                VariableKind::Aux,
                limit + 2,
                limit + 2,
            )),
        ),
        (
            input(1),
            Side::C,
            Some(unallocated(Side::C, VariableKind::Input, 1, 1)),
        ),
    ];
    for (variable, side, expected) in cases {
        let mut recorder = with_one();
        // As if allocated one by one: a recorder keeps only the count.
        recorder.aux = limit + 2;
        let x = aux(0);
        recorder.enforce(|| "first", |lc| lc + x, |lc| lc + x, |lc| lc + x);
        recorder.enforce(
            || "second",
            |lc| lc + x,
            |lc| if side == Side::B { lc + variable } else { lc },
            |lc| if side == Side::C { lc + variable } else { lc },
        );
        let (recorded, _) = recorder.finish();
        let got = recorded.err().map(|error| format!("{error:?}"));
        assert_eq!(
            got,
            expected.map(|error| format!("{error:?}")),
            "{variable:?}"
        );
    }
}

/// [`system_and_branch`], the branch then with as many own variables as reach the
/// column limit (`1 << 31` aux in all), and the system grown by two meanwhile, so the
/// branch's own variables land two further on.
fn near_the_limit() -> (Recorder<Fr>, Recorder<Fr>) {
    let (mut system, mut branch) = system_and_branch();
    // As if allocated one by one: a recorder keeps only the count.
    branch.aux = 1 << 31;
    for z in ["z1", "z2"] {
        system.alloc(|| z, || Ok(Fr::ONE)).unwrap();
    }
    (system, branch)
}

/// Own variables that land past the column limit fail an extension only where a row
/// names one, and then the first such column in the matrices' order is the error, with
/// nothing appended.
#[test]
fn only_a_named_variable_past_the_column_limit_fails_an_extension() {
    let (mut system, branch) = near_the_limit();
    system.extend(&branch);
    assert!(system.fault.is_none(), "{:?}", system.fault);
    assert_eq!(system.matrices[2].columns, vec![3], "y lands at aux 3");

    let (mut system, mut branch) = near_the_limit();
    let aux = |index: usize| Variable::new_unchecked(Index::Aux(index));
    branch.enforce(
        || "last two",
        |lc| lc + aux(1),
        |lc| lc + aux((1 << 31) - 1),
        |lc| lc + aux((1 << 31) - 2),
    );
    system.extend(&branch);
    assert!(system.matrices.iter().all(|m| m.columns.is_empty()));
    let (recorded, _) = system.finish();
    match recorded {
        Err(Error::Limit(Limit::Column {
            kind: VariableKind::Aux,
            index,
        })) => assert_eq!(index, (1 << 31) + 1, "B's column, the first"),
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("recorded"),
    }
}
