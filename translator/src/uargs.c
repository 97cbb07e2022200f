/*
 * The update's fixed arguments as text (see uargs.h).
 */
#include "uargs.h"

#include <string.h>

const nestcl_update_arg_desc tr_uargs[NESTCL_UPDATE_FIXED_ARGS] = NESTCL_UPDATE_ARG_TABLE;

static void put_uarg(strbuf *b, const nestcl_update_arg_desc *a, tr_uarg_form form)
{
  const char *type = form == TR_UARG_CL ? a->cl_type : a->portable_type;
  const char *global = form == TR_UARG_CL ? "__global" : "NESTCL_GLOBAL";
  if (form == TR_UARG_NAME)
    sb_puts(b, a->name);
  else if (a->is_pointer)
    sb_printf(b, "%s %s *%s", global, type, a->name);
  else
    sb_printf(b, "const %s %s", type, a->name);
}

void tr_uarg_list(strbuf *b, tr_uarg_form form, const char *sep, const char *brk, const int *breaks_after)
{
  int j;
  for (j = 0; j < NESTCL_UPDATE_FIXED_ARGS; j++) {
    if (j > 0) {
      int wrap = *breaks_after == j - 1;
      sb_puts(b, wrap ? brk : sep);
      if (wrap)
        breaks_after++;
    }
    put_uarg(b, &tr_uargs[j], form);
  }
}

int tr_is_uarg_name(const char *name)
{
  int j;
  for (j = 0; j < NESTCL_UPDATE_FIXED_ARGS; j++)
    if (!strcmp(name, tr_uargs[j].name))
      return 1;
  return 0;
}
