/*
 * The update's fixed arguments as the translator writes them out: the one
 * declaration (nestcl/update_args.h) as a table, and a writer of that list in
 * the forms the generated code needs. The names and types come from the
 * table; where a list is wrapped, the caller says after which arguments, so
 * the layout of the generated text stays the emitter's.
 */
#ifndef NESTCL_TR_UARGS_H
#define NESTCL_TR_UARGS_H

#include "nestcl/update_args.h"
#include "strbuf.h"

/* The fixed arguments in kernel order, NESTCL_UPDATE_FIXED_ARGS rows. */
extern const nestcl_update_arg_desc tr_uargs[NESTCL_UPDATE_FIXED_ARGS];

typedef enum tr_uarg_form {
  TR_UARG_NAME, /* name */
  TR_UARG_CL, /* const <cl_type> name, or __global <cl_type> *name */
  TR_UARG_PORTABLE /* const <portable_type> name, or NESTCL_GLOBAL <portable_type> *name */
} tr_uarg_form;

/* Appends every fixed argument in form, separated by sep, or by brk after the
   arguments whose indices are listed in breaks_after (ascending, ended by -1). */
void tr_uarg_list(strbuf *b, tr_uarg_form form, const char *sep, const char *brk, const int *breaks_after);

/* 1 if name is one of the fixed arguments. */
int tr_is_uarg_name(const char *name);

#endif
