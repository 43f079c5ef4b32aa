/* JSON values and their text through jansson, with strings made valid UTF-8 first (core/json.h). */
#include "core/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlong forms, no surrogates, at most
 * U+10FFFF), 0 when the byte at p does not start one. */
static size_t utf8_len(const unsigned char *p)
{
    const unsigned char c = p[0];
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) return (p[1] & 0xc0) == 0x80 ? 2 : 0;
    unsigned char lo = 0x80, hi = 0xbf;
    size_t n;
    if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0) lo = 0xa0; /* overlong */
        if (c == 0xed) hi = 0x9f; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0) lo = 0x90; /* overlong */
        if (c == 0xf4) hi = 0x8f; /* beyond U+10FFFF */
    } else {
        return 0;
    }
    if (p[1] < lo || p[1] > hi) return 0;
    for (size_t k = 2; k < n; k++)
        if ((p[k] & 0xc0) != 0x80) return 0;
    return n;
}

char *gs_json_utf8(const char *s)
{
    if (!s) s = "";
    const unsigned char *p = (const unsigned char *)s;
    size_t out = 0;
    for (size_t i = 0; p[i];) {
        size_t n = utf8_len(p + i);
        out += n ? n : 4;
        i += n ? n : 1;
    }
    char *r = malloc(out + 1), *w = r;
    if (!r) return NULL;
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; p[i];) {
        size_t n = utf8_len(p + i);
        if (n) {
            memcpy(w, p + i, n);
            w += n;
            i += n;
        } else {
            *w++ = '\\';
            *w++ = 'x';
            *w++ = hex[p[i] >> 4];
            *w++ = hex[p[i] & 15];
            i++;
        }
    }
    *w = '\0';
    return r;
}

json_t *gs_json_string(const char *s)
{
    char *u = gs_json_utf8(s);
    if (!u) return NULL;
    json_t *v = json_string(u);
    free(u);
    return v;
}

json_t *gs_json_real(double v) { return isfinite(v) ? json_real(v) : json_null(); }

bool gs_json_set(json_t *obj, const char *key, json_t *v)
{
    if (!obj || !v) {
        json_decref(v);
        return false;
    }
    char *k = gs_json_utf8(key);
    if (!k) {
        json_decref(v);
        return false;
    }
    bool ok = json_object_set_new(obj, k, v) == 0;
    free(k);
    return ok;
}

bool gs_json_append(json_t *arr, json_t *v)
{
    if (!arr || !v) {
        json_decref(v);
        return false;
    }
    return json_array_append_new(arr, v) == 0;
}

char *gs_json_text(const json_t *v) { return v ? json_dumps(v, GS_JSON_FLAGS | JSON_ENCODE_ANY) : NULL; }

gs_status gs_json_write_line(const json_t *v, FILE *f)
{
    char *t = gs_json_text(v);
    if (!t) return GS_ERROR(GS_ERR_MEM, "out of host memory writing a JSON object");
    fputs(t, f);
    fputc('\n', f);
    free(t);
    return GS_OK;
}
