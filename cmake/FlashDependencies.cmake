# Dependencies through find_package; a missing one stops configure and names
# the Debian package that provides it.
find_package(CUDAToolkit REQUIRED)

macro(flash_require package debian)
  find_package(${package} CONFIG QUIET)
  if(NOT ${package}_FOUND)
    find_package(${package} QUIET)
  endif()
  if(NOT ${package}_FOUND)
    message(FATAL_ERROR "flash needs ${package}: on Debian, apt-get install ${debian}")
  endif()
endmacro()

if(FLASH_BUILD_TESTS)
  flash_require(GTest libgtest-dev)
endif()
if(FLASH_BUILD_BENCH)
  flash_require(benchmark libbenchmark-dev)
endif()
if(FLASH_BUILD_TESTS OR FLASH_BUILD_APPS OR FLASH_BUILD_BENCH)
  flash_require(fmt libfmt-dev)
endif()
