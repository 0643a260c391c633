//! The integer kernels of inference, each in a portable scalar version and SIMD versions
//! (AVX2 on x86_64, chosen at run time; NEON on aarch64, always present there).
//!
//! Every path gives bit-identical results: the accumulator kernel adds and subtracts i16
//! with wrap-around (the order of wrapping additions does not matter), and the output kernel
//! computes each term as `(v * w as i16) * v` with an i32 wrap-around sum, which is exactly
//! what the SIMD multiply-add instructions do. A network file's output weights are limited
//! to `OUTPUT_WEIGHT_MAX` so the 16-bit product never actually truncates.
//!
//! This module holds the crate's only `unsafe` for NNUE: SIMD loads and stores through raw
//! pointers, and calls into `#[target_feature]` functions after the feature was detected.

use std::sync::OnceLock;

use super::{HIDDEN_ALIGN, QA};

/// An implementation of the kernels.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// Portable Rust, no SIMD.
    Scalar,
    /// x86_64 AVX2 (16 x i16 per register); used only when the CPU has it.
    Avx2,
    /// aarch64 NEON (8 x i16 per register); part of the aarch64 baseline.
    Neon,
}

impl Kernel {
    /// The fastest kernel this CPU supports, detected on the first call and cached.
    pub fn detect() -> Kernel {
        static BEST: OnceLock<Kernel> = OnceLock::new();
        *BEST.get_or_init(|| Kernel::available().into_iter().last().unwrap_or(Kernel::Scalar))
    }

    /// Every kernel usable on this CPU, scalar first and the fastest last.
    pub fn available() -> Vec<Kernel> {
        let mut v = vec![Kernel::Scalar];
        #[cfg(target_arch = "x86_64")]
        if has_avx2() {
            v.push(Kernel::Avx2);
        }
        #[cfg(target_arch = "aarch64")]
        v.push(Kernel::Neon);
        v
    }

    /// Is this kernel usable on this CPU?
    pub fn is_available(self) -> bool {
        Kernel::available().contains(&self)
    }

    /// A short name for logs and benchmarks.
    pub const fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
            Kernel::Avx2 => "avx2",
            Kernel::Neon => "neon",
        }
    }
}

/// Checks the slice lengths every kernel relies on; the SIMD paths read and write through
/// raw pointers within exactly these bounds.
#[inline]
fn check_apply(out: &[i16], base: &[i16], adds: &[u16], subs: &[u16], w: &[i16], h: usize) {
    assert!(h.is_multiple_of(HIDDEN_ALIGN) && out.len() >= h && base.len() >= h);
    let rows = w.len() / h.max(1);
    assert!(adds.iter().chain(subs).all(|&f| (f as usize) < rows));
}

/// `out[i] = base[i] + sum of w[a * h + i] over adds - sum of w[s * h + i] over subs`, for
/// `i < h`, with i16 wrap-around. `h` is a multiple of `HIDDEN_ALIGN`; every feature index
/// names a row of `w` (panics otherwise: a programming error, never input).
#[inline]
pub fn apply(
    kernel: Kernel,
    out: &mut [i16],
    base: &[i16],
    adds: &[u16],
    subs: &[u16],
    w: &[i16],
    h: usize,
) {
    check_apply(out, base, adds, subs, w, h);
    match kernel {
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 => {
            assert!(has_avx2(), "AVX2 kernel on a CPU without AVX2");
            // SAFETY: AVX2 is present (checked above); check_apply guarantees h is a multiple
            // of 16 and every row and slice read or written holds at least h elements.
            unsafe { x86::apply_avx2(out, base, adds, subs, w, h) }
        }
        #[cfg(target_arch = "aarch64")]
        Kernel::Neon => neon::apply_neon(out, base, adds, subs, w, h),
        _ => apply_scalar(out, base, adds, subs, w, h),
    }
}

