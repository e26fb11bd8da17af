//! synthpool::poseidon against neptune 11's `circuit::poseidon_hash`, both run in this binary
//! on our core: for every arity and hash type the Filecoin circuits use (and the other
//! arities neptune offers), with preimages of aux and input variables, repeated variables
//! and zeros, the same constraints in order with every term, the same variables with their
//! names and values, the same output; in a witness generator (our native path against
//! neptune's gadget; ours, bellperson's and bellpepper's `WitnessCS`) the same aux values,
//! inputs and constraint count; a missing value fails
//! both at the same point with the same error; and the pre-compiled and direct paths give
//! the vectors bellperson's algorithm gives for neptune's gadget.

mod common;

use bellpepper_core::num::AllocatedNum;
use bellpepper_core::test_cs::TestConstraintSystem;
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use common::{assert_same, reference, ShapeRecorder};
use ff::Field;
use generic_array::typenum::{U11, U16, U2, U24, U36, U4, U8};
use neptune::hash_type::{CType, HashType};
use neptune::poseidon::{Arity, Poseidon, PoseidonConstants};
use neptune::Strength;
use rand_core::{RngCore, SeedableRng};
use rand_xorshift::XorShiftRng;
use synthpool::precompiled::{Recording, Witness};

/// How a preimage element enters the circuit.
#[derive(Clone, Copy, Debug)]
enum Element {
    Aux(Fr),
    Input(Fr),
    /// The same variable as an earlier element.
    Repeat(usize),
    /// An aux variable whose value is unknown.
    Missing,
}

/// Allocates the preimage `spec` in `cs`.
fn allocate<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    spec: &[Element],
) -> Result<Vec<AllocatedNum<Fr>>, SynthesisError> {
    let mut out: Vec<AllocatedNum<Fr>> = Vec::new();
    for (i, element) in spec.iter().enumerate() {
        let mut cs = cs.namespace(|| format!("preimage {i}"));
        let num = match *element {
            Element::Aux(x) => AllocatedNum::alloc(&mut cs, || Ok(x))?,
            Element::Input(x) => AllocatedNum::alloc_input(&mut cs, || Ok(x))?,
            Element::Repeat(j) => out[j].clone(),
            Element::Missing => {
                AllocatedNum::alloc(&mut cs, || Err(SynthesisError::AssignmentMissing))?
            }
        };
        out.push(num);
    }
    Ok(out)
}

fn values(spec: &[Element]) -> Vec<Fr> {
    let mut out: Vec<Fr> = Vec::new();
    for element in spec {
        out.push(match *element {
            Element::Aux(x) | Element::Input(x) => x,
            Element::Repeat(j) => out[j],
            Element::Missing => unreachable!("only known preimages have values"),
        });
    }
    out
}

/// Hashes `spec` in `cs` with ours or neptune's gadget.
fn hash<CS: ConstraintSystem<Fr>, A: Arity<Fr>>(
    cs: &mut CS,
    spec: &[Element],
    constants: &PoseidonConstants<Fr, A>,
    ours: bool,
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    let preimage = allocate(cs, spec)?;
    let cs = cs.namespace(|| "hash");
    if ours {
        synthpool::poseidon::poseidon_hash(cs, preimage, constants)
    } else {
        neptune::circuit::poseidon_hash(cs, preimage, constants)
    }
}

/// Preimages of every kind for arity `n`: random aux values, inputs, zeros, a mix with a
/// repeated variable (as filecoin-hashers' MD hashing repeats its running hash), and the
/// all-same-variable preimage.
fn preimages(n: usize, rng: &mut XorShiftRng) -> Vec<Vec<Element>> {
    let random = |rng: &mut XorShiftRng| Fr::random(rng);
    let mut all = vec![
        (0..n).map(|_| Element::Aux(random(rng))).collect(),
        (0..n).map(|_| Element::Input(random(rng))).collect(),
        (0..n).map(|_| Element::Aux(Fr::ZERO)).collect(),
    ];
    let mixed: Vec<Element> = (0..n)
        .map(|i| match (i, rng.next_u32() % 4) {
            (0, _) => Element::Aux(random(rng)),
            (_, 0) => Element::Repeat(rng.next_u32() as usize % i),
            (_, 1) => Element::Input(random(rng)),
            (_, 2) => Element::Aux(Fr::ONE),
            _ => Element::Aux(random(rng)),
        })
        .collect();
    all.push(mixed);
    all.push(
        std::iter::once(Element::Aux(random(rng)))
            .chain((1..n).map(|_| Element::Repeat(0)))
            .collect(),
    );
    all
}

