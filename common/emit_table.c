/* The table form of the emitter (fdt_emit.h): the cells a table kept, written as aligned
 * columns, and a table wider than its width limit (a terminal's) fitted to it. Fitting keeps
 * what identifies a row and its answer (columns marked FDT_COL_KEY) longest: what every row
 * shares moves to a line below the table, the other columns are left out or narrowed before
 * a key column is cut, and a cut never makes cells of a column that differ look the same (a
 * list keeps the items that tell its rows apart; other text keeps the characters that do). */
#include "emit_table.h"

#include <stdlib.h>
#include <string.h>

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, the mark of a cut */

/* ------------------------------------------------------------------ text */

/* Display width: UTF-8 characters, not bytes. */
static int width(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* The byte offset of character k of s (its end when shorter). */
static size_t char_at(const char *s, int k)
{
    size_t i = 0;
    for (int n = 0; s[i] && n < k; n++)
        for (i++; ((unsigned char)s[i] & 0xc0) == 0x80; i++)
            ;
    return i;
}

/* How many leading characters a and b share. */
static int common_chars(const char *a, const char *b)
{
    size_t i = 0;
    while (a[i] && a[i] == b[i])
        i++;
    while (i && ((unsigned char)a[i] & 0xc0) == 0x80)
        i--; /* back to the start of the character that differs */
    int n = 0;
    for (size_t k = 0; k < i; k++)
        n += ((unsigned char)a[k] & 0xc0) != 0x80;
    return n;
}

static void pad(fdt_sb *b, int n)
{
    for (; n > 0; n--)
        fdt_sb_putn(b, " ", 1);
}

/* s (wider than w) cut to w characters: its first w - 1 and "…". */
static char *cut_end(const char *s, int w)
{
    return fdt_sb_format("%.*s" ELLIPSIS, (int)char_at(s, w - 1), s);
}

/* s (wider than w) cut to w characters so that character d shows: a head, "…", the part from
 * the start of the word holding d (after ',', ';', ' ' or '/', within a few characters),
 * and "…" when more follows. */
static char *cut_middle(const char *s, int w, int d)
{
    int len = width(s), back = w - 4 < 12 ? w - 4 : 12, t = d;
    while (t > 0 && d - t < back && !strchr(",; /", s[char_at(s, t - 1)]))
        t--;
    int h = (w - 2) / 2;
    if (h > w - 3 - (d - t))
        h = w - 3 - (d - t); /* room for the tail up to d and its "…" */
    if (h > t - 1)
        h = t - 1;
    int tail = w - 2 - h, rest = len - t;
    if (rest <= w - 1 - h) { /* the tail reaches the end: no second mark, a longer head */
        h = w - 1 - rest;
        tail = rest;
    }
    size_t hb = char_at(s, h), tb = char_at(s, t), te = tb + char_at(s + tb, tail);
    return fdt_sb_format("%.*s" ELLIPSIS "%.*s%s", (int)hb, s, (int)(te - tb), s + tb,
                         rest > tail ? ELLIPSIS : "");
}

/* ------------------------------------------------------------------ the layout */

/* What fitting decided for each visible column. */
enum { COL_SHOWN, COL_SAME, COL_LEFT_OUT }; /* same: in every row, said below the table */

typedef struct layout {
    const fdt_col *vis[FDT_EMIT_MAXCOLS];
    int n;
    int w[FDT_EMIT_MAXCOLS];     /* width in characters */
    int full[FDT_EMIT_MAXCOLS];  /* the widest cell or the header */
    int floor[FDT_EMIT_MAXCOLS]; /* the narrowest it may be cut to (numbers: full) */
    int state[FDT_EMIT_MAXCOLS];
    char *common[FDT_EMIT_MAXCOLS]; /* items every cell of the column had (elide_common) */
    char **text;                 /* per cell: what is left of it after elide_common, or NULL */
    char **cut;                  /* per cell: what the table shows of it when cut, or NULL */
} layout;

static int is_key(const fdt_col *c) { return (c->flags & FDT_COL_KEY) != 0; }
static int is_text(const fdt_col *c) { return fdt_emit_base_type(c->type) == FDT_COL_STR; }

/* Cell i as the fitted table holds it (before it is cut). */
static const char *cell(const fdt_emit *m, const layout *L, size_t i)
{
    return L->text && L->text[i] ? L->text[i] : m->cells[i];
}

/* Cell i as the table shows it. */
static const char *shown_text(const fdt_emit *m, const layout *L, size_t i)
{
    return L->cut[i] ? L->cut[i] : cell(m, L, i);
}

/* ------------------------------------------------------------------ fitting the widths */

/* The width of a line: the shown columns' widths (each at least half its full width when
 * `least`, which is when a column is worth showing) and two spaces between columns. */
static int line_width(const layout *L, int least)
{
    int total = 0, cols = 0;
    for (int k = 0; k < L->n; k++) {
        if (L->state[k] != COL_SHOWN)
            continue;
        int half = (L->full[k] + 1) / 2;
        total += !least ? L->w[k] : L->floor[k] > half ? L->floor[k] : half;
        cols++;
    }
    return total + 2 * (cols > 0 ? cols - 1 : 0);
}

/* Columns whose every cell is the same (two rows or more) leave the table for a line
 * below it, unless every column is one. */
static void set_aside_same(const fdt_emit *m, layout *L)
{
    size_t n = (size_t)L->n, rows = m->ncells / n;
    int same[FDT_EMIT_MAXCOLS], nsame = 0;
    for (size_t k = 0; k < n; k++) {
        same[k] = rows >= 2;
        for (size_t r = 1; r < rows && same[k]; r++)
            same[k] = !strcmp(m->cells[r * n + k], m->cells[k]);
        nsame += same[k];
    }
    for (int k = 0; k < L->n && nsame < L->n; k++)
        if (same[k])
            L->state[k] = COL_SAME;
}

/* Item j (text between commas) of s: its start, its length in *len; NULL (and 0) past the
 * last. */
static const char *item(const char *s, int j, size_t *len)
{
    *len = 0;
    for (; j > 0; j--) {
        s = strchr(s, ',');
        if (!s)
            return NULL;
        s++;
    }
    *len = strcspn(s, ",");
    return s;
}

/* Which items (between commas) of column k every cell has, at the same place, when each
 * cell has `items` of them: same[j]; the number of such items. */
static int common_items(const fdt_emit *m, const layout *L, int k, int items, int *same)
{
    size_t n = (size_t)L->n, rows = m->ncells / n, len0, len;
    const char *first = m->cells[k], *a, *b;
    int nsame = 0;
    for (int j = 0; j < items; j++) {
        a = item(first, j, &len0);
        same[j] = 1;
        for (size_t r = 1; r < rows && same[j]; r++)
            same[j] = (b = item(m->cells[r * n + (size_t)k], j, &len)) && len == len0 &&
                      !memcmp(a, b, len);
        nsame += same[j];
    }
    return nsame;
}

/* s without the items marked in same[] (items between commas), or NULL (out of memory). */
static char *without_items(const char *s, int items, const int *same, int keep)
{
    fdt_sb t;
    fdt_sb_init(&t);
    size_t len;
    for (int j = 0; j < items; j++)
        if (same[j] == keep) {
            const char *a = item(s, j, &len);
            fdt_sb_printf(&t, "%s%.*s", t.len ? "," : "", (int)len, a);
        }
    if (t.oom) {
        fdt_sb_free(&t);
        return NULL;
    }
    return fdt_sb_take(&t);
}

/* The number of items (between commas) of s. */
static int count_items(const char *s)
{
    int n = 1;
    for (; (s = strchr(s, ',')); s++)
        n++;
    return n;
}

/* Whether list s holds an item equal to a[0..len). */
static int has_item(const char *s, const char *a, size_t len)
{
    size_t l;
    const char *b;
    for (int j = 0; (b = item(s, j, &l)); j++)
        if (l == len && !memcmp(b, a, len))
            return 1;
    return 0;
}

/* Whether every cell of column k is a list of key=value items (a config). */
static int keyed_lists(const fdt_emit *m, const layout *L, int k)
{
    size_t n = (size_t)L->n, rows = m->ncells / n, l;
    const char *a;
    for (size_t r = 0; r < rows; r++)
        for (int j = 0; (a = item(m->cells[r * n + (size_t)k], j, &l)); j++)
            if (!memchr(a, '=', l))
                return 0;
    return 1;
}

/* Which items of the first cell of column k every cell holds anywhere (configs that leave
 * out their default values have as many items as they set): same[j]; their number. */
static int common_keyed_items(const fdt_emit *m, const layout *L, int k, int items, int *same)
{
    size_t n = (size_t)L->n, rows = m->ncells / n, len;
    int nsame = 0;
    for (int j = 0; j < items; j++) {
        const char *a = item(m->cells[k], j, &len);
        same[j] = 1;
        for (size_t r = 1; r < rows && same[j]; r++)
            same[j] = has_item(m->cells[r * n + (size_t)k], a, len);
        nsame += same[j];
    }
    return nsame;
}

/* s without the items that list `common` holds, or NULL (out of memory). */
static char *without_common(const char *s, const char *common)
{
    int items = count_items(s), *in = malloc((size_t)items * sizeof *in);
    if (!in)
        return NULL;
    size_t len;
    for (int j = 0; j < items; j++) {
        const char *a = item(s, j, &len);
        in[j] = has_item(common, a, len);
    }
    char *t = without_items(s, items, in, 0);
    free(in);
    return t;
}

/* A column of lists (items between commas, e.g. configs) whose cells share some items: at
 * the same place where every cell has as many items, anywhere where the cells are lists of
 * key=value items of different lengths (a config shows only what it sets apart from the
 * defaults). Those items leave the cells (said below the table, "in config:
 * align=32,bz=1"), which then show only what differs. Memory running out leaves the column
 * as it is. */
static void elide_common(const fdt_emit *m, layout *L, int k)
{
    size_t n = (size_t)L->n, rows = m->ncells / n;
    int items = count_items(m->cells[k]), same[256], uneven = 0;
    if (rows < 2 || items < 2 || items > 256)
        return;
    for (size_t r = 1; r < rows; r++)
        uneven |= count_items(m->cells[r * n + (size_t)k]) != items;
    if (uneven && !keyed_lists(m, L, k))
        return;
    int nsame = uneven ? common_keyed_items(m, L, k, items, same)
                       : common_items(m, L, k, items, same);
    if (nsame == 0 || nsame == items)
        return;
    if (!L->text && !(L->text = calloc(m->ncells, sizeof *L->text)))
        return;
    if (!(L->common[k] = without_items(m->cells[k], items, same, 1)))
        return;
    L->full[k] = width(L->vis[k]->label);
    for (size_t r = 0; r < rows; r++) {
        size_t i = r * n + (size_t)k;
        L->text[i] = uneven ? without_common(m->cells[i], L->common[k])
                            : without_items(m->cells[i], items, same, 0);
        int wd = width(cell(m, L, i));
        L->full[k] = wd > L->full[k] ? wd : L->full[k];
    }
    L->w[k] = L->full[k];
    L->floor[k] = L->floor[k] < L->full[k] ? L->floor[k] : L->full[k];
}

/* Narrows the shown columns that are (key) or are not (!key) FDT_COL_KEY, the widest first,
 * down to their floors, until a line fits m->width or none can give more. */
static void narrow(const fdt_emit *m, layout *L, int key)
{
    int total = line_width(L, 0);
    while (total > m->width) {
        int widest = -1;
        for (int k = 0; k < L->n; k++)
            if (L->state[k] == COL_SHOWN && is_key(L->vis[k]) == key && L->w[k] > L->floor[k] &&
                (widest < 0 || L->w[k] > L->w[widest]))
                widest = k;
        if (widest < 0)
            return;
        int give = total - m->width < L->w[widest] - L->floor[widest]
                       ? total - m->width
                       : L->w[widest] - L->floor[widest];
        L->w[widest] -= give;
        total -= give;
    }
}

/* With a width limit that the table exceeds: first, columns that hold one value in every
 * row leave the table for a line below it, and so do the items every cell of a column of
 * lists shares (elide_common); then the columns not marked FDT_COL_KEY are left out, the
 * last first, while the table could not fit with every column at half its width; then the
 * other text columns are narrowed down to their floors, and only then the key columns,
 * the widest first. Numbers are never cut. */
static void fit(const fdt_emit *m, layout *L)
{
    if (m->width <= 0 || line_width(L, 0) <= m->width)
        return;
    set_aside_same(m, L);
    for (int k = 0; k < L->n; k++)
        if (L->state[k] == COL_SHOWN && is_text(L->vis[k]))
            elide_common(m, L, k);
    for (int k = L->n - 1; k >= 0 && line_width(L, 1) > m->width; k--)
        if (L->state[k] == COL_SHOWN && !is_key(L->vis[k]))
            L->state[k] = COL_LEFT_OUT;
    narrow(m, L, 0);
    narrow(m, L, 1);
}

/* ------------------------------------------------------------------ cutting characters */

/* One cell of a column being cut, in a group of rows that must tell it apart. */
typedef struct shown_cell {
    const char *full; /* the cell's text */
    char *text;       /* what the table shows: a cut of full (owned) */
    size_t row;
    int group;
} shown_cell;

static int by_group_full(const void *a, const void *b)
{
    const shown_cell *x = a, *y = b;
    return x->group != y->group ? (x->group > y->group) - (x->group < y->group)
                                : strcmp(x->full, y->full);
}

static int by_group_text(const void *a, const void *b)
{
    const shown_cell *x = a, *y = b;
    return x->group != y->group ? (x->group > y->group) - (x->group < y->group)
                                : strcmp(x->text, y->text);
}

/* The cells c[0..n) cut to w characters so that cells of one group that differ still look
 * different: what tells a cell from the others of its group is the longest prefix it shares
 * with a different one, found next to it in sorted order; the cell is cut at its end when
 * the character after that prefix stays in view, else in the middle (cut_middle), which
 * shows that character. 1 when two different cells of a group still look the same (a cell
 * that differs from others in several places), 0 when none do, -1 when memory ran out. c is
 * left sorted by group and text. */
static int cut_chars(shown_cell *c, size_t n, int w)
{
    qsort(c, n, sizeof *c, by_group_full);
    for (size_t a = 0, b; a < n; a = b) { /* a run [a, b) of equal cells */
        for (b = a + 1; b < n && !by_group_full(&c[a], &c[b]); b++)
            ;
        int need = -1;
        if (a > 0 && c[a - 1].group == c[a].group)
            need = common_chars(c[a - 1].full, c[a].full);
        if (b < n && c[b].group == c[a].group && common_chars(c[b].full, c[a].full) > need)
            need = common_chars(c[b].full, c[a].full);
        for (size_t i = a; i < b; i++) {
            c[i].text = width(c[i].full) <= w ? strdup(c[i].full)
                        : need < w - 1        ? cut_end(c[i].full, w)
                                              : cut_middle(c[i].full, w, need);
            if (!c[i].text)
                return -1;
        }
    }
    qsort(c, n, sizeof *c, by_group_text);
    for (size_t i = 1; i < n; i++)
        if (c[i].group == c[i - 1].group && !strcmp(c[i].text, c[i - 1].text) &&
            strcmp(c[i].full, c[i - 1].full))
            return 1;
    return 0;
}

/* ------------------------------------------------------------------ cutting lists */

/* One item of a list cell. */
typedef struct span {
    const char *s;
    size_t n;
} span;

/* A row, the class of rows it is in so far, and the item that may split the class. */
typedef struct split_key {
    int cls;
    span item;
    size_t row;
} split_key;

static int by_class_item(const void *a, const void *b)
{
    const split_key *x = a, *y = b;
    if (x->cls != y->cls)
        return (x->cls > y->cls) - (x->cls < y->cls);
    int c = memcmp(x->item.s, y->item.s, x->item.n < y->item.n ? x->item.n : y->item.n);
    return c ? c : (x->item.n > y->item.n) - (x->item.n < y->item.n);
}

/* A column of lists: rows cells of `items` items each, between sep. */
typedef struct list_col {
    const span *it; /* it[row * items + j] */
    size_t rows;
    int items;
    char sep;
    split_key *sk; /* scratch: a key per row */
    int *cls;      /* per row: the class of rows it cannot yet be told from */
} list_col;

/* The classes of rows split by item j (applied to cls when apply); their number. */
static int split_by(const list_col *l, int j, int apply)
{
    for (size_t r = 0; r < l->rows; r++)
        l->sk[r] = (split_key){l->cls[r], l->it[r * (size_t)l->items + (size_t)j], r};
    qsort(l->sk, l->rows, sizeof *l->sk, by_class_item);
    int ncls = 0;
    for (size_t r = 0; r < l->rows; r++) {
        ncls += r == 0 || by_class_item(&l->sk[r - 1], &l->sk[r]) != 0;
        if (apply)
            l->cls[l->sk[r].row] = ncls - 1;
    }
    return ncls;
}

/* The cell of row r with the items of `on` and one "…" for each run of the others; NULL
 * when memory ran out. */
static char *join_items(const list_col *l, size_t r, const char *on)
{
    fdt_sb b;
    fdt_sb_init(&b);
    for (int j = 0; j < l->items; j++) {
        if (!on[j]) {
            if (j == 0 || on[j - 1])
                fdt_sb_puts(&b, ELLIPSIS);
            continue;
        }
        if (j > 0 && on[j - 1])
            fdt_sb_putn(&b, &l->sep, 1);
        const span *s = &l->it[r * (size_t)l->items + (size_t)j];
        fdt_sb_putn(&b, s->s, s->n);
    }
    if (b.oom) {
        fdt_sb_free(&b);
        return NULL;
    }
    return fdt_sb_take(&b);
}

/* The widest cell with the items of `on` (very wide when memory ran out). */
static int widest_items(const list_col *l, const char *on)
{
    int widest = 0;
    for (size_t r = 0; r < l->rows; r++) {
        char *t = join_items(l, r, on);
        int wd = t ? width(t) : 1 << 30;
        widest = wd > widest ? wd : widest;
        free(t);
    }
    return widest;
}

/* Fills on[] for a column of lists cut to *w, whose rows start in the classes of l->cls (the
 * groups that must tell their cells apart): first the items that tell the rows of each
 * group apart, each time the one that splits the most, then the first ones from the left
 * while the widest cell fits. Should what tells the rows apart not fit *w, *w grows to fit
 * it when `widen` (a key column), else -1; -1 too when not even one item fits. */
static int choose_items(const list_col *l, int *w, int widen, char *on)
{
    int *start = malloc(l->rows * sizeof *start);
    if (!start)
        return -1;
    memcpy(start, l->cls, l->rows * sizeof *start);
    int distinct = 0;
    for (int j = 0; j < l->items; j++)
        distinct = split_by(l, j, 1); /* classes of rows whose cells are the same */
    memcpy(l->cls, start, l->rows * sizeof *start);
    free(start);
    memset(on, 0, (size_t)l->items);
    int ncls = 0;
    for (size_t r = 0; r < l->rows; r++)
        ncls = l->cls[r] + 1 > ncls ? l->cls[r] + 1 : ncls; /* groups are numbered 0.. */
    while (ncls < distinct) {
        int best = -1, most = ncls;
        for (int j = 0; j < l->items; j++) {
            int c = on[j] ? 0 : split_by(l, j, 0);
            if (c > most) {
                most = c;
                best = j;
            }
        }
        FDT_ASSERT(best >= 0, "an item splits rows whose cells differ");
        if (best < 0)
            return -1;
        ncls = split_by(l, best, 1);
        on[best] = 1;
    }
    int need = widest_items(l, on);
    if (need > *w && !widen)
        return -1;
    *w = need > *w ? need : *w;
    for (int j = 0; j < l->items; j++)
        if (!on[j]) {
            on[j] = 1;
            if (widest_items(l, on) > *w) {
                on[j] = 0;
                break;
            }
        }
    return memchr(on, 1, (size_t)l->items) ? 0 : -1; /* no item at all: cut characters */
}

/* Splits the cells of column k into the items of a list: between commas, else spaces; 0,
 * or -1 when the cells are not lists of as many items (or memory ran out). */
static int read_list(const fdt_emit *m, const layout *L, int k, list_col *l, span **it)
{
    size_t n = (size_t)L->n;
    const char *first = cell(m, L, (size_t)k);
    l->sep = strchr(first, ',') ? ',' : ' ';
    l->items = 1;
    for (const char *c = first; (c = strchr(c, l->sep)); c++)
        l->items++;
    if (l->items < 2 || l->items > 256 ||
        !(*it = malloc(l->rows * (size_t)l->items * sizeof **it)))
        return -1;
    const char sep[2] = {l->sep, 0};
    for (size_t r = 0; r < l->rows; r++) {
        const char *s = cell(m, L, r * n + (size_t)k);
        for (int j = 0; j < l->items; j++) {
            size_t len = strcspn(s, sep);
            (*it)[r * (size_t)l->items + (size_t)j] = (span){s, len};
            s += len;
            if ((j < l->items - 1) != (*s == l->sep))
                return -1; /* another number of items than the first cell */
            s += *s == l->sep;
        }
    }
    l->it = *it;
    return 0;
}

/* Column k cut by whole items of a list (choose_items), the same items in every row, into
 * L->cut; group[row] says which rows must tell their cells apart. With `widen`, the column
 * grows to what tells its rows apart. 0, or -1 when it is no list, what tells the rows apart
 * does not fit (without `widen`), or memory ran out. */
static int cut_items(const fdt_emit *m, layout *L, int k, const int *group, int widen)
{
    size_t n = (size_t)L->n;
    list_col l = {.rows = m->ncells / n};
    span *it = NULL;
    char on[256];
    l.sk = malloc(l.rows * sizeof *l.sk);
    l.cls = malloc(l.rows * sizeof *l.cls);
    int rc = l.sk && l.cls ? read_list(m, L, k, &l, &it) : -1;
    if (rc == 0) {
        memcpy(l.cls, group, l.rows * sizeof *l.cls);
        rc = choose_items(&l, &L->w[k], widen, on);
    }
    for (size_t r = 0; r < l.rows && rc == 0; r++)
        rc = (L->cut[r * n + (size_t)k] = join_items(&l, r, on)) ? 0 : -1;
    for (size_t r = 0; r < l.rows && rc; r++) {
        free(L->cut[r * n + (size_t)k]);
        L->cut[r * n + (size_t)k] = NULL;
    }
    free(it);
    free(l.sk);
    free(l.cls);
    return rc;
}

/* ------------------------------------------------------------------ one column cut */

/* The cells of column k cut to its width into L->cut (whole ones stay NULL): by whole items
 * when they are lists, else by characters, whichever keeps the cells that differ within
 * the column different. Where neither does, a key column grows (to the
 * items that tell its rows apart, or by a character at a time), and the cells of another
 * column are cut at their end. -1 when memory ran out. */
static int cut_one(const fdt_emit *m, layout *L, int k)
{
    size_t n = (size_t)L->n, rows = m->ncells / n;
    if (L->w[k] >= L->full[k])
        return 0;
    int *group = calloc(rows, sizeof *group); /* one group: every cell that differs shows so */
    shown_cell *c = malloc(rows * sizeof *c);
    int rc = group && c ? 0 : -1;
    int done = rc == 0 && cut_items(m, L, k, group, 0) == 0, tries = 0;
    for (int own = 0; rc == 0 && !done && L->w[k] < L->full[k]; tries++) {
        if (tries == 1 && is_key(L->vis[k]) && cut_items(m, L, k, group, 1) == 0)
            break; /* grown to the items that tell the rows apart */
        for (size_t r = 0; r < rows; r++)
            c[r] = (shown_cell){cell(m, L, r * n + (size_t)k), NULL, r, own ? (int)r : group[r]};
        int alike = cut_chars(c, rows, L->w[k]);
        if (alike == 0) {
            for (size_t r = 0; r < rows; r++)
                L->cut[c[r].row * n + (size_t)k] = c[r].text;
            done = 1;
            continue;
        }
        for (size_t r = 0; r < rows; r++)
            free(c[r].text);
        if (alike < 0)
            rc = -1;
        else if (is_key(L->vis[k]))
            L->w[k]++; /* two cells that differ look the same: one more character */
        else
            own = 1; /* another column: each cell cut at its end */
    }
    free(group);
    free(c);
    return rc;
}

/* 1 when two rows whose key text cells differ show the same key text cells (or memory ran
 * out: the key columns are then cut again, each telling its cells apart alone). */
static int rows_alike(const fdt_emit *m, const layout *L)
{
    size_t n = (size_t)L->n, rows = m->ncells / n;
    shown_cell *c = calloc(rows, sizeof *c);
    fdt_sb full, shown;
    int alike = !c;
    for (size_t r = 0; r < rows && !alike; r++) {
        fdt_sb_init(&full);
        fdt_sb_init(&shown);
        for (size_t k = 0; k < n; k++)
            if (L->state[k] == COL_SHOWN && is_key(L->vis[k]) && is_text(L->vis[k])) {
                fdt_sb_printf(&full, "%s\x1f", cell(m, L, r * n + k));
                fdt_sb_printf(&shown, "%s\x1f", shown_text(m, L, r * n + k));
            }
        alike = full.oom || shown.oom;
        c[r] = (shown_cell){fdt_sb_take(&full), fdt_sb_take(&shown), r, 0};
    }
    if (!alike) {
        qsort(c, rows, sizeof *c, by_group_text);
        for (size_t r = 1; r < rows && !alike; r++)
            alike = !strcmp(c[r].text, c[r - 1].text) && strcmp(c[r].full, c[r - 1].full);
    }
    for (size_t r = 0; c && r < rows; r++) {
        free((char *)c[r].full);
        free(c[r].text);
    }
    free(c);
    return alike;
}

/* Every shown column cut to its width (cut_one), each key column telling all its cells that
 * differ apart (a config that differs never looks like another, even in rows that differ
 * in their problem too). -1 when memory ran out. */
static int cut_all(const fdt_emit *m, layout *L)
{
    for (int k = 0; k < L->n; k++)
        if (L->state[k] == COL_SHOWN && cut_one(m, L, k))
            return -1;
    FDT_ASSERT(!rows_alike(m, L), "rows whose key cells differ look the same");
    return 0;
}

/* ------------------------------------------------------------------ writing */

static void text_cell(fdt_emit *m, const char *s, int w, int right, int last, int head)
{
    int shown = width(s);
    fdt_sb_puts(m->out, head ? m->head_on : "");
    if (right)
        pad(m->out, w - shown);
    fdt_sb_puts(m->out, s);
    if (!right && !last)
        pad(m->out, w - shown);
    fdt_sb_puts(m->out, head ? m->head_off : "");
    fdt_sb_puts(m->out, last ? "\n" : "  ");
}

/* Text wrapped at spaces to lines of at most width_limit characters (0: one line), lines
 * after the first indented by a space. */
static void put_wrapped(fdt_sb *b, const char *text, int width_limit)
{
    int col = 0;
    for (const char *s = text; *s;) {
        size_t wl = strcspn(s, " ");
        int ww = width(s) - width(s + wl);
        if (col && width_limit > 0 && col + 1 + ww > width_limit) {
            fdt_sb_puts(b, "\n ");
            col = 1;
        } else if (col) {
            fdt_sb_puts(b, " ");
            col++;
        }
        fdt_sb_putn(b, s, wl);
        col += ww;
        s += wl + strspn(s + wl, " ");
    }
    fdt_sb_puts(b, "\n");
}

/* Below a fitted table: what every row shares, and the columns left out. */
static void write_notes(fdt_emit *m, const layout *L)
{
    for (int state = COL_SAME; state <= COL_LEFT_OUT; state++) {
        fdt_sb t;
        fdt_sb_init(&t);
        for (int k = 0; k < L->n; k++) {
            const char *label = *L->vis[k]->label ? L->vis[k]->label : L->vis[k]->key;
            if (state == COL_SAME && L->state[k] == COL_SHOWN && L->common[k])
                fdt_sb_printf(&t, "%sin %s: %s", t.len ? "; " : "", label, L->common[k]);
            if (L->state[k] != state)
                continue;
            fdt_sb_puts(&t, t.len ? (state == COL_SAME ? "; " : ", ") : "");
            fdt_sb_puts(&t, label);
            if (state == COL_SAME)
                fdt_sb_printf(&t, " %s", m->cells[k]);
        }
        if (t.len) {
            char *line = state == COL_SAME
                             ? fdt_sb_format("(in every row: %s)", fdt_sb_str(&t))
                             : fdt_sb_format("(left out to fit %d columns: %s)", m->width,
                                             fdt_sb_str(&t));
            if (line)
                put_wrapped(m->out, line, m->width);
            m->oom |= !line || t.oom;
            free(line);
        }
        fdt_sb_free(&t);
    }
}

/* The header and the rows of the fitted table; the last shown column is not padded unless
 * it is aligned right. */
static void write_rows(fdt_emit *m, const layout *L)
{
    size_t n = (size_t)L->n;
    int last = -1;
    for (int k = 0; k < L->n; k++)
        last = L->state[k] == COL_SHOWN ? k : last;
    for (size_t i = 0; i < m->ncells + n; i++) {
        int k = (int)(i % n), head = i < n;
        const fdt_col *c = L->vis[k];
        if (L->state[k] != COL_SHOWN)
            continue;
        fdt_col_type t = fdt_emit_base_type(c->type);
        int right = c->flags & FDT_COL_RIGHT ? 1
                    : c->flags & FDT_COL_LEFT ? 0
                                              : t == FDT_COL_INT || t == FDT_COL_REAL;
        text_cell(m, head ? c->label : shown_text(m, L, i - n), L->w[k], right, k == last, head);
    }
}

void fdt_emit_write_table(fdt_emit *m)
{
    layout L;
    memset(&L, 0, sizeof L);
    for (int i = 0; i < m->ncols; i++)
        if (fdt_emit_shown(m, &m->cols[i])) {
            L.vis[L.n] = &m->cols[i];
            L.full[L.n] = width(m->cols[i].label);
            /* numbers are never cut; text down to its header or FDT_EMIT_MIN_FIT */
            L.floor[L.n] = !is_text(&m->cols[i])            ? 1 << 30
                           : L.full[L.n] > FDT_EMIT_MIN_FIT ? L.full[L.n]
                                                             : FDT_EMIT_MIN_FIT;
            L.n++;
        }
    if (!L.n || m->oom)
        return;
    size_t n = (size_t)L.n;
    for (size_t i = 0; i < m->ncells; i++)
        if (width(m->cells[i]) > L.full[i % n])
            L.full[i % n] = width(m->cells[i]);
    for (int k = 0; k < L.n; k++) {
        L.floor[k] = L.floor[k] < L.full[k] ? L.floor[k] : L.full[k];
        L.w[k] = L.full[k];
    }
    fit(m, &L);
    if (!(L.cut = calloc(m->ncells ? m->ncells : 1, sizeof *L.cut)) || cut_all(m, &L))
        m->oom = 1;
    else {
        write_rows(m, &L);
        write_notes(m, &L);
    }
    for (size_t i = 0; i < m->ncells; i++) {
        free(L.cut ? L.cut[i] : NULL);
        free(L.text ? L.text[i] : NULL);
    }
    free(L.cut);
    free(L.text);
    for (int k = 0; k < L.n; k++)
        free(L.common[k]);
}