/// Sum over `i < h` of `screlu(us[i]) * w[i] + screlu(them[i]) * w[h + i]`, where
/// `screlu(x) = clamp(x, 0, QA)^2` and each term is computed as `(v * w) as i16 * v`,
/// summed with i32 wrap-around.
#[inline]
pub fn output(kernel: Kernel, us: &[i16], them: &[i16], w: &[i16], h: usize) -> i32 {
    assert!(h.is_multiple_of(HIDDEN_ALIGN) && us.len() >= h && them.len() >= h && w.len() >= 2 * h);
    match kernel {
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 => {
            assert!(has_avx2(), "AVX2 kernel on a CPU without AVX2");
            // SAFETY: AVX2 is present (checked above); the assert above bounds every read.
            unsafe { x86::output_avx2(us, them, w, h) }
        }
        #[cfg(target_arch = "aarch64")]
        Kernel::Neon => neon::output_neon(us, them, w, h),
        _ => output_scalar(us, them, w, h),
    }
}

/// Does this CPU have AVX2? Detected once: the SIMD entry points check it on every call
/// (a `Kernel` is a plain value anyone can name, so the check is what makes them safe).
#[cfg(target_arch = "x86_64")]
#[inline]
fn has_avx2() -> bool {
    static AVX2: OnceLock<bool> = OnceLock::new();
    *AVX2.get_or_init(|| is_x86_feature_detected!("avx2"))
}

fn apply_scalar(out: &mut [i16], base: &[i16], adds: &[u16], subs: &[u16], w: &[i16], h: usize) {
    let out = &mut out[..h];
    out.copy_from_slice(&base[..h]);
    for &a in adds {
        let row = &w[a as usize * h..][..h];
        for (o, &x) in out.iter_mut().zip(row) {
            *o = o.wrapping_add(x);
        }
    }
    for &s in subs {
        let row = &w[s as usize * h..][..h];
        for (o, &x) in out.iter_mut().zip(row) {
            *o = o.wrapping_sub(x);
        }
    }
}

/// One SCReLU output term exactly as the SIMD paths compute it.
#[inline]
fn screlu_term(acc: i16, w: i16) -> i32 {
    let v = acc.clamp(0, QA as i16);
    v.wrapping_mul(w) as i32 * v as i32
}

