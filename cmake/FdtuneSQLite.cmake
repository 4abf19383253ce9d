# The SQLite that fdtune builds against must be new enough for its schema: STRICT tables
# (db/schema.c) came with SQLite 3.37.0; an older library would fail at run time on the first
# database it creates, so configuring stops here instead, naming the version found.
#   include(cmake/FdtuneSQLite.cmake)
#   fdtune_check_sqlite_version("${SQLite3_VERSION}" "${SQLite3_INCLUDE_DIRS}")
set(FDTUNE_SQLITE_MIN_VERSION 3.37.0)

# Fails the configuration unless version (as FindSQLite3 reads it from sqlite3.h) is at least
# FDTUNE_SQLITE_MIN_VERSION; where names where that sqlite3.h was found.
function(fdtune_check_sqlite_version version where)
  if(NOT version)
    message(FATAL_ERROR "fdtune: could not read the SQLite version from sqlite3.h (in "
      "'${where}'); fdtune needs SQLite >= ${FDTUNE_SQLITE_MIN_VERSION} (STRICT tables)")
  endif()
  if(version VERSION_LESS FDTUNE_SQLITE_MIN_VERSION)
    message(FATAL_ERROR "fdtune: found SQLite ${version} (sqlite3.h in '${where}'), but fdtune "
      "needs SQLite >= ${FDTUNE_SQLITE_MIN_VERSION}: its database uses STRICT tables, which "
      "older versions cannot read or create. Install a newer libsqlite3-dev (Debian 12 has "
      "3.40) or point CMAKE_PREFIX_PATH (or SQLite3_INCLUDE_DIR and SQLite3_LIBRARY) at one")
  endif()
  message(STATUS "fdtune: SQLite ${version} (>= ${FDTUNE_SQLITE_MIN_VERSION}, STRICT tables)")
endfunction()