/// The hash types Filecoin uses (Merkle trees; the empty-sector update's randomness), a
/// constant-length hash, and the strengthened variant of the first.
fn constants_of<A: Arity<Fr>>() -> Vec<PoseidonConstants<Fr, A>> {
    let arity = A::to_usize();
    // The standard constants with one element of one partial round's sparse matrix changed.
    // Our constraint path keeps, per thread, rows made from the sparse matrices; these come
    // after the standard constants on the same thread, so rows served by anything less than
    // equal matrices would differ from neptune's gadget here.
    let tampered = |change: fn(&mut PoseidonConstants<Fr, A>)| {
        let mut constants = PoseidonConstants::new();
        change(&mut constants);
        constants
    };
    vec![
        PoseidonConstants::new(),
        PoseidonConstants::new_with_strength_and_type(
            Strength::Standard,
            HashType::Custom(CType::Arbitrary(1)),
        ),
        PoseidonConstants::new_with_strength_and_type(
            Strength::Standard,
            HashType::ConstantLength(arity),
        ),
        PoseidonConstants::new_with_strength(Strength::Strengthened),
        tampered(|c| c.sparse_matrixes[3].w_hat[2] += Fr::ONE),
        tampered(|c| c.sparse_matrixes[5].v_rest[1] += Fr::ONE),
    ]
}

/// The hash's (output, aux values, inputs) in the new witness generator `cs`, by our gadget
/// (`native`) or neptune's.
fn generated<CS: ConstraintSystem<Fr>, A: Arity<Fr>>(
    mut cs: CS,
    spec: &[Element],
    constants: &PoseidonConstants<Fr, A>,
    native: bool,
) -> (Option<Fr>, Vec<Fr>, Vec<Fr>) {
    assert!(cs.is_witness_generator());
    let output = hash(&mut cs, spec, constants, native).unwrap();
    (
        output.get_value(),
        cs.aux_slice().to_vec(),
        cs.inputs_slice().to_vec(),
    )
}

/// Every check of this file for arity `A`.
fn check_arity<A: Arity<Fr>>(seed: u64, expected_constraints: usize) {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let n = A::to_usize();
    for (c, constants) in constants_of::<A>().iter().enumerate() {
        for (p, spec) in preimages(n, &mut rng).iter().enumerate() {
            let what = format!("arity {n}, constants {c}, preimage {p}");
            // Constraints, names and values, with values and without.
            for known in [true, false] {
                let mut mine = ShapeRecorder::new(known);
                let mut theirs = ShapeRecorder::new(known);
                let ours = hash(&mut mine, spec, constants, true).unwrap();
                let upstream = hash(&mut theirs, spec, constants, false).unwrap();
                assert_eq!(ours.get_variable(), upstream.get_variable(), "{what}");
                assert_eq!(ours.get_value(), upstream.get_value(), "{what}");
                assert!(mine == theirs, "{what}, known {known}: the records differ");
                if c == 0 && p == 0 && known {
                    let before = spec.len();
                    assert_eq!(mine.constraints.len(), expected_constraints, "{what}");
                    assert_eq!(mine.aux.len() - before, expected_constraints, "{what}");
                }
            }
            // The native witness against neptune's gadget in a witness generator.
            let mut mine = Witness::<Fr>::default();
            let mut theirs = Witness::<Fr>::default();
            mine.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
            theirs.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
            let ours = hash(&mut mine, spec, constants, true).unwrap();
            let upstream = hash(&mut theirs, spec, constants, false).unwrap();
            assert_eq!(ours.get_variable(), upstream.get_variable(), "{what}");
            assert_eq!(ours.get_value(), upstream.get_value(), "{what}");
            assert_eq!(mine, theirs, "{what}: witness generation differs");
            // bellperson's and bellpepper's own witness generators, which implement
            // `allocate_empty` alone of the bulk allocations: ours and neptune's gadget in
            // the same kind of system give the same values.
            let systems = [
                [true, false].map(|native| {
                    let cs = bellperson_027::util_cs::witness_cs::WitnessCS::new();
                    generated(cs, spec, constants, native)
                }),
                [true, false].map(|native| {
                    let cs = bellpepper::util_cs::witness_cs::WitnessCS::new();
                    generated(cs, spec, constants, native)
                }),
            ];
            for [native, neptunes] in systems {
                assert!(native == neptunes, "{what}: values in a WitnessCS differ");
                assert_eq!(native.1, mine.aux(), "{what}: WitnessCS against Witness");
            }
            // The standard: neptune's own permutation on the values.
            if c != 2 {
                let expected = Poseidon::new_with_preimage(&values(spec), constants).hash();
                assert_eq!(ours.get_value(), Some(expected), "{what}");
            }
        }
    }
}

