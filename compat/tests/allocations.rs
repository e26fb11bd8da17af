//! Allocation counts, deterministic: each gadget call runs in a constraint system that keeps
//! nothing, with a counting allocator switched on around the call alone. Ours must allocate
//! strictly less wherever upstream builds temporary combinations, and never more elsewhere.

use blstrs::Scalar as Fr;
use ff::Field;
use synthpool_compat::probe::{self, CountingAllocator};
use synthpool_compat::{our_side, upstream_side, BoolSpec, Gate, NumStep, Op};

/// Writes past the test harness's output capture, so the figures appear in every run's log
/// (CI's included), not only with `--nocapture`.
macro_rules! report {
    ($($arg:tt)*) => {{
        use std::io::Write;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn x() -> Fr {
    Fr::from(0x1234_5678_9abc_def0u64)
}

/// Calls upstream builds temporary LCs (or LC clones) for, which ours must beat.
fn rewritten() -> Vec<(&'static str, Op)> {
    use BoolSpec::{Constant, Is, Not};
    let t = Some(true);
    let f = Some(false);
    vec![
        (
            "Boolean::enforce_equal(is, not)",
            Op::BoolEnforceEqual(Is(t), Not(f)),
        ),
        (
            "Boolean::enforce_equal(not, true)",
            Op::BoolEnforceEqual(Not(f), Constant(true)),
        ),
        (
            "Boolean::sha256_ch(is, is, is)",
            Op::Sha256Ch(Is(t), Is(f), Is(t)),
        ),
        (
            "Boolean::sha256_ch(not, is, not)",
            Op::Sha256Ch(Not(t), Is(f), Not(t)),
        ),
        (
            "Boolean::sha256_maj(is, is, is)",
            Op::Sha256Maj(Is(t), Is(f), Is(t)),
        ),
        (
            "Boolean::sha256_maj(is, not, not)",
            Op::Sha256Maj(Is(t), Not(f), Not(t)),
        ),
        ("AllocatedNum::to_bits_le", Op::ToBitsLe(Some(x()))),
        (
            "AllocatedNum::to_bits_le_strict",
            Op::ToBitsLeStrict(Some(x())),
        ),
        (
            "Num::add_bool_with_coeff(not)",
            Op::NumChain(Some(x()), vec![NumStep::AddBool(Not(f), Fr::ONE.double())]),
        ),
    ]
}

/// Calls upstream already builds without temporaries: ours must not allocate more.
fn unchanged() -> Vec<(&'static str, Op)> {
    use BoolSpec::{Constant, Is, Not};
    let t = Some(true);
    vec![
        // For these two upstream builds a fresh LC and drops the empty one it was given; ours
        // writes into the given one. Equal here, where the given LC has no capacity; ours allocates
        // nothing when the constraint system recycles buffers.
        (
            "Boolean::enforce_equal(is, false)",
            Op::BoolEnforceEqual(Is(t), Constant(false)),
        ),
        (
            "AllocatedNum::conditionally_reverse",
            Op::ConditionallyReverse(Some(x()), Some(Fr::ONE), Not(t)),
        ),
        ("AllocatedBit::alloc", Op::BitAlloc(t)),
        ("AllocatedBit::xor", Op::BitGate(Gate::Xor, t, t)),
        ("AllocatedBit::nor", Op::BitGate(Gate::Nor, t, Some(false))),
        ("Boolean::xor(is, not)", Op::BoolXor(Is(t), Not(t))),
        ("Boolean::and(not, not)", Op::BoolAnd(Not(t), Not(t))),
        ("u64_into_boolean_vec_le", Op::U64IntoBits(Some(77))),
        (
            "field_into_boolean_vec_le",
            Op::FieldIntoBooleans(Some(x())),
        ),
        ("AllocatedNum::mul", Op::Mul(Some(x()), Some(x()))),
        ("AllocatedNum::inputize", Op::Inputize(Some(x()))),
    ]
}

/// Counts every call, reports them as one table, and returns `(name, ours, upstream)`.
fn counted(title: &str, calls: Vec<(&'static str, Op)>) -> Vec<(&'static str, u64, u64)> {
    let rows: Vec<_> = calls
        .iter()
        .map(|(name, op)| {
            (
                *name,
                our_side::allocations(op),
                upstream_side::allocations(op),
            )
        })
        .collect();
    let mut table = format!(
        "{title}\n{:<40} {:>6} {:>9}\n",
        "gadget call", "ours", "upstream"
    );
    for (name, ours, theirs) in &rows {
        table += &format!("{name:<40} {ours:>6} {theirs:>9}\n");
    }
    report!("{table}");
    rows
}

#[test]
fn rewritten_gadgets_allocate_strictly_less_than_upstream() {
    for (name, ours, theirs) in counted("allocations, rewritten gadgets:", rewritten()) {
        assert!(ours < theirs, "{name}: ours {ours}, upstream {theirs}");
    }
}

#[test]
fn other_gadgets_allocate_no_more_than_upstream() {
    for (name, ours, theirs) in counted("allocations, other gadgets:", unchanged()) {
        assert!(ours <= theirs, "{name}: ours {ours}, upstream {theirs}");
    }
}

#[test]
fn add_to_lc_and_sub_from_lc_allocate_nothing_when_the_target_has_room() {
    let one = ours::Variable::new_unchecked(ours::Index::Input(0));
    let num = our_side::lone_num(&[
        NumStep::AddBool(BoolSpec::Not(None), Fr::ONE.double()),
        NumStep::AddNum(None),
    ]);
    let mut specs = vec![BoolSpec::Constant(true), BoolSpec::Constant(false)];
    specs.extend([BoolSpec::Is(None), BoolSpec::Not(None)]);
    for spec in specs {
        let bit = our_side::lone_boolean(&spec);
        let lc = ours::LinearCombination::<Fr>::from_buffers(
            Vec::with_capacity(8),
            Vec::with_capacity(8),
        );
        probe::reset();
        probe::start();
        let lc = bit.add_to_lc(lc, one, Fr::ONE);
        let lc = bit.sub_from_lc(lc, one, -Fr::ONE);
        let lc = num.add_to_lc(lc, Fr::ONE.double());
        let lc = num.sub_from_lc(lc, Fr::ONE);
        probe::stop();
        report!(
            "{spec:?}: {} allocations for 4 in-place merges",
            probe::count()
        );
        assert_eq!(probe::count(), 0, "{spec:?}");
        drop(lc);
    }
}

#[test]
fn the_probe_counts() {
    probe::reset();
    probe::start();
    let v: Vec<u8> = Vec::with_capacity(16);
    probe::stop();
    drop(v);
    assert_eq!(probe::count(), 1);
}
