# Test of fdtune's ROCm discovery (cmake/FdtuneROCm.cmake) against fake install trees in each
# layout ROCm really comes in (only the file names matter, not their contents), reached
# through each channel a user has: ROCM_PATH (variable and environment), HIP_PATH,
# CMAKE_PREFIX_PATH (Spack, with HIP and comgr in separate prefixes), /opt/rocm and
# /opt/rocm-X.Y.Z. The system paths are switched off in the probes (FDTUNE_ROCM_SEARCH_SYSTEM)
# so that the machine's own ROCm (Debian's /usr/include) cannot answer for a fake tree. Also: the whole project with
# -DFDTUNE_HIP=ON and no ROCm fails to configure with a message naming what is missing.
#   cmake -DFDTUNE_SOURCE=<repo> -DWORK=<scratch dir> -P test_rocm_discovery.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT FDTUNE_SOURCE OR NOT WORK)
  message(FATAL_ERROR "usage: cmake -DFDTUNE_SOURCE=<repo> -DWORK=<dir> -P ${CMAKE_CURRENT_LIST_FILE}")
endif()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(failures 0)

function(touch root)
  foreach(f IN LISTS ARGN)
    get_filename_component(d "${root}/${f}" DIRECTORY)
    file(MAKE_DIRECTORY "${d}")
    file(WRITE "${root}/${f}" "")
  endforeach()
endfunction()

# A ROCm tree: hip headers under `hipinc`, the comgr header at `comgr` (relative), a HIP
# version, and the libraries with their sonames.
function(fake_rocm root hipinc comgr version)
  touch("${root}" "${hipinc}/hip/hiprtc.h" "${hipinc}/hip/hip_runtime_api.h" "${comgr}" ${ARGN})
  string(REPLACE "." ";" v "${version}")
  list(GET v 0 major)
  list(GET v 1 minor)
  list(GET v 2 patch)
  file(WRITE "${root}/${hipinc}/hip/hip_version.h"
    "#define HIP_VERSION_MAJOR ${major}\n#define HIP_VERSION_MINOR ${minor}\n#define HIP_VERSION_PATCH ${patch}\n")
endfunction()

set(T "${WORK}/trees")
# AMD's packages, ROCm 5.3-5.7: comgr in include/amd_comgr/, the old header a deprecated wrapper.
fake_rocm("${T}/opt/rocm-5.7.1" include include/amd_comgr/amd_comgr.h 5.7.31921
  include/amd_comgr.h lib/libamdhip64.so.5 lib/libhiprtc.so.5 lib/libamd_comgr.so.2)
# ROCm 6.x: only include/amd_comgr/amd_comgr.h.
fake_rocm("${T}/opt/rocm-6.2.0" include include/amd_comgr/amd_comgr.h 6.2.41133
  lib/libamdhip64.so.6 lib/libhiprtc.so.6 lib/libamd_comgr.so.2)
fake_rocm("${T}/opt/rocm-6.10.0" include include/amd_comgr/amd_comgr.h 6.10.0
  lib/libamdhip64.so.6 lib/libhiprtc.so.6 lib/libamd_comgr.so.2)
# ROCm 7.x: new sonames.
fake_rocm("${T}/opt7/rocm-7.0.1" include include/amd_comgr/amd_comgr.h 7.0.51831
  lib/libamdhip64.so.7 lib/libhiprtc.so.7 lib/libamd_comgr.so.3)
# ROCm 5.0/5.1: HIP headers under hip/include, comgr's header directly in include/.
fake_rocm("${T}/old/rocm-5.0.2" hip/include include/amd_comgr.h 5.0.13601
  hip/lib/libamdhip64.so.5 lib/libamd_comgr.so.2)
# Spack: HIP and comgr in separate prefixes.
touch("${T}/spack/hip-6.1.2-abcdef" include/hip/hiprtc.h include/hip/hip_runtime_api.h
  lib/libamdhip64.so.6 lib/libhiprtc.so.6)
