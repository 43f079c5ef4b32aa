/* The report of a run's strategy and of its reported attempt: the entries the CLI's text and JSON
 * reports and the library's JSON report share (strategy.*, attempts, solve.*, time.*, system.*,
 * preconditioner.*, trisolve.*). */
#ifndef GS_API_RUN_REPORT_H
#define GS_API_RUN_REPORT_H

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

#ifdef __cplusplus
}
#endif
#endif
