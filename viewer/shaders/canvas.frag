#version 450
#extension GL_GOOGLE_include_directive : require
// The decoded image, nearest-upscaled, with per-token-cell overlays drawn at screen resolution so
// outlines stay crisp at any zoom. Cell state (viewer/cell_overlay.h): r = flags, g = island id + 1
// (0 = none), b = acceptance heat + 1 (0 = never verified), a = verified group id + 1 (0 = none);
// tree cells: r = draft-tree depth of the step that committed the cell (0 = none), g = its width,
// b = 1 + 254 x the weight of FlashAR's horizontal head in its logits (0 = none).
#include "canvas_push.glsl"

layout(binding = 0) uniform sampler2D image;
layout(binding = 1) uniform usampler2D cells;
layout(binding = 2) uniform usampler2D tree_cells;

layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 out_color;

// Keep in sync with viewer/cell_overlay.h and viewer/overlay_settings.h.
const uint kCellDecided = 1u, kCellAccepted = 2u, kCellRejected = 4u, kCellResampled = 8u, kCellDrafted = 16u,
           kCellUnverified = 32u;
const uint kShowAccepted = 1u, kShowRejected = 2u, kShowResampled = 4u, kShowDrafted = 8u, kShowIslands = 16u,
           kShowHeat = 32u, kShowDim = 64u, kShowGroups = 128u, kShowTree = 256u, kShowUnverified = 512u,
           kShowGate = 1024u;
const vec3 kAccepted = vec3(0.16, 0.86, 0.31);
const vec3 kRejected = vec3(0.94, 0.18, 0.16);
const vec3 kResampled = vec3(1.00, 0.69, 0.00);
const vec3 kDrafted = vec3(0.35, 0.75, 1.00);
// Chartreuse hatch: clear of the marks above, the island palette and both ramps' ends.
const vec3 kUnverified = vec3(0.65, 1.00, 0.00);

uvec4 cell_at(ivec2 c) {
  if (any(lessThan(c, ivec2(0))) || any(greaterThanEqual(c, pc.grid))) return uvec4(0u);
  return texelFetch(cells, c, 0);
}

// Same as island_colour() in viewer/cell_overlay.cpp: eight colours clear of the green, red, amber
// and blue that mark accepted, rejected, resampled and drafted cells.
vec3 island_colour(uint id) {
  const vec3 palette[8] = vec3[8](vec3(1.0, 0.3, 1.0), vec3(0.2, 1.0, 1.0), vec3(1.0, 1.0, 1.0), vec3(0.6, 0.4, 1.0),
                                  vec3(1.0, 0.55, 0.75), vec3(0.3, 0.8, 0.7), vec3(1.0, 1.0, 0.6), vec3(0.8, 0.7, 1.0));
  return palette[id % 8u];
}

// Low acceptance dark purple, high acceptance yellow.
vec3 heat_colour(float t) {
  const vec3 a = vec3(0.10, 0.03, 0.30), b = vec3(0.85, 0.25, 0.30), c = vec3(0.99, 0.91, 0.30);
  return t < 0.5 ? mix(a, b, t * 2.0) : mix(b, c, t * 2.0 - 1.0);
}

// Shallow tree dark blue, through teal, deep tree yellow (same stops as the panel's legend).
vec3 tree_colour(float t) {
  const vec3 a = vec3(0.12, 0.10, 0.45), b = vec3(0.13, 0.57, 0.55), c = vec3(0.99, 0.91, 0.14);
  return t < 0.5 ? mix(a, b, t * 2.0) : mix(b, c, t * 2.0 - 1.0);
}

// FlashAR's head weight: vertical head (g = 0) blue, an even mix white, horizontal head (g = 1)
// orange (same stops as the panel's legend).
vec3 gate_colour(float g) {
  const vec3 v = vec3(0.15, 0.45, 0.95), m = vec3(0.92, 0.92, 0.92), h = vec3(0.98, 0.55, 0.10);
  return g < 0.5 ? mix(v, m, g * 2.0) : mix(m, h, g * 2.0 - 1.0);
}