fn output_scalar(us: &[i16], them: &[i16], w: &[i16], h: usize) -> i32 {
    let mut sum = 0i32;
    for (&a, &x) in us[..h].iter().zip(&w[..h]) {
        sum = sum.wrapping_add(screlu_term(a, x));
    }
    for (&a, &x) in them[..h].iter().zip(&w[h..2 * h]) {
        sum = sum.wrapping_add(screlu_term(a, x));
    }
    sum
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use crate::nnue::QA;

    /// i16 lanes per AVX2 register.
    const LANES: usize = 16;

    /// `R` registers' worth of `apply` starting at element `start`.
    #[target_feature(enable = "avx2")]
    fn tile<const R: usize>(
        out: &mut [i16],
        base: &[i16],
        adds: &[u16],
        subs: &[u16],
        w: &[i16],
        h: usize,
        start: usize,
    ) {
        let mut regs = [_mm256_setzero_si256(); R];
        for (r, reg) in regs.iter_mut().enumerate() {
            // SAFETY: the caller guarantees start + R * LANES <= h <= base.len(); loadu has
            // no alignment requirement.
            *reg = unsafe { _mm256_loadu_si256(base.as_ptr().add(start + r * LANES).cast()) };
        }
        for &a in adds {
            let row = a as usize * h + start;
            for (r, reg) in regs.iter_mut().enumerate() {
                // SAFETY: rows are whole (checked by check_apply), so row + R * LANES stays
                // within w.
                let x = unsafe { _mm256_loadu_si256(w.as_ptr().add(row + r * LANES).cast()) };
                *reg = _mm256_add_epi16(*reg, x);
            }
        }
        for &s in subs {
            let row = s as usize * h + start;
            for (r, reg) in regs.iter_mut().enumerate() {
                // SAFETY: as for the additions.
                let x = unsafe { _mm256_loadu_si256(w.as_ptr().add(row + r * LANES).cast()) };
                *reg = _mm256_sub_epi16(*reg, x);
            }
        }
        for (r, reg) in regs.iter().enumerate() {
            // SAFETY: start + R * LANES <= h <= out.len(); storeu has no alignment need.
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(start + r * LANES).cast(), *reg) };
        }
    }

    /// AVX2 `apply`: tiles of 8 registers (128 values) kept in registers over all the rows,
    /// then 2-register tiles for the rest (h is a multiple of 32).
    #[target_feature(enable = "avx2")]
    pub(super) fn apply_avx2(
        out: &mut [i16],
        base: &[i16],
        adds: &[u16],
        subs: &[u16],
        w: &[i16],
        h: usize,
    ) {
        let mut start = 0;
        while start + 8 * LANES <= h {
            tile::<8>(out, base, adds, subs, w, h, start);
            start += 8 * LANES;
        }
        while start < h {
            tile::<2>(out, base, adds, subs, w, h, start);
            start += 2 * LANES;
        }
    }

    /// Adds the SCReLU terms of `acc` against `w` (both at least h long) to `sum`.
    #[target_feature(enable = "avx2")]
    fn half(acc: &[i16], w: &[i16], h: usize, mut sum: __m256i) -> __m256i {
        let zero = _mm256_setzero_si256();
        let qa = _mm256_set1_epi16(QA as i16);
        let mut i = 0;
        while i < h {
            // SAFETY: i + LANES <= h <= acc.len(), w.len() (h is a multiple of LANES).
            let (a, x) = unsafe {
                (
                    _mm256_loadu_si256(acc.as_ptr().add(i).cast()),
                    _mm256_loadu_si256(w.as_ptr().add(i).cast()),
                )
            };
            let v = _mm256_min_epi16(_mm256_max_epi16(a, zero), qa);
            let vw = _mm256_mullo_epi16(v, x);
            sum = _mm256_add_epi32(sum, _mm256_madd_epi16(vw, v));
            i += LANES;
        }
        sum
    }

    /// AVX2 `output`.
    #[target_feature(enable = "avx2")]
    pub(super) fn output_avx2(us: &[i16], them: &[i16], w: &[i16], h: usize) -> i32 {
        let sum = half(us, &w[..h], h, _mm256_setzero_si256());
        let sum = half(them, &w[h..2 * h], h, sum);
        let mut lanes = [0i32; 8];
        // SAFETY: lanes has room for exactly one 256-bit register.
        unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), sum) };
        lanes.iter().fold(0i32, |s, &x| s.wrapping_add(x))
    }
}

#[cfg(target_arch = "aarch64")]
mod neon {
    use std::arch::aarch64::*;

    use crate::nnue::QA;

    /// i16 lanes per NEON register.
    const LANES: usize = 8;

    fn tile<const R: usize>(
        out: &mut [i16],
        base: &[i16],
        adds: &[u16],
        subs: &[u16],
        w: &[i16],
        h: usize,
        start: usize,
    ) {
        // SAFETY (whole function): NEON is part of the aarch64 baseline; the caller
        // guarantees start + R * LANES <= h <= base.len(), out.len(), and that every row of
        // w named by adds and subs is whole.
        unsafe {
            let mut regs = [vdupq_n_s16(0); R];
            for (r, reg) in regs.iter_mut().enumerate() {
                *reg = vld1q_s16(base.as_ptr().add(start + r * LANES));
            }
            for &a in adds {
                let row = a as usize * h + start;
                for (r, reg) in regs.iter_mut().enumerate() {
                    *reg = vaddq_s16(*reg, vld1q_s16(w.as_ptr().add(row + r * LANES)));
                }
            }
            for &s in subs {
                let row = s as usize * h + start;
                for (r, reg) in regs.iter_mut().enumerate() {
                    *reg = vsubq_s16(*reg, vld1q_s16(w.as_ptr().add(row + r * LANES)));
                }
            }
            for (r, reg) in regs.iter().enumerate() {
                vst1q_s16(out.as_mut_ptr().add(start + r * LANES), *reg);
            }
        }
    }

