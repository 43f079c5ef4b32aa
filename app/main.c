/* gpusolve: command-line entry — parse options, build the effective configuration, run its solves (one,
 * or a sweep over the keys given several values), or inspect a matrix. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "app/completion.h"
#include "app/inspect.h"
#ifdef GS_HAVE_MPI
#include "app/mpi_run.h"
#endif
#include "app/report_text.h"
#include "app/run.h"
#include "app/monitor.h"
#include "app/sweep.h"
#include "app/system.h"
#include "core/backend.h"
#include "core/mem.h"
#include "core/signal.h"
#include "core/threads.h"

static void usage(FILE *f)
{
    fputs("usage: gpusolve [-c run.cfg] MATRIX [options]\n"
          "       gpusolve --inspect MATRIX [--json]\n"
          "\n"
          "Solves A x = b for the square sparse matrix MATRIX (Matrix Market .mtx or .mtx.gz, or\n"
          "gen:NAME:NX[xNYxNZ] for a generated model problem: poisson2d, poisson3d, laplace27, convdiff3d)\n"
          "with a preconditioned Krylov method, on the GPU when one is present.\n"
          "\n"
          "options:\n"
          "  -c, --config FILE configuration file (libconfig syntax; see --help-config)\n"
          "  -s, --set KEY=VALUE\n"
          "                    override one configuration key, e.g. -s solver.restart=80\n"
          "  -s KEY=V1,V2,...  sweep: one run per value (the same key given again adds values; a key\n"
          "                    given a list in the file, blocks = [16, 128];, sweeps too). Runs are the\n"
          "                    Cartesian product over the swept keys; the matrix is read once\n"
          "  --dry-run         list the runs of a sweep without reading or solving anything\n"
          "  --inspect         print the matrix's structure (symmetry, diagonal, dominance, bandwidth,\n"
          "                    triangular levels) with advice, and exit\n"
          "  -b, --rhs FILE    right-hand side vector (Matrix Market); default: system.rhs\n"
          "  -x, --x0 FILE     initial guess (Matrix Market); default: system.x0\n"
          "  -o, --output FILE write the solution (Matrix Market array), atomically\n"
          "  --history FILE    write the residual history as CSV (iteration,residual,relative,time_s),\n"
          "                    row by row into FILE.tmp.PID, renamed to FILE at the end\n"
          "  --monitor[=K|=Ns] print iteration, residual, relative residual and time while solving: every\n"
          "                    iteration, every K-th, or at most once per N seconds (e.g. --monitor=1s);\n"
          "                    on stderr with --json (output.monitor)\n"
          "  --threads N       host threads for the host code (OpenMP; 0: all cores) (device.threads)\n"
          "  --json            print exactly one JSON object per run on stdout (JSON Lines)\n"
          "  -q, --quiet       text report: the summary line only (output.verbosity = -1)\n"
          "  -v, --verbose     text report: also the setup's facts and the strategy's attempts; -vv: everything\n"
          "                    (output.verbosity = 1, 2); errors with their internal trace (as GS_DEBUG=1)\n"
          "  --print-config    print the effective configuration (defaults marked) and exit\n"
          "  --help-config     print every configuration key with type, default, range and help\n"
          "  --completion bash print a bash completion script for gpusolve and exit\n"
          "  --version         print the version and exit\n"
          "  -h, --help        this help\n"
          "\n"
          "exit codes: 0 converged, 1 not converged, 2 usage/config error, 3 input file error,\n"
          "            4 numerical failure, 5 device/resource failure, 6 interrupted, 70 internal error;\n"
          "            a sweep exits 0 when every run converged, else with its runs' most serious code:\n"
          "            6 > 70 > 5 > 3 > 2 > 4 > 1\n",
          f);
}

/* A usage error: its message (and, with --json, its JSON object); exit 2. */
static int usage_error(const char *fmt, const char *arg)
{
    return gs_app_usage_error(fmt, arg);
}

/* Report a failed status (with its trace at -v or GS_DEBUG; with --json, its JSON object) and return its
 * exit code. */
static int fail(void)
{
    return gs_app_fail(NULL);
}

