# Build oomctl_VERSION_ARCH.deb from the "oomctl" install component, doing
# by hand the few things debhelper would (no debian/ source tree here):
# strip, gzip -9n the man pages and the changelog, add the copyright, work out
# Depends with dpkg-shlibdeps, write md5sums and control, dpkg-deb --build.
#
# cmake -DBUILD_DIR=<cmake build tree> -DOUT_DIR=<dir for the .deb>
#       -DWORK_DIR=<scratch dir> -DVERSION=<project version>
#       [-DMAINTAINER="Name <mail>"] -P deb.cmake
cmake_minimum_required(VERSION 3.20)

foreach(var BUILD_DIR OUT_DIR WORK_DIR VERSION)
	if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
		message(FATAL_ERROR "deb.cmake: -D${var}=... is required")
	endif()
endforeach()
foreach(var BUILD_DIR OUT_DIR WORK_DIR)
	get_filename_component(${var} "${${var}}" ABSOLUTE)
endforeach()
set(pkg oomctl)
set(here ${CMAKE_CURRENT_LIST_DIR})
if(NOT MAINTAINER)
	set(MAINTAINER
		"bpf-oom maintainers <maintainers@users.noreply.a-seed-c5eed8a1.example>")
endif()

# A scratch dir of this run's own: builds of one tree may run at once
string(RANDOM LENGTH 8 run_id)
set(WORK_DIR ${WORK_DIR}/run.${run_id})
set(root ${WORK_DIR}/root)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
file(MAKE_DIRECTORY ${OUT_DIR})

# run(VAR COMMAND...): run it, fail the build with its output if it fails;
# VAR gets its stdout, stripped
function(run var)
	execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${WORK_DIR}
		OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc
		OUTPUT_STRIP_TRAILING_WHITESPACE)
	if(NOT rc EQUAL 0)
		list(JOIN ARGN " " cmd)
		message(FATAL_ERROR "deb.cmake: `${cmd}` failed (${rc}):\n${out}${err}")
	endif()
	set(${var} "${out}" PARENT_SCOPE)
endfunction()

foreach(tool dpkg dpkg-deb dpkg-shlibdeps dpkg-parsechangelog strip gzip)
	string(MAKE_C_IDENTIFIER ${tool} id)
	find_program(TOOL_${id} ${tool})
	if(NOT TOOL_${id})
		message(FATAL_ERROR "deb.cmake: ${tool} not found (apt-get install dpkg-dev binutils gzip)")
	endif()
endforeach()

# The changelog's newest entry is the package's: a new project version needs
# an entry there, as a Debian package's would.
run(cl_version ${TOOL_dpkg_parsechangelog} -l ${here}/changelog -S Version)
if(NOT cl_version STREQUAL VERSION)
	message(FATAL_ERROR "deb.cmake: cli/packaging/changelog's newest entry "
		"is ${cl_version}, the project is ${VERSION}: add an entry for ${VERSION}")
endif()
# File times from the changelog, so the same tree gives the same .deb
run(stamp ${TOOL_dpkg_parsechangelog} -l ${here}/changelog -S Timestamp)
set(ENV{SOURCE_DATE_EPOCH} ${stamp})
run(arch ${TOOL_dpkg} --print-architecture)

run(ignored ${CMAKE_COMMAND} -E env DESTDIR=${root}
	${CMAKE_COMMAND} --install ${BUILD_DIR} --component ${pkg} --prefix /usr)

# The unit that applies /etc/oomctl/oomctl.conf at boot, where Debian 12
# keeps packaged units (dh_installsystemd's place, not /usr/lib)
file(MAKE_DIRECTORY ${root}/lib/systemd/system)
file(COPY_FILE ${here}/oomctl.service ${root}/lib/systemd/system/oomctl.service)
# The drop-in that runs `oomctl units` as systemd-oomd.service, for an
# admin to link into /etc (oomctl-units(8)): not in force on install
file(MAKE_DIRECTORY ${root}/usr/share/oomctl)
file(COPY_FILE ${here}/managed-oom.conf ${root}/usr/share/oomctl/managed-oom.conf)

