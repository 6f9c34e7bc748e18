# Configures the project (no build) with subsets that the top-level build
# does not take, and checks the compile lines CMake generates:
#   sm_80 + sm_90a with variants of which none is portable (the portable
#     kernels' object library must not exist: it once failed to configure,
#     "No SOURCES given to target");
#   the same architectures with tiled and mma: both compiled once to
#     compute_80 PTX with sm_80 and sm_90 machine code, and the Hopper rung
#     listed beside them with its own compute_90a pass;
#   sm_90a alone: no portable library, every rung its one pass.
file(REMOVE_RECURSE ${WORK_DIR})
if(NOT NINJA)
  set(NINJA ninja)
endif()
function(configure name archs variants)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/${name} -G Ninja
                          -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_ARCHITECTURES=${archs}" "-DFLASH_VARIANTS=${variants}"
                          -DFLASH_BUILD_TESTS=OFF -DFLASH_BUILD_APPS=OFF -DFLASH_BUILD_BENCH=OFF
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configure ${name} (${archs}; ${variants}) failed (${rc}):\n${err}")
  endif()
  file(STRINGS ${WORK_DIR}/${name}/build.ninja lines REGEX "^build .*\\.cu\\.o:")
  set(${name}_objects "${lines}" PARENT_SCOPE)
  execute_process(COMMAND ${NINJA} -C ${WORK_DIR}/${name} -t commands OUTPUT_VARIABLE cmds RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ninja -t commands in ${name} failed")
  endif()
  set(${name}_commands "${cmds}" PARENT_SCOPE)
endfunction()
function(expect haystack needle what)
  string(FIND "${haystack}" "${needle}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${what}: no '${needle}'")
  endif()
endfunction()
function(expect_not haystack needle what)
  string(FIND "${haystack}" "${needle}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "${what}: unexpected '${needle}'")
  endif()
endfunction()

configure(hopper "80;90a" "wgmma_persistent;bwd_wgmma")
expect_not("${hopper_objects}" "flash_portable_kernels" "no portable variant")
expect("${hopper_objects}" "fwd_09_wgmma_persistent.cu.o" "no portable variant")

configure(mixed "80;90a" "tiled;mma;wgmma")
expect("${mixed_objects}" "flash_portable_kernels.dir/fwd_02_tiled.cu.o" "portable tiled")
expect("${mixed_objects}" "flash_portable_kernels.dir/fwd_04_mma.cu.o" "portable mma")
expect_not("${mixed_objects}" "flash_portable_kernels.dir/fwd_07_wgmma.cu.o" "wgmma is not portable")
string(REGEX MATCH "[^\n]*-c [^\n]*fwd_02_tiled\\.cu[^\n]*" tiled_line "${mixed_commands}")
expect("${tiled_line}" "arch=compute_80,code=[compute_80,sm_80,sm_90]" "tiled's compile line")
expect_not("${tiled_line}" "compute_90a" "tiled's compile line")
string(REGEX MATCH "[^\n]*-c [^\n]*fwd_07_wgmma\\.cu[^\n]*" wgmma_line "${mixed_commands}")
expect("${wgmma_line}" "arch=compute_90a,code=[compute_90a,sm_90a]" "wgmma's compile line")

configure(single "90a" "tiled;wgmma")
expect_not("${single_objects}" "flash_portable_kernels" "one architecture")
message(STATUS "subsets: every configuration as expected")
