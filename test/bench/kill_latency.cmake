# The kill-latency driver (test/bench/kill_latency.sh) and its in-kernel
# timeline probe, for include() from test/bench/CMakeLists.txt.
bpf_skeleton(kill_timeline ${CMAKE_CURRENT_SOURCE_DIR}/progs)
add_executable(kill_latency ${CMAKE_CURRENT_SOURCE_DIR}/kill_latency.c)
target_compile_options(kill_latency PRIVATE -Wall -Wextra)
target_include_directories(kill_latency PRIVATE ${CMAKE_SOURCE_DIR}/test/vm
	${CMAKE_CURRENT_SOURCE_DIR}/progs)
target_link_libraries(kill_latency PRIVATE scenario kill_timeline_skel)
