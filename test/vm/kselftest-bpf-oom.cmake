# Build the series' kselftests, tools/testing/selftests/bpf_oom of the
# patched tree, with their own Makefile:
#   cmake -DSRC=DIR -DOUT=DIR -DVMLINUX=FILE -DCLANG=PATH -DBPFTOOL=PATH -P kselftest-bpf-oom.cmake
# The programs land in OUT/kselftest/bpf_oom, next to their settings file,
# and the kernel's kselftest runner in OUT/kselftest/kselftest, as the
# selftests' own `make O=OUT` and install lay them out. Without the
# directory in the tree (a series without the selftests patch) this warns
# and builds nothing: the VM test then says what is missing.
if(NOT EXISTS ${SRC}/Makefile)
	message(WARNING "kselftest_bpf_oom: no ${SRC}/Makefile, not built")
	return()
endif()
find_program(MAKE_PROGRAM make REQUIRED)
execute_process(
	COMMAND ${MAKE_PROGRAM} -s -C ${SRC} O=${OUT} VMLINUX_BTF=${VMLINUX}
		CLANG=${CLANG} BPFTOOL=${BPFTOOL}
	RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
	message(FATAL_ERROR "kselftest_bpf_oom: make -C ${SRC} failed")
endif()
file(COPY ${SRC}/settings ${SRC}/config DESTINATION ${OUT}/kselftest/bpf_oom)
file(COPY ${SRC}/../kselftest/runner.sh ${SRC}/../kselftest/prefix.pl
	DESTINATION ${OUT}/kselftest/kselftest)
