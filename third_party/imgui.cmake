# Dear ImGui from Debian's libimgui-dev (1.86), included by viewer/CMakeLists.txt.
# The packaged libimgui.a has the core and the GLFW backend we use as they are. Its prebuilt Vulkan
# backend calls vk* prototypes directly, which crashes in a program that loads Vulkan through volk,
# so that backend is compiled here from the source the package ships, with
# IMGUI_IMPL_VULKAN_NO_PROTOTYPES (functions come from ImGui_ImplVulkan_LoadFunctions). The linker
# then never pulls the archive's imgui_impl_vulkan.o: every symbol it defines is already defined.
find_package(PkgConfig REQUIRED)
pkg_check_modules(IMGUI REQUIRED IMPORTED_TARGET imgui)
find_package(glfw3 CONFIG REQUIRED)
find_file(IMGUI_VULKAN_BACKEND_SOURCE imgui_impl_vulkan.cpp
          PATHS /usr/share/doc/libimgui-dev/examples/backends NO_DEFAULT_PATH REQUIRED)
find_path(IMGUI_BACKENDS_INCLUDE_DIR imgui_impl_vulkan.h PATHS ${IMGUI_INCLUDE_DIRS}
          PATH_SUFFIXES backends REQUIRED)

add_library(imgui_vulkan STATIC ${IMGUI_VULKAN_BACKEND_SOURCE})
target_include_directories(imgui_vulkan SYSTEM PUBLIC ${IMGUI_INCLUDE_DIRS} ${IMGUI_BACKENDS_INCLUDE_DIR})
target_compile_definitions(imgui_vulkan PUBLIC IMGUI_IMPL_VULKAN_NO_PROTOTYPES)
target_compile_options(imgui_vulkan PRIVATE -w)  # not our code
target_link_libraries(imgui_vulkan PUBLIC volk PkgConfig::IMGUI glfw)