touch("${T}/spack/comgr-6.1.2-ghijkl" include/amd_comgr/amd_comgr.h lib/libamd_comgr.so.2)
# A directory that is not a ROCm at all.
file(MAKE_DIRECTORY "${T}/empty/include")
# /opt/rocm as the admin's symlink to one version, with a newer version beside it.
file(MAKE_DIRECTORY "${T}/opt2")
file(CREATE_LINK "${T}/opt/rocm-6.2.0" "${T}/opt2/rocm" SYMBOLIC)
file(CREATE_LINK "${T}/opt7/rocm-7.0.1" "${T}/opt2/rocm-7.0.1" SYMBOLIC)

set(nosys -DFDTUNE_ROCM_SEARCH_SYSTEM=OFF -DFDTUNE_ROCM_DEFAULT_ROOTS=${T}/nowhere)
set(n 0)

# probe(NAME ENV <k=v...> ARGS <cmake args...> PREFIX <dirs...> EXPECT <key=value...>):
# PREFIX is passed as one -DCMAKE_PREFIX_PATH list.
function(probe name)
  cmake_parse_arguments(P "" "" "ENV;ARGS;EXPECT;PREFIX" ${ARGN})
  math(EXPR i "${n} + 1")
  set(n ${i} PARENT_SCOPE)
  set(b "${WORK}/probe${i}")
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env --unset=ROCM_PATH --unset=HIP_PATH --unset=CMAKE_PREFIX_PATH
            ${P_ENV} ${CMAKE_COMMAND} -S "${FDTUNE_SOURCE}/tests/cmake/rocm_probe" -B "${b}"
            -DFDTUNE_SOURCE=${FDTUNE_SOURCE} ${nosys} ${P_ARGS} "-DCMAKE_PREFIX_PATH=${P_PREFIX}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT EXISTS "${b}/found.txt")
    message(SEND_ERROR "${name}: the probe failed to configure (${rc}):\n${out}\n${err}")
    math(EXPR f "${failures} + 1")
    set(failures ${f} PARENT_SCOPE)
    return()
  endif()
  file(STRINGS "${b}/found.txt" lines)
  set(bad "")
  foreach(want IN LISTS P_EXPECT)
    string(REGEX MATCH "^[^=]+" key "${want}")
    set(got "")
    foreach(l IN LISTS lines)
      if(l MATCHES "^${key}=(.*)$")
        set(got "${CMAKE_MATCH_1}")
      endif()
    endforeach()
    if(NOT "${key}=${got}" STREQUAL "${want}")
      string(APPEND bad "\n    want ${want}\n    got  ${key}=${got}")
    endif()
  endforeach()
  if(bad)
    message(SEND_ERROR "${name}: ${bad}")
    math(EXPR f "${failures} + 1")
    set(failures ${f} PARENT_SCOPE)
  else()
    message(STATUS "ok: ${name}")
  endif()
endfunction()

set(R57 "${T}/opt/rocm-5.7.1")
set(R62 "${T}/opt/rocm-6.2.0")
set(R70 "${T}/opt7/rocm-7.0.1")
probe("ROCm 5.7 through -DROCM_PATH: the new comgr header is preferred to the wrapper"
  ARGS -DROCM_PATH=${R57}
  EXPECT found=TRUE hip=${R57}/include comgr=${R57}/include subdir=1 root=${R57} version=5.7.31921)
probe("ROCm 6.2 through the ROCM_PATH environment variable"
  ENV ROCM_PATH=${R62}
  EXPECT found=TRUE hip=${R62}/include comgr=${R62}/include subdir=1 root=${R62} version=6.2.41133)
probe("ROCm 7.0 through HIP_PATH"
  ENV HIP_PATH=${R70}
  EXPECT found=TRUE hip=${R70}/include subdir=1 root=${R70} version=7.0.51831 ignored=)
probe("ROCm 5.0 layout (hip/include, include/amd_comgr.h) through ROCM_PATH"
  ARGS -DROCM_PATH=${T}/old/rocm-5.0.2
  EXPECT found=TRUE hip=${T}/old/rocm-5.0.2/hip/include comgr=${T}/old/rocm-5.0.2/include subdir=0)
probe("Spack: HIP and comgr in separate prefixes through CMAKE_PREFIX_PATH"
  PREFIX ${T}/spack/hip-6.1.2-abcdef ${T}/spack/comgr-6.1.2-ghijkl
  EXPECT found=TRUE hip=${T}/spack/hip-6.1.2-abcdef/include
         comgr=${T}/spack/comgr-6.1.2-ghijkl/include subdir=1)
