//! The drop-ins' environment variables, read as the README says: one rule for the three,
//! an empty value is the same as unset; a value that is not a setting is an error where the
//! setting can fail (members in flight) and off, said in the log, where it cannot
//! (retention); the recording cache is on by default, under /var/tmp, and `off` turns it
//! off. One test in this binary: the variables are the process's.

use std::path::PathBuf;

use synthpool::groth16::{
    cache_dir, in_flight, retains_buffers, CACHE_DIR_VARIABLE, DEFAULT_CACHE_DIR,
    DEFAULT_IN_FLIGHT, IN_FLIGHT_VARIABLE, RETAIN_BUFFERS_VARIABLE,
};

#[test]
fn empty_means_unset_for_every_variable() {
    for name in [
        CACHE_DIR_VARIABLE,
        IN_FLIGHT_VARIABLE,
        RETAIN_BUFFERS_VARIABLE,
    ] {
        std::env::remove_var(name);
    }
    let default = Some(PathBuf::from(DEFAULT_CACHE_DIR));
    assert_eq!(cache_dir(), default);
    assert_eq!(in_flight().unwrap(), DEFAULT_IN_FLIGHT);
    assert!(!retains_buffers());

    for name in [
        CACHE_DIR_VARIABLE,
        IN_FLIGHT_VARIABLE,
        RETAIN_BUFFERS_VARIABLE,
    ] {
        std::env::set_var(name, "");
    }
    assert_eq!(cache_dir(), default, "{CACHE_DIR_VARIABLE}=");
    assert_eq!(
        in_flight().unwrap(),
        DEFAULT_IN_FLIGHT,
        "{IN_FLIGHT_VARIABLE}="
    );
    assert!(!retains_buffers(), "{RETAIN_BUFFERS_VARIABLE}=");

    std::env::set_var(CACHE_DIR_VARIABLE, "/var/cache/synthpool");
    assert_eq!(cache_dir(), Some(PathBuf::from("/var/cache/synthpool")));
    std::env::set_var(CACHE_DIR_VARIABLE, "off");
    assert_eq!(cache_dir(), None, "{CACHE_DIR_VARIABLE}=off");
    std::env::set_var(IN_FLIGHT_VARIABLE, " 3 ");
    assert_eq!(in_flight().unwrap(), 3);
    for refused in ["0", "two", " ", "-1"] {
        std::env::set_var(IN_FLIGHT_VARIABLE, refused);
        let err = in_flight().expect_err(refused);
        assert!(err.to_string().contains(IN_FLIGHT_VARIABLE), "{err}");
    }
    std::env::set_var(RETAIN_BUFFERS_VARIABLE, "1");
    assert!(retains_buffers());
    for off in ["0", "yes", "true"] {
        std::env::set_var(RETAIN_BUFFERS_VARIABLE, off);
        assert!(!retains_buffers(), "{RETAIN_BUFFERS_VARIABLE}={off}");
    }
}
