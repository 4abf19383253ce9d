/* A deliberately small template engine: {{NAME}} substitution, whole-line #{if} blocks and
 * #{include} of another embedded template. Conditionals are resolved here, so the emitted HIP
 * source carries no dead branches and reads like hand-written code. */
#include "gen_internal.h"

#include <ctype.h>
#include <string.h>

#define TPL_DEPTH 16
#define TPL_INCLUDES 4 /* templates open at once: an include cycle stops here */

static const fdt_tpl_var *lookup(const fdt_tpl_var *v, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(v[i].name) == len && !strncmp(v[i].name, name, len))
            return &v[i];
    return NULL;
}

static int truthy(const char *s) { return s && *s && strcmp(s, "0") != 0; }

/* Parses a directive body ("if NAME", "if !NAME", "else", "endif", "include NAME") at p
 * (after "#{"). */
static int directive(const char *p, const char *end, const char **kw, size_t *kwlen,
                     const char **arg, size_t *arglen)
{
    while (p < end && *p == ' ')
        p++;
    *kw = p;
    while (p < end && isalpha((unsigned char)*p))
        p++;
    *kwlen = (size_t)(p - *kw);
    while (p < end && *p == ' ')
        p++;
    *arg = p;
    while (p < end && *p != '}')
        p++;
    *arglen = (size_t)(p - *arg);
    while (*arglen && (*arg)[*arglen - 1] == ' ')
        (*arglen)--;
    return p < end && *p == '}' ? 0 : -1;
}

static int render(const char *tpl, const char *tpl_name, const fdt_tpl_var *vars, size_t nvars,
                  int level, fdt_sb *out, fdt_err *e);

/* #{include NAME} at line `line` of tpl_name: renders the embedded template NAME in place. */
static int include(const char *arg, size_t arglen, const char *tpl_name, int line,
                   const fdt_tpl_var *vars, size_t nvars, int level, fdt_sb *out, fdt_err *e)
{
    char name[64];
    if (!arglen || arglen >= sizeof name)
        return fdt_err_set(e, "template %s:%d: #{include} needs a template name", tpl_name, line);
    memcpy(name, arg, arglen);
    name[arglen] = 0;
    const char *text = fdt_tpl_text(name);
    if (!text)
        return fdt_err_set(e, "template %s:%d: unknown template '%s'", tpl_name, line, name);
    if (level == TPL_INCLUDES)
        return fdt_err_set(e, "template %s:%d: #{include %s} nested too deeply (a cycle?)",
                           tpl_name, line, name);
    return render(text, name, vars, nvars, level + 1, out, e);
}

int fdt_tpl_render(const char *tpl, const char *tpl_name, const fdt_tpl_var *vars, size_t nvars,
                   fdt_sb *out, fdt_err *e)
{
    return render(tpl, tpl_name, vars, nvars, 0, out, e);
}

static int render(const char *tpl, const char *tpl_name, const fdt_tpl_var *vars, size_t nvars,
                  int level, fdt_sb *out, fdt_err *e)
{
    int active[TPL_DEPTH + 1], taken[TPL_DEPTH + 1], depth = 0, line = 0;
    active[0] = 1;
    taken[0] = 1;
    for (const char *p = tpl; *p;) {
        const char *eol = strchr(p, '\n');
        const char *end = eol ? eol : p + strlen(p);
        const char *next = eol ? eol + 1 : end;
        line++;
        const char *s = p;
        while (s < end && (*s == ' ' || *s == '\t'))
            s++;
        if (end - s >= 2 && s[0] == '#' && s[1] == '{') {
            const char *kw, *arg;
            size_t kwlen, arglen;
            if (directive(s + 2, end, &kw, &kwlen, &arg, &arglen))
                return fdt_err_set(e, "template %s:%d: malformed directive", tpl_name, line);
            if (kwlen == 2 && !strncmp(kw, "if", 2)) {
                if (depth == TPL_DEPTH)
                    return fdt_err_set(e, "template %s:%d: #{if} nested too deeply", tpl_name,
                                       line);
                int neg = arglen && arg[0] == '!';
                const fdt_tpl_var *v = lookup(vars, nvars, arg + neg, arglen - (size_t)neg);
                if (!v)
                    return fdt_err_set(e, "template %s:%d: unknown condition '%.*s'", tpl_name,
                                       line, (int)(arglen - (size_t)neg), arg + neg);
                int cond = truthy(v->value) != neg;
                depth++;
                active[depth] = active[depth - 1] && cond;
                taken[depth] = cond;
            } else if (kwlen == 4 && !strncmp(kw, "else", 4)) {
                if (!depth)
                    return fdt_err_set(e, "template %s:%d: #{else} without #{if}", tpl_name, line);
                active[depth] = active[depth - 1] && !taken[depth];
                taken[depth] = 1;
            } else if (kwlen == 5 && !strncmp(kw, "endif", 5)) {
                if (!depth)
                    return fdt_err_set(e, "template %s:%d: #{endif} without #{if}", tpl_name,
                                       line);
                depth--;
            } else if (kwlen == 7 && !strncmp(kw, "include", 7)) {
                if (active[depth] &&
                    include(arg, arglen, tpl_name, line, vars, nvars, level, out, e))
                    return -1;
            } else {
                return fdt_err_set(e, "template %s:%d: unknown directive '%.*s'", tpl_name, line,
                                   (int)kwlen, kw);
            }
            p = next;
            continue;
        }
        if (active[depth]) {
            for (const char *q = p; q < next;) {
                const char *open = strstr(q, "{{");
                if (!open || open >= next) {
                    fdt_sb_putn(out, q, (size_t)(next - q));
                    break;
                }
                fdt_sb_putn(out, q, (size_t)(open - q));
                const char *close = strstr(open + 2, "}}");
                if (!close || close >= end)
                    return fdt_err_set(e, "template %s:%d: unterminated {{", tpl_name, line);
                const fdt_tpl_var *v = lookup(vars, nvars, open + 2, (size_t)(close - open - 2));
                if (!v)
                    return fdt_err_set(e, "template %s:%d: unknown variable '%.*s'", tpl_name,
                                       line, (int)(close - open - 2), open + 2);
                fdt_sb_puts(out, v->value ? v->value : "");
                q = close + 2;
            }
        }
        p = next;
    }
    if (depth)
        return fdt_err_set(e, "template %s: %d #{if} block(s) not closed", tpl_name, depth);
    if (out->oom)
        return fdt_err_set(e, "template %s: out of memory", tpl_name);
    return 0;
}
