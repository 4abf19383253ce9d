# Finds the headers fdtune's HIP backend is compiled against (the HIP runtime API, hiprtc and
# comgr; the libraries themselves are dlopen'ed at run time) in the layouts ROCm is really
# installed in:
#   - AMD's packages: /opt/rocm -> /opt/rocm-X.Y.Z, include/hip/*.h; comgr's header at
#     include/amd_comgr/amd_comgr.h from ROCm 5.3 on (the only place from 6.0 on), at
#     include/amd_comgr.h before;
#   - ROCm 5.0/5.1: the HIP headers under hip/include as well;
#   - Spack, modules and relocated installs: any prefix, HIP and comgr possibly in different
#     prefixes (Spack's hip and comgr packages), given through ROCM_PATH, HIP_PATH or
#     CMAKE_PREFIX_PATH;
#   - Debian 12's ROCm 5.2: /usr/include/hip, /usr/include/amd_comgr.h.
# Roots are searched in this order: ROCM_PATH (CMake variable, else environment), HIP_PATH
# (likewise), CMAKE_PREFIX_PATH, the default roots (FDTUNE_ROCM_DEFAULT_ROOTS: /opt/rocm, then
# /opt/rocm-* newest first), then the system paths (unless FDTUNE_ROCM_SEARCH_SYSTEM is OFF). The first root that has a header wins, so
# an explicit ROCm is never shadowed by Debian's.
#
# fdtune_find_rocm() sets, in the caller's scope:
#   FDTUNE_ROCM_FOUND          TRUE when the HIP headers and comgr's header were both found
#   FDTUNE_ROCM_HIP_INCLUDE    directory holding hip/hiprtc.h and hip/hip_runtime_api.h
#   FDTUNE_ROCM_COMGR_INCLUDE  directory holding amd_comgr/amd_comgr.h or amd_comgr.h
#   FDTUNE_ROCM_COMGR_SUBDIR   1 when the header is amd_comgr/amd_comgr.h, else 0
#   FDTUNE_ROCM_ROOT           the install prefix of the HIP headers (for run-time lookup of
#                              the libraries: <root>/lib)
#   FDTUNE_ROCM_VERSION        HIP version from hip/hip_version.h ("6.2.41133"), "" if unknown
#   FDTUNE_ROCM_SEARCHED       the roots searched, for messages
#   FDTUNE_ROCM_MISSING        what was not found, for messages ("" when found)
#   FDTUNE_ROCM_IGNORED        an explicit ROCM_PATH / HIP_PATH that held no HIP headers ("")

option(FDTUNE_ROCM_SEARCH_SYSTEM "Search the system paths (/usr/include) for ROCm last" ON)
set(FDTUNE_ROCM_DEFAULT_ROOTS "/opt/rocm" CACHE STRING
    "Roots searched for ROCm after ROCM_PATH, HIP_PATH and CMAKE_PREFIX_PATH (/opt/rocm-* follow)")

# The ordered list of candidate roots.
function(_fdtune_rocm_roots out)
  set(roots "")
  foreach(var ROCM_PATH HIP_PATH)
    if(DEFINED ${var} AND NOT "${${var}}" STREQUAL "")
      list(APPEND roots "${${var}}")
    elseif(DEFINED ENV{${var}} AND NOT "$ENV{${var}}" STREQUAL "")
      list(APPEND roots "$ENV{${var}}")
    endif()
  endforeach()
  list(APPEND roots ${CMAKE_PREFIX_PATH})
  if(DEFINED ENV{CMAKE_PREFIX_PATH})
    string(REPLACE ":" ";" envp "$ENV{CMAKE_PREFIX_PATH}")
    list(APPEND roots ${envp})
  endif()
  list(APPEND roots ${FDTUNE_ROCM_DEFAULT_ROOTS})
  foreach(def IN LISTS FDTUNE_ROCM_DEFAULT_ROOTS)
    file(GLOB versioned LIST_DIRECTORIES true "${def}-*")
    list(SORT versioned COMPARE NATURAL ORDER DESCENDING)
    list(APPEND roots ${versioned})
  endforeach()
  list(REMOVE_DUPLICATES roots)
  set(${out} "${roots}" PARENT_SCOPE)
endfunction()

