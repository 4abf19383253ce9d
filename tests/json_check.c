/* A strict JSON recogniser (RFC 8259 grammar: objects, arrays, strings with their escapes,
 * numbers without leading zeros, true/false/null), recursion bounded at 64 levels. */
#include "json_check.h"

#include <ctype.h>
#include <string.h>

static const char *js_ws(const char *s)
{
    while (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')
        s++;
    return s;
}

static const char *js_string(const char *s)
{
    if (*s++ != '"')
        return NULL;
    for (; *s != '"'; s++) {
        if (!*s || (unsigned char)*s < 0x20)
            return NULL;
        if (*s == '\\') {
            s++;
            if (*s == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!isxdigit((unsigned char)s[i]))
                        return NULL;
                s += 4;
            } else if (!*s || !strchr("\"\\/bfnrt", *s))
                return NULL;
        }
    }
    return s + 1;
}

static const char *js_digits(const char *s)
{
    if (!isdigit((unsigned char)*s))
        return NULL;
    while (isdigit((unsigned char)*s))
        s++;
    return s;
}

static const char *js_number(const char *s)
{
    if (*s == '-')
        s++;
    if (*s == '0')
        s++;
    else if (!(s = js_digits(s)))
        return NULL;
    if (*s == '.' && !(s = js_digits(s + 1)))
        return NULL;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        s = js_digits(s);
    }
    return s;
}

static const char *js_value(const char *s, int depth)
{
    if (depth > 64)
        return NULL;
    s = js_ws(s);
    if (*s == '{' || *s == '[') {
        char close = *s == '{' ? '}' : ']';
        s = js_ws(s + 1);
        if (*s == close)
            return s + 1;
        for (;;) {
            if (close == '}') {
                if (!(s = js_string(js_ws(s))))
                    return NULL;
                s = js_ws(s);
                if (*s++ != ':')
                    return NULL;
            }
            if (!(s = js_value(s, depth + 1)))
                return NULL;
            s = js_ws(s);
            if (*s == close)
                return s + 1;
            if (*s++ != ',')
                return NULL;
        }
    }
    if (*s == '"')
        return js_string(s);
    if (!strncmp(s, "true", 4) || !strncmp(s, "null", 4))
        return s + 4;
    if (!strncmp(s, "false", 5))
        return s + 5;
    return js_number(s);
}

int json_check(const char *doc, long *fail_at)
{
    const char *end = js_value(doc, 0);
    if (end && !*js_ws(end))
        return 0;
    *fail_at = end ? (long)(end - doc) : -1L;
    return 1;
}