/* The key of one -s assignment: the text before '=', without the blanks around it. */
typedef struct {
    const char *key;
    size_t len;
    int index; /* its position among the -s options */
} override_key;

static int override_key_cmp(const void *pa, const void *pb)
{
    const override_key *a = pa, *b = pb;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->key, b->key, n);
    if (c) return c;
    if (a->len != b->len) return a->len < b->len ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* first[i] = the position of the first -s that names the same key as -s number i (i itself when none
 * before it does): by sorting the keys, O(n log n) for n options. */
static gs_status first_of_key(const char *const *ov, int n, int *first)
{
    override_key *k = NULL;
    GS_CALL(GS_MALLOC(k, n > 0 ? n : 1));
    for (int i = 0; i < n; i++) {
        const char *a = ov[i];
        size_t len = strcspn(a, "=");
        while (len > 0 && (*a == ' ' || *a == '\t')) a++, len--;
        while (len > 0 && (a[len - 1] == ' ' || a[len - 1] == '\t')) len--;
        k[i] = (override_key){a, len, i};
    }
    qsort(k, (size_t)n, sizeof *k, override_key_cmp);
    for (int i = 0; i < n; i++) {
        bool same = i > 0 && k[i].len == k[i - 1].len && memcmp(k[i].key, k[i - 1].key, k[i].len) == 0;
        first[k[i].index] = same ? first[k[i - 1].index] : k[i].index;
    }
    gs_free(&k);
    return GS_OK;
}

/* Whether the dotted path matches the pattern's first plen characters, where a '*' component matches
 * any one name: trisolve.*.sweeps matches trisolve.lower.sweeps and trisolve.upper.sweeps. */
static bool path_matches(const char *pattern, size_t plen, const char *path)
{
    while (plen > 0 && (*pattern == ' ' || *pattern == '\t')) pattern++, plen--;
    while (plen > 0 && (pattern[plen - 1] == ' ' || pattern[plen - 1] == '\t')) plen--;
    const char *p = pattern, *end = pattern + plen;
    for (;;) { /* one dotted name of each per step */
        size_t pn = 0, qn = strcspn(path, ".");
        while (p + pn < end && p[pn] != '.') pn++;
        bool star = pn == 1 && p[0] == '*';
        if (!star && (pn != qn || strncmp(p, path, pn) != 0)) return false;
        p += pn;
        path += qn;
        if (p == end || *path == '\0') return p == end && *path == '\0';
        p++;
        path++;
    }
}

/* -s PATTERN=VALUES with a '*' in the pattern: every schema key it matches takes the values (append:
 * added to their lists), and gets the link number `id`. */
static gs_status set_matching(gs_config *cfg, const char *assignment, size_t klen, bool append, int id, int *link)
{
    gs_status st = GS_OK;
    char *one = NULL;
    int matched = 0;
    const char *value = assignment + klen + 1;
    for (int k = 0; gs_cfg_schema[k].path; k++) {
        if (!path_matches(assignment, klen, gs_cfg_schema[k].path)) continue;
        size_t len = strlen(gs_cfg_schema[k].path) + 1 + strlen(value) + 1;
        GS_TRY(gs_malloc(&one, len, 1));
        snprintf(one, len, "%s=%s", gs_cfg_schema[k].path, value);
        GS_TRY(gs_config_set_list(cfg, one, append));
        gs_free(&one);
        link[k] = id;
        matched++;
    }
    if (matched == 0)
        GS_FAIL(GS_ERR_CONFIG,
                "-s %s: no configuration key matches %.*s (a '*' stands for one name, e.g. trisolve.*.sweeps); "
                "see --help-config",
                assignment, (int)klen, assignment);
cleanup:
    gs_free(&one);
    return st;
}

/* --print-config of a sweep: the listing above shows each list's first value; the lists follow as
 * comments (copy a line into the file to keep the sweep). */