    /// NEON `apply`: 16-register tiles (128 values), then 4-register tiles.
    pub(super) fn apply_neon(
        out: &mut [i16],
        base: &[i16],
        adds: &[u16],
        subs: &[u16],
        w: &[i16],
        h: usize,
    ) {
        let mut start = 0;
        while start + 16 * LANES <= h {
            tile::<16>(out, base, adds, subs, w, h, start);
            start += 16 * LANES;
        }
        while start < h {
            tile::<4>(out, base, adds, subs, w, h, start);
            start += 4 * LANES;
        }
    }

    /// NEON `output`.
    pub(super) fn output_neon(us: &[i16], them: &[i16], w: &[i16], h: usize) -> i32 {
        // SAFETY: NEON is part of the aarch64 baseline; every load stays below h, which the
        // caller checked against us, them and both halves of w.
        unsafe {
            let zero = vdupq_n_s16(0);
            let qa = vdupq_n_s16(QA as i16);
            let mut sum = vdupq_n_s32(0);
            for (acc, wh) in [(us, &w[..h]), (them, &w[h..2 * h])] {
                let mut i = 0;
                while i < h {
                    let a = vld1q_s16(acc.as_ptr().add(i));
                    let x = vld1q_s16(wh.as_ptr().add(i));
                    let v = vminq_s16(vmaxq_s16(a, zero), qa);
                    let vw = vmulq_s16(v, x);
                    sum = vaddq_s32(sum, vmull_s16(vget_low_s16(vw), vget_low_s16(v)));
                    sum = vaddq_s32(sum, vmull_high_s16(vw, v));
                    i += LANES;
                }
            }
            vaddvq_s32(sum)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn random_i16(rng: &mut Rng, n: usize, range: i32) -> Vec<i16> {
        (0..n).map(|_| (rng.below(2 * range as usize + 1) as i32 - range) as i16).collect()
    }

    #[test]
    fn every_kernel_matches_scalar_on_random_data() {
        let mut rng = Rng::new(7);
        for &h in &[32usize, 64, 160, 256, 1024] {
            let rows = 40;
            let w = random_i16(&mut rng, rows * h, 32767);
            let base = random_i16(&mut rng, h, 32767);
            let out_w = random_i16(&mut rng, 2 * h, 127);
            for _ in 0..20 {
                let adds: Vec<u16> = (0..rng.below(10)).map(|_| rng.below(rows) as u16).collect();
                let subs: Vec<u16> = (0..rng.below(10)).map(|_| rng.below(rows) as u16).collect();
                let mut want = vec![0i16; h];
                apply(Kernel::Scalar, &mut want, &base, &adds, &subs, &w, h);
                // Wide random values wrap around; the wrapping sum must agree on every path.
                let them = random_i16(&mut rng, h, 400);
                let want_out = output(Kernel::Scalar, &want, &them, &out_w, h);
                for k in Kernel::available() {
                    let mut got = vec![0i16; h];
                    apply(k, &mut got, &base, &adds, &subs, &w, h);
                    assert_eq!(got, want, "{} apply, h {h}", k.name());
                    assert_eq!(output(k, &want, &them, &out_w, h), want_out, "{} output", k.name());
                }
            }
        }
    }

    #[test]
    fn scalar_output_by_hand() {
        // h = 32: us all 10 (screlu 100), them all 300 (clamped to 255: 65025), one weight
        // each of 2 and -1 on the first element of each half, zero elsewhere.
        let h = 32;
        let us = vec![10i16; h];
        let them = vec![300i16; h];
        let mut w = vec![0i16; 2 * h];
        w[0] = 2;
        w[h] = -1;
        // 100 * 2 + 65025 * -1 = -64825
        assert_eq!(output(Kernel::Scalar, &us, &them, &w, h), -64825);
        assert_eq!(output(Kernel::detect(), &us, &them, &w, h), -64825);
    }
}
