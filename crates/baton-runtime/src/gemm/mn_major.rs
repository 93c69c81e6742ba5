//! MN-major BF16 operands: a column-major A (M contiguous) and a B stored
//! K×N row-major (N contiguous, `torch.mm`'s layout of a weight kept
//! `[in, out]`), read by the Hopper kernel through TMA boxes of 64 × 64
//! (64 elements of M or N per 128-byte row) and `wgmma`'s transpose bits.
//!
//! Each (tile configuration × layout pair) is its own kernel entry
//! (`kernel_abi::gemm_bf16::GEMM_128X256_AM`, …): the transpose bits are
//! immediates of the instruction. Only the two cooperative configurations
//! without clusters have them ([`Bf16Layouts::CONFIGS`]): an N-major B is
//! not multicast, and 224 columns are not whole 64-column boxes. The
//! heuristic's choice is mapped onto them ([`Bf16Layouts::config_for`]).

use crate::error::MatrixError;
use crate::gemm::GemmConfig;
use baton::kernel::KernelSpec;
use baton_kernels_abi::gemm_bf16::{self as abi, A_MN_MAJOR, B_MN_MAJOR};
use baton_kernels_abi::gemm_params::GemmBf16Params;

/// Which BF16 kernel operands are MN-major (in the kernel's terms: A is
/// M×K, B is N×K; K-major is the default).
///
/// ```
/// use baton_runtime::gemm::mn_major::Bf16Layouts;
/// let l = Bf16Layouts { a_m_major: true, b_n_major: false };
/// assert_eq!((l.code(), Bf16Layouts::K_MAJOR.code()), (1, 0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Bf16Layouts {
    /// A is M-major (column-major A: M contiguous).
    pub a_m_major: bool,
    /// B is N-major (N contiguous: a K×N row-major buffer).
    pub b_n_major: bool,
}

/// What the MN-major entries need, for [`MatrixError::NotSupported`].
pub const MN_MAJOR_RULE: &str = "MN-major BF16 operands (column-major A, row-major K×N B) run on \
     the 128x256 and 128x128 cooperative configurations (no clusters, no ping-pong)";

impl Bf16Layouts {
    /// Both operands K-major (A row-major, B an N×K row-major buffer).
    pub const K_MAJOR: Bf16Layouts = Bf16Layouts {
        a_m_major: false,
        b_n_major: false,
    };

    /// The configurations with MN-major entries.
    pub const CONFIGS: [GemmConfig; 2] = [GemmConfig::T128x256, GemmConfig::T128x128];

    /// The kernel's layout code (`kernel_abi::gemm_bf16::A_MN_MAJOR` |
    /// `B_MN_MAJOR`).
    pub const fn code(self) -> u32 {
        (if self.a_m_major { A_MN_MAJOR } else { 0 })
            | (if self.b_n_major { B_MN_MAJOR } else { 0 })
    }

    /// Whether both operands are K-major.
    pub const fn is_k_major(self) -> bool {
        self.code() == 0
    }

    /// The layouts of `Dᵀ = Bᵀ·Aᵀ` (a column-major D): the kernel's A is
    /// B's buffer and its B is A's, each keeping which dimension is
    /// contiguous.
    ///
    /// ```
    /// use baton_runtime::gemm::mn_major::Bf16Layouts;
    /// let l = Bf16Layouts { a_m_major: true, b_n_major: false };
    /// assert_eq!(l.swapped(), Bf16Layouts { a_m_major: false, b_n_major: true });
    /// ```
    pub const fn swapped(self) -> Bf16Layouts {
        Bf16Layouts {
            a_m_major: self.b_n_major,
            b_n_major: self.a_m_major,
        }
    }

