//! Encoded TMA tensor maps kept on the host per operand set.
//!
//! The kernels take their maps by value in the launch parameters, so a
//! launch needs no device memory; but the driver's encoder
//! (`cuTensorMapEncodeTiled`) costs about 3 µs of host time per map
//! (measured on the H100 host, BENCHMARKS.md "Session 8 — PY"): 15 µs
//! for a BF16 GEMM's five maps, five times the launch itself. A map is a
//! pure function of the kernel and its operand's address, shape and stride
//! ([`MapKey`]), so the maps of each operand set are encoded once and
//! copied from here into the parameters of every later launch. Entries are
//! plain host bytes that no launch refers to after it is enqueued, so the
//! cache can be dropped at any time: it is cleared when it reaches
//! [`CAPACITY`] operand sets.

use baton_kernels_abi::gemm_params::TensorMapParam;
use std::collections::HashMap;

/// What a launch's maps are a function of: the kernel (and its tile
/// configuration), M, N, K and every mapped operand's address and row
/// stride.
pub type MapKey = [u64; 16];

/// The maps of one launch (BF16 uses the first five).
pub type Maps = [TensorMapParam; 6];

/// Operand sets kept before the cache is cleared (about 3 MiB of maps).
pub const CAPACITY: usize = 4096;

/// Encoded maps by [`MapKey`].
#[derive(Default)]
pub struct MapCache {
    entries: HashMap<MapKey, Maps>,
}

impl MapCache {
    /// The maps for `key`, encoded by `encode` on the first call with it.
    pub fn get_or_encode<E>(
        &mut self,
        key: &MapKey,
        encode: impl FnOnce() -> Result<Maps, E>,
    ) -> Result<&Maps, E> {
        if !self.entries.contains_key(key) {
            if self.entries.len() >= CAPACITY {
                self.entries.clear();
            }
            let maps = encode()?;
            self.entries.insert(*key, maps);
        }
        Ok(&self.entries[key])
    }

    /// Operand sets cached.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_once_per_key_and_stays_bounded() {
        let mut cache = MapCache::default();
        let mut encoded = 0;
        let mut get = |cache: &mut MapCache, k: u64| {
            let key = [k; 16];
            cache
                .get_or_encode(&key, || {
                    encoded += 1;
                    Ok::<_, ()>(
                        [TensorMapParam {
                            bytes: [k as u8; 128],
                        }; 6],
                    )
                })
                .map(|m| m[0].bytes[0])
        };
        assert_eq!(get(&mut cache, 7), Ok(7));
        assert_eq!(get(&mut cache, 7), Ok(7));
        assert_eq!(cache.len(), 1);
        for k in 0..CAPACITY as u64 + 10 {
            get(&mut cache, 1000 + k).unwrap();
        }
        assert!(cache.len() <= CAPACITY);
        assert_eq!(encoded, 1 + CAPACITY + 10);
    }
}
