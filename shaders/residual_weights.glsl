// The weights of norm(max(p - q, 0)) for one row (differences below FLT_MIN are 0; with from_p,
// p itself) and their chunk-tree total, shared by spec_residual and residual_distribution. The
// includer binds pv / qv, has push constants vocab, p_off, q_off, and defines row, tid, wg,
// csize, nch, leaves; include det_math.glsl and chunk_tree.glsl first.

float weight(uint i, bool from_p) {
  const uint k = row * p.vocab + i;
  const float a = pv[p.p_off + k];
  if (from_p) return a >= kFloatMin ? a : 0.0;
  precise float d = a - qv[p.q_off + k];
  return d >= kFloatMin ? d : 0.0;
}

float total_weight(bool from_p) {
  for (uint c = tid; c < leaves; c += wg) {
    precise float s = 0.0;
    if (c < nch) {
      for (uint i = c * csize; i < min(c * csize + csize, p.vocab); ++i) s = s + weight(i, from_p);
    }
    ct_node[leaves + c] = s;
  }
  ct_combine(leaves);
  return ct_node[1];
}
