# bench_parilu: ParIC/ParILU sweeps vs cuSPARSE csric02/csrilu02 and PCG iterations after 0..5 sweeps
# (Table 2 of the asynchronous iterative ILU paper) on generated matrices.
# Included from bench/CMakeLists.txt: include(${CMAKE_CURRENT_SOURCE_DIR}/parilu.cmake)
add_executable(bench_parilu ${CMAKE_CURRENT_LIST_DIR}/bench_parilu.c)
target_link_libraries(bench_parilu PRIVATE gs gs_bench_util)
target_compile_options(bench_parilu PRIVATE ${GS_C_WARNINGS})
