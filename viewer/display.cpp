#include "viewer/display.h"

namespace vkspec::viewer {

Display::Display(DeviceSession& session) : window_(session.window()) {
  Context& ctx = session.context();
  swapchain_ = std::make_unique<Swapchain>(ctx, window_.surface(), window_.framebuffer_size());
  gui_ = std::make_unique<Gui>(window_.handle(), ctx, *swapchain_);
  canvas_renderer_ = std::make_unique<CanvasRenderer>(ctx, swapchain_->render_pass());
}

std::optional<FrameTarget> Display::present(const std::vector<LaneView>& lanes, bool capture) {
  const auto target = swapchain_->begin_frame(window_.framebuffer_size());
  if (!target) return std::nullopt;
  for (const LaneView& l : lanes)
    l.canvas->record_uploads(target->cmd, target->slot, target->number, Swapchain::kFramesInFlight);
  swapchain_->begin_render_pass(*target, {0.06f, 0.06f, 0.07f, 1.0f});
  canvas_renderer_->set_target(target->cmd, target->extent);
  gui_->record(target->cmd);
  swapchain_->end_render_pass(*target, capture);
  swapchain_->submit_and_present(*target);
  return target;
}

}  // namespace vkspec::viewer
