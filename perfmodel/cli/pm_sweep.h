/* `nestcl perfmodel sweep` and its child runs (sweep.c), which the other commands and the calibration reuse. */
#ifndef NESTCL_PM_SWEEP_H
#define NESTCL_PM_SWEEP_H

#include <stddef.h>

/* Parses "a,b,c" into at most MAX_LIST (sweep.c) numbers within [lo, hi]; *n: how many; -1 after an error line. */
int pm_parse_list(const char *flag, const char *v, double lo, double hi, double *out, int *n);
int pm_sweep(int argc, char **argv);
void pm_sweep_help(void);
/* Child runs: this executable's path; argv run with stdout to /dev/null and stderr to err_path
 * (its exit status, -1 when it could not start); the last line of that stderr. */
int pm_self_exe(char *buf, size_t cap);
int pm_run_child(char *const *argv, const char *err_path);
void pm_child_error(const char *err_path, char *out, size_t cap);
#endif
