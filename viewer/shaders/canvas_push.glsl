// Push constants shared by canvas.vert and canvas.frag; mirrors CanvasPush in viewer/canvas.cpp.
layout(push_constant) uniform CanvasPush {
  vec4 rect;      // x0, y0, x1, y1 of the image in normalised device coordinates
  ivec2 grid;     // token cells across and down
  uint flags;     // kShow* bits of viewer/overlay_settings.h
  float cell_px;  // on-screen size of one cell in pixels
  float dim;      // brightness factor of undecided cells
  float fill_alpha;
  float heat_alpha;
  uint tree_depth_max;  // the deepest draft tree of the run so far (the tree ramp's top); 0: none
} pc;
