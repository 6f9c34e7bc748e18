# Build options. FLASH_VARIANTS and FLASH_HEAD_DIMS build a subset for fast
# iteration: a variant left out stays in the registry as "not built".
set(_flash_top OFF)
if(CMAKE_SOURCE_DIR STREQUAL PROJECT_SOURCE_DIR)
  set(_flash_top ON)
endif()
option(FLASH_BUILD_TESTS "Build the tests" ${_flash_top})
option(FLASH_BUILD_APPS "Build the runner" ${_flash_top})
option(FLASH_BUILD_BENCH "Build the bench" ${_flash_top})
# -lineinfo (the source lines ncu's per-line view shows) costs ~3% of each
# kernel file's compile (session 41: fwd_05 53.8 -> 55.4 s); the h200 and dev
# presets, which build for profiling on the device, turn it on.
option(FLASH_LINEINFO "Compile the kernels with -lineinfo (for ncu's source view)" OFF)

set(FLASH_VARIANTS "all" CACHE STRING "Kernel variants to build: all, or a list such as \"naive;tiled\"")
set(FLASH_HEAD_DIMS "32;64;96;128;256" CACHE STRING "Head dims to instantiate (subset of 32;64;96;128;256)")

set(FLASH_SUPPORTED_HEAD_DIMS 32 64 96 128 256)
foreach(d IN LISTS FLASH_HEAD_DIMS)
  if(NOT d IN_LIST FLASH_SUPPORTED_HEAD_DIMS)
    message(FATAL_ERROR "FLASH_HEAD_DIMS: ${d} is not one of ${FLASH_SUPPORTED_HEAD_DIMS}")
  endif()
endforeach()
if(NOT FLASH_HEAD_DIMS)
  message(FATAL_ERROR "FLASH_HEAD_DIMS is empty; name at least one of ${FLASH_SUPPORTED_HEAD_DIMS}")
endif()

# The variant list comes from kernels/variants.def, the single source of truth.
# Editing it re-runs configure.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/kernels/variants.def)
file(STRINGS ${PROJECT_SOURCE_DIR}/kernels/variants.def _flash_def_lines REGEX "^FLASH_(FWD|DECODE|BWD)_VARIANT\\(")
set(FLASH_ALL_VARIANTS "")
foreach(line IN LISTS _flash_def_lines)
  if(NOT line MATCHES "^FLASH_(FWD|DECODE|BWD)_VARIANT\\(([a-z0-9_]+), *([a-z0-9_]+),")
    message(FATAL_ERROR "kernels/variants.def: cannot parse: ${line}")
  endif()
  # Backward variants are named bwd_<name> here (their names may repeat a
  # forward one); the generated stub defines variant_bwd_<name>().
  set(_name ${CMAKE_MATCH_2})
  if(CMAKE_MATCH_1 STREQUAL "BWD")
    set(_name bwd_${CMAKE_MATCH_2})
  endif()
  list(APPEND FLASH_ALL_VARIANTS ${_name})
  set(FLASH_VARIANT_SOURCE_${_name} ${CMAKE_MATCH_3})
  set(FLASH_VARIANT_KIND_${_name} ${CMAKE_MATCH_1})
endforeach()

if(FLASH_VARIANTS STREQUAL "all")
  set(FLASH_ENABLED_VARIANTS ${FLASH_ALL_VARIANTS})
else()
  set(FLASH_ENABLED_VARIANTS ${FLASH_VARIANTS})
  foreach(v IN LISTS FLASH_ENABLED_VARIANTS)
    if(NOT v IN_LIST FLASH_ALL_VARIANTS)
      message(FATAL_ERROR "FLASH_VARIANTS: unknown variant '${v}'; known: ${FLASH_ALL_VARIANTS}")
    endif()
  endforeach()
endif()
# wgmma_window runs every call but narrow windows on wgmma_persistent's kernels.
if("wgmma_window" IN_LIST FLASH_ENABLED_VARIANTS AND NOT "wgmma_persistent" IN_LIST FLASH_ENABLED_VARIANTS)
  list(APPEND FLASH_ENABLED_VARIANTS wgmma_persistent)
endif()
# The backward's bench and runner compute O and the LSE with the forward
# ("auto"): a subset of backward variants alone would fail every call there
# ("no variant supports this call"), so it gets the cheapest forward rung.
set(_flash_has_fwd OFF)
set(_flash_has_bwd OFF)
foreach(v IN LISTS FLASH_ENABLED_VARIANTS)
  if(FLASH_VARIANT_KIND_${v} STREQUAL "FWD")
    set(_flash_has_fwd ON)
  elseif(FLASH_VARIANT_KIND_${v} STREQUAL "BWD")
    set(_flash_has_bwd ON)
  endif()
endforeach()
if(_flash_has_bwd AND NOT _flash_has_fwd)
  list(APPEND FLASH_ENABLED_VARIANTS tiled)
  message(STATUS "flash: FLASH_VARIANTS has backward variants but no forward one; adding 'tiled' (the backward's bench and runner compute O and the LSE with the forward)")
endif()
message(STATUS "flash: variants ${FLASH_ENABLED_VARIANTS}; head dims ${FLASH_HEAD_DIMS}; CUDA architectures ${CMAKE_CUDA_ARCHITECTURES}")
