/* The emitter of fdt_emit.h: a JSON writer with a stack of open objects and arrays, a CSV
 * writer, and a text table that keeps its cells until the end to align the columns (written,
 * and fitted to a width, by emit_table.c). Checks of the caller's use are FDT_REQUIRE checks,
 * on in every build: a wrong cell would otherwise shift every later field of a document that
 * scripts read by key or by position. */
#include "emit_table.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Repeats the call on m->tee (the same output in another form). */
#define TEE(call)                                                                              \
    do {                                                                                       \
        if (m->tee)                                                                            \
            call;                                                                              \
    } while (0)

void fdt_emit_init(fdt_emit *m, fdt_emit_mode mode, fdt_sb *out)
{
    memset(m, 0, sizeof *m);
    m->mode = mode;
    m->out = out;
    m->digits = FDT_EMIT_DIGITS_ROUNDTRIP;
    m->head_on = m->head_off = "";
}

static void free_cells(fdt_emit *m)
{
    for (size_t i = 0; i < m->ncells; i++)
        free(m->cells[i]);
    free(m->cells);
    m->cells = NULL;
    m->ncells = m->cap = 0;
}

void fdt_emit_free(fdt_emit *m)
{
    free_cells(m);
    m->cols = NULL;
}

int fdt_emit_oom(const fdt_emit *m) { return m->oom || m->out->oom; }

int fdt_emit_finish(fdt_emit *m, fdt_err *e)
{
    FDT_REQUIRE(m->depth == 0, "fdt_emit_finish: an object or array is still open");
    FDT_REQUIRE(!m->cols, "fdt_emit_finish: a table is still open");
    if (fdt_emit_oom(m))
        return fdt_err_set(e, "writing the output: out of memory");
    return 0;
}

/* ------------------------------------------------------------------ JSON values */

/* A string literal: quotes, backslashes and control characters escaped; UTF-8 passes
 * through, and a byte that is not part of valid UTF-8 becomes U+FFFD so that the document
 * stays valid. */
static size_t utf8_len(const unsigned char *s)
{
    size_t n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
    if (s[0] >= 0xf8)
        n = 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((n == 3 && s[0] == 0xe0 && s[1] < 0xa0) || (n == 3 && s[0] == 0xed && s[1] >= 0xa0) ||
        (n == 4 && s[0] == 0xf0 && s[1] < 0x90) || (n == 4 && s[0] == 0xf4 && s[1] >= 0x90))
        return 0; /* overlong, surrogate, beyond U+10FFFF */
    return n;
}

static void json_string(fdt_sb *b, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    fdt_sb_putn(b, "\"", 1);
    while (*s) {
        unsigned char c = *s;
        if (c == '"' || c == '\\')
            fdt_sb_printf(b, "\\%c", c);
        else if (c == '\n')
            fdt_sb_puts(b, "\\n");
        else if (c == '\t')
            fdt_sb_puts(b, "\\t");
        else if (c < 0x20)
            fdt_sb_printf(b, "\\u%04x", c);
        else if (c < 0x80)
            fdt_sb_putn(b, (const char *)s, 1);
        else {
            size_t n = utf8_len(s);
            if (n) {
                fdt_sb_putn(b, (const char *)s, n);
                s += n;
                continue;
            }
            fdt_sb_puts(b, "\\ufffd");
        }
        s++;
    }
    fdt_sb_putn(b, "\"", 1);
}

