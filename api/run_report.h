/* The report of a run's strategy and of its reported attempt: the entries the CLI's text and JSON
 * reports and the library's JSON report share (strategy.*, attempts, solve.*, time.*, system.*,
 * preconditioner.*, trisolve.*). */
#ifndef GS_API_RUN_REPORT_H
#define GS_API_RUN_REPORT_H

#include <time.h>

#include "api/strategy.h"
#include "core/csr.h"
#include "core/report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The strategy's choices and attempts: strategy.* keys and the "attempts" array. */
gs_status gs_run_report_strategy(gs_report *rep, const gs_strategy_result *sr);
/* The reported attempt's outcome: times, iterations, residuals, reason, and the error against x*
 * (xstar NULL: none; x of length n). */
gs_status gs_run_report_outcome(gs_report *rep, const gs_strategy_result *sr, const double *xstar, const double *x,
                                gs_int n);

/* The provenance of a report: gpusolve.version, gpusolve.commit, started_at (ISO 8601 UTC, from
 * `started`), host (the machine's name) and, when argv is given, command_line (argv as an array). */
gs_status gs_run_report_provenance(gs_report *rep, time_t started, int argc, char *const *argv);
/* backend.memory_peak_bytes: the most memory the backend's allocations held since its peak was last
 * reset (gs_backend_mem_peak_reset), or null with backend.memory_note saying why. */
gs_status gs_run_report_memory(gs_report *rep, const gs_backend *be);
/* "warnings": the keys the user set that have no effect with the method of the reported attempt
 * (cfg/effect.h; user: the configuration as given) and the solve's own warning, as an array of strings.
 * Each message is also passed to warn (NULL: none). */
gs_status gs_run_report_warnings(gs_report *rep, const gs_config *user, const gs_strategy_result *sr);

#ifdef __cplusplus
}
#endif
#endif
