# Writes the bash completion script of the gpusolve executable EXE into OUT (`gpusolve --completion
# bash`, generated from its option table and configuration schema); run by the build.
execute_process(COMMAND ${EXE} --completion bash OUTPUT_FILE ${OUT}.tmp RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT}.tmp)
  message(FATAL_ERROR "${EXE} --completion bash failed (${rc})")
endif()
file(RENAME ${OUT}.tmp ${OUT})
