//! The PTX built from `kernels/` by `baton-build` and embedded at
//! build time (see `build.rs`), and helpers to read PTX text.

use crate::Variant;
use crate::error::{Error, Result};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/baton_ptx.rs"));
}

pub use embedded::SOURCE;

/// The embedded PTX of `variant`, or [`Error::PtxNotBuilt`].
pub fn get(variant: Variant) -> Result<&'static str> {
    let p = match variant {
        Variant::Release => embedded::RELEASE_PTX,
        Variant::Debug => embedded::DEBUG_PTX,
    };
    p.ok_or(Error::PtxNotBuilt {
        variant,
        built: SOURCE,
    })
}

/// The `ptxas -v` output captured when the PTX was built (`--check`), if
/// ptxas was available then.
pub fn ptxas_report(variant: Variant) -> Option<&'static str> {
    match variant {
        Variant::Release => embedded::RELEASE_PTXAS,
        Variant::Debug => embedded::DEBUG_PTXAS,
    }
}

/// The sm_100a (Blackwell) PTX, `baton_sm100a.ptx`, if this build has it:
/// the sm_100a GEMMs. [`Gpu::load_kernels`](crate::Gpu::load_kernels) loads
/// it on a compute-capability-10.0 GPU.
pub fn sm100a() -> Option<&'static str> {
    embedded::SM100A_PTX
}

/// Names of the `.entry` functions (kernels) in PTX text, in order.
///
/// ```
/// let ptx = ".visible .entry foo(\n.param .u64 a\n)\n{ ret; }\n.entry bar()\n{ ret; }";
/// assert_eq!(baton_runtime::ptx::entry_names(ptx), ["foo", "bar"]);
/// ```
pub fn entry_names(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let rest = l
                .strip_prefix(".visible ")
                .or_else(|| l.strip_prefix(".weak "))
                .unwrap_or(l);
            let rest = rest.strip_prefix(".entry")?.trim_start();
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
                .collect();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}
