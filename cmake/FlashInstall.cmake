# cmake --install gives a relocatable tree: bin/, lib/, include/, lib/cmake/flash/.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS flash EXPORT flashTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/flash DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT flashTargets NAMESPACE flash:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/flash)
configure_package_config_file(cmake/flashConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/flashConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/flash)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/flashConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/flashConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/flashConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/flash)

# The C ABI's shared library, beside the static one and in the same package
# (find_package(flash), then flash::flash_c).
install(TARGETS flash_c EXPORT flashTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
