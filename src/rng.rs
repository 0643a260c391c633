//! A tiny deterministic random number generator (xorshift64*), shared by the build script
//! (magic-number search), self-play data generation and the tests, so that none of them needs
//! the `rand` crate.

/// xorshift64*: fast, seedable, and good enough to pick moves and magic candidates.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed` (any value, zero included): small seeds are spread over the
    /// state.
    pub const fn new(seed: u64) -> Rng {
        Rng((seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x2545_f491_4f6c_dd1d) | 1)
    }

    /// A generator whose state is exactly `state` (zero, which would stay zero, becomes one).
    pub const fn from_state(state: u64) -> Rng {
        Rng(if state == 0 { 1 } else { state })
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.next_u64() % den.max(1) < num
    }

    /// Uniform in `-a..a`, from the top 24 bits (the resolution of an `f32`).
    pub fn uniform(&mut self, a: f32) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 * a - a
    }

    /// A random element of `items` (which must not be empty).
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}
