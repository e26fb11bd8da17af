//! What a circuit structure's recording is filed under: a digest of the verifying key of its
//! parameters, which are made for exactly one structure.

/// A structure's key: the digest of its verifying key's bytes, as a keyed recording file's
/// header holds it.
pub(crate) use crate::precompiled::Key;

/// How parameters name their structure: its key, asked with the circuit's input count
/// (parameter sources take it when asked for their verifying key).
pub(crate) type KeyFor<'a> = dyn Fn(usize) -> Option<Key> + Sync + 'a;

/// The key of the verifying key that `write` serializes (bellperson's `VerifyingKey::write`,
/// of whichever release); `None` if it cannot be written.
pub(crate) fn key_of(write: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> Option<Key> {
    let mut bytes = Vec::new();
    write(&mut bytes).ok()?;
    let mut digest = blake2s_simd::Params::new();
    digest.personal(b"synthrec");
    Some(*digest.hash(&bytes).as_array())
}
