# bench_trisolve: every GPU triangular solver (cuSPARSE, level sets, sync-free, auto) analysed and timed
# side by side on ILU(0) factors or triangles of a generated / Matrix Market matrix.
# Included from bench/CMakeLists.txt: include(${CMAKE_CURRENT_SOURCE_DIR}/trisolve.cmake)
add_executable(bench_trisolve ${CMAKE_CURRENT_LIST_DIR}/bench_trisolve.c)
target_link_libraries(bench_trisolve PRIVATE gs gs_bench_util)
target_compile_options(bench_trisolve PRIVATE ${GS_C_WARNINGS})