# First root (in order) with one of `names` below one of `suffixes`: sets <out> to the
# directory and <out>_ROOT to the root; system paths come last.
function(_fdtune_rocm_first out roots names suffixes)
  foreach(root IN LISTS roots)
    foreach(suffix IN LISTS suffixes)
      foreach(name IN LISTS names)
        if(EXISTS "${root}/${suffix}/${name}")
          set(${out} "${root}/${suffix}" PARENT_SCOPE)
          set(${out}_ROOT "${root}" PARENT_SCOPE)
          set(${out}_NAME "${name}" PARENT_SCOPE)
          return()
        endif()
      endforeach()
    endforeach()
  endforeach()
  # The system paths (/usr/include on Debian), through CMake's own search.
  if(NOT FDTUNE_ROCM_SEARCH_SYSTEM)
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  foreach(name IN LISTS names)
    string(MAKE_C_IDENTIFIER "_fdtune_sys_${out}_${name}" var)
    find_path(${var} NAMES "${name}" NO_CMAKE_PATH NO_CMAKE_ENVIRONMENT_PATH NO_PACKAGE_ROOT_PATH)
    if(${var})
      get_filename_component(root "${${var}}" DIRECTORY)
      set(${out} "${${var}}" PARENT_SCOPE)
      set(${out}_ROOT "${root}" PARENT_SCOPE)
      set(${out}_NAME "${name}" PARENT_SCOPE)
      unset(${var} CACHE)
      return()
    endif()
    unset(${var} CACHE)
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()

function(fdtune_find_rocm)
  _fdtune_rocm_roots(roots)
  _fdtune_rocm_first(hip "${roots}" "hip/hiprtc.h" "include;hip/include")
  if(hip AND NOT EXISTS "${hip}/hip/hip_runtime_api.h")
    set(hip "")
  endif()
  # comgr: the same root as HIP first (one ROCm), then any root in order (Spack).
  set(comgr_roots "${roots}")
  if(hip)
    list(PREPEND comgr_roots "${hip_ROOT}")
  endif()
  _fdtune_rocm_first(comgr "${comgr_roots}" "amd_comgr/amd_comgr.h;amd_comgr.h" "include")
  set(missing "")
  if(NOT hip)
    list(APPEND missing "hip/hiprtc.h and hip/hip_runtime_api.h")
  endif()
  if(NOT comgr)
    list(APPEND missing "amd_comgr/amd_comgr.h (ROCm >= 5.3) or amd_comgr.h")
  endif()
  set(version "")
  if(hip AND EXISTS "${hip}/hip/hip_version.h")
    file(STRINGS "${hip}/hip/hip_version.h" lines REGEX "#define HIP_VERSION_(MAJOR|MINOR|PATCH)")
    foreach(part MAJOR MINOR PATCH)
      string(REGEX MATCH "HIP_VERSION_${part} ([0-9]+)" m "${lines}")
      set(v_${part} "${CMAKE_MATCH_1}")
    endforeach()
    if(NOT "${v_MAJOR}" STREQUAL "")
      set(version "${v_MAJOR}.${v_MINOR}.${v_PATCH}")
    endif()
  endif()
  # The first explicit root (ROCM_PATH, else HIP_PATH) that was passed over is worth a
  # warning: the user named it, and another ROCm (or none) is used instead.
  set(ignored "")
  foreach(var ROCM_PATH HIP_PATH)
    set(given "${${var}}")
    if("${given}" STREQUAL "" AND DEFINED ENV{${var}})
      set(given "$ENV{${var}}")
    endif()
    if(NOT "${given}" STREQUAL "")
      if(NOT "${hip_ROOT}" STREQUAL "${given}")
        set(ignored "${var}=${given}")
      endif()
      break()
    endif()
  endforeach()
  string(REPLACE ";" ", " searched "${roots}")
  string(REPLACE ";" "; " missing "${missing}")
  if(hip AND comgr)
    set(FDTUNE_ROCM_FOUND TRUE PARENT_SCOPE)
  else()
    set(FDTUNE_ROCM_FOUND FALSE PARENT_SCOPE)
  endif()
  set(FDTUNE_ROCM_HIP_INCLUDE "${hip}" PARENT_SCOPE)
  set(FDTUNE_ROCM_COMGR_INCLUDE "${comgr}" PARENT_SCOPE)
  if(comgr_NAME STREQUAL "amd_comgr/amd_comgr.h")
    set(FDTUNE_ROCM_COMGR_SUBDIR 1 PARENT_SCOPE)
  else()
    set(FDTUNE_ROCM_COMGR_SUBDIR 0 PARENT_SCOPE)
  endif()
  set(FDTUNE_ROCM_ROOT "${hip_ROOT}" PARENT_SCOPE)
  set(FDTUNE_ROCM_VERSION "${version}" PARENT_SCOPE)
  set(FDTUNE_ROCM_SEARCHED "${searched}" PARENT_SCOPE)
  set(FDTUNE_ROCM_MISSING "${missing}" PARENT_SCOPE)
  set(FDTUNE_ROCM_IGNORED "${ignored}" PARENT_SCOPE)
endfunction()
