#version 450
#extension GL_GOOGLE_include_directive : require
// A quad over pc.rect as a 4-vertex triangle strip, no vertex buffer.
#include "canvas_push.glsl"

layout(location = 0) out vec2 uv;

void main() {
  uv = vec2(float(gl_VertexIndex & 1), float(gl_VertexIndex >> 1));
  gl_Position = vec4(mix(pc.rect.xy, pc.rect.zw, uv), 0.0, 1.0);
}
