// Fixed-order sums and inverse-CDF walks over chunk trees, mirroring det::chunk_tree and
// det::descend (engine/ops/det_math.h). Chunk c's invocation writes leaf ct_node[P + c] (zero for
// c >= the chunk count; P = tree_leaves(n)); ct_combine() then builds the heap. Include
// det_math.glsl first; the includer defines `tid` and `wg` (invocation index, workgroup size).

shared float ct_node[2u * kMaxChunks];

void ct_add(uint n) {
  precise float s = ct_node[2u * n] + ct_node[2u * n + 1u];
  ct_node[n] = s;
}

// Called by every invocation after its leaves are written (it synchronises). Subtrees of 16
// leaves are combined in parallel, the rest of the heap by invocation 0: long serial loops are
// what a CPU implementation of Vulkan (lavapipe) runs slowest.
void ct_combine(uint leaves) {
  barrier();
  uint top = leaves;
  if (leaves > 16u) {
    top = leaves / 16u;  // subtree roots are nodes top .. 2 top - 1
    for (uint t = tid; t < top; t += wg) {
      const uint r = top + t;
      for (uint d = 8u; d >= 1u; d >>= 1u) {
        for (uint j = 0u; j < d; ++j) ct_add(r * d + j);
      }
    }
    barrier();
  }
  if (tid == 0u) {
    for (uint n = top - 1u; n >= 1u; --n) ct_add(n);
  }
  barrier();
}

// Walks the heap for `target`; returns the chunk and leaves in `target` what remains for the
// walk along it.
uint ct_descend(uint leaves, inout float target) {
  uint node = 1u;
  while (node < leaves) {
    const float left = ct_node[2u * node], right = ct_node[2u * node + 1u];
    if (target < left || right == 0.0) {
      node = 2u * node;
    } else {
      precise float t = target - left;
      target = t;
      node = 2u * node + 1u;
    }
  }
  return node - leaves;
}