probe("Spack prefixes through the CMAKE_PREFIX_PATH environment variable"
  ENV CMAKE_PREFIX_PATH=${T}/spack/comgr-6.1.2-ghijkl:${T}/spack/hip-6.1.2-abcdef
  EXPECT found=TRUE hip=${T}/spack/hip-6.1.2-abcdef/include
         comgr=${T}/spack/comgr-6.1.2-ghijkl/include)
probe("ROCM_PATH wins over CMAKE_PREFIX_PATH"
  ARGS -DROCM_PATH=${R57} PREFIX ${R70}
  EXPECT found=TRUE root=${R57})
probe("default roots: /opt/rocm-* newest first, by version (6.10.0 over 6.2.0 and 5.7.1)"
  ARGS -DFDTUNE_ROCM_DEFAULT_ROOTS=${T}/opt/rocm
  EXPECT found=TRUE root=${T}/opt/rocm-6.10.0 version=6.10.0)
probe("default roots: /opt/rocm-7.0.1 beside the /opt/rocm symlink's target"
  ARGS -DFDTUNE_ROCM_DEFAULT_ROOTS=${T}/opt7/rocm
  EXPECT found=TRUE root=${R70} version=7.0.51831)
probe("default roots: the /opt/rocm symlink wins over a newer /opt/rocm-X.Y.Z"
  ARGS -DFDTUNE_ROCM_DEFAULT_ROOTS=${T}/opt2/rocm
  EXPECT found=TRUE root=${T}/opt2/rocm version=6.2.41133)
probe("a ROCM_PATH without ROCm: not found, and named as passed over"
  ARGS -DROCM_PATH=${T}/empty
  EXPECT found=FALSE hip= ignored=ROCM_PATH=${T}/empty)
probe("an empty ROCM_PATH passed over for a valid HIP_PATH is no warning"
  ENV HIP_PATH=${R62} ARGS -DROCM_PATH=
  EXPECT found=TRUE root=${R62} ignored=)

# The whole project: FDTUNE_HIP=ON without ROCm must fail, naming what is missing; OFF must
# configure with the backend left out.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env --unset=ROCM_PATH --unset=HIP_PATH
          ${CMAKE_COMMAND} -S "${FDTUNE_SOURCE}" -B "${WORK}/project-on" -DFDTUNE_HIP=ON
          -DBUILD_TESTING=OFF -DROCM_PATH=${T}/empty -DFDTUNE_ROCM_DEFAULT_ROOTS=${T}/nowhere
          -DFDTUNE_ROCM_SEARCH_SYSTEM=OFF
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "FDTUNE_HIP=ON but the HIP backend's headers are missing")
  message(SEND_ERROR "FDTUNE_HIP=ON without ROCm: want a configure error, got ${rc}:\n${err}")
  math(EXPR failures "${failures} + 1")
else()
  message(STATUS "ok: FDTUNE_HIP=ON without ROCm is a configure error")
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -S "${FDTUNE_SOURCE}" -B "${WORK}/project-off" -DFDTUNE_HIP=OFF
          -DBUILD_TESTING=OFF
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "hip backend OFF \\(FDTUNE_HIP=OFF\\)")
  message(SEND_ERROR "FDTUNE_HIP=OFF: want the backend left out, got ${rc}:\n${out}\n${err}")
  math(EXPR failures "${failures} + 1")
else()
  message(STATUS "ok: FDTUNE_HIP=OFF leaves the backend out")
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -S "${FDTUNE_SOURCE}" -B "${WORK}/project-bad" -DFDTUNE_HIP=maybe
          -DBUILD_TESTING=OFF
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "FDTUNE_HIP=maybe: expected AUTO, ON or OFF")
  message(SEND_ERROR "FDTUNE_HIP=maybe: want a configure error, got ${rc}:\n${err}")
  math(EXPR failures "${failures} + 1")
else()
  message(STATUS "ok: FDTUNE_HIP=maybe is refused")
endif()

if(failures GREATER 0)
  message(FATAL_ERROR "${failures} discovery check(s) failed")
endif()
file(REMOVE_RECURSE "${WORK}")
message(STATUS "ROCm discovery: every layout and channel found as expected")
