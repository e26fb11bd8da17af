//! Where a recording's arrays live: in memory, or read in place from a mapped file (the
//! file's sections, the mapping, and the guards that keep a file changed under it from
//! ending the process or filling stderr).

#[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
#[allow(unsafe_code)]
pub(crate) mod bus_guard;
#[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
pub(crate) mod contained;
#[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
#[allow(unsafe_code)]
pub(crate) mod mapping;
#[allow(unsafe_code)]
pub(crate) mod plain;
pub(crate) mod sections;
pub(crate) mod words;
