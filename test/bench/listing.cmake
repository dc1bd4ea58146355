# The helpers of test/bench/listing.sh (issue 7, item 3: listing), plain C
# without dependencies; include()d by test/bench/CMakeLists.txt. They land
# in this directory of the build tree, where listing.sh looks for them
# (BUILD_DIR/test/bench/).
foreach(t cgfs_read timeit)
	add_executable(${t} ${CMAKE_CURRENT_LIST_DIR}/${t}.c)
	target_compile_options(${t} PRIVATE -Wall -Wextra -Wshadow)
	set_target_properties(${t} PROPERTIES C_STANDARD 11 C_EXTENSIONS ON
		RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
endforeach()
