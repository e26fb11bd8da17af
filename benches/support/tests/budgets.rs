//! Budgets of deterministic figures, kept out of the correctness tests: allocations per
//! constraint of direct synthesis with each gadget set (pool on, pre-sized: the steady
//! state), and bytes per nonzero of a recording. One test in this binary, so the
//! process-wide allocation counters count nothing else.

use blstrs::Scalar as Fr;
use synthpool::precompiled::Recording;
use synthpool::{synthesize_with, SynthesisOptions};
use synthpool_bench::alloc;
use synthpool_bench::circuits::{GadgetSet, Labeling, MerklePath};

#[global_allocator]
static ALLOCATOR: alloc::Counting = alloc::Counting;

/// Writes past the test harness's output capture, so the figures appear in every run's log
/// (CI's included), not only with `--nocapture`.
macro_rules! report {
    ($($arg:tt)*) => {{
        use std::io::Write;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// (allocations, constraints) of one steady-state synthesis.
fn allocations<C: bellpepper_core::Circuit<Fr> + Clone>(circuit: C) -> (u64, usize) {
    let shape = synthesize_with::<Fr, _>(circuit.clone(), &SynthesisOptions::default())
        .unwrap()
        .shape();
    let options = SynthesisOptions::default().with_shape(Some(shape));
    let (before, _) = alloc::totals();
    let vectors = synthesize_with::<Fr, _>(circuit, &options);
    let (after, _) = alloc::totals();
    (after - before, vectors.unwrap().shape().constraints)
}

#[test]
fn deterministic_budgets() {
    report!(
        "{:<26} {:>10} {:>12} {:>10}",
        "circuit",
        "gadgets",
        "constraints",
        "alloc/c"
    );
    let mut rates = Vec::new();
    for (name, gadgets) in [
        ("bellperson", GadgetSet::Upstream),
        ("synthpool", GadgetSet::Synthpool),
    ] {
        for (label, (count, constraints)) in [
            (
                "labeling (20 compressions)",
                allocations(Labeling::sample(1, gadgets)),
            ),
            (
                "merkle depth 2",
                allocations(MerklePath::sample(3, 2, gadgets)),
            ),
        ] {
            let rate = count as f64 / constraints as f64;
            report!("{label:<26} {name:>10} {constraints:>12} {rate:>10.4}");
            rates.push((label, gadgets, rate));
        }
    }
    for (label, _, theirs) in rates.iter().filter(|r| r.1 == GadgetSet::Upstream) {
        let ours = rates
            .iter()
            .find(|r| r.0 == *label && r.1 == GadgetSet::Synthpool)
            .unwrap()
            .2;
        assert!(
            ours * 10.0 <= *theirs,
            "{label}: ours {ours}, bellperson {theirs}"
        );
        assert!(ours <= 0.05, "{label}: {ours} allocations per constraint");
    }

    let recording = Recording::<Fr>::record(Labeling::sample(3, GadgetSet::Synthpool)).unwrap();
    let bytes = recording.bytes_per_nonzero();
    report!(
        "labeling recording: {} nonzeros, {} distinct coefficients, {bytes:.2} bytes per nonzero",
        recording.nonzeros(),
        recording.dictionary_len()
    );
    assert!(bytes <= 8.5, "{bytes} bytes per nonzero");
}
