//! Allocations per constraint of SHA-256 synthesis into the synthpool ProvingAssignment
//! (pool on, pre-sized: the steady state), bellperson's gadgets against ours. Deterministic:
//! a counting allocator, switched on per thread around the synthesis alone.

// The same per-thread probe the compat differential tests use.
#[path = "../compat/src/probe.rs"]
mod probe;

use blstrs::Scalar as Fr;
use synthpool::circuits::{GadgetSet, Labeling, MerklePath};
use synthpool::{synthesize_with, SynthesisOptions};

/// Writes past the test harness's output capture, so the figures appear in every run's log
/// (CI's included), not only with `--nocapture`.
macro_rules! report {
    ($($arg:tt)*) => {{
        use std::io::Write;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

#[global_allocator]
static ALLOCATOR: probe::CountingAllocator = probe::CountingAllocator;

/// (allocations, constraints) of one steady-state synthesis.
fn count<C: bellpepper_core::Circuit<Fr> + Clone>(circuit: C) -> (u64, usize) {
    let shape = synthesize_with::<Fr, _>(circuit.clone(), &SynthesisOptions::default())
        .unwrap()
        .shape();
    let options = SynthesisOptions {
        shape: Some(shape),
        ..SynthesisOptions::default()
    };
    probe::reset();
    probe::start();
    let assignment = synthesize_with::<Fr, _>(circuit, &options);
    probe::stop();
    let assignment = assignment.unwrap();
    (probe::count(), assignment.shape().constraints)
}

#[test]
fn our_sha256_gadgets_allocate_at_least_ten_times_less() {
    report!(
        "{:<26} {:>10} {:>12} {:>10}",
        "circuit",
        "gadgets",
        "constraints",
        "alloc/c"
    );
    let cases: [(&str, GadgetSet); 2] = [
        ("bellperson", GadgetSet::Bellperson),
        ("synthpool", GadgetSet::Synthpool),
    ];
    let mut per_constraint = Vec::new();
    for (name, gadgets) in cases {
        for (label, (allocations, constraints)) in [
            (
                "labeling (20 compressions)",
                count(Labeling::sample(1, gadgets)),
            ),
            ("merkle depth 2", count(MerklePath::sample(3, 2, gadgets))),
        ] {
            let rate = allocations as f64 / constraints as f64;
            report!("{label:<26} {name:>10} {constraints:>12} {rate:>10.4}");
            per_constraint.push((label, name, rate));
        }
    }
    for (label, _, theirs) in per_constraint.iter().filter(|r| r.1 == "bellperson") {
        let ours = per_constraint
            .iter()
            .find(|r| r.0 == *label && r.1 == "synthpool")
            .unwrap()
            .2;
        assert!(
            ours * 10.0 <= *theirs,
            "{label}: ours {ours}, bellperson {theirs}"
        );
        assert!(ours <= 0.05, "{label}: {ours} allocations per constraint");
    }
}
