//! The integer kernels of inference, each in a portable scalar version and SIMD versions
//! (AVX2 and AVX-512 on x86_64, chosen at run time; NEON on aarch64, always present there).
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
    /// x86_64 AVX-512 F and BW (32 x i16 per register); used only when the CPU has both.
    Avx512,
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
        #[cfg(target_arch = "x86_64")]
        if has_avx512() {
            v.push(Kernel::Avx512);
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
            Kernel::Avx512 => "avx512",
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
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 => {
            assert!(has_avx512(), "AVX-512 kernel on a CPU without AVX-512 F and BW");
            // SAFETY: AVX-512 F and BW are present (checked above); check_apply guarantees h
            // is a multiple of 32 and every row and slice read or written holds h elements.
            unsafe { x86::apply_avx512(out, base, adds, subs, w, h) }
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
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 => {
            assert!(has_avx512(), "AVX-512 kernel on a CPU without AVX-512 F and BW");
            // SAFETY: AVX-512 F and BW are present (checked above); the assert above bounds
            // every read.
            unsafe { x86::output_avx512(us, them, w, h) }
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

/// Does this CPU have AVX-512 F and BW (the 16-bit integer instructions)? Detected once, as
/// [`has_avx2`].
#[cfg(target_arch = "x86_64")]
#[inline]
fn has_avx512() -> bool {
    static AVX512: OnceLock<bool> = OnceLock::new();
    *AVX512
        .get_or_init(|| is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw"))
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

    /// The accumulator and output kernels for one register width, written once for AVX2
    /// and AVX-512 (the same algorithm; only the intrinsics' names and the width differ).
    /// `apply` keeps tiles of `$wide` registers in registers over all the rows, then tiles
    /// of `$narrow` registers (32 values: h is a multiple of 32) for the rest.
    macro_rules! kernels {
        (
            feature: $feat:literal,
            lanes: $lanes:expr,
            tiles: ($wide:literal, $narrow:literal),
            names: ($apply:ident, $output:ident, $tile:ident, $half:ident),
            vector: $vec:ty,
            zero: $zero:ident,
            load: $load:ident,
            store: $store:ident,
            i16: ($add:ident, $sub:ident, $min:ident, $max:ident, $set:ident, $mullo:ident),
            madd: $madd:ident,
            add_i32: $add32:ident $(,)?
        ) => {
            /// `R` registers' worth of `apply` starting at element `start`.
            #[target_feature(enable = $feat)]
            fn $tile<const R: usize>(
                out: &mut [i16],
                base: &[i16],
                adds: &[u16],
                subs: &[u16],
                w: &[i16],
                h: usize,
                start: usize,
            ) {
                const LANES: usize = $lanes;
                let mut regs = [$zero(); R];
                for (r, reg) in regs.iter_mut().enumerate() {
                    // SAFETY: the caller guarantees start + R * LANES <= h <= base.len();
                    // the unaligned load has no alignment requirement.
                    *reg = unsafe { $load(base.as_ptr().add(start + r * LANES).cast()) };
                }
                for &a in adds {
                    let row = a as usize * h + start;
                    for (r, reg) in regs.iter_mut().enumerate() {
                        // SAFETY: rows are whole (checked by check_apply), so
                        // row + R * LANES stays within w.
                        let x = unsafe { $load(w.as_ptr().add(row + r * LANES).cast()) };
                        *reg = $add(*reg, x);
                    }
                }
                for &s in subs {
                    let row = s as usize * h + start;
                    for (r, reg) in regs.iter_mut().enumerate() {
                        // SAFETY: as for the additions.
                        let x = unsafe { $load(w.as_ptr().add(row + r * LANES).cast()) };
                        *reg = $sub(*reg, x);
                    }
                }
                for (r, reg) in regs.iter().enumerate() {
                    // SAFETY: start + R * LANES <= h <= out.len(); the unaligned store has
                    // no alignment requirement.
                    unsafe { $store(out.as_mut_ptr().add(start + r * LANES).cast(), *reg) };
                }
            }

            /// `apply` on this register width (see the macro's comment for the tiling).
            #[target_feature(enable = $feat)]
            pub(super) fn $apply(
                out: &mut [i16],
                base: &[i16],
                adds: &[u16],
                subs: &[u16],
                w: &[i16],
                h: usize,
            ) {
                const LANES: usize = $lanes;
                let mut start = 0;
                while start + $wide * LANES <= h {
                    $tile::<$wide>(out, base, adds, subs, w, h, start);
                    start += $wide * LANES;
                }
                while start < h {
                    $tile::<$narrow>(out, base, adds, subs, w, h, start);
                    start += $narrow * LANES;
                }
            }

            /// Adds the SCReLU terms of `acc` against `w` (both at least h long) to `sum`.
            #[target_feature(enable = $feat)]
            fn $half(acc: &[i16], w: &[i16], h: usize, mut sum: $vec) -> $vec {
                const LANES: usize = $lanes;
                let zero = $zero();
                let qa = $set(QA as i16);
                let mut i = 0;
                while i < h {
                    // SAFETY: i + LANES <= h <= acc.len(), w.len() (h is a multiple of 32).
                    let (a, x) = unsafe {
                        ($load(acc.as_ptr().add(i).cast()), $load(w.as_ptr().add(i).cast()))
                    };
                    let v = $min($max(a, zero), qa);
                    let vw = $mullo(v, x);
                    sum = $add32(sum, $madd(vw, v));
                    i += LANES;
                }
                sum
            }

            /// `output` on this register width.
            #[target_feature(enable = $feat)]
            pub(super) fn $output(us: &[i16], them: &[i16], w: &[i16], h: usize) -> i32 {
                let sum = $half(us, &w[..h], h, $zero());
                let sum = $half(them, &w[h..2 * h], h, sum);
                let mut lanes = [0i32; $lanes / 2];
                // SAFETY: lanes has room for exactly one register (as many i32 as half the
                // i16 lanes).
                unsafe { $store(lanes.as_mut_ptr().cast(), sum) };
                lanes.iter().fold(0i32, |s, &x| s.wrapping_add(x))
            }
        };
    }

    kernels! {
        feature: "avx2",
        lanes: 16,
        tiles: (8, 2),
        names: (apply_avx2, output_avx2, tile_avx2, half_avx2),
        vector: __m256i,
        zero: _mm256_setzero_si256,
        load: _mm256_loadu_si256,
        store: _mm256_storeu_si256,
        i16: (
            _mm256_add_epi16,
            _mm256_sub_epi16,
            _mm256_min_epi16,
            _mm256_max_epi16,
            _mm256_set1_epi16,
            _mm256_mullo_epi16
        ),
        madd: _mm256_madd_epi16,
        add_i32: _mm256_add_epi32,
    }

    kernels! {
        feature: "avx512f,avx512bw",
        lanes: 32,
        tiles: (8, 1),
        names: (apply_avx512, output_avx512, tile_avx512, half_avx512),
        vector: __m512i,
        zero: _mm512_setzero_si512,
        load: _mm512_loadu_si512,
        store: _mm512_storeu_si512,
        i16: (
            _mm512_add_epi16,
            _mm512_sub_epi16,
            _mm512_min_epi16,
            _mm512_max_epi16,
            _mm512_set1_epi16,
            _mm512_mullo_epi16
        ),
        madd: _mm512_madd_epi16,
        add_i32: _mm512_add_epi32,
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