static void print_sweep_lists(const gs_config *cfg, const int *link)
{
    gs_sweep sw;
    if (gs_sweep_plan(cfg, link, &sw) != GS_OK) {
        gs_error_clear();
        return;
    }
    if (sw.nkeys > 0) {
        printf("# sweep: %ld runs; above, each swept key shows its first value. Its values:\n", sw.nruns);
        for (int k = 0; k < sw.nkeys; k++) {
            printf("#   %s = ", sw.keys[k]);
            gs_config_print_value(cfg, sw.keys[k], stdout);
            printf(";\n");
        }
    }
    gs_sweep_free(&sw);
}

/* docs/config-keys.md: generated from the schema by --help-config-markdown (a test compares the
 * committed file with this output, so the page cannot drift from the code). */
static void print_config_markdown(void)
{
    fputs("# Configuration keys\n"
          "\n"
          "<!-- generated by `gpusolve --help-config-markdown > docs/config-keys.md`; do not edit by hand -->\n"
          "\n"
          "Every key gpusolve accepts, with its type, default and allowed values. Set keys in a libconfig\n"
          "file, one group per stage (`solver = { type = \"cg\"; };`, `trisolve = { lower = { type =\n"
          "\"jacobi\"; }; };`), or on the command line with `-s group.key=value`, which wins over the file.\n"
          "A key given a list (`blocks = [16, 128];` in the file, `-s preconditioner.blocks=16,128`, or the\n"
          "same `-s` key twice) makes a sweep: one run per value (see [the user guide](user-guide.md#sweeps)).\n"
          "`gpusolve --print-config` shows the effective value of every key; `--help-config` prints this\n"
          "table in the terminal.\n"
          "\n",
          stdout);
    gs_config_print_schema_markdown(stdout);
}

/* The -s options, in order: KEY=V1,V2 gives the key a list; the same KEY given again appends to it; a '*'
 * in KEY sets every key it matches, and links them (*link: a number per schema row, allocated here): a
 * sweep varies them together. */
static gs_status apply_overrides(gs_config *cfg, const gs_app_opts *o, int **link)
{
    gs_status st = GS_OK;
    int *first = NULL; /* per -s: the first -s with the same key */
    int nrows = 0;
    while (gs_cfg_schema[nrows].path) nrows++;
    GS_TRY(gs_calloc(link, (size_t)nrows, sizeof **link));
    GS_TRY(gs_malloc(&first, (size_t)(o->noverrides > 0 ? o->noverrides : 1), sizeof *first));
    GS_TRY(first_of_key(o->overrides, o->noverrides, first));
    for (int i = 0; i < o->noverrides; i++) {
        size_t klen = strcspn(o->overrides[i], "=");
        if (memchr(o->overrides[i], '*', klen) && o->overrides[i][klen] == '=')
            GS_TRY(set_matching(cfg, o->overrides[i], klen, first[i] != i, first[i] + 1, *link));
        else
            GS_TRY(gs_config_set_list(cfg, o->overrides[i], first[i] != i));
    }
cleanup:
    gs_free(&first);
    return st;
}

/* Options that are shorthands for configuration keys, applied after the file and -s (they win). */
static struct {
    char monitor[64]; /* --monitor[=K|=Ns]: output.monitor ("" when not given) */
    const char *threads; /* --threads N: device.threads (NULL when not given) */
} shorthand;

static int shorthand_monitor(const char *arg)
{
    gs_monitor_spec spec;
    char label[96];
    if (!arg) arg = "1"; /* --monitor: every iteration */
    snprintf(label, sizeof label, "--monitor=%.80s", arg);
    if (!arg[0] || strlen(arg) >= sizeof shorthand.monitor || gs_monitor_parse(arg, label, &spec) != GS_OK) {
        gs_error_clear();
        return usage_error("%s: expected --monitor (every iteration), --monitor=K with a whole number K >= 1 (every "
                           "K-th iteration) or --monitor=Ns with N > 0 seconds (at most one line per N seconds, e.g. "
                           "--monitor=1s)",
                           label);
    }
    snprintf(shorthand.monitor, sizeof shorthand.monitor, "%s", arg);
    return 0;
}

