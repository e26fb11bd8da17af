//! supraseal failing (here: no CUDA device, as on a machine without a GPU) is an error of
//! the batch naming supraseal's message, not an abort; the process proves again once the
//! device is back. A binary of its own: the stand-in's device switch is per process.

use bellperson_027::groth16::SuprasealParameters;
use blstrs::Bls12;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;
use supraseal_check::{bytes_26, bytes_27, parameters, scratch, Mix};
use synthpool::groth16::v0_27 as dropin;
use synthpool::prover::v0_27::SuprasealParametersWithFile;

#[test]
fn no_device_is_an_error_and_the_next_batch_proves() {
    let dir = scratch("no-device");
    let (params, path) = parameters(0, &dir);
    let srs = SuprasealParameters::<Bls12>::new(path.clone()).unwrap();
    let keyed = SuprasealParametersWithFile::new(&srs, &path);
    let batch = || vec![Mix::with(1), Mix::with(2)];
    synthpool::groth16::set_cache_dir(None);

    supraseal_c2::standin::set_device_present(false);
    let err =
        dropin::create_random_proof_batch(batch(), &keyed, &mut XorShiftRng::seed_from_u64(3))
            .expect_err("no device");
    assert!(
        err.to_string().contains("No CUDA devices available"),
        "{err}"
    );

    supraseal_c2::standin::set_device_present(true);
    let proofs =
        dropin::create_random_proof_batch(batch(), &keyed, &mut XorShiftRng::seed_from_u64(3))
            .expect("proves once the device is back");
    let reference = bellperson::groth16::create_random_proof_batch(
        batch(),
        &params,
        &mut XorShiftRng::seed_from_u64(3),
    )
    .unwrap();
    assert_eq!(
        proofs.iter().map(bytes_27).collect::<Vec<_>>(),
        reference.iter().map(bytes_26).collect::<Vec<_>>()
    );
    std::fs::remove_dir_all(dir).unwrap();
}
