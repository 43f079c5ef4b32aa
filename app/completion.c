/* `gpusolve --completion bash`: the bash completion script, written from the option table and the
 * configuration schema (every key, the values of choice and boolean keys), so that it cannot fall
 * behind either. */
#include "app/completion.h"

#include <stdbool.h>
#include <string.h>

#include "api/exit_codes.h"
#include "app/run.h"
#include "cfg/config.h"

/* s as one single-quoted shell word ('it'\''s'). */
static void write_quoted(FILE *f, const char *s, size_t len)
{
    fputc('\'', f);
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\'')
            fputs("'\\''", f);
        else
            fputc(s[i], f);
    }
    fputc('\'', f);
}

/* A string key whose value names a file (its help says "path"): its values complete as file names. */
static bool file_key(const gs_cfg_key *k) { return k->type == GS_CFG_STRING && strstr(k->help, "path") != NULL; }

/* _gpusolve_values KEY: sets _gpusolve_v to the values of KEY, separated by blanks ("" when the schema
 * lists none), and _gpusolve_file to 1 when its value is a file name. */
static void write_values(FILE *f)
{
    fputs("_gpusolve_values()\n{\n    _gpusolve_v=''\n    _gpusolve_file=0\n    case \"$1\" in\n", f);
    for (const gs_cfg_key *k = gs_cfg_schema; k->path; k++) {
        const char *vals = k->type == GS_CFG_CHOICE ? k->choices : k->type == GS_CFG_BOOL ? "true|false" : NULL;
        if (!vals && !file_key(k)) continue;
        fputs("        ", f);
        write_quoted(f, k->path, strlen(k->path));
        if (vals) {
            fputs(") _gpusolve_v=", f);
            fputc('\'', f);
            for (const char *p = vals; *p; p++) { /* "a|b|c" -> 'a b c' */
                if (*p == '|')
                    fputc(' ', f);
                else if (*p == '\'')
                    fputs("'\\''", f);
                else
                    fputc(*p, f);
            }
            fputs("' ;;\n", f);
        } else {
            fputs(") _gpusolve_file=1 ;;\n", f);
        }
    }
    fputs("    esac\n}\n\n", f);
}

/* The options: the short ones of the getopt string, then every long option of the table ("--monitor"
 * takes its value after '=' only). Options that take a value take a file name, but -s / --set (a key),
 * --threads (a number) and --completion (a shell). */
static void write_options(FILE *f, const char *shortopts, const struct option *longopts)
{
    fputs("_gpusolve_opts='", f);
    const char *sep = "";
    for (const char *p = shortopts; *p; p++)
        if (*p != ':') {
            fprintf(f, "%s-%c", sep, *p);
            sep = " ";
        }
    for (const struct option *o = longopts; o->name; o++) fprintf(f, " --%s", o->name);
    fputs("'\n", f);
    fputs("_gpusolve_file_opts=' ", f);
    for (const char *p = shortopts; *p; p++)
        if (*p != ':' && *p != 's' && p[1] == ':') fprintf(f, "-%c ", *p);
    for (const struct option *o = longopts; o->name; o++)
        if (o->has_arg == required_argument && strcmp(o->name, "set") && strcmp(o->name, "threads") &&
            strcmp(o->name, "completion"))
            fprintf(f, "--%s ", o->name);
    fputs("'\n", f);
}