void main() {
  ivec2 isz = textureSize(image, 0);
  vec3 col = texelFetch(image, clamp(ivec2(uv * vec2(isz)), ivec2(0), isz - 1), 0).rgb;

  vec2 g = uv * vec2(pc.grid);
  ivec2 cell = clamp(ivec2(g), ivec2(0), pc.grid - 1);
  vec2 local = (g - vec2(cell)) * pc.cell_px;  // pixels from the cell's top-left corner
  float to_left = local.x, to_top = local.y, to_right = pc.cell_px - local.x, to_bottom = pc.cell_px - local.y;
  float edge = min(min(to_left, to_top), min(to_right, to_bottom));
  float bw = clamp(pc.cell_px / 10.0, 1.0, 4.0);
  uvec4 s = cell_at(cell);

  if ((s.r & kCellDecided) == 0u && (pc.flags & kShowDim) != 0u) col *= pc.dim;
  if ((pc.flags & kShowHeat) != 0u && s.b != 0u) col = mix(col, heat_colour(float(s.b - 1u) / 254.0), pc.heat_alpha);
  if ((pc.flags & kShowTree) != 0u && pc.tree_depth_max != 0u) {
    uint depth = texelFetch(tree_cells, cell, 0).r;
    float top = float(min(pc.tree_depth_max, 255u));
    if (depth != 0u) col = mix(col, tree_colour(min(float(depth) / top, 1.0)), pc.heat_alpha);
  }
  if ((pc.flags & kShowGate) != 0u) {
    uint gate = texelFetch(tree_cells, cell, 0).b;
    if (gate != 0u) col = mix(col, gate_colour(float(gate - 1u) / 254.0), pc.heat_alpha);
  }

  // The outline says what happened to the draft (accepted, rejected), the fill what was committed:
  // a rejected draft resampled in the same step has a red outline and an amber fill.
  bool acc = (s.r & kCellAccepted) != 0u && (pc.flags & kShowAccepted) != 0u;
  bool rej = (s.r & kCellRejected) != 0u && (pc.flags & kShowRejected) != 0u;
  bool res = (s.r & kCellResampled) != 0u && (pc.flags & kShowResampled) != 0u;
  bool marked = acc || rej || res;
  vec3 outline = acc ? kAccepted : (rej ? kRejected : kResampled);
  vec3 fill = acc ? kAccepted : (res ? kResampled : kRejected);
  if (marked) col = edge < bw ? outline : mix(col, fill, pc.fill_alpha);
  else if ((s.r & kCellDrafted) != 0u && (pc.flags & kShowDrafted) != 0u && edge < bw) col = kDrafted;
  // Unverified cells (history): a diagonal hatch inside the cell, leaving its outline to the marks;
  // in canvas pixels, so the stripes run on across neighbouring unverified cells.
  vec2 px = g * pc.cell_px;
  if ((s.r & kCellUnverified) != 0u && (pc.flags & kShowUnverified) != 0u && edge >= bw &&
      fract((px.x - px.y) / (3.0 * bw)) < 0.34)
    col = kUnverified;

  // Island outlines: the sides of an island cell whose neighbour belongs to another island (or none).
  if (s.g != 0u && (pc.flags & kShowIslands) != 0u) {
    float w = 2.0 * bw;
    bool outline = (to_left < w && cell_at(cell + ivec2(-1, 0)).g != s.g) ||
                   (to_right < w && cell_at(cell + ivec2(1, 0)).g != s.g) ||
                   (to_top < w && cell_at(cell + ivec2(0, -1)).g != s.g) ||
                   (to_bottom < w && cell_at(cell + ivec2(0, 1)).g != s.g);
    if (outline) col = island_colour(s.g - 1u);
  }
  // Group outlines (PJD's row windows, SJD-PAC's tree branches): dashed, so they read as a
  // bracket around the cells verified together rather than as an island.
  if (s.a != 0u && (pc.flags & kShowGroups) != 0u) {
    bool dash = fract((local.x + local.y) / (2.0 * bw)) < 0.5;
    bool side = (to_left < bw && cell_at(cell + ivec2(-1, 0)).a != s.a) ||
                (to_right < bw && cell_at(cell + ivec2(1, 0)).a != s.a) ||
                (to_top < bw && cell_at(cell + ivec2(0, -1)).a != s.a) ||
                (to_bottom < bw && cell_at(cell + ivec2(0, 1)).a != s.a);
    if (side && dash) col = island_colour(s.a - 1u);
  }
  out_color = vec4(col, 1.0);
}
