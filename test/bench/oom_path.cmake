# The OOM-path benchmark's programs (test/bench/oom_path.sh), for include()
# from test/bench/CMakeLists.txt: the probe loader oom_path and the
# hierarchy maker oom_path_tree, in ${CMAKE_CURRENT_BINARY_DIR}.
bpf_skeleton(oom_path ${CMAKE_CURRENT_SOURCE_DIR}/progs)
add_executable(oom_path ${CMAKE_CURRENT_SOURCE_DIR}/oom_path.c)
target_compile_options(oom_path PRIVATE -Wall -Wextra)
target_link_libraries(oom_path PRIVATE oom_path_skel)

# Static: 10,000 forks of it map no shared libraries, so cost less
add_executable(oom_path_tree ${CMAKE_CURRENT_SOURCE_DIR}/oom_path_tree.c)
target_compile_options(oom_path_tree PRIVATE -Wall -Wextra)
target_link_options(oom_path_tree PRIVATE -static)
