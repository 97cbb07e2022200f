/*
 * nestcl's NEST-API shim: the numerics namespace of NEST's libnestutil
 * (constants and the few numerical helpers models call). numerics::expm1 is
 * std::expm1, as in NEST on every platform with a C++11 library, so native
 * models and the translated C (expm1 from <math.h>) agree to the bit.
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

inline double
expm1( double x )
{
  return std::expm1( x );
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