/* A finite real: %.*g with m->digits, or the shortest %.*g that reads back exactly. */
static void real_text(const fdt_emit *m, double v, char *buf, size_t n)
{
    if (m->digits > 0) {
        snprintf(buf, n, "%.*g", m->digits, v);
        return;
    }
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, n, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static void indent(fdt_sb *b, int spaces)
{
    fdt_sb_putn(b, "\n", 1);
    for (int i = 0; i < spaces; i++)
        fdt_sb_putn(b, " ", 1);
}

/* The document's structure is kept and checked in every form, so that a rendering run as a
 * table is checked as strictly as its JSON; only the JSON form writes it. Rows are objects
 * of the document in the JSON form only (a table needs no document). */
static int json(const fdt_emit *m) { return m->mode == FDT_EMIT_JSON; }

/* Before any value: the separator from the previous member, and the key. A key belongs
 * exactly to members of objects. */
static void value_start(fdt_emit *m, const char *key)
{
    if (m->depth == 0) {
        FDT_REQUIRE(!key, "fdt_emit: a top-level value has no key");
        FDT_REQUIRE(!m->closed, "fdt_emit: a second top-level value");
        return;
    }
    fdt_emit_level *l = &m->lvl[m->depth - 1];
    if (l->close == '}')
        FDT_REQUIRE(key, "fdt_emit: a member of an object needs a key");
    else
        FDT_REQUIRE(!key, "fdt_emit: an array element takes no key");
    if (!json(m)) {
        l->n++;
        return;
    }
    if (l->lined) {
        fdt_sb_puts(m->out, l->n ? "," : "");
        indent(m->out, 2 * m->depth);
    } else if (l->n)
        fdt_sb_puts(m->out, ", ");
    l->n++;
    if (key) {
        json_string(m->out, key);
        fdt_sb_puts(m->out, ": ");
    }
}

static void value_end(fdt_emit *m)
{
    if (m->depth == 0) {
        m->closed = 1;
        if (json(m))
            fdt_sb_puts(m->out, "\n");
    }
}

static void open_value(fdt_emit *m, const char *key, char c, int lined)
{
    FDT_REQUIRE(!m->in_row, "fdt_emit: a row holds cells only (fdt_emit_cell_*)");
    FDT_REQUIRE(m->depth < FDT_EMIT_MAXDEPTH, "fdt_emit: nested too deep");
    value_start(m, key);
    if (json(m))
        fdt_sb_putn(m->out, &c, 1);
    m->lvl[m->depth++] = (fdt_emit_level){c == '{' ? '}' : ']', (char)lined, 0};
}

void fdt_emit_object(fdt_emit *m, const char *key)
{
    TEE(fdt_emit_object(m->tee, key));
    open_value(m, key, '{', 0);
}

void fdt_emit_array(fdt_emit *m, const char *key)
{
    TEE(fdt_emit_array(m->tee, key));
    open_value(m, key, '[', 0);
}

void fdt_emit_array_lined(fdt_emit *m, const char *key)
{
    TEE(fdt_emit_array_lined(m->tee, key));
    open_value(m, key, '[', 1);
}


static void close_value(fdt_emit *m)
{
    FDT_REQUIRE(m->depth > 0, "fdt_emit_end: nothing is open");
    FDT_REQUIRE(!m->in_row, "fdt_emit_end: a row is open (fdt_emit_row_end)");
    fdt_emit_level *l = &m->lvl[--m->depth];
    if (json(m) && l->lined)
        indent(m->out, 2 * m->depth);
    if (json(m))
        fdt_sb_putn(m->out, &l->close, 1);
    value_end(m);
}

void fdt_emit_end(fdt_emit *m)
{
    TEE(fdt_emit_end(m->tee));
    close_value(m);
}

/* One scalar: key, then the string str, or the literal lit (null when NULL). */
static void scalar(fdt_emit *m, const char *key, const char *lit, const char *str)
{
    FDT_REQUIRE(!m->in_row, "fdt_emit: a row holds cells only (fdt_emit_cell_*)");
    value_start(m, key);
    if (json(m) && str)
        json_string(m->out, str);
    else if (json(m))
        fdt_sb_puts(m->out, lit ? lit : "null");
    value_end(m);
}

void fdt_emit_str(fdt_emit *m, const char *key, const char *v)
{
    TEE(fdt_emit_str(m->tee, key, v));
    FDT_REQUIRE(v, "fdt_emit_str: NULL string");
    scalar(m, key, NULL, v);
}

void fdt_emit_str_opt(fdt_emit *m, const char *key, const char *v)
{
    TEE(fdt_emit_str_opt(m->tee, key, v));
    FDT_REQUIRE(v, "fdt_emit_str_opt: NULL string");
    scalar(m, key, NULL, *v ? v : NULL);
}

void fdt_emit_int(fdt_emit *m, const char *key, long long v)
{
    TEE(fdt_emit_int(m->tee, key, v));
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", v);
    scalar(m, key, buf, NULL);
}

void fdt_emit_int_opt(fdt_emit *m, const char *key, long long v)
{
    if (v < 0)
        fdt_emit_null(m, key);
    else
        fdt_emit_int(m, key, v);
}

void fdt_emit_real(fdt_emit *m, const char *key, double v)
{
    FDT_REQUIRE(isfinite(v), "fdt_emit_real: not finite (fdt_emit_real_opt writes null)");
    fdt_emit_real_opt(m, key, v);
}

void fdt_emit_real_opt(fdt_emit *m, const char *key, double v)
{
    TEE(fdt_emit_real_opt(m->tee, key, v));
    char buf[40];
    if (isfinite(v))
        real_text(m, v, buf, sizeof buf);
    scalar(m, key, isfinite(v) ? buf : NULL, NULL);
}

void fdt_emit_bool(fdt_emit *m, const char *key, int v)
{
    TEE(fdt_emit_bool(m->tee, key, v));
    scalar(m, key, v ? "true" : "false", NULL);
}

void fdt_emit_null(fdt_emit *m, const char *key) {
    TEE(fdt_emit_null(m->tee, key)); scalar(m, key, NULL, NULL); }

void fdt_emit_text(fdt_emit *m, const char *fmt, ...)
{
    FDT_REQUIRE(!m->cols, "fdt_emit_text: a table is open; its text comes at fdt_emit_table_end");
    va_list ap;
    if (m->tee && m->tee->mode == FDT_EMIT_TEXT) {
        va_start(ap, fmt);
        fdt_sb_vprintf(m->tee->out, fmt, ap);
        va_end(ap);
    }
    if (m->mode != FDT_EMIT_TEXT)
        return;
    va_start(ap, fmt);
    fdt_sb_vprintf(m->out, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------ tables */

/* 1 when fmt has exactly one conversion and it takes the column's value: "%lld"/"%lli"
 * for integers, one of "feEgGaA" without a length for reals (flags, width, precision and
 * "%%" allowed anywhere). */
static int fmt_ok(const char *fmt, fdt_col_type t)
{
    int conversions = 0;
    for (const char *s = fmt; *s; s++) {
        if (*s != '%')
            continue;
        if (s[1] == '%') {
            s++;
            continue;
        }
        s++;
        s += strspn(s, "-+ #0");
        s += strspn(s, "0123456789");
        if (*s == '.')
            s += 1 + strspn(s + 1, "0123456789");
        if (t == FDT_COL_INT && !strncmp(s, "ll", 2) && (s[2] == 'd' || s[2] == 'i'))
            s += 2;
        else if (!(t == FDT_COL_REAL && *s && strchr("feEgGaA", *s)))
            return 0;
        conversions++;
    }
    return conversions == 1;
}

static void csv_field(fdt_sb *b, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fdt_sb_puts(b, s);
        return;
    }
    fdt_sb_puts(b, "\"");
    for (; *s; s++)
        fdt_sb_putn(b, *s == '"' ? "\"\"" : s, *s == '"' ? 2 : 1); /* quotes doubled */
    fdt_sb_puts(b, "\"");
}

static void check_columns(const fdt_emit *m, const fdt_col *cols, int ncols)
{
    FDT_REQUIRE(ncols > 0 && ncols <= FDT_EMIT_MAXCOLS, "fdt_emit_table: 1..64 columns");
    for (int i = 0; i < ncols; i++) {
        const fdt_col *c = &cols[i];
        fdt_col_type t = fdt_emit_base_type(c->type);
        FDT_REQUIRE(c->key && c->label, "fdt_emit_table: a column needs a key and a label");
        FDT_REQUIRE(c->type <= FDT_COL_BOOL_OPT && c->show <= FDT_SHOW_NONE,
                    "fdt_emit_table: a column's type or visibility is out of range");
        FDT_REQUIRE(!c->fmt || ((t == FDT_COL_INT || t == FDT_COL_REAL) && fmt_ok(c->fmt, t)),
                    "fdt_emit_table: a table format must have one conversion of the column's type");
        for (int k = 0; k < i && fdt_emit_shown(m, c) && m->mode != FDT_EMIT_TEXT; k++)
            FDT_REQUIRE(!fdt_emit_shown(m, &cols[k]) || strcmp(cols[k].key, c->key),
                        "fdt_emit_table: two data columns with one key");
    }
}

void fdt_emit_table(fdt_emit *m, const fdt_col *cols, int ncols)
{
    TEE(fdt_emit_table(m->tee, cols, ncols));
    FDT_REQUIRE(!m->cols, "fdt_emit_table: the previous table is still open");
    check_columns(m, cols, ncols);
    m->cols = cols;
    m->ncols = ncols;
    m->nrows = 0;
    if (m->mode != FDT_EMIT_CSV)
        return;
    int n = 0;
    for (int i = 0; i < ncols; i++)
        if (fdt_emit_shown(m, &cols[i])) {
            fdt_sb_puts(m->out, n++ ? "," : "");
            csv_field(m->out, cols[i].key);
        }
    fdt_sb_puts(m->out, "\n");
}

void fdt_emit_row(fdt_emit *m, const char *key)
{
    TEE(fdt_emit_row(m->tee, key));
    FDT_REQUIRE(m->cols, "fdt_emit_row: no table (fdt_emit_table)");
    FDT_REQUIRE(!m->in_row, "fdt_emit_row: the previous row is still open");
    if (json(m))
        open_value(m, key, '{', 0);
    m->in_row = 1;
    m->col = m->row_shown = 0;
    m->nrows++;
}

void fdt_emit_row_end(fdt_emit *m)
{
    TEE(fdt_emit_row_end(m->tee));
    FDT_REQUIRE(m->in_row, "fdt_emit_row_end: no row is open");
    FDT_REQUIRE(m->col == m->ncols, "fdt_emit_row_end: fewer cells than columns");
    m->in_row = 0;
    if (json(m))
        close_value(m);
    else if (m->mode == FDT_EMIT_CSV)
        fdt_sb_puts(m->out, "\n");
}

/* The column of the next cell, checked against the cell's type (any, for an omitted cell);
 * NULL when this form does not show it. Writes the separator (CSV) or key (JSON). */
static const fdt_col *next_cell(fdt_emit *m, int type, int present)
{
    FDT_REQUIRE(m->in_row, "fdt_emit_cell: no row is open (fdt_emit_row)");
    FDT_REQUIRE(m->col < m->ncols, "fdt_emit_cell: more cells than columns");
    const fdt_col *c = &m->cols[m->col++];
    FDT_REQUIRE(type < 0 || fdt_emit_base_type(c->type) == (fdt_col_type)type,
                "fdt_emit_cell: the cell's type is not its column's");
    if (!fdt_emit_shown(m, c))
        return NULL;
    if (m->mode == FDT_EMIT_CSV && m->row_shown)
        fdt_sb_puts(m->out, ",");
    else if (m->mode == FDT_EMIT_JSON && present)
        value_start(m, c->key);
    m->row_shown++;
    return c;
}

static void add_cell(fdt_emit *m, const char *text)
{
    char *dup = strdup(text);
    char **v = dup ? fdt_grow(m->cells, &m->cap, m->ncells, sizeof *v, 64) : NULL;
    if (!v) {
        free(dup);
        m->oom = 1;
        return;
    }
    m->cells = v;
    m->cells[m->ncells++] = dup;
}

/* One cell in every form: text is the table's, data the CSV field and the JSON literal
 * (NULL: unknown), quote whether data is a string. */
static void put_cell(fdt_emit *m, const char *text, const char *data, int quote)
{
    if (m->mode == FDT_EMIT_TEXT)
        add_cell(m, text);
    else if (m->mode == FDT_EMIT_CSV) {
        if (data)
            csv_field(m->out, data);
    } else {
        if (data && quote)
            json_string(m->out, data);
        else
            fdt_sb_puts(m->out, data ? data : "null");
    }
}

static int is_opt(const fdt_col *c) { return c->type >= FDT_COL_STR_OPT; }

void fdt_emit_cell_str(fdt_emit *m, const char *v)
{
    TEE(fdt_emit_cell_str(m->tee, v));
    FDT_REQUIRE(v, "fdt_emit_cell_str: NULL string");
    const fdt_col *c = next_cell(m, FDT_COL_STR, 1);
    if (!c)
        return;
    int unknown = is_opt(c) && !*v;
    put_cell(m, !*v && (is_opt(c) || (c->flags & FDT_COL_DASH)) ? "-" : v,
             unknown ? NULL : v, 1);
}

void fdt_emit_cell_int(fdt_emit *m, long long v)
{
    TEE(fdt_emit_cell_int(m->tee, v));
    const fdt_col *c = next_cell(m, FDT_COL_INT, 1);
    if (!c)
        return;
    char text[128], data[32];
    snprintf(data, sizeof data, "%lld", v);
    if (is_opt(c) && v < 0) {
        put_cell(m, "-", NULL, 0);
        return;
    }
    snprintf(text, sizeof text, c->fmt ? c->fmt : "%lld", v);
    put_cell(m, text, data, 0);
}

void fdt_emit_cell_real(fdt_emit *m, double v)
{
    TEE(fdt_emit_cell_real(m->tee, v));
    const fdt_col *c = next_cell(m, FDT_COL_REAL, 1);
    if (!c)
        return;
    if (!isfinite(v)) {
        FDT_REQUIRE(is_opt(c), "fdt_emit_cell_real: not finite in a column that is not _OPT");
        put_cell(m, "-", NULL, 0);
        return;
    }
    char text[128], data[40];
    real_text(m, v, data, sizeof data);
    snprintf(text, sizeof text, c->fmt ? c->fmt : "%g", v);
    put_cell(m, text, data, 0);
}

void fdt_emit_cell_bool(fdt_emit *m, int v)
{
    TEE(fdt_emit_cell_bool(m->tee, v));
    const fdt_col *c = next_cell(m, FDT_COL_BOOL, 1);
    if (!c)
        return;
    if (is_opt(c) && v < 0)
        put_cell(m, "-", NULL, 0);
    else
        put_cell(m, v ? "yes" : "no", v ? "true" : "false", 0);
}

void fdt_emit_cell_omit(fdt_emit *m)
{
    TEE(fdt_emit_cell_omit(m->tee));
    const fdt_col *c = next_cell(m, -1, 0);
    if (c && m->mode == FDT_EMIT_TEXT)
        add_cell(m, "-");
}

void fdt_emit_table_end(fdt_emit *m)
{
    TEE(fdt_emit_table_end(m->tee));
    FDT_REQUIRE(m->cols, "fdt_emit_table_end: no table is open");
    FDT_REQUIRE(!m->in_row, "fdt_emit_table_end: a row is still open");
    if (m->mode == FDT_EMIT_TEXT && m->nrows)
        fdt_emit_write_table(m);
    free_cells(m);
    m->cols = NULL;
    m->ncols = 0;
}