static gs_status apply_shorthands(gs_config *cfg)
{
    char one[128];
    if (shorthand.monitor[0]) {
        snprintf(one, sizeof one, "output.monitor=%s", shorthand.monitor);
        GS_CALL(gs_config_set(cfg, one));
    }
    if (shorthand.threads) {
        if (strlen(shorthand.threads) > 32)
            return GS_ERROR(GS_ERR_CONFIG,
                            "--threads %.32s...: expected a whole number of host threads (device.threads; 0: all "
                            "cores)",
                            shorthand.threads);
        snprintf(one, sizeof one, "device.threads=%s", shorthand.threads);
        GS_CALL(gs_config_set(cfg, one));
    }
    /* a malformed output.monitor (file or -s) is refused before anything is read */
    gs_monitor_spec spec;
    char label[160];
    snprintf(label, sizeof label, "output.monitor = \"%.100s\"", gs_config_string(cfg, "output.monitor"));
    GS_CALL(gs_monitor_parse(gs_config_string(cfg, "output.monitor"), label, &spec));
    gs_threads_set((int)gs_config_int(cfg, "device.threads")); /* reading the matrix too */
    return GS_OK;
}

/* The options: short ones as getopt takes them, long ones (also read by --completion). */
enum {
    OPT_JSON = 256,
    OPT_HISTORY,
    OPT_QUIET,
    OPT_PRINT_CONFIG,
    OPT_HELP_CONFIG,
    OPT_HELP_CONFIG_MD,
    OPT_VERSION,
    OPT_DRY_RUN,
    OPT_INSPECT,
    OPT_MONITOR,
    OPT_THREADS,
    OPT_COMPLETION
};
static const char shortopts[] = ":c:s:b:x:o:hvq";
static const struct option longopts[] = {
    {"json", no_argument, NULL, OPT_JSON},
    {"history", required_argument, NULL, OPT_HISTORY},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"verbose", no_argument, NULL, 'v'},
    {"print-config", no_argument, NULL, OPT_PRINT_CONFIG},
    {"help-config", no_argument, NULL, OPT_HELP_CONFIG},
    {"help-config-markdown", no_argument, NULL, OPT_HELP_CONFIG_MD},
    {"version", no_argument, NULL, OPT_VERSION},
    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
    {"inspect", no_argument, NULL, OPT_INSPECT},
    {"config", required_argument, NULL, 'c'},
    {"set", required_argument, NULL, 's'},
    {"output", required_argument, NULL, 'o'},
    {"rhs", required_argument, NULL, 'b'},
    {"x0", required_argument, NULL, 'x'},
    {"monitor", optional_argument, NULL, OPT_MONITOR},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"completion", required_argument, NULL, OPT_COMPLETION},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

