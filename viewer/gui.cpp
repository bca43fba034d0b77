#include "viewer/gui.h"

#include <algorithm>
#include <mutex>

#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_vulkan.h>

#include "engine/vk/vulkan_error.h"
#include "viewer/swapchain.h"

namespace vkspec::viewer {
namespace {

void check_imgui_vk(VkResult r) {
  if (r != VK_SUCCESS) throw VulkanError(r, "ImGui Vulkan backend");
}

// The font atlas upload: one command buffer, submitted once and waited for.
void upload_fonts(Context& ctx) {
  VkDevice d = ctx.device();
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pi.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  pi.queueFamilyIndex = ctx.queue_family();
  vk_check(vkCreateCommandPool(d, &pi, nullptr, &pool), "vkCreateCommandPool (fonts)");
  VkFence fence = VK_NULL_HANDLE;
  try {
    VkCommandBuffer cmd;
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    vk_check(vkAllocateCommandBuffers(d, &ai, &cmd), "vkAllocateCommandBuffers (fonts)");
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vk_check(vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer (fonts)");
    if (!ImGui_ImplVulkan_CreateFontsTexture(cmd)) throw Error("ImGui could not create its font texture");
    vk_check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer (fonts)");
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    vk_check(vkCreateFence(d, &fi, nullptr, &fence), "vkCreateFence (fonts)");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    {
      std::lock_guard<std::mutex> lock(ctx.queue_mutex());
      vk_check(vkQueueSubmit(ctx.queue(), 1, &si, fence), "vkQueueSubmit (fonts)");
    }
    vk_check(vkWaitForFences(d, 1, &fence, VK_TRUE, ctx.options().fence_timeout_ns), "vkWaitForFences (fonts)");
    ImGui_ImplVulkan_DestroyFontUploadObjects();
  } catch (...) {
    if (fence) vkDestroyFence(d, fence, nullptr);
    vkDestroyCommandPool(d, pool, nullptr);
    throw;
  }
  vkDestroyFence(d, fence, nullptr);
  vkDestroyCommandPool(d, pool, nullptr);
}

}  // namespace

void load_imgui_vulkan_functions(VkInstance instance) {
  const bool ok = ImGui_ImplVulkan_LoadFunctions(
      [](const char* name, void* inst) { return vkGetInstanceProcAddr(static_cast<VkInstance>(inst), name); },
      instance);
  if (!ok) throw Error("the ImGui Vulkan backend could not load its Vulkan functions");
}

Gui::Gui(GLFWwindow* window, Context& ctx, const Swapchain& swapchain) : ctx_(ctx) {
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  try {
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;  // layout comes from the code, not from a file in the working directory
    ImGui::StyleColorsDark();
    if (!ImGui_ImplGlfw_InitForVulkan(window, true)) throw Error("ImGui GLFW backend failed to start");
    glfw_ = true;

    // Only the font texture takes a descriptor set; the canvas uses push descriptors.
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 4};
    VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pi.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
    pi.maxSets = 4;
    pi.poolSizeCount = 1;
    pi.pPoolSizes = &size;
    vk_check(vkCreateDescriptorPool(ctx.device(), &pi, nullptr, &pool_), "vkCreateDescriptorPool (ImGui)");

    ImGui_ImplVulkan_InitInfo info{};
    info.Instance = ctx.instance().handle();
    info.PhysicalDevice = ctx.physical_device();
    info.Device = ctx.device();
    info.QueueFamily = ctx.queue_family();
    info.Queue = ctx.queue();
    info.DescriptorPool = pool_;
    info.Subpass = 0;
    info.MinImageCount = swapchain.min_image_count();
    info.ImageCount = std::max(swapchain.image_count(), swapchain.min_image_count());
    info.MSAASamples = VK_SAMPLE_COUNT_1_BIT;
    info.CheckVkResultFn = check_imgui_vk;
    if (!ImGui_ImplVulkan_Init(&info, swapchain.render_pass())) throw Error("ImGui Vulkan backend failed to start");
    vulkan_ = true;
    upload_fonts(ctx);
  } catch (...) {
    if (vulkan_) ImGui_ImplVulkan_Shutdown();
    if (glfw_) ImGui_ImplGlfw_Shutdown();
    if (pool_) vkDestroyDescriptorPool(ctx.device(), pool_, nullptr);
    ImGui::DestroyContext();
    throw;
  }
}

Gui::~Gui() {
  {
    std::lock_guard<std::mutex> lock(ctx_.queue_mutex());
    vkQueueWaitIdle(ctx_.queue());
  }
  ImGui_ImplVulkan_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  vkDestroyDescriptorPool(ctx_.device(), pool_, nullptr);
  ImGui::DestroyContext();
}

void Gui::new_frame() {
  ImGui_ImplVulkan_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
}

void Gui::end_frame() { ImGui::Render(); }

void Gui::record(VkCommandBuffer cmd) { ImGui_ImplVulkan_RenderDrawData(ImGui::GetDrawData(), cmd); }

void Gui::set_min_image_count(uint32_t n) {
  // The backend waits for the device when the count changes; the decode thread shares the queue.
  std::lock_guard<std::mutex> lock(ctx_.queue_mutex());
  ImGui_ImplVulkan_SetMinImageCount(n);
}

}  // namespace vkspec::viewer
