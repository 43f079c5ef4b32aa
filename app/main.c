/* gpusolve: command-line entry — parse options, build the effective configuration, run one solve. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "core/backend.h"
#include "core/mem.h"
#include "core/signal.h"

static void usage(FILE *f)
{
    fputs("usage: gpusolve [-c run.cfg] MATRIX [options]\n"
          "\n"
          "Solves A x = b for the square sparse matrix MATRIX (Matrix Market .mtx or .mtx.gz, or\n"
          "gen:NAME:NX[xNYxNZ] for a generated model problem: poisson2d, poisson3d, laplace27, convdiff3d)\n"
          "with a preconditioned Krylov method, on the GPU when one is present.\n"
          "\n"
          "options:\n"
          "  -c FILE           configuration file (libconfig syntax; see --help-config)\n"
          "  -s KEY=VALUE      override one configuration key, e.g. -s solver.restart=80 (repeatable)\n"
          "  -b FILE           right-hand side vector (Matrix Market); default: system.rhs\n"
          "  -x FILE           initial guess (Matrix Market); default: system.x0\n"
          "  -o FILE           write the solution (Matrix Market array), atomically\n"
          "  --history FILE    write the residual history as CSV (iteration,residual,relative,time_s)\n"
          "  --json            print exactly one JSON object for the run on stdout\n"
          "  --quiet           text output: only the summary line\n"
          "  --print-config    print the effective configuration (defaults marked) and exit\n"
          "  --help-config     print every configuration key with type, default, range and help\n"
          "  --version         print the version and exit\n"
          "  -h, --help        this help\n"
          "\n"
          "exit codes: 0 converged, 1 not converged, 2 usage/config error, 3 input file error,\n"
          "            4 numerical failure, 5 device/resource failure, 6 interrupted, 70 internal error\n",
          f);
}

static int usage_error(const char *fmt, const char *arg)
{
    fputs("gpusolve: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\ntry 'gpusolve --help'\n", stderr);
    return GS_EXIT_USAGE;
}

/* Report a failed status with its trace and return its exit code. */
static int fail(void)
{
    gs_status st = gs_error_status();
    fputs("gpusolve: error: ", stderr);
    gs_error_print(stderr);
    return gs_exit_code_for_status(st);
}

int main(int argc, char **argv)
{
    enum { OPT_JSON = 256, OPT_HISTORY, OPT_QUIET, OPT_PRINT_CONFIG, OPT_HELP_CONFIG, OPT_HELP_CONFIG_MD, OPT_VERSION };
    static const struct option longopts[] = {
        {"json", no_argument, NULL, OPT_JSON},
        {"history", required_argument, NULL, OPT_HISTORY},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"print-config", no_argument, NULL, OPT_PRINT_CONFIG},
        {"help-config", no_argument, NULL, OPT_HELP_CONFIG},
        {"help-config-markdown", no_argument, NULL, OPT_HELP_CONFIG_MD},
        {"version", no_argument, NULL, OPT_VERSION},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    gs_app_opts o = {0};
    const char **ov = NULL;
    if (gs_calloc(&ov, (size_t)argc + 1, sizeof *ov) != GS_OK) {
        fputs("gpusolve: out of memory\n", stderr);
        return GS_EXIT_DEVICE;
    }
    o.overrides = ov;
    int c, code = GS_EXIT_CONVERGED;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":c:s:b:x:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'c': o.config_path = optarg; break;
        case 's': ov[o.noverrides++] = optarg; break;
        case 'b': o.rhs_path = optarg; break;
        case 'x': o.x0_path = optarg; break;
        case 'o': o.solution = optarg; break;
        case OPT_HISTORY: o.history = optarg; break;
        case OPT_JSON: o.json = true; break;
        case OPT_QUIET: o.quiet = true; break;
        case OPT_PRINT_CONFIG: o.print_config = true; break;
        case OPT_HELP_CONFIG: gs_config_print_schema(stdout); gs_free(&ov); return 0;
        case OPT_HELP_CONFIG_MD: gs_config_print_schema_markdown(stdout); gs_free(&ov); return 0;
        case OPT_VERSION: printf("gpusolve %s\n", GS_VERSION); gs_free(&ov); return 0;
        case 'h': usage(stdout); gs_free(&ov); return 0;
        case ':': gs_free(&ov); return usage_error("option %s needs a value", argv[optind - 1]);
        default: gs_free(&ov); return usage_error("unknown option %s", argv[optind - 1]);
        }
    }
    if (optind < argc) o.matrix = argv[optind++];
    if (optind < argc) {
        gs_free(&ov);
        return usage_error("unexpected argument '%s' (one matrix per run)", argv[optind]);
    }

    gs_config *cfg = NULL;
    if (gs_config_create(&cfg) != GS_OK) {
        code = fail();
        goto done;
    }
    if (o.config_path && gs_config_load_file(cfg, o.config_path) != GS_OK) {
        code = fail();
        goto done;
    }
    for (int i = 0; i < o.noverrides; i++)
        if (gs_config_set(cfg, o.overrides[i]) != GS_OK) {
            code = fail();
            goto done;
        }
    /* command-line flags are shorthands for keys and win over the file */
    if ((o.json && gs_config_set(cfg, "output.format=json") != GS_OK) ||
        (o.quiet && gs_config_set(cfg, "output.quiet=true") != GS_OK)) {
        code = fail();
        goto done;
    }
    if (o.print_config) {
        gs_config_print(cfg, stdout, true);
        goto done;
    }
    if (!o.matrix) {
        gs_config_destroy(&cfg);
        gs_free(&ov);
        return usage_error("%s", "no matrix given");
    }
    gs_interrupt_install();
    code = gs_app_run(&o, cfg);
done:
    gs_config_destroy(&cfg);
    gs_free(&ov);
    return code;
}
