// Body of group_norm.comp / group_norm_tree.comp: GroupNorm over channel-last activations,
// optionally followed by swish (x * sigmoid(x)). One workgroup per (image, group) makes two
// passes over the group: sum and sum of squares in one (taken around the group's first element,
// which keeps E[x^2] - E[x]^2 from cancelling when the mean is large against the spread), then
// the normalised output. In place (y = x) is safe: each element is read and written by the same
// invocation, and the shared first element is read by all before the reduction's barrier.
// Define SUBGROUP_REDUCE before including: 1 combines the sums with subgroupAdd (needs subgroup
// arithmetic), 0 with a shared-memory tree (the workgroup size must be a power of two).
#if SUBGROUP_REDUCE
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 1) readonly buffer G { float gamma[]; };
layout(binding = 2) readonly buffer B { float beta[]; };
layout(binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint hw, c, cpg;  // pixels per image, channels, channels per group
  uint groups;
  float eps;
  uint swish;
} p;

const uint MAX_WG = 1024;
shared vec2 partial[MAX_WG];

vec2 workgroup_sum(vec2 v) {
#if SUBGROUP_REDUCE
  v = subgroupAdd(v);
  if (subgroupElect()) partial[gl_SubgroupID] = v;
  barrier();
  vec2 t = vec2(0);
  for (uint i = 0; i < gl_NumSubgroups; ++i) t += partial[i];
  return t;
#else
  const uint lid = gl_LocalInvocationID.x;
  partial[lid] = v;
  barrier();
  for (uint stride = gl_WorkGroupSize.x / 2; stride > 0; stride >>= 1) {
    if (lid < stride) partial[lid] += partial[lid + stride];
    barrier();
  }
  return partial[0];
#endif
}

void main() {
  const uint n = gl_WorkGroupID.x / p.groups, g = gl_WorkGroupID.x - n * p.groups;
  const uint base = n * p.hw * p.c + g * p.cpg;  // element (pixel 0, first channel of the group)
  const uint lid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  const float shift = x[base];

  vec2 acc = vec2(0);  // sum(x - shift), sum((x - shift)^2)
  for (uint ch = 0; ch < p.cpg; ++ch)
    for (uint px = lid; px < p.hw; px += wg) {
      const float d = x[base + px * p.c + ch] - shift;
      acc += vec2(d, d * d);
    }
  const vec2 tot = workgroup_sum(acc);
  const float count = float(p.hw * p.cpg);
  const float dmean = tot.x / count;
  const float var = max(tot.y / count - dmean * dmean, 0.0);
  const float rstd = 1.0 / sqrt(var + p.eps);
  const float mean = shift + dmean;

  for (uint ch = 0; ch < p.cpg; ++ch) {
    // (x - mean) * a + b rather than x * a + (b - mean * a): with a tiny variance a is large and
    // the second form cancels.
    const float a = rstd * gamma[g * p.cpg + ch];
    const float b = beta[g * p.cpg + ch];
    for (uint px = lid; px < p.hw; px += wg) {
      const uint i = base + px * p.c + ch;
      float v = fma(x[i] - mean, a, b);
      if (p.swish != 0) v = v / (1.0 + exp(-v));
      y[i] = v;
    }
  }
}
