/* Shell completion for gpusolve, generated from the option table and the configuration schema. */
#ifndef GS_APP_COMPLETION_H
#define GS_APP_COMPLETION_H

#include <getopt.h>
#include <stdio.h>

/* `gpusolve --completion SHELL`: writes the completion script of SHELL ("bash") to f, completing the
 * options of shortopts (a getopt string) and longopts, the keys after -s / --set (KEY=) and
 * the values of choice and boolean keys (KEY=VALUE), file names where a file is expected. Returns the
 * exit code: 0, or 2 (usage) for a shell it cannot write for. */
int gs_app_completion(const char *shell, const char *shortopts, const struct option *longopts, FILE *f);

#endif