#[test]
fn arities_of_filecoin_match_neptune() {
    // neptune's own constraint counts for these arities (standard strength).
    check_arity::<U2>(2, 311);
    check_arity::<U4>(4, 377);
    check_arity::<U8>(8, 505);
    check_arity::<U11>(11, 598);
}

#[test]
fn other_arities_match_neptune() {
    // U36 is filecoin-hashers' MD hashing arity.
    check_arity::<U16>(16, 761);
    check_arity::<U24>(24, 1009);
    check_arity::<U36>(36, 1385);
}

#[test]
fn a_missing_value_fails_both_at_the_same_point() {
    let constants = PoseidonConstants::<Fr, U4>::new();
    let mut rng = XorShiftRng::seed_from_u64(5);
    for missing in 0..4 {
        let mut spec: Vec<Element> = (0..4).map(|_| Element::Aux(Fr::random(&mut rng))).collect();
        spec[missing] = Element::Missing;
        // Allocating the missing element fails in a system that runs value closures.
        let mut mine = ShapeRecorder::new(true);
        let mut theirs = ShapeRecorder::new(true);
        let a = hash(&mut mine, &spec, &constants, true).err();
        let b = hash(&mut theirs, &spec, &constants, false).err();
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        assert!(a.is_some());
        assert!(mine == theirs, "missing element {missing}");
        // A known variable without a value: the gadget's first use of it fails.
        let mut mine = ShapeRecorder::new(true);
        let mut theirs = ShapeRecorder::new(true);
        let mut errors = Vec::new();
        for (cs, ours) in [(&mut mine, true), (&mut theirs, false)] {
            let mut preimage = allocate(cs, &values_or_zero(&spec)).unwrap();
            preimage[missing] = unknown();
            let cs = cs.namespace(|| "hash");
            let result = if ours {
                synthpool::poseidon::poseidon_hash(cs, preimage, &constants)
            } else {
                neptune::circuit::poseidon_hash(cs, preimage, &constants)
            };
            errors.push(format!("{:?}", result.err()));
        }
        assert_eq!(errors[0], errors[1]);
        assert_eq!(
            errors[0],
            format!("{:?}", Some(SynthesisError::AssignmentMissing))
        );
        assert!(
            mine == theirs,
            "unknown element {missing}: the records differ"
        );
        // The same in a witness generator: no native path, the same aux values before it.
        let mut mine = Witness::<Fr>::default();
        let mut theirs = Witness::<Fr>::default();
        for (cs, ours) in [(&mut mine, true), (&mut theirs, false)] {
            let mut preimage = allocate(cs, &values_or_zero(&spec)).unwrap();
            preimage[missing] = unknown();
            let cs = cs.namespace(|| "hash");
            let result = if ours {
                synthpool::poseidon::poseidon_hash(cs, preimage, &constants)
            } else {
                neptune::circuit::poseidon_hash(cs, preimage, &constants)
            };
            assert!(matches!(result, Err(SynthesisError::AssignmentMissing)));
        }
        assert_eq!(
            mine, theirs,
            "witness generation, unknown element {missing}"
        );
    }
}

fn values_or_zero(spec: &[Element]) -> Vec<Element> {
    spec.iter()
        .map(|e| match e {
            Element::Missing => Element::Aux(Fr::ZERO),
            other => *other,
        })
        .collect()
}

/// A preimage element without a value, as a system that runs no value closures (parameter
/// generation) leaves it: it names aux 0, which every system here has allocated.
fn unknown() -> AllocatedNum<Fr> {
    let mut shape = ShapeRecorder::new(false);
    let valueless = AllocatedNum::alloc(&mut shape, || Ok(Fr::ONE)).unwrap();
    assert_eq!(valueless.get_value(), None);
    valueless
}

#[test]
fn preimages_of_another_length_are_errors() {
    let constants = PoseidonConstants::<Fr, U4>::new();
    for len in [0usize, 3, 5] {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let spec: Vec<Element> = (0..len).map(|i| Element::Aux(Fr::from(i as u64))).collect();
        let preimage = allocate(&mut cs, &spec).unwrap();
        let result = synthpool::poseidon::poseidon_hash(cs.namespace(|| "h"), preimage, &constants);
        assert!(
            matches!(result, Err(SynthesisError::IncompatibleLengthVector(_))),
            "{len} elements"
        );
        assert_eq!(cs.num_constraints(), 0, "nothing laid out");
    }
}