# Executables lose their debug info and symbols (lintian:
# unstripped-binary-or-object), as dh_strip does it
file(GLOB bins ${root}/usr/sbin/* ${root}/usr/bin/*)
if(NOT bins)
	message(FATAL_ERROR "deb.cmake: the ${pkg} component installed no program")
endif()
foreach(f ${bins})
	run(ignored ${TOOL_strip} --remove-section=.comment --remove-section=.note
		--strip-unneeded ${f})
endforeach()

# Debian policy 12.3: man pages and changelogs are gzip -9n
file(GLOB_RECURSE pages ${root}/usr/share/man/*)
foreach(f ${pages})
	if(NOT f MATCHES "\\.gz$")
		run(ignored ${TOOL_gzip} -9nf ${f})
	endif()
endforeach()
set(doc ${root}/usr/share/doc/${pkg})
file(MAKE_DIRECTORY ${doc})
file(COPY_FILE ${here}/copyright ${doc}/copyright)
file(COPY_FILE ${here}/changelog ${doc}/changelog)
run(ignored ${TOOL_gzip} -9nf ${doc}/changelog)
# Whatever the umask: directories and programs 0755, the rest 0644
run(ignored chmod -R u=rwX,go=rX ${root})

# Depends from the libraries the programs link (dpkg-shlibdeps wants a
# debian/control naming the package, as a source tree has)
file(WRITE ${WORK_DIR}/debian/control
	"Source: ${pkg}\n\nPackage: ${pkg}\nArchitecture: any\n")
set(shlib_args)
foreach(f ${bins})
	file(RELATIVE_PATH rel ${WORK_DIR} ${f})
	list(APPEND shlib_args -e${rel})
endforeach()
run(substvars ${TOOL_dpkg_shlibdeps} -O ${shlib_args})
if(NOT substvars MATCHES "shlibs:Depends=([^\n]+)")
	message(FATAL_ERROR "deb.cmake: dpkg-shlibdeps gave no Depends: ${substvars}")
endif()
set(depends ${CMAKE_MATCH_1})

# md5sums and Installed-Size (KiB, each file rounded up, as dpkg-gencontrol)
file(GLOB_RECURSE files LIST_DIRECTORIES false RELATIVE ${root} ${root}/*)
list(SORT files)
set(md5sums "")
set(kib 0)
foreach(f ${files})
	file(MD5 ${root}/${f} sum)
	string(APPEND md5sums "${sum}  ${f}\n")
	file(SIZE ${root}/${f} size)
	math(EXPR kib "${kib} + (${size} + 1023) / 1024")
endforeach()
file(MAKE_DIRECTORY ${root}/DEBIAN)
file(WRITE ${root}/DEBIAN/md5sums "${md5sums}")
set(version ${VERSION})
set(maintainer "${MAINTAINER}")
set(installed_size ${kib})
configure_file(${here}/control.in ${root}/DEBIAN/control @ONLY)
run(ignored chmod 0644 ${root}/DEBIAN/control ${root}/DEBIAN/md5sums)
# The diversion of systemd-oomd's completion (preinst, postrm)
foreach(script preinst postrm)
	file(COPY_FILE ${here}/${script} ${root}/DEBIAN/${script})
	run(ignored chmod 0755 ${root}/DEBIAN/${script})
endforeach()

# Other versions' packages would be taken for this one: remove them
set(deb ${OUT_DIR}/${pkg}_${VERSION}_${arch}.deb)
file(GLOB stale ${OUT_DIR}/${pkg}_*_${arch}.deb)
list(REMOVE_ITEM stale ${deb})
if(stale)
	file(REMOVE ${stale})
endif()
run(ignored ${TOOL_dpkg_deb} --root-owner-group -Zxz --build ${root}
	${WORK_DIR}/${pkg}.deb)
file(RENAME ${WORK_DIR}/${pkg}.deb ${deb})
file(REMOVE_RECURSE ${WORK_DIR})
message(STATUS "Built ${deb}")
