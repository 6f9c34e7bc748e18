# `pip install` of the Python package works: builds a wheel of python/ from
# the build at BUILD_DIR (FLASH_LADDER_BUILD_DIR: the flash_c target is
# brought up to date, nothing is recompiled), installs it into a scratch
# folder and imports it from there, outside the checkout. Skipped (ctest
# SKIP_REGULAR_EXPRESSION) when Python lacks pip or setuptools (no network
# is used: --no-build-isolation, --no-index).
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
# setuptools >= 70.1 builds wheels itself; older ones need the wheel package.
execute_process(COMMAND ${PYTHON} -c "import setuptools
try:
    import setuptools.command.bdist_wheel
except ImportError:
    import wheel.bdist_wheel" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
execute_process(COMMAND ${PYTHON} -m pip --version RESULT_VARIABLE rc_pip OUTPUT_QUIET ERROR_VARIABLE err_pip)
string(APPEND err "${err_pip}")
if(NOT rc EQUAL 0 OR NOT rc_pip EQUAL 0)
  message("python_package skipped: ${PYTHON} cannot build wheels without build isolation: it needs pip and "
          "setuptools >= 70.1 (or setuptools and wheel) (${err})")
  return()
endif()
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc WORKING_DIRECTORY ${WORK_DIR})
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGV}")
  endif()
endfunction()
set(ENV{FLASH_LADDER_BUILD_DIR} ${BUILD_DIR})
set(ENV{PIP_DISABLE_PIP_VERSION_CHECK} 1)
run(${PYTHON} -m pip wheel --no-build-isolation --no-deps --quiet -w ${WORK_DIR}/wheel ${SOURCE_DIR}/python)
file(GLOB wheel ${WORK_DIR}/wheel/flash_ladder-*-py3-none-*.whl)
if(NOT wheel)
  message(FATAL_ERROR "no py3-none-<platform> wheel in ${WORK_DIR}/wheel")
endif()
run(${PYTHON} -m pip install --no-deps --no-index --quiet --target ${WORK_DIR}/site ${wheel})
unset(ENV{FLASH_LADDER_LIBRARY})
set(ENV{PYTHONPATH} ${WORK_DIR}/site)
run(${PYTHON} -c "import flash_ladder, flash_ladder._capi as c; p = c.find_library(); \
assert str(p).startswith('${WORK_DIR}/site/flash_ladder/lib/'), p; \
print('imported', flash_ladder.__file__, 'with', p, 'C ABI version', c.library().cdll.flash_c_abi_version())")
