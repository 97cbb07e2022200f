/*
 * The built-in table (see mathtable.h). Functions map to the C99 <math.h>
 * name, which OpenCL C also provides as a built-in with the same semantics,
 * except log and log1p inside update(), which map to the project's portable
 * implementations so that CPU and device agree bit for bit (exp, pow and
 * std::expm1 there are glibc's, rewrite_calls.c's call_libm, and numerics::expm1
 * NEST's series, call_nest_expm1, which both come first: the expm1 entries
 * here serve host helpers, where std::expm1 is the C library's);
 * std::min / std::max map to helpers that reproduce C++'s comparison order
 * (fmin/fmax would treat NaN and signed zeros differently).
 */
#include "mathtable.h"

#include <stddef.h>
#include <string.h>

static const math_entry table[] = {
  {"exp", "exp", 1, MATH_FUNC, 1, "nestcl_exp"},
  {"std::exp", "exp", 1, MATH_FUNC, 1, "nestcl_exp"},
  {"expm1", "expm1", 1, MATH_FUNC, 1, "nestcl_expm1"},
  {"std::expm1", "expm1", 1, MATH_FUNC, 1, "nestcl_expm1"},
  {"numerics::expm1", "expm1", 1, MATH_FUNC, 1, "nestcl_expm1"},
  {"log", "log", 1, MATH_FUNC, 1, "nestcl_log"},
  {"std::log", "log", 1, MATH_FUNC, 1, "nestcl_log"},
  {"log1p", "log1p", 1, MATH_FUNC, 1, "nestcl_log1p"},
  {"std::log1p", "log1p", 1, MATH_FUNC, 1, "nestcl_log1p"},
  {"log10", "log10", 1, MATH_FUNC, 1, NULL},
  {"std::log10", "log10", 1, MATH_FUNC, 1, NULL},
  {"pow", "pow", 2, MATH_FUNC, 1, "nestcl_pow"},
  {"std::pow", "pow", 2, MATH_FUNC, 1, "nestcl_pow"},
  {"sqrt", "sqrt", 1, MATH_FUNC, 0, NULL},
  {"std::sqrt", "sqrt", 1, MATH_FUNC, 0, NULL},
  {"cbrt", "cbrt", 1, MATH_FUNC, 1, NULL},
  {"std::cbrt", "cbrt", 1, MATH_FUNC, 1, NULL},
  {"fabs", "fabs", 1, MATH_FUNC, 0, NULL},
  {"std::fabs", "fabs", 1, MATH_FUNC, 0, NULL},
  {"std::abs", "fabs", 1, MATH_FUNC, 0, NULL},
  {"floor", "floor", 1, MATH_FUNC, 0, NULL},
  {"std::floor", "floor", 1, MATH_FUNC, 0, NULL},
  {"ceil", "ceil", 1, MATH_FUNC, 0, NULL},
  {"std::ceil", "ceil", 1, MATH_FUNC, 0, NULL},
  {"round", "round", 1, MATH_FUNC, 0, NULL},
  {"std::round", "round", 1, MATH_FUNC, 0, NULL},
  {"trunc", "trunc", 1, MATH_FUNC, 0, NULL},
  {"std::trunc", "trunc", 1, MATH_FUNC, 0, NULL},
  {"fmod", "fmod", 2, MATH_FUNC, 0, NULL},
  {"std::fmod", "fmod", 2, MATH_FUNC, 0, NULL},
  {"sin", "sin", 1, MATH_FUNC, 1, NULL},
  {"std::sin", "sin", 1, MATH_FUNC, 1, NULL},
  {"cos", "cos", 1, MATH_FUNC, 1, NULL},
  {"std::cos", "cos", 1, MATH_FUNC, 1, NULL},
  {"tan", "tan", 1, MATH_FUNC, 1, NULL},
  {"std::tan", "tan", 1, MATH_FUNC, 1, NULL},
  {"atan", "atan", 1, MATH_FUNC, 1, NULL},
  {"std::atan", "atan", 1, MATH_FUNC, 1, NULL},
  {"atan2", "atan2", 2, MATH_FUNC, 1, NULL},
  {"std::atan2", "atan2", 2, MATH_FUNC, 1, NULL},
  {"sinh", "sinh", 1, MATH_FUNC, 1, NULL},
  {"std::sinh", "sinh", 1, MATH_FUNC, 1, NULL},
  {"cosh", "cosh", 1, MATH_FUNC, 1, NULL},
  {"std::cosh", "cosh", 1, MATH_FUNC, 1, NULL},
  {"tanh", "tanh", 1, MATH_FUNC, 1, NULL},
  {"std::tanh", "tanh", 1, MATH_FUNC, 1, NULL},
  {"erf", "erf", 1, MATH_FUNC, 1, NULL},
  {"std::erf", "erf", 1, MATH_FUNC, 1, NULL},
  {"erfc", "erfc", 1, MATH_FUNC, 1, NULL},
  {"std::erfc", "erfc", 1, MATH_FUNC, 1, NULL},
  {"fmin", "fmin", 2, MATH_FUNC, 0, NULL},
  {"std::fmin", "fmin", 2, MATH_FUNC, 0, NULL},
  {"fmax", "fmax", 2, MATH_FUNC, 0, NULL},
  {"std::fmax", "fmax", 2, MATH_FUNC, 0, NULL},
  {"copysign", "copysign", 2, MATH_FUNC, 0, NULL},
  {"std::copysign", "copysign", 2, MATH_FUNC, 0, NULL},
  {"std::isnan", "isnan", 1, MATH_FUNC, 0, NULL},
  {"std::isnormal", "isnormal", 1, MATH_FUNC, 0, NULL},
  {"std::isinf", "isinf", 1, MATH_FUNC, 0, NULL},
  {"std::isfinite", "isfinite", 1, MATH_FUNC, 0, NULL},
  {"numerics::is_nan", "isnan", 1, MATH_FUNC, 0, NULL},
  {"std::min", "min", 2, MATH_MINMAX, 0, NULL},
  {"std::max", "max", 2, MATH_MINMAX, 0, NULL},
  {"std::numeric_limits::infinity", "infinity", 0, MATH_CONST, 0, NULL},
  {"std::numeric_limits::max", "max", 0, MATH_CONST, 0, NULL},
  {"std::numeric_limits::min", "min", 0, MATH_CONST, 0, NULL},
  {"std::numeric_limits::lowest", "lowest", 0, MATH_CONST, 0, NULL},
  {"std::numeric_limits::epsilon", "epsilon", 0, MATH_CONST, 0, NULL},
  {"std::numeric_limits::quiet_NaN", "quiet_NaN", 0, MATH_CONST, 0, NULL},
  /* Written out so that the C and OpenCL compilers round the same literal. */
  {"numerics::e", "2.7182818284590452354", -1, MATH_VAR, 0, NULL},
  {"numerics::pi", "3.14159265358979323846", -1, MATH_VAR, 0, NULL},
  {"numerics::nan", "NAN", -1, MATH_VAR, 0, NULL},
};

const math_entry *math_lookup(const char *qname, int nargs)
{
  size_t k;
  for (k = 0; k < sizeof table / sizeof table[0]; k++)
    if (!strcmp(table[k].qname, qname) && (table[k].nargs < 0 || table[k].nargs == nargs))
      return &table[k];
  return NULL;
}

const char *math_limit(const char *member, const char *type)
{
  int d = !strcmp(type, "double");
  int l = !strcmp(type, "long");
  int i = !strcmp(type, "int");
  if (!strcmp(member, "infinity") && d)
    return "INFINITY";
  if (!strcmp(member, "quiet_NaN") && d)
    return "NAN";
  if (!strcmp(member, "max"))
    return d ? "DBL_MAX" : l ? "LONG_MAX" : i ? "INT_MAX" : NULL;
  if (!strcmp(member, "min"))
    return d ? "DBL_MIN" : l ? "LONG_MIN" : i ? "INT_MIN" : NULL;
  if (!strcmp(member, "lowest"))
    return d ? "(-DBL_MAX)" : l ? "LONG_MIN" : i ? "INT_MIN" : NULL;
  if (!strcmp(member, "epsilon") && d)
    return "DBL_EPSILON";
  return NULL;
}
