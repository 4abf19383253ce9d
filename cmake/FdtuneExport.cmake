# fdtune_export(): a tuned header written by `fdtune export` at build time, part of the
# package (lib/cmake/fdtune, included by fdtuneConfig.cmake; the target fdtune::fdtune must
# exist). The header depends on the database it is exported from, so a re-tuned database
# regenerates it at the next build.
#
#   fdtune_export(OUTPUT <header>            # relative: in the current binary directory
#                 [TARGET <target>]          # gets the header as a source, its directory
#                                            #   as a private include directory
#                 [DATABASE <db>]            # default: fdtune's default database
#                                            #   ($FDTUNE_DB, else ~/.local/share/fdtune)
#                 [GPU <name>...]            # --gpu: device names, archs or catalogue names
#                 [OPS <op>...] [R <n>] [PRECISION f32|f64] [GRID <g>...]
#                 [FORMAT header|json] [NO_SYSTEM_DB])
#
# Without NO_SYSTEM_DB the shipped system database (share/fdtune/system.db: results measured
# on the project's GPUs) answers after DATABASE, so `GPU H100` works with no tuning at all.
# The header is regenerated when DATABASE, the system database or the fdtune binary change;
# without DATABASE the user's default database is read at build time but not tracked.
function(fdtune_export)
  cmake_parse_arguments(F "NO_SYSTEM_DB" "OUTPUT;TARGET;DATABASE;R;PRECISION;FORMAT"
    "GPU;OPS;GRID" ${ARGN})
  if(F_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "fdtune_export: unknown arguments: ${F_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT F_OUTPUT)
    message(FATAL_ERROR "fdtune_export: OUTPUT <header> is required")
  endif()
  if(NOT TARGET fdtune::fdtune)
    message(FATAL_ERROR "fdtune_export: the target fdtune::fdtune is missing (find_package(fdtune))")
  endif()
  cmake_path(ABSOLUTE_PATH F_OUTPUT BASE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}"
    NORMALIZE OUTPUT_VARIABLE out)
  set(args export -o "${out}")
  set(deps "$<TARGET_FILE:fdtune::fdtune>")
  if(F_DATABASE)
    cmake_path(ABSOLUTE_PATH F_DATABASE BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
      NORMALIZE OUTPUT_VARIABLE db)
    list(APPEND args --db "${db}")
    list(APPEND deps "${db}")
  endif()
  if(F_OPS)
    list(JOIN F_OPS "," F_OPS)
  endif()
  # each value of a keyword becomes one `--option value` of fdtune export
  foreach(kw_opt IN ITEMS GPU=--gpu OPS=--op R=--R PRECISION=--precision GRID=--grid
                          FORMAT=--format)
    string(REPLACE "=" ";" kw_opt "${kw_opt}")
    list(GET kw_opt 0 kw)
    list(GET kw_opt 1 opt)
    foreach(v IN LISTS F_${kw})
      list(APPEND args ${opt} "${v}")
    endforeach()
  endforeach()
  if(F_NO_SYSTEM_DB)
    list(APPEND args --no-system-db)
  elseif(DEFINED FDTUNE_SYSTEM_DB AND EXISTS "${FDTUNE_SYSTEM_DB}")
    list(APPEND deps "${FDTUNE_SYSTEM_DB}")
  endif()
  cmake_path(GET out PARENT_PATH outdir)
  cmake_path(GET out FILENAME outname)
  add_custom_command(OUTPUT "${out}"
    COMMAND fdtune::fdtune ${args}
    DEPENDS ${deps}
    COMMENT "fdtune export: ${outname}"
    VERBATIM)
  if(F_TARGET)
    target_sources(${F_TARGET} PRIVATE "${out}")
    target_include_directories(${F_TARGET} PRIVATE "${outdir}")
  endif()
endfunction()
