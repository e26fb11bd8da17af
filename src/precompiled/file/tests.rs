use super::*;
use crate::precompiled::tests::Square;

#[test]
fn a_keyed_file_opens_under_its_key_only() {
    let dir = std::env::temp_dir().join(format!("synthpool-keyed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("keyed.rec");
    let recording = Recording::<blstrs::Scalar>::record(Square).unwrap();
    recording.save_keyed(&path, &[7; KEY_LEN]).unwrap();
    let loaded = Recording::<blstrs::Scalar>::load_keyed(&path, &[7; KEY_LEN]).unwrap();
    assert_eq!(loaded.shape(), recording.shape());
    let mapped = Recording::<blstrs::Scalar>::map_keyed(&path, &[7; KEY_LEN]).unwrap();
    assert_eq!(mapped.shape(), recording.shape());
    for err in [
        Recording::<blstrs::Scalar>::load_keyed(&path, &[8; KEY_LEN]).unwrap_err(),
        Recording::<blstrs::Scalar>::map_keyed(&path, &[8; KEY_LEN]).unwrap_err(),
    ] {
        assert!(
            matches!(
                err,
                Error::File {
                    problem: FileProblem::Key,
                    ..
                }
            ),
            "{err}"
        );
    }
    // Unkeyed opening takes any key.
    assert!(Recording::<blstrs::Scalar>::load(&path).is_ok());
    assert!(Recording::<blstrs::Scalar>::map_unverified(&path).is_ok());
    std::fs::remove_dir_all(dir).unwrap();
}

/// A file cut right after an evaluation's last check of its mapping changes nothing the
/// evaluation returns: every read of the file (the densities' too) came before it.
#[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
#[test]
fn nothing_is_read_from_a_mapping_after_its_last_check() {
    let dir = std::env::temp_dir().join(format!("synthpool-last-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("square.rec");
    Recording::<blstrs::Scalar>::record(Square)
        .unwrap()
        .save(&path)
        .unwrap();
    let direct = crate::synthesize::synthesize(Square).unwrap();
    let mapped = Recording::<blstrs::Scalar>::map_unverified(&path).unwrap();
    let witness = mapped.witness(Square).unwrap();
    let cut = path.clone();
    crate::precompiled::tests::after_the_next_last_check(move || {
        let file = std::fs::OpenOptions::new().write(true).open(cut).unwrap();
        file.set_len(0).unwrap();
    });
    let vectors = mapped.evaluate(witness).unwrap();
    assert_eq!(vectors, direct, "the vectors as they were before the cut");
    let witness = mapped.witness(Square).unwrap();
    assert!(
        matches!(
            mapped.evaluate(witness),
            Err(Error::File {
                problem: FileProblem::Changed(_),
                ..
            })
        ),
        "the next evaluation sees the cut"
    );
    std::fs::remove_dir_all(dir).unwrap();
}
