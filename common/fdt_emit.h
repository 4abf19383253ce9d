/* One emitter for every table and document fdtune writes: an aligned text table for people,
 * CSV (RFC 4180 quoting) and JSON for scripts, all three from one column description, and the
 * JSON document around the rows (metadata members, nested objects and arrays). It fills an
 * fdt_sb and never prints; the caller writes the text where it belongs.
 *
 * A column has a machine name (JSON key, CSV header), a header for people, a type, a table
 * format and the forms it shows in. Rows are added cell by cell in column order. Values that
 * may be unknown have _OPT types: "" (strings), a negative number (integers, booleans), NaN
 * or an infinity (reals) is then null in JSON, an empty CSV field and "-" in the table. JSON
 * never holds NaN or an infinity. Misuse is a programmer error and fails an assertion that
 * stays on in release builds: a cell of the wrong type, too many or too few cells, a key
 * where none belongs (or none where one does), unbalanced objects, a table format that does
 * not match its column's type, two data columns with one key.
 *
 * The document calls (fdt_emit_object, fdt_emit_str, ...) write in the JSON form only, but
 * their structure is checked in every form; fdt_emit_text writes free text into the table
 * form only; tables and rows work in every form (a row is an object of the document in JSON
 * only). So one rendering function serves all three forms, and a run of it in any form
 * checks it. */
#ifndef FDT_EMIT_H
#define FDT_EMIT_H

#include "fdt_common.h"

typedef enum { FDT_EMIT_TEXT, FDT_EMIT_CSV, FDT_EMIT_JSON } fdt_emit_mode;

typedef enum {
    FDT_COL_STR,
    FDT_COL_INT,
    FDT_COL_REAL,
    FDT_COL_BOOL,
    FDT_COL_STR_OPT,  /* "" is unknown */
    FDT_COL_INT_OPT,  /* negative is unknown */
    FDT_COL_REAL_OPT, /* NaN or an infinity is unknown */
    FDT_COL_BOOL_OPT, /* negative is unknown */
} fdt_col_type;

/* The forms a column appears in: a table merges or shortens fields that the machine forms
 * (CSV, JSON) keep separate and exact. */
typedef enum {
    FDT_SHOW_ALL,  /* every form */
    FDT_SHOW_TEXT, /* the table only */
    FDT_SHOW_DATA, /* CSV and JSON only */
    FDT_SHOW_NONE, /* nowhere (a column switched off; its cells are still checked) */
} fdt_col_show;

enum {
    FDT_COL_LEFT = 1u << 0,  /* align left in the table (default: numbers right, else left) */
    FDT_COL_RIGHT = 1u << 1, /* align right */
    FDT_COL_DASH = 1u << 2,  /* the table shows "-" for an empty string (CSV and JSON keep "") */
    FDT_COL_KEY = 1u << 3,   /* identifies a row or gives its answer (problem, config, GB/s):
                                a table fitted to a width keeps it longest (fdt_emit_table_end) */
};

typedef struct fdt_col {
    const char *key;   /* JSON key and CSV header */
    const char *label; /* table header */
    fdt_col_type type;
    const char *fmt;   /* table format, one conversion: a long long for integers ("%lld B"), a
                          double for reals ("%.4f"); NULL: "%lld", "%g"; strings and booleans
                          take none */
    fdt_col_show show;
    unsigned flags;    /* FDT_COL_* */
} fdt_col;

/* JSON and CSV reals: the shortest text that reads back as the same double (0), or %.*g
 * with this many significant digits. The schema-1 documents use FDT_EMIT_DIGITS_V1. */
#define FDT_EMIT_DIGITS_ROUNDTRIP 0
#define FDT_EMIT_DIGITS_V1 10

#define FDT_EMIT_MAXDEPTH 16 /* nesting of JSON objects and arrays */
#define FDT_EMIT_MAXCOLS 64  /* columns of one table */
#define FDT_EMIT_MIN_FIT 8   /* a text column narrowed to fit a width keeps this many characters */

typedef struct fdt_emit_level {
    char close;  /* '}' or ']' */
    char lined;  /* an array with one element per line */
    int n;       /* members written so far */
} fdt_emit_level;

typedef struct fdt_emit {
    fdt_emit_mode mode;
    fdt_sb *out;
    int digits;                 /* FDT_EMIT_DIGITS_* or 1..17 (set after fdt_emit_init) */
    const char *head_on, *head_off; /* around each table header cell (e.g. bold on a tty) */
    /* JSON */
    int depth, closed;          /* closed: a whole top-level value was written */
    fdt_emit_level lvl[FDT_EMIT_MAXDEPTH];
    /* table */
    const fdt_col *cols;
    int ncols, col, in_row, nrows, row_shown; /* row_shown: cells of this row in this form */
    char **cells;               /* table form: the visible cells, row-major, no header */
    size_t ncells, cap;
    int oom;
    int width;                  /* table form: the widest line (0: no limit; see below) */
    struct fdt_emit *tee;       /* every call is repeated on tee (the same output in another
                                   form, e.g. a file besides the table); NULL: none. Set after
                                   fdt_emit_init; the caller finishes and frees tee. */
} fdt_emit;

