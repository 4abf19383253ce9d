/* Private to the CLI: subcommands, shared argument parsing and output helpers. Only this
 * module talks to the user: data on stdout, progress and diagnostics on stderr. */
#ifndef FDT_CLI_H
#define FDT_CLI_H

#include <stdio.h>

#include "fdt_common.h"
#include "fdt_emit.h"
#include "fdt_gen.h"

/* Exit statuses, documented in --help. */
enum {
    EXIT_OK = 0,
    EXIT_FAIL = 1,   /* the command ran and found a problem (wrong kernel, regression) */
    EXIT_USAGE = 2,  /* bad arguments or input */
    EXIT_NO_GPU = 3, /* the command needs a GPU and none is visible */
    EXIT_ERROR = 4,  /* an operational error (device, compiler, database, disk) */
    EXIT_BUSY = 5,   /* retune: another retune holds the database's retune lock */
    EXIT_INTERRUPTED = 130, /* stopped by Ctrl-C or SIGTERM; what was measured is kept */
};

int cmd_gen(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_retune(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_db(int argc, char **argv);
int cmd_plan(int argc, char **argv);

/* ---- arguments ---- */
/* The items of a list option's value, split at commas, each handed to take (0 taken, -1 bad,
 * printed by take): the one splitter of every option that takes a list. The value may be of
 * any length (nothing is cut). An empty value or item ("", "lap,", ",lap", "lap,,d2z") is
 * refused naming opt. 0, or -1 (printed). */
int list_each(const char *opt, const char *arg, int (*take)(void *ctx, const char *item),
              void *ctx);
/* The problem options of every command: --op, --R, --precision and --grid, each a list
 * (comma-separated, or the option repeated) wherever it is taken, and --absorb W[:S], dwave's
 * absorbing layer (one value). p holds the last value of each (the defaults lap, 4, f32,
 * 512^3 until given; the layer once problem_args_done has seen that p is dwave), the sets
 * every value given. */
#define PROBLEM_MAX_GRIDS 16
/* --absorb in the help of every command that takes a problem (options in column 20). */
#define ABSORB_HELP                                                                            \
    "  --absorb W[:S]   dwave's absorbing layer (required with --op dwave, refused with\n"        \
    "                   any other): W grid points on each face (2W less than every\n"             \
    "                   extent) damped with strength S = eta_max*dt in (0, 10] at the\n"          \
    "                   outer face (default 0.1); another W or S is another problem\n"
/* The getopt code of --absorb in every command's option table (clear of any letter). */
#define OPT_ABSORB 900
typedef struct problem_args {
    fdt_problem p;
    int have_op, have_R, have_prec, have_grid, have_absorb;
    unsigned ops, Rs, precs; /* bits 1u << fdt_op, 1u << R, 1u << fdt_prec; 0: none given */
    int ngrids;              /* the grids given, each once, in order */
    int64_t grid[PROBLEM_MAX_GRIDS][3];
    int absorb_w;            /* --absorb: width and strength; 0 and 0 when not given */
    double absorb_s;
} problem_args;
void problem_args_init(problem_args *a);
/* Takes option opt ('o' --op, 'R' --R, 'p' --precision, 'g' --grid: lists, list_each;
 * OPT_ABSORB --absorb: one W[:S], fdt_absorb_parse) with its value arg, each item checked.
 * Returns 1 if the option was consumed, 0 if not a problem option, -1 on error (printed). */
int problem_args_take(problem_args *a, int opt, const char *arg);
/* After the options, in every command that takes a problem: dwave and --absorb go together
 * (--op dwave without --absorb, or --absorb without dwave among the operators, is refused
 * with what to give; 0, or -1 printed, for EXIT_USAGE), and p gets the layer when it is
 * dwave. */
int problem_args_done(problem_args *a);
/* The layer of dwave among operator op's problems: (W, S) for dwave, (0, 0) otherwise. */
void problem_args_layer(const problem_args *a, fdt_op op, fdt_problem *p);
/* For what takes one problem (gen, bench, query history, query best --nearest): 0, or -1
 * (printed, naming cmd and the option) when an option was given several values. */
int problem_args_one(const problem_args *a, const char *cmd);
struct fdt_tune_request;
/* The problems of pa into a tuning request (tune, plan): its operators, radii, precisions and
 * grids (none given: 0, the request's defaults), and p. */
void problem_args_request(const problem_args *pa, struct fdt_tune_request *rq);
int parse_int_arg(const char *opt, const char *s, long min, long max, long *out);
/* The duration parser of every option that takes one (--time, --since): "90s", "10m",
 * "10min", "2h", "7d" or "45" (seconds) -> seconds. A duration is a finite positive number of
 * at most a year (365d); anything else is refused naming opt. 0, or -1 (printed). */
int parse_duration(const char *opt, const char *s, double *seconds);
/* The percentage parser of every option that takes one (--regression, --stop-within): "5%",
 * "5" or "2.5%", above 0 and at most 100 -> a fraction (0.05). 0, or -1 (printed, naming
 * opt). */
int parse_percent_arg(const char *opt, const char *s, double *frac);

/* ---- around the library calls (setup.c) ---- */
/* The exit status of a library outcome (FDT_STATUS_NO_GPU: EXIT_NO_GPU, ...). */
int exit_status(fdt_status st);
struct fdt_probe;
struct fdt_db;
/* The error when a command needs a GPU and none is visible: "no GPU is visible, so <what>",
 * each backend tried and why it found nothing, then the hint on a line of its own. */
void print_no_gpu(const struct fdt_probe *p, const char *what, const char *hint);
struct fdt_device;
struct fdt_catalogue;
/* --gpu auto where a command compares --gpu with stored devices (query, export): *gpu becomes
 * the visible GPU's text (fdt_session_resolve_auto with cat, given where the command resolves
 * catalogue names; *dev holds the device, and a note names it); any other value stays.
 * EXIT_OK, or the exit status (printed; none visible: EXIT_NO_GPU, with what each backend
 * saw). */
int resolve_gpu_auto(const char **gpu, const struct fdt_catalogue *cat, struct fdt_device *dev);
/* --cpu auto where a command compares --cpu with stored devices (query, export): *cpu becomes
 * the host CPU's name (fdt_session_resolve_cpu; *dev holds it, and a note names it); any
 * other value stays. EXIT_OK, or EXIT_ERROR (printed: no CPU is listed). */
int resolve_cpu_auto(const char **cpu, struct fdt_device *dev);
/* The host CPU that --cpu (auto or NAME) names, into *dev (fdt_session_host_cpu). EXIT_OK, or
 * the exit status (printed: EXIT_USAGE when NAME is not the host CPU, EXIT_ERROR when no CPU
 * is listed). */
int host_cpu(const char *cpu, struct fdt_device *dev);
/* The tuning database for reading: path, else the default location; a missing file says
 * how to make one. -1 on failure (printed). */
int open_db_readonly(const char *path, struct fdt_db **db);
/* What query and export consult, in this order: the user's database (path, else the default
 * location) and the system database (fdt_db_open_system) unless no_system. A missing default
 * database is fine when the system database is there (a fresh install: dbs holds that one
 * alone); a missing --db path is an error. dbs has room for 2; *n says how many were
 * opened. -1 on failure (printed). */
int open_dbs(const char *path, int no_system, struct fdt_db **dbs, size_t *n);
/* Closes the n databases open_dbs opened. */
void close_dbs(struct fdt_db **dbs, size_t n);

/* ---- output ---- */
int use_color(FILE *f); /* TTY and NO_COLOR unset */
const char *col(FILE *f, const char *code);
void die_usage(const char *cmd, const char *fmt, ...) FDT_PRINTF(2, 3);
void print_error(const char *fmt, ...) FDT_PRINTF(1, 2);
void print_note(const char *fmt, ...) FDT_PRINTF(1, 2);
/* "fdtune CMD ARG..." into b (initialised here) as typed, quoting arguments with blanks or
 * quotes; argv[0] is the command's own name, the arguments follow. Call before getopt,
 * which reorders argv. */
void command_line(fdt_sb *b, const char *cmd, int argc, char **argv);
/* The exit statuses every command shares, as each --help ends with them. */
void print_exit_statuses(FILE *f);
/* What getopt_long refused (it returned '?', with opterr 0: main.c turns getopt's own
 * messages off): one line naming the option and pointing to 'fdtune CMD --help', e.g.
 * "fdtune tune: unknown option '--frob' (see 'fdtune tune --help')"; shortopts and opts are
 * what was given to getopt_long (opts may be NULL). An unknown option gets the closest of the
 * command's options ("unknown option '--r'; did you mean '--R'?": the same name in another
 * case, else a small edit distance), an ambiguous abbreviation the options it abbreviates.
 * Returns EXIT_USAGE. */
struct option;
int bad_option(const char *cmd, char **argv, const char *shortopts, const struct option *opts);

/* ---- the process's output (main.c) ---- */
/* Called once before the command runs: --json among the arguments makes a failed command
 * that printed nothing on stdout print a JSON error document there (see cli_output_end),
 * and stdout's write errors are checked when the process exits, however it exits. */
void cli_output_begin(int argc, char **argv);
/* The command's exit status (die_usage sets it too). */
int cli_output_status(int status);
/* Ends the output, once (main.c calls it when the command returns, before the exit handlers
 * of loaded libraries, which may flush stdout and lose why a write failed; an exit()
 * elsewhere calls it at exit): with --json, a non-zero status and nothing written on stdout,
 * {"schema": 1, "error": {"status": N, "message": "..."}} (the first error printed) goes to
 * stdout; then stdout is flushed and closed, and a write error is printed (stdout_flush)
 * and ends the process with EXIT_ERROR. */
void cli_output_end(void);
/* The terminal's width in columns when stdout is a terminal ($COLUMNS, else the terminal's
 * own size); 0 (no limit) when it is not one. Tables are fitted to it (fdt_emit.width). */
int terminal_width(void);
/* --export-json FILE / --export-csv FILE (tune, bench, query): what the command prints is
 * also rendered as JSON / CSV into FILE, written by the output rule (fdt_write_file_atomic)
 * when the command's output is done; a file that cannot be written is an error (EXIT_ERROR,
 * nothing left at FILE). Takes the option (1) or not (0). */
enum { OPT_EXPORT_JSON = 3001, OPT_EXPORT_CSV };
int export_option(int opt, const char *arg);
#define EXPORT_OPTIONS                                                                         \
    {"export-json", required_argument, 0, OPT_EXPORT_JSON},                                    \
        {"export-csv", required_argument, 0, OPT_EXPORT_CSV}
#define EXPORT_HELP                                                                            \
    "  --export-json FILE  also write the output as JSON (schema 1) to FILE\n"                  \
    "  --export-csv FILE   also write the tables as CSV to FILE (a file is replaced\n"        \
    "                      atomically, a device, FIFO or /dev/stdout written in place)\n"

/* -h/--help: the command's help text on stdout, or with --json one document,
 * {"schema": 1, "help": {"command": "query best", "text": "usage: ..."}} (command null for
 * fdtune's own help). print_help(command, usage) calls usage on the stream and finishes it;
 * help_stream gives the stream (stdout, a memory buffer under --json, NULL when memory ran
 * out) and help_done(command, stream) writes the document; both return the exit status. */
int print_help(const char *command, void (*usage)(FILE *f));
FILE *help_stream(void);
int help_done(const char *command, FILE *f);

/* Output through the emitter (common/fdt_emit.h): everything a command prints on stdout is
 * rendered into an fdt_sb, then written. emit_init empties b and starts m on it with the
 * number format of the schema-1 documents and bold table headers on a terminal. */
void emit_init(fdt_emit *m, fdt_emit_mode mode, fdt_sb *b);
/* Opens a JSON document: {"schema": FDT_JSON_SCHEMA_VERSION (nothing in the other forms). */
void emit_doc_begin(fdt_emit *m);
/* Writes what m rendered so far to stdout (stdout_write) and empties its buffer (m goes on);
 * -1 (printed) when memory ran out while rendering, and nothing is written, or when stdout
 * could not take it. */
int emit_flush(fdt_emit *m);
/* Writes n bytes of s to stdout and flushes it; -1 when stdout failed, now or before
 * (stdout_flush). */
int stdout_write(const char *s, size_t n);
/* Flushes stdout; -1 when a write to it failed, now or before: the first failure is said
 * once, with the reason of that write ("write standard output: No space left on device"),
 * and the process ends with EXIT_ERROR (cli_output_status). */
int stdout_flush(void);
/* emit_flush, then checks that everything m opened was closed and frees it. */
int emit_done(fdt_emit *m);
/* A problem as JSON members: "op", "R", "precision", "nx", "ny", "nz" (dwave: and
 * "absorb_width", "absorb_strength"). */
void emit_problem(fdt_emit *m, const fdt_problem *p);
/* A problem in a table: "lap R=4 f32 512x512x512" for people, its fields in the machine forms
 * (op, R, precision, nx, ny, nz, absorb_width, absorb_strength; negative numbers are unknown:
 * null; the absorbing layer is null but for dwave). Nine columns; emit_problem_cells fills
 * them. */
#define PROBLEM_COLS                                                                           \
    {"problem", "problem", FDT_COL_STR, NULL, FDT_SHOW_TEXT, FDT_COL_DASH | FDT_COL_KEY},      \
        {"op", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, FDT_COL_DASH},                            \
        {"R", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},                                    \
        {"precision", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, FDT_COL_DASH},                     \
        {"nx", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},                                   \
        {"ny", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},                                   \
        {"nz", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},                                   \
        {"absorb_width", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},                         \
        {"absorb_strength", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0}
void emit_problem_cells(fdt_emit *m, const fdt_problem *p);
/* A config in a table: people read every parameter (config_display), the machine
 * forms keep the canonical key as "config" (the database's key, stable for joins) and add
 * every parameter as "config_full". Three columns; emit_config_cells fills them from the
 * canonical key, every parameter of the dialect of dev's target (NULL: of the key's own). */
#define CONFIG_COLS(flags)                                                                     \
    {"config", "config", FDT_COL_STR, NULL, FDT_SHOW_TEXT, (flags) | FDT_COL_KEY},             \
        {"config", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},                                   \
        {"config_full", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0}
void emit_config_cells(fdt_emit *m, const char *key, const struct fdt_device *dev);
/* Every parameter of config key in the dialect of device dev's target (a CPU's "default" is
 * its loop nest's parameters, not a GPU's); dev NULL or of no target: fdt_config_display_key. */
void config_display(const char *key, const struct fdt_device *dev, char *buf, size_t n);
/* A software environment as the JSON object key: {"driver", "runtime", "compiler",
 * "fdtune_version", "generator"}. */
struct fdt_db_env;
void emit_env(fdt_emit *m, const char *key, const struct fdt_db_env *v);

#define FDT_JSON_SCHEMA_VERSION 1

#endif
