# libgpusolve: the public library (api/gpusolve.h) as a shared and a static library made of the objects
# of the internal `gs` (and, built with MPI, of the distributed layer `gs_mpi`, whose solvers over a
# communicator api/gpusolve_mpi.h declares), and what `cmake --install` installs: the libraries, the
# headers, the gpusolve and gpusolve-gen executables, the man page, gpusolve.pc and the CMake package
# gpusolve (gpusolve::gpusolve).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The shared library: every object of gs (whole archive), exporting the gpusolve_* symbols alone, in
# the version node GPUSOLVE_0 (cmake/libgpusolve.map).
add_library(gpusolve_shared SHARED ${PROJECT_SOURCE_DIR}/api/gpusolve.h)
target_link_libraries(gpusolve_shared PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,gs>")
target_link_options(gpusolve_shared PRIVATE
  "LINKER:--version-script=${PROJECT_SOURCE_DIR}/cmake/libgpusolve.map" "LINKER:--no-undefined")
set_target_properties(gpusolve_shared PROPERTIES
  OUTPUT_NAME gpusolve EXPORT_NAME gpusolve VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
  LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/libgpusolve.map
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}
  # keeps the paths of its dependencies outside the system's (CUDA, an unpacked METIS) when installed
  INSTALL_RPATH_USE_LINK_PATH ON)
if(GS_WITH_CUDA)
  set_target_properties(gpusolve_shared PROPERTIES LINKER_LANGUAGE CUDA)
else()
  set_target_properties(gpusolve_shared PROPERTIES LINKER_LANGUAGE C)
endif()
target_include_directories(gpusolve_shared INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/api> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
# with MPI: the distributed layer's objects too, and the MPI library they call (a program that never
# calls gpusolve_create_comm needs no MPI of its own)
if(GS_WITH_MPI)
  target_sources(gpusolve_shared PRIVATE $<TARGET_OBJECTS:gs_mpi>)
  target_link_libraries(gpusolve_shared PRIVATE MPI::MPI_C)
  if(GS_WITH_NCCL)
    target_link_libraries(gpusolve_shared PRIVATE ${NCCL_LIBRARY})
  endif()
endif()

# The static library: the same objects; its users link gs's dependencies (listed by gpusolve.pc's
# Libs.private and the CMake package's gpusolve::gpusolve_static).
add_library(gpusolve_static STATIC $<TARGET_OBJECTS:gs>)
set_target_properties(gpusolve_static PROPERTIES OUTPUT_NAME gpusolve EXPORT_NAME gpusolve_static
                                                 ARCHIVE_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
target_include_directories(gpusolve_static INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/api> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set(gs_static_deps ${METIS_LIBRARY} ${LIBCONFIG_LIBRARY} ${JANSSON_LIBRARY} ZLIB::ZLIB Threads::Threads m)
set(pc_private "${METIS_LIBRARY} ${LIBCONFIG_LIBRARY} ${JANSSON_LIBRARY} -lz -lpthread -lm")
if(OpenMP_C_FOUND)
  list(APPEND gs_static_deps OpenMP::OpenMP_C)
  string(APPEND pc_private " ${OpenMP_C_FLAGS}")
endif()
if(GS_WITH_CUDA)
  # the CUDA objects are C++: their runtime comes along
  list(APPEND gs_static_deps CUDA::cudart CUDA::cusparse stdc++)
  string(APPEND pc_private " -L${CUDAToolkit_LIBRARY_DIR} -lcusparse -lcudart -lstdc++")
endif()
if(GS_WITH_MPI)
  target_sources(gpusolve_static PRIVATE $<TARGET_OBJECTS:gs_mpi>)
  list(APPEND gs_static_deps MPI::MPI_C)
  string(REPLACE ";" " " pc_mpi "${MPI_C_LIBRARIES}")
  string(APPEND pc_private " ${pc_mpi}")
  if(GS_WITH_NCCL)
    list(APPEND gs_static_deps ${NCCL_LIBRARY})
    string(APPEND pc_private " ${NCCL_LIBRARY}")
  endif()
endif()
target_link_libraries(gpusolve_static INTERFACE ${gs_static_deps})

# --- install ---
install(TARGETS gpusolve_shared gpusolve_static EXPORT gpusolveTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/api/gpusolve.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(GS_WITH_MPI) # solvers over a communicator: compiled with mpicc (the header includes mpi.h)
  install(FILES ${PROJECT_SOURCE_DIR}/api/gpusolve_mpi.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()
foreach(exe gpusolve gpusolve-gen)
  if(TARGET ${exe})
    set_target_properties(${exe} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
    install(TARGETS ${exe} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/man/gpusolve.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
# the bash completion, generated from the option table and the schema by the gpusolve just built
if(TARGET gpusolve)
  set(gs_completion ${PROJECT_BINARY_DIR}/gpusolve.bash-completion)
  add_custom_command(OUTPUT ${gs_completion}
                     COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:gpusolve> -DOUT=${gs_completion}
                             -P ${PROJECT_SOURCE_DIR}/cmake/completion.cmake
                     DEPENDS gpusolve ${PROJECT_SOURCE_DIR}/cmake/completion.cmake VERBATIM)
  add_custom_target(gpusolve_completion ALL DEPENDS ${gs_completion})
  install(FILES ${gs_completion} DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME gpusolve)
endif()

# gpusolve.pc: prefix found from the file's own place, so an install anywhere (--prefix) works
string(REGEX REPLACE "[^/]+" ".." pc_up "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
set(GS_PC_LIBS_PRIVATE "${pc_private}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/gpusolve.pc.in ${PROJECT_BINARY_DIR}/gpusolve.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/gpusolve.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# the CMake package: find_package(gpusolve) -> gpusolve::gpusolve (shared), gpusolve::gpusolve_static
set(cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/gpusolve)
set(GS_PKG_WITH_CUDA ${GS_WITH_CUDA})
set(GS_PKG_WITH_OPENMP ${OpenMP_C_FOUND})
set(GS_PKG_WITH_MPI ${GS_WITH_MPI})
install(EXPORT gpusolveTargets NAMESPACE gpusolve:: DESTINATION ${cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/gpusolve-config.cmake.in
                              ${PROJECT_BINARY_DIR}/gpusolve-config.cmake INSTALL_DESTINATION ${cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/gpusolve-config-version.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/gpusolve-config.cmake ${PROJECT_BINARY_DIR}/gpusolve-config-version.cmake
        DESTINATION ${cmake_dir})
