#include "viewer/swapchain.h"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "engine/vk/vulkan_error.h"

namespace vkspec::viewer {
namespace {

VkSurfaceFormatKHR choose_format(VkPhysicalDevice pd, VkSurfaceKHR surface) {
  uint32_t n = 0;
  vk_check(vkGetPhysicalDeviceSurfaceFormatsKHR(pd, surface, &n, nullptr), "vkGetPhysicalDeviceSurfaceFormatsKHR");
  std::vector<VkSurfaceFormatKHR> formats(n);
  vk_check(vkGetPhysicalDeviceSurfaceFormatsKHR(pd, surface, &n, formats.data()),
           "vkGetPhysicalDeviceSurfaceFormatsKHR");
  if (formats.empty()) throw Error("the window surface offers no formats");
  // UNORM, not sRGB: ImGui's colours and the decoded pixels are already display values.
  for (VkFormat want : {VK_FORMAT_B8G8R8A8_UNORM, VK_FORMAT_R8G8B8A8_UNORM})
    for (const auto& f : formats)
      if (f.format == want && f.colorSpace == VK_COLOR_SPACE_SRGB_NONLINEAR_KHR) return f;
  if (formats.size() == 1 && formats[0].format == VK_FORMAT_UNDEFINED)
    return {VK_FORMAT_B8G8R8A8_UNORM, VK_COLOR_SPACE_SRGB_NONLINEAR_KHR};
  throw Error("the window surface offers no 8-bit UNORM RGBA/BGRA format");
}

}  // namespace

Swapchain::Swapchain(Context& ctx, VkSurfaceKHR surface, VkExtent2D size) : ctx_(ctx), surface_(surface) {
  const VkSurfaceFormatKHR f = choose_format(ctx.physical_device(), surface);
  format_ = f.format;
  color_space_ = f.colorSpace;

  VkAttachmentDescription color{};
  color.format = format_;
  color.samples = VK_SAMPLE_COUNT_1_BIT;
  color.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
  color.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
  color.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
  color.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  color.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  color.finalLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
  VkAttachmentReference ref{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
  VkSubpassDescription sub{};
  sub.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
  sub.colorAttachmentCount = 1;
  sub.pColorAttachments = &ref;
  // The acquire semaphore is waited at colour output; order the layout transition after it.
  VkSubpassDependency dep{};
  dep.srcSubpass = VK_SUBPASS_EXTERNAL;
  dep.dstSubpass = 0;
  dep.srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  dep.dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  dep.dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
  VkRenderPassCreateInfo rp{VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
  rp.attachmentCount = 1;
  rp.pAttachments = &color;
  rp.subpassCount = 1;
  rp.pSubpasses = &sub;
  rp.dependencyCount = 1;
  rp.pDependencies = &dep;
  vk_check(vkCreateRenderPass(ctx.device(), &rp, nullptr, &render_pass_), "vkCreateRenderPass");

  for (Slot& s : slots_) {
    VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pi.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    pi.queueFamilyIndex = ctx.queue_family();
    vk_check(vkCreateCommandPool(ctx.device(), &pi, nullptr, &s.pool), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = s.pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    vk_check(vkAllocateCommandBuffers(ctx.device(), &ai, &s.cmd), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    fi.flags = VK_FENCE_CREATE_SIGNALED_BIT;
    vk_check(vkCreateFence(ctx.device(), &fi, nullptr, &s.fence), "vkCreateFence");
    VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    vk_check(vkCreateSemaphore(ctx.device(), &si, nullptr, &s.acquired), "vkCreateSemaphore");
  }
  create_swapchain(size);
}

Swapchain::~Swapchain() {
  VkDevice d = ctx_.device();
  {
    std::lock_guard<std::mutex> lock(ctx_.queue_mutex());
    vkQueueWaitIdle(ctx_.queue());
  }
  destroy_swapchain_images();
  if (swapchain_) vkDestroySwapchainKHR(d, swapchain_, nullptr);
  for (Slot& s : slots_) {
    if (s.acquired) vkDestroySemaphore(d, s.acquired, nullptr);
    if (s.fence) vkDestroyFence(d, s.fence, nullptr);
    if (s.pool) vkDestroyCommandPool(d, s.pool, nullptr);
  }
  if (render_pass_) vkDestroyRenderPass(d, render_pass_, nullptr);
}

void Swapchain::destroy_swapchain_images() {
  VkDevice d = ctx_.device();
  for (VkFramebuffer fb : framebuffers_) vkDestroyFramebuffer(d, fb, nullptr);
  for (VkImageView v : views_) vkDestroyImageView(d, v, nullptr);
  for (VkSemaphore s : rendered_) vkDestroySemaphore(d, s, nullptr);
  framebuffers_.clear();
  views_.clear();
  rendered_.clear();
  images_.clear();
}

void Swapchain::create_swapchain(VkExtent2D size) {
  VkDevice d = ctx_.device();
  VkSurfaceCapabilitiesKHR caps;
  vk_check(vkGetPhysicalDeviceSurfaceCapabilitiesKHR(ctx_.physical_device(), surface_, &caps),
           "vkGetPhysicalDeviceSurfaceCapabilitiesKHR");
  VkExtent2D extent = caps.currentExtent;
  if (extent.width == UINT32_MAX) {
    extent.width = std::clamp(size.width, caps.minImageExtent.width, caps.maxImageExtent.width);
    extent.height = std::clamp(size.height, caps.minImageExtent.height, caps.maxImageExtent.height);
  }
  requested_ = size;
  if (extent.width == 0 || extent.height == 0) {
    stale_ = true;  // minimised: try again next frame
    return;
  }
  // Nothing may still use the old images or semaphores (including presentation's semaphore waits).
  {
    std::lock_guard<std::mutex> lock(ctx_.queue_mutex());
    vk_check(vkQueueWaitIdle(ctx_.queue()), "vkQueueWaitIdle");
  }
  min_images_ = std::max(2u, caps.minImageCount);
  uint32_t count = min_images_ + 1;
  if (caps.maxImageCount) count = std::min(count, caps.maxImageCount);
  can_capture_ = (caps.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_SRC_BIT) != 0;

  VkSwapchainCreateInfoKHR ci{VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR};
  ci.surface = surface_;
  ci.minImageCount = count;
  ci.imageFormat = format_;
  ci.imageColorSpace = color_space_;
  ci.imageExtent = extent;
  ci.imageArrayLayers = 1;
  ci.imageUsage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | (can_capture_ ? VK_IMAGE_USAGE_TRANSFER_SRC_BIT : 0);
  ci.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE;
  ci.preTransform = caps.currentTransform;
  ci.compositeAlpha = VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR;
  if (!(caps.supportedCompositeAlpha & ci.compositeAlpha))
    ci.compositeAlpha =
        static_cast<VkCompositeAlphaFlagBitsKHR>(caps.supportedCompositeAlpha & (~caps.supportedCompositeAlpha + 1));
  ci.presentMode = VK_PRESENT_MODE_FIFO_KHR;  // always available; the frame cap does the rest
  ci.clipped = VK_TRUE;
  ci.oldSwapchain = swapchain_;
  VkSwapchainKHR fresh = VK_NULL_HANDLE;
  vk_check(vkCreateSwapchainKHR(d, &ci, nullptr, &fresh), "vkCreateSwapchainKHR");
  destroy_swapchain_images();
  if (swapchain_) vkDestroySwapchainKHR(d, swapchain_, nullptr);
  swapchain_ = fresh;
  extent_ = extent;
  stale_ = false;

  uint32_t n = 0;
  vk_check(vkGetSwapchainImagesKHR(d, swapchain_, &n, nullptr), "vkGetSwapchainImagesKHR");
  images_.resize(n);
  vk_check(vkGetSwapchainImagesKHR(d, swapchain_, &n, images_.data()), "vkGetSwapchainImagesKHR");
  for (VkImage img : images_) {
    VkImageViewCreateInfo vi{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    vi.image = img;
    vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
    vi.format = format_;
    vi.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    VkImageView view;
    vk_check(vkCreateImageView(d, &vi, nullptr, &view), "vkCreateImageView");
    views_.push_back(view);
    VkFramebufferCreateInfo fi{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
    fi.renderPass = render_pass_;
    fi.attachmentCount = 1;
    fi.pAttachments = &view;
    fi.width = extent.width;
    fi.height = extent.height;
    fi.layers = 1;
    VkFramebuffer fb;
    vk_check(vkCreateFramebuffer(d, &fi, nullptr, &fb), "vkCreateFramebuffer");
    framebuffers_.push_back(fb);
    VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    VkSemaphore sem;
    vk_check(vkCreateSemaphore(d, &si, nullptr, &sem), "vkCreateSemaphore");
    rendered_.push_back(sem);
  }
}

void Swapchain::wait_slot(Slot& s) {
  const VkResult r = vkWaitForFences(ctx_.device(), 1, &s.fence, VK_TRUE, ctx_.options().fence_timeout_ns);
  if (r == VK_TIMEOUT) throw Error("a viewer frame did not finish within the fence timeout on " + ctx_.caps().name);
  vk_check(r, "vkWaitForFences (viewer frame)");
  deliver_capture(s);
}

void Swapchain::deliver_capture(Slot& s) {
  if (!s.capture_frame) return;
  const uint64_t number = s.capture_frame;
  s.capture_frame = 0;
  if (!on_capture) return;
  Image im;
  im.width = static_cast<int>(s.capture_extent.width);
  im.height = static_cast<int>(s.capture_extent.height);
  im.channels = 3;
  im.pixels.resize(static_cast<size_t>(im.width) * im.height * 3);
  const uint8_t* src = static_cast<const uint8_t*>(s.capture.mapped());
  const bool bgr = format_ == VK_FORMAT_B8G8R8A8_UNORM;
  for (size_t p = 0; p < static_cast<size_t>(im.width) * im.height; ++p) {
    im.pixels[p * 3 + 0] = src[p * 4 + (bgr ? 2 : 0)];
    im.pixels[p * 3 + 1] = src[p * 4 + 1];
    im.pixels[p * 3 + 2] = src[p * 4 + (bgr ? 0 : 2)];
  }
  on_capture(number, std::move(im));
}

void Swapchain::flush() {
  for (uint32_t i = 0; i < kFramesInFlight; ++i) wait_slot(slots_[(frame_number_ + i) % kFramesInFlight]);
}

std::optional<FrameTarget> Swapchain::begin_frame(VkExtent2D size) {
  const uint32_t slot = static_cast<uint32_t>(frame_number_ % kFramesInFlight);
  Slot& s = slots_[slot];
  wait_slot(s);
  if (size.width == 0 || size.height == 0) return std::nullopt;
  if (stale_ || !swapchain_ || size.width != requested_.width || size.height != requested_.height) {
    create_swapchain(size);
    if (stale_) return std::nullopt;
  }
  uint32_t image = 0;
  const VkResult r = vkAcquireNextImageKHR(ctx_.device(), swapchain_, ctx_.options().fence_timeout_ns, s.acquired,
                                           VK_NULL_HANDLE, &image);
  if (r == VK_ERROR_OUT_OF_DATE_KHR) {
    stale_ = true;
    return std::nullopt;
  }
  if (r == VK_TIMEOUT || r == VK_NOT_READY) throw Error("no swapchain image became available within the fence timeout");
  if (r == VK_SUBOPTIMAL_KHR)
    stale_ = true;  // use this image, rebuild afterwards
  else
    vk_check(r, "vkAcquireNextImageKHR");

  vk_check(vkResetFences(ctx_.device(), 1, &s.fence), "vkResetFences");
  vk_check(vkResetCommandPool(ctx_.device(), s.pool, 0), "vkResetCommandPool");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vk_check(vkBeginCommandBuffer(s.cmd, &bi), "vkBeginCommandBuffer");
  ++frame_number_;
  return FrameTarget{s.cmd, slot, image, frame_number_, extent_};
}

void Swapchain::begin_render_pass(const FrameTarget& f, const std::array<float, 4>& clear) {
  VkClearValue cv{};
  std::memcpy(cv.color.float32, clear.data(), sizeof(float) * 4);
  VkRenderPassBeginInfo rb{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
  rb.renderPass = render_pass_;
  rb.framebuffer = framebuffers_[f.image];
  rb.renderArea.extent = f.extent;
  rb.clearValueCount = 1;
  rb.pClearValues = &cv;
  vkCmdBeginRenderPass(f.cmd, &rb, VK_SUBPASS_CONTENTS_INLINE);
}

void Swapchain::end_render_pass(const FrameTarget& f, bool capture) {
  vkCmdEndRenderPass(f.cmd);
  if (capture) {
    if (!can_capture_)
      throw Error("this window's swapchain cannot be read back (no TRANSFER_SRC usage); --screenshot and --record "
                  "need it");
    Slot& s = slots_[f.slot];
    const VkDeviceSize bytes = VkDeviceSize{f.extent.width} * f.extent.height * 4;
    if (!s.capture.valid() || s.capture.size() < bytes)
      s.capture = ctx_.allocator().allocate(bytes, MemoryUsage::Readback, "viewer frame capture");
    VkImageMemoryBarrier ib{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
    ib.srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    ib.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    ib.oldLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
    ib.newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    ib.srcQueueFamilyIndex = ib.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    ib.image = images_[f.image];
    ib.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    vkCmdPipelineBarrier(f.cmd, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0,
                         nullptr, 0, nullptr, 1, &ib);
    VkBufferImageCopy region{};
    region.bufferOffset = s.capture.offset();
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {f.extent.width, f.extent.height, 1};
    vkCmdCopyImageToBuffer(f.cmd, images_[f.image], VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, s.capture.handle(), 1,
                           &region);
    ib.srcAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    ib.dstAccessMask = 0;
    ib.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    ib.newLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
    VkBufferMemoryBarrier bb{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
    bb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    bb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    bb.srcQueueFamilyIndex = bb.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    bb.buffer = s.capture.handle();
    bb.offset = s.capture.offset();
    bb.size = bytes;
    vkCmdPipelineBarrier(f.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 0, nullptr, 1, &bb, 1,
                         &ib);
    s.capture_frame = f.number;
    s.capture_extent = f.extent;
  }
  vk_check(vkEndCommandBuffer(f.cmd), "vkEndCommandBuffer");
}

void Swapchain::submit_and_present(const FrameTarget& f) {
  Slot& s = slots_[f.slot];
  const VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.waitSemaphoreCount = 1;
  si.pWaitSemaphores = &s.acquired;
  si.pWaitDstStageMask = &wait_stage;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &f.cmd;
  si.signalSemaphoreCount = 1;
  si.pSignalSemaphores = &rendered_[f.image];
  VkPresentInfoKHR pi{VK_STRUCTURE_TYPE_PRESENT_INFO_KHR};
  pi.waitSemaphoreCount = 1;
  pi.pWaitSemaphores = &rendered_[f.image];
  pi.swapchainCount = 1;
  pi.pSwapchains = &swapchain_;
  pi.pImageIndices = &f.image;
  VkResult r;
  {
    std::lock_guard<std::mutex> lock(ctx_.queue_mutex());
    vk_check(vkQueueSubmit(ctx_.queue(), 1, &si, s.fence), "vkQueueSubmit (viewer frame)");
    r = vkQueuePresentKHR(ctx_.queue(), &pi);
  }
  if (r == VK_ERROR_OUT_OF_DATE_KHR || r == VK_SUBOPTIMAL_KHR)
    stale_ = true;
  else
    vk_check(r, "vkQueuePresentKHR");
}

}  // namespace vkspec::viewer
