/* Corpus replay: feeds every file of the given folders (or the given files) to the fuzz target's
 * LLVMFuzzerTestOneInput, in name order, so a corpus is a regression suite without libFuzzer. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/mem.h"
#include "fuzz_util.h"

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? 2 * cap : 4096;
            if (gs_realloc(&buf, cap, 1) != GS_OK) {
                fprintf(stderr, "replay: out of memory reading %s\n", path);
                gs_free(&buf);
                fclose(f);
                return -1;
            }
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        gs_free(&buf);
        return -1;
    }
    /* libFuzzer hands the target a buffer of exactly the input's size: so do we */
    uint8_t *exact = NULL;
    if (gs_malloc(&exact, len, 1) != GS_OK) {
        gs_free(&buf);
        return -1;
    }
    if (len) memcpy(exact, buf, len);
    gs_free(&buf);
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
    LLVMFuzzerTestOneInput(exact, len);
    gs_free(&exact);
    return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Replays a folder's regular files in name order; returns how many, or -1. */
static long replay_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open folder %s\n", dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    long count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            if (gs_realloc(&names, cap, sizeof *names) != GS_OK) break;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        if (gs_malloc(&names[n], len, 1) != GS_OK) break;
        snprintf(names[n], len, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        struct stat sb;
        if (stat(names[i], &sb) == 0 && S_ISREG(sb.st_mode)) {
            if (replay_file(names[i]) != 0) count = -1;
            if (count >= 0) count++;
        }
        gs_free(&names[i]);
    }
    gs_free(&names);
    return count;
}

int main(int argc, char **argv)
{
    long total = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) != 0) {
            fprintf(stderr, "replay: %s does not exist\n", argv[i]);
            return 1;
        }
        long c = S_ISDIR(sb.st_mode) ? replay_dir(argv[i]) : (replay_file(argv[i]) == 0 ? 1 : -1);
        if (c < 0) return 1;
        total += c;
    }
    if (total == 0) {
        fprintf(stderr, "replay: no inputs found: a corpus must not be empty\n");
        return 1;
    }
    printf("replayed %ld inputs without a failure\n", total);
    return 0;
}
