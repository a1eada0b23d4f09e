// The one item of `metrale_kernels` that the reference uses.
pub const DECODE_ROLLBACK_RING_SLOTS: usize = 8;