static const char *const body =
    "# _gpusolve_set ARG PREFIX: the candidates for the -s argument ARG (KEY= for the keys, KEY=VALUE for\n"
    "# the values of choice and boolean keys, KEY=FILE for file keys), each starting with PREFIX\n"
    "_gpusolve_set()\n"
    "{\n"
    "    local arg=\"$1\" prefix=\"$2\" k v\n"
    "    if [[ \"$arg\" != *=* ]]; then\n"
    "        for k in $_gpusolve_keys; do\n"
    "            [[ \"$k\" == \"$arg\"* ]] && _gpusolve_c+=(\"$prefix$k=\")\n"
    "        done\n"
    "        return\n"
    "    fi\n"
    "    k=\"${arg%%=*}\"\n"
    "    v=\"${arg#*=}\"\n"
    "    _gpusolve_values \"$k\"\n"
    "    if [[ $_gpusolve_file == 1 ]]; then\n"
    "        local p\n"
    "        while IFS= read -r p; do _gpusolve_c+=(\"$prefix$k=$p\"); done < <(compgen -f -- \"$v\")\n"
    "        return\n"
    "    fi\n"
    "    for p in $_gpusolve_v; do\n"
    "        [[ \"$p\" == \"$v\"* ]] && _gpusolve_c+=(\"$prefix$k=$p\")\n"
    "    done\n"
    "}\n"
    "\n"
    "_gpusolve()\n"
    "{\n"
    "    local cword=$COMP_CWORD j arg prev pre='' o p\n"
    "    local -a words=(\"${COMP_WORDS[@]}\")\n"
    "    _gpusolve_c=()\n"
    "    # bash splits words at '=' (COMP_WORDBREAKS): the argument under the cursor joined back\n"
    "    arg=\"${words[cword]}\"\n"
    "    j=$cword\n"
    "    while (( j > 1 )) && [[ \"${words[j]}\" == '=' || \"${words[j-1]}\" == '=' ]]; do\n"
    "        arg=\"${words[j-1]}$arg\"\n"
    "        (( j-- ))\n"
    "    done\n"
    "    prev=''\n"
    "    (( j > 0 )) && prev=\"${words[j-1]}\"\n"
    "    # the text before the word readline replaces: up to the last '=' when '=' breaks words\n"
    "    if [[ \"${COMP_WORDBREAKS-=}\" == *=* && \"$arg\" == *=* ]]; then pre=\"${arg%=*}=\"; fi\n"
    "    if [[ \"$prev\" == -s || \"$prev\" == --set ]]; then\n"
    "        _gpusolve_set \"$arg\" ''\n"
    "    elif [[ \"$prev\" == --completion ]]; then\n"
    "        [[ bash == \"$arg\"* ]] && _gpusolve_c=(bash)\n"
    "    elif [[ \"$prev\" == --threads ]]; then\n"
    "        :\n"
    "    elif [[ \"$_gpusolve_file_opts\" == *\" $prev \"* ]]; then\n"
    "        while IFS= read -r p; do _gpusolve_c+=(\"$p\"); done < <(compgen -f -- \"$arg\")\n"
    "    elif [[ \"$arg\" == --set=* ]]; then\n"
    "        _gpusolve_set \"${arg#--set=}\" '--set='\n"
    "    elif [[ \"$arg\" == -* ]]; then\n"
    "        for o in $_gpusolve_opts; do\n"
    "            [[ \"$o\" == \"$arg\"* ]] && _gpusolve_c+=(\"$o\")\n"
    "        done\n"
    "    else\n"
    "        # the matrix: a file, or a generated model problem\n"
    "        for p in gen:poisson2d: gen:poisson3d: gen:laplace27: gen:convdiff3d:; do\n"
    "            [[ \"$p\" == \"$arg\"* && -n \"$arg\" ]] && _gpusolve_c+=(\"$p\")\n"
    "        done\n"
    "        while IFS= read -r p; do _gpusolve_c+=(\"$p\"); done < <(compgen -f -- \"$arg\")\n"
    "    fi\n"
    "    COMPREPLY=()\n"
    "    for p in \"${_gpusolve_c[@]}\"; do COMPREPLY+=(\"${p#\"$pre\"}\"); done\n"
    "    # KEY= and a folder take more text after them: no space\n"
    "    for p in \"${_gpusolve_c[@]}\"; do\n"
    "        if [[ \"$p\" == *= || -d \"${p#*=}\" ]]; then compopt -o nospace 2>/dev/null; break; fi\n"
    "    done\n"
    "    return 0\n"
    "}\n"
    "\n"
    "complete -F _gpusolve gpusolve\n";

int gs_app_completion(const char *shell, const char *shortopts, const struct option *longopts, FILE *f)
{
    if (!shell || strcmp(shell, "bash") != 0) /* a usage error (with --json, its JSON object too) */
        return gs_app_usage_error("--completion %s: no completion for this shell; expected --completion bash",
                                  shell ? shell : "");
    fputs("# bash completion for gpusolve, generated by `gpusolve --completion bash` from its options and its\n"
          "# configuration schema. Install as share/bash-completion/completions/gpusolve, or source it:\n"
          "#     source <(gpusolve --completion bash)\n"
          "\n",
          f);
    write_options(f, shortopts, longopts);
    fputs("_gpusolve_keys='", f);
    for (const gs_cfg_key *k = gs_cfg_schema; k->path; k++) fprintf(f, "%s%s", k == gs_cfg_schema ? "" : " ", k->path);
    fputs("'\n\n", f);
    write_values(f);
    fputs(body, f);
    return fflush(f) == 0 && !ferror(f) ? GS_EXIT_CONVERGED : GS_EXIT_INPUT;
}