/* Starts writing `mode` into out (appended to what it holds). digits: the round trip. */
void fdt_emit_init(fdt_emit *m, fdt_emit_mode mode, fdt_sb *out);
/* Frees what an unfinished table holds (nothing after fdt_emit_table_end). */
void fdt_emit_free(fdt_emit *m);
/* 1 when memory ran out while writing (the output is then incomplete). */
int fdt_emit_oom(const fdt_emit *m);
/* Asserts that every object, array, row and table is closed; 0, or -1 when memory ran out
 * (e says so). A JSON document ends with a newline once its top-level value is closed. */
int fdt_emit_finish(fdt_emit *m, fdt_err *e);

/* ---- JSON documents: written in the JSON form only (checked in all). key: the member's
 * name inside an object, NULL for an array element or the top-level value. ---- */
void fdt_emit_object(fdt_emit *m, const char *key);
void fdt_emit_array(fdt_emit *m, const char *key);
/* An array whose elements stand on lines of their own, indented two spaces per level. */
void fdt_emit_array_lined(fdt_emit *m, const char *key);
void fdt_emit_end(fdt_emit *m); /* closes the innermost object or array */
void fdt_emit_str(fdt_emit *m, const char *key, const char *v);
void fdt_emit_str_opt(fdt_emit *m, const char *key, const char *v);  /* "": null */
void fdt_emit_int(fdt_emit *m, const char *key, long long v);
void fdt_emit_int_opt(fdt_emit *m, const char *key, long long v);    /* < 0: null */
void fdt_emit_real(fdt_emit *m, const char *key, double v);          /* must be finite */
void fdt_emit_real_opt(fdt_emit *m, const char *key, double v);      /* not finite: null */
void fdt_emit_bool(fdt_emit *m, const char *key, int v);             /* true, false */
void fdt_emit_null(fdt_emit *m, const char *key);

/* ---- free text: written in the table form only (never while a table is open) ---- */
void fdt_emit_text(fdt_emit *m, const char *fmt, ...) FDT_PRINTF(2, 3);

/* ---- tables ---- */
/* Starts a table of cols (which must outlive it). CSV: the header line. */
void fdt_emit_table(fdt_emit *m, const fdt_col *cols, int ncols);
/* Starts a row. JSON: an object (a member named key, or an array element with NULL). */
void fdt_emit_row(fdt_emit *m, const char *key);
/* The next cell, in column order; its column's type must match. */
void fdt_emit_cell_str(fdt_emit *m, const char *v);
void fdt_emit_cell_int(fdt_emit *m, long long v);
void fdt_emit_cell_real(fdt_emit *m, double v);
void fdt_emit_cell_bool(fdt_emit *m, int v);
/* The next cell has no value in this row: JSON leaves its key out, CSV leaves the field
 * empty, the table shows "-". Any column type. */
void fdt_emit_cell_omit(fdt_emit *m);
/* Ends the row; every column must have had its cell. */
void fdt_emit_row_end(fdt_emit *m);
/* Ends the table. Table form: the header and rows with aligned columns (two spaces apart,
 * widths in UTF-8 characters), written only when there is a row. With m->width > 0 (a
 * terminal's width) and a table wider than that, the table is fitted, keeping what
 * identifies a row and its answer (FDT_COL_KEY columns) longest:
 *  1. a column whose cells are all the same (two rows or more) leaves the table for a line
 *     below it, "(in every row: device NVIDIA H100; arch sm_90)";
 *  2. columns not marked FDT_COL_KEY are left out, the last first, while the table could
 *     not fit with every column at half its width (or its floor); a line below names them,
 *     "(left out to fit 80 columns: run, date (UTC))";
 *  3. the other text columns are narrowed, the widest first, down to their header or
 *     FDT_EMIT_MIN_FIT characters, and then the FDT_COL_KEY text columns (numbers are never
 *     cut; a table that cannot fit stays as narrow as that);
 *  4. a cut shows "…" where text was left out. A column of lists (items between commas,
 *     else spaces, as many in every cell: a config) keeps whole items, those that tell its
 *     rows apart first; other text is cut at its end, or in its middle when the end would
 *     hide what tells it from another cell. Rows that differ in their key text columns
 *     always look different there: a key column that cannot keep them apart at its width
 *     grows until it does; another column shows what a cut can, cut at its end.
 * 0 (the default, and whenever the output is not a terminal) changes nothing. */
void fdt_emit_table_end(fdt_emit *m);

#endif