    /// The configuration to run `config` (the heuristic's choice) with
    /// these layouts: itself when K-major, otherwise the one of
    /// [`CONFIGS`](Self::CONFIGS) of the nearest tile width (128x256 for
    /// tiles of 224 or 256 columns, 128x128 for the rest).
    ///
    /// ```
    /// use baton_runtime::gemm::GemmConfig;
    /// use baton_runtime::gemm::mn_major::Bf16Layouts;
    /// let l = Bf16Layouts { a_m_major: false, b_n_major: true };
    /// assert_eq!(l.config_for(GemmConfig::T128x224C2), GemmConfig::T128x256);
    /// assert_eq!(l.config_for(GemmConfig::T128x128PingPong), GemmConfig::T128x128);
    /// assert_eq!(Bf16Layouts::K_MAJOR.config_for(GemmConfig::T128x64), GemmConfig::T128x64);
    /// ```
    pub const fn config_for(self, config: GemmConfig) -> GemmConfig {
        if self.is_k_major() || config.spec().is_none() {
            return config;
        }
        if config.tile().1 >= 224 {
            GemmConfig::T128x256
        } else {
            GemmConfig::T128x128
        }
    }

    /// The kernel entry of `config` with these layouts.
    ///
    /// Errors: [`MatrixError::NotSupported`] ([`MN_MAJOR_RULE`]) for an
    /// MN-major layout on a configuration without such entries; `None`
    /// for the sm_100a configuration (K-major only: the caller refuses it).
    ///
    /// ```
    /// use baton_runtime::gemm::GemmConfig;
    /// use baton_runtime::gemm::mn_major::Bf16Layouts;
    /// let both = Bf16Layouts { a_m_major: true, b_n_major: true };
    /// let spec = both.spec(GemmConfig::T128x128).unwrap().unwrap();
    /// assert_eq!(spec.name, "baton_gemm_bf16_128x128_ambn");
    /// assert!(both.spec(GemmConfig::T128x256C2).is_err());
    /// ```
    pub fn spec(
        self,
        config: GemmConfig,
    ) -> Result<Option<&'static KernelSpec<GemmBf16Params>>, MatrixError> {
        let spec = match (config, self.a_m_major, self.b_n_major) {
            (_, false, false) => return Ok(config.spec()),
            (GemmConfig::T128x256, true, false) => &abi::GEMM_128X256_AM,
            (GemmConfig::T128x256, false, true) => &abi::GEMM_128X256_BN,
            (GemmConfig::T128x256, true, true) => &abi::GEMM_128X256_AMBN,
            (GemmConfig::T128x128, true, false) => &abi::GEMM_128X128_AM,
            (GemmConfig::T128x128, false, true) => &abi::GEMM_128X128_BN,
            (GemmConfig::T128x128, true, true) => &abi::GEMM_128X128_AMBN,
            _ => {
                return Err(MatrixError::NotSupported {
                    what: "this tile configuration with an MN-major operand",
                    gemm: "Hopper BF16 GEMM",
                    allowed: MN_MAJOR_RULE,
                });
            }
        };
        Ok(Some(spec))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_layout_pair_has_an_entry_per_config_and_none_elsewhere() {
        for a_m_major in [false, true] {
            for b_n_major in [false, true] {
                let l = Bf16Layouts {
                    a_m_major,
                    b_n_major,
                };
                for c in GemmConfig::SM90 {
                    let mapped = l.config_for(c);
                    let spec = l.spec(mapped).unwrap().unwrap();
                    if l.is_k_major() {
                        assert_eq!((mapped, spec.name), (c, c.kernel()));
                        continue;
                    }
                    assert!(Bf16Layouts::CONFIGS.contains(&mapped), "{c:?}");
                    // The MN-major entry has the K-major entry's layout.
                    assert_eq!(spec.dynamic_smem_bytes, mapped.smem_bytes());
                    assert_eq!(spec.cluster, [1, 1, 1]);
                    assert!(spec.name.starts_with(mapped.kernel()), "{}", spec.name);
                    if !Bf16Layouts::CONFIGS.contains(&c) {
                        let e = l.spec(c).unwrap_err();
                        assert!(e.to_string().contains("128x256 and 128x128"), "{e}");
                    }
                }
            }
        }
    }
}
