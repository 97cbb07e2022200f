/*
 * The built-in table of nestcl-translate: the calls and constants a model may
 * use on the device, with their OpenCL C / C99 spellings. Everything else that
 * is called in update() is refused with a diagnostic. The names on both sides
 * are the same, so the kernel and the C loop stay one text.
 */
#ifndef NESTCL_TR_MATHTABLE_H
#define NESTCL_TR_MATHTABLE_H

typedef enum math_kind {
  MATH_FUNC = 0, /* name(args...) */
  MATH_CONST, /* a call without arguments that is a constant, e.g. numeric_limits<double>::infinity() */
  MATH_VAR, /* a namespace-scope constant such as numerics::e */
  MATH_MINMAX /* std::min/std::max: typed helpers with C++'s exact semantics */
} math_kind;

typedef struct math_entry {
  const char *qname; /* qualified name as cursor_qualified_name() spells it */
  const char *name; /* replacement */
  int nargs; /* -1: any */
  math_kind kind;
  int transcendental; /* results may differ in the last ulp between libm and the device */
  /*
   * In update() only: the project's own implementation (kernels_templates/
   * nestcl_math.h), compiled identically into the kernel and the C loop, so the
   * two paths stay bit-identical where libm and the device's built-in differ.
   * Host helpers (pre_run_hook, ...) keep libm, as NEST does.
   */
  const char *portable;
} math_entry;

/* Entry for a qualified name; is_double tells a numeric_limits<double> from <long>. */
const math_entry *math_lookup(const char *qname, int nargs);
/* The value of a numeric_limits constant for a result type ("double", "long", "int"). */
const char *math_limit(const char *member, const char *type);

#endif
