/*
 * The built-in table (see mathtable.h). Functions map to the C99 <math.h>
 * name, which OpenCL C also provides as a built-in with the same semantics;
 * std::min / std::max map to helpers that reproduce C++'s comparison order
 * (fmin/fmax would treat NaN and signed zeros differently).
 */
#include "mathtable.h"

#include <stddef.h>
#include <string.h>

static const math_entry table[] = {
  {"exp", "exp", 1, MATH_FUNC, 1}, {"std::exp", "exp", 1, MATH_FUNC, 1},
  {"expm1", "expm1", 1, MATH_FUNC, 1}, {"std::expm1", "expm1", 1, MATH_FUNC, 1},
  {"numerics::expm1", "expm1", 1, MATH_FUNC, 1},
  {"log", "log", 1, MATH_FUNC, 1}, {"std::log", "log", 1, MATH_FUNC, 1},
  {"log1p", "log1p", 1, MATH_FUNC, 1}, {"std::log1p", "log1p", 1, MATH_FUNC, 1},
  {"log10", "log10", 1, MATH_FUNC, 1}, {"std::log10", "log10", 1, MATH_FUNC, 1},
  {"pow", "pow", 2, MATH_FUNC, 1}, {"std::pow", "pow", 2, MATH_FUNC, 1},
  {"sqrt", "sqrt", 1, MATH_FUNC, 0}, {"std::sqrt", "sqrt", 1, MATH_FUNC, 0},
  {"cbrt", "cbrt", 1, MATH_FUNC, 1}, {"std::cbrt", "cbrt", 1, MATH_FUNC, 1},
  {"fabs", "fabs", 1, MATH_FUNC, 0}, {"std::fabs", "fabs", 1, MATH_FUNC, 0},
  {"std::abs", "fabs", 1, MATH_FUNC, 0},
  {"floor", "floor", 1, MATH_FUNC, 0}, {"std::floor", "floor", 1, MATH_FUNC, 0},
  {"ceil", "ceil", 1, MATH_FUNC, 0}, {"std::ceil", "ceil", 1, MATH_FUNC, 0},
  {"round", "round", 1, MATH_FUNC, 0}, {"std::round", "round", 1, MATH_FUNC, 0},
  {"trunc", "trunc", 1, MATH_FUNC, 0}, {"std::trunc", "trunc", 1, MATH_FUNC, 0},
  {"fmod", "fmod", 2, MATH_FUNC, 0}, {"std::fmod", "fmod", 2, MATH_FUNC, 0},
  {"sin", "sin", 1, MATH_FUNC, 1}, {"std::sin", "sin", 1, MATH_FUNC, 1},
  {"cos", "cos", 1, MATH_FUNC, 1}, {"std::cos", "cos", 1, MATH_FUNC, 1},
  {"tan", "tan", 1, MATH_FUNC, 1}, {"std::tan", "tan", 1, MATH_FUNC, 1},
  {"atan", "atan", 1, MATH_FUNC, 1}, {"std::atan", "atan", 1, MATH_FUNC, 1},
  {"atan2", "atan2", 2, MATH_FUNC, 1}, {"std::atan2", "atan2", 2, MATH_FUNC, 1},
  {"sinh", "sinh", 1, MATH_FUNC, 1}, {"std::sinh", "sinh", 1, MATH_FUNC, 1},
  {"cosh", "cosh", 1, MATH_FUNC, 1}, {"std::cosh", "cosh", 1, MATH_FUNC, 1},
  {"tanh", "tanh", 1, MATH_FUNC, 1}, {"std::tanh", "tanh", 1, MATH_FUNC, 1},
  {"erf", "erf", 1, MATH_FUNC, 1}, {"std::erf", "erf", 1, MATH_FUNC, 1},
  {"erfc", "erfc", 1, MATH_FUNC, 1}, {"std::erfc", "erfc", 1, MATH_FUNC, 1},
  {"fmin", "fmin", 2, MATH_FUNC, 0}, {"std::fmin", "fmin", 2, MATH_FUNC, 0},
  {"fmax", "fmax", 2, MATH_FUNC, 0}, {"std::fmax", "fmax", 2, MATH_FUNC, 0},
  {"copysign", "copysign", 2, MATH_FUNC, 0}, {"std::copysign", "copysign", 2, MATH_FUNC, 0},
  {"std::isnan", "isnan", 1, MATH_FUNC, 0}, {"std::isnormal", "isnormal", 1, MATH_FUNC, 0}, {"std::isinf", "isinf", 1, MATH_FUNC, 0},
  {"std::isfinite", "isfinite", 1, MATH_FUNC, 0},
  {"std::min", "min", 2, MATH_MINMAX, 0}, {"std::max", "max", 2, MATH_MINMAX, 0},
  {"std::numeric_limits::infinity", "infinity", 0, MATH_CONST, 0},
  {"std::numeric_limits::max", "max", 0, MATH_CONST, 0},
  {"std::numeric_limits::min", "min", 0, MATH_CONST, 0},
  {"std::numeric_limits::lowest", "lowest", 0, MATH_CONST, 0},
  {"std::numeric_limits::epsilon", "epsilon", 0, MATH_CONST, 0},
  {"std::numeric_limits::quiet_NaN", "quiet_NaN", 0, MATH_CONST, 0},
  /* Written out so that the C and OpenCL compilers round the same literal. */
  {"numerics::e", "2.7182818284590452354", -1, MATH_VAR, 0},
  {"numerics::pi", "3.14159265358979323846", -1, MATH_VAR, 0},
  {"numerics::nan", "NAN", -1, MATH_VAR, 0},
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
