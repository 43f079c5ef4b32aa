/* Shared pieces of the fuzz targets: oracle failures, a private temporary folder, gzip writing, and
 * configuration text/compare/round-trip checks. */
#include "fuzz_util.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "core/mem.h"

void fuzz_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "\nfuzz oracle failed at %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (gs_error_status() != GS_OK) {
        fputs("pending gpusolve error: ", stderr);
        gs_error_print(stderr);
    }
    fflush(stderr);
    abort();
}

/* ---------------------------------------------------------------------------------------------- */
/* temporary files                                                                                */

static char temp_dir[512];

static void remove_temp_dir(void)
{
    if (!temp_dir[0]) return;
    DIR *d = opendir(temp_dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            char p[1024];
            snprintf(p, sizeof p, "%s/%s", temp_dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(temp_dir);
    temp_dir[0] = '\0';
}

void fuzz_temp_path(const char *name, char *buf, size_t len)
{
    if (!temp_dir[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(temp_dir, sizeof temp_dir, "%s/gs_fuzz_XXXXXX", base && base[0] ? base : "/tmp");
        if (!mkdtemp(temp_dir)) {
            perror("fuzz: mkdtemp");
            abort();
        }
        atexit(remove_temp_dir);
    }
    snprintf(buf, len, "%s/%s", temp_dir, name);
}

void fuzz_write_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    FUZZ_CHECK(f != NULL, "cannot create %s", path);
    FUZZ_CHECK(size == 0 || fwrite(data, 1, size, f) == size, "cannot write %s", path);
    FUZZ_CHECK(fclose(f) == 0, "cannot close %s", path);
}

void fuzz_write_gz(const char *path, const uint8_t *data, size_t size)
{
    gzFile gz = gzopen(path, "wb1");
    FUZZ_CHECK(gz != NULL, "cannot create %s", path);
    FUZZ_CHECK(size == 0 || gzwrite(gz, data, (unsigned)size) == (int)size, "cannot write %s", path);
    FUZZ_CHECK(gzclose(gz) == Z_OK, "cannot close %s", path);
}

char *fuzz_cstring(const uint8_t *data, size_t size)
{
    char *s = NULL;
    FUZZ_CHECK(gs_malloc(&s, size + 1, 1) == GS_OK, "out of memory copying %zu bytes", size);
    if (size) memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* ---------------------------------------------------------------------------------------------- */
/* configurations                                                                                 */

char *fuzz_config_text(const gs_config *cfg)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    FUZZ_CHECK(f != NULL, "open_memstream failed");
    gs_config_print(cfg, f, false);
    FUZZ_CHECK(fclose(f) == 0, "printing the configuration failed");
    return buf; /* malloc'd by open_memstream: release with free() */
}

const char *fuzz_config_diff(const gs_config *a, const gs_config *b)
{
    for (const gs_cfg_key *k = gs_cfg_schema; k->path; k++) {
        bool same = true;
        switch (k->type) {
        case GS_CFG_INT: same = gs_config_int(a, k->path) == gs_config_int(b, k->path); break;
        case GS_CFG_DOUBLE: {
            double x = gs_config_double(a, k->path), y = gs_config_double(b, k->path);
            same = memcmp(&x, &y, sizeof x) == 0; /* bit for bit: -0.0 and 0.0 differ too */
            break;
        }
        case GS_CFG_BOOL: same = gs_config_bool(a, k->path) == gs_config_bool(b, k->path); break;
        case GS_CFG_STRING:
        case GS_CFG_CHOICE: same = strcmp(gs_config_string(a, k->path), gs_config_string(b, k->path)) == 0; break;
        }
        if (!same) return k->path;
    }
    return NULL;
}

void fuzz_check_config_roundtrip(const gs_config *cfg, bool lists)
{
    char *text = fuzz_config_text(cfg);
    gs_config *back = NULL;
    FUZZ_CHECK(gs_config_create(&back) == GS_OK, "gs_config_create failed");
    gs_config_allow_lists(back, lists);
    gs_status st = gs_config_load_string(back, text, "printed");
    FUZZ_CHECK(st == GS_OK, "the printed configuration does not load back:\n%s", text);
    const char *key = fuzz_config_diff(cfg, back);
    FUZZ_CHECK(key == NULL, "%s differs after printing and loading back:\n%s", key, text);
    char *again = fuzz_config_text(back);
    FUZZ_CHECK(strcmp(text, again) == 0, "printing the reloaded configuration gives other text:\n%s\n---\n%s",
               text, again);
    free(again);
    gs_config_destroy(&back);
    free(text);
}

void fuzz_check_error(gs_status st, const char *what)
{
    FUZZ_CHECK(st != GS_OK, "%s", what);
    FUZZ_CHECK(gs_error_status() == st, "%s: returned %s but the pending error is %s", what, gs_status_name(st),
               gs_status_name(gs_error_status()));
    FUZZ_CHECK(gs_error_message()[0] != '\0', "%s: failed with %s and an empty message", what, gs_status_name(st));
}
