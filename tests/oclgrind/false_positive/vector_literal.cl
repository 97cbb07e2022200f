/*
 * oclgrind 21.10's first false positive (also Oclgrind issue #126): a store
 * of a vector built from a literal with a run-time lane is reported as
 * "Uninitialized value written to global memory", although every lane is
 * set. The optimiser builds (uint2)(i, i + 7) by insertelement into a poison
 * vector, and the simulator takes the poison lane's shadow for the result's.
 * literal() is reported on each work-item; scalar() writes the same bytes
 * through two 32-bit stores, as nestcl_spike_store (kernels_templates/
 * nestcl_ring.h) does, and is not. Run by vector_literal.sim / .cmake.
 */
__kernel void literal(__global uint2 *out)
{
  const uint i = (uint)get_global_id(0);
  out[i] = (uint2)(i, i + 7u);
}

__kernel void scalar(__global uint2 *out)
{
  const uint i = (uint)get_global_id(0);
  __global uint *word = (__global uint *)(out + i);
  word[0] = i;
  word[1] = i + 7u;
}