#[test]
fn tampering_any_allocated_value_leaves_the_system_unsatisfied() {
    let constants = PoseidonConstants::<Fr, U2>::new();
    let spec = [Element::Aux(Fr::from(3u64)), Element::Input(Fr::from(5u64))];
    let mut names = ShapeRecorder::new(false);
    hash(&mut names, &spec, &constants, true).unwrap();
    let mut cs = TestConstraintSystem::<Fr>::new();
    hash(&mut cs, &spec, &constants, true).unwrap();
    assert!(cs.is_satisfied());
    let hashed: Vec<&String> = names.aux.iter().map(|(path, _)| path).skip(1).collect();
    assert_eq!(hashed.len(), 311);
    for path in hashed {
        let mut tampered = TestConstraintSystem::<Fr>::new();
        hash(&mut tampered, &spec, &constants, true).unwrap();
        let value = tampered.get(path);
        tampered.set(path, value + Fr::ONE);
        assert!(!tampered.is_satisfied(), "{path} changed, still satisfied");
    }
}

/// A circuit of several hashes of each Filecoin arity over allocated values, chained; the
/// seed picks the values only.
struct Hashes {
    seed: u64,
    ours: bool,
}

impl Circuit<Fr> for Hashes {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        fn one<A: Arity<Fr>, CS: ConstraintSystem<Fr>>(
            cs: &mut CS,
            rng: &mut XorShiftRng,
            chained: Option<AllocatedNum<Fr>>,
            ours: bool,
        ) -> Result<AllocatedNum<Fr>, SynthesisError> {
            let constants = PoseidonConstants::<Fr, A>::new();
            // Every third element an input: the structure does not depend on the seed.
            let mut spec: Vec<Element> = (0..A::to_usize())
                .map(|i| match i % 3 {
                    1 => Element::Input(Fr::random(&mut *rng)),
                    _ => Element::Aux(Fr::random(&mut *rng)),
                })
                .collect();
            spec[0] = Element::Aux(Fr::ZERO);
            let mut preimage = allocate(cs, &spec)?;
            if let Some(chained) = chained {
                preimage[0] = chained;
            }
            let cs = cs.namespace(|| "hash");
            if ours {
                synthpool::poseidon::poseidon_hash(cs, preimage, &constants)
            } else {
                neptune::circuit::poseidon_hash(cs, preimage, &constants)
            }
        }
        let mut rng = XorShiftRng::seed_from_u64(self.seed);
        let mut last = None;
        for round in 0..2 {
            let mut cs = cs.namespace(|| format!("round {round}"));
            last = Some(one::<U2, _>(
                &mut cs.namespace(|| "2"),
                &mut rng,
                last,
                self.ours,
            )?);
            last = Some(one::<U8, _>(
                &mut cs.namespace(|| "8"),
                &mut rng,
                last,
                self.ours,
            )?);
            last = Some(one::<U11, _>(
                &mut cs.namespace(|| "11"),
                &mut rng,
                last,
                self.ours,
            )?);
            last = Some(one::<U4, _>(
                &mut cs.namespace(|| "4"),
                &mut rng,
                last,
                self.ours,
            )?);
        }
        last.expect("hashed").inputize(cs.namespace(|| "out"))
    }
}

#[test]
fn direct_and_precompiled_synthesis_match_bellpersons_algorithm_on_neptunes_gadget() {
    let expected = reference(Hashes {
        seed: 9,
        ours: false,
    });
    let direct = synthpool::synthesize(Hashes {
        seed: 9,
        ours: true,
    })
    .unwrap();
    assert_same(&direct, &expected, "direct synthesis");
    let recording = Recording::<Fr>::record(Hashes {
        seed: 1,
        ours: true,
    })
    .unwrap();
    let evaluated = recording
        .synthesize(Hashes {
            seed: 9,
            ours: true,
        })
        .unwrap();
    assert_same(&evaluated, &expected, "pre-compiled");
    // neptune's gadget as the witness of our recording gives the same vectors.
    let theirs = recording
        .synthesize(Hashes {
            seed: 9,
            ours: false,
        })
        .unwrap();
    assert_same(&theirs, &expected, "pre-compiled, neptune's witness");
}
