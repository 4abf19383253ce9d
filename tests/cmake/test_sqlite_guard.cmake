# Test of the SQLite version guard (cmake/FdtuneSQLite.cmake): fdtune's schema uses STRICT
# tables, which need SQLite >= 3.37, so configuring against an older SQLite must stop with an
# error naming the version found; 3.37.0 and newer pass, and a version that could not be read
# is an error too; the whole project configured against a fake sqlite3.h of 3.34.1 stops. Each case runs the guard in a CMake process of its own (an error ends it).
#   cmake -DFDTUNE_SOURCE=<repo> -DWORK=<scratch dir> -P test_sqlite_guard.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT FDTUNE_SOURCE OR NOT WORK)
  message(FATAL_ERROR "usage: cmake -DFDTUNE_SOURCE=<repo> -DWORK=<dir> -P ${CMAKE_CURRENT_LIST_FILE}")
endif()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
file(WRITE "${WORK}/probe.cmake"
  "include(\"${FDTUNE_SOURCE}/cmake/FdtuneSQLite.cmake\")\n"
  "fdtune_check_sqlite_version(\"\${V}\" \"/fake/include\")\n"
  "message(STATUS \"guard passed\")\n")
set(failures 0)

# case(VERSION WANT_RC REGEX): the guard with SQLite3_VERSION = VERSION
function(case version want regex)
  execute_process(COMMAND ${CMAKE_COMMAND} "-DV=${version}" -P "${WORK}/probe.cmake"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(ok TRUE)
  if(want EQUAL 0 AND NOT rc EQUAL 0)
    set(ok FALSE)
  elseif(NOT want EQUAL 0 AND rc EQUAL 0)
    set(ok FALSE)
  endif()
  # CMake wraps its error messages: compare with the lines joined
  string(REGEX REPLACE "[ \n]+" " " text "${out}${err}")
  if(NOT text MATCHES "${regex}")
    set(ok FALSE)
  endif()
  if(ok)
    message(STATUS "ok: SQLite '${version}'")
  else()
    message(SEND_ERROR "SQLite '${version}': want status ${want} and /${regex}/, got ${rc}:\n${out}\n${err}")
    math(EXPR f "${failures} + 1")
    set(failures ${f} PARENT_SCOPE)
  endif()
endfunction()

case(3.34.1 1 "found SQLite 3\\.34\\.1 \\(sqlite3\\.h in '/fake/include'\\), but fdtune needs SQLite >= 3\\.37\\.0: its database uses STRICT tables")
case(3.36.0 1 "found SQLite 3\\.36\\.0 .*needs SQLite >= 3\\.37\\.0")
case("" 1 "could not read the SQLite version")
case(3.37.0 0 "guard passed")
case(3.40.1 0 "SQLite 3\\.40\\.1 \\(>= 3\\.37\\.0, STRICT tables\\).*guard passed")
case(3.100.0 0 "guard passed")

# The whole project against a fake sqlite3.h of 3.34.1 (FindSQLite3 reads the version from
# the header): configuring stops, naming that version.
file(WRITE "${WORK}/old-sqlite/sqlite3.h" "#define SQLITE_VERSION        \"3.34.1\"\n")
execute_process(
  COMMAND ${CMAKE_COMMAND} -S "${FDTUNE_SOURCE}" -B "${WORK}/project-old" -DBUILD_TESTING=OFF
          -DFDTUNE_HIP=OFF -DFDTUNE_CUDA=OFF "-DSQLite3_INCLUDE_DIR=${WORK}/old-sqlite"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX REPLACE "[ \n]+" " " text "${err}")
if(rc EQUAL 0 OR NOT text MATCHES "found SQLite 3\\.34\\.1 .*needs SQLite >= 3\\.37\\.0")
  message(SEND_ERROR "the project with SQLite 3.34.1: want a configure error naming it, got ${rc}:\n${err}")
  math(EXPR failures "${failures} + 1")
else()
  message(STATUS "ok: the project refuses SQLite 3.34.1 at configure time")
endif()

if(failures GREATER 0)
  message(FATAL_ERROR "${failures} SQLite guard check(s) failed")
endif()
file(REMOVE_RECURSE "${WORK}")
message(STATUS "SQLite guard: old versions refused by name, 3.37 and newer accepted")
