# Debian packages: tdstudio (the application), libtensordict0 (the shared
# library), libtensordict-torch0 (its torch part, the only one that needs
# libtorch) and libtensordict-dev (headers and the CMake package config).
# Shared-library dependencies are computed by dpkg-shlibdeps.
include(GNUInstallDirs)

# Debian wants compressed manual pages and a copyright file per package.
set(TDSTUDIO_MAN_GZ ${CMAKE_BINARY_DIR}/packaging/tdstudio.1.gz)
add_custom_command(OUTPUT ${TDSTUDIO_MAN_GZ}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/packaging
    COMMAND gzip -n -9 -c ${CMAKE_SOURCE_DIR}/packaging/tdstudio.1 > ${TDSTUDIO_MAN_GZ}
    DEPENDS ${CMAKE_SOURCE_DIR}/packaging/tdstudio.1)
set(TDSTUDIO_CHANGELOG_GZ ${CMAKE_BINARY_DIR}/packaging/changelog.gz)
add_custom_command(OUTPUT ${TDSTUDIO_CHANGELOG_GZ}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/packaging
    COMMAND gzip -n -9 -c ${CMAKE_SOURCE_DIR}/packaging/changelog > ${TDSTUDIO_CHANGELOG_GZ}
    DEPENDS ${CMAKE_SOURCE_DIR}/packaging/changelog)
add_custom_target(tdstudio_man ALL DEPENDS ${TDSTUDIO_MAN_GZ} ${TDSTUDIO_CHANGELOG_GZ})

install(FILES packaging/tdstudio.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications COMPONENT tdstudio)
install(FILES resources/tdstudio.svg DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps COMPONENT tdstudio)
install(FILES packaging/tdstudio-mime.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages
    RENAME tdstudio.xml COMPONENT tdstudio)
install(FILES ${TDSTUDIO_MAN_GZ} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT tdstudio)
foreach(package tdstudio libtensordict0 libtensordict-torch0 libtensordict-dev)
    string(REGEX REPLACE "0$" "" component ${package})
    install(FILES packaging/copyright ${TDSTUDIO_CHANGELOG_GZ} DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${package}
        COMPONENT ${component})
endforeach()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tdstudio)
set(CPACK_PACKAGE_VENDOR "tdstudio developers")
set(CPACK_PACKAGE_CONTACT "tdstudio developers <tdstudio@example.org>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Viewer for PyTorch tensordict memmap directories and .tdz archives")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL tdstudio libtensordict libtensordict-torch libtensordict-dev)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_BINARY_DIR}/core)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/tdstudio/tdstudio")

set(CPACK_DEBIAN_TDSTUDIO_PACKAGE_NAME tdstudio)
set(CPACK_DEBIAN_TDSTUDIO_PACKAGE_DEPENDS "libtensordict0 (= ${PROJECT_VERSION}), qt6-qpa-plugins")
set(CPACK_DEBIAN_TDSTUDIO_PACKAGE_RECOMMENDS "qt6-svg-plugins | libqt6svg6")
set(CPACK_COMPONENT_TDSTUDIO_DESCRIPTION "viewer for PyTorch tensordict data
 tdstudio opens the memory-mapped directories and .tdz archives written by
 PyTorch's tensordict library: key tree, tensor tables, images, plots,
 statistics, and saving with every option of tensordict.save.")

set(CPACK_DEBIAN_LIBTENSORDICT_PACKAGE_NAME libtensordict0)
set(CPACK_DEBIAN_LIBTENSORDICT_PACKAGE_SECTION libs)
# Loaded with the first HTTP request (dlopen), so shlibdeps cannot see it.
set(CPACK_DEBIAN_LIBTENSORDICT_PACKAGE_DEPENDS "libcurl4")
set(CPACK_DEBIAN_LIBTENSORDICT_PACKAGE_CONTROL_EXTRA ${CMAKE_SOURCE_DIR}/packaging/debian-libtensordict0/triggers)
set(CPACK_COMPONENT_LIBTENSORDICT_DESCRIPTION "tensordict memmap and .tdz reader and writer (library)
 libtensordict loads and saves tensordicts in exactly the on-disk formats of
 Python tensordict 0.14; leaves are raw bytes mapped from the files.")

set(CPACK_DEBIAN_LIBTENSORDICT-TORCH_PACKAGE_NAME libtensordict-torch0)
set(CPACK_DEBIAN_LIBTENSORDICT-TORCH_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_LIBTENSORDICT-TORCH_PACKAGE_DEPENDS "libtensordict0 (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_LIBTENSORDICT-TORCH_PACKAGE_CONTROL_EXTRA ${CMAKE_SOURCE_DIR}/packaging/debian-libtensordict0/triggers)
set(CPACK_COMPONENT_LIBTENSORDICT-TORCH_DESCRIPTION "tensordict memmap and .tdz reader and writer (libtorch part)
 The torch part of libtensordict: leaves as libtorch tensors mapped from the
 files without a copy, and libtorch tensors to save.")

set(CPACK_DEBIAN_LIBTENSORDICT-DEV_PACKAGE_NAME libtensordict-dev)
set(CPACK_DEBIAN_LIBTENSORDICT-DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_LIBTENSORDICT-DEV_PACKAGE_DEPENDS "libtensordict0 (= ${PROJECT_VERSION}), libtensordict-torch0 (= ${PROJECT_VERSION}), qt6-base-dev")
set(CPACK_DEBIAN_LIBTENSORDICT-DEV_PACKAGE_SUGGESTS "libtorch-dev")
set(CPACK_COMPONENT_LIBTENSORDICT-DEV_DESCRIPTION "tensordict memmap and .tdz reader and writer (development files)
 Headers and the CMake package config: find_package(tensordict) gives the
 imported target tensordict::tensordict; COMPONENTS torch adds tensordict::torch
 (which needs libtorch-dev).")

include(CPack)