int main(int argc, char **argv)
{
    gs_app_opts o = {0};
#ifdef GS_HAVE_MPI
    const int ranks = gs_app_mpi_start(&argc, &argv); /* 1 unless started by mpirun */
#else
    const int ranks = 1;
#endif
    const char **ov = NULL;
    int *link = NULL; /* per schema row: keys set by one wildcard -s share a number */
    if (gs_calloc(&ov, (size_t)argc + 1, sizeof *ov) != GS_OK) {
        fputs("gpusolve: out of memory\n", stderr);
        return GS_EXIT_DEVICE;
    }
    o.overrides = ov;
    int c, code = GS_EXIT_CONVERGED;
    bool dry_run = false, inspect = false;
    opterr = 0;
    if (gs_app_set_command_line(argc, argv, gs_app_argv_wants_json(argc, argv)) != GS_OK) {
        fputs("gpusolve: out of memory\n", stderr);
        gs_free(&ov);
        return GS_EXIT_DEVICE;
    }
    int level = GS_APP_LEVEL_UNSET; /* -q, -v, -vv: the last one wins over output.verbosity */
    while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        switch (c) {
        case 'c': o.config_path = optarg; break;
        case 's': ov[o.noverrides++] = optarg; break;
        case 'b': o.rhs_path = optarg; break;
        case 'x': o.x0_path = optarg; break;
        case 'o': o.solution = optarg; break;
        case OPT_HISTORY: o.history = optarg; break;
        case OPT_JSON: o.json = true; break;
        case 'q':
        case OPT_QUIET: level = GS_VERBOSITY_QUIET; break;
        case 'v': level = level < GS_VERBOSITY_SETUP ? GS_VERBOSITY_SETUP : GS_VERBOSITY_ALL; break;
        case OPT_PRINT_CONFIG: o.print_config = true; break;
        case OPT_DRY_RUN: dry_run = true; break;
        case OPT_INSPECT: inspect = true; break;
        case OPT_MONITOR:
            if (shorthand_monitor(optarg) != 0) {
                gs_free(&ov);
                return GS_EXIT_USAGE;
            }
            break;
        case OPT_THREADS: shorthand.threads = optarg; break;
        case OPT_COMPLETION: gs_free(&ov); return gs_app_completion(optarg, shortopts, longopts, stdout);
        case OPT_HELP_CONFIG: gs_config_print_schema(stdout); gs_free(&ov); return 0;
        case OPT_HELP_CONFIG_MD: print_config_markdown(); gs_free(&ov); return 0;
        case OPT_VERSION: gs_app_print_version(stdout); gs_free(&ov); return 0;
        case 'h': usage(stdout); gs_free(&ov); return 0;
        case ':': gs_free(&ov); return usage_error("option %s needs a value", argv[optind - 1]);
        default: gs_free(&ov); return usage_error("unknown option %s", argv[optind - 1]);
        }
    }
    gs_app_set_error_verbosity(level > GS_VERBOSITY_DEFAULT ? level : GS_VERBOSITY_DEFAULT);
    if (optind < argc) o.matrix = argv[optind++];
    if (optind < argc) {
        gs_free(&ov);
        return usage_error("unexpected argument '%s' (one matrix per run)", argv[optind]);
    }

    if (inspect) {
        gs_free(&ov);
        if (!o.matrix) return usage_error("%s", "--inspect needs a matrix");
        gs_interrupt_install(); /* a signal ends it with exit 6, nothing printed */
        return gs_app_inspect(o.matrix, o.json, stdout);
    }

    int stdio_code = gs_app_stdio_prepare(&o); /* "-": standard input / output */
    if (stdio_code) {
        gs_free(&ov);
        return stdio_code;
    }

    /* from here on SIGINT/SIGTERM end the run with exit 6 and nothing written, from reading the
     * configuration on (a blocking read of a slow pipe included), and a broken pipe is a write error */
    gs_interrupt_install();
    gs_config *cfg = NULL;
    if (gs_config_create(&cfg) != GS_OK) {
        code = fail();
        goto done;
    }
    gs_config_allow_lists(cfg, true); /* lists in the file and in -s are sweeps */
    if (o.config_path && gs_config_load_file(cfg, o.config_path) != GS_OK) {
        code = fail();
        goto done;
    }
    if (apply_overrides(cfg, &o, &link) != GS_OK) {
        code = fail();
        goto done;
    }
    /* command-line flags are shorthands for keys and win over the file */
    if ((o.json && gs_config_set(cfg, "output.format=json") != GS_OK) ||
        gs_app_set_verbosity(cfg, level) != GS_OK || apply_shorthands(cfg) != GS_OK) {
        code = fail();
        goto done;
    }
    gs_app_note_config(cfg); /* its report level and format for the errors that may follow */
    if (o.print_config) {
        gs_config_print(cfg, stdout, true);
        print_sweep_lists(cfg, link);
        goto done;
    }
    if (!o.matrix && !dry_run) {
        gs_config_destroy(&cfg);
        gs_free(&ov);
        gs_free(&link);
        return usage_error("%s", "no matrix given");
    }
#ifdef GS_HAVE_MPI
    if (ranks > 1 && !dry_run) {
        code = gs_app_mpi_run(&o, cfg);
        goto done;
    }
#endif
    (void)ranks;
    code = gs_app_sweep(&o, cfg, link, dry_run);
done:
    gs_config_destroy(&cfg);
    gs_free(&ov);
    gs_free(&link);
    /* the report is output too: a full disk or a closed pipe behind stdout is an error, not exit 0 */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        int e = errno;
        fprintf(stderr, "gpusolve: error: cannot write the report to standard output: %s\n", strerror(e ? e : EIO));
        code = gs_exit_code_worse(code, GS_EXIT_INPUT);
    }
    return code;
}
