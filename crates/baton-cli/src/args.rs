//! Parsers of the `baton` command's argument values (shapes, tile
//! configurations, FP8 kernels), shared by the command line and the plan
//! probes in `examples/` (`bf16_plans`, `fp8_plans`). Each returns a
//! message naming what is allowed.

use baton_runtime::gemm::GemmConfig;
use baton_runtime::gemm::fp8::VARIANTS;

/// The FP8 kernels' name prefix, which [`parse_fp8_kernel`] lets a name
/// leave out.
pub const FP8_KERNEL_PREFIX: &str = "baton_gemm_fp8_blockwise_";

/// A GEMM shape `MxNxK`.
///
/// ```
/// use baton_cli::args::parse_shape;
/// assert_eq!(parse_shape("8x1024x32768"), Ok((8, 1024, 32768)));
/// assert!(parse_shape("8x1024").unwrap_err().contains("must be MxNxK"));
/// ```
pub fn parse_shape(s: &str) -> Result<(usize, usize, usize), String> {
    let v: Vec<usize> = s
        .split('x')
        .map(|p| p.trim().parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{s}: {e}"))?;
    match v[..] {
        [m, n, k] => Ok((m, n, k)),
        _ => Err(format!("shape '{s}' must be MxNxK, e.g. 8192x8192x8192")),
    }
}

/// A BF16 tile configuration by [`GemmConfig::name`] (sm_90a or sm_100a).
///
/// ```
/// use baton_cli::args::parse_config;
/// use baton_runtime::gemm::GemmConfig;
/// assert_eq!(parse_config("128x256c2"), Ok(GemmConfig::T128x256C2));
/// assert!(parse_config("64x64").unwrap_err().contains("allowed: "));
/// ```
pub fn parse_config(s: &str) -> Result<GemmConfig, String> {
    let all = || GemmConfig::SM90.into_iter().chain(GemmConfig::SM100);
    all().find(|c| c.name() == s).ok_or_else(|| {
        let names: Vec<String> = all().map(|c| c.name()).collect();
        format!(
            "unknown tile configuration '{s}'; allowed: {}",
            names.join(", ")
        )
    })
}

/// An FP8 kernel of [`VARIANTS`], with or without [`FP8_KERNEL_PREFIX`].
///
/// ```
/// use baton_cli::args::parse_fp8_kernel;
/// assert_eq!(parse_fp8_kernel("128x32_db"), Ok("baton_gemm_fp8_blockwise_128x32_db"));
/// assert!(parse_fp8_kernel("128x33").is_err());
/// ```
pub fn parse_fp8_kernel(s: &str) -> Result<&'static str, String> {
    VARIANTS
        .into_iter()
        .find(|v| *v == s || v.trim_start_matches(FP8_KERNEL_PREFIX) == s)
        .ok_or_else(|| format!("unknown FP8 kernel '{s}'; allowed: {}", VARIANTS.join(", ")))
}

/// A shape, and optionally the plan forced on it: `MxNxK` or
/// `MxNxK:NAME[:SPLITS]` (`NAME` read by `parse_name`, `SPLITS` 1 when
/// left out), as the plan probes take their arguments.
///
/// ```
/// use baton_cli::args::{parse_config, parse_forced_plan};
/// use baton_runtime::gemm::GemmConfig;
/// assert_eq!(parse_forced_plan("256x1024x32768:128x128:8", parse_config),
///            Ok(((256, 1024, 32768), Some((GemmConfig::T128x128, 8)))));
/// assert_eq!(parse_forced_plan("64x64x64", parse_config), Ok(((64, 64, 64), None)));
/// ```
pub type ForcedPlan<T> = ((usize, usize, usize), Option<(T, usize)>);

/// See [`ForcedPlan`].
///
/// ```
/// use baton_cli::args::{parse_fp8_kernel, parse_forced_plan};
/// let (shape, forced) = parse_forced_plan("32x1024x32768:128x32_db:4", parse_fp8_kernel).unwrap();
/// assert_eq!((shape, forced.unwrap().1), ((32, 1024, 32768), 4));
/// assert!(parse_forced_plan("32x1024x32768:128x32_db:four", parse_fp8_kernel).is_err());
/// ```
pub fn parse_forced_plan<T>(
    a: &str,
    parse_name: impl Fn(&str) -> Result<T, String>,
) -> Result<ForcedPlan<T>, String> {
    let mut parts = a.split(':');
    let shape = parse_shape(parts.next().unwrap_or_default())?;
    let forced = match parts.next() {
        None => None,
        Some(name) => {
            let splits = match parts.next() {
                None => 1,
                Some(s) => s.parse().map_err(|e| format!("SPLITS '{s}': {e}"))?,
            };
            Some((parse_name(name)?, splits))
        }
    };
    Ok((shape, forced))
}
