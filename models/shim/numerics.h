/*
 * nestcl's NEST-API shim: the numerics namespace of NEST's libnestutil
 * (constants and the few numerical helpers models call). numerics::expm1 is
 * what NEST 3.10 builds: its header calls the C library's expm1 only if
 * HAVE_EXPM1, which NEST's CMake never defines (its check_function_exists()
 * call passes "math.h" where the variable's name belongs), so NEST always
 * sums its own series (below, the same operations). nestcl-translate sees
 * this definition and maps numerics::expm1 to nestcl_nest_expm1
 * (nestcl_libm.h); std::expm1 stays the C library's.
 */
#ifndef NUMERICS_H
#define NUMERICS_H

#include <cmath>
#include <limits>

namespace numerics
{
constexpr double e = 2.71828182845904523536028747135;
constexpr double pi = 3.14159265358979323846264338328;
constexpr double nan = std::numeric_limits< double >::quiet_NaN();
constexpr double sqrt_log_two = 0.832554611157697756353165;

/* e^x - 1: 0 for 0, exp(x) - 1 beyond log 2, else x + x^2/2! + x^3/3! + ... term by term. */
inline double
expm1( double x )
{
  if ( x == 0 )
  {
    return 0;
  }
  if ( std::abs( x ) > std::log( 2.0 ) )
  {
    return std::exp( x ) - 1;
  }
  double sum = x;
  double term = x * x / 2;
  long n = 2;
  while ( std::abs( term ) > std::abs( sum ) * std::numeric_limits< double >::epsilon() )
  {
    sum += term;
    ++n;
    term *= x / n;
  }
  return sum;
}

/* Round to nearest, halves away from zero, returned as double / long. */
inline double
dround( double x )
{
  return std::floor( x + 0.5 );
}

inline long
ld_round( double x )
{
  return static_cast< long >( std::floor( x + 0.5 ) );
}

/* True when n is an integer multiple of d (up to rounding). */
inline bool
is_integer( double n )
{
  return std::floor( n ) == n;
}
}  // namespace numerics

/* NEST also exports the rounding helpers at global scope. */
using numerics::dround;
using numerics::ld_round;

#endif
