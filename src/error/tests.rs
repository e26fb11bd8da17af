use super::*;
use std::error::Error as _;

#[test]
fn circuit_errors_keep_their_variant_through_a_batch_member() {
    let e = Error::Synthesis(SynthesisError::AssignmentMissing).member(3);
    assert_eq!(e.to_string(), "batch member 3");
    assert_eq!(
        e.chain(),
        "batch member 3: synthesis failed: an assignment for a variable could not be \
         computed"
    );
    assert!(matches!(
        e.into_synthesis_error(),
        SynthesisError::AssignmentMissing
    ));
}

/// A chain printer (each error, then its sources) shows every part once.
#[test]
fn a_two_level_chain_prints_each_cause_once() {
    let denied = io::Error::new(io::ErrorKind::PermissionDenied, "denied by test");
    let e = Error::file("x.rec", FileProblem::Io(denied)).member(2);
    let mut printed = vec![e.to_string()];
    let mut cause = e.source();
    while let Some(error) = cause {
        printed.push(error.to_string());
        cause = error.source();
    }
    assert_eq!(
        printed,
        [
            "batch member 2",
            "x.rec",
            "the operating system refused",
            "denied by test"
        ]
    );
    let all = printed.join(": ");
    for part in ["batch member", "x.rec", "denied by test"] {
        assert_eq!(all.matches(part).count(), 1, "{all}");
    }
    assert_eq!(e.chain(), all);
}

#[test]
fn own_errors_convert_by_meaning_without_repeating_a_prefix() {
    let file = Error::file("x.rec", FileProblem::Checksum).member(1);
    match file.into_synthesis_error() {
        SynthesisError::IoError(e) => {
            assert_eq!(e.kind(), io::ErrorKind::InvalidData);
            assert_eq!(
                e.to_string(),
                "batch member 1: x.rec: checksum mismatch: the file is damaged"
            );
            let ours = e.source().and_then(|e| e.downcast_ref::<Error>());
            assert!(matches!(ours, Some(Error::Member { index: 1, .. })));
        }
        other => panic!("{other:?}"),
    }
    let mismatch = Error::StructureMismatch {
        what: "constraints",
        recorded: 11,
        found: 21,
    };
    let message = mismatch.into_synthesis_error().to_string();
    assert_eq!(message.matches("incompatible vector length").count(), 1);
    assert!(message.contains("21 constraints"), "{message}");
    assert!(matches!(
        Error::Unsatisfied { row: 4 }.into_synthesis_error(),
        SynthesisError::Unsatisfiable
    ));
}
